"""Consumer settings, validated once at construction.

Names and defaults follow aiokafka's ``AIOKafkaConsumer`` where it has the setting (so code
moves over with few edits); connection settings come from :class:`ClientConfig`. A wrong
value raises :class:`~kafka_async.errors.ConfigError` naming the setting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ConfigError
from ..net.config import ClientConfig, ClientSettings
from ..observability import ClientHooks
from .group.assignors import Assignor, resolve_assignors
from .positions import RESET_STRATEGIES

Deserializer = Callable[[bytes | None], Any]

ISOLATION_LEVELS = {"read_uncommitted": 0, "read_committed": 1}

#: The keys of ``ISOLATION_LEVELS``.
IsolationLevelName = Literal["read_uncommitted", "read_committed"]
#: The keys of ``positions.RESET_STRATEGIES``.
AutoOffsetReset = Literal["earliest", "latest", "none"]
#: The names in ``group.assignors.ASSIGNORS``.
AssignorName = Literal["range", "roundrobin", "sticky", "cooperative-sticky"]
#: One assignor: a name, an ``Assignor`` subclass or an instance.
AssignorSpec = AssignorName | Assignor | type[Assignor]


class ConsumerSettings(ClientSettings, total=False):
    """The keyword arguments of ``Consumer``, typed for editors and mypy.

    The shared connection/security settings of :class:`ClientSettings` plus one key per
    :class:`ConsumerConfig` field (same name, meaning and default), except
    ``key_deserializer`` / ``value_deserializer``: those are parameters of
    ``Consumer.__init__`` itself, so that their return types become the consumer's ``K`` /
    ``V``. ``ConsumerConfig.from_kwargs`` still validates every value at run time.
    """

    group_id: str | None
    group_instance_id: str | None
    fetch_max_wait_ms: int
    fetch_max_bytes: int
    fetch_min_bytes: int
    max_partition_fetch_bytes: int
    max_poll_records: int | None
    auto_offset_reset: AutoOffsetReset
    enable_auto_commit: bool
    auto_commit_interval_ms: int
    check_crcs: bool
    #: One assignor or a list/tuple of them, in order of preference.
    partition_assignment_strategy: AssignorSpec | list[AssignorSpec] | tuple[AssignorSpec, ...]
    max_poll_interval_ms: int
    rebalance_timeout_ms: int | None
    session_timeout_ms: int
    heartbeat_interval_ms: int
    isolation_level: IsolationLevelName
    exclude_internal_topics: bool
    enable_fetch_sessions: bool
    max_decompressed_size: int
    close_timeout_ms: int
    hooks: ClientHooks | None


@dataclass(frozen=True)
class ConsumerConfig:
    """Every consumer setting other than the shared connection ones."""

    client: ClientConfig
    group_id: str | None = None
    group_instance_id: str | None = None
    key_deserializer: Deserializer | None = None
    value_deserializer: Deserializer | None = None
    fetch_max_wait_ms: int = 500
    fetch_max_bytes: int = 52_428_800
    fetch_min_bytes: int = 1
    max_partition_fetch_bytes: int = 1_048_576
    max_poll_records: int | None = None
    auto_offset_reset: str = "latest"
    enable_auto_commit: bool = True
    auto_commit_interval_ms: int = 5_000
    check_crcs: bool = True
    partition_assignment_strategy: tuple[Assignor, ...] = field(
        default_factory=lambda: resolve_assignors(["range", "cooperative-sticky"])
    )
    max_poll_interval_ms: int = 300_000
    rebalance_timeout_ms: int | None = None
    session_timeout_ms: int = 10_000
    heartbeat_interval_ms: int = 3_000
    isolation_level: str = "read_uncommitted"
    exclude_internal_topics: bool = True
    #: KIP-227 incremental fetch sessions (turn off for brokers that mishandle them).
    enable_fetch_sessions: bool = True
    #: Cap on one compressed batch's inflated size (decompression-bomb guard).
    max_decompressed_size: int = 64 * 1024 * 1024
    #: How long close() may take (commit, LeaveGroup) before it gives up.
    close_timeout_ms: int = 5_000
    #: Observability hooks (tracing, metrics); None: off.
    hooks: ClientHooks | None = None

    @classmethod
    def setting_names(cls) -> frozenset[str]:
        """The consumer's own keyword arguments (every field but ``client``)."""
        return frozenset(name for name in cls.__dataclass_fields__ if name != "client")

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ConsumerConfig:
        """Validate keyword arguments (shared ones go to ``ClientConfig``)."""
        client, rest = ClientConfig.from_kwargs(**kwargs)
        names = cls.setting_names()
        unknown = sorted(set(rest) - names)
        if unknown:
            raise ConfigError(f"unknown consumer setting(s): {', '.join(unknown)}")
        if "partition_assignment_strategy" in rest:
            rest["partition_assignment_strategy"] = resolve_assignors(
                rest["partition_assignment_strategy"]
            )
        return cls(client=client, **rest)

    def __post_init__(self) -> None:
        for name in ("group_id", "group_instance_id"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigError(f"{name}: expected a non-empty string or None, got {value!r}")
        if self.group_instance_id is not None and self.group_id is None:
            raise ConfigError("group_instance_id requires group_id")
        for name in ("key_deserializer", "value_deserializer"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise ConfigError(f"{name}: expected a callable or None, got {value!r}")
        for name, low in (
            ("fetch_max_wait_ms", 0),
            ("fetch_max_bytes", 1),
            ("fetch_min_bytes", 0),
            ("max_partition_fetch_bytes", 1),
            ("auto_commit_interval_ms", 1),
            ("max_poll_interval_ms", 1),
            ("session_timeout_ms", 1),
            ("heartbeat_interval_ms", 1),
            ("max_decompressed_size", 1),
            ("close_timeout_ms", 0),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{name}: expected an integer, got {value!r}")
            if value < low:
                raise ConfigError(f"{name}: must be >= {low}, got {value}")
        for name in ("max_poll_records", "rebalance_timeout_ms"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ConfigError(f"{name}: expected a positive integer or None, got {value!r}")
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ConfigError(
                f"heartbeat_interval_ms ({self.heartbeat_interval_ms}) must be lower than "
                f"session_timeout_ms ({self.session_timeout_ms})"
            )
        if self.auto_offset_reset not in RESET_STRATEGIES:
            raise ConfigError(
                f"auto_offset_reset: expected one of {', '.join(RESET_STRATEGIES)}, "
                f"got {self.auto_offset_reset!r}"
            )
        if self.isolation_level not in ISOLATION_LEVELS:
            raise ConfigError(
                f"isolation_level: expected one of {', '.join(ISOLATION_LEVELS)}, "
                f"got {self.isolation_level!r}"
            )
        for name in (
            "enable_auto_commit",
            "check_crcs",
            "exclude_internal_topics",
            "enable_fetch_sessions",
        ):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name}: expected True or False, got {getattr(self, name)!r}")
        if self.hooks is not None and not isinstance(self.hooks, ClientHooks):
            raise ConfigError(
                "hooks: expected a kafka_async.observability.ClientHooks instance, "
                f"got {type(self.hooks).__name__}"
            )
        if not self.partition_assignment_strategy:
            raise ConfigError("partition_assignment_strategy: at least one assignor is required")

    @property
    def isolation(self) -> int:
        """The wire value of ``isolation_level``."""
        return ISOLATION_LEVELS[self.isolation_level]

    @property
    def rebalance_timeout(self) -> int:
        """How long the coordinator waits for members to rejoin (defaults to the poll
        interval, as in the Java client)."""
        return self.rebalance_timeout_ms or self.max_poll_interval_ms
