"""One definition per Kafka API, each covering every version up to Kafka 4.0.

Import the constants (``PRODUCE``, ``FETCH``, ...) or look an API up by its key in
``BY_KEY``. ``ALL_APIS`` lists them in key order.
"""

from __future__ import annotations

from ..schema import Api
from .acls import CREATE_ACLS, DELETE_ACLS, DESCRIBE_ACLS
from .admin import (
    ALTER_CONFIGS,
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    DESCRIBE_CONFIGS,
    INCREMENTAL_ALTER_CONFIGS,
)
from .cluster import API_VERSIONS, DESCRIBE_CLUSTER, METADATA
from .fetch import FETCH
from .group import (
    DELETE_GROUPS,
    DESCRIBE_GROUPS,
    FIND_COORDINATOR,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_DELETE,
    OFFSET_FETCH,
    SYNC_GROUP,
)
from .offsets import DELETE_RECORDS, LIST_OFFSETS, OFFSET_FOR_LEADER_EPOCH
from .produce import PRODUCE
from .sasl import (
    ALTER_USER_SCRAM_CREDENTIALS,
    DESCRIBE_USER_SCRAM_CREDENTIALS,
    SASL_AUTHENTICATE,
    SASL_HANDSHAKE,
)
from .txn import (
    ADD_OFFSETS_TO_TXN,
    ADD_PARTITIONS_TO_TXN,
    END_TXN,
    INIT_PRODUCER_ID,
    TXN_OFFSET_COMMIT,
)

ALL_APIS: tuple[Api, ...] = tuple(
    sorted(
        [
            ADD_OFFSETS_TO_TXN,
            ADD_PARTITIONS_TO_TXN,
            ALTER_CONFIGS,
            ALTER_USER_SCRAM_CREDENTIALS,
            API_VERSIONS,
            CREATE_ACLS,
            CREATE_PARTITIONS,
            CREATE_TOPICS,
            DELETE_ACLS,
            DELETE_GROUPS,
            DELETE_RECORDS,
            DELETE_TOPICS,
            DESCRIBE_ACLS,
            DESCRIBE_CLUSTER,
            DESCRIBE_CONFIGS,
            DESCRIBE_GROUPS,
            DESCRIBE_USER_SCRAM_CREDENTIALS,
            END_TXN,
            FETCH,
            FIND_COORDINATOR,
            HEARTBEAT,
            INCREMENTAL_ALTER_CONFIGS,
            INIT_PRODUCER_ID,
            JOIN_GROUP,
            LEAVE_GROUP,
            LIST_GROUPS,
            LIST_OFFSETS,
            METADATA,
            OFFSET_COMMIT,
            OFFSET_DELETE,
            OFFSET_FETCH,
            OFFSET_FOR_LEADER_EPOCH,
            PRODUCE,
            SASL_AUTHENTICATE,
            SASL_HANDSHAKE,
            SYNC_GROUP,
            TXN_OFFSET_COMMIT,
        ],
        key=lambda api: api.key,
    )
)

BY_KEY: dict[int, Api] = {api.key: api for api in ALL_APIS}
assert len(BY_KEY) == len(ALL_APIS), "two APIs share a key"

__all__ = [
    "ADD_OFFSETS_TO_TXN",
    "ADD_PARTITIONS_TO_TXN",
    "ALL_APIS",
    "ALTER_CONFIGS",
    "ALTER_USER_SCRAM_CREDENTIALS",
    "API_VERSIONS",
    "BY_KEY",
    "CREATE_ACLS",
    "CREATE_PARTITIONS",
    "CREATE_TOPICS",
    "DELETE_ACLS",
    "DELETE_GROUPS",
    "DELETE_RECORDS",
    "DELETE_TOPICS",
    "DESCRIBE_ACLS",
    "DESCRIBE_CLUSTER",
    "DESCRIBE_CONFIGS",
    "DESCRIBE_GROUPS",
    "DESCRIBE_USER_SCRAM_CREDENTIALS",
    "END_TXN",
    "FETCH",
    "FIND_COORDINATOR",
    "HEARTBEAT",
    "INCREMENTAL_ALTER_CONFIGS",
    "INIT_PRODUCER_ID",
    "JOIN_GROUP",
    "LEAVE_GROUP",
    "LIST_GROUPS",
    "LIST_OFFSETS",
    "METADATA",
    "OFFSET_COMMIT",
    "OFFSET_DELETE",
    "OFFSET_FETCH",
    "OFFSET_FOR_LEADER_EPOCH",
    "PRODUCE",
    "SASL_AUTHENTICATE",
    "SASL_HANDSHAKE",
    "SYNC_GROUP",
    "TXN_OFFSET_COMMIT",
]
