# Generated from kafka_async/protocol/definitions/describe_log_dirs.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeLogDirs: a broker's log directories and the size of the partitions in them.

Versions 1-4, flexible 2+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    MISSING,
    STRING,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class DescribeLogDirsRequest(Message):
    """The DescribeLogDirs request (key 35)."""

    __slots__ = ("topics",)

    topics: list[DescribableLogDirTopic] | None
    """The partitions to describe, grouped by topic; null for every partition."""

    def __init__(self, *, topics: list[DescribableLogDirTopic] | None = MISSING) -> None:
        self.topics = [] if topics is MISSING else topics


class DescribableLogDirTopic(Message):
    """The partitions to describe, grouped by topic; null for every partition."""

    __slots__ = ("topic", "partitions")

    topic: str
    """Topic name."""
    partitions: list[int]
    """Partition indexes."""

    def __init__(self, *, topic: str = "", partitions: list[int] = MISSING) -> None:
        self.topic = topic
        self.partitions = [] if partitions is MISSING else partitions


class DescribeLogDirsResponse(Message):
    """The DescribeLogDirs response (key 35)."""

    __slots__ = ("throttle_time_ms", "error_code", "results")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or a request-level error."""
    results: list[DescribeLogDirsResult]
    """One entry per log directory."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        results: list[DescribeLogDirsResult] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.results = [] if results is MISSING else results


class DescribeLogDirsResult(Message):
    """One entry per log directory."""

    __slots__ = ("error_code", "log_dir", "topics", "total_bytes", "usable_bytes")

    error_code: int
    """0, or the error for this directory."""
    log_dir: str
    """The directory's absolute path."""
    topics: list[DescribeLogDirsTopic]
    """Its partitions, grouped by topic."""
    total_bytes: int
    """The directory's capacity, bytes, or -1."""
    usable_bytes: int
    """Bytes still free in the directory, or -1."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        log_dir: str = "",
        topics: list[DescribeLogDirsTopic] = MISSING,
        total_bytes: int = -1,
        usable_bytes: int = -1,
    ) -> None:
        self.error_code = error_code
        self.log_dir = log_dir
        self.topics = [] if topics is MISSING else topics
        self.total_bytes = total_bytes
        self.usable_bytes = usable_bytes


class DescribeLogDirsTopic(Message):
    """Its partitions, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[DescribeLogDirsPartition]
    """One entry per partition."""

    def __init__(
        self, *, name: str = "", partitions: list[DescribeLogDirsPartition] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class DescribeLogDirsPartition(Message):
    """One entry per partition."""

    __slots__ = ("partition_index", "partition_size", "offset_lag", "is_future_key")

    partition_index: int
    """Partition index."""
    partition_size: int
    """Size of the partition's log, bytes."""
    offset_lag: int
    """How far this replica is behind the log end (a future replica: behind the current one)."""
    is_future_key: bool
    """Whether this is a future replica (being moved here)."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        partition_size: int = 0,
        offset_lag: int = 0,
        is_future_key: bool = False,
    ) -> None:
        self.partition_index = partition_index
        self.partition_size = partition_size
        self.offset_lag = offset_lag
        self.is_future_key = is_future_key


# The schema the codecs are compiled from (nested structs first).
_DESCRIBABLE_LOG_DIR_TOPIC = StructDef(
    "DescribableLogDirTopic",
    [Field("topic", STRING), Field("partitions", array(INT32))],
    DescribableLogDirTopic,
)
_DESCRIBE_LOG_DIRS_REQUEST = StructDef(
    "DescribeLogDirsRequest",
    [Field("topics", array(_DESCRIBABLE_LOG_DIR_TOPIC), nullable="0+")],
    DescribeLogDirsRequest,
)
_DESCRIBE_LOG_DIRS_PARTITION = StructDef(
    "DescribeLogDirsPartition",
    [
        Field("partition_index", INT32),
        Field("partition_size", INT64),
        Field("offset_lag", INT64),
        Field("is_future_key", BOOL),
    ],
    DescribeLogDirsPartition,
)
_DESCRIBE_LOG_DIRS_TOPIC = StructDef(
    "DescribeLogDirsTopic",
    [Field("name", STRING), Field("partitions", array(_DESCRIBE_LOG_DIRS_PARTITION))],
    DescribeLogDirsTopic,
)
_DESCRIBE_LOG_DIRS_RESULT = StructDef(
    "DescribeLogDirsResult",
    [
        Field("error_code", INT16),
        Field("log_dir", STRING),
        Field("topics", array(_DESCRIBE_LOG_DIRS_TOPIC)),
        Field("total_bytes", INT64, "4+", default=-1, ignorable=True),
        Field("usable_bytes", INT64, "4+", default=-1, ignorable=True),
    ],
    DescribeLogDirsResult,
)
_DESCRIBE_LOG_DIRS_RESPONSE = StructDef(
    "DescribeLogDirsResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "3+", ignorable=True),
        Field("results", array(_DESCRIBE_LOG_DIRS_RESULT)),
    ],
    DescribeLogDirsResponse,
)

DESCRIBE_LOG_DIRS: Api[DescribeLogDirsRequest, DescribeLogDirsResponse] = Api(
    35,
    "DescribeLogDirs",
    "1-4",
    "2+",
    _DESCRIBE_LOG_DIRS_REQUEST,
    _DESCRIBE_LOG_DIRS_RESPONSE,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)
"""DescribeLogDirs (key 35), versions 1-4."""
