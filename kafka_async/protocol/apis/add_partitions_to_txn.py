# Generated from kafka_async/protocol/definitions/add_partitions_to_txn.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""AddPartitionsToTxn: add partitions to an ongoing transaction.

Versions 0-5, flexible 3+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    MISSING,
    STRING,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class AddPartitionsToTxnRequest(Message):
    """The AddPartitionsToTxn request (key 24)."""

    __slots__ = (
        "transactions",
        "v3_and_below_transactional_id",
        "v3_and_below_producer_id",
        "v3_and_below_producer_epoch",
        "v3_and_below_topics",
    )

    transactions: list[AddPartitionsToTxnTransaction]
    """The transactions to extend (v4+, brokers only)."""
    v3_and_below_transactional_id: str
    """Transactional id (up to v3)."""
    v3_and_below_producer_id: int
    """Producer id (up to v3)."""
    v3_and_below_producer_epoch: int
    """Producer epoch (up to v3)."""
    v3_and_below_topics: list[AddPartitionsToTxnTopic]
    """The partitions to add, grouped by topic (up to v3)."""

    def __init__(
        self,
        *,
        transactions: list[AddPartitionsToTxnTransaction] = MISSING,
        v3_and_below_transactional_id: str = "",
        v3_and_below_producer_id: int = 0,
        v3_and_below_producer_epoch: int = 0,
        v3_and_below_topics: list[AddPartitionsToTxnTopic] = MISSING,
    ) -> None:
        self.transactions = [] if transactions is MISSING else transactions
        self.v3_and_below_transactional_id = v3_and_below_transactional_id
        self.v3_and_below_producer_id = v3_and_below_producer_id
        self.v3_and_below_producer_epoch = v3_and_below_producer_epoch
        self.v3_and_below_topics = [] if v3_and_below_topics is MISSING else v3_and_below_topics


class AddPartitionsToTxnTransaction(Message):
    """The transactions to extend (v4+, brokers only)."""

    __slots__ = ("transactional_id", "producer_id", "producer_epoch", "verify_only", "topics")

    transactional_id: str
    """Transactional id."""
    producer_id: int
    """Producer id from InitProducerId."""
    producer_epoch: int
    """Epoch of the producer id."""
    verify_only: bool
    """Only check that the partitions are in the transaction."""
    topics: list[AddPartitionsToTxnTopic]
    """The partitions, grouped by topic."""

    def __init__(
        self,
        *,
        transactional_id: str = "",
        producer_id: int = 0,
        producer_epoch: int = 0,
        verify_only: bool = False,
        topics: list[AddPartitionsToTxnTopic] = MISSING,
    ) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.verify_only = verify_only
        self.topics = [] if topics is MISSING else topics


class AddPartitionsToTxnTopic(Message):
    """The partitions, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[int]
    """Partition indexes."""

    def __init__(self, *, name: str = "", partitions: list[int] = MISSING) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class AddPartitionsToTxnResponse(Message):
    """The AddPartitionsToTxn response (key 24)."""

    __slots__ = (
        "throttle_time_ms",
        "error_code",
        "results_by_transaction",
        "results_by_topic_v3_and_below",
    )

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or a request-level error (v4+)."""
    results_by_transaction: list[AddPartitionsToTxnResult]
    """One result per transaction (v4+)."""
    results_by_topic_v3_and_below: list[AddPartitionsToTxnTopicResult]
    """Results, grouped by topic (up to v3)."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        results_by_transaction: list[AddPartitionsToTxnResult] = MISSING,
        results_by_topic_v3_and_below: list[AddPartitionsToTxnTopicResult] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.results_by_transaction = (
            [] if results_by_transaction is MISSING else results_by_transaction
        )
        self.results_by_topic_v3_and_below = (
            [] if results_by_topic_v3_and_below is MISSING else results_by_topic_v3_and_below
        )


class AddPartitionsToTxnResult(Message):
    """One result per transaction (v4+)."""

    __slots__ = ("transactional_id", "topic_results")

    transactional_id: str
    """Transactional id."""
    topic_results: list[AddPartitionsToTxnTopicResult]
    """Results, grouped by topic."""

    def __init__(
        self,
        *,
        transactional_id: str = "",
        topic_results: list[AddPartitionsToTxnTopicResult] = MISSING,
    ) -> None:
        self.transactional_id = transactional_id
        self.topic_results = [] if topic_results is MISSING else topic_results


class AddPartitionsToTxnTopicResult(Message):
    """Results, grouped by topic."""

    __slots__ = ("name", "results_by_partition")

    name: str
    """Topic name."""
    results_by_partition: list[AddPartitionsToTxnPartitionResult]
    """One result per partition."""

    def __init__(
        self,
        *,
        name: str = "",
        results_by_partition: list[AddPartitionsToTxnPartitionResult] = MISSING,
    ) -> None:
        self.name = name
        self.results_by_partition = [] if results_by_partition is MISSING else results_by_partition


class AddPartitionsToTxnPartitionResult(Message):
    """One result per partition."""

    __slots__ = ("partition_index", "partition_error_code")

    partition_index: int
    """Partition index."""
    partition_error_code: int
    """0, or the error for this partition."""

    def __init__(self, *, partition_index: int = 0, partition_error_code: int = 0) -> None:
        self.partition_index = partition_index
        self.partition_error_code = partition_error_code


# The schema the codecs are compiled from (nested structs first).
_ADD_PARTITIONS_TO_TXN_TOPIC = StructDef(
    "AddPartitionsToTxnTopic",
    [Field("name", STRING), Field("partitions", array(INT32))],
    AddPartitionsToTxnTopic,
)
_ADD_PARTITIONS_TO_TXN_TRANSACTION = StructDef(
    "AddPartitionsToTxnTransaction",
    [
        Field("transactional_id", STRING, "4+"),
        Field("producer_id", INT64, "4+"),
        Field("producer_epoch", INT16, "4+"),
        Field("verify_only", BOOL, "4+"),
        Field("topics", array(_ADD_PARTITIONS_TO_TXN_TOPIC), "4+"),
    ],
    AddPartitionsToTxnTransaction,
)
_ADD_PARTITIONS_TO_TXN_REQUEST = StructDef(
    "AddPartitionsToTxnRequest",
    [
        Field("transactions", array(_ADD_PARTITIONS_TO_TXN_TRANSACTION), "4+"),
        Field("v3_and_below_transactional_id", STRING, "0-3"),
        Field("v3_and_below_producer_id", INT64, "0-3"),
        Field("v3_and_below_producer_epoch", INT16, "0-3"),
        Field("v3_and_below_topics", array(_ADD_PARTITIONS_TO_TXN_TOPIC), "0-3"),
    ],
    AddPartitionsToTxnRequest,
)
_ADD_PARTITIONS_TO_TXN_PARTITION_RESULT = StructDef(
    "AddPartitionsToTxnPartitionResult",
    [Field("partition_index", INT32), Field("partition_error_code", INT16)],
    AddPartitionsToTxnPartitionResult,
)
_ADD_PARTITIONS_TO_TXN_TOPIC_RESULT = StructDef(
    "AddPartitionsToTxnTopicResult",
    [
        Field("name", STRING),
        Field("results_by_partition", array(_ADD_PARTITIONS_TO_TXN_PARTITION_RESULT)),
    ],
    AddPartitionsToTxnTopicResult,
)
_ADD_PARTITIONS_TO_TXN_RESULT = StructDef(
    "AddPartitionsToTxnResult",
    [
        Field("transactional_id", STRING, "4+"),
        Field("topic_results", array(_ADD_PARTITIONS_TO_TXN_TOPIC_RESULT), "4+"),
    ],
    AddPartitionsToTxnResult,
)
_ADD_PARTITIONS_TO_TXN_RESPONSE = StructDef(
    "AddPartitionsToTxnResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "4+", ignorable=True),
        Field("results_by_transaction", array(_ADD_PARTITIONS_TO_TXN_RESULT), "4+"),
        Field("results_by_topic_v3_and_below", array(_ADD_PARTITIONS_TO_TXN_TOPIC_RESULT), "0-3"),
    ],
    AddPartitionsToTxnResponse,
)

ADD_PARTITIONS_TO_TXN: Api[AddPartitionsToTxnRequest, AddPartitionsToTxnResponse] = Api(
    24,
    "AddPartitionsToTxn",
    "0-5",
    "3+",
    _ADD_PARTITIONS_TO_TXN_REQUEST,
    _ADD_PARTITIONS_TO_TXN_RESPONSE,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
)
"""AddPartitionsToTxn (key 24), versions 0-5."""
