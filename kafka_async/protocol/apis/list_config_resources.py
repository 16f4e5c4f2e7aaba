# Generated from kafka_async/protocol/definitions/list_config_resources.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ListConfigResources: the config resources a cluster has (KIP-1142; v0 was
ListClientMetricsResources, KIP-714).

Versions 0-1, flexible 0+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT8, INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class ListConfigResourcesRequest(Message):
    """The ListConfigResources request (key 74)."""

    __slots__ = ("resource_types",)

    resource_types: list[int]
    """The resource types to list (ConfigResource type codes); empty: every type the broker lists.
    """

    def __init__(self, *, resource_types: list[int] = MISSING) -> None:
        self.resource_types = [] if resource_types is MISSING else resource_types


class ListConfigResourcesResponse(Message):
    """The ListConfigResources response (key 74)."""

    __slots__ = ("throttle_time_ms", "error_code", "config_resources")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py)."""
    config_resources: list[ConfigResource]
    """The resources found."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        config_resources: list[ConfigResource] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.config_resources = [] if config_resources is MISSING else config_resources


class ConfigResource(Message):
    """The resources found."""

    __slots__ = ("resource_name", "resource_type")

    resource_name: str
    """Resource name."""
    resource_type: int
    """ConfigResource type code (v0 lists client metrics resources only: 16)."""

    def __init__(self, *, resource_name: str = "", resource_type: int = 16) -> None:
        self.resource_name = resource_name
        self.resource_type = resource_type


# The schema the codecs are compiled from (nested structs first).
_LIST_CONFIG_RESOURCES_REQUEST = StructDef(
    "ListConfigResourcesRequest",
    [Field("resource_types", array(INT8), "1+")],
    ListConfigResourcesRequest,
)
_CONFIG_RESOURCE = StructDef(
    "ConfigResource",
    [
        Field("resource_name", STRING),
        Field("resource_type", INT8, "1+", default=16, ignorable=True),
    ],
    ConfigResource,
)
_LIST_CONFIG_RESOURCES_RESPONSE = StructDef(
    "ListConfigResourcesResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("config_resources", array(_CONFIG_RESOURCE)),
    ],
    ListConfigResourcesResponse,
)

LIST_CONFIG_RESOURCES: Api[ListConfigResourcesRequest, ListConfigResourcesResponse] = Api(
    74,
    "ListConfigResources",
    "0-1",
    "0+",
    _LIST_CONFIG_RESOURCES_REQUEST,
    _LIST_CONFIG_RESOURCES_RESPONSE,
    ListConfigResourcesRequest,
    ListConfigResourcesResponse,
)
"""ListConfigResources (key 74), versions 0-1."""
