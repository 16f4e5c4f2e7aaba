"""Values passed *to* the admin client: new topics, config resources, ACLs, offset specs.

All of them are frozen dataclasses or enums that validate themselves on construction, so a
bad argument fails at the call site with a clear :class:`~kafka_async.errors.ConfigError`
(a ``ValueError``) instead of as a broker error code later.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Union

from ..errors import ConfigError

__all__ = [
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "AlterConfigOp",
    "AlterConfigOpType",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigSource",
    "ConfigType",
    "IsolationLevel",
    "NewPartitions",
    "NewTopic",
    "OffsetSpec",
    "OffsetSpecLike",
    "PatternType",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
]

_MAX_TOPIC_NAME = 249


def validate_topic_name(name: object) -> str:
    """Return ``name`` if Kafka would accept it as a topic name, else raise ConfigError."""
    if not isinstance(name, str):
        raise ConfigError(f"topic name must be a str, got {type(name).__name__}")
    if not name or name in (".", ".."):
        raise ConfigError(f"invalid topic name {name!r}")
    if len(name) > _MAX_TOPIC_NAME:
        raise ConfigError(f"topic name longer than {_MAX_TOPIC_NAME} characters: {name[:40]}...")
    for ch in name:
        if not (ch.isascii() and (ch.isalnum() or ch in "._-")):
            raise ConfigError(
                f"invalid topic name {name!r}: only ASCII letters, digits, '.', '_' and '-'"
            )
    return name


def _frozen_str_map(value: object, what: str) -> Mapping[str, str | None]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{what} must be a mapping of str to str, got {type(value).__name__}")
    out: dict[str, str | None] = {}
    for k, raw in value.items():
        v: object = raw
        if not isinstance(k, str) or not k:
            raise ConfigError(f"{what}: config names must be non-empty strings, got {k!r}")
        if v is not None and not isinstance(v, str):
            # Kafka configs are strings on the wire; converting silently would hide typos
            # like passing a dict, but numbers and bools are common and unambiguous.
            if isinstance(v, bool):
                v = "true" if v else "false"
            elif isinstance(v, int | float):
                v = str(v)
            else:
                raise ConfigError(f"{what}: value of {k!r} must be a str, got {type(v).__name__}")
        out[k] = v
    return MappingProxyType(out)


# --------------------------------------------------------------------------------------------
# Topics
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewTopic:
    """A topic to create.

    ``num_partitions`` and ``replication_factor`` of -1 use the broker's defaults
    (``num.partitions``, ``default.replication.factor``). ``replica_assignment`` maps a
    partition index to the broker ids holding it; when given, both counts must stay -1.
    """

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    replica_assignment: Mapping[int, Sequence[int]] | None = None
    config: Mapping[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        validate_topic_name(self.name)
        for attr in ("num_partitions", "replication_factor"):
            value = getattr(self, attr)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ConfigError(f"NewTopic.{attr} must be an int, got {value!r}")
            if value == 0 or value < -1:
                raise ConfigError(f"NewTopic.{attr} must be positive or -1 (default), got {value}")
        if self.replication_factor > 32767:
            raise ConfigError("NewTopic.replication_factor must fit in 16 bits")
        if self.replica_assignment is not None:
            if self.num_partitions != -1 or self.replication_factor != -1:
                raise ConfigError(
                    "NewTopic: give either replica_assignment or num_partitions/"
                    "replication_factor, not both"
                )
            if not self.replica_assignment:
                raise ConfigError("NewTopic.replica_assignment must not be empty")
            frozen: dict[int, tuple[int, ...]] = {}
            for p, brokers in self.replica_assignment.items():
                if not isinstance(p, int) or p < 0:
                    raise ConfigError(f"NewTopic.replica_assignment: bad partition {p!r}")
                ids = tuple(brokers)
                if not ids or not all(isinstance(b, int) and b >= 0 for b in ids):
                    raise ConfigError(
                        f"NewTopic.replica_assignment[{p}] must be a non-empty list of broker ids"
                    )
                frozen[p] = ids
            object.__setattr__(self, "replica_assignment", MappingProxyType(frozen))
        object.__setattr__(self, "config", _frozen_str_map(self.config, "NewTopic.config"))


@dataclass(frozen=True)
class NewPartitions:
    """Grow a topic to ``total_count`` partitions, optionally placing the new ones.

    ``assignments`` lists, for each *new* partition in order, the broker ids holding it.
    """

    total_count: int
    assignments: Sequence[Sequence[int]] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.total_count, int) or self.total_count < 1:
            raise ConfigError(f"NewPartitions.total_count must be >= 1, got {self.total_count!r}")
        if self.assignments is not None:
            frozen = tuple(tuple(a) for a in self.assignments)
            if not frozen or not all(a and all(isinstance(b, int) for b in a) for a in frozen):
                raise ConfigError("NewPartitions.assignments must be non-empty lists of broker ids")
            object.__setattr__(self, "assignments", frozen)


# --------------------------------------------------------------------------------------------
# Configs
# --------------------------------------------------------------------------------------------


class ConfigResourceType(enum.IntEnum):
    """What a config belongs to (Kafka's ConfigResource.Type wire values)."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigSource(enum.IntEnum):
    """Where a config value comes from (DescribeConfigs v1+)."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8

    @classmethod
    def from_wire(cls, value: int) -> ConfigSource:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


class ConfigType(enum.IntEnum):
    """The declared type of a config (DescribeConfigs v3+)."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9

    @classmethod
    def from_wire(cls, value: int) -> ConfigType:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


@dataclass(frozen=True)
class ConfigResource:
    """A topic, broker (name = broker id as a string), broker logger or group."""

    type: ConfigResourceType
    name: str

    def __post_init__(self) -> None:
        try:
            rtype = ConfigResourceType(self.type)
        except ValueError:
            raise ConfigError(f"unknown config resource type {self.type!r}") from None
        if rtype is ConfigResourceType.UNKNOWN:
            raise ConfigError("config resource type must not be UNKNOWN")
        object.__setattr__(self, "type", rtype)
        if not isinstance(self.name, str):
            raise ConfigError(f"config resource name must be a str, got {self.name!r}")
        if rtype is ConfigResourceType.TOPIC:
            validate_topic_name(self.name)
        if rtype in (ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER) and not (
            self.name == "" or self.name.isdigit()
        ):
            # "" addresses the cluster-wide default of dynamic broker configs.
            raise ConfigError(f"broker config resource name must be a broker id, got {self.name!r}")

    @classmethod
    def topic(cls, name: str) -> ConfigResource:
        """The configs of topic ``name``."""
        return cls(ConfigResourceType.TOPIC, name)

    @classmethod
    def broker(cls, broker_id: int | str) -> ConfigResource:
        """The configs of one broker (sent to that broker)."""
        return cls(ConfigResourceType.BROKER, str(broker_id))

    @classmethod
    def group(cls, group_id: str) -> ConfigResource:
        """The configs of a consumer group (Kafka 4.0+)."""
        return cls(ConfigResourceType.GROUP, group_id)

    @property
    def broker_id(self) -> int | None:
        """The broker a BROKER/BROKER_LOGGER resource must be sent to, else None."""
        if self.type in (ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER) and self.name:
            return int(self.name)
        return None


class AlterConfigOpType(enum.IntEnum):
    """IncrementalAlterConfigs operations."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True)
class AlterConfigOp:
    """One change of IncrementalAlterConfigs: set, delete (reset), append or subtract."""

    name: str
    value: str | None = None
    op: AlterConfigOpType = AlterConfigOpType.SET

    def __post_init__(self) -> None:
        try:
            op = AlterConfigOpType(self.op)
        except ValueError:
            raise ConfigError(f"unknown config operation {self.op!r}") from None
        object.__setattr__(self, "op", op)
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"config name must be a non-empty str, got {self.name!r}")
        if op is not AlterConfigOpType.DELETE and self.value is None:
            raise ConfigError(f"config operation {op.name} on {self.name!r} needs a value")
        if self.value is not None and not isinstance(self.value, str):
            raise ConfigError(f"config value of {self.name!r} must be a str")

    @classmethod
    def set(cls, name: str, value: str) -> AlterConfigOp:
        """Set ``name`` to ``value``."""
        return cls(name, value, AlterConfigOpType.SET)

    @classmethod
    def delete(cls, name: str) -> AlterConfigOp:
        """Remove the override of ``name`` (back to its default)."""
        return cls(name, None, AlterConfigOpType.DELETE)

    @classmethod
    def append(cls, name: str, value: str) -> AlterConfigOp:
        """Add ``value`` to the list config ``name``."""
        return cls(name, value, AlterConfigOpType.APPEND)

    @classmethod
    def subtract(cls, name: str, value: str) -> AlterConfigOp:
        """Remove ``value`` from the list config ``name``."""
        return cls(name, value, AlterConfigOpType.SUBTRACT)


# --------------------------------------------------------------------------------------------
# Offsets
# --------------------------------------------------------------------------------------------


class ElectionType(enum.IntEnum):
    """Which leader ElectLeaders elects: the preferred replica (the first of the replica list),
    or any live replica when no in-sync one is left (unclean: may lose records)."""

    PREFERRED = 0
    UNCLEAN = 1


class IsolationLevel(enum.IntEnum):
    """Which offsets ListOffsets sees: the high watermark or the last stable offset."""

    READ_UNCOMMITTED = 0
    READ_COMMITTED = 1


@dataclass(frozen=True)
class OffsetSpec:
    """What ListOffsets should look up for a partition.

    Use :meth:`earliest`, :meth:`latest`, :meth:`max_timestamp` (the offset of the record
    with the largest timestamp, Kafka 3.0+) or :meth:`for_timestamp` (the first offset whose
    timestamp is at or after ``ms``).
    """

    timestamp: int

    EARLIEST_TS = -2
    LATEST_TS = -1
    MAX_TIMESTAMP_TS = -3

    def __post_init__(self) -> None:
        if not isinstance(self.timestamp, int) or isinstance(self.timestamp, bool):
            raise ConfigError(f"OffsetSpec timestamp must be an int, got {self.timestamp!r}")
        if self.timestamp < -3:
            raise ConfigError(f"OffsetSpec timestamp must be >= 0, got {self.timestamp}")

    @classmethod
    def earliest(cls) -> OffsetSpec:
        """The first offset still in the log."""
        return cls(cls.EARLIEST_TS)

    @classmethod
    def latest(cls) -> OffsetSpec:
        """The offset the next record will get (the high watermark)."""
        return cls(cls.LATEST_TS)

    @classmethod
    def max_timestamp(cls) -> OffsetSpec:
        """The offset of the record with the largest timestamp (ListOffsets v7+)."""
        return cls(cls.MAX_TIMESTAMP_TS)

    @classmethod
    def for_timestamp(cls, ms: int) -> OffsetSpec:
        """The first offset whose timestamp is at or after ``ms`` (epoch milliseconds)."""
        if not isinstance(ms, int) or isinstance(ms, bool) or ms < 0:
            raise ConfigError(f"timestamp must be a non-negative int of milliseconds, got {ms!r}")
        return cls(ms)

    @classmethod
    def coerce(cls, value: OffsetSpecLike) -> OffsetSpec:
        """Accept an OffsetSpec, ``"earliest"``/``"latest"``/``"max_timestamp"``, or a
        non-negative timestamp in milliseconds."""
        if isinstance(value, OffsetSpec):
            return value
        if isinstance(value, str):
            named = {
                "earliest": cls.EARLIEST_TS,
                "latest": cls.LATEST_TS,
                "max_timestamp": cls.MAX_TIMESTAMP_TS,
            }
            if value not in named:
                raise ConfigError(
                    f"unknown offset spec {value!r}; use earliest, latest, max_timestamp or a "
                    "timestamp in ms"
                )
            return cls(named[value])
        if isinstance(value, int) and not isinstance(value, bool):
            return cls.for_timestamp(value)
        raise ConfigError(f"bad offset spec {value!r}")

    def __repr__(self) -> str:
        names = {-2: "earliest", -1: "latest", -3: "max_timestamp"}
        if self.timestamp in names:
            return f"OffsetSpec.{names[self.timestamp]}()"
        return f"OffsetSpec.for_timestamp({self.timestamp})"


OffsetSpecLike = Union[OffsetSpec, str, int]  # noqa: UP007 - runtime alias on 3.10


# --------------------------------------------------------------------------------------------
# ACLs
# --------------------------------------------------------------------------------------------


class ResourceType(enum.IntEnum):
    """ACL resource types."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    """How an ACL's resource name matches: exactly (LITERAL) or as a prefix (PREFIXED)."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(enum.IntEnum):
    """Operations an ACL allows or denies."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(enum.IntEnum):
    """ALLOW or DENY."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


def _enum(cls: type[enum.IntEnum], value: object, what: str) -> enum.IntEnum:
    if isinstance(value, str):
        try:
            return cls[value.upper()]
        except KeyError:
            raise ConfigError(f"unknown {what} {value!r}") from None
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError(f"{what} must be an enum member, a name or an int, got {value!r}")
    try:
        return cls(value)
    except ValueError:
        raise ConfigError(f"unknown {what} {value!r}") from None


def _enum_from_wire(cls: type[enum.IntEnum], value: int) -> enum.IntEnum:
    try:
        return cls(value)
    except ValueError:
        return cls(0)  # every ACL enum has UNKNOWN = 0


@dataclass(frozen=True)
class ResourcePattern:
    """A concrete resource an ACL applies to."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType = PatternType.LITERAL

    def __post_init__(self) -> None:
        rtype = _enum(ResourceType, self.resource_type, "resource type")
        ptype = _enum(PatternType, self.pattern_type, "pattern type")
        if rtype in (ResourceType.ANY, ResourceType.UNKNOWN):
            raise ConfigError(
                f"a resource pattern needs a concrete resource type, not {rtype.name}"
            )
        if ptype not in (PatternType.LITERAL, PatternType.PREFIXED):
            raise ConfigError(f"a resource pattern is LITERAL or PREFIXED, not {ptype.name}")
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError("a resource pattern needs a non-empty name")
        object.__setattr__(self, "resource_type", rtype)
        object.__setattr__(self, "pattern_type", ptype)


@dataclass(frozen=True)
class ResourcePatternFilter:
    """Matches resource patterns; ``None`` name and ANY types match everything."""

    resource_type: ResourceType = ResourceType.ANY
    name: str | None = None
    pattern_type: PatternType = PatternType.ANY

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "resource_type", _enum(ResourceType, self.resource_type, "resource type")
        )
        object.__setattr__(
            self, "pattern_type", _enum(PatternType, self.pattern_type, "pattern type")
        )


@dataclass(frozen=True)
class AclBinding:
    """One ACL: ``principal`` (e.g. ``"User:alice"``) from ``host`` may (or may not)
    perform ``operation`` on ``pattern``."""

    pattern: ResourcePattern
    principal: str
    host: str = "*"
    operation: AclOperation = AclOperation.ALL
    permission_type: AclPermissionType = AclPermissionType.ALLOW

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, ResourcePattern):
            raise ConfigError("AclBinding.pattern must be a ResourcePattern")
        if not isinstance(self.principal, str) or ":" not in self.principal:
            raise ConfigError(f"ACL principal must look like 'User:name', got {self.principal!r}")
        if not isinstance(self.host, str) or not self.host:
            raise ConfigError("ACL host must be a non-empty string ('*' for any host)")
        op = _enum(AclOperation, self.operation, "ACL operation")
        perm = _enum(AclPermissionType, self.permission_type, "ACL permission type")
        if op in (AclOperation.ANY, AclOperation.UNKNOWN):
            raise ConfigError(f"an ACL needs a concrete operation, not {op.name}")
        if perm not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
            raise ConfigError(f"an ACL permission is ALLOW or DENY, not {perm.name}")
        object.__setattr__(self, "operation", op)
        object.__setattr__(self, "permission_type", perm)

    @classmethod
    def from_wire(
        cls,
        resource_type: int,
        name: str,
        pattern_type: int,
        principal: str,
        host: str,
        operation: int,
        permission_type: int,
    ) -> AclBinding:
        """Build from broker data without validation (brokers may report odd values)."""
        pattern = object.__new__(ResourcePattern)
        object.__setattr__(pattern, "resource_type", _enum_from_wire(ResourceType, resource_type))
        object.__setattr__(pattern, "name", name)
        object.__setattr__(pattern, "pattern_type", _enum_from_wire(PatternType, pattern_type))
        acl = object.__new__(cls)
        object.__setattr__(acl, "pattern", pattern)
        object.__setattr__(acl, "principal", principal)
        object.__setattr__(acl, "host", host)
        object.__setattr__(acl, "operation", _enum_from_wire(AclOperation, operation))
        object.__setattr__(
            acl, "permission_type", _enum_from_wire(AclPermissionType, permission_type)
        )
        return acl


@dataclass(frozen=True)
class AclBindingFilter:
    """Matches ACLs for describe_acls / delete_acls; ``None`` and ANY match everything."""

    pattern: ResourcePatternFilter = field(default_factory=ResourcePatternFilter)
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, ResourcePatternFilter):
            raise ConfigError("AclBindingFilter.pattern must be a ResourcePatternFilter")
        object.__setattr__(self, "operation", _enum(AclOperation, self.operation, "ACL operation"))
        object.__setattr__(
            self,
            "permission_type",
            _enum(AclPermissionType, self.permission_type, "ACL permission type"),
        )

    @classmethod
    def any(cls) -> AclBindingFilter:
        """A filter matching every ACL."""
        return cls()
