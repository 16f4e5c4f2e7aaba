"""The fuzz helpers: mutations replay from a seed, edit what they say, and honour the
example-count override."""

from __future__ import annotations

import random

import pytest

from tests.harness.mutations import EDGE_VALUES, FUZZ_EXAMPLES_ENV, fuzz_examples, mutate


def test_same_seed_same_mutation() -> None:
    data = bytes(range(64))
    first = [mutate(data, random.Random(7)) for _ in range(3)]
    again = [mutate(data, random.Random(7)) for _ in range(3)]
    assert first == again


def test_mutations_change_the_bytes_and_cover_every_edit() -> None:
    data = bytes(range(256)) * 4
    rng = random.Random(1)
    outs = [mutate(data, rng, edits=1) for _ in range(2000)]
    assert sum(out != data for out in outs) > 1900  # an edit can rarely be a no-op
    assert any(len(out) < len(data) for out in outs)  # deletions
    assert any(len(out) > len(data) for out in outs)  # insertions and repeated slices
    assert any(any(edge in out for edge in EDGE_VALUES[-2:]) for out in outs)
    assert mutate(data, rng, edits=0) == data
    # Empty input only grows (nothing to flip or delete), and never raises.
    assert any(mutate(b"", rng, edits=2) for _ in range(100))


def test_fuzz_examples_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FUZZ_EXAMPLES_ENV, raising=False)
    assert fuzz_examples(300) == 300
    monkeypatch.setenv(FUZZ_EXAMPLES_ENV, "12")
    assert fuzz_examples(300) == 12
