"""Random edits of wire bytes, for fuzzing a client with responses no broker sends.

``mutate`` applies a few edits that hit what a decoder trusts: bit flips, random bytes, edge
values overwritten or inserted (nulls, -1 lengths, the largest int32, a varint that does not
end), deleted runs and repeated slices (an array element twice, a field shifted). Seeded by
the caller's ``random.Random``, so a failing example replays exactly.

``fuzz_examples(default)`` is how many examples a fuzz test runs: ``KAFKA_ASYNC_FUZZ_EXAMPLES``
when set (one knob for every fuzz test), else ``default``.
"""

from __future__ import annotations

import os
import random

#: Values that break decoders: zero, all ones, varint continuation bits, -1 as int16/int32,
#: the largest and smallest int32, a uvarint of 2^32-1, a varint that never ends.
EDGE_VALUES: tuple[bytes, ...] = (
    b"\x00",
    b"\xff",
    b"\x80",
    b"\x7f",
    b"\x01",
    b"\xff\xff",
    b"\x00\x00\x00\x00",
    b"\xff\xff\xff\xff",
    b"\x7f\xff\xff\xff",
    b"\x80\x00\x00\x00",
    b"\xff\xff\xff\xff\x0f",
    b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80",
)

#: The environment variable that overrides every fuzz test's example count.
FUZZ_EXAMPLES_ENV = "KAFKA_ASYNC_FUZZ_EXAMPLES"


def mutate(data: bytes, rng: random.Random, edits: int | None = None) -> bytes:
    """``data`` after ``edits`` random edits (default: 1 to 4, chosen by ``rng``)."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4) if edits is None else edits):
        op = rng.randrange(6)
        at = rng.randrange(len(out) + 1)
        if op == 0 and out:
            out[min(at, len(out) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1 and out:
            out[min(at, len(out) - 1)] = rng.randrange(256)
        elif op == 2:
            edge = rng.choice(EDGE_VALUES)
            out[at : at + len(edge)] = edge
        elif op == 3:
            out[at:at] = rng.choice(EDGE_VALUES)
        elif op == 4 and out:
            del out[at : at + rng.randint(1, 8)]
        else:
            lo = rng.randrange(len(out) + 1)
            out[at:at] = out[lo : lo + rng.randint(1, 16)]
    return bytes(out)


def fuzz_examples(default: int) -> int:
    """How many examples to run: ``$KAFKA_ASYNC_FUZZ_EXAMPLES`` if set, else ``default``."""
    env = os.environ.get(FUZZ_EXAMPLES_ENV)
    return int(env) if env else default


__all__ = ["EDGE_VALUES", "FUZZ_EXAMPLES_ENV", "fuzz_examples", "mutate"]
