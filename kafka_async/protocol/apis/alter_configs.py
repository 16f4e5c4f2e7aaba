# Generated from kafka_async/protocol/definitions/alter_configs.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""AlterConfigs: replace the configs of resources (non-incremental).

Versions 0-2, flexible 2+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BOOL,
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


class AlterConfigsRequest(Message):
    """The AlterConfigs request (key 33)."""

    __slots__ = ("resources", "validate_only")

    resources: list[AlterConfigsResource]
    """The resources to change (every config not named is reset)."""
    validate_only: bool
    """Check the request without applying it."""

    def __init__(
        self, *, resources: list[AlterConfigsResource] = MISSING, validate_only: bool = False
    ) -> None:
        self.resources = [] if resources is MISSING else resources
        self.validate_only = validate_only


class AlterConfigsResource(Message):
    """The resources to change (every config not named is reset)."""

    __slots__ = ("resource_type", "resource_name", "configs")

    resource_type: int
    """Resource type code (topic 2, group 3, broker 4, ...)."""
    resource_name: str
    """Resource name."""
    configs: list[AlterableConfig]
    """The full set of configs."""

    def __init__(
        self,
        *,
        resource_type: int = 0,
        resource_name: str = "",
        configs: list[AlterableConfig] = MISSING,
    ) -> None:
        self.resource_type = resource_type
        self.resource_name = resource_name
        self.configs = [] if configs is MISSING else configs


class AlterableConfig(Message):
    """The full set of configs."""

    __slots__ = ("name", "value")

    name: str
    """Config name."""
    value: str | None
    """Config value, or null."""

    def __init__(self, *, name: str = "", value: str | None = "") -> None:
        self.name = name
        self.value = value


class AlterConfigsResponse(Message):
    """The AlterConfigs response (key 33)."""

    __slots__ = ("throttle_time_ms", "responses")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    responses: list[AlterConfigsResourceResponse]
    """One result per resource."""

    def __init__(
        self, *, throttle_time_ms: int = 0, responses: list[AlterConfigsResourceResponse] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.responses = [] if responses is MISSING else responses


class AlterConfigsResourceResponse(Message):
    """One result per resource."""

    __slots__ = ("error_code", "error_message", "resource_type", "resource_name")

    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""
    resource_type: int
    """Resource type code (topic 2, group 3, broker 4, ...)."""
    resource_name: str
    """Resource name."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        error_message: str | None = "",
        resource_type: int = 0,
        resource_name: str = "",
    ) -> None:
        self.error_code = error_code
        self.error_message = error_message
        self.resource_type = resource_type
        self.resource_name = resource_name


# The schema the codecs are compiled from (nested structs first).
_ALTERABLE_CONFIG = StructDef(
    "AlterableConfig",
    [Field("name", STRING), Field("value", STRING, nullable="0+")],
    AlterableConfig,
)
_ALTER_CONFIGS_RESOURCE = StructDef(
    "AlterConfigsResource",
    [
        Field("resource_type", INT8),
        Field("resource_name", STRING),
        Field("configs", array(_ALTERABLE_CONFIG)),
    ],
    AlterConfigsResource,
)
_ALTER_CONFIGS_REQUEST = StructDef(
    "AlterConfigsRequest",
    [Field("resources", array(_ALTER_CONFIGS_RESOURCE)), Field("validate_only", BOOL)],
    AlterConfigsRequest,
)
_ALTER_CONFIGS_RESOURCE_RESPONSE = StructDef(
    "AlterConfigsResourceResponse",
    [
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("resource_type", INT8),
        Field("resource_name", STRING),
    ],
    AlterConfigsResourceResponse,
)
_ALTER_CONFIGS_RESPONSE = StructDef(
    "AlterConfigsResponse",
    [Field("throttle_time_ms", INT32), Field("responses", array(_ALTER_CONFIGS_RESOURCE_RESPONSE))],
    AlterConfigsResponse,
)

ALTER_CONFIGS: Api[AlterConfigsRequest, AlterConfigsResponse] = Api(
    33,
    "AlterConfigs",
    "0-2",
    "2+",
    _ALTER_CONFIGS_REQUEST,
    _ALTER_CONFIGS_RESPONSE,
    AlterConfigsRequest,
    AlterConfigsResponse,
)
"""AlterConfigs (key 33), versions 0-2."""
