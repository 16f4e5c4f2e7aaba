# Generated from kafka_async/protocol/definitions/describe_client_quotas.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeClientQuotas: the client quotas matching entity filters.

Versions 0-1, flexible 1+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BOOL,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    MISSING,
    STRING,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class DescribeClientQuotasRequest(Message):
    """The DescribeClientQuotas request (key 48)."""

    __slots__ = ("components", "strict")

    components: list[ComponentData]
    """Filters, all of which an entity must match."""
    strict: bool
    """Only entities that name no other entity type."""

    def __init__(self, *, components: list[ComponentData] = MISSING, strict: bool = False) -> None:
        self.components = [] if components is MISSING else components
        self.strict = strict


class ComponentData(Message):
    """Filters, all of which an entity must match."""

    __slots__ = ("entity_type", "match_type", "match")

    entity_type: str
    """The entity type: user, client-id or ip."""
    match_type: int
    """0 exact name, 1 the default entity, 2 any entity of the type."""
    match: str | None
    """The name to match (match_type 0), else null."""

    def __init__(
        self, *, entity_type: str = "", match_type: int = 0, match: str | None = ""
    ) -> None:
        self.entity_type = entity_type
        self.match_type = match_type
        self.match = match


class DescribeClientQuotasResponse(Message):
    """The DescribeClientQuotas response (key 48)."""

    __slots__ = ("throttle_time_ms", "error_code", "error_message", "entries")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py)."""
    error_message: str | None
    """The broker's description of the error, or null."""
    entries: list[EntryData] | None
    """The matching entities with their quotas, or null on error."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        error_message: str | None = "",
        entries: list[EntryData] | None = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.error_message = error_message
        self.entries = [] if entries is MISSING else entries


class EntryData(Message):
    """The matching entities with their quotas, or null on error."""

    __slots__ = ("entity", "values")

    entity: list[EntityData]
    """The entity, one component per type."""
    values: list[ValueData]
    """The quotas set on this entity."""

    def __init__(
        self, *, entity: list[EntityData] = MISSING, values: list[ValueData] = MISSING
    ) -> None:
        self.entity = [] if entity is MISSING else entity
        self.values = [] if values is MISSING else values


class EntityData(Message):
    """The entity, one component per type."""

    __slots__ = ("entity_type", "entity_name")

    entity_type: str
    """The entity type."""
    entity_name: str | None
    """The entity name, or null for the default entity."""

    def __init__(self, *, entity_type: str = "", entity_name: str | None = "") -> None:
        self.entity_type = entity_type
        self.entity_name = entity_name


class ValueData(Message):
    """The quotas set on this entity."""

    __slots__ = ("key", "value")

    key: str
    """Quota name."""
    value: float
    """Quota value."""

    def __init__(self, *, key: str = "", value: float = 0.0) -> None:
        self.key = key
        self.value = value


# The schema the codecs are compiled from (nested structs first).
_COMPONENT_DATA = StructDef(
    "ComponentData",
    [
        Field("entity_type", STRING),
        Field("match_type", INT8),
        Field("match", STRING, nullable="0+"),
    ],
    ComponentData,
)
_DESCRIBE_CLIENT_QUOTAS_REQUEST = StructDef(
    "DescribeClientQuotasRequest",
    [Field("components", array(_COMPONENT_DATA)), Field("strict", BOOL)],
    DescribeClientQuotasRequest,
)
_ENTITY_DATA = StructDef(
    "EntityData",
    [Field("entity_type", STRING), Field("entity_name", STRING, nullable="0+")],
    EntityData,
)
_VALUE_DATA = StructDef("ValueData", [Field("key", STRING), Field("value", FLOAT64)], ValueData)
_ENTRY_DATA = StructDef(
    "EntryData",
    [Field("entity", array(_ENTITY_DATA)), Field("values", array(_VALUE_DATA))],
    EntryData,
)
_DESCRIBE_CLIENT_QUOTAS_RESPONSE = StructDef(
    "DescribeClientQuotasResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("entries", array(_ENTRY_DATA), nullable="0+"),
    ],
    DescribeClientQuotasResponse,
)

DESCRIBE_CLIENT_QUOTAS: Api[DescribeClientQuotasRequest, DescribeClientQuotasResponse] = Api(
    48,
    "DescribeClientQuotas",
    "0-1",
    "1+",
    _DESCRIBE_CLIENT_QUOTAS_REQUEST,
    _DESCRIBE_CLIENT_QUOTAS_RESPONSE,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)
"""DescribeClientQuotas (key 48), versions 0-1."""
