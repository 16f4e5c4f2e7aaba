# Generated from kafka_async/protocol/definitions/update_features.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""UpdateFeatures: change the finalized level of cluster features (KIP-584).

Versions 0-2, flexible 0+; checked against Kafka 4.1's
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


class UpdateFeaturesRequest(Message):
    """The UpdateFeatures request (key 57)."""

    __slots__ = ("timeout_ms", "feature_updates", "validate_only")

    timeout_ms: int
    """How long the broker may take before it answers."""
    feature_updates: list[FeatureUpdateKey]
    """The features to change."""
    validate_only: bool
    """Check the request without applying it."""

    def __init__(
        self,
        *,
        timeout_ms: int = 60000,
        feature_updates: list[FeatureUpdateKey] = MISSING,
        validate_only: bool = False,
    ) -> None:
        self.timeout_ms = timeout_ms
        self.feature_updates = [] if feature_updates is MISSING else feature_updates
        self.validate_only = validate_only


class FeatureUpdateKey(Message):
    """The features to change."""

    __slots__ = ("feature", "max_version_level", "allow_downgrade", "upgrade_type")

    feature: str
    """Feature name."""
    max_version_level: int
    """The new highest level; 0 removes the feature."""
    allow_downgrade: bool
    """Allow a downgrade (v0 only)."""
    upgrade_type: int
    """1 upgrade, 2 safe downgrade, 3 unsafe downgrade."""

    def __init__(
        self,
        *,
        feature: str = "",
        max_version_level: int = 0,
        allow_downgrade: bool = False,
        upgrade_type: int = 1,
    ) -> None:
        self.feature = feature
        self.max_version_level = max_version_level
        self.allow_downgrade = allow_downgrade
        self.upgrade_type = upgrade_type


class UpdateFeaturesResponse(Message):
    """The UpdateFeatures response (key 57)."""

    __slots__ = ("throttle_time_ms", "error_code", "error_message", "results")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or a request-level error."""
    error_message: str | None
    """The broker's description of the error, or null."""
    results: list[UpdatableFeatureResult]
    """One result per feature (up to v1)."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        error_message: str | None = "",
        results: list[UpdatableFeatureResult] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.error_message = error_message
        self.results = [] if results is MISSING else results


class UpdatableFeatureResult(Message):
    """One result per feature (up to v1)."""

    __slots__ = ("feature", "error_code", "error_message")

    feature: str
    """Feature name."""
    error_code: int
    """0, or the error for this feature."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(
        self, *, feature: str = "", error_code: int = 0, error_message: str | None = ""
    ) -> None:
        self.feature = feature
        self.error_code = error_code
        self.error_message = error_message


# The schema the codecs are compiled from (nested structs first).
_FEATURE_UPDATE_KEY = StructDef(
    "FeatureUpdateKey",
    [
        Field("feature", STRING),
        Field("max_version_level", INT16),
        Field("allow_downgrade", BOOL, "0"),
        Field("upgrade_type", INT8, "1+", default=1),
    ],
    FeatureUpdateKey,
)
_UPDATE_FEATURES_REQUEST = StructDef(
    "UpdateFeaturesRequest",
    [
        Field("timeout_ms", INT32, default=60000),
        Field("feature_updates", array(_FEATURE_UPDATE_KEY)),
        Field("validate_only", BOOL, "1+"),
    ],
    UpdateFeaturesRequest,
)
_UPDATABLE_FEATURE_RESULT = StructDef(
    "UpdatableFeatureResult",
    [
        Field("feature", STRING),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
    ],
    UpdatableFeatureResult,
)
_UPDATE_FEATURES_RESPONSE = StructDef(
    "UpdateFeaturesResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("results", array(_UPDATABLE_FEATURE_RESULT), "0-1", ignorable=True),
    ],
    UpdateFeaturesResponse,
)

UPDATE_FEATURES: Api[UpdateFeaturesRequest, UpdateFeaturesResponse] = Api(
    57,
    "UpdateFeatures",
    "0-2",
    "0+",
    _UPDATE_FEATURES_REQUEST,
    _UPDATE_FEATURES_RESPONSE,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)
"""UpdateFeatures (key 57), versions 0-2."""
