"""Topic creation for tests, with raw CreateTopics and Metadata requests.

Tansu auto-creates a topic, with 4 partitions, whenever a Metadata request allows it (as
librdkafka's producer does on first produce), and never when the request says
``allow_auto_topic_creation=false``. Tests that care about partitions, and any real Kafka with
``auto.create.topics.enable=false`` (docker-compose.yml), need an explicit CreateTopics.

These helpers avoid the library's higher layers on purpose, so a bug there cannot break the
fixtures that test it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import anyio

from .. import errors as E
from ..errors import BrokerResponseError, raise_for_code
from ..protocol.apis import CREATE_TOPICS, METADATA
from ..protocol.apis.create_topics import (
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from ..protocol.apis.metadata import MetadataRequest, MetadataRequestTopic, MetadataResponse
from . import _wire

__all__ = ["acreate_topic", "create_topic", "topic_partitions"]

#: Default deadline for creating a topic and seeing its leaders, seconds.
CREATE_TIMEOUT = 20.0
_TOPIC_ALREADY_EXISTS = E.TopicAlreadyExistsError.code
#: Metadata error codes that mean "not there yet" while a new topic propagates.
_NOT_READY = {
    E.UnknownTopicOrPartitionError.code,
    E.LeaderNotAvailableError.code,
    E.NotLeaderOrFollowerError.code,
}


def _create_body(
    name: str, partitions: int, replication_factor: int, configs: Mapping[str, str] | None
) -> CreateTopicsRequest:
    if partitions < 1:
        raise ValueError(f"partitions must be >= 1, got {partitions}")
    return CreateTopicsRequest(
        topics=[
            CreatableTopic(
                name=name,
                num_partitions=partitions,
                replication_factor=replication_factor,
                configs=[CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()],
            )
        ],
        timeout_ms=15000,
    )


def _check_created(resp: CreateTopicsResponse, name: str, exist_ok: bool) -> None:
    for topic in resp.topics:
        if topic.name != name:
            continue
        if topic.error_code == _TOPIC_ALREADY_EXISTS and exist_ok:
            return
        raise_for_code(topic.error_code, topic.error_message)
        return
    raise BrokerResponseError(f"CreateTopics response does not mention {name!r}")


def _controller_of(resp: MetadataResponse, fallback: str) -> str:
    """The address of the node Metadata names as controller (``fallback`` when none is
    named). A ZooKeeper-mode broker that is not the controller answers CreateTopics with
    NOT_CONTROLLER; KRaft brokers forward it, and name any broker here."""
    for broker in resp.brokers:
        if broker.node_id == resp.controller_id:
            return f"{broker.host}:{broker.port}"
    return fallback


#: Metadata for no topic: the brokers and the controller only.
_NO_TOPICS = MetadataRequest(topics=[], allow_auto_topic_creation=False)
#: How long to wait before asking again for the controller, seconds.
_CONTROLLER_BACKOFF = 0.1


def _metadata_body(name: str) -> MetadataRequest:
    return MetadataRequest(
        topics=[MetadataRequestTopic(name=name)], allow_auto_topic_creation=False
    )


def _ready_partitions(resp: MetadataResponse, name: str, want: int) -> int | None:
    """The partition count once every partition has a leader; None while not ready."""
    for topic in resp.topics:
        if topic.name != name:
            continue
        if topic.error_code in _NOT_READY:
            return None
        raise_for_code(topic.error_code)
        parts = topic.partitions
        if len(parts) < want or any(p.error_code != 0 or p.leader_id < 0 for p in parts):
            return None
        return len(parts)
    return None


def topic_partitions(bootstrap_servers: str, name: str, *, timeout: float = 10.0) -> int | None:
    """Number of partitions of ``name`` (raw Metadata request); None if it does not exist."""
    resp = _wire.request(bootstrap_servers, METADATA, _metadata_body(name), timeout=timeout)
    return _ready_partitions(resp, name, 1)


def create_topic(
    bootstrap_servers: str,
    name: str,
    partitions: int = 1,
    *,
    replication_factor: int = 1,
    configs: Mapping[str, str] | None = None,
    exist_ok: bool = False,
    timeout: float = CREATE_TIMEOUT,
) -> None:
    """Create ``name`` with ``partitions`` partitions and wait until all have a leader.

    Raises the typed broker error (e.g. ``TopicAlreadyExistsError`` unless ``exist_ok``).
    """
    deadline = time.monotonic() + timeout
    body = _create_body(name, partitions, replication_factor, configs)
    # The bootstrap address first (behind a proxy it is the only one that works); a
    # ZooKeeper-mode broker that is not the controller refuses, and the controller gets it.
    target = bootstrap_servers
    while True:
        left = max(deadline - time.monotonic(), 0.1)
        resp = _wire.request(target, CREATE_TOPICS, body, timeout=left)
        try:
            _check_created(resp, name, exist_ok)
            break
        except E.NotControllerError:
            if time.monotonic() > deadline:
                raise
            meta = _wire.request(bootstrap_servers, METADATA, _NO_TOPICS, timeout=left)
            target = _controller_of(meta, bootstrap_servers)
            time.sleep(_CONTROLLER_BACKOFF)
    while True:
        left = deadline - time.monotonic()
        meta = _wire.request(
            bootstrap_servers, METADATA, _metadata_body(name), timeout=max(left, 0.1)
        )
        if _ready_partitions(meta, name, partitions if not exist_ok else 1) is not None:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"topic {name!r} has no leaders after {timeout} s")
        time.sleep(0.05)


async def acreate_topic(
    bootstrap_servers: str,
    name: str,
    partitions: int = 1,
    *,
    replication_factor: int = 1,
    configs: Mapping[str, str] | None = None,
    exist_ok: bool = False,
) -> None:
    """Async :func:`create_topic`; gives up after :data:`CREATE_TIMEOUT` seconds.

    Wrap it in ``anyio.fail_after`` for a shorter deadline.
    """
    body = _create_body(name, partitions, replication_factor, configs)
    with anyio.fail_after(CREATE_TIMEOUT):
        target = bootstrap_servers  # as in create_topic: the bootstrap, then the controller
        while True:
            resp = await _wire.arequest(target, CREATE_TOPICS, body)
            try:
                _check_created(resp, name, exist_ok)
                break
            except E.NotControllerError:
                meta = await _wire.arequest(bootstrap_servers, METADATA, _NO_TOPICS)
                target = _controller_of(meta, bootstrap_servers)
                await anyio.sleep(_CONTROLLER_BACKOFF)
        while True:
            meta = await _wire.arequest(bootstrap_servers, METADATA, _metadata_body(name))
            if _ready_partitions(meta, name, partitions if not exist_ok else 1) is not None:
                return
            await anyio.sleep(0.05)
