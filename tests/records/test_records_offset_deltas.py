"""Record offset deltas must increase within a batch, in both decoders.

Compaction removes records and leaves gaps in the deltas; nothing writes them out of order.
A batch with a repeated or decreasing delta (garbage with a valid CRC) must be a
CorruptRecordError, not records handed out behind the consumer's position.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kafka_async.errors import CorruptRecordError
from kafka_async.records import _pure
from kafka_async.records.batch import HEADER_SIZE, Record, build_batch
from kafka_async.testing.plugin import skip_or_fail

try:
    from kafka_async.records import _speedups
except ImportError:  # the optional C accelerator was not built
    _speedups = None  # type: ignore[assignment]

DECODERS = [
    pytest.param(_pure.decode_records, id="pure"),
    pytest.param(getattr(_speedups, "decode_records", None), id="C"),
]

# Three records with a null key and a 2-byte value; each is 8 bytes long after its length
# byte: attributes, timestampDelta, offsetDelta, key length, value length, value, headers.
_RECORD = 9
_DELTA_AT = 3  # the offset delta's byte within a record


def _batch(deltas: list[int]) -> bytes:
    data = bytearray(build_batch([(1000 + i, None, b"v%d" % i, None) for i in range(3)]))
    for i, delta in enumerate(deltas):
        data[HEADER_SIZE + i * _RECORD + _DELTA_AT] = ((delta << 1) ^ (delta >> 63)) & 0xFF
    return bytes(data)


def _decode(fn: Callable[..., Any] | None, data: bytes) -> list[Any]:
    if fn is None:
        skip_or_fail("the C accelerator is not built (needs a C compiler at install)")
    return list(fn(data, HEADER_SIZE, len(data), 3, 100, 1000, None, Record))


@pytest.mark.parametrize("decode", DECODERS)
def test_increasing_deltas_with_gaps_decode(decode: Callable[..., Any]) -> None:
    assert [r.offset for r in _decode(decode, _batch([0, 1, 2]))] == [100, 101, 102]
    assert [r.offset for r in _decode(decode, _batch([1, 5, 9]))] == [101, 105, 109]


@pytest.mark.parametrize("decode", DECODERS)
@pytest.mark.parametrize("deltas", [[0, 0, 1], [0, 2, 1], [0, -1, 2], [-1, 0, 1]])
def test_repeated_or_decreasing_deltas_are_corrupt(
    decode: Callable[..., Any], deltas: list[int]
) -> None:
    with pytest.raises(CorruptRecordError, match="offset deltas do not increase"):
        _decode(decode, _batch(deltas))
