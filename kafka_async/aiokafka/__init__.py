"""aiokafka's API on kafka_async: change ``aiokafka`` to ``kafka_async.aiokafka`` in the
imports, or call :func:`install` and change nothing.

::

    from kafka_async.aiokafka import AIOKafkaProducer, AIOKafkaConsumer, TopicPartition
    from kafka_async.aiokafka.errors import KafkaError, CommitFailedError

``AIOKafkaProducer``, ``AIOKafkaConsumer`` and ``AIOKafkaAdminClient`` take aiokafka 0.14's
arguments and behave as aiokafka's do (futures from ``send``, ``start()`` returning once the
group assigned the partitions, rebalance listeners called as aiokafka calls them, aiokafka's
exception names); underneath are kafka_async's clients (``.producer``, ``.consumer``,
``.admin``). aiokafka itself is never imported.

:func:`install` registers this package under the name ``aiokafka`` in ``sys.modules``, with
the submodule paths frameworks import (FastStream 0.7.8 was tried):

* ``aiokafka``, ``aiokafka.errors`` (``for_code``, every error name), ``aiokafka.structs``,
  ``aiokafka.abc``, ``aiokafka.helpers``, ``aiokafka.partitioner`` (``DefaultPartitioner``);
* ``aiokafka.producer`` and ``aiokafka.producer.producer`` (``AIOKafkaProducer``,
  ``_missing``);
* ``aiokafka.consumer`` and ``aiokafka.consumer.consumer`` (``AIOKafkaConsumer``);
* ``aiokafka.admin``, ``aiokafka.admin.client``, ``aiokafka.admin.new_topic``,
  ``aiokafka.admin.new_partitions``, ``aiokafka.admin.config_resource``,
  ``aiokafka.admin.records_to_delete`` (``AIOKafkaAdminClient``, ``NewTopic``,
  ``NewPartitions``, ``ConfigResource``, ``ConfigResourceType``, ``RecordsToDelete``);
* ``aiokafka.coordinator.assignors`` and its ``roundrobin``, ``range``, ``abstract``,
  ``sticky.sticky_assignor`` modules (``RoundRobinPartitionAssignor``... bound to
  kafka_async's assignors).

Not provided: ``aiokafka.AIOKafkaClient`` and aiokafka's protocol and record modules
(internals; code reaching into them needs kafka_async's own clients). The module runs on
asyncio only, as aiokafka does.

Call it before the framework (or your code) first imports aiokafka: a module that imported the
real aiokafka already keeps it. :func:`uninstall` puts back what ``sys.modules`` held before.
Frameworks that check aiokafka's installed version (FastStream reads
``importlib.metadata.version("aiokafka")``) still need aiokafka's distribution installed.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from . import abc, admin, assignors, consumer, errors, helpers, partitioner, producer, structs
from .abc import ConsumerRebalanceListener
from .admin import AIOKafkaAdminClient
from .consumer import AIOKafkaConsumer
from .errors import ConsumerStoppedError, IllegalOperation
from .producer import AIOKafkaProducer
from .structs import (
    ConsumerRecord,
    OffsetAndMetadata,
    OffsetAndTimestamp,
    RecordMetadata,
    TopicPartition,
)

__all__ = [
    "AIOKafkaAdminClient",
    "AIOKafkaConsumer",
    "AIOKafkaProducer",
    "ConsumerRebalanceListener",
    "ConsumerRecord",
    "ConsumerStoppedError",
    "IllegalOperation",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "RecordMetadata",
    "TopicPartition",
    "install",
    "uninstall",
]

#: The aiokafka release whose API this module follows.
__version__ = "0.14.0"

#: What ``sys.modules`` held under the names install() took (None: nothing), to put back.
_saved: dict[str, types.ModuleType | None] | None = None


def _module(name: str, source: Any, **children: types.ModuleType) -> types.ModuleType:
    """A module object named ``name`` exposing ``source``'s public names (the same objects)
    and ``children`` as attributes, so ``import name.child`` and ``name.child.X`` work."""
    mod = types.ModuleType(name, getattr(source, "__doc__", None))
    for key, value in vars(source).items():
        if not key.startswith("__"):
            setattr(mod, key, value)
    mod.__all__ = list(getattr(source, "__all__", ()))  # type: ignore[attr-defined]
    for key, child in children.items():
        setattr(mod, key, child)
    return mod


def _modules() -> dict[str, types.ModuleType]:
    me = sys.modules[__name__]
    out: dict[str, types.ModuleType] = {}

    def add(name: str, source: Any, **children: types.ModuleType) -> types.ModuleType:
        mod = _module(name, source, **children)
        out[name] = mod
        return mod

    roundrobin = add("aiokafka.coordinator.assignors.roundrobin", assignors)
    range_ = add("aiokafka.coordinator.assignors.range", assignors)
    sticky_inner = add("aiokafka.coordinator.assignors.sticky.sticky_assignor", assignors)
    sticky = add("aiokafka.coordinator.assignors.sticky", assignors, sticky_assignor=sticky_inner)
    abstract = add("aiokafka.coordinator.assignors.abstract", assignors)
    assignors_mod = add(
        "aiokafka.coordinator.assignors",
        assignors,
        roundrobin=roundrobin,
        range=range_,
        sticky=sticky,
        abstract=abstract,
    )
    coordinator = add("aiokafka.coordinator", types.SimpleNamespace(), assignors=assignors_mod)
    producer_inner = add("aiokafka.producer.producer", producer)
    producer_mod = add("aiokafka.producer", producer, producer=producer_inner)
    consumer_inner = add("aiokafka.consumer.consumer", consumer)
    consumer_mod = add("aiokafka.consumer", consumer, consumer=consumer_inner)
    admin_client = add("aiokafka.admin.client", admin)
    admin_new_topic = add("aiokafka.admin.new_topic", admin)
    admin_new_partitions = add("aiokafka.admin.new_partitions", admin)
    admin_config_resource = add("aiokafka.admin.config_resource", admin)
    admin_records_to_delete = add("aiokafka.admin.records_to_delete", admin)
    admin_mod = add(
        "aiokafka.admin",
        admin,
        client=admin_client,
        new_topic=admin_new_topic,
        new_partitions=admin_new_partitions,
        config_resource=admin_config_resource,
        records_to_delete=admin_records_to_delete,
    )
    leaves = {
        "errors": add("aiokafka.errors", errors),
        "structs": add("aiokafka.structs", structs),
        "abc": add("aiokafka.abc", abc),
        "helpers": add("aiokafka.helpers", helpers),
        "partitioner": add("aiokafka.partitioner", partitioner),
    }
    root = add(
        "aiokafka",
        me,
        coordinator=coordinator,
        producer=producer_mod,
        consumer=consumer_mod,
        admin=admin_mod,
        **leaves,
    )
    root.__version__ = __version__  # type: ignore[attr-defined]
    return out


def install() -> None:
    """Make ``import aiokafka`` (and the submodules listed in this module's docstring) give
    this module, until :func:`uninstall`. Call it before the code or framework that imports
    aiokafka is imported. Calling it again does nothing."""
    global _saved
    if _saved is not None:
        return
    mods = _modules()
    saved: dict[str, types.ModuleType | None] = {}
    # Real aiokafka submodules not replaced here (its protocol, client...) are set aside
    # too, so nothing half-real is found under the name while installed.
    for name in [n for n in sys.modules if n == "aiokafka" or n.startswith("aiokafka.")]:
        saved[name] = sys.modules.pop(name)
    for name, mod in mods.items():
        saved.setdefault(name, None)
        sys.modules[name] = mod
    _saved = saved


def uninstall() -> None:
    """Undo :func:`install`: ``sys.modules`` holds under ``aiokafka...`` what it held before
    (modules that imported aiokafka meanwhile keep what they got)."""
    global _saved
    saved = _saved
    if saved is None:
        return
    for name in [n for n in sys.modules if n == "aiokafka" or n.startswith("aiokafka.")]:
        del sys.modules[name]
    for name, mod in saved.items():
        if mod is not None:
            sys.modules[name] = mod
    _saved = None


def installed() -> bool:
    """True between :func:`install` and :func:`uninstall`."""
    return _saved is not None
