"""The admin client: manage topics, partitions, groups, offsets, configs, records, ACLs and
SCRAM users, delegation tokens, client quotas, log dirs, features, the metadata quorum,
transactions and producers, and share groups.

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

from .client import AdminClient
from .cluster_ops import (
    BrokerLogDirs,
    FeatureMetadata,
    FeatureUpdate,
    FeatureUpdateResult,
    FeatureUpgradeType,
    FinalizedVersionRange,
    LogDirDescription,
    QuorumInfo,
    QuorumNode,
    QuorumReplica,
    ReplicaInfo,
    SupportedVersionRange,
)
from .config import AdminSettings
from .delegation_tokens import DelegationToken
from .group_members import MemberToRemove, RemoveMemberResult
from .quotas import (
    ClientQuotaAlteration,
    ClientQuotaAlterResult,
    ClientQuotaEntity,
    ClientQuotaFilter,
)
from .reassignments import PartitionReassignment, ReassignmentResult
from .results import (
    AclCreationResult,
    AclDeletionResult,
    AlterConfigsResult,
    BrokerDescription,
    ClusterDescription,
    ConfigDescription,
    ConfigEntry,
    ConfigSynonym,
    ConsumerGroupDescription,
    ConsumerGroupMember,
    CreatePartitionsResult,
    CreateTopicResult,
    DeleteGroupResult,
    DeleteRecordsResult,
    DeleteTopicResult,
    ElectLeadersResult,
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
from .scram import (
    ScramCredentialInfo,
    ScramDeletion,
    ScramMechanism,
    ScramUpsertion,
    UserScramCredentials,
    UserScramResult,
)
from .share_groups import (
    ShareGroupDescription,
    ShareGroupMember,
    ShareGroupOffset,
    ShareGroupTopicResult,
)
from .transactions import (
    AbortTransactionSpec,
    FenceProducerResult,
    PartitionProducers,
    ProducerState,
    TransactionDescription,
    TransactionListing,
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
    ElectionType,
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
    "AbortTransactionSpec",
    "AclBinding",
    "AclBindingFilter",
    "AclCreationResult",
    "AclDeletionResult",
    "AclOperation",
    "AclPermissionType",
    "AdminClient",
    "AdminSettings",
    "AlterConfigOp",
    "AlterConfigOpType",
    "AlterConfigsResult",
    "BrokerDescription",
    "BrokerLogDirs",
    "ClientQuotaAlterResult",
    "ClientQuotaAlteration",
    "ClientQuotaEntity",
    "ClientQuotaFilter",
    "ClusterDescription",
    "ConfigDescription",
    "ConfigEntry",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigSource",
    "ConfigSynonym",
    "ConfigType",
    "ConsumerGroupDescription",
    "ConsumerGroupMember",
    "CreatePartitionsResult",
    "CreateTopicResult",
    "DelegationToken",
    "DeleteGroupResult",
    "DeleteRecordsResult",
    "DeleteTopicResult",
    "ElectLeadersResult",
    "ElectionType",
    "FeatureMetadata",
    "FeatureUpdate",
    "FeatureUpdateResult",
    "FeatureUpgradeType",
    "FenceProducerResult",
    "FinalizedVersionRange",
    "GroupDescription",
    "GroupListing",
    "GroupOffset",
    "IsolationLevel",
    "ListOffsetsResult",
    "LogDirDescription",
    "MemberDescription",
    "MemberToRemove",
    "NewPartitions",
    "NewTopic",
    "OffsetSpec",
    "PartitionDescription",
    "PartitionProducers",
    "PartitionReassignment",
    "PartitionResult",
    "PatternType",
    "ProducerState",
    "QuorumInfo",
    "QuorumNode",
    "QuorumReplica",
    "ReassignmentResult",
    "RemoveMemberResult",
    "ReplicaInfo",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
    "ResultMap",
    "ScramCredentialInfo",
    "ScramDeletion",
    "ScramMechanism",
    "ScramUpsertion",
    "ShareGroupDescription",
    "ShareGroupMember",
    "ShareGroupOffset",
    "ShareGroupTopicResult",
    "SupportedVersionRange",
    "TopicDescription",
    "TopicListing",
    "TransactionDescription",
    "TransactionListing",
    "UserScramCredentials",
    "UserScramResult",
]
