"""Record batches through a real broker, against librdkafka (confluent-kafka) and aiokafka.

* confluent-kafka produces with each codec (keys, null values, headers); we fetch the raw
  partition bytes with a Fetch request over a plain socket and decode them exactly.
* We encode batches with each codec and send them in a raw Produce request; confluent-kafka
  (assign mode) and aiokafka's consumer read them back exactly.

The raw requests use only the protocol layer (``headers`` + the API definitions), so a bug in
the connection or consumer layers cannot hide or fake a records-layer result.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable
from typing import Any

import pytest

from kafka_async.protocol import headers as wire_headers
from kafka_async.protocol.apis.fetch import FETCH
from kafka_async.protocol.apis.produce import PRODUCE
from kafka_async.protocol.codec import Reader
from kafka_async.protocol.schema import AnyApi
from kafka_async.records import BatchBuilder, Record, decode_batches

pytestmark = [pytest.mark.integration, pytest.mark.interop]

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
FETCH_VERSION = 12  # the last version addressing topics by name
PRODUCE_VERSION = 9
DEADLINE = 20.0

Header = tuple[str, "bytes | None"]
Row = tuple[int, "bytes | None", "bytes | None", list[Header]]


#: An hour back: inside the broker's 7-day retention (records stamped long ago are deleted by
#: time while the run goes on) and not in its future.
BASE_TS = int(time.time() * 1000) - 3_600_000


def rows(n: int = 60) -> list[Row]:
    base = BASE_TS
    out: list[Row] = []
    for i in range(n):
        key = None if i % 5 == 0 else b"key-%d" % i
        value = None if i % 7 == 3 else (b"value-%d-" % i) * (1 + i % 9)
        hdrs: list[Header] = []
        if i % 2:
            hdrs = [("trace-id", b"t%d" % i), ("nullable", None), ("\u00e9", b"")]
        out.append((base + i * 3, key, value, hdrs))
    return out


def expected(data: list[Row]) -> list[Record]:
    return [Record(i, ts, k, v, tuple(h)) for i, (ts, k, v, h) in enumerate(data)]


class RawClient:
    """One plain blocking socket speaking size-prefixed Kafka frames."""

    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=DEADLINE)
        self.sock.settimeout(DEADLINE)
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def _recv(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            buf += chunk
        return bytes(buf)

    def request(self, api: AnyApi, version: int, body: dict[str, Any]) -> Any:
        self.correlation_id += 1
        frame = wire_headers.encode_request(
            api, version, self.correlation_id, "records-interop", body
        )
        self.sock.sendall(struct.pack(">i", len(frame)) + frame)
        (size,) = struct.unpack(">i", self._recv(4))
        reader = Reader(self._recv(size))
        assert wire_headers.read_response_header(reader, api, version) == self.correlation_id
        return api.decode_response(version, reader)

    def fetch_raw(self, topic: str, offset: int) -> tuple[int, int, bytes]:
        """(error_code, high_watermark, records bytes) of partition 0 from ``offset``."""
        resp = self.request(
            FETCH,
            FETCH_VERSION,
            {
                "replica_id": -1,
                "max_wait_ms": 200,
                "min_bytes": 1,
                "max_bytes": 8 << 20,
                "isolation_level": 0,
                "session_id": 0,
                "session_epoch": -1,
                "topics": [
                    {
                        "topic": topic,
                        "partitions": [
                            {
                                "partition": 0,
                                "fetch_offset": offset,
                                "partition_max_bytes": 8 << 20,
                            }
                        ],
                    }
                ],
                "forgotten_topics_data": [],
                "rack_id": "",
            },
        )
        assert resp.error_code == 0
        part = resp.responses[0].partitions[0]
        return part.error_code, part.high_watermark, bytes(part.records or b"")

    def produce_raw(self, topic: str, batch: bytes) -> tuple[int, int]:
        """(error_code, base_offset) of one batch produced to partition 0 with acks=all."""
        resp = self.request(
            PRODUCE,
            PRODUCE_VERSION,
            {
                "transactional_id": None,
                "acks": -1,
                "timeout_ms": 10_000,
                "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}],
            },
        )
        part = resp.responses[0].partition_responses[0]
        return part.error_code, part.base_offset


def fetch_all(bootstrap: str, topic: str, want: int) -> tuple[list[Any], list[Record]]:
    """Fetch raw bytes until ``want`` records have been decoded (or the deadline passes)."""
    client = RawClient(bootstrap)
    batches: list[Any] = []
    records: list[Record] = []
    offset = 0
    deadline = time.monotonic() + DEADLINE
    try:
        while len(records) < want:
            assert time.monotonic() < deadline, f"only {len(records)} of {want} records"
            error, _, raw = client.fetch_raw(topic, offset)
            assert error == 0
            for batch in decode_batches(raw):
                batches.append(batch)
                records.extend(r for r in batch.records() if r.offset >= offset)
                offset = batch.next_offset
    finally:
        client.close()
    return batches, records


@pytest.mark.parametrize("codec", CODECS)
def test_librdkafka_batches_decode_exactly(
    impl: str, codec: str, kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    topic = new_topic(prefix=f"rec-rdk-{codec}")
    data = rows()
    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": kafka_broker,
            "compression.type": codec,
            "linger.ms": 50,
            "enable.idempotence": False,
            "acks": "all",
        }
    )
    failures: list[Any] = []
    for ts, key, value, hdrs in data:
        producer.produce(
            topic,
            value=value,
            key=key,
            partition=0,
            timestamp=ts,
            headers=hdrs or None,
            on_delivery=lambda err, _msg: failures.append(err) if err else None,
        )
    try:
        assert producer.flush(DEADLINE) == 0
    finally:
        producer.close()
    assert failures == []

    batches, records = fetch_all(kafka_broker, topic, len(data))
    assert records == expected(data)
    # librdkafka batched the records (linger), compressed as asked. A batch that the codec
    # would make larger (a small one, with gzip's header) librdkafka sends uncompressed.
    assert len(batches) < len(data)
    codecs = {b.compression_type for b in batches}
    assert CODECS.index(codec) in codecs
    assert codecs <= {0, CODECS.index(codec)}
    assert all(b.magic == 2 and b.timestamp_type == 0 for b in batches)


def our_batches(codec: str, data: list[Row]) -> list[bytes]:
    """The rows as several batches (small size limit), as a producer would send them."""
    out: list[bytes] = []
    builder = BatchBuilder(codec, batch_size_limit=1024)
    for ts, key, value, hdrs in data:
        if builder.append(ts, key, value, hdrs) is None:
            out.append(builder.build())
            builder = BatchBuilder(codec, batch_size_limit=1024)
            assert builder.append(ts, key, value, hdrs) == 0
    out.append(builder.build())
    return out


def produce_ours(bootstrap: str, topic: str, codec: str, data: list[Row]) -> int:
    client = RawClient(bootstrap)
    try:
        batches = our_batches(codec, data)
        expected_offset = 0
        deadline = time.monotonic() + DEADLINE
        for batch in batches:
            error, base_offset = client.produce_raw(topic, batch)
            # A topic made a moment ago may not have its leader yet: the broker refuses the
            # batch without writing it (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE,
            # NOT_LEADER_OR_FOLLOWER), so sending it again is safe.
            while error in (3, 5, 6) and time.monotonic() < deadline:
                time.sleep(0.1)
                error, base_offset = client.produce_raw(topic, batch)
            assert error == 0
            assert base_offset == expected_offset
            expected_offset += next(decode_batches(batch)).record_count
        return len(batches)
    finally:
        client.close()


@pytest.mark.parametrize("codec", CODECS)
def test_our_batches_read_back_by_librdkafka(
    impl: str, codec: str, kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    topic = new_topic(prefix=f"rec-ours-rdk-{codec}")
    data = rows()
    assert produce_ours(kafka_broker, topic, codec, data) > 1

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": kafka_broker,
            "group.id": f"records-{topic}",
            "enable.auto.commit": False,
            "check.crcs": True,
        }
    )
    got: list[Record] = []
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + DEADLINE
        while len(got) < len(data) and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            ts_type, ts = msg.timestamp()
            assert ts_type == confluent_kafka.TIMESTAMP_CREATE_TIME
            got.append(Record(msg.offset(), ts, msg.key(), msg.value(), tuple(msg.headers() or ())))
    finally:
        consumer.close()
    assert got == expected(data)


@pytest.mark.anyio
@pytest.mark.parametrize("codec", CODECS)
async def test_our_batches_read_back_by_aiokafka(
    impl: str, codec: str, kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    aiokafka = pytest.importorskip("aiokafka")
    topic = new_topic(prefix=f"rec-ours-aio-{codec}")
    data = rows()
    produce_ours(kafka_broker, topic, codec, data)

    consumer = aiokafka.AIOKafkaConsumer(
        bootstrap_servers=kafka_broker, enable_auto_commit=False, check_crcs=True
    )
    got: list[Record] = []
    await consumer.start()
    try:
        tp = aiokafka.TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        deadline = time.monotonic() + DEADLINE
        while len(got) < len(data) and time.monotonic() < deadline:
            batch = await consumer.getmany(tp, timeout_ms=500)
            for msg in batch.get(tp, []):
                got.append(
                    Record(msg.offset, msg.timestamp, msg.key, msg.value, tuple(msg.headers))
                )
    finally:
        await consumer.stop()
    assert got == expected(data)
