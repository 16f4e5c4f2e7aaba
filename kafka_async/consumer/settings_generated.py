# Generated from kafka_async/consumer/settings.py by `make generate`
# (tools/generate_settings.py): do not edit.
"""The consumer settings, typed: ``ConsumerSettings`` (the keyword arguments of
Consumer) and ``ConsumerFields`` (the fields of its config, checked values).

Both come from ``SCHEMA`` in ``kafka_async.consumer.settings``, which says
what each setting means; see :mod:`kafka_async.settings`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..net.config import ClientConfig
from ..net.settings_generated import ClientSettings
from ..observability import ClientHooks
from .group.assignors import Assignor
from .settings import SCHEMA as _SCHEMA
from .settings import Deserializer

AssignorName = Literal["range", "roundrobin", "sticky", "cooperative-sticky"]
AssignorSpec = AssignorName | Assignor | type[Assignor]
GroupProtocol = Literal["classic", "consumer"]
AutoOffsetReset = Literal["earliest", "latest", "none"]
IsolationLevelName = Literal["read_uncommitted", "read_committed"]


class ConsumerSettings(ClientSettings, total=False):
    """The keyword arguments of Consumer, typed for editors and mypy.

    Values are checked again at run time (``ConfigError`` naming the setting).
    """

    #: the consumer group to join; None: no group (default: None)
    group_id: str | None
    #: static membership (KIP-345): a restart within the session keeps the partitions (default:
    #: None)
    group_instance_id: str | None
    #: 'classic' (JoinGroup/SyncGroup) or 'consumer' (KIP-848, the broker assigns) (default:
    #: "classic")
    group_protocol: GroupProtocol
    #: 'consumer' protocol: the broker's assignor ('uniform', 'range'); None: its default (default:
    #: None)
    group_remote_assignor: str | None
    #: the rack this consumer runs in: fetch from a replica there (KIP-392) (default: None)
    client_rack: str | None
    #: how long the broker may hold a Fetch waiting for fetch_min_bytes (default: 500)
    fetch_max_wait_ms: int
    #: bytes one Fetch response may carry (default: 50 MiB)
    fetch_max_bytes: int
    #: bytes the broker waits for before it answers a Fetch (default: 1)
    fetch_min_bytes: int
    #: bytes one Fetch may carry per partition (default: 1 MiB)
    max_partition_fetch_bytes: int
    #: records one getmany() returns at most; None: no limit (default: None)
    max_poll_records: int | None
    #: where to start without a committed offset: 'earliest', 'latest' or 'none' (raise) (default:
    #: "latest")
    auto_offset_reset: AutoOffsetReset
    #: commit the offsets of records handed out every auto_commit_interval_ms (default: True)
    enable_auto_commit: bool
    #: how often auto commit runs (default: 5000)
    auto_commit_interval_ms: int
    #: verify each record batch's CRC (default: True)
    check_crcs: bool
    #: classic protocol: assignors in order of preference (names, classes or instances) (default:
    #: ("range", "cooperative-sticky"))
    partition_assignment_strategy: AssignorSpec | list[AssignorSpec] | tuple[AssignorSpec, ...]
    #: longest gap between polls before the member leaves the group (default: 300000)
    max_poll_interval_ms: int
    #: how long the coordinator waits for members to rejoin (default: max_poll_interval_ms)
    rebalance_timeout_ms: int | None
    #: the group drops a member silent this long (default: 10000)
    session_timeout_ms: int
    #: time between heartbeats (below session_timeout_ms) (default: 3000)
    heartbeat_interval_ms: int
    #: 'read_committed': skip aborted transactions and stop at the first open one (default:
    #: "read_uncommitted")
    isolation_level: IsolationLevelName
    #: a subscription pattern never matches internal topics (__consumer_offsets) (default: True)
    exclude_internal_topics: bool
    #: incremental fetch sessions (KIP-227); off for brokers that mishandle them (default: True)
    enable_fetch_sessions: bool
    #: a compressed batch inflating past this is refused (decompression-bomb guard) (default: 64
    #: MiB)
    max_decompressed_size: int
    #: how long close() may take (final commit, LeaveGroup) (default: 5000)
    close_timeout_ms: int
    #: deadline of commit(), committed(), position() and the offset lookups unless they give
    #: timeout_ms; a moving coordinator or leader is asked again until then (default: 60000)
    default_api_timeout_ms: int
    #: observability hooks (OpenTelemetry spans and metrics); None: off (default: None)
    hooks: ClientHooks | None
    #: push the metrics a broker's client-metrics subscription asks for (KIP-714) (default: True)
    enable_metrics_push: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerFields:
    """The consumer settings as the config holds them: each checked, defaults
    filled in."""

    client: ClientConfig
    group_id: str | None = None
    group_instance_id: str | None = None
    group_protocol: GroupProtocol = "classic"
    group_remote_assignor: str | None = None
    client_rack: str | None = None
    key_deserializer: Deserializer | None = None
    value_deserializer: Deserializer | None = None
    fetch_max_wait_ms: int = 500
    fetch_max_bytes: int = 52428800
    fetch_min_bytes: int = 1
    max_partition_fetch_bytes: int = 1048576
    max_poll_records: int | None = None
    auto_offset_reset: AutoOffsetReset = "latest"
    enable_auto_commit: bool = True
    auto_commit_interval_ms: int = 5000
    check_crcs: bool = True
    partition_assignment_strategy: tuple[Assignor, ...] = field(
        default_factory=lambda: _SCHEMA.default("partition_assignment_strategy")
    )
    max_poll_interval_ms: int = 300000
    rebalance_timeout_ms: int | None = None
    session_timeout_ms: int = 10000
    heartbeat_interval_ms: int = 3000
    isolation_level: IsolationLevelName = "read_uncommitted"
    exclude_internal_topics: bool = True
    enable_fetch_sessions: bool = True
    max_decompressed_size: int = 67108864
    close_timeout_ms: int = 5000
    default_api_timeout_ms: int = 60000
    hooks: ClientHooks | None = None
    enable_metrics_push: bool = True

    def __post_init__(self) -> None:
        # Each field checked against its declaration (the config subclass adds the
        # relations between fields).
        _SCHEMA.validate(self)
