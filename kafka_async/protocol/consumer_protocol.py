"""The consumer protocol's member metadata carried inside JoinGroup and SyncGroup.

A classic consumer group is a generic "protocol_type=consumer" group: the broker treats the
bytes each member sends as opaque. What is inside them is fixed by the Java client, and every
other client (librdkafka, aiokafka, ...) follows it, which is what lets members of different
clients share one group:

* ``Subscription`` (JoinGroup ``protocols[].metadata``): an int16 version, then topics,
  user data, and from v1 the partitions the member owns, v2 its generation, v3 its rack.
* ``Assignment`` (SyncGroup ``assignments[].assignment`` / response ``assignment``): an int16
  version, then the assigned partitions per topic and user data.

Decoding is forward compatible in the way the Java client is: a newer version than we know
is read with the fields we know, and trailing bytes are ignored. An empty assignment (a
member that got nothing) may arrive as zero bytes.

The sticky assignors also put their own payload in ``user_data``; those encodings are here
too (``StickyUserData``, ``CooperativeStickyUserData``) so a group can mix our members with
Java's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import ProtocolDecodeError
from ..structs import TopicPartition
from . import codec
from .codec import Reader
from .schema import BYTES, INT32, STRING, StructDef, array, f, struct

#: Highest versions we write. Readers accept any version >= 0.
SUBSCRIPTION_VERSION = 3
ASSIGNMENT_VERSION = 3

_TOPIC_PARTITIONS = struct(
    "ConsumerProtocolTopicPartition",
    [f("topic", STRING), f("partitions", array(INT32))],
)

_SUBSCRIPTION = struct(
    "ConsumerProtocolSubscription",
    [
        f("topics", array(STRING)),
        f("user_data", BYTES, nullable="0+", default=None),
        f("owned_partitions", array(_TOPIC_PARTITIONS), "1+", ignorable=True),
        f("generation_id", INT32, "2+", default=-1, ignorable=True),
        f("rack_id", STRING, "3+", nullable="3+", default=None, ignorable=True),
    ],
)

_ASSIGNMENT = struct(
    "ConsumerProtocolAssignment",
    [
        f("assigned_partitions", array(_TOPIC_PARTITIONS)),
        f("user_data", BYTES, nullable="0+", default=None),
    ],
)

# Sticky assignor user data (no version prefix; v1 adds the generation after the previous
# assignment, and readers try v1 first, then v0).
_STICKY_V0 = struct(
    "StickyAssignorUserDataV0", [f("previous_assignment", array(_TOPIC_PARTITIONS))]
)
_STICKY_V1 = struct(
    "StickyAssignorUserDataV1",
    [f("previous_assignment", array(_TOPIC_PARTITIONS)), f("generation", INT32)],
)
_COOPERATIVE_STICKY = struct("CooperativeStickyAssignorUserData", [f("generation", INT32)])


def _group(partitions: Iterable[TopicPartition]) -> list[dict[str, object]]:
    """Topic-partitions grouped per topic, topics and partitions sorted (stable bytes)."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return [{"topic": t, "partitions": sorted(ps)} for t, ps in sorted(by_topic.items())]


def _ungroup(groups: Iterable[object]) -> list[TopicPartition]:
    return [
        TopicPartition(g.topic, p)  # type: ignore[attr-defined]
        for g in groups
        for p in g.partitions  # type: ignore[attr-defined]
    ]


def _decode(
    schema: StructDef, data: bytes | bytearray | memoryview, max_version: int
) -> tuple[int, Any]:
    r = Reader(data)
    version = r.int16()
    if version < 0:
        raise ProtocolDecodeError(f"{schema.name}: negative version {version}")
    # A newer member may send a higher version: its known prefix reads like our newest.
    return version, schema.decoder_for(min(version, max_version), False)(r)


@dataclass(frozen=True)
class Subscription:
    """What a member asks for when it joins: topics, owned partitions, and more."""

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = -1
    rack_id: str | None = None
    #: The version this was decoded from (for encoding it is a parameter of ``encode``).
    version: int = SUBSCRIPTION_VERSION

    def encode(self, version: int = SUBSCRIPTION_VERSION) -> bytes:
        """Bytes for JoinGroup's protocol metadata, at ``version`` (0-3)."""
        if not 0 <= version <= SUBSCRIPTION_VERSION:
            raise ValueError(f"subscription version {version} is not in 0-{SUBSCRIPTION_VERSION}")
        out = bytearray()
        codec.write_int16(out, version)
        body = {
            "topics": list(self.topics),
            "user_data": self.user_data,
            # Fields a lower version cannot carry are dropped (they are "ignorable").
            "owned_partitions": _group(self.owned_partitions) if version >= 1 else [],
            "generation_id": self.generation_id if version >= 2 else -1,
            "rack_id": self.rack_id if version >= 3 else None,
        }
        _SUBSCRIPTION.encoder_for(version, False)(out, body)
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> Subscription:
        """Parse a member's subscription metadata (any version)."""
        version, msg = _decode(_SUBSCRIPTION, data, SUBSCRIPTION_VERSION)
        return cls(
            topics=tuple(msg.topics or ()),
            user_data=msg.user_data,
            owned_partitions=tuple(_ungroup(msg.owned_partitions or ())),
            generation_id=msg.generation_id,
            rack_id=msg.rack_id,
            version=version,
        )


@dataclass(frozen=True)
class Assignment:
    """What the leader gives one member: its partitions, plus assignor user data."""

    partitions: tuple[TopicPartition, ...] = ()
    user_data: bytes | None = None
    version: int = ASSIGNMENT_VERSION

    def encode(self, version: int = ASSIGNMENT_VERSION) -> bytes:
        """Bytes for SyncGroup's assignment, at ``version`` (0-3)."""
        if not 0 <= version <= ASSIGNMENT_VERSION:
            raise ValueError(f"assignment version {version} is not in 0-{ASSIGNMENT_VERSION}")
        out = bytearray()
        codec.write_int16(out, version)
        _ASSIGNMENT.encoder_for(version, False)(
            out, {"assigned_partitions": _group(self.partitions), "user_data": self.user_data}
        )
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> Assignment:
        """Parse an assignment; zero bytes mean an empty assignment."""
        if len(data) == 0:
            return cls()
        version, msg = _decode(_ASSIGNMENT, data, ASSIGNMENT_VERSION)
        return cls(
            partitions=tuple(_ungroup(msg.assigned_partitions or ())),
            user_data=msg.user_data,
            version=version,
        )


@dataclass(frozen=True)
class StickyUserData:
    """The "sticky" assignor's user data: the member's previous assignment and generation."""

    previous_assignment: tuple[TopicPartition, ...] = ()
    generation: int | None = None

    def encode(self) -> bytes:
        out = bytearray()
        groups = _group(self.previous_assignment)
        if self.generation is None:
            _STICKY_V0.encoder_for(0, False)(out, {"previous_assignment": groups})
        else:
            _STICKY_V1.encoder_for(0, False)(
                out, {"previous_assignment": groups, "generation": self.generation}
            )
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> StickyUserData:
        r = Reader(data)
        msg = _STICKY_V0.decoder_for(0, False)(r)
        generation = r.int32() if r.remaining >= 4 else None
        return cls(tuple(_ungroup(msg.previous_assignment or ())), generation)


@dataclass(frozen=True)
class CooperativeStickyUserData:
    """The "cooperative-sticky" assignor's user data: just the member's generation."""

    generation: int = -1

    def encode(self) -> bytes:
        out = bytearray()
        _COOPERATIVE_STICKY.encoder_for(0, False)(out, {"generation": self.generation})
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> CooperativeStickyUserData:
        return cls(_COOPERATIVE_STICKY.decoder_for(0, False)(Reader(data)).generation)


@dataclass
class MemberSubscription:
    """One member's subscription as the group leader sees it in the JoinGroup response."""

    member_id: str
    subscription: Subscription
    group_instance_id: str | None = None


__all__ = [
    "ASSIGNMENT_VERSION",
    "SUBSCRIPTION_VERSION",
    "Assignment",
    "CooperativeStickyUserData",
    "MemberSubscription",
    "StickyUserData",
    "Subscription",
]
