# Generated from kafka_async/producer/settings.py by `make generate`
# (tools/generate_settings.py): do not edit.
"""The producer settings, typed: ``ProducerSettings`` (the keyword arguments of
Producer) and ``ProducerFields`` (the fields of its config, checked values).

Both come from ``SCHEMA`` in ``kafka_async.producer.settings``, which says
what each setting means; see :mod:`kafka_async.settings`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..net.config import ClientConfig
from ..net.settings_generated import ClientSettings
from ..observability import ClientHooks
from .partitioner import Partitioner
from .settings import SCHEMA as _SCHEMA
from .settings import Serializer

Acks = Literal["all", 0, 1, -1, "0", "1", "-1"]
PartitionerName = Literal["default", "murmur2_random", "murmur2", "uniform_sticky", "round_robin"]
CompressionType = Literal["gzip", "snappy", "lz4", "zstd", "none"]


class ProducerSettings(ClientSettings, total=False):
    """The keyword arguments of Producer, typed for editors and mypy.

    Values are checked again at run time (``ConfigError`` naming the setting).
    """

    #: replicas that must have a batch before it counts as sent: 0, 1 or 'all' (-1) (default: "all")
    acks: Acks
    #: codec for record batches; None or 'none': uncompressed (default: None)
    compression_type: CompressionType | None
    #: how long a batch waits for more records (default: 5)
    linger_ms: int
    #: bytes per batch (aiokafka and Java: 16 KiB; larger batches cost less per record) (default:
    #: 256 KiB)
    max_batch_size: int
    #: bytes per Produce request; also the largest record (default: 1 MiB)
    max_request_size: int
    #: longest wait between retries of a batch (the wait doubles from retry_backoff_ms) (default:
    #: 1000)
    retry_backoff_max_ms: int
    #: producer id and sequence numbers: retries neither duplicate nor reorder (default: on, unless
    #: acks or max_in_flight_requests_per_connection rule it out)
    enable_idempotence: bool | None
    #: makes the producer transactional (needs idempotence) (default: None)
    transactional_id: str | None
    #: the broker aborts a transaction left open this long (default: 60000)
    transaction_timeout_ms: int
    #: 'default' (murmur2 for keys, uniform sticky without), 'uniform_sticky', 'round_robin', a
    #: Partitioner or a callable (key_bytes, all, available) -> int (default: 'default')
    partitioner: PartitionerName | Partitioner | Callable[..., int] | None
    #: turns keys into bytes (default: None)
    key_serializer: Serializer | None
    #: turns values into bytes (default: None)
    value_serializer: Serializer | None
    #: bytes of unsent records; send/enqueue wait for space beyond it (default: 32 MiB)
    buffer_memory: int
    #: from enqueue to acknowledgement, retries included (default: 120000)
    delivery_timeout_ms: int
    #: unanswered Produce requests per broker (default: 5)
    max_in_flight_requests_per_connection: int
    #: how long send/enqueue/produce may wait for a topic's metadata (a topic that does not exist)
    #: or for buffer space, and a transactional call (init, send offsets, commit, abort) for the
    #: coordinator's answer, retries included; then KafkaTimeoutError (default: 60000)
    max_block_ms: int
    #: how long a record for an unknown topic waits for it to appear (overrides max_block_ms for
    #: that wait only) (default: max_block_ms)
    metadata_wait_ms: int | None
    #: metadata requests let a broker with auto.create.topics.enable create a topic (default: True)
    allow_auto_create_topics: bool
    #: observability hooks (OpenTelemetry spans and metrics); None: off (default: None)
    hooks: ClientHooks | None
    #: push the metrics a broker's client-metrics subscription asks for (KIP-714) (default: True)
    enable_metrics_push: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ProducerFields:
    """The producer settings as the config holds them: each checked, defaults
    filled in."""

    client: ClientConfig
    acks: int = -1
    compression_type: str | None = None
    linger_ms: int = 5
    max_batch_size: int = 262144
    max_request_size: int = 1048576
    retry_backoff_max_ms: int = 1000
    enable_idempotence: bool | None = None
    transactional_id: str | None = None
    transaction_timeout_ms: int = 60000
    partitioner: PartitionerName | Partitioner | Callable[..., int] | None = None
    key_serializer: Serializer | None = None
    value_serializer: Serializer | None = None
    buffer_memory: int = 33554432
    delivery_timeout_ms: int = 120000
    max_in_flight_requests_per_connection: int = 5
    max_block_ms: int = 60000
    metadata_wait_ms: int | None = None
    allow_auto_create_topics: bool = True
    hooks: ClientHooks | None = None
    enable_metrics_push: bool = True

    def __post_init__(self) -> None:
        # Each field checked against its declaration (the config subclass adds the
        # relations between fields).
        _SCHEMA.validate(self)
