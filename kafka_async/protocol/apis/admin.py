"""Topic and config administration.

CreateTopics (19), DeleteTopics (20), CreatePartitions (37), DescribeConfigs (32),
AlterConfigs (33), IncrementalAlterConfigs (44).
"""

from __future__ import annotations

from ..schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    STRING,
    UUID,
    Api,
    array,
    f,
    struct,
)

CREATE_TOPICS = Api(
    19,
    "CreateTopics",
    "0-7",
    "5+",
    request=[
        f(
            "topics",
            array(
                struct(
                    "CreatableTopic",
                    [
                        f("name", STRING),
                        f("num_partitions", INT32),
                        f("replication_factor", INT16),
                        f(
                            "assignments",
                            array(
                                struct(
                                    "CreatableReplicaAssignment",
                                    [f("partition_index", INT32), f("broker_ids", array(INT32))],
                                )
                            ),
                        ),
                        f(
                            "configs",
                            array(
                                struct(
                                    "CreatableTopicConfig",
                                    [f("name", STRING), f("value", STRING, nullable="0+")],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
        f("timeout_ms", INT32, default=60000),
        f("validate_only", BOOL, "1+"),
    ],
    response=[
        f("throttle_time_ms", INT32, "2+", ignorable=True),
        f(
            "topics",
            array(
                struct(
                    "CreatableTopicResult",
                    [
                        f("name", STRING),
                        f("topic_id", UUID, "7+", ignorable=True),
                        f("error_code", INT16),
                        f("error_message", STRING, "1+", nullable="0+", ignorable=True),
                        f("topic_config_error_code", INT16, "5+", ignorable=True, tag=0),
                        f("num_partitions", INT32, "5+", default=-1, ignorable=True),
                        f("replication_factor", INT16, "5+", default=-1, ignorable=True),
                        f(
                            "configs",
                            array(
                                struct(
                                    "CreatableTopicConfigs",
                                    [
                                        f("name", STRING, "5+"),
                                        f("value", STRING, "5+", nullable="5+"),
                                        f("read_only", BOOL, "5+"),
                                        f("config_source", INT8, "5+", default=-1, ignorable=True),
                                        f("is_sensitive", BOOL, "5+"),
                                    ],
                                )
                            ),
                            "5+",
                            nullable="5+",
                            ignorable=True,
                        ),
                    ],
                )
            ),
        ),
    ],
)


DELETE_TOPICS = Api(
    20,
    "DeleteTopics",
    "0-6",
    "4+",
    request=[
        f(
            "topics",
            array(
                struct(
                    "DeleteTopicState",
                    [
                        f("name", STRING, "6+", nullable="6+", default=None),
                        f("topic_id", UUID, "6+"),
                    ],
                )
            ),
            "6+",
        ),
        f("topic_names", array(STRING), "0-5", ignorable=True),
        f("timeout_ms", INT32),
    ],
    response=[
        f("throttle_time_ms", INT32, "1+", ignorable=True),
        f(
            "responses",
            array(
                struct(
                    "DeletableTopicResult",
                    [
                        f("name", STRING, nullable="6+"),
                        f("topic_id", UUID, "6+", ignorable=True),
                        f("error_code", INT16),
                        f(
                            "error_message",
                            STRING,
                            "5+",
                            nullable="5+",
                            default=None,
                            ignorable=True,
                        ),
                    ],
                )
            ),
        ),
    ],
)


CREATE_PARTITIONS = Api(
    37,
    "CreatePartitions",
    "0-3",
    "2+",
    request=[
        f(
            "topics",
            array(
                struct(
                    "CreatePartitionsTopic",
                    [
                        f("name", STRING),
                        f("count", INT32),
                        f(
                            "assignments",
                            array(
                                struct(
                                    "CreatePartitionsAssignment", [f("broker_ids", array(INT32))]
                                )
                            ),
                            nullable="0+",
                        ),
                    ],
                )
            ),
        ),
        f("timeout_ms", INT32),
        f("validate_only", BOOL),
    ],
    response=[
        f("throttle_time_ms", INT32),
        f(
            "results",
            array(
                struct(
                    "CreatePartitionsTopicResult",
                    [
                        f("name", STRING),
                        f("error_code", INT16),
                        f("error_message", STRING, nullable="0+", default=None),
                    ],
                )
            ),
        ),
    ],
)


DESCRIBE_CONFIGS = Api(
    32,
    "DescribeConfigs",
    "0-4",
    "4+",
    request=[
        f(
            "resources",
            array(
                struct(
                    "DescribeConfigsResource",
                    [
                        f("resource_type", INT8),
                        f("resource_name", STRING),
                        f("configuration_keys", array(STRING), nullable="0+"),
                    ],
                )
            ),
        ),
        f("include_synonyms", BOOL, "1+"),
        f("include_documentation", BOOL, "3+"),
    ],
    response=[
        f("throttle_time_ms", INT32),
        f(
            "results",
            array(
                struct(
                    "DescribeConfigsResult",
                    [
                        f("error_code", INT16),
                        f("error_message", STRING, nullable="0+"),
                        f("resource_type", INT8),
                        f("resource_name", STRING),
                        f(
                            "configs",
                            array(
                                struct(
                                    "DescribeConfigsResourceResult",
                                    [
                                        f("name", STRING),
                                        f("value", STRING, nullable="0+"),
                                        f("read_only", BOOL),
                                        f("is_default", BOOL, "0"),
                                        f("config_source", INT8, "1+", default=-1, ignorable=True),
                                        f("is_sensitive", BOOL),
                                        f(
                                            "synonyms",
                                            array(
                                                struct(
                                                    "DescribeConfigsSynonym",
                                                    [
                                                        f("name", STRING, "1+"),
                                                        f("value", STRING, "1+", nullable="0+"),
                                                        f("source", INT8, "1+"),
                                                    ],
                                                )
                                            ),
                                            "1+",
                                            ignorable=True,
                                        ),
                                        f("config_type", INT8, "3+", ignorable=True),
                                        f(
                                            "documentation",
                                            STRING,
                                            "3+",
                                            nullable="0+",
                                            ignorable=True,
                                        ),
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


ALTER_CONFIGS = Api(
    33,
    "AlterConfigs",
    "0-2",
    "2+",
    request=[
        f(
            "resources",
            array(
                struct(
                    "AlterConfigsResource",
                    [
                        f("resource_type", INT8),
                        f("resource_name", STRING),
                        f(
                            "configs",
                            array(
                                struct(
                                    "AlterableConfig",
                                    [f("name", STRING), f("value", STRING, nullable="0+")],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
        f("validate_only", BOOL),
    ],
    response=[
        f("throttle_time_ms", INT32),
        f(
            "responses",
            array(
                struct(
                    "AlterConfigsResourceResponse",
                    [
                        f("error_code", INT16),
                        f("error_message", STRING, nullable="0+"),
                        f("resource_type", INT8),
                        f("resource_name", STRING),
                    ],
                )
            ),
        ),
    ],
)


INCREMENTAL_ALTER_CONFIGS = Api(
    44,
    "IncrementalAlterConfigs",
    "0-1",
    "1+",
    request=[
        f(
            "resources",
            array(
                struct(
                    "AlterConfigsResource",
                    [
                        f("resource_type", INT8),
                        f("resource_name", STRING),
                        f(
                            "configs",
                            array(
                                struct(
                                    "AlterableConfig",
                                    [
                                        f("name", STRING),
                                        f("config_operation", INT8),
                                        f("value", STRING, nullable="0+"),
                                    ],
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
        f("validate_only", BOOL),
    ],
    response=[
        f("throttle_time_ms", INT32),
        f(
            "responses",
            array(
                struct(
                    "AlterConfigsResourceResponse",
                    [
                        f("error_code", INT16),
                        f("error_message", STRING, nullable="0+"),
                        f("resource_type", INT8),
                        f("resource_name", STRING),
                    ],
                )
            ),
        ),
    ],
)
