# Generated from kafka_async/protocol/definitions/add_offsets_to_txn.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""AddOffsetsToTxn: add a consumer group's offsets to an ongoing transaction.

Versions 0-4, flexible 3+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, INT64, STRING, Api, Field, Message, StructDef


class AddOffsetsToTxnRequest(Message):
    """The AddOffsetsToTxn request (key 25)."""

    __slots__ = ("transactional_id", "producer_id", "producer_epoch", "group_id")

    transactional_id: str
    """The transactional id of the producer."""
    producer_id: int
    """Producer id from InitProducerId."""
    producer_epoch: int
    """Epoch of the producer id."""
    group_id: str
    """The consumer group whose offsets join the transaction."""

    def __init__(
        self,
        *,
        transactional_id: str = "",
        producer_id: int = 0,
        producer_epoch: int = 0,
        group_id: str = "",
    ) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.group_id = group_id


class AddOffsetsToTxnResponse(Message):
    """The AddOffsetsToTxn response (key 25)."""

    __slots__ = ("throttle_time_ms", "error_code")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py) for this entry."""

    def __init__(self, *, throttle_time_ms: int = 0, error_code: int = 0) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code


# The schema the codecs are compiled from (nested structs first).
_ADD_OFFSETS_TO_TXN_REQUEST = StructDef(
    "AddOffsetsToTxnRequest",
    [
        Field("transactional_id", STRING),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("group_id", STRING),
    ],
    AddOffsetsToTxnRequest,
)
_ADD_OFFSETS_TO_TXN_RESPONSE = StructDef(
    "AddOffsetsToTxnResponse",
    [Field("throttle_time_ms", INT32), Field("error_code", INT16)],
    AddOffsetsToTxnResponse,
)

ADD_OFFSETS_TO_TXN: Api[AddOffsetsToTxnRequest, AddOffsetsToTxnResponse] = Api(
    25,
    "AddOffsetsToTxn",
    "0-4",
    "3+",
    _ADD_OFFSETS_TO_TXN_REQUEST,
    _ADD_OFFSETS_TO_TXN_RESPONSE,
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
)
"""AddOffsetsToTxn (key 25), versions 0-4."""
