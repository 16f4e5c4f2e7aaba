"""Access control lists: DescribeAcls (29), CreateAcls (30), DeleteAcls (31)."""

from __future__ import annotations

from ..schema import (
    INT8,
    INT16,
    INT32,
    STRING,
    Api,
    array,
    f,
    struct,
)

DESCRIBE_ACLS = Api(
    29,
    "DescribeAcls",
    "0-3",
    "2+",
    request=[
        f("resource_type_filter", INT8),
        f("resource_name_filter", STRING, nullable="0+"),
        f("pattern_type_filter", INT8, "1+", default=3),
        f("principal_filter", STRING, nullable="0+"),
        f("host_filter", STRING, nullable="0+"),
        f("operation", INT8),
        f("permission_type", INT8),
    ],
    response=[
        f("throttle_time_ms", INT32),
        f("error_code", INT16),
        f("error_message", STRING, nullable="0+"),
        f(
            "resources",
            array(
                struct(
                    "DescribeAclsResource",
                    [
                        f("resource_type", INT8),
                        f("resource_name", STRING),
                        f("pattern_type", INT8, "1+", default=3),
                        f(
                            "acls",
                            array(
                                struct(
                                    "AclDescription",
                                    [
                                        f("principal", STRING),
                                        f("host", STRING),
                                        f("operation", INT8),
                                        f("permission_type", INT8),
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


CREATE_ACLS = Api(
    30,
    "CreateAcls",
    "0-3",
    "2+",
    request=[
        f(
            "creations",
            array(
                struct(
                    "AclCreation",
                    [
                        f("resource_type", INT8),
                        f("resource_name", STRING),
                        f("resource_pattern_type", INT8, "1+", default=3),
                        f("principal", STRING),
                        f("host", STRING),
                        f("operation", INT8),
                        f("permission_type", INT8),
                    ],
                )
            ),
        )
    ],
    response=[
        f("throttle_time_ms", INT32),
        f(
            "results",
            array(
                struct(
                    "AclCreationResult",
                    [f("error_code", INT16), f("error_message", STRING, nullable="0+")],
                )
            ),
        ),
    ],
)


DELETE_ACLS = Api(
    31,
    "DeleteAcls",
    "0-3",
    "2+",
    request=[
        f(
            "filters",
            array(
                struct(
                    "DeleteAclsFilter",
                    [
                        f("resource_type_filter", INT8),
                        f("resource_name_filter", STRING, nullable="0+"),
                        f("pattern_type_filter", INT8, "1+", default=3),
                        f("principal_filter", STRING, nullable="0+"),
                        f("host_filter", STRING, nullable="0+"),
                        f("operation", INT8),
                        f("permission_type", INT8),
                    ],
                )
            ),
        )
    ],
    response=[
        f("throttle_time_ms", INT32),
        f(
            "filter_results",
            array(
                struct(
                    "DeleteAclsFilterResult",
                    [
                        f("error_code", INT16),
                        f("error_message", STRING, nullable="0+"),
                        f(
                            "matching_acls",
                            array(
                                struct(
                                    "DeleteAclsMatchingAcl",
                                    [
                                        f("error_code", INT16),
                                        f("error_message", STRING, nullable="0+"),
                                        f("resource_type", INT8),
                                        f("resource_name", STRING),
                                        f("pattern_type", INT8, "1+", default=3),
                                        f("principal", STRING),
                                        f("host", STRING),
                                        f("operation", INT8),
                                        f("permission_type", INT8),
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
