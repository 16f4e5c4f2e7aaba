"""Smoke-check our API definitions against a live broker with plain blocking sockets.

Usage: ``python tools/protocol_smoke.py HOST:PORT``. Sends ApiVersions, Metadata (creating a
topic), Produce and Fetch at the highest version both sides support, and prints what the
broker answered. Needs no other part of kafka_async than the protocol layer; the record
batch is built here by hand (one record, no compression) so it also works before the
records layer exists.
"""

from __future__ import annotations

import socket
import struct
import sys
import time
from typing import Any

import crc32c

from kafka_async.protocol import codec as c
from kafka_async.protocol import headers
from kafka_async.protocol.apis import (
    API_VERSIONS,
    CREATE_TOPICS,
    FETCH,
    FIND_COORDINATOR,
    INIT_PRODUCER_ID,
    LIST_OFFSETS,
    METADATA,
    PRODUCE,
)
from kafka_async.protocol.codec import Reader
from kafka_async.protocol.schema import Api


def one_record_batch(key: bytes, value: bytes) -> bytes:
    """A RecordBatch v2 holding one record (base offset 0, no producer id)."""
    rec = bytearray()
    rec.append(0)  # attributes
    c.write_varlong(rec, 0)  # timestamp delta
    c.write_varint(rec, 0)  # offset delta
    c.write_varint(rec, len(key))
    rec += key
    c.write_varint(rec, len(value))
    rec += value
    c.write_varint(rec, 0)  # headers
    body = bytearray()
    c.write_varint(body, len(rec))
    body += rec
    now = int(time.time() * 1000)
    after_crc = struct.pack(">hiqqqhii", 0, 0, now, now, -1, -1, -1, 1) + body
    crc = crc32c.crc32c(after_crc)
    head = struct.pack(">qiib", 0, 4 + 1 + 4 + len(after_crc), -1, 2)
    return head + struct.pack(">I", crc) + after_crc


class Conn:
    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=10)
        self.cid = 0
        self.versions: dict[int, tuple[int, int]] = {}

    def call(self, api: Api, body: Any, version: int | None = None) -> Any:
        if version is None:
            _lo, hi = self.versions.get(api.key, (0, api.max_version))
            version = min(hi, api.max_version)
        self.cid += 1
        frame = headers.encode_request(api, version, self.cid, "protocol-smoke", body)
        self.sock.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", self._read(4))[0]
        r = Reader(self._read(size))
        assert headers.read_response_header(r, api, version) == self.cid
        resp = api.decode_response(version, r)
        r.expect_end()
        print(f"{api.name} v{version}: {resp!r}"[:600])
        return resp

    def _read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            buf += chunk
        return bytes(buf)


def main(bootstrap: str) -> None:
    host, port = bootstrap.rsplit(":", 1)
    conn = Conn(host, int(port))
    av = conn.call(API_VERSIONS, {}, version=3)
    conn.versions = {k.api_key: (k.min_version, k.max_version) for k in av.api_keys}
    topic = f"smoke-{int(time.time())}"
    conn.call(
        CREATE_TOPICS,
        {
            "topics": [{"name": topic, "num_partitions": 1, "replication_factor": 1}],
            "timeout_ms": 5000,
        },
    )
    conn.call(METADATA, {"topics": [{"name": topic}]})
    for pv in (3, 9, PRODUCE.max_version):
        batch = one_record_batch(b"k", f"value-v{pv}".encode())
        conn.call(
            PRODUCE,
            {
                "acks": -1,
                "timeout_ms": 5000,
                "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}],
            },
            version=pv,
        )
    conn.call(
        LIST_OFFSETS,
        {
            "replica_id": -1,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}],
        },
    )
    md = conn.call(METADATA, {"topics": [{"name": topic}]})
    topic_id = md.topics[0].topic_id
    for fv in (4, 12, FETCH.max_version):
        t: dict[str, Any] = {"partitions": [{"partition": 0, "fetch_offset": 0}]}
        if fv >= 13:
            t["topic_id"] = topic_id
        else:
            t["topic"] = topic
        resp = conn.call(
            FETCH,
            {"max_wait_ms": 100, "min_bytes": 1, "max_bytes": 1 << 20, "topics": [t]},
            version=fv,
        )
        part = resp.responses[0].partitions[0]
        assert part.error_code == 0, part
        assert part.records is not None, part
        assert len(part.records) > 0, part
    conn.call(FIND_COORDINATOR, {"key": "smoke-group"}, version=3)
    conn.call(FIND_COORDINATOR, {"key_type": 0, "coordinator_keys": ["smoke-group"]})
    conn.call(INIT_PRODUCER_ID, {"transactional_id": None, "transaction_timeout_ms": 60000})


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9092")
