"""Consuming records: Fetch (1)."""

from __future__ import annotations

from ..schema import (
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UUID,
    Api,
    array,
    f,
    struct,
)

FETCH = Api(
    1,
    "Fetch",
    "0-17",
    "12+",
    request=[
        f("cluster_id", STRING, "12+", nullable="12+", default=None, ignorable=True, tag=0),
        f("replica_id", INT32, "0-14", default=-1),
        f(
            "replica_state",
            struct(
                "ReplicaState",
                [
                    f("replica_id", INT32, "15+", default=-1),
                    f("replica_epoch", INT64, "15+", default=-1),
                ],
            ),
            "15+",
            tag=1,
        ),
        f("max_wait_ms", INT32),
        f("min_bytes", INT32),
        f("max_bytes", INT32, "3+", default=2147483647, ignorable=True),
        f("isolation_level", INT8, "4+", ignorable=True),
        f("session_id", INT32, "7+", ignorable=True),
        f("session_epoch", INT32, "7+", default=-1, ignorable=True),
        f(
            "topics",
            array(
                struct(
                    "FetchTopic",
                    [
                        f("topic", STRING, "0-12", ignorable=True),
                        f("topic_id", UUID, "13+", ignorable=True),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "FetchPartition",
                                    [
                                        f("partition", INT32),
                                        f(
                                            "current_leader_epoch",
                                            INT32,
                                            "9+",
                                            default=-1,
                                            ignorable=True,
                                        ),
                                        f("fetch_offset", INT64),
                                        f("last_fetched_epoch", INT32, "12+", default=-1),
                                        f(
                                            "log_start_offset",
                                            INT64,
                                            "5+",
                                            default=-1,
                                            ignorable=True,
                                        ),
                                        f("partition_max_bytes", INT32),
                                        f(
                                            "replica_directory_id",
                                            UUID,
                                            "17+",
                                            ignorable=True,
                                            tag=0,
                                        ),
                                    ],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
        f(
            "forgotten_topics_data",
            array(
                struct(
                    "ForgottenTopic",
                    [
                        f("topic", STRING, "7-12", ignorable=True),
                        f("topic_id", UUID, "13+", ignorable=True),
                        f("partitions", array(INT32), "7+"),
                    ],
                )
            ),
            "7+",
        ),
        f("rack_id", STRING, "11+", ignorable=True),
    ],
    response=[
        f("throttle_time_ms", INT32, "1+", ignorable=True),
        f("error_code", INT16, "7+", ignorable=True),
        f("session_id", INT32, "7+"),
        f(
            "responses",
            array(
                struct(
                    "FetchableTopicResponse",
                    [
                        f("topic", STRING, "0-12", ignorable=True),
                        f("topic_id", UUID, "13+", ignorable=True),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "PartitionData",
                                    [
                                        f("partition_index", INT32),
                                        f("error_code", INT16),
                                        f("high_watermark", INT64),
                                        f(
                                            "last_stable_offset",
                                            INT64,
                                            "4+",
                                            default=-1,
                                            ignorable=True,
                                        ),
                                        f(
                                            "log_start_offset",
                                            INT64,
                                            "5+",
                                            default=-1,
                                            ignorable=True,
                                        ),
                                        f(
                                            "diverging_epoch",
                                            struct(
                                                "EpochEndOffset",
                                                [
                                                    f("epoch", INT32, "12+", default=-1),
                                                    f("end_offset", INT64, "12+", default=-1),
                                                ],
                                            ),
                                            "12+",
                                            tag=0,
                                        ),
                                        f(
                                            "current_leader",
                                            struct(
                                                "LeaderIdAndEpoch",
                                                [
                                                    f("leader_id", INT32, "12+", default=-1),
                                                    f("leader_epoch", INT32, "12+", default=-1),
                                                ],
                                            ),
                                            "12+",
                                            tag=1,
                                        ),
                                        f(
                                            "snapshot_id",
                                            struct(
                                                "SnapshotId",
                                                [
                                                    f("end_offset", INT64, default=-1),
                                                    f("epoch", INT32, default=-1),
                                                ],
                                            ),
                                            "12+",
                                            tag=2,
                                        ),
                                        f(
                                            "aborted_transactions",
                                            array(
                                                struct(
                                                    "AbortedTransaction",
                                                    [
                                                        f("producer_id", INT64, "4+"),
                                                        f("first_offset", INT64, "4+"),
                                                    ],
                                                )
                                            ),
                                            "4+",
                                            nullable="4+",
                                            ignorable=True,
                                        ),
                                        f("preferred_read_replica", INT32, "11+", default=-1),
                                        f("records", RECORDS, nullable="0+"),
                                    ],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
        f(
            "node_endpoints",
            array(
                struct(
                    "NodeEndpoint",
                    [
                        f("node_id", INT32, "16+"),
                        f("host", STRING, "16+"),
                        f("port", INT32, "16+"),
                        f("rack", STRING, "16+", nullable="16+", default=None),
                    ],
                )
            ),
            "16+",
            tag=0,
        ),
    ],
)
