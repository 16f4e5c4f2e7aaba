# Generated from kafka_async/protocol/definitions/describe_transactions.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeTransactions: state, producer and partitions of transactions.

Versions 0, flexible 0+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, INT64, MISSING, STRING, Api, Field, Message, StructDef, array


class DescribeTransactionsRequest(Message):
    """The DescribeTransactions request (key 65)."""

    __slots__ = ("transactional_ids",)

    transactional_ids: list[str]
    """Transactional ids."""

    def __init__(self, *, transactional_ids: list[str] = MISSING) -> None:
        self.transactional_ids = [] if transactional_ids is MISSING else transactional_ids


class DescribeTransactionsResponse(Message):
    """The DescribeTransactions response (key 65)."""

    __slots__ = ("throttle_time_ms", "transaction_states")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    transaction_states: list[TransactionState]
    """One entry per transactional id."""

    def __init__(
        self, *, throttle_time_ms: int = 0, transaction_states: list[TransactionState] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.transaction_states = [] if transaction_states is MISSING else transaction_states


class TransactionState(Message):
    """One entry per transactional id."""

    __slots__ = (
        "error_code",
        "transactional_id",
        "transaction_state",
        "transaction_timeout_ms",
        "transaction_start_time_ms",
        "producer_id",
        "producer_epoch",
        "topics",
    )

    error_code: int
    """0, or the error for this transactional id."""
    transactional_id: str
    """Transactional id."""
    transaction_state: str
    """The transaction's state."""
    transaction_timeout_ms: int
    """The transaction's timeout, ms."""
    transaction_start_time_ms: int
    """When the transaction started, ms since the epoch, or -1."""
    producer_id: int
    """Producer id."""
    producer_epoch: int
    """Producer epoch."""
    topics: list[TopicData]
    """The partitions in the transaction, grouped by topic."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        transactional_id: str = "",
        transaction_state: str = "",
        transaction_timeout_ms: int = 0,
        transaction_start_time_ms: int = 0,
        producer_id: int = 0,
        producer_epoch: int = 0,
        topics: list[TopicData] = MISSING,
    ) -> None:
        self.error_code = error_code
        self.transactional_id = transactional_id
        self.transaction_state = transaction_state
        self.transaction_timeout_ms = transaction_timeout_ms
        self.transaction_start_time_ms = transaction_start_time_ms
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.topics = [] if topics is MISSING else topics


class TopicData(Message):
    """The partitions in the transaction, grouped by topic."""

    __slots__ = ("topic", "partitions")

    topic: str
    """Topic name."""
    partitions: list[int]
    """Partition indexes."""

    def __init__(self, *, topic: str = "", partitions: list[int] = MISSING) -> None:
        self.topic = topic
        self.partitions = [] if partitions is MISSING else partitions


# The schema the codecs are compiled from (nested structs first).
_DESCRIBE_TRANSACTIONS_REQUEST = StructDef(
    "DescribeTransactionsRequest",
    [Field("transactional_ids", array(STRING))],
    DescribeTransactionsRequest,
)
_TOPIC_DATA = StructDef(
    "TopicData", [Field("topic", STRING), Field("partitions", array(INT32))], TopicData
)
_TRANSACTION_STATE = StructDef(
    "TransactionState",
    [
        Field("error_code", INT16),
        Field("transactional_id", STRING),
        Field("transaction_state", STRING),
        Field("transaction_timeout_ms", INT32),
        Field("transaction_start_time_ms", INT64),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("topics", array(_TOPIC_DATA)),
    ],
    TransactionState,
)
_DESCRIBE_TRANSACTIONS_RESPONSE = StructDef(
    "DescribeTransactionsResponse",
    [Field("throttle_time_ms", INT32), Field("transaction_states", array(_TRANSACTION_STATE))],
    DescribeTransactionsResponse,
)

DESCRIBE_TRANSACTIONS: Api[DescribeTransactionsRequest, DescribeTransactionsResponse] = Api(
    65,
    "DescribeTransactions",
    "0",
    "0+",
    _DESCRIBE_TRANSACTIONS_REQUEST,
    _DESCRIBE_TRANSACTIONS_RESPONSE,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)
"""DescribeTransactions (key 65), versions 0."""
