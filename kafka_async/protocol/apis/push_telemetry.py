# Generated from kafka_async/protocol/definitions/push_telemetry.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""PushTelemetry: send client metrics, OTLP MetricsData protobuf, to a broker (KIP-714).

Versions 0, flexible 0+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

import uuid

from ..codec import ZERO_UUID
from ..schema import BOOL, BYTES, INT8, INT16, INT32, UUID, Api, Field, Message, StructDef


class PushTelemetryRequest(Message):
    """The PushTelemetry request (key 72)."""

    __slots__ = (
        "client_instance_id",
        "subscription_id",
        "terminating",
        "compression_type",
        "metrics",
    )

    client_instance_id: uuid.UUID
    """The id GetTelemetrySubscriptions assigned."""
    subscription_id: int
    """The subscription the metrics answer."""
    terminating: bool
    """The client is closing: its last push."""
    compression_type: int
    """Codec of metrics (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)."""
    metrics: bytes
    """OpenTelemetry MetricsData v1 protobuf, compressed with compression_type."""

    def __init__(
        self,
        *,
        client_instance_id: uuid.UUID = ZERO_UUID,
        subscription_id: int = 0,
        terminating: bool = False,
        compression_type: int = 0,
        metrics: bytes = b"",
    ) -> None:
        self.client_instance_id = client_instance_id
        self.subscription_id = subscription_id
        self.terminating = terminating
        self.compression_type = compression_type
        self.metrics = metrics


class PushTelemetryResponse(Message):
    """The PushTelemetry response (key 72)."""

    __slots__ = ("throttle_time_ms", "error_code")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py)."""

    def __init__(self, *, throttle_time_ms: int = 0, error_code: int = 0) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code


# The schema the codecs are compiled from (nested structs first).
_PUSH_TELEMETRY_REQUEST = StructDef(
    "PushTelemetryRequest",
    [
        Field("client_instance_id", UUID),
        Field("subscription_id", INT32),
        Field("terminating", BOOL),
        Field("compression_type", INT8),
        Field("metrics", BYTES),
    ],
    PushTelemetryRequest,
)
_PUSH_TELEMETRY_RESPONSE = StructDef(
    "PushTelemetryResponse",
    [Field("throttle_time_ms", INT32), Field("error_code", INT16)],
    PushTelemetryResponse,
)

PUSH_TELEMETRY: Api[PushTelemetryRequest, PushTelemetryResponse] = Api(
    72,
    "PushTelemetry",
    "0",
    "0+",
    _PUSH_TELEMETRY_REQUEST,
    _PUSH_TELEMETRY_RESPONSE,
    PushTelemetryRequest,
    PushTelemetryResponse,
)
"""PushTelemetry (key 72), versions 0."""
