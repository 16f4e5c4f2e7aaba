"""The producer's own settings, each declared once (the shared connection settings are in
:mod:`kafka_async.net.settings`).

``SCHEMA`` is the source: :class:`~kafka_async.producer.config.ProducerConfig` validates with
it, and ``make generate`` writes ``ProducerSettings`` / ``ProducerFields``
(``settings_generated.py``), the README table and the ``Producer`` docstring's list from it.
Relations (idempotence against ``acks``, sizes against ``buffer_memory``) are checked by
``ProducerConfig``. See :mod:`kafka_async.settings`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ConfigError
from ..observability import ClientHooks
from ..settings.spec import Bool, Choice, Custom, Func, Instance, Int, Schema, Setting, Text
from .partitioner import make_partitioner

Serializer = Callable[[Any], bytes | None]

COMPRESSION_TYPES = (None, "gzip", "snappy", "lz4", "zstd")

#: Imports the generated module needs for the annotations below.
IMPORTS = (
    "from collections.abc import Callable",
    "from ..observability import ClientHooks",
    "from .partitioner import Partitioner",
    "from .settings import Serializer",
)

#: Literal aliases the generated module defines besides the Choice ones.
ALIASES = {
    #: What ``acks`` accepts: 0, 1, or all in-sync replicas as "all" / -1 (strings as the
    #: Java client writes them are taken too).
    "Acks": 'Literal["all", 0, 1, -1, "0", "1", "-1"]',
    #: The partitioner names ``make_partitioner`` knows (None is "default").
    "PartitionerName": (
        'Literal["default", "murmur2_random", "murmur2", "uniform_sticky", "round_robin"]'
    ),
}


def _acks(name: str, value: Any) -> int:
    if not isinstance(value, bool):
        if value in ("all", "-1") or (isinstance(value, int) and value == -1):
            return -1
        if isinstance(value, int) and value in (0, 1):
            return value
        if value in ("0", "1"):
            return int(value)
    raise ConfigError(f"{name}: expected 0, 1 or 'all', got {value!r}")


def _partitioner(name: str, value: Any) -> Any:
    make_partitioner(value, 16384)  # raises ConfigError naming the setting if wrong
    return value


SCHEMA = Schema(
    "producer",
    [
        Setting(
            "acks",
            Custom("Acks", _acks, stored_as="int"),
            "all",
            "replicas that must have a batch before it counts as sent: 0, 1 or 'all' (-1)",
        ),
        Setting(
            "compression_type",
            Choice(("gzip", "snappy", "lz4", "zstd"), "CompressionType", none_names=("none",)),
            None,
            "codec for record batches; None or 'none': uncompressed",
        ),
        Setting("linger_ms", Int(low=0), 5, "how long a batch waits for more records"),
        Setting(
            "max_batch_size",
            Int(low=100),
            262_144,
            "bytes per batch (aiokafka and Java: 16 KiB; larger batches cost less per record)",
            java="batch.size",
            default_doc="256 KiB",
        ),
        Setting(
            "max_request_size",
            Int(low=100),
            1_048_576,
            "bytes per Produce request; also the largest record",
            default_doc="1 MiB",
        ),
        Setting(
            "retry_backoff_max_ms",
            Int(low=0),
            1_000,
            "longest wait between retries of a batch (the wait doubles from retry_backoff_ms)",
        ),
        Setting(
            "enable_idempotence",
            Bool(optional=True),
            None,
            "producer id and sequence numbers: retries neither duplicate nor reorder",
            default_doc="on, unless acks or max_in_flight_requests_per_connection rule it out",
        ),
        Setting(
            "transactional_id",
            Text(),
            None,
            "makes the producer transactional (needs idempotence)",
        ),
        Setting(
            "transaction_timeout_ms",
            Int(low=1),
            60_000,
            "the broker aborts a transaction left open this long",
        ),
        Setting(
            "partitioner",
            Custom("PartitionerName | Partitioner | Callable[..., int] | None", _partitioner),
            None,
            "'default' (murmur2 for keys, uniform sticky without), 'uniform_sticky', "
            "'round_robin', a Partitioner or a callable (key_bytes, all, available) -> int",
            java="partitioner.class",
            default_doc="'default'",
        ),
        Setting(
            "key_serializer",
            Func("Serializer | None"),
            None,
            "turns keys into bytes",
        ),
        Setting(
            "value_serializer",
            Func("Serializer | None"),
            None,
            "turns values into bytes",
        ),
        Setting(
            "buffer_memory",
            Int(low=1024),
            32 * 1024 * 1024,
            "bytes of unsent records; send/enqueue wait for space beyond it",
            default_doc="32 MiB",
        ),
        Setting(
            "delivery_timeout_ms",
            Int(low=1),
            120_000,
            "from enqueue to acknowledgement, retries included",
        ),
        Setting(
            "max_in_flight_requests_per_connection",
            Int(low=1),
            5,
            "unanswered Produce requests per broker",
        ),
        Setting(
            "max_block_ms",
            Int(low=0),
            60_000,
            "how long send/enqueue/produce may wait for a topic's metadata (a topic that does "
            "not exist) or for buffer space, and a transactional call (init, send offsets, "
            "commit, abort) for the coordinator's answer, retries included; then "
            "KafkaTimeoutError",
            java="max.block.ms (Java; librdkafka has no direct equivalent)",
        ),
        Setting(
            "metadata_wait_ms",
            Int(low=0, optional=True),
            None,
            "how long a record for an unknown topic waits for it to appear (overrides "
            "max_block_ms for that wait only)",
            java="",
            default_doc="max_block_ms",
        ),
        Setting(
            "allow_auto_create_topics",
            Bool(),
            True,
            "metadata requests let a broker with auto.create.topics.enable create a topic",
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
