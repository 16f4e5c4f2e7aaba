"""Cluster layer: the metadata snapshot (pure) and ``ClusterClient`` (pool + metadata
refresh + coordinator lookups)."""

from __future__ import annotations

from .client import GROUP, TRANSACTION, ClusterClient
from .metadata import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo

__all__ = [
    "GROUP",
    "TRANSACTION",
    "BrokerInfo",
    "ClusterClient",
    "ClusterMetadata",
    "PartitionInfo",
    "TopicInfo",
]
