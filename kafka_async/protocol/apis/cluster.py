"""APIs about the cluster itself: ApiVersions (18), Metadata (3), DescribeCluster (60)."""

from __future__ import annotations

from ..schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UUID,
    Api,
    array,
    f,
    struct,
)

API_VERSIONS = Api(
    18,
    "ApiVersions",
    "0-4",
    "3+",
    request=[
        f("client_software_name", STRING, "3+", ignorable=True),
        f("client_software_version", STRING, "3+", ignorable=True),
    ],
    response=[
        f("error_code", INT16),
        f(
            "api_keys",
            array(
                struct(
                    "ApiVersion",
                    [f("api_key", INT16), f("min_version", INT16), f("max_version", INT16)],
                )
            ),
        ),
        f("throttle_time_ms", INT32, "1+", ignorable=True),
        f(
            "supported_features",
            array(
                struct(
                    "SupportedFeatureKey",
                    [
                        f("name", STRING, "3+"),
                        f("min_version", INT16, "3+"),
                        f("max_version", INT16, "3+"),
                    ],
                )
            ),
            "3+",
            ignorable=True,
            tag=0,
        ),
        f("finalized_features_epoch", INT64, "3+", default=-1, ignorable=True, tag=1),
        f(
            "finalized_features",
            array(
                struct(
                    "FinalizedFeatureKey",
                    [
                        f("name", STRING, "3+"),
                        f("max_version_level", INT16, "3+"),
                        f("min_version_level", INT16, "3+"),
                    ],
                )
            ),
            "3+",
            ignorable=True,
            tag=2,
        ),
        f("zk_migration_ready", BOOL, "3+", ignorable=True, tag=3),
    ],
)


METADATA = Api(
    3,
    "Metadata",
    "0-12",
    "9+",
    request=[
        f(
            "topics",
            array(
                struct(
                    "MetadataRequestTopic",
                    [f("topic_id", UUID, "10+", ignorable=True), f("name", STRING, nullable="10+")],
                )
            ),
            nullable="1+",
        ),
        f("allow_auto_topic_creation", BOOL, "4+", default=True),
        f("include_cluster_authorized_operations", BOOL, "8-10"),
        f("include_topic_authorized_operations", BOOL, "8+"),
    ],
    response=[
        f("throttle_time_ms", INT32, "3+", ignorable=True),
        f(
            "brokers",
            array(
                struct(
                    "MetadataResponseBroker",
                    [
                        f("node_id", INT32),
                        f("host", STRING),
                        f("port", INT32),
                        f("rack", STRING, "1+", nullable="1+", default=None, ignorable=True),
                    ],
                )
            ),
        ),
        f("cluster_id", STRING, "2+", nullable="2+", default=None, ignorable=True),
        f("controller_id", INT32, "1+", default=-1, ignorable=True),
        f(
            "topics",
            array(
                struct(
                    "MetadataResponseTopic",
                    [
                        f("error_code", INT16),
                        f("name", STRING, nullable="12+"),
                        f("topic_id", UUID, "10+", ignorable=True),
                        f("is_internal", BOOL, "1+", ignorable=True),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "MetadataResponsePartition",
                                    [
                                        f("error_code", INT16),
                                        f("partition_index", INT32),
                                        f("leader_id", INT32),
                                        f("leader_epoch", INT32, "7+", default=-1, ignorable=True),
                                        f("replica_nodes", array(INT32)),
                                        f("isr_nodes", array(INT32)),
                                        f("offline_replicas", array(INT32), "5+", ignorable=True),
                                    ],
                                )
                            ),
                        ),
                        f("topic_authorized_operations", INT32, "8+", default=-2147483648),
                    ],
                )
            ),
        ),
        f("cluster_authorized_operations", INT32, "8-10", default=-2147483648),
    ],
)


DESCRIBE_CLUSTER = Api(
    60,
    "DescribeCluster",
    "0-1",
    "0+",
    request=[
        f("include_cluster_authorized_operations", BOOL),
        f("endpoint_type", INT8, "1+", default=1),
    ],
    response=[
        f("throttle_time_ms", INT32),
        f("error_code", INT16),
        f("error_message", STRING, nullable="0+", default=None),
        f("endpoint_type", INT8, "1+", default=1),
        f("cluster_id", STRING),
        f("controller_id", INT32, default=-1),
        f(
            "brokers",
            array(
                struct(
                    "DescribeClusterBroker",
                    [
                        f("broker_id", INT32),
                        f("host", STRING),
                        f("port", INT32),
                        f("rack", STRING, nullable="0+", default=None),
                    ],
                )
            ),
        ),
        f("cluster_authorized_operations", INT32, default=-2147483648),
    ],
)
