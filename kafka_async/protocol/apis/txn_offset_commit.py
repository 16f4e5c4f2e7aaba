# Generated from kafka_async/protocol/definitions/txn_offset_commit.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""TxnOffsetCommit: commit consumer offsets within a transaction.

Versions 0-5, flexible 3+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, INT64, MISSING, STRING, Api, Field, Message, StructDef, array


class TxnOffsetCommitRequest(Message):
    """The TxnOffsetCommit request (key 28)."""

    __slots__ = (
        "transactional_id",
        "group_id",
        "producer_id",
        "producer_epoch",
        "generation_id",
        "member_id",
        "group_instance_id",
        "topics",
    )

    transactional_id: str
    """The transactional id of the producer."""
    group_id: str
    """Consumer group id."""
    producer_id: int
    """Producer id from InitProducerId."""
    producer_epoch: int
    """Epoch of the producer id."""
    generation_id: int
    """Group generation of the consumer, or -1 (KIP-447)."""
    member_id: str
    """Member id of the consumer, or empty (KIP-447)."""
    group_instance_id: str | None
    """Static membership id (KIP-345), or null for a dynamic member."""
    topics: list[TxnOffsetCommitRequestTopic]
    """The offsets, grouped by topic."""

    def __init__(
        self,
        *,
        transactional_id: str = "",
        group_id: str = "",
        producer_id: int = 0,
        producer_epoch: int = 0,
        generation_id: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
        topics: list[TxnOffsetCommitRequestTopic] = MISSING,
    ) -> None:
        self.transactional_id = transactional_id
        self.group_id = group_id
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.generation_id = generation_id
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.topics = [] if topics is MISSING else topics


class TxnOffsetCommitRequestTopic(Message):
    """The offsets, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[TxnOffsetCommitRequestPartition]
    """The partitions of this topic."""

    def __init__(
        self, *, name: str = "", partitions: list[TxnOffsetCommitRequestPartition] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class TxnOffsetCommitRequestPartition(Message):
    """The partitions of this topic."""

    __slots__ = (
        "partition_index",
        "committed_offset",
        "committed_leader_epoch",
        "committed_metadata",
    )

    partition_index: int
    """Partition index."""
    committed_offset: int
    """Offset committed for this partition."""
    committed_leader_epoch: int
    """Leader epoch of the last consumed record, or -1."""
    committed_metadata: str | None
    """Free-form metadata stored with the offset."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        committed_offset: int = 0,
        committed_leader_epoch: int = -1,
        committed_metadata: str | None = "",
    ) -> None:
        self.partition_index = partition_index
        self.committed_offset = committed_offset
        self.committed_leader_epoch = committed_leader_epoch
        self.committed_metadata = committed_metadata


class TxnOffsetCommitResponse(Message):
    """The TxnOffsetCommit response (key 28)."""

    __slots__ = ("throttle_time_ms", "topics")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    topics: list[TxnOffsetCommitResponseTopic]
    """The results, grouped by topic."""

    def __init__(
        self, *, throttle_time_ms: int = 0, topics: list[TxnOffsetCommitResponseTopic] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.topics = [] if topics is MISSING else topics


class TxnOffsetCommitResponseTopic(Message):
    """The results, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[TxnOffsetCommitResponsePartition]
    """One result per partition."""

    def __init__(
        self, *, name: str = "", partitions: list[TxnOffsetCommitResponsePartition] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class TxnOffsetCommitResponsePartition(Message):
    """One result per partition."""

    __slots__ = ("partition_index", "error_code")

    partition_index: int
    """Partition index."""
    error_code: int
    """0, or the error (errors.py) for this entry."""

    def __init__(self, *, partition_index: int = 0, error_code: int = 0) -> None:
        self.partition_index = partition_index
        self.error_code = error_code


# The schema the codecs are compiled from (nested structs first).
_TXN_OFFSET_COMMIT_REQUEST_PARTITION = StructDef(
    "TxnOffsetCommitRequestPartition",
    [
        Field("partition_index", INT32),
        Field("committed_offset", INT64),
        Field("committed_leader_epoch", INT32, "2+", default=-1, ignorable=True),
        Field("committed_metadata", STRING, nullable="0+"),
    ],
    TxnOffsetCommitRequestPartition,
)
_TXN_OFFSET_COMMIT_REQUEST_TOPIC = StructDef(
    "TxnOffsetCommitRequestTopic",
    [Field("name", STRING), Field("partitions", array(_TXN_OFFSET_COMMIT_REQUEST_PARTITION))],
    TxnOffsetCommitRequestTopic,
)
_TXN_OFFSET_COMMIT_REQUEST = StructDef(
    "TxnOffsetCommitRequest",
    [
        Field("transactional_id", STRING),
        Field("group_id", STRING),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("generation_id", INT32, "3+", default=-1),
        Field("member_id", STRING, "3+"),
        Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
        Field("topics", array(_TXN_OFFSET_COMMIT_REQUEST_TOPIC)),
    ],
    TxnOffsetCommitRequest,
)
_TXN_OFFSET_COMMIT_RESPONSE_PARTITION = StructDef(
    "TxnOffsetCommitResponsePartition",
    [Field("partition_index", INT32), Field("error_code", INT16)],
    TxnOffsetCommitResponsePartition,
)
_TXN_OFFSET_COMMIT_RESPONSE_TOPIC = StructDef(
    "TxnOffsetCommitResponseTopic",
    [Field("name", STRING), Field("partitions", array(_TXN_OFFSET_COMMIT_RESPONSE_PARTITION))],
    TxnOffsetCommitResponseTopic,
)
_TXN_OFFSET_COMMIT_RESPONSE = StructDef(
    "TxnOffsetCommitResponse",
    [Field("throttle_time_ms", INT32), Field("topics", array(_TXN_OFFSET_COMMIT_RESPONSE_TOPIC))],
    TxnOffsetCommitResponse,
)

TXN_OFFSET_COMMIT: Api[TxnOffsetCommitRequest, TxnOffsetCommitResponse] = Api(
    28,
    "TxnOffsetCommit",
    "0-5",
    "3+",
    _TXN_OFFSET_COMMIT_REQUEST,
    _TXN_OFFSET_COMMIT_RESPONSE,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
"""TxnOffsetCommit (key 28), versions 0-5."""
