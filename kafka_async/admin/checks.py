"""Argument checks every admin call shares (pure): names, ids and partitions are validated
and de-duplicated here, before anything is sent, and a mistake raises ConfigError."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from ..errors import ConfigError
from ..structs import TopicPartition
from .types import validate_topic_name

K = TypeVar("K")

__all__ = ["group_id", "group_ids", "topic_names", "topic_partition", "unique"]


def unique(items: Iterable[K], what: str) -> list[K]:
    """``items`` as a list; ConfigError naming ``what`` on a duplicate."""
    out: list[K] = []
    seen: set[K] = set()
    for item in items:
        if item in seen:
            raise ConfigError(f"duplicate {what} {item!r}")
        seen.add(item)
        out.append(item)
    return out


def topic_names(topics: Iterable[str] | str, what: str = "topic") -> list[str]:
    """Valid, distinct topic names (a bare string is refused: it would iterate per
    character, almost always a mistake)."""
    if isinstance(topics, str):
        raise ConfigError(f"expected a list of {what} names, got the string {topics!r}")
    return unique((validate_topic_name(t) for t in topics), what)


def group_ids(groups: Iterable[str] | str) -> list[str]:
    """Distinct, non-empty group ids (a bare string is refused)."""
    if isinstance(groups, str):
        raise ConfigError(f"expected a list of group ids, got the string {groups!r}")
    out = unique(groups, "group id")
    for g in out:
        if not isinstance(g, str) or not g:
            raise ConfigError(f"group ids must be non-empty strings, got {g!r}")
    return out


def group_id(value: str) -> str:
    """One non-empty group id."""
    if not isinstance(value, str) or not value:
        raise ConfigError(f"group id must be a non-empty string, got {value!r}")
    return value


def topic_partition(value: object) -> TopicPartition:
    """A TopicPartition, or a ``(topic, partition)`` tuple made one."""
    if isinstance(value, TopicPartition):
        return value
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], int)
    ):
        return TopicPartition(value[0], value[1])
    raise ConfigError(f"expected a TopicPartition, got {value!r}")
