# Generated from kafka_async/protocol/definitions/get_telemetry_subscriptions.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""GetTelemetrySubscriptions: which client metrics the broker wants pushed, how often (KIP-714).

Versions 0, flexible 0+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

import uuid

from ..codec import ZERO_UUID
from ..schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    MISSING,
    STRING,
    UUID,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class GetTelemetrySubscriptionsRequest(Message):
    """The GetTelemetrySubscriptions request (key 71)."""

    __slots__ = ("client_instance_id",)

    client_instance_id: uuid.UUID
    """This client instance's id; zero on the first request (the broker assigns one)."""

    def __init__(self, *, client_instance_id: uuid.UUID = ZERO_UUID) -> None:
        self.client_instance_id = client_instance_id


class GetTelemetrySubscriptionsResponse(Message):
    """The GetTelemetrySubscriptions response (key 71)."""

    __slots__ = (
        "throttle_time_ms",
        "error_code",
        "client_instance_id",
        "subscription_id",
        "accepted_compression_types",
        "push_interval_ms",
        "telemetry_max_bytes",
        "delta_temporality",
        "requested_metrics",
    )

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py)."""
    client_instance_id: uuid.UUID
    """The id the broker assigned when the request's was zero, else zero."""
    subscription_id: int
    """The current subscription set's id, sent back in PushTelemetry."""
    accepted_compression_types: list[int]
    """Compression types the broker accepts for PushTelemetry, preferred first."""
    push_interval_ms: int
    """How often to push (the lowest interval of the matching subscriptions)."""
    telemetry_max_bytes: int
    """The largest metrics payload the broker accepts."""
    delta_temporality: bool
    """Monotonic sums as deltas since the last push (true) or cumulative (false)."""
    requested_metrics: list[str]
    """Metric name prefixes; empty: none; one empty string: all."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        client_instance_id: uuid.UUID = ZERO_UUID,
        subscription_id: int = 0,
        accepted_compression_types: list[int] = MISSING,
        push_interval_ms: int = 0,
        telemetry_max_bytes: int = 0,
        delta_temporality: bool = False,
        requested_metrics: list[str] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.client_instance_id = client_instance_id
        self.subscription_id = subscription_id
        self.accepted_compression_types = (
            [] if accepted_compression_types is MISSING else accepted_compression_types
        )
        self.push_interval_ms = push_interval_ms
        self.telemetry_max_bytes = telemetry_max_bytes
        self.delta_temporality = delta_temporality
        self.requested_metrics = [] if requested_metrics is MISSING else requested_metrics


# The schema the codecs are compiled from (nested structs first).
_GET_TELEMETRY_SUBSCRIPTIONS_REQUEST = StructDef(
    "GetTelemetrySubscriptionsRequest",
    [Field("client_instance_id", UUID)],
    GetTelemetrySubscriptionsRequest,
)
_GET_TELEMETRY_SUBSCRIPTIONS_RESPONSE = StructDef(
    "GetTelemetrySubscriptionsResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("client_instance_id", UUID),
        Field("subscription_id", INT32),
        Field("accepted_compression_types", array(INT8)),
        Field("push_interval_ms", INT32),
        Field("telemetry_max_bytes", INT32),
        Field("delta_temporality", BOOL),
        Field("requested_metrics", array(STRING)),
    ],
    GetTelemetrySubscriptionsResponse,
)

GET_TELEMETRY_SUBSCRIPTIONS: Api[
    GetTelemetrySubscriptionsRequest, GetTelemetrySubscriptionsResponse
] = Api(
    71,
    "GetTelemetrySubscriptions",
    "0",
    "0+",
    _GET_TELEMETRY_SUBSCRIPTIONS_REQUEST,
    _GET_TELEMETRY_SUBSCRIPTIONS_RESPONSE,
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
)
"""GetTelemetrySubscriptions (key 71), versions 0."""
