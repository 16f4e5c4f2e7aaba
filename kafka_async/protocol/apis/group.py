"""Consumer groups and their committed offsets.

FindCoordinator (10), JoinGroup (11), Heartbeat (12), LeaveGroup (13), SyncGroup (14),
DescribeGroups (15), ListGroups (16), DeleteGroups (42), OffsetCommit (8), OffsetFetch (9),
OffsetDelete (47).
"""

from __future__ import annotations

from ..schema import (
    BOOL,
    BYTES,
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

FIND_COORDINATOR = Api(
    10,
    "FindCoordinator",
    "0-6",
    "3+",
    request=[
        f("key", STRING, "0-3"),
        f("key_type", INT8, "1+"),
        f("coordinator_keys", array(STRING), "4+"),
    ],
    response=[
        f("throttle_time_ms", INT32, "1+", ignorable=True),
        f("error_code", INT16, "0-3"),
        f("error_message", STRING, "1-3", nullable="1-3", ignorable=True),
        f("node_id", INT32, "0-3"),
        f("host", STRING, "0-3"),
        f("port", INT32, "0-3"),
        f(
            "coordinators",
            array(
                struct(
                    "Coordinator",
                    [
                        f("key", STRING, "4+"),
                        f("node_id", INT32, "4+"),
                        f("host", STRING, "4+"),
                        f("port", INT32, "4+"),
                        f("error_code", INT16, "4+"),
                        f("error_message", STRING, "4+", nullable="4+", ignorable=True),
                    ],
                )
            ),
            "4+",
        ),
    ],
)


JOIN_GROUP = Api(
    11,
    "JoinGroup",
    "0-9",
    "6+",
    request=[
        f("group_id", STRING),
        f("session_timeout_ms", INT32),
        f("rebalance_timeout_ms", INT32, "1+", default=-1, ignorable=True),
        f("member_id", STRING),
        f("group_instance_id", STRING, "5+", nullable="5+", default=None),
        f("protocol_type", STRING),
        f(
            "protocols",
            array(struct("JoinGroupRequestProtocol", [f("name", STRING), f("metadata", BYTES)])),
        ),
        f("reason", STRING, "8+", nullable="8+", default=None, ignorable=True),
    ],
    response=[
        f("throttle_time_ms", INT32, "2+", ignorable=True),
        f("error_code", INT16),
        f("generation_id", INT32, default=-1),
        f("protocol_type", STRING, "7+", nullable="7+", default=None, ignorable=True),
        f("protocol_name", STRING, nullable="7+"),
        f("leader", STRING),
        f("skip_assignment", BOOL, "9+"),
        f("member_id", STRING),
        f(
            "members",
            array(
                struct(
                    "JoinGroupResponseMember",
                    [
                        f("member_id", STRING),
                        f(
                            "group_instance_id",
                            STRING,
                            "5+",
                            nullable="5+",
                            default=None,
                            ignorable=True,
                        ),
                        f("metadata", BYTES),
                    ],
                )
            ),
        ),
    ],
)


HEARTBEAT = Api(
    12,
    "Heartbeat",
    "0-4",
    "4+",
    request=[
        f("group_id", STRING),
        f("generation_id", INT32),
        f("member_id", STRING),
        f("group_instance_id", STRING, "3+", nullable="3+", default=None),
    ],
    response=[f("throttle_time_ms", INT32, "1+", ignorable=True), f("error_code", INT16)],
)


LEAVE_GROUP = Api(
    13,
    "LeaveGroup",
    "0-5",
    "4+",
    request=[
        f("group_id", STRING),
        f("member_id", STRING, "0-2"),
        f(
            "members",
            array(
                struct(
                    "MemberIdentity",
                    [
                        f("member_id", STRING, "3+"),
                        f("group_instance_id", STRING, "3+", nullable="3+", default=None),
                        f("reason", STRING, "5+", nullable="5+", default=None, ignorable=True),
                    ],
                )
            ),
            "3+",
        ),
    ],
    response=[
        f("throttle_time_ms", INT32, "1+", ignorable=True),
        f("error_code", INT16),
        f(
            "members",
            array(
                struct(
                    "MemberResponse",
                    [
                        f("member_id", STRING, "3+"),
                        f("group_instance_id", STRING, "3+", nullable="3+"),
                        f("error_code", INT16, "3+"),
                    ],
                )
            ),
            "3+",
        ),
    ],
)


SYNC_GROUP = Api(
    14,
    "SyncGroup",
    "0-5",
    "4+",
    request=[
        f("group_id", STRING),
        f("generation_id", INT32),
        f("member_id", STRING),
        f("group_instance_id", STRING, "3+", nullable="3+", default=None),
        f("protocol_type", STRING, "5+", nullable="5+", default=None, ignorable=True),
        f("protocol_name", STRING, "5+", nullable="5+", default=None, ignorable=True),
        f(
            "assignments",
            array(
                struct(
                    "SyncGroupRequestAssignment", [f("member_id", STRING), f("assignment", BYTES)]
                )
            ),
        ),
    ],
    response=[
        f("throttle_time_ms", INT32, "1+", ignorable=True),
        f("error_code", INT16),
        f("protocol_type", STRING, "5+", nullable="5+", default=None, ignorable=True),
        f("protocol_name", STRING, "5+", nullable="5+", default=None, ignorable=True),
        f("assignment", BYTES),
    ],
)


DESCRIBE_GROUPS = Api(
    15,
    "DescribeGroups",
    "0-5",
    "5+",
    request=[f("groups", array(STRING)), f("include_authorized_operations", BOOL, "3+")],
    response=[
        f("throttle_time_ms", INT32, "1+", ignorable=True),
        f(
            "groups",
            array(
                struct(
                    "DescribedGroup",
                    [
                        f("error_code", INT16),
                        f("group_id", STRING),
                        f("group_state", STRING),
                        f("protocol_type", STRING),
                        f("protocol_data", STRING),
                        f(
                            "members",
                            array(
                                struct(
                                    "DescribedGroupMember",
                                    [
                                        f("member_id", STRING),
                                        f(
                                            "group_instance_id",
                                            STRING,
                                            "4+",
                                            nullable="4+",
                                            default=None,
                                            ignorable=True,
                                        ),
                                        f("client_id", STRING),
                                        f("client_host", STRING),
                                        f("member_metadata", BYTES),
                                        f("member_assignment", BYTES),
                                    ],
                                )
                            ),
                        ),
                        f("authorized_operations", INT32, "3+", default=-2147483648),
                    ],
                )
            ),
        ),
    ],
)


LIST_GROUPS = Api(
    16,
    "ListGroups",
    "0-5",
    "3+",
    request=[f("states_filter", array(STRING), "4+"), f("types_filter", array(STRING), "5+")],
    response=[
        f("throttle_time_ms", INT32, "1+", ignorable=True),
        f("error_code", INT16),
        f(
            "groups",
            array(
                struct(
                    "ListedGroup",
                    [
                        f("group_id", STRING),
                        f("protocol_type", STRING),
                        f("group_state", STRING, "4+", ignorable=True),
                        f("group_type", STRING, "5+", ignorable=True),
                    ],
                )
            ),
        ),
    ],
)


DELETE_GROUPS = Api(
    42,
    "DeleteGroups",
    "0-2",
    "2+",
    request=[f("groups_names", array(STRING))],
    response=[
        f("throttle_time_ms", INT32),
        f(
            "results",
            array(struct("DeletableGroupResult", [f("group_id", STRING), f("error_code", INT16)])),
        ),
    ],
)


OFFSET_COMMIT = Api(
    8,
    "OffsetCommit",
    "0-9",
    "8+",
    request=[
        f("group_id", STRING),
        f("generation_id_or_member_epoch", INT32, "1+", default=-1, ignorable=True),
        f("member_id", STRING, "1+", ignorable=True),
        f("group_instance_id", STRING, "7+", nullable="7+", default=None),
        f("retention_time_ms", INT64, "2-4", default=-1, ignorable=True),
        f(
            "topics",
            array(
                struct(
                    "OffsetCommitRequestTopic",
                    [
                        f("name", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "OffsetCommitRequestPartition",
                                    [
                                        f("partition_index", INT32),
                                        f("committed_offset", INT64),
                                        f(
                                            "committed_leader_epoch",
                                            INT32,
                                            "6+",
                                            default=-1,
                                            ignorable=True,
                                        ),
                                        f("commit_timestamp", INT64, "1", default=-1),
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
        f("throttle_time_ms", INT32, "3+", ignorable=True),
        f(
            "topics",
            array(
                struct(
                    "OffsetCommitResponseTopic",
                    [
                        f("name", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "OffsetCommitResponsePartition",
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


OFFSET_FETCH = Api(
    9,
    "OffsetFetch",
    "0-9",
    "6+",
    request=[
        f("group_id", STRING, "0-7"),
        f(
            "topics",
            array(
                struct(
                    "OffsetFetchRequestTopic",
                    [f("name", STRING, "0-7"), f("partition_indexes", array(INT32), "0-7")],
                )
            ),
            "0-7",
            nullable="2-7",
        ),
        f(
            "groups",
            array(
                struct(
                    "OffsetFetchRequestGroup",
                    [
                        f("group_id", STRING, "8+"),
                        f("member_id", STRING, "9+", nullable="9+", default=None, ignorable=True),
                        f("member_epoch", INT32, "9+", default=-1, ignorable=True),
                        f(
                            "topics",
                            array(
                                struct(
                                    "OffsetFetchRequestTopics",
                                    [
                                        f("name", STRING, "8+"),
                                        f("partition_indexes", array(INT32), "8+"),
                                    ],
                                )
                            ),
                            "8+",
                            nullable="8+",
                        ),
                    ],
                )
            ),
            "8+",
        ),
        f("require_stable", BOOL, "7+"),
    ],
    response=[
        f("throttle_time_ms", INT32, "3+", ignorable=True),
        f(
            "topics",
            array(
                struct(
                    "OffsetFetchResponseTopic",
                    [
                        f("name", STRING, "0-7"),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "OffsetFetchResponsePartition",
                                    [
                                        f("partition_index", INT32, "0-7"),
                                        f("committed_offset", INT64, "0-7"),
                                        f(
                                            "committed_leader_epoch",
                                            INT32,
                                            "5-7",
                                            default=-1,
                                            ignorable=True,
                                        ),
                                        f("metadata", STRING, "0-7", nullable="0-7"),
                                        f("error_code", INT16, "0-7"),
                                    ],
                                )
                            ),
                            "0-7",
                        ),
                    ],
                )
            ),
            "0-7",
        ),
        f("error_code", INT16, "2-7", ignorable=True),
        f(
            "groups",
            array(
                struct(
                    "OffsetFetchResponseGroup",
                    [
                        f("group_id", STRING, "8+"),
                        f(
                            "topics",
                            array(
                                struct(
                                    "OffsetFetchResponseTopics",
                                    [
                                        f("name", STRING, "8+"),
                                        f(
                                            "partitions",
                                            array(
                                                struct(
                                                    "OffsetFetchResponsePartitions",
                                                    [
                                                        f("partition_index", INT32, "8+"),
                                                        f("committed_offset", INT64, "8+"),
                                                        f(
                                                            "committed_leader_epoch",
                                                            INT32,
                                                            "8+",
                                                            default=-1,
                                                            ignorable=True,
                                                        ),
                                                        f("metadata", STRING, "8+", nullable="8+"),
                                                        f("error_code", INT16, "8+"),
                                                    ],
                                                )
                                            ),
                                            "8+",
                                        ),
                                    ],
                                )
                            ),
                            "8+",
                        ),
                        f("error_code", INT16, "8+"),
                    ],
                )
            ),
            "8+",
        ),
    ],
)


OFFSET_DELETE = Api(
    47,
    "OffsetDelete",
    "0",
    "none",
    request=[
        f("group_id", STRING),
        f(
            "topics",
            array(
                struct(
                    "OffsetDeleteRequestTopic",
                    [
                        f("name", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "OffsetDeleteRequestPartition", [f("partition_index", INT32)]
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
    ],
    response=[
        f("error_code", INT16),
        f("throttle_time_ms", INT32, ignorable=True),
        f(
            "topics",
            array(
                struct(
                    "OffsetDeleteResponseTopic",
                    [
                        f("name", STRING),
                        f(
                            "partitions",
                            array(
                                struct(
                                    "OffsetDeleteResponsePartition",
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
