# Generated from kafka_async/protocol/definitions/describe_configs.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeConfigs: configs of topics, brokers and other resources.

Versions 0-4, flexible 4+; checked against Kafka 4.0's
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


class DescribeConfigsRequest(Message):
    """The DescribeConfigs request (key 32)."""

    __slots__ = ("resources", "include_synonyms", "include_documentation")

    resources: list[DescribeConfigsResource]
    """The resources to describe."""
    include_synonyms: bool
    """Also return the synonyms (the values at each level)."""
    include_documentation: bool
    """Also return each config's documentation."""

    def __init__(
        self,
        *,
        resources: list[DescribeConfigsResource] = MISSING,
        include_synonyms: bool = False,
        include_documentation: bool = False,
    ) -> None:
        self.resources = [] if resources is MISSING else resources
        self.include_synonyms = include_synonyms
        self.include_documentation = include_documentation


class DescribeConfigsResource(Message):
    """The resources to describe."""

    __slots__ = ("resource_type", "resource_name", "configuration_keys")

    resource_type: int
    """Resource type code (topic 2, group 3, broker 4, ...)."""
    resource_name: str
    """Resource name."""
    configuration_keys: list[str] | None
    """Config names to return, or null for all."""

    def __init__(
        self,
        *,
        resource_type: int = 0,
        resource_name: str = "",
        configuration_keys: list[str] | None = MISSING,
    ) -> None:
        self.resource_type = resource_type
        self.resource_name = resource_name
        self.configuration_keys = [] if configuration_keys is MISSING else configuration_keys


class DescribeConfigsResponse(Message):
    """The DescribeConfigs response (key 32)."""

    __slots__ = ("throttle_time_ms", "results")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    results: list[DescribeConfigsResult]
    """One result per resource."""

    def __init__(
        self, *, throttle_time_ms: int = 0, results: list[DescribeConfigsResult] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.results = [] if results is MISSING else results


class DescribeConfigsResult(Message):
    """One result per resource."""

    __slots__ = ("error_code", "error_message", "resource_type", "resource_name", "configs")

    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""
    resource_type: int
    """Resource type code (topic 2, group 3, broker 4, ...)."""
    resource_name: str
    """Resource name."""
    configs: list[DescribeConfigsResourceResult]
    """The configs."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        error_message: str | None = "",
        resource_type: int = 0,
        resource_name: str = "",
        configs: list[DescribeConfigsResourceResult] = MISSING,
    ) -> None:
        self.error_code = error_code
        self.error_message = error_message
        self.resource_type = resource_type
        self.resource_name = resource_name
        self.configs = [] if configs is MISSING else configs


class DescribeConfigsResourceResult(Message):
    """The configs."""

    __slots__ = (
        "name",
        "value",
        "read_only",
        "is_default",
        "config_source",
        "is_sensitive",
        "synonyms",
        "config_type",
        "documentation",
    )

    name: str
    """Config name."""
    value: str | None
    """Config value, or null (unset or sensitive)."""
    read_only: bool
    """Whether the config cannot be changed."""
    is_default: bool
    """Whether the value is the default (v0 only)."""
    config_source: int
    """Where the value comes from (dynamic topic, broker, default, ...)."""
    is_sensitive: bool
    """Whether the value is hidden (a password or key)."""
    synonyms: list[DescribeConfigsSynonym]
    """The values at each level, highest precedence first."""
    config_type: int
    """The value's type (boolean, string, int, ...)."""
    documentation: str | None
    """The config's documentation, or null."""

    def __init__(
        self,
        *,
        name: str = "",
        value: str | None = "",
        read_only: bool = False,
        is_default: bool = False,
        config_source: int = -1,
        is_sensitive: bool = False,
        synonyms: list[DescribeConfigsSynonym] = MISSING,
        config_type: int = 0,
        documentation: str | None = "",
    ) -> None:
        self.name = name
        self.value = value
        self.read_only = read_only
        self.is_default = is_default
        self.config_source = config_source
        self.is_sensitive = is_sensitive
        self.synonyms = [] if synonyms is MISSING else synonyms
        self.config_type = config_type
        self.documentation = documentation


class DescribeConfigsSynonym(Message):
    """The values at each level, highest precedence first."""

    __slots__ = ("name", "value", "source")

    name: str
    """Synonym config name."""
    value: str | None
    """Value at this level, or null."""
    source: int
    """The level (config source code)."""

    def __init__(self, *, name: str = "", value: str | None = "", source: int = 0) -> None:
        self.name = name
        self.value = value
        self.source = source


# The schema the codecs are compiled from (nested structs first).
_DESCRIBE_CONFIGS_RESOURCE = StructDef(
    "DescribeConfigsResource",
    [
        Field("resource_type", INT8),
        Field("resource_name", STRING),
        Field("configuration_keys", array(STRING), nullable="0+"),
    ],
    DescribeConfigsResource,
)
_DESCRIBE_CONFIGS_REQUEST = StructDef(
    "DescribeConfigsRequest",
    [
        Field("resources", array(_DESCRIBE_CONFIGS_RESOURCE)),
        Field("include_synonyms", BOOL, "1+"),
        Field("include_documentation", BOOL, "3+"),
    ],
    DescribeConfigsRequest,
)
_DESCRIBE_CONFIGS_SYNONYM = StructDef(
    "DescribeConfigsSynonym",
    [
        Field("name", STRING, "1+"),
        Field("value", STRING, "1+", nullable="0+"),
        Field("source", INT8, "1+"),
    ],
    DescribeConfigsSynonym,
)
_DESCRIBE_CONFIGS_RESOURCE_RESULT = StructDef(
    "DescribeConfigsResourceResult",
    [
        Field("name", STRING),
        Field("value", STRING, nullable="0+"),
        Field("read_only", BOOL),
        Field("is_default", BOOL, "0"),
        Field("config_source", INT8, "1+", default=-1, ignorable=True),
        Field("is_sensitive", BOOL),
        Field("synonyms", array(_DESCRIBE_CONFIGS_SYNONYM), "1+", ignorable=True),
        Field("config_type", INT8, "3+", ignorable=True),
        Field("documentation", STRING, "3+", nullable="0+", ignorable=True),
    ],
    DescribeConfigsResourceResult,
)
_DESCRIBE_CONFIGS_RESULT = StructDef(
    "DescribeConfigsResult",
    [
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("resource_type", INT8),
        Field("resource_name", STRING),
        Field("configs", array(_DESCRIBE_CONFIGS_RESOURCE_RESULT)),
    ],
    DescribeConfigsResult,
)
_DESCRIBE_CONFIGS_RESPONSE = StructDef(
    "DescribeConfigsResponse",
    [Field("throttle_time_ms", INT32), Field("results", array(_DESCRIBE_CONFIGS_RESULT))],
    DescribeConfigsResponse,
)

DESCRIBE_CONFIGS: Api[DescribeConfigsRequest, DescribeConfigsResponse] = Api(
    32,
    "DescribeConfigs",
    "0-4",
    "4+",
    _DESCRIBE_CONFIGS_REQUEST,
    _DESCRIBE_CONFIGS_RESPONSE,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
)
"""DescribeConfigs (key 32), versions 0-4."""
