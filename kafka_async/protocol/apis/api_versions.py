# Generated from kafka_async/protocol/definitions/api_versions.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ApiVersions: the API versions (and features) a broker supports.

Versions 0-4, flexible 3+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    MISSING,
    STRING,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class ApiVersionsRequest(Message):
    """The ApiVersions request (key 18)."""

    __slots__ = ("client_software_name", "client_software_version")

    client_software_name: str
    """Name of the client library (KIP-511)."""
    client_software_version: str
    """Version of the client library (KIP-511)."""

    def __init__(
        self, *, client_software_name: str = "", client_software_version: str = ""
    ) -> None:
        self.client_software_name = client_software_name
        self.client_software_version = client_software_version


class ApiVersionsResponse(Message):
    """The ApiVersions response (key 18)."""

    __slots__ = (
        "error_code",
        "api_keys",
        "throttle_time_ms",
        "supported_features",
        "finalized_features_epoch",
        "finalized_features",
        "zk_migration_ready",
    )

    error_code: int
    """0, or UNSUPPORTED_VERSION with a v0 body (KIP-511)."""
    api_keys: list[ApiVersion]
    """The APIs the broker supports."""
    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    supported_features: list[SupportedFeatureKey]
    """Features the broker supports (KIP-584)."""
    finalized_features_epoch: int
    """Epoch of the finalized features, or -1."""
    finalized_features: list[FinalizedFeatureKey]
    """Features finalized for the cluster (KIP-584)."""
    zk_migration_ready: bool
    """Whether a ZooKeeper migration may start (KRaft controllers)."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        api_keys: list[ApiVersion] = MISSING,
        throttle_time_ms: int = 0,
        supported_features: list[SupportedFeatureKey] = MISSING,
        finalized_features_epoch: int = -1,
        finalized_features: list[FinalizedFeatureKey] = MISSING,
        zk_migration_ready: bool = False,
    ) -> None:
        self.error_code = error_code
        self.api_keys = [] if api_keys is MISSING else api_keys
        self.throttle_time_ms = throttle_time_ms
        self.supported_features = [] if supported_features is MISSING else supported_features
        self.finalized_features_epoch = finalized_features_epoch
        self.finalized_features = [] if finalized_features is MISSING else finalized_features
        self.zk_migration_ready = zk_migration_ready


class ApiVersion(Message):
    """The APIs the broker supports."""

    __slots__ = ("api_key", "min_version", "max_version")

    api_key: int
    """API key."""
    min_version: int
    """Lowest version supported."""
    max_version: int
    """Highest version supported."""

    def __init__(self, *, api_key: int = 0, min_version: int = 0, max_version: int = 0) -> None:
        self.api_key = api_key
        self.min_version = min_version
        self.max_version = max_version


class SupportedFeatureKey(Message):
    """Features the broker supports (KIP-584)."""

    __slots__ = ("name", "min_version", "max_version")

    name: str
    """Feature name."""
    min_version: int
    """Lowest version supported."""
    max_version: int
    """Highest version supported."""

    def __init__(self, *, name: str = "", min_version: int = 0, max_version: int = 0) -> None:
        self.name = name
        self.min_version = min_version
        self.max_version = max_version


class FinalizedFeatureKey(Message):
    """Features finalized for the cluster (KIP-584)."""

    __slots__ = ("name", "max_version_level", "min_version_level")

    name: str
    """Feature name."""
    max_version_level: int
    """Highest finalized level."""
    min_version_level: int
    """Lowest finalized level."""

    def __init__(
        self, *, name: str = "", max_version_level: int = 0, min_version_level: int = 0
    ) -> None:
        self.name = name
        self.max_version_level = max_version_level
        self.min_version_level = min_version_level


# The schema the codecs are compiled from (nested structs first).
_API_VERSIONS_REQUEST = StructDef(
    "ApiVersionsRequest",
    [
        Field("client_software_name", STRING, "3+", ignorable=True),
        Field("client_software_version", STRING, "3+", ignorable=True),
    ],
    ApiVersionsRequest,
)
_API_VERSION = StructDef(
    "ApiVersion",
    [Field("api_key", INT16), Field("min_version", INT16), Field("max_version", INT16)],
    ApiVersion,
)
_SUPPORTED_FEATURE_KEY = StructDef(
    "SupportedFeatureKey",
    [
        Field("name", STRING, "3+"),
        Field("min_version", INT16, "3+"),
        Field("max_version", INT16, "3+"),
    ],
    SupportedFeatureKey,
)
_FINALIZED_FEATURE_KEY = StructDef(
    "FinalizedFeatureKey",
    [
        Field("name", STRING, "3+"),
        Field("max_version_level", INT16, "3+"),
        Field("min_version_level", INT16, "3+"),
    ],
    FinalizedFeatureKey,
)
_API_VERSIONS_RESPONSE = StructDef(
    "ApiVersionsResponse",
    [
        Field("error_code", INT16),
        Field("api_keys", array(_API_VERSION)),
        Field("throttle_time_ms", INT32, "1+", ignorable=True),
        Field("supported_features", array(_SUPPORTED_FEATURE_KEY), "3+", ignorable=True, tag=0),
        Field("finalized_features_epoch", INT64, "3+", default=-1, ignorable=True, tag=1),
        Field("finalized_features", array(_FINALIZED_FEATURE_KEY), "3+", ignorable=True, tag=2),
        Field("zk_migration_ready", BOOL, "3+", ignorable=True, tag=3),
    ],
    ApiVersionsResponse,
)

API_VERSIONS: Api[ApiVersionsRequest, ApiVersionsResponse] = Api(
    18,
    "ApiVersions",
    "0-4",
    "3+",
    _API_VERSIONS_REQUEST,
    _API_VERSIONS_RESPONSE,
    ApiVersionsRequest,
    ApiVersionsResponse,
)
"""ApiVersions (key 18), versions 0-4."""
