"""Options of the ``kafka_async`` Spark source and sink, parsed and checked on the driver.

The option names are those of Spark's built-in Kafka connector, so a job moves over by
changing its format name. Everything here is pure: it turns the string map Spark hands a data
source into frozen, picklable dataclasses, and raises :class:`~kafka_async.errors.ConfigError`
with a message naming the option for anything wrong. Spark treats option names
case-insensitively; so does this module.

``kafka.*`` options go to our client with their Java names mapped to the aiokafka-style keyword
names the ``Producer`` and ``Consumer`` take (``kafka.request.timeout.ms`` ->
``request_timeout_ms``). Options Spark's connector refuses because the source manages them
itself (deserializers, auto commit, ``auto.offset.reset``) are refused here too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ..errors import ConfigError
from ..structs import TopicPartition

#: Sentinels Kafka-style offset JSON uses: -2 is the earliest offset, -1 the latest.
EARLIEST = -2
LATEST = -1

OffsetSpec: TypeAlias = Literal["earliest", "latest"] | dict[TopicPartition, int]

_DEFAULT_POLL_TIMEOUT_MS = 120_000
#: Consumer pool bounds, Spark's defaults for ``spark.kafka.consumer.cache.capacity`` and
#: ``spark.kafka.consumer.cache.timeout``.
_DEFAULT_CACHE_CAPACITY = 64
_DEFAULT_CACHE_TIMEOUT_MS = 300_000
_DURATION_RE = re.compile(r"(\d+)\s*(ms|s|m|min|h)?")
_DURATION_UNIT_MS = {None: 1, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000}

# Java client config names -> our keyword names, where they differ from the mechanical
# "dots to underscores" rule or where only one of the two clients takes them.
_COMMON_RENAMES = {
    "bootstrap.servers": "bootstrap_servers",
    "client.id": "client_id",
    "request.timeout.ms": "request_timeout_ms",
    "retry.backoff.ms": "retry_backoff_ms",
    "metadata.max.age.ms": "metadata_max_age_ms",
    "connections.max.idle.ms": "connections_max_idle_ms",
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.plain.username": "sasl_plain_username",
    "sasl.plain.password": "sasl_plain_password",
    # TLS settings stay file names here (an SSLContext cannot be pickled to executors);
    # kafka_io builds the context where the client is created. Java's key and trust stores
    # are accepted when they are PEM files (ssl.*.type=PEM); JKS is a JVM-only format.
    "ssl.cafile": "ssl_cafile",
    "ssl.certfile": "ssl_certfile",
    "ssl.keyfile": "ssl_keyfile",
    "ssl.truststore.location": "ssl_cafile",
    "ssl.keystore.location": "ssl_certfile",
    "ssl.key.password": "ssl_password",
    "ssl.endpoint.identification.algorithm": "ssl_check_hostname",
}
_SSL_STORE_TYPES = {"ssl.truststore.type", "ssl.keystore.type"}
_CONSUMER_ONLY = {
    "fetch.max.bytes": "fetch_max_bytes",
    "fetch.min.bytes": "fetch_min_bytes",
    "fetch.max.wait.ms": "fetch_max_wait_ms",
    "max.partition.fetch.bytes": "max_partition_fetch_bytes",
    "isolation.level": "isolation_level",
    "check.crcs": "check_crcs",
    "max.poll.records": "max_poll_records",
}
_PRODUCER_ONLY = {
    "acks": "acks",
    "compression.type": "compression_type",
    "linger.ms": "linger_ms",
    "batch.size": "max_batch_size",
    "max.request.size": "max_request_size",
    "buffer.memory": "buffer_memory",
    "delivery.timeout.ms": "delivery_timeout_ms",
    "enable.idempotence": "enable_idempotence",
    "max.in.flight.requests.per.connection": "max_in_flight_requests_per_connection",
    "retries": None,  # our producer retries until delivery_timeout_ms; the count is ignored
    "partitioner.class": None,
}
# Spark's connector manages these itself and refuses them; so do we, with the same reasons.
_REFUSED = {
    "auto.offset.reset": "set startingOffsets instead",
    "key.deserializer": "keys are always returned as binary; cast them in the query",
    "value.deserializer": "values are always returned as binary; cast them in the query",
    "key.serializer": "keys must be string or binary columns",
    "value.serializer": "values must be string or binary columns",
    "enable.auto.commit": "the source tracks offsets in Spark's checkpoint, not in Kafka",
    "interceptor.classes": "Java interceptors do not exist in this client",
}
# Accepted for compatibility but meaningless here: we read with assign() and no group.
_IGNORED = {"group.id", "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms"}

_INT_CONFIGS_SUFFIXES = (".ms", ".bytes", ".size", ".records", ".memory", ".connection")
_BOOL_CONFIGS = {"check.crcs", "enable.idempotence"}

_JAAS_RE = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in options.items()}


def include_headers(options: Mapping[str, str]) -> bool:
    """The ``includeHeaders`` option (the source's schema depends on it)."""
    return _bool(_lower(options), "includeHeaders", False)


def _positive_int(opts: Mapping[str, str], name: str) -> int | None:
    raw = opts.get(name.lower())
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigError(f"option {name!r} must be a positive integer, got {raw!r}") from None
    if value <= 0:
        raise ConfigError(f"option {name!r} must be a positive integer, got {raw!r}")
    return value


def _bool(opts: Mapping[str, str], name: str, default: bool) -> bool:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    text = raw.strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ConfigError(f"option {name!r} must be true or false, got {raw!r}")


def _duration_ms(opts: Mapping[str, str], name: str) -> int | None:
    """A duration as Spark's time settings take it: ``300000``, ``300s``, ``5m`` (bare = ms)."""
    raw = opts.get(name.lower())
    if raw is None:
        return None
    match = _DURATION_RE.fullmatch(raw.strip().lower())
    if match is None or int(match.group(1)) <= 0:
        raise ConfigError(
            f"option {name!r} must be a positive duration such as 300000 (ms), 300s or 5m, "
            f"got {raw!r}"
        )
    return int(match.group(1)) * _DURATION_UNIT_MS[match.group(2)]


def _client_value(java_key: str, raw: str) -> object:
    """Convert a ``kafka.*`` string to the Python type our clients expect."""
    if java_key in _BOOL_CONFIGS:
        return raw.strip().lower() == "true"
    if java_key == "ssl.endpoint.identification.algorithm":
        # Java disables host name checks with an empty algorithm name.
        return raw.strip().lower() == "https"
    if java_key == "acks":
        text = raw.strip().lower()
        if text in ("all", "-1"):
            return "all"
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"option 'kafka.acks' must be 0, 1 or all, got {raw!r}") from None
    if java_key == "compression.type":
        text = raw.strip().lower()
        return None if text in ("none", "") else text
    if java_key.endswith(_INT_CONFIGS_SUFFIXES) or java_key == "max.poll.records":
        try:
            return int(raw.strip())
        except ValueError:
            raise ConfigError(
                f"option 'kafka.{java_key}' must be an integer, got {raw!r}"
            ) from None
    return raw


def client_config(
    options: Mapping[str, str], role: Literal["consumer", "producer"]
) -> dict[str, object]:
    """Keyword arguments for our ``Consumer`` or ``Producer`` from the ``kafka.*`` options.

    Raises ConfigError for a missing ``kafka.bootstrap.servers`` and for the options Spark's
    connector refuses too.
    """
    opts = _lower(options)
    out: dict[str, object] = {}
    for key, raw in opts.items():
        if not key.startswith("kafka."):
            continue
        java_key = key[len("kafka.") :]
        if java_key in _REFUSED:
            raise ConfigError(f"option {key!r} is not supported: {_REFUSED[java_key]}")
        if java_key in _IGNORED:
            continue
        if java_key in _SSL_STORE_TYPES:
            if raw.strip().upper() != "PEM":
                raise ConfigError(
                    f"option {key!r}={raw!r}: only PEM files are supported (JKS and PKCS12 "
                    "stores are JVM formats)"
                )
            continue
        if java_key == "sasl.jaas.config":
            # The JVM's login-module string carries the SASL user name and password.
            creds = dict(_JAAS_RE.findall(raw))
            if "username" in creds:
                out["sasl_plain_username"] = creds["username"]
            if "password" in creds:
                out["sasl_plain_password"] = creds["password"]
            continue
        if java_key in _COMMON_RENAMES:
            out[_COMMON_RENAMES[java_key]] = _client_value(java_key, raw)
        elif java_key in _CONSUMER_ONLY:
            if role == "consumer":
                out[_CONSUMER_ONLY[java_key]] = _client_value(java_key, raw)
        elif java_key in _PRODUCER_ONLY:
            name = _PRODUCER_ONLY[java_key]
            if role == "producer" and name is not None:
                out[name] = _client_value(java_key, raw)
        else:
            out[java_key.replace(".", "_").replace("-", "_")] = _client_value(java_key, raw)
    servers = out.get("bootstrap_servers")
    if not isinstance(servers, str) or not servers.strip():
        raise ConfigError("option 'kafka.bootstrap.servers' is required")
    return out


def parse_offsets_json(
    text: str, option: str, *, allow_earliest: bool = True, allow_latest: bool = True
) -> dict[TopicPartition, int]:
    """Parse Kafka-style offsets JSON such as ``{"t":{"0":23,"1":-2}}``.

    -2 stands for the earliest offset and -1 for the latest; ``allow_*`` switch each off where
    Spark forbids it (latest as a batch start, earliest as a batch end).
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"option {option!r} is neither earliest, latest nor JSON: {exc}"
        ) from None
    if not isinstance(doc, dict) or not doc:
        raise ConfigError(f'option {option!r} must be a JSON object like {{"topic":{{"0":23}}}}')
    out: dict[TopicPartition, int] = {}
    for topic, parts in doc.items():
        if not isinstance(parts, dict):
            raise ConfigError(f"option {option!r}: topic {topic!r} must map partitions to offsets")
        for part, offset in parts.items():
            try:
                index = int(part)
            except ValueError:
                raise ConfigError(
                    f"option {option!r}: partition {part!r} of {topic!r} is not an integer"
                ) from None
            if isinstance(offset, bool) or not isinstance(offset, int) or index < 0:
                raise ConfigError(f"option {option!r}: bad entry {topic}[{part}] = {offset!r}")
            if offset < EARLIEST:
                raise ConfigError(
                    f"option {option!r}: offset {offset} of {topic}-{index} is below -2"
                )
            if offset == LATEST and not allow_latest:
                raise ConfigError(f"option {option!r}: -1 (latest) is not allowed here")
            if offset == EARLIEST and not allow_earliest:
                raise ConfigError(f"option {option!r}: -2 (earliest) is not allowed here")
            out[TopicPartition(topic, index)] = offset
    return out


def offsets_to_json(offsets: Mapping[TopicPartition, int]) -> str:
    """The inverse of :func:`parse_offsets_json` (sorted, so equal maps give equal text)."""
    return json.dumps(offsets_to_dict(offsets), sort_keys=True, separators=(",", ":"))


def offsets_to_dict(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """Offsets as the nested ``{"topic": {"partition": offset}}`` dict checkpoints hold."""
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        out.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    return out


def offsets_from_dict(doc: Mapping[str, Mapping[str, int]]) -> dict[TopicPartition, int]:
    """Read back :func:`offsets_to_dict` output (e.g. from a streaming checkpoint)."""
    out: dict[TopicPartition, int] = {}
    for topic, parts in doc.items():
        for part, offset in parts.items():
            out[TopicPartition(topic, int(part))] = int(offset)
    return out


def _offset_spec(
    opts: Mapping[str, str],
    name: str,
    default: Literal["earliest", "latest"],
    *,
    allow_earliest: bool,
    allow_latest: bool,
) -> OffsetSpec:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    text = raw.strip()
    if text.lower() == "earliest":
        if not allow_earliest:
            raise ConfigError(f"option {name!r} cannot be earliest here")
        return "earliest"
    if text.lower() == "latest":
        if not allow_latest:
            raise ConfigError(f"option {name!r} cannot be latest here")
        return "latest"
    return parse_offsets_json(text, name, allow_earliest=allow_earliest, allow_latest=allow_latest)


def _timestamps_json(opts: Mapping[str, str], name: str) -> dict[TopicPartition, int] | None:
    raw = opts.get(name.lower())
    if raw is None:
        return None
    parsed = parse_offsets_json(raw, name)
    bad = [tp for tp, ts in parsed.items() if ts < 0]
    if bad:
        raise ConfigError(f"option {name!r}: timestamps must be >= 0 (see {bad[0]})")
    return parsed


def _timestamp(opts: Mapping[str, str], name: str) -> int | None:
    raw = opts.get(name.lower())
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigError(f"option {name!r} must be milliseconds since the epoch") from None
    if value < 0:
        raise ConfigError(f"option {name!r} must be >= 0, got {value}")
    return value


@dataclass(frozen=True)
class Subscription:
    """Which partitions a source reads: exactly one of the three Spark styles."""

    topics: tuple[str, ...] = ()
    pattern: str | None = None
    assign: tuple[TopicPartition, ...] = ()

    def matches(self, topic: str) -> bool:
        """True when ``topic`` belongs to this subscription (by name or by pattern)."""
        if self.pattern is not None:
            return re.fullmatch(self.pattern, topic) is not None
        if self.assign:
            return any(tp.topic == topic for tp in self.assign)
        return topic in self.topics


@dataclass(frozen=True)
class SourceOptions:
    """Everything the source needs, checked; picklable so it can travel to executors."""

    subscription: Subscription
    starting: OffsetSpec
    ending: OffsetSpec
    starting_timestamp: int | None = None
    starting_by_timestamp: dict[TopicPartition, int] | None = None
    ending_timestamp: int | None = None
    ending_by_timestamp: dict[TopicPartition, int] | None = None
    #: "error" fails when no offset has a timestamp >= the asked one; "latest" uses the end.
    timestamp_strategy: Literal["error", "latest"] = "error"
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    poll_timeout_ms: int = _DEFAULT_POLL_TIMEOUT_MS
    #: Read tasks borrow their consumer from the worker process's pool (``consumer_pool``)
    #: and give it back, instead of opening and closing one per task.
    use_consumer_cache: bool = True
    #: Most consumers the pool of one worker process keeps (least recently used go first).
    consumer_cache_capacity: int = _DEFAULT_CACHE_CAPACITY
    #: How long a consumer may sit unused in the pool before it is closed.
    consumer_cache_timeout_ms: int = _DEFAULT_CACHE_TIMEOUT_MS
    #: Keyword arguments for our clients; may hold SASL passwords, so kept out of repr().
    consumer_config: dict[str, object] = field(default_factory=dict, repr=False)


def _subscription(opts: Mapping[str, str]) -> Subscription:
    given = [k for k in ("subscribe", "subscribepattern", "assign") if k in opts]
    if len(given) != 1:
        raise ConfigError(
            "exactly one of the options 'subscribe', 'subscribePattern' and 'assign' must be set"
            + (f" (got {len(given)})" if given else "")
        )
    key = given[0]
    raw = opts[key].strip()
    if key == "subscribe":
        topics = tuple(t.strip() for t in raw.split(",") if t.strip())
        if not topics:
            raise ConfigError("option 'subscribe' names no topic")
        return Subscription(topics=topics)
    if key == "subscribepattern":
        if not raw:
            raise ConfigError("option 'subscribePattern' is empty")
        try:
            re.compile(raw)
        except re.error as exc:
            raise ConfigError(f"option 'subscribePattern' is not a valid regex: {exc}") from None
        return Subscription(pattern=raw)
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"option 'assign' must be JSON like {{\"t\":[0,1]}}: {exc}") from None
    if not isinstance(doc, dict) or not doc:
        raise ConfigError("option 'assign' must be JSON like {\"t\":[0,1]}")
    tps: list[TopicPartition] = []
    for topic, parts in doc.items():
        if not isinstance(parts, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in parts
        ):
            raise ConfigError(f"option 'assign': {topic!r} must map to a list of partitions")
        tps.extend(TopicPartition(topic, p) for p in parts)
    if not tps:
        raise ConfigError("option 'assign' names no partition")
    return Subscription(assign=tuple(sorted(set(tps))))


def parse_source_options(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    """Check and parse source options; ``streaming`` selects the stricter batch rules off."""
    opts = _lower(options)
    subscription = _subscription(opts)
    if streaming:
        for batch_only in ("endingoffsets", "endingtimestamp", "endingoffsetsbytimestamp"):
            if batch_only in opts:
                raise ConfigError(f"option {batch_only!r} is for batch queries only")
        starting = _offset_spec(
            opts, "startingOffsets", "latest", allow_earliest=True, allow_latest=True
        )
        ending: OffsetSpec = "latest"
    else:
        starting = _offset_spec(
            opts, "startingOffsets", "earliest", allow_earliest=True, allow_latest=False
        )
        ending = _offset_spec(
            opts, "endingOffsets", "latest", allow_earliest=False, allow_latest=True
        )
    strategy = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strategy not in ("error", "latest"):
        raise ConfigError(
            f"option 'startingOffsetsByTimestampStrategy' must be error or latest, got {strategy!r}"
        )
    return SourceOptions(
        subscription=subscription,
        starting=starting,
        ending=ending,
        starting_timestamp=_timestamp(opts, "startingTimestamp"),
        starting_by_timestamp=_timestamps_json(opts, "startingOffsetsByTimestamp"),
        ending_timestamp=None if streaming else _timestamp(opts, "endingTimestamp"),
        ending_by_timestamp=None
        if streaming
        else _timestamps_json(opts, "endingOffsetsByTimestamp"),
        timestamp_strategy="latest" if strategy == "latest" else "error",
        max_offsets_per_trigger=_positive_int(opts, "maxOffsetsPerTrigger") if streaming else None,
        min_partitions=_positive_int(opts, "minPartitions"),
        max_records_per_partition=_positive_int(opts, "maxRecordsPerPartition"),
        fail_on_data_loss=_bool(opts, "failOnDataLoss", True),
        include_headers=_bool(opts, "includeHeaders", False),
        poll_timeout_ms=_positive_int(opts, "kafkaConsumer.pollTimeoutMs")
        or _DEFAULT_POLL_TIMEOUT_MS,
        use_consumer_cache=_bool(opts, "kafkaConsumer.useConsumerCache", True),
        consumer_cache_capacity=_positive_int(opts, "kafkaConsumer.cache.capacity")
        or _DEFAULT_CACHE_CAPACITY,
        consumer_cache_timeout_ms=_duration_ms(opts, "kafkaConsumer.cache.timeout")
        or _DEFAULT_CACHE_TIMEOUT_MS,
        consumer_config=client_config(opts, "consumer"),
    )


#: Sink options besides ``kafka.*`` (lower-cased, as Spark hands them over). Options under
#: :data:`SINK_PASSTHROUGH_PREFIX` are ignored, for tools that add options of their own.
SINK_OPTIONS = (
    "topic",
    "kafkaProducer.flushTimeoutMs",
    "exactlyOnce",
    "transactionalIdPrefix",
    "exactlyOnce.stateTopic",
    "checkpointLocation",
    "path",
)
SINK_PASSTHROUGH_PREFIX = "passthrough."
#: The source's options: a job may hand one option map to both; the sink ignores these.
_SOURCE_OPTIONS = (
    "subscribe",
    "subscribePattern",
    "assign",
    "startingOffsets",
    "endingOffsets",
    "startingTimestamp",
    "startingOffsetsByTimestamp",
    "endingTimestamp",
    "endingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy",
    "maxOffsetsPerTrigger",
    "minPartitions",
    "maxRecordsPerPartition",
    "failOnDataLoss",
    "includeHeaders",
    "kafkaConsumer.pollTimeoutMs",
    "kafkaConsumer.useConsumerCache",
    "kafkaConsumer.cache.capacity",
    "kafkaConsumer.cache.timeout",
)
#: The compacted topic where exactly-once sinks record the batches they commit.
DEFAULT_STATE_TOPIC = "kafka_async_spark_sink_state"
#: Transaction timeout of exactly-once write tasks: the broker's default cap
#: (``transaction.max.timeout.ms``, 15 min), the longest a driver may take to commit.
DEFAULT_EOS_TRANSACTION_TIMEOUT_MS = 900_000
_TXN_ID_PREFIX_RE = re.compile(r"[A-Za-z0-9._-]{1,200}")


@dataclass(frozen=True)
class SinkOptions:
    """Options of the sink: the default topic and the producer's configuration."""

    topic: str | None
    #: Keyword arguments for the producer; may hold SASL passwords, so kept out of repr().
    producer_config: dict[str, object] = field(repr=False)
    #: Upper bound for flushing the producer at the end of a task.
    flush_timeout_ms: int = 120_000
    #: Transactions per task ended by the driver (``exactly_once``); False: at-least-once.
    exactly_once: bool = False
    #: Transactional ids are ``<prefix>-<sink partition>``; None until the writer picks one
    #: (from ``transactionalIdPrefix``, the checkpoint location, or at random for a batch).
    transactional_id_prefix: str | None = None
    #: The compacted topic holding the driver's record of intent (``exactlyOnce.stateTopic``).
    state_topic: str = DEFAULT_STATE_TOPIC
    #: The streaming query's ``checkpointLocation`` when Spark passed it to the sink.
    checkpoint_location: str | None = None

    @property
    def transaction_timeout_ms(self) -> int:
        """How long the broker keeps a write task's transaction open."""
        value = self.producer_config.get("transaction_timeout_ms")
        return int(value) if isinstance(value, int) else DEFAULT_EOS_TRANSACTION_TIMEOUT_MS


def _check_sink_names(opts: Mapping[str, str]) -> None:
    known = {name.lower() for name in SINK_OPTIONS + _SOURCE_OPTIONS}
    for key in opts:
        if key.startswith(("kafka.", SINK_PASSTHROUGH_PREFIX)) or key in known:
            continue
        raise ConfigError(
            f"unknown sink option {key!r}; the sink knows {', '.join(SINK_OPTIONS)} and the "
            "producer's kafka.* options, and ignores the source's options and those under "
            f"{SINK_PASSTHROUGH_PREFIX!r}"
        )


def parse_sink_options(options: Mapping[str, str]) -> SinkOptions:
    """Check and parse sink options; an unknown option is refused, naming the known ones.

    Refusing matters here: a misspelt ``exactlyOnce`` would otherwise write at-least-once
    without a word.
    """
    opts = _lower(options)
    _check_sink_names(opts)
    topic = opts.get("topic")
    if topic is not None and not topic.strip():
        raise ConfigError("option 'topic' is empty")
    exactly_once = _bool(opts, "exactlyOnce", False)
    if "kafka.transactional.id" in opts:
        raise ConfigError(
            "option 'kafka.transactional.id' is not supported: with exactlyOnce=true the sink "
            "derives one id per write task from transactionalIdPrefix"
        )
    producer = client_config(opts, "producer")
    # Spark's sink is at-least-once; our idempotent producer at least removes retry duplicates.
    producer.setdefault("enable_idempotence", True)
    prefix = opts.get("transactionalidprefix")
    if prefix is not None:
        prefix = prefix.strip()
        if not _TXN_ID_PREFIX_RE.fullmatch(prefix):
            raise ConfigError(
                "option 'transactionalIdPrefix' must be 1-200 letters, digits, '.', '_' or "
                f"'-', got {prefix!r}"
            )
    state_topic = (opts.get("exactlyonce.statetopic") or DEFAULT_STATE_TOPIC).strip()
    if exactly_once:
        if producer.get("enable_idempotence") is not True:
            raise ConfigError("exactlyOnce=true needs kafka.enable.idempotence=true")
        if producer.get("acks", "all") != "all":
            raise ConfigError("exactlyOnce=true needs kafka.acks=all (transactions require it)")
        producer.setdefault("transaction_timeout_ms", DEFAULT_EOS_TRANSACTION_TIMEOUT_MS)
    elif prefix is not None or "exactlyonce.statetopic" in opts:
        raise ConfigError(
            "options 'transactionalIdPrefix' and 'exactlyOnce.stateTopic' need exactlyOnce=true"
        )
    checkpoint = opts.get("checkpointlocation")
    return SinkOptions(
        topic=topic.strip() if topic else None,
        producer_config=producer,
        flush_timeout_ms=_positive_int(opts, "kafkaProducer.flushTimeoutMs") or 120_000,
        exactly_once=exactly_once,
        transactional_id_prefix=prefix,
        state_topic=state_topic,
        checkpoint_location=checkpoint.strip() if checkpoint else None,
    )
