# Generated from kafka_async/protocol/definitions/incremental_alter_configs.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""IncrementalAlterConfigs: set, delete, append or subtract single configs.

Versions 0-1, flexible 1+; checked against Kafka 4.0's
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


class IncrementalAlterConfigsRequest(Message):
    """The IncrementalAlterConfigs request (key 44)."""

    __slots__ = ("resources", "validate_only")

    resources: list[AlterConfigsResource]
    """The resources to change."""
    validate_only: bool
    """Check the request without applying it."""

    def __init__(
        self, *, resources: list[AlterConfigsResource] = MISSING, validate_only: bool = False
    ) -> None:
        self.resources = [] if resources is MISSING else resources
        self.validate_only = validate_only


class AlterConfigsResource(Message):
    """The resources to change."""

    __slots__ = ("resource_type", "resource_name", "configs")

    resource_type: int
    """Resource type code (topic 2, group 3, broker 4, ...)."""
    resource_name: str
    """Resource name."""
    configs: list[AlterableConfig]
    """The changes (configs not named keep their value)."""

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
    """The changes (configs not named keep their value)."""

    __slots__ = ("name", "config_operation", "value")

    name: str
    """Config name."""
    config_operation: int
    """0 set, 1 delete, 2 append, 3 subtract."""
    value: str | None
    """Config value, or null."""

    def __init__(
        self, *, name: str = "", config_operation: int = 0, value: str | None = ""
    ) -> None:
        self.name = name
        self.config_operation = config_operation
        self.value = value


class IncrementalAlterConfigsResponse(Message):
    """The IncrementalAlterConfigs response (key 44)."""

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
    [Field("name", STRING), Field("config_operation", INT8), Field("value", STRING, nullable="0+")],
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
_INCREMENTAL_ALTER_CONFIGS_REQUEST = StructDef(
    "IncrementalAlterConfigsRequest",
    [Field("resources", array(_ALTER_CONFIGS_RESOURCE)), Field("validate_only", BOOL)],
    IncrementalAlterConfigsRequest,
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
_INCREMENTAL_ALTER_CONFIGS_RESPONSE = StructDef(
    "IncrementalAlterConfigsResponse",
    [Field("throttle_time_ms", INT32), Field("responses", array(_ALTER_CONFIGS_RESOURCE_RESPONSE))],
    IncrementalAlterConfigsResponse,
)

INCREMENTAL_ALTER_CONFIGS: Api[IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse] = (
    Api(
        44,
        "IncrementalAlterConfigs",
        "0-1",
        "1+",
        _INCREMENTAL_ALTER_CONFIGS_REQUEST,
        _INCREMENTAL_ALTER_CONFIGS_RESPONSE,
        IncrementalAlterConfigsRequest,
        IncrementalAlterConfigsResponse,
    )
)
"""IncrementalAlterConfigs (key 44), versions 0-1."""
