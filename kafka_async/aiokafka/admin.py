"""aiokafka's admin client (``aiokafka.admin``) on :class:`kafka_async.AdminClient`.

Covered: every public method of aiokafka 0.14's client: ``start``/``close``,
``create_topics``, ``delete_topics``, ``list_topics``, ``describe_topics``,
``describe_cluster``, ``create_partitions``, ``describe_configs``, ``alter_configs``,
``describe_consumer_groups``, ``list_consumer_groups``, ``find_coordinator``,
``list_consumer_group_offsets`` and ``delete_records``.

aiokafka returns its raw protocol responses for some of them; here those answers are
:class:`AdminResponse` objects whose ``to_object()`` gives the keys aiokafka's give, and whose
top-level fields read as attributes with the nested entries as tuples in aiokafka's field
order (``resp.resources[0][4]`` is a resource's config entries, as with aiokafka):
``topic_errors`` (``topic``, ``error_code``, ``error_message``) for ``create_topics`` and
``create_partitions``; ``topic_error_codes`` (``topic``, ``error_code``) for
``delete_topics``; ``resources`` (``error_code``, ``error_message``, ``resource_type``,
``resource_name``, ``config_entries`` of ``config_names``, ``config_value``, ``read_only``,
``config_source``, ``is_sensitive``, ``config_synonyms``) for ``describe_configs`` (the shape
of DescribeConfigs v1+, which every broker since Kafka 1.1 answers; aiokafka's v0 form with
``is_default`` is not reproduced), the same without entries for ``alter_configs``, and
``groups`` (``error_code``, ``group``, ``state``, ``protocol_type``, ``protocol``,
``members`` of ``member_id``, ``client_id``, ``client_host``, ``member_metadata``,
``member_assignment``, then ``authorized_operations``) for ``describe_consumer_groups``.
Requests go through :class:`kafka_async.AdminClient` (its routing and retries), so the
answers are regrouped per resource, not per broker: ``describe_configs`` and
``describe_consumer_groups`` return one response holding every resource or group asked for.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any

from kafka_async.admin import AdminClient
from kafka_async.admin import NewTopic as _OurNewTopic
from kafka_async.admin.types import ConfigResource as _OurConfigResource
from kafka_async.admin.types import ConfigResourceType as _OurConfigResourceType
from kafka_async.admin.types import NewPartitions as _OurNewPartitions
from kafka_async.errors import BrokerResponseError, KafkaError
from kafka_async.structs import TopicPartition

from ._settings import client_settings
from .errors import IllegalArgumentError
from .structs import OffsetAndMetadata

__all__ = [
    "AIOKafkaAdminClient",
    "ConfigResource",
    "ConfigResourceType",
    "NewPartitions",
    "NewTopic",
    "RecordsToDelete",
]


class NewTopic:
    """A topic to create: ``num_partitions`` and ``replication_factor``, or (both -1)
    ``replica_assignments`` {partition: [broker ids]}; ``topic_configs`` {name: value}."""

    def __init__(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        replica_assignments: Mapping[int, Sequence[int]] | None = None,
        topic_configs: Mapping[str, str] | None = None,
    ) -> None:
        if not ((num_partitions == -1 or replication_factor == -1) ^ (replica_assignments is None)):
            raise IllegalArgumentError(
                "either num_partitions/replication_factor or replica_assignment must be specified"
            )
        self.name = name
        self.num_partitions = num_partitions
        self.replication_factor = replication_factor
        self.replica_assignments = dict(replica_assignments or {})
        self.topic_configs = dict(topic_configs or {})


def _new_topic_ours(topic: NewTopic) -> _OurNewTopic:
    return _OurNewTopic(
        topic.name,
        topic.num_partitions,
        topic.replication_factor,
        replica_assignment=topic.replica_assignments or None,
        config=topic.topic_configs,
    )


class NewPartitions:
    """A topic's new partition count (and optionally where the new ones go)."""

    def __init__(self, total_count: int, new_assignments: list[list[int]] | None = None) -> None:
        self.total_count = total_count
        self.new_assignments = new_assignments


class ConfigResourceType(enum.IntEnum):
    """The resource kinds aiokafka's config calls take (Kafka's resource type codes)."""

    BROKER = 4
    TOPIC = 2


class ConfigResource:
    """A resource whose configs to describe or alter: ``resource_type`` (a
    :class:`ConfigResourceType` or its name, any case), ``name`` (a topic, or a broker id
    as a string) and ``configs`` (describe: the names to fetch, None for all; alter: the
    values to set)."""

    def __init__(
        self,
        resource_type: ConfigResourceType | str,
        name: str,
        configs: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(resource_type, ConfigResourceType):
            resource_type = ConfigResourceType[str(resource_type).upper()]
        self.resource_type = resource_type
        self.name = name
        self.configs = configs


def _config_resource_ours(resource: ConfigResource) -> _OurConfigResource:
    return _OurConfigResource(
        _OurConfigResourceType(int(resource.resource_type)), str(resource.name)
    )


class RecordsToDelete:
    """``before_offset``: every record of the partition before it is deleted."""

    def __init__(self, before_offset: int) -> None:
        self.before_offset = before_offset


def _code(error: KafkaError | None) -> int:
    if error is None:
        return 0
    if isinstance(error, BrokerResponseError):
        return error.code
    return -1


class AdminResponse:
    """An admin call's answer: ``to_object()`` gives aiokafka's keys."""

    def __init__(self, obj: dict[str, Any]) -> None:
        self._obj = obj

    def to_object(self) -> dict[str, Any]:
        """The answer as a dict (a fresh copy each call)."""
        return {k: list(v) if isinstance(v, list) else v for k, v in self._obj.items()}

    def __getattr__(self, name: str) -> Any:
        # aiokafka's responses are structs: a field reads as an attribute, nested entries as
        # tuples in field order.
        try:
            value = self.__dict__["_obj"][name]
        except KeyError:
            raise AttributeError(name) from None
        return _as_tuples(value)

    def __repr__(self) -> str:
        return f"<AdminResponse {self._obj!r}>"


def _as_tuples(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(_as_tuples(v) for v in value.values())
    if isinstance(value, list):
        return [_as_tuples(v) for v in value]
    return value


def _message(error: KafkaError | None) -> str | None:
    return None if error is None else str(error)


class AIOKafkaAdminClient:
    """aiokafka's admin client arguments (``loop`` and ``api_version`` accepted with no
    effect; GSSAPI with aiokafka's Kerberos names); ``admin`` is the
    :class:`kafka_async.AdminClient` underneath."""

    def __init__(
        self,
        *,
        loop: object = None,
        bootstrap_servers: str | Sequence[str] = "localhost",
        client_id: str = "aiokafka-0.14.0",
        request_timeout_ms: int = 40000,
        connections_max_idle_ms: int = 540000,
        retry_backoff_ms: int = 100,
        metadata_max_age_ms: int = 300000,
        security_protocol: str = "PLAINTEXT",
        ssl_context: Any = None,
        api_version: object = None,
        sasl_mechanism: str = "PLAIN",
        sasl_plain_username: str | None = None,
        sasl_plain_password: str | None = None,
        sasl_kerberos_service_name: str = "kafka",
        sasl_kerberos_domain_name: str | None = None,
        sasl_oauth_token_provider: Any = None,
    ) -> None:
        self._request_timeout_ms = request_timeout_ms
        settings = client_settings(
            bootstrap_servers=bootstrap_servers,
            client_id=client_id,
            metadata_max_age_ms=metadata_max_age_ms,
            request_timeout_ms=request_timeout_ms,
            retry_backoff_ms=retry_backoff_ms,
            security_protocol=security_protocol,
            ssl_context=ssl_context,
            connections_max_idle_ms=connections_max_idle_ms,
            sasl_mechanism=sasl_mechanism,
            sasl_plain_username=sasl_plain_username,
            sasl_plain_password=sasl_plain_password,
            sasl_oauth_token_provider=sasl_oauth_token_provider,
            sasl_kerberos_service_name=sasl_kerberos_service_name,
            sasl_kerberos_domain_name=sasl_kerberos_domain_name,
            api_version=api_version,
            loop=loop,
        )
        self.admin = AdminClient(**settings)
        self._started = False

    async def start(self) -> None:
        """Connect to the cluster."""
        await self.admin.start()
        self._started = True

    async def close(self) -> None:
        """Close the connections."""
        if self._started:
            self._started = False
            await self.admin.close()

    async def create_topics(
        self,
        new_topics: Sequence[NewTopic],
        timeout_ms: int | None = None,
        validate_only: bool = False,
    ) -> AdminResponse:
        """Create topics; ``to_object()["topic_errors"]`` has one entry per topic (error
        code 0 when created, 36 when it existed)."""
        got = await self.admin.create_topics(
            [_new_topic_ours(t) for t in new_topics],
            timeout_ms=timeout_ms or self._request_timeout_ms,
            validate_only=validate_only,
        )
        return AdminResponse(
            {
                "throttle_time_ms": 0,
                "topic_errors": [
                    {
                        "topic": name,
                        "error_code": _code(r.error),
                        "error_message": None if r.error is None else str(r.error),
                    }
                    for name, r in got.items()
                ],
            }
        )

    async def delete_topics(
        self, topics: Sequence[str], timeout_ms: int | None = None
    ) -> AdminResponse:
        """Delete topics; ``to_object()["topic_error_codes"]`` per topic."""
        got = await self.admin.delete_topics(
            list(topics), timeout_ms=timeout_ms or self._request_timeout_ms
        )
        return AdminResponse(
            {
                "throttle_time_ms": 0,
                "topic_error_codes": [
                    {"topic": name, "error_code": _code(r.error)} for name, r in got.items()
                ],
            }
        )

    async def create_partitions(
        self, topic_partitions: Mapping[str, NewPartitions], timeout_ms: int | None = None
    ) -> AdminResponse:
        """Grow topics to ``total_count`` partitions."""
        got = await self.admin.create_partitions(
            {
                name: _OurNewPartitions(np.total_count, np.new_assignments)
                for name, np in topic_partitions.items()
            },
            timeout_ms=timeout_ms or self._request_timeout_ms,
        )
        return AdminResponse(
            {
                "throttle_time_ms": 0,
                "topic_errors": [
                    {
                        "topic": name,
                        "error_code": _code(r.error),
                        "error_message": None if r.error is None else str(r.error),
                    }
                    for name, r in got.items()
                ],
            }
        )

    async def describe_cluster(self) -> dict[str, Any]:
        """aiokafka's cluster dict: ``brokers`` (``node_id``, ``host``, ``port``, ``rack``),
        ``cluster_id``, ``controller_id``."""
        got = await self.admin.describe_cluster()
        return {
            "throttle_time_ms": 0,
            "brokers": [
                {"node_id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack}
                for b in got.brokers
            ],
            "cluster_id": got.cluster_id,
            "controller_id": got.controller_id,
        }

    async def list_topics(self) -> list[str]:
        """Every topic's name (internal ones included, as aiokafka)."""
        return list(await self.admin.list_topics(include_internal=True))

    async def describe_topics(self, topics: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Per topic, aiokafka's metadata dict: ``error_code``, ``topic``, ``is_internal``,
        ``partitions`` (``error_code``, ``partition``, ``leader``, ``leader_epoch``,
        ``replicas``, ``isr``, ``offline_replicas``)."""
        got = await self.admin.describe_topics(None if topics is None else list(topics))
        return [
            {
                "error_code": _code(d.error),
                "topic": name,
                "is_internal": d.is_internal,
                "partitions": [
                    {
                        "error_code": _code(p.error),
                        "partition": p.partition,
                        "leader": p.leader,
                        "leader_epoch": p.leader_epoch,
                        "replicas": list(p.replicas),
                        "isr": list(p.isr),
                        "offline_replicas": list(p.offline_replicas),
                    }
                    for p in d.partitions
                ],
            }
            for name, d in got.items()
        ]

    # -- configs -------------------------------------------------------------------------

    async def describe_configs(
        self, config_resources: Sequence[ConfigResource], include_synonyms: bool = False
    ) -> list[AdminResponse]:
        """Configs of topics and brokers: one response whose ``resources`` hold each
        resource asked for (only the names in its ``configs`` when given)."""
        ours = [_config_resource_ours(r) for r in config_resources]
        got = await self.admin.describe_configs(
            ours,
            include_synonyms=include_synonyms,
            timeout_ms=self._request_timeout_ms,
        )
        resources: list[dict[str, Any]] = []
        for asked, key in zip(config_resources, ours, strict=True):
            d = got[key]
            wanted = None if asked.configs is None else set(asked.configs)
            entries = [
                {
                    "config_names": e.name,
                    "config_value": e.value,
                    "read_only": e.read_only,
                    "config_source": int(e.source),
                    "is_sensitive": e.is_sensitive,
                    "config_synonyms": [
                        {
                            "config_name": s.name,
                            "config_value": s.value,
                            "config_source": int(s.source),
                        }
                        for s in e.synonyms
                    ],
                }
                for e in d.entries.values()
                if wanted is None or e.name in wanted
            ]
            resources.append(
                {
                    "error_code": _code(d.error),
                    "error_message": _message(d.error),
                    "resource_type": int(asked.resource_type),
                    "resource_name": asked.name,
                    "config_entries": entries,
                }
            )
        return [AdminResponse({"throttle_time_ms": 0, "resources": resources})]

    async def alter_configs(
        self, config_resources: Sequence[ConfigResource]
    ) -> list[AdminResponse]:
        """Replace the dynamic configs of each resource with its ``configs`` (Kafka's
        AlterConfigs: entries not given go back to their defaults)."""
        keys = [_config_resource_ours(r) for r in config_resources]
        got = await self.admin.alter_configs(
            {key: dict(r.configs or {}) for key, r in zip(keys, config_resources, strict=True)},
            timeout_ms=self._request_timeout_ms,
        )
        return [
            AdminResponse(
                {
                    "throttle_time_ms": 0,
                    "resources": [
                        {
                            "error_code": _code(got[key].error),
                            "error_message": _message(got[key].error),
                            "resource_type": int(asked.resource_type),
                            "resource_name": asked.name,
                        }
                        for asked, key in zip(config_resources, keys, strict=True)
                    ],
                }
            )
        ]

    # -- groups ----------------------------------------------------------------------------

    async def describe_consumer_groups(
        self,
        group_ids: Sequence[str],
        group_coordinator_id: int | None = None,
        include_authorized_operations: bool = False,
    ) -> list[AdminResponse]:
        """State, protocol and members of each group (``group_coordinator_id`` is accepted
        and not needed: each group's coordinator is looked up)."""
        del group_coordinator_id
        got = await self.admin.describe_groups(
            list(group_ids),
            include_authorized_operations=include_authorized_operations,
            timeout_ms=self._request_timeout_ms,
        )
        groups = []
        for gid in group_ids:
            d = got[gid]
            groups.append(
                {
                    "error_code": _code(d.error),
                    "group": gid,
                    "state": d.state,
                    "protocol_type": d.protocol_type,
                    "protocol": d.protocol,
                    "members": [
                        {
                            "member_id": m.member_id,
                            "client_id": m.client_id,
                            "client_host": m.client_host,
                            "member_metadata": m.metadata,
                            "member_assignment": m.raw_assignment,
                        }
                        for m in d.members
                    ],
                    "authorized_operations": _operations_bits(d.authorized_operations),
                }
            )
        return [AdminResponse({"throttle_time_ms": 0, "groups": groups})]

    async def list_consumer_groups(
        self, broker_ids: Sequence[int] | None = None
    ) -> list[tuple[str, str]]:
        """``(group_id, protocol_type)`` of every group (of the coordinators ``broker_ids``
        when given)."""
        listed = await self.admin.list_groups(timeout_ms=self._request_timeout_ms)
        wanted = None if broker_ids is None else set(broker_ids)
        return [
            (g.group_id, g.protocol_type)
            for g in listed
            if wanted is None or g.coordinator in wanted
        ]

    async def find_coordinator(self, group_id: str, coordinator_type: int = 0) -> int:
        """The node id coordinating group ``group_id`` (``coordinator_type`` 0) or the
        transactional id ``group_id`` (1)."""
        if coordinator_type == 0:
            described = await self.admin.describe_groups(
                [group_id], timeout_ms=self._request_timeout_ms, raise_on_error=True
            )
            return described[group_id].coordinator
        if coordinator_type == 1:
            txns = await self.admin.describe_transactions(
                [group_id], timeout_ms=self._request_timeout_ms
            )
            return txns[group_id].coordinator
        raise IllegalArgumentError(f"coordinator_type must be 0 or 1, got {coordinator_type!r}")

    async def list_consumer_group_offsets(
        self,
        group_id: str,
        group_coordinator_id: int | None = None,
        partitions: Sequence[TopicPartition] | None = None,
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The group's committed offsets; asked-for partitions without one have offset -1
        (partitions not asked for and without an offset are left out)."""
        del group_coordinator_id
        got = await self.admin.list_consumer_group_offsets(
            group_id,
            None if partitions is None else [TopicPartition(*tp) for tp in partitions],
            timeout_ms=self._request_timeout_ms,
            raise_on_error=True,
        )
        return {
            TopicPartition(tp.topic, tp.partition): OffsetAndMetadata(o.offset, o.metadata or "")
            for tp, o in got.items()
        }

    async def delete_records(
        self,
        records_to_delete: Mapping[TopicPartition, RecordsToDelete],
        timeout_ms: int | None = None,
    ) -> dict[TopicPartition, int]:
        """Delete every record before ``before_offset`` of each partition; the answer is
        each partition's new low watermark. A partition's error is raised."""
        got = await self.admin.delete_records(
            {TopicPartition(*tp): r.before_offset for tp, r in records_to_delete.items()},
            timeout_ms=timeout_ms or self._request_timeout_ms,
            raise_on_error=True,
        )
        return {TopicPartition(tp.topic, tp.partition): r.low_watermark for tp, r in got.items()}


def _operations_bits(operations: frozenset[int] | None) -> int:
    # DescribeGroups' authorized_operations: a bit field, -2^31 when not asked for.
    if operations is None:
        return -2147483648
    bits = 0
    for op in operations:
        bits |= 1 << op
    return bits
