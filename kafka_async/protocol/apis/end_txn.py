# Generated from kafka_async/protocol/definitions/end_txn.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""EndTxn: commit or abort a transaction.

Versions 0-5, flexible 3+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import BOOL, INT16, INT32, INT64, STRING, Api, Field, Message, StructDef


class EndTxnRequest(Message):
    """The EndTxn request (key 26)."""

    __slots__ = ("transactional_id", "producer_id", "producer_epoch", "committed")

    transactional_id: str
    """The transactional id of the producer."""
    producer_id: int
    """Producer id from InitProducerId."""
    producer_epoch: int
    """Epoch of the producer id."""
    committed: bool
    """True to commit, false to abort."""

    def __init__(
        self,
        *,
        transactional_id: str = "",
        producer_id: int = 0,
        producer_epoch: int = 0,
        committed: bool = False,
    ) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.committed = committed


class EndTxnResponse(Message):
    """The EndTxn response (key 26)."""

    __slots__ = ("throttle_time_ms", "error_code", "producer_id", "producer_epoch")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    producer_id: int
    """Producer id from InitProducerId."""
    producer_epoch: int
    """Epoch of the producer id."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        producer_id: int = -1,
        producer_epoch: int = -1,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch


# The schema the codecs are compiled from (nested structs first).
_END_TXN_REQUEST = StructDef(
    "EndTxnRequest",
    [
        Field("transactional_id", STRING),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("committed", BOOL),
    ],
    EndTxnRequest,
)
_END_TXN_RESPONSE = StructDef(
    "EndTxnResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("producer_id", INT64, "5+", default=-1, ignorable=True),
        Field("producer_epoch", INT16, "5+", default=-1, ignorable=True),
    ],
    EndTxnResponse,
)

END_TXN: Api[EndTxnRequest, EndTxnResponse] = Api(
    26, "EndTxn", "0-5", "3+", _END_TXN_REQUEST, _END_TXN_RESPONSE, EndTxnRequest, EndTxnResponse
)
"""EndTxn (key 26), versions 0-5."""
