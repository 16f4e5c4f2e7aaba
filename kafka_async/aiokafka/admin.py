"""aiokafka's admin client (``aiokafka.admin``) on :class:`kafka_async.AdminClient`.

Covered: ``start``/``close``, ``create_topics``, ``delete_topics``, ``list_topics``,
``describe_topics``, ``describe_cluster``, ``create_partitions``. aiokafka returns its raw
protocol responses; here the answers are small objects whose ``to_object()`` gives the keys
aiokafka's give for what callers read: ``topic_errors`` (``topic``, ``error_code``,
``error_message``) for ``create_topics``, ``topic_error_codes`` (``topic``, ``error_code``)
for ``delete_topics``. The rest of aiokafka's admin surface (configs, groups, records
deletion) is not here yet: use :class:`kafka_async.AdminClient`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kafka_async.admin import AdminClient
from kafka_async.admin import NewTopic as _OurNewTopic
from kafka_async.admin.types import NewPartitions as _OurNewPartitions
from kafka_async.errors import BrokerResponseError, KafkaError

from .errors import IllegalArgumentError
from .producer import _client_settings

__all__ = ["AIOKafkaAdminClient", "NewPartitions", "NewTopic"]


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

    def _ours(self) -> _OurNewTopic:
        return _OurNewTopic(
            self.name,
            self.num_partitions,
            self.replication_factor,
            replica_assignment=self.replica_assignments or None,
            config=self.topic_configs,
        )


class NewPartitions:
    """A topic's new partition count (and optionally where the new ones go)."""

    def __init__(self, total_count: int, new_assignments: list[list[int]] | None = None) -> None:
        self.total_count = total_count
        self.new_assignments = new_assignments


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

    def __repr__(self) -> str:
        return f"<AdminResponse {self._obj!r}>"


class AIOKafkaAdminClient:
    """aiokafka's admin client arguments (``loop``, ``api_version``, Kerberos names accepted
    with no effect); ``admin`` is the :class:`kafka_async.AdminClient` underneath."""

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
        del sasl_kerberos_service_name, sasl_kerberos_domain_name
        self._request_timeout_ms = request_timeout_ms
        settings = _client_settings(
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
            [t._ours() for t in new_topics],
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
