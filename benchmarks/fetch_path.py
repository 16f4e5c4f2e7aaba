"""The consumer's Fetch answer path without a broker, for instruction counts.

``python -m benchmarks.fetch_path MODE SCENARIO N`` runs N rounds of one piece of the path
after one warm-up round, and nothing else, so that ``valgrind --tool=callgrind`` instruction
counts of a run with N rounds minus one with 0 rounds, divided by N, give the cost of one
round (``--count`` does that: it runs both under callgrind and prints instructions per
round). Instruction counts, unlike times, do not move with the load of a shared machine.

MODE:

* ``decode12`` / ``decode17``: decoding one Fetch answer at v12 (topics by name) or v17 (by
  id);
* ``fetch``: one ``Fetcher._fetch_once`` round as the consumer runs it: plan, request,
  decoding the answer at the version the fetcher picks (v12 before topic ids, v17 with them;
  the stub broker advertises 0-17), filing every partition's records in the buffer (records
  are not decoded: that happens when the application drains them, the same on every
  version). The buffer is emptied between rounds.

SCENARIO: ``wide`` (1 topic, 4 partitions of 500 records of 100 B each: the consumer
benchmark's shape) or ``many`` (50 topics of 4 partitions, 10 records each: where the per
topic cost of naming topics by id would show).
"""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
import uuid
from types import MappingProxyType
from typing import Any

import anyio

from kafka_async.cluster.metadata import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo
from kafka_async.consumer._signal import Signal
from kafka_async.consumer.config import ConsumerConfig
from kafka_async.consumer.fetch_session import FetchSession
from kafka_async.consumer.fetcher import Fetcher
from kafka_async.consumer.positions import SubscriptionState
from kafka_async.net.config import ClientConfig
from kafka_async.protocol.apis import FETCH
from kafka_async.records.batch import build_batch
from kafka_async.structs import TopicPartition

SCENARIOS = {"wide": (1, 4, 500), "many": (50, 4, 10)}


class _Conn:
    def __init__(self, answers: dict[bool, bytes]) -> None:
        self.answers = answers

    def version_for(self, api: Any, lo: int | None = None, hi: int | None = None) -> int:
        return min(17, 17 if hi is None else hi)

    async def request(self, api: Any, body: Any, *, version: int, timeout: Any = None) -> Any:  # noqa: ASYNC109
        return FETCH.decode_response(version, self.answers[version >= 13])


class _Client:
    def __init__(self, metadata: ClusterMetadata, conn: _Conn) -> None:
        self.metadata = metadata
        self.conn = conn

    async def connection(self, node_id: int, purpose: str = "default") -> _Conn:
        return self.conn

    def request_metadata_update(self) -> None:
        raise AssertionError("no errors in this answer")


def _setup(scenario: str) -> tuple[ClusterMetadata, dict[bool, bytes], list[TopicPartition]]:
    topics, parts, records = SCENARIOS[scenario]
    names = [f"topic-{i}" for i in range(topics)]
    ids = {n: uuid.UUID(int=i + 1) for i, n in enumerate(names)}
    batch = build_batch([(None, b"k%d" % i, b"v" * 100, None) for i in range(records)])
    md = ClusterMetadata(
        brokers=MappingProxyType({1: BrokerInfo(1, "127.0.0.1", 9092)}),
        topics=MappingProxyType(
            {
                n: TopicInfo(
                    n,
                    topic_id=ids[n],
                    partitions=MappingProxyType(
                        {p: PartitionInfo(n, p, 1, 0) for p in range(parts)}
                    ),
                )
                for n in names
            }
        ),
    )

    def answer(by_id: bool) -> bytes:
        body = {
            "session_id": 0,
            "responses": [
                {
                    "topic": n,
                    "topic_id": ids[n],
                    "partitions": [
                        {
                            "partition_index": p,
                            "high_watermark": records,
                            "last_stable_offset": records,
                            "log_start_offset": 0,
                            "records": batch,
                        }
                        for p in range(parts)
                    ],
                }
                for n in names
            ],
        }
        return bytes(FETCH.encode_response(17 if by_id else 12, body))

    tps = [TopicPartition(n, p) for n in names for p in range(parts)]
    return md, {False: answer(False), True: answer(True)}, tps


async def _fetch_rounds(scenario: str, n: int) -> None:
    md, answers, tps = _setup(scenario)
    subs = SubscriptionState("earliest")
    subs.assign_from_user(tps)
    for tp in tps:
        subs.seek(tp, 0)
    cfg = ConsumerConfig(client=ClientConfig(), enable_fetch_sessions=False)
    f = Fetcher(_Client(md, _Conn(answers)), subs, cfg, Signal())  # type: ignore[arg-type]
    session = FetchSession(1, enabled=False)
    takes_plan = "plan" in inspect.signature(f._fetch_once).parameters
    for _ in range(n + 1):
        wanted, _ = f._wanted(1)
        arg: Any = session.plan(wanted) if takes_plan else wanted
        await f._fetch_once(1, session, arg)
        assert f.buffered_bytes > 0
        # Empty the buffer and fetch from 0 again, as after a seek, but keep what a
        # consumer keeps between fetches (the topic id each position was fetched under).
        for cf in list(f._buffer):
            f._release(cf)
        f._buffer.clear()
        f._fetch_offsets.clear()


def run(mode: str, scenario: str, n: int) -> None:
    if mode == "fetch":
        anyio.run(_fetch_rounds, scenario, n)
        return
    version = {"decode12": 12, "decode17": 17}[mode]
    _, answers, _ = _setup(scenario)
    data = answers[version >= 13]
    for _ in range(n + 1):
        FETCH.decode_response(version, data)


def _instructions(args: list[str]) -> int:
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    for line in out.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[1].strip())
    raise RuntimeError(out.stderr[-2000:])


def count(mode: str, scenario: str, n: int) -> float:
    """Instructions per round: callgrind of N rounds minus 0 rounds, over N."""
    base = [sys.executable, "-m", "benchmarks.fetch_path", mode, scenario]
    return (_instructions([*base, str(n)]) - _instructions([*base, "0"])) / n


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--count":
        if shutil.which("valgrind") is None:
            print("valgrind is not installed", file=sys.stderr)
            return 2
        n = int(argv[1]) if len(argv) > 1 else 50
        for scenario in SCENARIOS:
            for mode in ("decode12", "decode17", "fetch"):
                print(f"{mode:9} {scenario:5} {count(mode, scenario, n):12,.0f} instructions/round")
        return 0
    mode, scenario, n = argv[0], argv[1], int(argv[2])
    run(mode, scenario, n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
