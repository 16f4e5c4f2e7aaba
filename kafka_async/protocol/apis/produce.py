"""Producing records: Produce (0)."""

from __future__ import annotations

from ..schema import (
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    Api,
    array,
    f,
    struct,
)

PRODUCE = Api(
    0,
    "Produce",
    "0-11",
    "9+",
    request=[
        f("transactional_id", STRING, "3+", nullable="3+", default=None),
        f("acks", INT16),
        f("timeout_ms", INT32),
        f(
            "topic_data",
            array(
                struct(
                    "TopicProduceData",
                    [
                        f("name", STRING),
                        f(
                            "partition_data",
                            array(
                                struct(
                                    "PartitionProduceData",
                                    [f("index", INT32), f("records", RECORDS, nullable="0+")],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
    ],
    response=[
        f(
            "responses",
            array(
                struct(
                    "TopicProduceResponse",
                    [
                        f("name", STRING),
                        f(
                            "partition_responses",
                            array(
                                struct(
                                    "PartitionProduceResponse",
                                    [
                                        f("index", INT32),
                                        f("error_code", INT16),
                                        f("base_offset", INT64),
                                        f(
                                            "log_append_time_ms",
                                            INT64,
                                            "2+",
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
                                            "record_errors",
                                            array(
                                                struct(
                                                    "BatchIndexAndErrorMessage",
                                                    [
                                                        f("batch_index", INT32, "8+"),
                                                        f(
                                                            "batch_index_error_message",
                                                            STRING,
                                                            "8+",
                                                            nullable="8+",
                                                            default=None,
                                                        ),
                                                    ],
                                                )
                                            ),
                                            "8+",
                                            ignorable=True,
                                        ),
                                        f(
                                            "error_message",
                                            STRING,
                                            "8+",
                                            nullable="8+",
                                            default=None,
                                            ignorable=True,
                                        ),
                                        f(
                                            "current_leader",
                                            struct(
                                                "LeaderIdAndEpoch",
                                                [
                                                    f("leader_id", INT32, "10+", default=-1),
                                                    f("leader_epoch", INT32, "10+", default=-1),
                                                ],
                                            ),
                                            "10+",
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
        f("throttle_time_ms", INT32, "1+", ignorable=True),
        f(
            "node_endpoints",
            array(
                struct(
                    "NodeEndpoint",
                    [
                        f("node_id", INT32, "10+"),
                        f("host", STRING, "10+"),
                        f("port", INT32, "10+"),
                        f("rack", STRING, "10+", nullable="10+", default=None),
                    ],
                )
            ),
            "10+",
            tag=0,
        ),
    ],
)
