"""The admin client: manage topics, partitions, groups, offsets, configs, records and ACLs.

::

    from kafka_async import AdminClient, NewTopic

    async with AdminClient(bootstrap_servers="localhost:9092") as admin:
        results = await admin.create_topics([NewTopic("orders", num_partitions=6)])
        for name, r in results.items():
            print(name, r.error or "created")

Batch calls return a :class:`ResultMap` with one result per item; ``raise_on_error=True``
(or ``result.raise_first()``) raises the first item's typed error instead.
"""

from __future__ import annotations

from .client import AdminClient, AdminStatistics
from .config import AdminSettings
from .results import (
    AclCreationResult,
    AclDeletionResult,
    AlterConfigsResult,
    BrokerDescription,
    ClusterDescription,
    ConfigDescription,
    ConfigEntry,
    ConfigSynonym,
    CreatePartitionsResult,
    CreateTopicResult,
    DeleteGroupResult,
    DeleteRecordsResult,
    DeleteTopicResult,
    GroupDescription,
    GroupListing,
    GroupOffset,
    ListOffsetsResult,
    MemberDescription,
    PartitionDescription,
    PartitionResult,
    ResultMap,
    TopicDescription,
    TopicListing,
)
from .types import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResource,
    ConfigResourceType,
    ConfigSource,
    ConfigType,
    IsolationLevel,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)

__all__ = [
    "AclBinding",
    "AclBindingFilter",
    "AclCreationResult",
    "AclDeletionResult",
    "AclOperation",
    "AclPermissionType",
    "AdminClient",
    "AdminSettings",
    "AdminStatistics",
    "AlterConfigOp",
    "AlterConfigOpType",
    "AlterConfigsResult",
    "BrokerDescription",
    "ClusterDescription",
    "ConfigDescription",
    "ConfigEntry",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigSource",
    "ConfigSynonym",
    "ConfigType",
    "CreatePartitionsResult",
    "CreateTopicResult",
    "DeleteGroupResult",
    "DeleteRecordsResult",
    "DeleteTopicResult",
    "GroupDescription",
    "GroupListing",
    "GroupOffset",
    "IsolationLevel",
    "ListOffsetsResult",
    "MemberDescription",
    "NewPartitions",
    "NewTopic",
    "OffsetSpec",
    "PartitionDescription",
    "PartitionResult",
    "PatternType",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
    "ResultMap",
    "TopicDescription",
    "TopicListing",
]
