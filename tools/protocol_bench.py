"""Per-request cost of the schema engine on the hot paths.

Usage: ``python tools/protocol_bench.py``. Times encoding a Produce request and decoding a
Fetch response, each with 50 partitions of 1 KiB record data, at a classic and a flexible
version. The record bytes are opaque here; this measures the engine, not the records layer.
"""

from __future__ import annotations

import time
import timeit
import uuid
from functools import partial
from typing import Any

from kafka_async.protocol.apis import FETCH, PRODUCE

PARTITIONS = 50
RECORDS = bytes(1024)


def produce_body() -> dict[str, Any]:
    return {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 30000,
        "topic_data": [
            {
                "name": "orders",
                "partition_data": [{"index": p, "records": RECORDS} for p in range(PARTITIONS)],
            }
        ],
    }


def fetch_response(version: int) -> bytes:
    body = {
        "throttle_time_ms": 0,
        "session_id": 7 if version >= 7 else 0,
        "responses": [
            {
                "topic": "orders" if version < 13 else "",
                "topic_id": uuid.UUID(int=5) if version >= 13 else uuid.UUID(int=0),
                "partitions": [
                    {
                        "partition_index": p,
                        "high_watermark": 1000,
                        "last_stable_offset": 1000,
                        "log_start_offset": 0,
                        "records": RECORDS,
                    }
                    for p in range(PARTITIONS)
                ],
            }
        ],
    }
    return bytes(FETCH.encode_response(version, body))


def bench(label: str, fn: Any) -> float:
    timer = timeit.Timer(fn, timer=time.process_time)
    n, _ = timer.autorange()
    best = min(timer.repeat(7, n)) / n
    print(f"{label:<48} {best * 1e6:8.1f} us")
    return best


def main() -> None:
    body = produce_body()
    for v in (3, 9, PRODUCE.max_version):
        bench(
            f"Produce v{v} encode (dict body, {PARTITIONS} partitions)",
            partial(PRODUCE.encode_request, v, body),
        )
    msg = PRODUCE.decode_request(9, bytes(PRODUCE.encode_request(9, body)))
    bench("Produce v9 encode (message object)", lambda: PRODUCE.encode_request(9, msg))
    for v in (4, 11, 12, FETCH.max_version):
        data = fetch_response(v)
        bench(
            f"Fetch v{v} decode ({PARTITIONS} partitions)", partial(FETCH.decode_response, v, data)
        )


if __name__ == "__main__":
    main()
