# Generated from kafka_async/protocol/definitions/delete_records.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DeleteRecords: move partitions' log start offsets forward.

Versions 0-2, flexible 2+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, INT64, MISSING, STRING, Api, Field, Message, StructDef, array


class DeleteRecordsRequest(Message):
    """The DeleteRecords request (key 21)."""

    __slots__ = ("topics", "timeout_ms")

    topics: list[DeleteRecordsTopic]
    """The partitions to truncate, grouped by topic."""
    timeout_ms: int
    """How long the broker may take before it answers."""

    def __init__(self, *, topics: list[DeleteRecordsTopic] = MISSING, timeout_ms: int = 0) -> None:
        self.topics = [] if topics is MISSING else topics
        self.timeout_ms = timeout_ms


class DeleteRecordsTopic(Message):
    """The partitions to truncate, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[DeleteRecordsPartition]
    """The partitions of this topic."""

    def __init__(
        self, *, name: str = "", partitions: list[DeleteRecordsPartition] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class DeleteRecordsPartition(Message):
    """The partitions of this topic."""

    __slots__ = ("partition_index", "offset")

    partition_index: int
    """Partition index."""
    offset: int
    """Delete every record before this offset (-1: the high watermark)."""

    def __init__(self, *, partition_index: int = 0, offset: int = 0) -> None:
        self.partition_index = partition_index
        self.offset = offset


class DeleteRecordsResponse(Message):
    """The DeleteRecords response (key 21)."""

    __slots__ = ("throttle_time_ms", "topics")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    topics: list[DeleteRecordsTopicResult]
    """The results, grouped by topic."""

    def __init__(
        self, *, throttle_time_ms: int = 0, topics: list[DeleteRecordsTopicResult] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.topics = [] if topics is MISSING else topics


class DeleteRecordsTopicResult(Message):
    """The results, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[DeleteRecordsPartitionResult]
    """One result per partition."""

    def __init__(
        self, *, name: str = "", partitions: list[DeleteRecordsPartitionResult] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class DeleteRecordsPartitionResult(Message):
    """One result per partition."""

    __slots__ = ("partition_index", "low_watermark", "error_code")

    partition_index: int
    """Partition index."""
    low_watermark: int
    """The new log start offset."""
    error_code: int
    """0, or the error (errors.py) for this entry."""

    def __init__(
        self, *, partition_index: int = 0, low_watermark: int = 0, error_code: int = 0
    ) -> None:
        self.partition_index = partition_index
        self.low_watermark = low_watermark
        self.error_code = error_code


# The schema the codecs are compiled from (nested structs first).
_DELETE_RECORDS_PARTITION = StructDef(
    "DeleteRecordsPartition",
    [Field("partition_index", INT32), Field("offset", INT64)],
    DeleteRecordsPartition,
)
_DELETE_RECORDS_TOPIC = StructDef(
    "DeleteRecordsTopic",
    [Field("name", STRING), Field("partitions", array(_DELETE_RECORDS_PARTITION))],
    DeleteRecordsTopic,
)
_DELETE_RECORDS_REQUEST = StructDef(
    "DeleteRecordsRequest",
    [Field("topics", array(_DELETE_RECORDS_TOPIC)), Field("timeout_ms", INT32)],
    DeleteRecordsRequest,
)
_DELETE_RECORDS_PARTITION_RESULT = StructDef(
    "DeleteRecordsPartitionResult",
    [Field("partition_index", INT32), Field("low_watermark", INT64), Field("error_code", INT16)],
    DeleteRecordsPartitionResult,
)
_DELETE_RECORDS_TOPIC_RESULT = StructDef(
    "DeleteRecordsTopicResult",
    [Field("name", STRING), Field("partitions", array(_DELETE_RECORDS_PARTITION_RESULT))],
    DeleteRecordsTopicResult,
)
_DELETE_RECORDS_RESPONSE = StructDef(
    "DeleteRecordsResponse",
    [Field("throttle_time_ms", INT32), Field("topics", array(_DELETE_RECORDS_TOPIC_RESULT))],
    DeleteRecordsResponse,
)

DELETE_RECORDS: Api[DeleteRecordsRequest, DeleteRecordsResponse] = Api(
    21,
    "DeleteRecords",
    "0-2",
    "2+",
    _DELETE_RECORDS_REQUEST,
    _DELETE_RECORDS_RESPONSE,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
)
"""DeleteRecords (key 21), versions 0-2."""
