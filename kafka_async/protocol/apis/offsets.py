"""Partition offsets: ListOffsets (2), OffsetForLeaderEpoch (23), DeleteRecords (21)."""

from __future__ import annotations

from ..schema import (
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    Api,
    array,
    f,
    struct,
)

LIST_OFFSETS = Api(
    2,
    "ListOffsets",
    "0-10",
    "6+",
    request=[
        f("replica_id", INT32),
        f("isolation_level", INT8, "2+"),
        f(
            "topics",
            array(
                struct(
                    "ListOffsetsTopic",
                    [
                        f("name", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "ListOffsetsPartition",
                                    [
                                        f("partition_index", INT32),
                                        f(
                                            "current_leader_epoch",
                                            INT32,
                                            "4+",
                                            default=-1,
                                            ignorable=True,
                                        ),
                                        f("timestamp", INT64),
                                        f("max_num_offsets", INT32, "0", default=1),
                                    ],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
        f("timeout_ms", INT32, "10+", ignorable=True),
    ],
    response=[
        f("throttle_time_ms", INT32, "2+", ignorable=True),
        f(
            "topics",
            array(
                struct(
                    "ListOffsetsTopicResponse",
                    [
                        f("name", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "ListOffsetsPartitionResponse",
                                    [
                                        f("partition_index", INT32),
                                        f("error_code", INT16),
                                        f("old_style_offsets", array(INT64), "0"),
                                        f("timestamp", INT64, "1+", default=-1),
                                        f("offset", INT64, "1+", default=-1),
                                        f("leader_epoch", INT32, "4+", default=-1),
                                    ],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
    ],
)


OFFSET_FOR_LEADER_EPOCH = Api(
    23,
    "OffsetForLeaderEpoch",
    "0-4",
    "4+",
    request=[
        f("replica_id", INT32, "3+", default=-2, ignorable=True),
        f(
            "topics",
            array(
                struct(
                    "OffsetForLeaderTopic",
                    [
                        f("topic", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "OffsetForLeaderPartition",
                                    [
                                        f("partition", INT32),
                                        f(
                                            "current_leader_epoch",
                                            INT32,
                                            "2+",
                                            default=-1,
                                            ignorable=True,
                                        ),
                                        f("leader_epoch", INT32),
                                    ],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
    ],
    response=[
        f("throttle_time_ms", INT32, "2+", ignorable=True),
        f(
            "topics",
            array(
                struct(
                    "OffsetForLeaderTopicResult",
                    [
                        f("topic", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "EpochEndOffset",
                                    [
                                        f("error_code", INT16),
                                        f("partition", INT32),
                                        f("leader_epoch", INT32, "1+", default=-1, ignorable=True),
                                        f("end_offset", INT64, default=-1),
                                    ],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
    ],
)


DELETE_RECORDS = Api(
    21,
    "DeleteRecords",
    "0-2",
    "2+",
    request=[
        f(
            "topics",
            array(
                struct(
                    "DeleteRecordsTopic",
                    [
                        f("name", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "DeleteRecordsPartition",
                                    [f("partition_index", INT32), f("offset", INT64)],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
        f("timeout_ms", INT32),
    ],
    response=[
        f("throttle_time_ms", INT32),
        f(
            "topics",
            array(
                struct(
                    "DeleteRecordsTopicResult",
                    [
                        f("name", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "DeleteRecordsPartitionResult",
                                    [
                                        f("partition_index", INT32),
                                        f("low_watermark", INT64),
                                        f("error_code", INT16),
                                    ],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
    ],
)
