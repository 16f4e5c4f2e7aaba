# Generated from kafka_async/protocol/definitions/*.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""Every Kafka API the client speaks, one generated module each.

Import the constants (``PRODUCE``, ``FETCH``, ...) from here and the message
classes from the module of their API (``from kafka_async.protocol.apis.produce
import ProduceRequest``), or look an API up by its key in ``BY_KEY``. ``ALL_APIS``
lists them in key order. The module of an API is imported when its constant is
first used, so importing a client loads only the APIs it speaks.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..schema import AnyApi
    from .add_offsets_to_txn import ADD_OFFSETS_TO_TXN
    from .add_partitions_to_txn import ADD_PARTITIONS_TO_TXN
    from .alter_client_quotas import ALTER_CLIENT_QUOTAS
    from .alter_configs import ALTER_CONFIGS
    from .alter_partition_reassignments import ALTER_PARTITION_REASSIGNMENTS
    from .alter_share_group_offsets import ALTER_SHARE_GROUP_OFFSETS
    from .alter_user_scram_credentials import ALTER_USER_SCRAM_CREDENTIALS
    from .api_versions import API_VERSIONS
    from .consumer_group_describe import CONSUMER_GROUP_DESCRIBE
    from .consumer_group_heartbeat import CONSUMER_GROUP_HEARTBEAT
    from .create_acls import CREATE_ACLS
    from .create_delegation_token import CREATE_DELEGATION_TOKEN
    from .create_partitions import CREATE_PARTITIONS
    from .create_topics import CREATE_TOPICS
    from .delete_acls import DELETE_ACLS
    from .delete_groups import DELETE_GROUPS
    from .delete_records import DELETE_RECORDS
    from .delete_share_group_offsets import DELETE_SHARE_GROUP_OFFSETS
    from .delete_topics import DELETE_TOPICS
    from .describe_acls import DESCRIBE_ACLS
    from .describe_client_quotas import DESCRIBE_CLIENT_QUOTAS
    from .describe_cluster import DESCRIBE_CLUSTER
    from .describe_configs import DESCRIBE_CONFIGS
    from .describe_delegation_token import DESCRIBE_DELEGATION_TOKEN
    from .describe_groups import DESCRIBE_GROUPS
    from .describe_log_dirs import DESCRIBE_LOG_DIRS
    from .describe_producers import DESCRIBE_PRODUCERS
    from .describe_quorum import DESCRIBE_QUORUM
    from .describe_share_group_offsets import DESCRIBE_SHARE_GROUP_OFFSETS
    from .describe_topic_partitions import DESCRIBE_TOPIC_PARTITIONS
    from .describe_transactions import DESCRIBE_TRANSACTIONS
    from .describe_user_scram_credentials import DESCRIBE_USER_SCRAM_CREDENTIALS
    from .elect_leaders import ELECT_LEADERS
    from .end_txn import END_TXN
    from .expire_delegation_token import EXPIRE_DELEGATION_TOKEN
    from .fetch import FETCH
    from .find_coordinator import FIND_COORDINATOR
    from .get_telemetry_subscriptions import GET_TELEMETRY_SUBSCRIPTIONS
    from .heartbeat import HEARTBEAT
    from .incremental_alter_configs import INCREMENTAL_ALTER_CONFIGS
    from .init_producer_id import INIT_PRODUCER_ID
    from .join_group import JOIN_GROUP
    from .leave_group import LEAVE_GROUP
    from .list_config_resources import LIST_CONFIG_RESOURCES
    from .list_groups import LIST_GROUPS
    from .list_offsets import LIST_OFFSETS
    from .list_partition_reassignments import LIST_PARTITION_REASSIGNMENTS
    from .list_transactions import LIST_TRANSACTIONS
    from .metadata import METADATA
    from .offset_commit import OFFSET_COMMIT
    from .offset_delete import OFFSET_DELETE
    from .offset_fetch import OFFSET_FETCH
    from .offset_for_leader_epoch import OFFSET_FOR_LEADER_EPOCH
    from .produce import PRODUCE
    from .push_telemetry import PUSH_TELEMETRY
    from .renew_delegation_token import RENEW_DELEGATION_TOKEN
    from .sasl_authenticate import SASL_AUTHENTICATE
    from .sasl_handshake import SASL_HANDSHAKE
    from .share_acknowledge import SHARE_ACKNOWLEDGE
    from .share_fetch import SHARE_FETCH
    from .share_group_describe import SHARE_GROUP_DESCRIBE
    from .share_group_heartbeat import SHARE_GROUP_HEARTBEAT
    from .sync_group import SYNC_GROUP
    from .txn_offset_commit import TXN_OFFSET_COMMIT
    from .update_features import UPDATE_FEATURES
    from .write_txn_markers import WRITE_TXN_MARKERS

    #: Every API, in key order (importing every module).
    ALL_APIS: tuple[AnyApi, ...]
    #: Every API by its key (importing every module).
    BY_KEY: dict[int, AnyApi]

#: The constant of each API -> the module defining it, in key order.
_MODULES: dict[str, str] = {
    "PRODUCE": "produce",
    "FETCH": "fetch",
    "LIST_OFFSETS": "list_offsets",
    "METADATA": "metadata",
    "OFFSET_COMMIT": "offset_commit",
    "OFFSET_FETCH": "offset_fetch",
    "FIND_COORDINATOR": "find_coordinator",
    "JOIN_GROUP": "join_group",
    "HEARTBEAT": "heartbeat",
    "LEAVE_GROUP": "leave_group",
    "SYNC_GROUP": "sync_group",
    "DESCRIBE_GROUPS": "describe_groups",
    "LIST_GROUPS": "list_groups",
    "SASL_HANDSHAKE": "sasl_handshake",
    "API_VERSIONS": "api_versions",
    "CREATE_TOPICS": "create_topics",
    "DELETE_TOPICS": "delete_topics",
    "DELETE_RECORDS": "delete_records",
    "INIT_PRODUCER_ID": "init_producer_id",
    "OFFSET_FOR_LEADER_EPOCH": "offset_for_leader_epoch",
    "ADD_PARTITIONS_TO_TXN": "add_partitions_to_txn",
    "ADD_OFFSETS_TO_TXN": "add_offsets_to_txn",
    "END_TXN": "end_txn",
    "WRITE_TXN_MARKERS": "write_txn_markers",
    "TXN_OFFSET_COMMIT": "txn_offset_commit",
    "DESCRIBE_ACLS": "describe_acls",
    "CREATE_ACLS": "create_acls",
    "DELETE_ACLS": "delete_acls",
    "DESCRIBE_CONFIGS": "describe_configs",
    "ALTER_CONFIGS": "alter_configs",
    "DESCRIBE_LOG_DIRS": "describe_log_dirs",
    "SASL_AUTHENTICATE": "sasl_authenticate",
    "CREATE_PARTITIONS": "create_partitions",
    "CREATE_DELEGATION_TOKEN": "create_delegation_token",
    "RENEW_DELEGATION_TOKEN": "renew_delegation_token",
    "EXPIRE_DELEGATION_TOKEN": "expire_delegation_token",
    "DESCRIBE_DELEGATION_TOKEN": "describe_delegation_token",
    "DELETE_GROUPS": "delete_groups",
    "ELECT_LEADERS": "elect_leaders",
    "INCREMENTAL_ALTER_CONFIGS": "incremental_alter_configs",
    "ALTER_PARTITION_REASSIGNMENTS": "alter_partition_reassignments",
    "LIST_PARTITION_REASSIGNMENTS": "list_partition_reassignments",
    "OFFSET_DELETE": "offset_delete",
    "DESCRIBE_CLIENT_QUOTAS": "describe_client_quotas",
    "ALTER_CLIENT_QUOTAS": "alter_client_quotas",
    "DESCRIBE_USER_SCRAM_CREDENTIALS": "describe_user_scram_credentials",
    "ALTER_USER_SCRAM_CREDENTIALS": "alter_user_scram_credentials",
    "DESCRIBE_QUORUM": "describe_quorum",
    "UPDATE_FEATURES": "update_features",
    "DESCRIBE_CLUSTER": "describe_cluster",
    "DESCRIBE_PRODUCERS": "describe_producers",
    "DESCRIBE_TRANSACTIONS": "describe_transactions",
    "LIST_TRANSACTIONS": "list_transactions",
    "CONSUMER_GROUP_HEARTBEAT": "consumer_group_heartbeat",
    "CONSUMER_GROUP_DESCRIBE": "consumer_group_describe",
    "GET_TELEMETRY_SUBSCRIPTIONS": "get_telemetry_subscriptions",
    "PUSH_TELEMETRY": "push_telemetry",
    "LIST_CONFIG_RESOURCES": "list_config_resources",
    "DESCRIBE_TOPIC_PARTITIONS": "describe_topic_partitions",
    "SHARE_GROUP_HEARTBEAT": "share_group_heartbeat",
    "SHARE_GROUP_DESCRIBE": "share_group_describe",
    "SHARE_FETCH": "share_fetch",
    "SHARE_ACKNOWLEDGE": "share_acknowledge",
    "DESCRIBE_SHARE_GROUP_OFFSETS": "describe_share_group_offsets",
    "ALTER_SHARE_GROUP_OFFSETS": "alter_share_group_offsets",
    "DELETE_SHARE_GROUP_OFFSETS": "delete_share_group_offsets",
}


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        # PEP 562: runs once per name; the value is then a plain module global.
        module = _MODULES.get(name)
        if module is not None:
            value = getattr(importlib.import_module(f".{module}", __name__), name)
        elif name == "ALL_APIS":
            value = tuple(__getattr__(constant) for constant in _MODULES)
        elif name == "BY_KEY":
            value = {api.key: api for api in __getattr__("ALL_APIS")}
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*globals(), *__all__])


__all__ = [
    "ADD_OFFSETS_TO_TXN",
    "ADD_PARTITIONS_TO_TXN",
    "ALL_APIS",
    "ALTER_CLIENT_QUOTAS",
    "ALTER_CONFIGS",
    "ALTER_PARTITION_REASSIGNMENTS",
    "ALTER_SHARE_GROUP_OFFSETS",
    "ALTER_USER_SCRAM_CREDENTIALS",
    "API_VERSIONS",
    "BY_KEY",
    "CONSUMER_GROUP_DESCRIBE",
    "CONSUMER_GROUP_HEARTBEAT",
    "CREATE_ACLS",
    "CREATE_DELEGATION_TOKEN",
    "CREATE_PARTITIONS",
    "CREATE_TOPICS",
    "DELETE_ACLS",
    "DELETE_GROUPS",
    "DELETE_RECORDS",
    "DELETE_SHARE_GROUP_OFFSETS",
    "DELETE_TOPICS",
    "DESCRIBE_ACLS",
    "DESCRIBE_CLIENT_QUOTAS",
    "DESCRIBE_CLUSTER",
    "DESCRIBE_CONFIGS",
    "DESCRIBE_DELEGATION_TOKEN",
    "DESCRIBE_GROUPS",
    "DESCRIBE_LOG_DIRS",
    "DESCRIBE_PRODUCERS",
    "DESCRIBE_QUORUM",
    "DESCRIBE_SHARE_GROUP_OFFSETS",
    "DESCRIBE_TOPIC_PARTITIONS",
    "DESCRIBE_TRANSACTIONS",
    "DESCRIBE_USER_SCRAM_CREDENTIALS",
    "ELECT_LEADERS",
    "END_TXN",
    "EXPIRE_DELEGATION_TOKEN",
    "FETCH",
    "FIND_COORDINATOR",
    "GET_TELEMETRY_SUBSCRIPTIONS",
    "HEARTBEAT",
    "INCREMENTAL_ALTER_CONFIGS",
    "INIT_PRODUCER_ID",
    "JOIN_GROUP",
    "LEAVE_GROUP",
    "LIST_CONFIG_RESOURCES",
    "LIST_GROUPS",
    "LIST_OFFSETS",
    "LIST_PARTITION_REASSIGNMENTS",
    "LIST_TRANSACTIONS",
    "METADATA",
    "OFFSET_COMMIT",
    "OFFSET_DELETE",
    "OFFSET_FETCH",
    "OFFSET_FOR_LEADER_EPOCH",
    "PRODUCE",
    "PUSH_TELEMETRY",
    "RENEW_DELEGATION_TOKEN",
    "SASL_AUTHENTICATE",
    "SASL_HANDSHAKE",
    "SHARE_ACKNOWLEDGE",
    "SHARE_FETCH",
    "SHARE_GROUP_DESCRIBE",
    "SHARE_GROUP_HEARTBEAT",
    "SYNC_GROUP",
    "TXN_OFFSET_COMMIT",
    "UPDATE_FEATURES",
    "WRITE_TXN_MARKERS",
]
