"""Partitioners: Java-compatible murmur2, uniform sticky, round robin, user callables."""

from __future__ import annotations

import os
import random
import warnings
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_async.errors import ConfigError
from kafka_async.producer.partitioner import (
    DefaultPartitioner,
    RoundRobinPartitioner,
    UniformStickyPartitioner,
    UserPartitioner,
    make_partitioner,
    murmur2,
    murmur2_partition,
)

with warnings.catch_warnings():
    # kafka-python (the reference implementation) warns about importlib.resources on import.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.partitioner.default import murmur2 as reference_murmur2


def _signed(x: int) -> int:
    return x - (1 << 32) if x >= 1 << 31 else x


# Vectors from the Java client's own unit test of Utils.murmur2 (signed Java ints).
JAVA_VECTORS = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
]


@pytest.mark.parametrize(("key", "expected"), JAVA_VECTORS)
def test_murmur2_matches_java_vectors(key: bytes, expected: int) -> None:
    assert _signed(murmur2(key)) == expected


@given(st.binary(max_size=600))
def test_murmur2_matches_kafka_python_reference(data: bytes) -> None:
    assert murmur2(data) == reference_murmur2(bytearray(data)) & 0xFFFFFFFF
    # Any bytes-like input hashes the same.
    assert murmur2(bytearray(data)) == murmur2(memoryview(data)) == murmur2(data)


def test_murmur2_long_keys_take_the_slow_word_path() -> None:
    for n in (256, 257, 1000, 4099):
        data = os.urandom(n)
        assert murmur2(data) == reference_murmur2(bytearray(data)) & 0xFFFFFFFF


def test_murmur2_partition_is_positive_modulo() -> None:
    for key, signed in JAVA_VECTORS:
        assert murmur2_partition(key, 7) == (signed & 0x7FFFFFFF) % 7


def test_default_partitioner_keyed_uses_all_partitions() -> None:
    p = DefaultPartitioner(100)
    all_parts = [0, 1, 2, 3, 4, 5]
    for i in range(200):
        key = f"key-{i}".encode()
        # Keyed choice ignores availability, like the Java client.
        assert p.partition("t", key, all_parts, [0]) == murmur2_partition(key, 6)


def test_sticky_sticks_until_batch_size_then_switches() -> None:
    p = DefaultPartitioner(1000, rng=random.Random(1))
    parts = [0, 1, 2, 3]
    first = p.partition("t", None, parts, parts)
    for _ in range(9):
        assert p.partition("t", None, parts, parts) == first
        p.on_append("t", first, 100)
    p.on_append("t", first, 100)  # 1000 bytes reached
    second = p.partition("t", None, parts, parts)
    assert second != first
    # Bytes appended to another partition do not count against the sticky one.
    p.on_append("t", first, 5000)
    assert p.partition("t", None, parts, parts) == second


def test_sticky_prefers_available_partitions_and_spreads_evenly() -> None:
    p = UniformStickyPartitioner(10, rng=random.Random(7))
    all_parts = list(range(5))
    available = [1, 3]
    seen: Counter[int] = Counter()
    for _ in range(2000):
        part = p.partition("t", b"ignored-key", all_parts, available)
        seen[part] += 1
        p.on_append("t", part, 10)
    assert set(seen) == {1, 3}
    assert abs(seen[1] - seen[3]) <= 2  # strict alternation: never the same twice


def test_sticky_falls_back_to_all_partitions_when_none_available() -> None:
    p = UniformStickyPartitioner(10, rng=random.Random(3))
    assert p.partition("t", None, [4], []) == 4
    p.forget("t")
    with pytest.raises(ValueError, match="no partitions"):
        p.partition("empty", None, [], [])


def test_sticky_is_per_topic() -> None:
    p = UniformStickyPartitioner(10**9, rng=random.Random(5))
    a = p.partition("a", None, list(range(50)), list(range(50)))
    b_choices = {p.partition(f"b{i}", None, list(range(50)), list(range(50))) for i in range(20)}
    assert p.partition("a", None, list(range(50)), list(range(50))) == a
    assert len(b_choices) > 1


def test_round_robin_cycles_available_partitions() -> None:
    p = RoundRobinPartitioner()
    got = [p.partition("t", b"k", [0, 1, 2, 3], [0, 2, 3]) for _ in range(6)]
    assert got == [0, 2, 3, 0, 2, 3]
    assert [p.partition("u", None, [5, 6], []) for _ in range(3)] == [5, 6, 5]


def test_user_callable_gets_aiokafka_signature() -> None:
    calls: list[tuple[bytes | None, list[int], list[int]]] = []

    def choose(key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
        calls.append((key, all_partitions, available))
        return all_partitions[-1]

    p = make_partitioner(choose, 16384)
    assert isinstance(p, UserPartitioner)
    assert p.partition("t", b"k", (0, 1, 2), (1,)) == 2
    assert calls == [(b"k", [0, 1, 2], [1])]


def test_make_partitioner_names_and_errors() -> None:
    assert type(make_partitioner(None, 10)) is DefaultPartitioner
    assert type(make_partitioner("default", 10)) is DefaultPartitioner
    assert type(make_partitioner("murmur2_random", 10)) is DefaultPartitioner
    assert type(make_partitioner("uniform_sticky", 10)) is UniformStickyPartitioner
    assert type(make_partitioner("round_robin", 10)) is RoundRobinPartitioner
    rr = RoundRobinPartitioner()
    assert make_partitioner(rr, 10) is rr
    with pytest.raises(ConfigError, match="partitioner='crc32' is not known"):
        make_partitioner("crc32", 10)
    with pytest.raises(ConfigError, match="name or a callable"):
        make_partitioner(42, 10)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="sticky_bytes"):
        UniformStickyPartitioner(0)


@pytest.mark.integration
@pytest.mark.interop
def test_murmur2_matches_librdkafka_murmur2_random(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """confluent-kafka's murmur2_random picks the same partition as our murmur2 for keys."""
    confluent_kafka = pytest.importorskip("confluent_kafka")
    partitions = 7
    topic = new_topic(partitions)
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": kafka_broker, "partitioner": "murmur2_random", "linger.ms": 5}
    )
    delivered: dict[bytes, int] = {}

    def on_delivery(err, msg) -> None:  # type: ignore[no-untyped-def]
        assert err is None, err
        delivered[msg.key()] = msg.partition()

    keys = [f"user-{i}".encode() for i in range(150)] + [os.urandom(n) for n in range(1, 40)]
    for key in keys:
        producer.produce(topic, key=key, value=b"v", on_delivery=on_delivery)
    assert producer.flush(30) == 0
    assert len(delivered) == len(set(keys))
    for key, partition in delivered.items():
        assert murmur2_partition(key, partitions) == partition, key
