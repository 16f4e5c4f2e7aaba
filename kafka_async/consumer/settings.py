"""The consumer's own settings, each declared once (the shared connection settings are in
:mod:`kafka_async.net.settings`).

``SCHEMA`` is the source: :class:`~kafka_async.consumer.config.ConsumerConfig` validates with
it, and ``make generate`` writes ``ConsumerSettings`` / ``ConsumerFields``
(``settings_generated.py``), the README table and the ``Consumer`` docstring's list from it.
Relations (``heartbeat_interval_ms`` below ``session_timeout_ms``, a static member needs a
group) are checked by ``ConsumerConfig``. Names and defaults follow aiokafka's
``AIOKafkaConsumer`` where it has the setting. See :mod:`kafka_async.settings`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ConfigError
from ..observability import ClientHooks
from ..settings.spec import Bool, Choice, Custom, Func, Instance, Int, Schema, Setting, Text
from .group.assignors import ASSIGNORS, resolve_assignors
from .positions import RESET_STRATEGIES

Deserializer = Callable[[bytes | None], Any]

ISOLATION_LEVELS = {"read_uncommitted": 0, "read_committed": 1}
#: The group protocols: "classic" (JoinGroup/SyncGroup, client-side assignors) or
#: "consumer" (KIP-848: ConsumerGroupHeartbeat, the broker assigns; Kafka 4.0+).
GROUP_PROTOCOLS = ("classic", "consumer")

#: Imports the generated module needs for the annotations below.
IMPORTS = (
    "from ..observability import ClientHooks",
    "from .group.assignors import Assignor",
    "from .settings import Deserializer",
)

#: Literal aliases the generated module defines besides the Choice ones.
ALIASES = {
    #: The names in ``group.assignors.ASSIGNORS``.
    "AssignorName": "Literal[" + ", ".join(f'"{name}"' for name in ASSIGNORS) + "]",
    #: One assignor: a name, an ``Assignor`` subclass or an instance.
    "AssignorSpec": "AssignorName | Assignor | type[Assignor]",
}


def _assignors(name: str, value: Any) -> Any:
    try:
        return resolve_assignors(value)
    except ConfigError as exc:
        if name in str(exc):
            raise
        raise ConfigError(f"{name}: {exc}") from None


SCHEMA = Schema(
    "consumer",
    [
        Setting("group_id", Text(), None, "the consumer group to join; None: no group"),
        Setting(
            "group_instance_id",
            Text(),
            None,
            "static membership (KIP-345): a restart within the session keeps the partitions",
        ),
        Setting(
            "group_protocol",
            Choice(GROUP_PROTOCOLS, "GroupProtocol"),
            "classic",
            "'classic' (JoinGroup/SyncGroup) or 'consumer' (KIP-848, the broker assigns)",
        ),
        Setting(
            "group_remote_assignor",
            Text(),
            None,
            "'consumer' protocol: the broker's assignor ('uniform', 'range'); None: its default",
        ),
        Setting(
            "client_rack",
            Text(),
            None,
            "the rack this consumer runs in: fetch from a replica there (KIP-392)",
        ),
        Setting(
            "key_deserializer",
            Func("Deserializer | None"),
            None,
            "turns key bytes (or None) into the consumer's K",
            typed=False,
        ),
        Setting(
            "value_deserializer",
            Func("Deserializer | None"),
            None,
            "turns value bytes (or None) into the consumer's V",
            typed=False,
        ),
        Setting(
            "fetch_max_wait_ms",
            Int(low=0),
            500,
            "how long the broker may hold a Fetch waiting for fetch_min_bytes",
        ),
        Setting(
            "fetch_max_bytes",
            Int(low=1),
            52_428_800,
            "bytes one Fetch response may carry",
            default_doc="50 MiB",
        ),
        Setting(
            "fetch_min_bytes",
            Int(low=0),
            1,
            "bytes the broker waits for before it answers a Fetch",
        ),
        Setting(
            "max_partition_fetch_bytes",
            Int(low=1),
            1_048_576,
            "bytes one Fetch may carry per partition",
            default_doc="1 MiB",
        ),
        Setting(
            "max_poll_records",
            Int(low=1, optional=True),
            None,
            "records one getmany() returns at most; None: no limit",
        ),
        Setting(
            "auto_offset_reset",
            Choice(tuple(RESET_STRATEGIES), "AutoOffsetReset"),
            "latest",
            "where to start without a committed offset: 'earliest', 'latest' or 'none' (raise)",
        ),
        Setting(
            "enable_auto_commit",
            Bool(),
            True,
            "commit the offsets of records handed out every auto_commit_interval_ms",
        ),
        Setting(
            "auto_commit_interval_ms",
            Int(low=1),
            5_000,
            "how often auto commit runs",
        ),
        Setting("check_crcs", Bool(), True, "verify each record batch's CRC"),
        Setting(
            "partition_assignment_strategy",
            Custom(
                "AssignorSpec | list[AssignorSpec] | tuple[AssignorSpec, ...]",
                _assignors,
                stored_as="tuple[Assignor, ...]",
            ),
            ("range", "cooperative-sticky"),
            "classic protocol: assignors in order of preference (names, classes or instances)",
        ),
        Setting(
            "max_poll_interval_ms",
            Int(low=1),
            300_000,
            "longest gap between polls before the member leaves the group",
        ),
        Setting(
            "rebalance_timeout_ms",
            Int(low=1, optional=True),
            None,
            "how long the coordinator waits for members to rejoin",
            java="",
            default_doc="max_poll_interval_ms",
        ),
        Setting(
            "session_timeout_ms",
            Int(low=1),
            10_000,
            "the group drops a member silent this long",
        ),
        Setting(
            "heartbeat_interval_ms",
            Int(low=1),
            3_000,
            "time between heartbeats (below session_timeout_ms)",
        ),
        Setting(
            "isolation_level",
            Choice(tuple(ISOLATION_LEVELS), "IsolationLevelName"),
            "read_uncommitted",
            "'read_committed': skip aborted transactions and stop at the first open one",
        ),
        Setting(
            "exclude_internal_topics",
            Bool(),
            True,
            "a subscription pattern never matches internal topics (__consumer_offsets)",
        ),
        Setting(
            "enable_fetch_sessions",
            Bool(),
            True,
            "incremental fetch sessions (KIP-227); off for brokers that mishandle them",
            java="",
        ),
        Setting(
            "max_decompressed_size",
            Int(low=1),
            64 * 1024 * 1024,
            "a compressed batch inflating past this is refused (decompression-bomb guard)",
            java="",
            default_doc="64 MiB",
        ),
        Setting(
            "close_timeout_ms",
            Int(low=0),
            5_000,
            "how long close() may take (final commit, LeaveGroup)",
            java="",
        ),
        Setting(
            "default_api_timeout_ms",
            Int(low=0),
            60_000,
            "deadline of commit(), committed(), position() and the offset lookups unless "
            "they give timeout_ms; a moving coordinator or leader is asked again until then",
        ),
        Setting(
            "hooks",
            Instance(ClientHooks, "ClientHooks | None"),
            None,
            "observability hooks (OpenTelemetry spans and metrics); None: off",
            java="",
        ),
        Setting(
            "enable_metrics_push",
            Bool(),
            True,
            "push the metrics a broker's client-metrics subscription asks for (KIP-714)",
        ),
    ],
)
