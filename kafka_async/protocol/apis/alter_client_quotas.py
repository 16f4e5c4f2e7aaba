# Generated from kafka_async/protocol/definitions/alter_client_quotas.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""AlterClientQuotas: set or remove the quotas of users, client ids and IP addresses.

Versions 0-1, flexible 1+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BOOL,
    FLOAT64,
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


class AlterClientQuotasRequest(Message):
    """The AlterClientQuotas request (key 49)."""

    __slots__ = ("entries", "validate_only")

    entries: list[EntryData]
    """The entities to change, each with its changes."""
    validate_only: bool
    """Check the changes without applying them."""

    def __init__(self, *, entries: list[EntryData] = MISSING, validate_only: bool = False) -> None:
        self.entries = [] if entries is MISSING else entries
        self.validate_only = validate_only


class EntryData(Message):
    """The entities to change, each with its changes."""

    __slots__ = ("entity", "ops")

    entity: list[EntityData]
    """The entity, one component per type."""
    ops: list[OpData]
    """The changes to this entity's quotas."""

    def __init__(self, *, entity: list[EntityData] = MISSING, ops: list[OpData] = MISSING) -> None:
        self.entity = [] if entity is MISSING else entity
        self.ops = [] if ops is MISSING else ops


class EntityData(Message):
    """The entity, one component per type."""

    __slots__ = ("entity_type", "entity_name")

    entity_type: str
    """The entity type: user, client-id or ip."""
    entity_name: str | None
    """The entity name, or null for the type's default entity."""

    def __init__(self, *, entity_type: str = "", entity_name: str | None = "") -> None:
        self.entity_type = entity_type
        self.entity_name = entity_name


class OpData(Message):
    """The changes to this entity's quotas."""

    __slots__ = ("key", "value", "remove")

    key: str
    """Quota name (producer_byte_rate, request_percentage, ...)."""
    value: float
    """The new value (ignored when removing)."""
    remove: bool
    """Whether to remove the quota instead of setting it."""

    def __init__(self, *, key: str = "", value: float = 0.0, remove: bool = False) -> None:
        self.key = key
        self.value = value
        self.remove = remove


class AlterClientQuotasResponse(Message):
    """The AlterClientQuotas response (key 49)."""

    __slots__ = ("throttle_time_ms", "entries")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    entries: list[EntryResult]
    """One result per entity."""

    def __init__(self, *, throttle_time_ms: int = 0, entries: list[EntryResult] = MISSING) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.entries = [] if entries is MISSING else entries


class EntryResult(Message):
    """One result per entity."""

    __slots__ = ("error_code", "error_message", "entity")

    error_code: int
    """0, or the error (errors.py) for this entity."""
    error_message: str | None
    """The broker's description of the error, or null."""
    entity: list[EntityData]
    """The entity this result is for."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        error_message: str | None = "",
        entity: list[EntityData] = MISSING,
    ) -> None:
        self.error_code = error_code
        self.error_message = error_message
        self.entity = [] if entity is MISSING else entity


# The schema the codecs are compiled from (nested structs first).
_ENTITY_DATA = StructDef(
    "EntityData",
    [Field("entity_type", STRING), Field("entity_name", STRING, nullable="0+")],
    EntityData,
)
_OP_DATA = StructDef(
    "OpData", [Field("key", STRING), Field("value", FLOAT64), Field("remove", BOOL)], OpData
)
_ENTRY_DATA = StructDef(
    "EntryData", [Field("entity", array(_ENTITY_DATA)), Field("ops", array(_OP_DATA))], EntryData
)
_ALTER_CLIENT_QUOTAS_REQUEST = StructDef(
    "AlterClientQuotasRequest",
    [Field("entries", array(_ENTRY_DATA)), Field("validate_only", BOOL)],
    AlterClientQuotasRequest,
)
_ENTRY_RESULT = StructDef(
    "EntryData",
    [
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("entity", array(_ENTITY_DATA)),
    ],
    EntryResult,
)
_ALTER_CLIENT_QUOTAS_RESPONSE = StructDef(
    "AlterClientQuotasResponse",
    [Field("throttle_time_ms", INT32), Field("entries", array(_ENTRY_RESULT))],
    AlterClientQuotasResponse,
)

ALTER_CLIENT_QUOTAS: Api[AlterClientQuotasRequest, AlterClientQuotasResponse] = Api(
    49,
    "AlterClientQuotas",
    "0-1",
    "1+",
    _ALTER_CLIENT_QUOTAS_REQUEST,
    _ALTER_CLIENT_QUOTAS_RESPONSE,
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
)
"""AlterClientQuotas (key 49), versions 0-1."""
