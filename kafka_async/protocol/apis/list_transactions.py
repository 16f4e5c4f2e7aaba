# Generated from kafka_async/protocol/definitions/list_transactions.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ListTransactions: the transactions the coordinators know, filtered.

Versions 0-2, flexible 0+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, INT64, MISSING, STRING, Api, Field, Message, StructDef, array


class ListTransactionsRequest(Message):
    """The ListTransactions request (key 66)."""

    __slots__ = (
        "state_filters",
        "producer_id_filters",
        "duration_filter",
        "transactional_id_pattern",
    )

    state_filters: list[str]
    """Only transactions in these states (empty for all)."""
    producer_id_filters: list[int]
    """Only transactions of these producer ids (empty for all)."""
    duration_filter: int
    """Only transactions running longer than this, ms; -1 for all."""
    transactional_id_pattern: str | None
    """Only transactional ids matching this regular expression, or null for all."""

    def __init__(
        self,
        *,
        state_filters: list[str] = MISSING,
        producer_id_filters: list[int] = MISSING,
        duration_filter: int = -1,
        transactional_id_pattern: str | None = None,
    ) -> None:
        self.state_filters = [] if state_filters is MISSING else state_filters
        self.producer_id_filters = [] if producer_id_filters is MISSING else producer_id_filters
        self.duration_filter = duration_filter
        self.transactional_id_pattern = transactional_id_pattern


class ListTransactionsResponse(Message):
    """The ListTransactions response (key 66)."""

    __slots__ = ("throttle_time_ms", "error_code", "unknown_state_filters", "transaction_states")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py)."""
    unknown_state_filters: list[str]
    """State filters the broker does not know."""
    transaction_states: list[TransactionState]
    """One entry per transaction."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        unknown_state_filters: list[str] = MISSING,
        transaction_states: list[TransactionState] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.unknown_state_filters = (
            [] if unknown_state_filters is MISSING else unknown_state_filters
        )
        self.transaction_states = [] if transaction_states is MISSING else transaction_states


class TransactionState(Message):
    """One entry per transaction."""

    __slots__ = ("transactional_id", "producer_id", "transaction_state")

    transactional_id: str
    """Transactional id."""
    producer_id: int
    """Producer id of the transaction."""
    transaction_state: str
    """The transaction's state."""

    def __init__(
        self, *, transactional_id: str = "", producer_id: int = 0, transaction_state: str = ""
    ) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.transaction_state = transaction_state


# The schema the codecs are compiled from (nested structs first).
_LIST_TRANSACTIONS_REQUEST = StructDef(
    "ListTransactionsRequest",
    [
        Field("state_filters", array(STRING)),
        Field("producer_id_filters", array(INT64)),
        Field("duration_filter", INT64, "1+", default=-1),
        Field("transactional_id_pattern", STRING, "2+", nullable="2+", default=None),
    ],
    ListTransactionsRequest,
)
_TRANSACTION_STATE = StructDef(
    "TransactionState",
    [
        Field("transactional_id", STRING),
        Field("producer_id", INT64),
        Field("transaction_state", STRING),
    ],
    TransactionState,
)
_LIST_TRANSACTIONS_RESPONSE = StructDef(
    "ListTransactionsResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("unknown_state_filters", array(STRING)),
        Field("transaction_states", array(_TRANSACTION_STATE)),
    ],
    ListTransactionsResponse,
)

LIST_TRANSACTIONS: Api[ListTransactionsRequest, ListTransactionsResponse] = Api(
    66,
    "ListTransactions",
    "0-2",
    "0+",
    _LIST_TRANSACTIONS_REQUEST,
    _LIST_TRANSACTIONS_RESPONSE,
    ListTransactionsRequest,
    ListTransactionsResponse,
)
"""ListTransactions (key 66), versions 0-2."""
