# Generated from kafka_async/protocol/definitions/write_txn_markers.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""WriteTxnMarkers: write commit or abort markers of producers' transactions to partitions (the
admin client aborts a hanging transaction with it).

Versions 1, flexible 1+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BOOL,
    INT16,
    INT32,
    INT64,
    MISSING,
    STRING,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class WriteTxnMarkersRequest(Message):
    """The WriteTxnMarkers request (key 27)."""

    __slots__ = ("markers",)

    markers: list[WritableTxnMarker]
    """The markers to write, one per producer."""

    def __init__(self, *, markers: list[WritableTxnMarker] = MISSING) -> None:
        self.markers = [] if markers is MISSING else markers


class WritableTxnMarker(Message):
    """The markers to write, one per producer."""

    __slots__ = (
        "producer_id",
        "producer_epoch",
        "transaction_result",
        "topics",
        "coordinator_epoch",
    )

    producer_id: int
    """The producer whose transaction ends."""
    producer_epoch: int
    """The producer's epoch."""
    transaction_result: bool
    """True commits, false aborts."""
    topics: list[WritableTxnMarkerTopic]
    """The partitions to write the marker to, by topic."""
    coordinator_epoch: int
    """The epoch of the transaction coordinator writing it."""

    def __init__(
        self,
        *,
        producer_id: int = 0,
        producer_epoch: int = 0,
        transaction_result: bool = False,
        topics: list[WritableTxnMarkerTopic] = MISSING,
        coordinator_epoch: int = 0,
    ) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.transaction_result = transaction_result
        self.topics = [] if topics is MISSING else topics
        self.coordinator_epoch = coordinator_epoch


class WritableTxnMarkerTopic(Message):
    """The partitions to write the marker to, by topic."""

    __slots__ = ("name", "partition_indexes")

    name: str
    """Topic name."""
    partition_indexes: list[int]
    """Partition indexes."""

    def __init__(self, *, name: str = "", partition_indexes: list[int] = MISSING) -> None:
        self.name = name
        self.partition_indexes = [] if partition_indexes is MISSING else partition_indexes


class WriteTxnMarkersResponse(Message):
    """The WriteTxnMarkers response (key 27)."""

    __slots__ = ("markers",)

    markers: list[WritableTxnMarkerResult]
    """One result per producer."""

    def __init__(self, *, markers: list[WritableTxnMarkerResult] = MISSING) -> None:
        self.markers = [] if markers is MISSING else markers


class WritableTxnMarkerResult(Message):
    """One result per producer."""

    __slots__ = ("producer_id", "topics")

    producer_id: int
    """The producer."""
    topics: list[WritableTxnMarkerTopicResult]
    """Results by topic."""

    def __init__(
        self, *, producer_id: int = 0, topics: list[WritableTxnMarkerTopicResult] = MISSING
    ) -> None:
        self.producer_id = producer_id
        self.topics = [] if topics is MISSING else topics


class WritableTxnMarkerTopicResult(Message):
    """Results by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[WritableTxnMarkerPartitionResult]
    """Results by partition."""

    def __init__(
        self, *, name: str = "", partitions: list[WritableTxnMarkerPartitionResult] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class WritableTxnMarkerPartitionResult(Message):
    """Results by partition."""

    __slots__ = ("partition_index", "error_code")

    partition_index: int
    """Partition index."""
    error_code: int
    """0, or the error (errors.py) for this partition."""

    def __init__(self, *, partition_index: int = 0, error_code: int = 0) -> None:
        self.partition_index = partition_index
        self.error_code = error_code


# The schema the codecs are compiled from (nested structs first).
_WRITABLE_TXN_MARKER_TOPIC = StructDef(
    "WritableTxnMarkerTopic",
    [Field("name", STRING), Field("partition_indexes", array(INT32))],
    WritableTxnMarkerTopic,
)
_WRITABLE_TXN_MARKER = StructDef(
    "WritableTxnMarker",
    [
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("transaction_result", BOOL),
        Field("topics", array(_WRITABLE_TXN_MARKER_TOPIC)),
        Field("coordinator_epoch", INT32),
    ],
    WritableTxnMarker,
)
_WRITE_TXN_MARKERS_REQUEST = StructDef(
    "WriteTxnMarkersRequest",
    [Field("markers", array(_WRITABLE_TXN_MARKER))],
    WriteTxnMarkersRequest,
)
_WRITABLE_TXN_MARKER_PARTITION_RESULT = StructDef(
    "WritableTxnMarkerPartitionResult",
    [Field("partition_index", INT32), Field("error_code", INT16)],
    WritableTxnMarkerPartitionResult,
)
_WRITABLE_TXN_MARKER_TOPIC_RESULT = StructDef(
    "WritableTxnMarkerTopicResult",
    [Field("name", STRING), Field("partitions", array(_WRITABLE_TXN_MARKER_PARTITION_RESULT))],
    WritableTxnMarkerTopicResult,
)
_WRITABLE_TXN_MARKER_RESULT = StructDef(
    "WritableTxnMarkerResult",
    [Field("producer_id", INT64), Field("topics", array(_WRITABLE_TXN_MARKER_TOPIC_RESULT))],
    WritableTxnMarkerResult,
)
_WRITE_TXN_MARKERS_RESPONSE = StructDef(
    "WriteTxnMarkersResponse",
    [Field("markers", array(_WRITABLE_TXN_MARKER_RESULT))],
    WriteTxnMarkersResponse,
)

WRITE_TXN_MARKERS: Api[WriteTxnMarkersRequest, WriteTxnMarkersResponse] = Api(
    27,
    "WriteTxnMarkers",
    "1",
    "1+",
    _WRITE_TXN_MARKERS_REQUEST,
    _WRITE_TXN_MARKERS_RESPONSE,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
"""WriteTxnMarkers (key 27), versions 1."""
