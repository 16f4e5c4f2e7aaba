"""Choosing a partition for a record.

* Keyed records: Java-compatible murmur2 of the key bytes, ``(hash & 0x7fffffff) % n`` over
  *all* partitions of the topic (not only the available ones), so a key lands on the same
  partition as with the Java client and librdkafka's ``murmur2_random``.
* Records without a key: uniform sticky (KIP-794). A topic sticks to one partition until
  about ``max_batch_size`` bytes went to it, then picks another one at random, preferring
  partitions whose leader is known. This fills batches instead of spraying one record per
  partition, which is what makes keyless produce cheap.
* ``"round_robin"``: every record goes to the next available partition.
* Any callable ``(key_bytes, all_partitions, available_partitions) -> int`` (aiokafka's
  partitioner signature).

Everything here is pure and synchronous; the producer feeds it partition lists taken from
the current metadata snapshot.
"""

from __future__ import annotations

import random
import struct
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Protocol

from ..errors import ConfigError

try:
    from ._fastpath import murmur2 as _c_murmur2
except ImportError:  # the optional C fast path was not built (see fastpath.py)
    _c_murmur2 = None  # type: ignore[assignment]

__all__ = [
    "DefaultPartitioner",
    "Partitioner",
    "PartitionerCallable",
    "RoundRobinPartitioner",
    "UniformStickyPartitioner",
    "UserPartitioner",
    "make_partitioner",
    "murmur2",
    "murmur2_partition",
    "murmur2_py",
]

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF
_SEED = 0x9747B28C

# struct formats for the 4-byte little-endian words of keys up to 256 bytes, built once so the
# hot path does not format strings.
_WORDS = [struct.Struct(f"<{n}I") for n in range(65)]


def murmur2_py(data: bytes | bytearray | memoryview) -> int:
    """The Java client's ``Utils.murmur2`` of ``data``, as an unsigned 32-bit int.

    Kafka's variant reads the key as little-endian 32-bit words with seed ``0x9747b28c``. The
    Java function returns a signed int; callers take ``& 0x7fffffff`` (``toPositive``), which
    gives the same value from the unsigned form used here. The pure-Python twin of the C
    fast path's ``murmur2`` (used as :func:`murmur2` when that is not built).
    """
    length = len(data)
    h = _SEED ^ length
    nwords = length >> 2
    if nwords:
        if nwords < 65:
            words: Sequence[int] = _WORDS[nwords].unpack_from(data)
        else:
            words = struct.unpack_from(f"<{nwords}I", data)
        m = _M
        mask = _MASK
        for k in words:
            k = (k * m) & mask
            k ^= k >> 24
            # h*m need not be masked before the xor: k < 2**32, so masking once after is equal.
            h = ((h * m) ^ ((k * m) & mask)) & mask
    tail = length & 3
    if tail:
        base = length & ~3
        if tail == 3:
            h ^= data[base + 2] << 16
        if tail >= 2:
            h ^= data[base + 1] << 8
        h ^= data[base]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h


#: ``murmur2(data) -> int``: the C fast path's when built (several times faster per key),
#: else :func:`murmur2_py`; the tests check both agree.
murmur2: Callable[[bytes | bytearray | memoryview], int] = (
    _c_murmur2 if _c_murmur2 is not None else murmur2_py
)


def murmur2_partition(key: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """The partition the Java client (and librdkafka ``murmur2_random``) picks for ``key``."""
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions


class PartitionerCallable(Protocol):
    """A user partitioner: aiokafka's signature."""

    def __call__(
        self,
        key_bytes: bytes | bytearray | memoryview | None,
        all_partitions: list[int],
        available_partitions: list[int],
    ) -> int: ...


class Partitioner(ABC):
    """Base of the built-in partitioners.

    ``partition`` gets the topic, the serialized key and the topic's partitions (all of them,
    and those whose leader is currently known). ``on_append`` is told how many bytes went to a
    partition, which the sticky logic uses to decide when to move on.
    """

    #: False when ``on_append`` does nothing, so the producer can skip calling it.
    wants_append_feedback = False

    @abstractmethod
    def partition(
        self,
        topic: str,
        key: bytes | bytearray | memoryview | None,
        all_partitions: Sequence[int],
        available_partitions: Sequence[int],
    ) -> int:
        """The partition for one record of ``topic``."""

    def on_append(self, topic: str, partition: int, nbytes: int) -> None:  # noqa: B027
        """``nbytes`` were appended to ``partition`` of ``topic`` (a no-op by default)."""

    def choose(
        self,
        topic: str,
        key: bytes | bytearray | memoryview | None,
        all_partitions: Sequence[int],
        available_partitions: Sequence[int],
        nbytes: int,
    ) -> int:
        """``partition`` and ``on_append`` in one call (the producer's per-record path)."""
        partition = self.partition(topic, key, all_partitions, available_partitions)
        self.on_append(topic, partition, nbytes)
        return partition


class UniformStickyPartitioner(Partitioner):
    """KIP-794 uniform sticky choice for records without a key (keys are ignored).

    The current partition of a topic changes once ``sticky_bytes`` (the producer's
    ``max_batch_size``) went to it; the next one is random among available partitions other
    than the current one, so load evens out over time without one-record batches.
    """

    wants_append_feedback = True

    def __init__(self, sticky_bytes: int = 16384, rng: random.Random | None = None) -> None:
        if sticky_bytes <= 0:
            raise ConfigError(f"sticky_bytes must be positive, got {sticky_bytes!r}")
        self._sticky_bytes = sticky_bytes
        self._rng = rng or random.Random()
        # topic -> [partition, bytes appended since it was chosen]
        self._current: dict[str, list[int]] = {}

    @property
    def sticky_bytes(self) -> int:
        """Bytes that go to a topic's sticky partition before another one is chosen."""
        return self._sticky_bytes

    def sticky_state(self) -> dict[str, list[int]]:
        """The live per-topic ``[partition, bytes since it was chosen]`` (the same dict for
        the partitioner's life). The producer's per-record path does :meth:`choose`'s
        common case on it: when the topic has an entry with fewer than ``sticky_bytes``,
        add the record's bytes and take the partition."""
        return self._current

    def partition(
        self,
        topic: str,
        key: bytes | bytearray | memoryview | None,
        all_partitions: Sequence[int],
        available_partitions: Sequence[int],
    ) -> int:
        cur = self._current.get(topic)
        if cur is not None and cur[1] < self._sticky_bytes:
            return cur[0]
        return self._switch(topic, cur, all_partitions, available_partitions)

    def _switch(
        self,
        topic: str,
        cur: list[int] | None,
        all_partitions: Sequence[int],
        available_partitions: Sequence[int],
    ) -> int:
        candidates = available_partitions or all_partitions
        if not candidates:
            raise ValueError(f"topic {topic!r} has no partitions")
        if cur is not None and len(candidates) > 1:
            # Never pick the same partition twice in a row when there is a choice.
            choice = cur[0]
            while choice == cur[0]:
                choice = candidates[self._rng.randrange(len(candidates))]
        else:
            choice = candidates[self._rng.randrange(len(candidates))]
        self._current[topic] = [choice, 0]
        return choice

    def on_append(self, topic: str, partition: int, nbytes: int) -> None:
        cur = self._current.get(topic)
        if cur is not None and cur[0] == partition:
            cur[1] += nbytes

    def choose(
        self,
        topic: str,
        key: bytes | bytearray | memoryview | None,
        all_partitions: Sequence[int],
        available_partitions: Sequence[int],
        nbytes: int,
    ) -> int:
        cur = self._current.get(topic)
        if cur is None or cur[1] >= self._sticky_bytes:
            self._switch(topic, cur, all_partitions, available_partitions)
            cur = self._current[topic]
        cur[1] += nbytes
        return cur[0]

    def forget(self, topic: str) -> None:
        """Drop the sticky choice of ``topic`` (its partitions changed)."""
        self._current.pop(topic, None)


class DefaultPartitioner(UniformStickyPartitioner):
    """murmur2 for keyed records, uniform sticky for records without a key."""

    def partition(
        self,
        topic: str,
        key: bytes | bytearray | memoryview | None,
        all_partitions: Sequence[int],
        available_partitions: Sequence[int],
    ) -> int:
        if key is not None:
            return all_partitions[(murmur2(key) & 0x7FFFFFFF) % len(all_partitions)]
        cur = self._current.get(topic)
        if cur is not None and cur[1] < self._sticky_bytes:
            return cur[0]
        return self._switch(topic, cur, all_partitions, available_partitions)

    def choose(
        self,
        topic: str,
        key: bytes | bytearray | memoryview | None,
        all_partitions: Sequence[int],
        available_partitions: Sequence[int],
        nbytes: int,
    ) -> int:
        if key is not None:
            # Keyed records do not move the sticky partition (KIP-794).
            return all_partitions[(murmur2(key) & 0x7FFFFFFF) % len(all_partitions)]
        cur = self._current.get(topic)
        if cur is None or cur[1] >= self._sticky_bytes:
            self._switch(topic, cur, all_partitions, available_partitions)
            cur = self._current[topic]
        cur[1] += nbytes
        return cur[0]


class RoundRobinPartitioner(Partitioner):
    """Each record goes to the next available partition of its topic, keys ignored."""

    def __init__(self) -> None:
        self._counters: dict[str, int] = {}

    def partition(
        self,
        topic: str,
        key: bytes | bytearray | memoryview | None,
        all_partitions: Sequence[int],
        available_partitions: Sequence[int],
    ) -> int:
        candidates = available_partitions or all_partitions
        n = self._counters.get(topic, 0)
        self._counters[topic] = n + 1
        return candidates[n % len(candidates)]


class UserPartitioner(Partitioner):
    """Adapts a user callable ``(key_bytes, all_partitions, available_partitions) -> int``."""

    def __init__(self, func: PartitionerCallable | Callable[..., int]) -> None:
        self._func = func

    def partition(
        self,
        topic: str,
        key: bytes | bytearray | memoryview | None,
        all_partitions: Sequence[int],
        available_partitions: Sequence[int],
    ) -> int:
        return int(self._func(key, list(all_partitions), list(available_partitions)))


def make_partitioner(
    spec: str | Partitioner | Callable[..., int] | None, max_batch_size: int
) -> Partitioner:
    """Build the partitioner named by the ``partitioner`` config value.

    ``None``/``"default"``/``"murmur2_random"``: murmur2 + uniform sticky;
    ``"uniform_sticky"``: sticky for every record, keys ignored; ``"round_robin"``;
    a :class:`Partitioner` instance; or a callable with aiokafka's signature.
    """
    if spec is None or spec in ("default", "murmur2_random", "murmur2"):
        return DefaultPartitioner(max_batch_size)
    if spec == "uniform_sticky":
        return UniformStickyPartitioner(max_batch_size)
    if spec == "round_robin":
        return RoundRobinPartitioner()
    if isinstance(spec, Partitioner):
        return spec
    if isinstance(spec, str):
        raise ConfigError(
            f"partitioner={spec!r} is not known; use 'default', 'murmur2_random', "
            "'uniform_sticky', 'round_robin' or a callable "
            "(key_bytes, all_partitions, available_partitions) -> int"
        )
    if callable(spec):
        return UserPartitioner(spec)
    raise ConfigError(f"partitioner must be a name or a callable, got {type(spec).__name__}")
