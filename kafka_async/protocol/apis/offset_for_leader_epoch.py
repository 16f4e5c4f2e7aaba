# Generated from kafka_async/protocol/definitions/offset_for_leader_epoch.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""OffsetForLeaderEpoch: the end offset of a leader epoch (truncation detection, KIP-320).

Versions 0-4, flexible 4+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, INT64, MISSING, STRING, Api, Field, Message, StructDef, array


class OffsetForLeaderEpochRequest(Message):
    """The OffsetForLeaderEpoch request (key 23)."""

    __slots__ = ("replica_id", "topics")

    replica_id: int
    """Broker id of the follower; -1 for a client."""
    topics: list[OffsetForLeaderTopic]
    """The partitions to look up, grouped by topic."""

    def __init__(
        self, *, replica_id: int = -2, topics: list[OffsetForLeaderTopic] = MISSING
    ) -> None:
        self.replica_id = replica_id
        self.topics = [] if topics is MISSING else topics


class OffsetForLeaderTopic(Message):
    """The partitions to look up, grouped by topic."""

    __slots__ = ("topic", "partitions")

    topic: str
    """Topic name."""
    partitions: list[OffsetForLeaderPartition]
    """The partitions of this topic."""

    def __init__(
        self, *, topic: str = "", partitions: list[OffsetForLeaderPartition] = MISSING
    ) -> None:
        self.topic = topic
        self.partitions = [] if partitions is MISSING else partitions


class OffsetForLeaderPartition(Message):
    """The partitions of this topic."""

    __slots__ = ("partition", "current_leader_epoch", "leader_epoch")

    partition: int
    """Partition index."""
    current_leader_epoch: int
    """The leader epoch the client knows (fencing); -1 to skip the check."""
    leader_epoch: int
    """The epoch whose end offset is asked for."""

    def __init__(
        self, *, partition: int = 0, current_leader_epoch: int = -1, leader_epoch: int = 0
    ) -> None:
        self.partition = partition
        self.current_leader_epoch = current_leader_epoch
        self.leader_epoch = leader_epoch


class OffsetForLeaderEpochResponse(Message):
    """The OffsetForLeaderEpoch response (key 23)."""

    __slots__ = ("throttle_time_ms", "topics")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    topics: list[OffsetForLeaderTopicResult]
    """The results, grouped by topic."""

    def __init__(
        self, *, throttle_time_ms: int = 0, topics: list[OffsetForLeaderTopicResult] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.topics = [] if topics is MISSING else topics


class OffsetForLeaderTopicResult(Message):
    """The results, grouped by topic."""

    __slots__ = ("topic", "partitions")

    topic: str
    """Topic name."""
    partitions: list[EpochEndOffset]
    """One result per partition."""

    def __init__(self, *, topic: str = "", partitions: list[EpochEndOffset] = MISSING) -> None:
        self.topic = topic
        self.partitions = [] if partitions is MISSING else partitions


class EpochEndOffset(Message):
    """One result per partition."""

    __slots__ = ("error_code", "partition", "leader_epoch", "end_offset")

    error_code: int
    """0, or the error (errors.py) for this entry."""
    partition: int
    """Partition index."""
    leader_epoch: int
    """The largest epoch not above the one asked for, or -1."""
    end_offset: int
    """End offset of that epoch, or -1."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        partition: int = 0,
        leader_epoch: int = -1,
        end_offset: int = -1,
    ) -> None:
        self.error_code = error_code
        self.partition = partition
        self.leader_epoch = leader_epoch
        self.end_offset = end_offset


# The schema the codecs are compiled from (nested structs first).
_OFFSET_FOR_LEADER_PARTITION = StructDef(
    "OffsetForLeaderPartition",
    [
        Field("partition", INT32),
        Field("current_leader_epoch", INT32, "2+", default=-1, ignorable=True),
        Field("leader_epoch", INT32),
    ],
    OffsetForLeaderPartition,
)
_OFFSET_FOR_LEADER_TOPIC = StructDef(
    "OffsetForLeaderTopic",
    [Field("topic", STRING), Field("partitions", array(_OFFSET_FOR_LEADER_PARTITION))],
    OffsetForLeaderTopic,
)
_OFFSET_FOR_LEADER_EPOCH_REQUEST = StructDef(
    "OffsetForLeaderEpochRequest",
    [
        Field("replica_id", INT32, "3+", default=-2, ignorable=True),
        Field("topics", array(_OFFSET_FOR_LEADER_TOPIC)),
    ],
    OffsetForLeaderEpochRequest,
)
_EPOCH_END_OFFSET = StructDef(
    "EpochEndOffset",
    [
        Field("error_code", INT16),
        Field("partition", INT32),
        Field("leader_epoch", INT32, "1+", default=-1, ignorable=True),
        Field("end_offset", INT64, default=-1),
    ],
    EpochEndOffset,
)
_OFFSET_FOR_LEADER_TOPIC_RESULT = StructDef(
    "OffsetForLeaderTopicResult",
    [Field("topic", STRING), Field("partitions", array(_EPOCH_END_OFFSET))],
    OffsetForLeaderTopicResult,
)
_OFFSET_FOR_LEADER_EPOCH_RESPONSE = StructDef(
    "OffsetForLeaderEpochResponse",
    [
        Field("throttle_time_ms", INT32, "2+", ignorable=True),
        Field("topics", array(_OFFSET_FOR_LEADER_TOPIC_RESULT)),
    ],
    OffsetForLeaderEpochResponse,
)

OFFSET_FOR_LEADER_EPOCH: Api[OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse] = Api(
    23,
    "OffsetForLeaderEpoch",
    "0-4",
    "4+",
    _OFFSET_FOR_LEADER_EPOCH_REQUEST,
    _OFFSET_FOR_LEADER_EPOCH_RESPONSE,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
"""OffsetForLeaderEpoch (key 23), versions 0-4."""
