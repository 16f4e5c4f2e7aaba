"""Test tools: real brokers, a fault-injecting proxy, topic helpers, pytest fixtures.

``ApacheKafka`` runs real Apache Kafka 4.x (one node or a replicated cluster) from its Maven
artifacts; ``EmbeddedBroker`` runs a real Tansu broker in a child process; ``create_topic`` /
``acreate_topic`` create topics with raw requests; ``FaultProxy`` sits between clients and
a broker and injects network and protocol faults (``broker_behind_proxy`` /
``start_proxied_broker`` wire one to an ``EmbeddedBroker``). The pytest plugin
(``kafka_async.testing.plugin``; opt-in, a test suite loads it with
``-p kafka_async.testing.plugin``) provides the ``kafka_broker``, ``embedded_broker``,
``durable_broker``, ``proxied_broker`` and ``new_topic`` fixtures.

This project's own test harness (ledger, Java peers, the scripted broker, soak, ...) is not
part of the package: it lives in the repository's ``tests/harness``.

Names are imported lazily, so loading the pytest plugin costs nothing for test suites that
do not use it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .apache import ApacheKafka as ApacheKafka
    from .apache import KafkaPrerequisiteError as KafkaPrerequisiteError
    from .broker import TANSU_BENDS as TANSU_BENDS
    from .broker import BrokerPrerequisiteError as BrokerPrerequisiteError
    from .broker import BrokerStartError as BrokerStartError
    from .broker import EmbeddedBroker as EmbeddedBroker
    from .broker import LocalS3 as LocalS3
    from .broker import resolve_tansu_binary as resolve_tansu_binary
    from .broker import tansu_version as tansu_version
    from .proxy import FaultProxy as FaultProxy
    from .proxy import ProxiedBroker as ProxiedBroker
    from .proxy import broker_behind_proxy as broker_behind_proxy
    from .proxy import start_proxied_broker as start_proxied_broker
    from .topics import acreate_topic as acreate_topic
    from .topics import create_topic as create_topic
    from .topics import topic_partitions as topic_partitions

_EXPORTS = {
    "ApacheKafka": ".apache",
    "KafkaPrerequisiteError": ".apache",
    "BrokerPrerequisiteError": ".broker",
    "BrokerStartError": ".broker",
    "TANSU_BENDS": ".broker",
    "tansu_version": ".broker",
    "EmbeddedBroker": ".broker",
    "LocalS3": ".broker",
    "resolve_tansu_binary": ".broker",
    "FaultProxy": ".proxy",
    "ProxiedBroker": ".proxy",
    "broker_behind_proxy": ".proxy",
    "start_proxied_broker": ".proxy",
    "acreate_topic": ".topics",
    "create_topic": ".topics",
    "topic_partitions": ".topics",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
