# Generated from kafka_async/protocol/definitions/init_producer_id.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""InitProducerId: a producer id and epoch for idempotence or transactions.

Versions 0-5, flexible 2+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, INT64, STRING, Api, Field, Message, StructDef


class InitProducerIdRequest(Message):
    """The InitProducerId request (key 22)."""

    __slots__ = ("transactional_id", "transaction_timeout_ms", "producer_id", "producer_epoch")

    transactional_id: str | None
    """The transactional id, or null for an idempotent producer."""
    transaction_timeout_ms: int
    """The coordinator aborts a transaction open longer than this."""
    producer_id: int
    """The current producer id when re-initialising (KIP-360), or -1."""
    producer_epoch: int
    """The current epoch when re-initialising (KIP-360), or -1."""

    def __init__(
        self,
        *,
        transactional_id: str | None = "",
        transaction_timeout_ms: int = 0,
        producer_id: int = -1,
        producer_epoch: int = -1,
    ) -> None:
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch


class InitProducerIdResponse(Message):
    """The InitProducerId response (key 22)."""

    __slots__ = ("throttle_time_ms", "error_code", "producer_id", "producer_epoch")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    producer_id: int
    """The producer id to use."""
    producer_epoch: int
    """The epoch to use."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        producer_id: int = -1,
        producer_epoch: int = 0,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch


# The schema the codecs are compiled from (nested structs first).
_INIT_PRODUCER_ID_REQUEST = StructDef(
    "InitProducerIdRequest",
    [
        Field("transactional_id", STRING, nullable="0+"),
        Field("transaction_timeout_ms", INT32),
        Field("producer_id", INT64, "3+", default=-1),
        Field("producer_epoch", INT16, "3+", default=-1),
    ],
    InitProducerIdRequest,
)
_INIT_PRODUCER_ID_RESPONSE = StructDef(
    "InitProducerIdResponse",
    [
        Field("throttle_time_ms", INT32, ignorable=True),
        Field("error_code", INT16),
        Field("producer_id", INT64, default=-1),
        Field("producer_epoch", INT16),
    ],
    InitProducerIdResponse,
)

INIT_PRODUCER_ID: Api[InitProducerIdRequest, InitProducerIdResponse] = Api(
    22,
    "InitProducerId",
    "0-5",
    "2+",
    _INIT_PRODUCER_ID_REQUEST,
    _INIT_PRODUCER_ID_RESPONSE,
    InitProducerIdRequest,
    InitProducerIdResponse,
)
"""InitProducerId (key 22), versions 0-5."""
