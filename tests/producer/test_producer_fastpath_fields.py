"""The names the producer's C fast path reads by string (``fastpath.C_FIELDS``) exist on the
real objects, and ``_fastpath.c`` reads no name missing from that list.

The C code finds its fields by name at run time (attribute lookups, and slot offsets looked up
once per class), so a rename on the Python side would only show as the fast path giving up or
failing; these tests make it show at once.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_async import Producer
from kafka_async.producer import fastpath
from kafka_async.producer.accumulator import Delivery, PartitionState, ProducerBatch
from kafka_async.records import _pure

C_SOURCE = Path(fastpath.__file__).with_name("_fastpath.c")
FIELDS = dict(fastpath.C_FIELDS)

#: Identifier-like strings of _fastpath.c that are not fields it reads: the names it defines
#: (its module's functions and types), its own keyword arguments (Enqueuer(...): the producer
#: passes them, so a mismatch fails every producer at construction), the modes, and words
#: of its messages and formats.
C_OWN_WORDS = {
    # what the module defines
    "Enqueuer",
    "Sending",
    "append_record",
    "delivery_metadata",
    "murmur2",
    # Enqueuer's keyword arguments and modes
    "producer",
    "acc",
    "topics",
    "sticky",
    "sticky_bytes",
    "max_record_size",
    "key_serializer",
    "value_serializer",
    "choose",
    "delivery_cls",
    "slow",
    "after_wakeup",
    "mode",
    "future_cls",
    "metadata_cls",
    "slow_wait",
    "enqueue",
    "send",
    "produce",
    # the slot layouts' names in error messages; a PyObject_CallMethod format
    "delivery",
    "OOOO",
}
#: The keyword names of Producer.enqueue, which the C Enqueuer accepts too (checked below).
ENQUEUE_ARGS = {"topic", "value", "key", "partition", "timestamp_ms", "headers"}


def _c_identifier_strings() -> set[str]:
    """Every string literal of _fastpath.c (outside comments) that looks like a name."""
    text = re.sub(r"/\*.*?\*/", "", C_SOURCE.read_text(), flags=re.S)
    literals = re.findall(r'"((?:[^"\\\n]|\\.)*)"', text)
    return {s for s in literals if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s)}


def _listed() -> set[str]:
    return {name for _, names in fastpath.C_FIELDS for name in names}


def test_the_c_code_reads_only_listed_names() -> None:
    """A new name in _fastpath.c must be added to C_FIELDS (or be one of its own words)."""
    unlisted = _c_identifier_strings() - _listed() - C_OWN_WORDS - ENQUEUE_ARGS
    assert not unlisted, f"_fastpath.c reads {sorted(unlisted)}, not in fastpath.C_FIELDS"


def test_every_listed_name_is_read_by_the_c_code() -> None:
    """No stale entry: each listed name is a string of _fastpath.c."""
    stale = _listed() - _c_identifier_strings()
    assert not stale, f"fastpath.C_FIELDS lists {sorted(stale)}, which _fastpath.c never reads"


def test_enqueue_keywords_match_the_method() -> None:
    assert set(inspect.signature(Producer.enqueue).parameters) - {"self"} == ENQUEUE_ARGS
    assert _c_identifier_strings() >= ENQUEUE_ARGS


@pytest.mark.parametrize(
    ("owner", "cls"),
    [("ProducerBatch", ProducerBatch), ("Delivery", Delivery), ("PartitionState", PartitionState)],
)
def test_slot_fields_are_object_slots(owner: str, cls: type) -> None:
    """The classes whose slots the C code fills by offset: each field is a slot (a member
    descriptor); ``Delivery.result`` is the one method it calls."""
    for name in FIELDS[owner]:
        attr = inspect.getattr_static(cls, name)
        if owner == "Delivery" and name == "result":
            assert callable(attr)
        else:
            assert isinstance(attr, types.MemberDescriptorType), f"{owner}.{name} is no slot"
    assert cls.__dictoffset__ == 0  # no __dict__: all slots


def test_protocol_fields_exist() -> None:
    """The fields it reads of the objects it is given: a writer's ``append`` (the pure
    writer), an asyncio future's blocking flag, a coroutine's ``throw`` and ``close``."""
    from kafka_async.records.batch import BatchBuilder

    for writer in (_pure.RecordWriter, BatchBuilder(None).writer):
        assert all(hasattr(writer, n) for n in FIELDS["RecordWriter"])
    assert all(hasattr(asyncio.Future, n) for n in FIELDS["asyncio.Future"])

    async def coro() -> None:
        pass

    c = coro()
    try:
        assert all(hasattr(c, n) for n in FIELDS["Coroutine"])
    finally:
        c.close()


def test_producer_fields_exist_without_io() -> None:
    """A producer that was never started has the fields (the C path is installed at
    construction: it must not find a missing one later)."""
    producer = Producer("127.0.0.1:1")
    for name in FIELDS["Producer"]:
        assert hasattr(producer, name), f"Producer has no {name}"


@pytest.mark.integration
@pytest.mark.anyio
async def test_fields_exist_on_a_running_producer(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """On a producer running against a real broker: the producer's, its sender's, its
    cluster client's and its accumulator's fields the C code reads are all there, and the
    record it queued went through the C path (a Delivery from the Enqueuer)."""
    topic = new_topic(1)
    async with Producer(bootstrap_servers=kafka_broker, linger_ms=0) as producer:
        await producer.send(topic, b"first")  # the topic's partitions are cached now
        delivery = await producer.enqueue(topic, b"second")
        await delivery
        owners: dict[str, object] = {
            "Producer": producer,
            "Sender": vars(producer)["_sender"],
            "ClusterClient": vars(producer)["_client"],
            "RecordAccumulator": vars(producer)["_acc"],
        }
        assert type(owners["Sender"]).__name__ == "Sender"
        assert type(owners["ClusterClient"]).__name__ == "ClusterClient"
        assert type(owners["RecordAccumulator"]).__name__ == "RecordAccumulator"
        for owner, obj in owners.items():
            for name in FIELDS[owner]:
                assert hasattr(obj, name), f"{owner} has no {name}"
        if fastpath.FASTPATH:
            assert type(producer.enqueue).__name__ == "Enqueuer"
            assert type(delivery) is Delivery
