"""Idempotence and transactions.

InitProducerId (22), AddPartitionsToTxn (24), AddOffsetsToTxn (25), EndTxn (26),
TxnOffsetCommit (28).
"""

from __future__ import annotations

from ..schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    STRING,
    Api,
    array,
    f,
    struct,
)

INIT_PRODUCER_ID = Api(
    22,
    "InitProducerId",
    "0-5",
    "2+",
    request=[
        f("transactional_id", STRING, nullable="0+"),
        f("transaction_timeout_ms", INT32),
        f("producer_id", INT64, "3+", default=-1),
        f("producer_epoch", INT16, "3+", default=-1),
    ],
    response=[
        f("throttle_time_ms", INT32, ignorable=True),
        f("error_code", INT16),
        f("producer_id", INT64, default=-1),
        f("producer_epoch", INT16),
    ],
)


_ADD_PARTITIONS_TO_TXN_TOPIC = struct(
    "AddPartitionsToTxnTopic", [f("name", STRING), f("partitions", array(INT32))]
)

_ADD_PARTITIONS_TO_TXN_PARTITION_RESULT = struct(
    "AddPartitionsToTxnPartitionResult",
    [f("partition_index", INT32), f("partition_error_code", INT16)],
)

_ADD_PARTITIONS_TO_TXN_TOPIC_RESULT = struct(
    "AddPartitionsToTxnTopicResult",
    [
        f("name", STRING),
        f(
            "results_by_partition",
            array(_ADD_PARTITIONS_TO_TXN_PARTITION_RESULT),
        ),
    ],
)

ADD_PARTITIONS_TO_TXN = Api(
    24,
    "AddPartitionsToTxn",
    "0-5",
    "3+",
    request=[
        f(
            "transactions",
            array(
                struct(
                    "AddPartitionsToTxnTransaction",
                    [
                        f("transactional_id", STRING, "4+"),
                        f("producer_id", INT64, "4+"),
                        f("producer_epoch", INT16, "4+"),
                        f("verify_only", BOOL, "4+"),
                        f(
                            "topics",
                            array(_ADD_PARTITIONS_TO_TXN_TOPIC),
                            "4+",
                        ),
                    ],
                )
            ),
            "4+",
        ),
        f("v3_and_below_transactional_id", STRING, "0-3"),
        f("v3_and_below_producer_id", INT64, "0-3"),
        f("v3_and_below_producer_epoch", INT16, "0-3"),
        f(
            "v3_and_below_topics",
            array(_ADD_PARTITIONS_TO_TXN_TOPIC),
            "0-3",
        ),
    ],
    response=[
        f("throttle_time_ms", INT32),
        f("error_code", INT16, "4+", ignorable=True),
        f(
            "results_by_transaction",
            array(
                struct(
                    "AddPartitionsToTxnResult",
                    [
                        f("transactional_id", STRING, "4+"),
                        f(
                            "topic_results",
                            array(_ADD_PARTITIONS_TO_TXN_TOPIC_RESULT),
                            "4+",
                        ),
                    ],
                )
            ),
            "4+",
        ),
        f(
            "results_by_topic_v3_and_below",
            array(_ADD_PARTITIONS_TO_TXN_TOPIC_RESULT),
            "0-3",
        ),
    ],
)


ADD_OFFSETS_TO_TXN = Api(
    25,
    "AddOffsetsToTxn",
    "0-4",
    "3+",
    request=[
        f("transactional_id", STRING),
        f("producer_id", INT64),
        f("producer_epoch", INT16),
        f("group_id", STRING),
    ],
    response=[f("throttle_time_ms", INT32), f("error_code", INT16)],
)


END_TXN = Api(
    26,
    "EndTxn",
    "0-5",
    "3+",
    request=[
        f("transactional_id", STRING),
        f("producer_id", INT64),
        f("producer_epoch", INT16),
        f("committed", BOOL),
    ],
    response=[
        f("throttle_time_ms", INT32),
        f("error_code", INT16),
        f("producer_id", INT64, "5+", default=-1, ignorable=True),
        f("producer_epoch", INT16, "5+", default=-1, ignorable=True),
    ],
)


TXN_OFFSET_COMMIT = Api(
    28,
    "TxnOffsetCommit",
    "0-4",
    "3+",
    request=[
        f("transactional_id", STRING),
        f("group_id", STRING),
        f("producer_id", INT64),
        f("producer_epoch", INT16),
        f("generation_id", INT32, "3+", default=-1),
        f("member_id", STRING, "3+"),
        f("group_instance_id", STRING, "3+", nullable="3+", default=None),
        f(
            "topics",
            array(
                struct(
                    "TxnOffsetCommitRequestTopic",
                    [
                        f("name", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "TxnOffsetCommitRequestPartition",
                                    [
                                        f("partition_index", INT32),
                                        f("committed_offset", INT64),
                                        f(
                                            "committed_leader_epoch",
                                            INT32,
                                            "2+",
                                            default=-1,
                                            ignorable=True,
                                        ),
                                        f("committed_metadata", STRING, nullable="0+"),
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
        f("throttle_time_ms", INT32),
        f(
            "topics",
            array(
                struct(
                    "TxnOffsetCommitResponseTopic",
                    [
                        f("name", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "TxnOffsetCommitResponsePartition",
                                    [f("partition_index", INT32), f("error_code", INT16)],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
    ],
)
