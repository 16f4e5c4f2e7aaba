"""Rebootstrap (KIP-899, KIP-1102) against a real Apache Kafka whose nodes move.

The clients bootstrap from a :class:`~kafka_async.testing.proxy.FaultProxy` address that
stays while every node of the cluster is replaced: ``ApacheKafka.amove_nodes()`` stops the
nodes and starts them again on their data but on new ports (listened on and advertised),
and the proxy is pointed at a new port, as a DNS name or a load balancer in front of a
replaced cluster would be. Every address the clients learnt from metadata is dead then.

* Our idempotent producer (checked by the ledger against librdkafka's read-back) and a
  consumer group carry on: nothing acknowledged is lost, duplicated or reordered, the
  consumer delivers every record and its group commits at the end; both say in the log that
  they rebootstrapped. The control, a producer with ``metadata_recovery_strategy="none"``
  bootstrapped the same way, delivers nothing within the same window (it keeps asking the
  dead addresses), so the test fails if recovery does not happen. One node here; the
  three-node variant is marked slow (``make soak`` runs it and records its figures).
* The trigger (KIP-1102): the node is frozen (SIGSTOP), so connections open but nothing
  answers and no metadata round fails fast. A client with a short
  ``metadata_recovery_rebootstrap_trigger_ms`` rebootstraps; one with the default (5 min)
  does not (which is what every client did before the trigger existed).

* REBOOTSTRAP_REQUIRED (KIP-1102): Apache Kafka 4.1.1 never sends it (only its client
  classes name it), so the fault proxy sets it in one real Metadata v13 answer; the client
  rebootstraps, one with strategy "none" asks the broker again. The top-level error code
  that carries it exists from Metadata v13 on: where the broker advertises less (2.8.2 in
  ZooKeeper mode: v0-v11; 3.6.2: v0-v12), no answer can carry it and the test is skipped
  quoting the broker's range.

A cluster with another cluster id behind the bootstrap address is not tested live
either (it needs a second cluster); see cluster/recovery.py for what the client does.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any, Literal

import anyio
import pytest
from cluster_support import OurRun, check_ours, our_producer

from kafka_async import Consumer
from kafka_async.cluster.client import ClusterClient
from kafka_async.cluster.recovery import REBOOTSTRAP_REQUIRED
from kafka_async.errors import KafkaError
from kafka_async.net.config import ClientConfig
from kafka_async.protocol.apis import METADATA
from kafka_async.structs import TopicPartition
from kafka_async.testing.apache import ApacheKafka, KafkaPrerequisiteError
from kafka_async.testing.capabilities import advertised_apis
from kafka_async.testing.plugin import skip_or_fail
from kafka_async.testing.proxy import FaultProxy
from tests.harness.ledger import Observed
from tests.harness.soak import record_result

pytestmark = [pytest.mark.integration, pytest.mark.anyio, pytest.mark.timeout(300)]

PARTITIONS = 3
#: Seconds after the move in which our clients must have recovered and the control must not.
WINDOW = 10.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[ApacheKafka]:
    """One Apache Kafka node of our own (this file moves it)."""
    kafka = ApacheKafka(heap="384m")
    try:
        kafka.start()
    except KafkaPrerequisiteError as exc:
        skip_or_fail(f"Apache Kafka cannot run here: {exc}")
    try:
        yield kafka
    finally:
        kafka.stop()


def _address(hostport: str) -> tuple[str, int]:
    host, port = hostport.rsplit(":", 1)
    return host, int(port)


def _rebootstrapped(caplog: pytest.LogCaptureFixture, client_id: str) -> int:
    return sum(
        1
        for r in caplog.records
        if r.name == "kafka_async.cluster.client"
        and r.getMessage().startswith(f"client {client_id}: rebootstrapping")
    )


async def test_nodes_move_behind_the_bootstrap_address(
    cluster: ApacheKafka, caplog: pytest.LogCaptureFixture
) -> None:
    await _moved_scenario(cluster, caplog)


@pytest.fixture(scope="module")
def three_nodes() -> Iterator[ApacheKafka]:
    """Three Apache Kafka nodes of our own, for the long variant (``make soak``)."""
    kafka = ApacheKafka(nodes=3, heap="384m")
    try:
        kafka.start()
    except KafkaPrerequisiteError as exc:
        skip_or_fail(f"Apache Kafka cannot run here: {exc}")
    try:
        yield kafka
    finally:
        kafka.stop()


@pytest.mark.slow
async def test_three_nodes_move_behind_the_bootstrap_address(
    three_nodes: ApacheKafka, caplog: pytest.LogCaptureFixture
) -> None:
    await _moved_scenario(three_nodes, caplog, record=True)


async def _moved_scenario(
    cluster: ApacheKafka, caplog: pytest.LogCaptureFixture, *, record: bool = False
) -> None:
    """Every node of ``cluster`` moves while our clients work through a proxy address."""
    caplog.set_level(logging.INFO, logger="kafka_async.cluster.client")
    topic = f"moved-{uuid.uuid4().hex[:8]}"
    await cluster.acreate_topic(topic, PARTITIONS)
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    seen: list[Observed] = []
    consumer_errors: list[str] = []
    committed: dict[TopicPartition, int | None] = {}
    ends: dict[TopicPartition, int] = {}
    stop_consuming = anyio.Event()

    async def consume(bootstrap: str) -> None:
        consumer: Consumer[bytes, bytes] = Consumer(
            topic,
            bootstrap_servers=bootstrap,
            client_id="moved-consumer",
            group_id=f"moved-{uuid.uuid4().hex[:8]}",
            auto_offset_reset="earliest",
            metadata_max_age_ms=5_000,
            request_timeout_ms=5_000,
            reconnect_backoff_max_ms=500,
        )
        try:
            async with consumer:
                while not stop_consuming.is_set():
                    for tp, records in (await consumer.getmany(timeout_ms=200)).items():
                        seen.extend(Observed(tp.partition, r.offset, r.value) for r in records)
                with anyio.fail_after(30):
                    await consumer.commit()
                    got = await consumer.committed(tps)
                    committed.update({tp: None if o is None else o.offset for tp, o in got.items()})
                    ends.update(await consumer.end_offsets(tps))
        except KafkaError as exc:
            consumer_errors.append(f"{type(exc).__name__}: {exc}")

    async with FaultProxy(*_address(cluster.node_bootstrap(1))) as proxy:
        producer = our_producer(proxy.address, client_id="moved-producer")
        control = our_producer(
            proxy.address,
            client_id="moved-control",
            metadata_recovery_strategy="none",
            delivery_timeout_ms=int(WINDOW * 1000) - 2_000,
        )
        async with producer, control:
            # The control learns the brokers' addresses, as the others do.
            await control.send(topic, b"before the move", partition=0)
            run = OurRun(producer, topic, PARTITIONS)
            control_outcome = "not done"
            with anyio.fail_after(150):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(consume, proxy.address)
                    tg.start_soon(run.settle_loop)
                    tg.start_soon(run.produce, 100.0)
                    await anyio.sleep(1.5)
                    await cluster.amove_nodes()
                    proxy.target = _address(cluster.node_bootstrap(1))
                    moved = time.monotonic()
                    with anyio.move_on_after(WINDOW):
                        try:
                            await control.send(topic, b"after the move", partition=0)
                            control_outcome = "delivered"
                        except KafkaError as exc:
                            control_outcome = type(exc).__name__
                    recovered = {p: run.acked_since(p, moved) for p in range(PARTITIONS)}
                    await run.finish(timeout=60)
                    expect = {
                        (p, s) for p, seqs in run.ledger.expected_present().items() for s in seqs
                    }
                    with anyio.move_on_after(30):
                        while True:
                            if expect <= _tags(seen) or consumer_errors:
                                break
                            await anyio.sleep(0.2)
                    stop_consuming.set()
            stats = producer._client.statistics() if producer._client is not None else {}

    recovery = max(
        min((t for t in run.ack_times.get(p, []) if t > moved), default=float("inf")) - moved
        for p in range(PARTITIONS)
    )
    if record:
        report = await check_ours(run, cluster.bootstrap_servers)
        record_result(
            f"every node of {len(cluster.node_ids)} moved to new ports behind the bootstrap "
            "address (rebootstrap)",
            records=report.present,
            lost=report.lost,
            duplicated=report.duplicated,
            reordered=report.reordered,
            max_recovery_s=round(recovery, 2),
            ok=report.ok and control_outcome != "delivered" and not consumer_errors,
        )
    # The control, with strategy "none", did not find the cluster again.
    assert control_outcome != "delivered", control_outcome
    assert _rebootstrapped(caplog, "moved-control") == 0
    # Ours did, within the same window, and said so.
    assert all(recovered.values()), f"partitions without an ack after the move: {recovered}"
    assert _rebootstrapped(caplog, "moved-producer") >= 1
    assert _rebootstrapped(caplog, "moved-consumer") >= 1
    assert stats["rebootstraps"] >= 1
    assert stats["last_rebootstrap_reason"] == "every known broker failed to answer Metadata"
    # Nothing lost, duplicated or reordered; nothing failed.
    report = await check_ours(run, cluster.bootstrap_servers)
    print(report.summary(), run.errors, f"recovered {recovery:.2f} s after the move")
    assert report.ok, report.summary()
    assert run.ledger.counts().get("failed", 0) == 0, run.errors
    assert run.ledger.acked_count() > 0
    # The consumer group read everything and commits on the moved cluster.
    assert not consumer_errors, consumer_errors
    seen_check = run.ledger.check(seen)
    assert seen_check.lost == 0, seen_check.summary()
    assert committed == {tp: ends[tp] for tp in tps}, (committed, ends)


def _tags(observed: list[Observed]) -> set[tuple[int, int]]:
    from tests.harness.ledger import parse_value

    return {(t.partition, t.seq) for t in (parse_value(o.value) for o in observed) if t is not None}


def _hang_client(
    bootstrap: str,
    client_id: str,
    trigger_ms: int = 300_000,
    strategy: Literal["rebootstrap", "none"] = "rebootstrap",
) -> ClusterClient:
    return ClusterClient(
        ClientConfig(
            bootstrap_servers=bootstrap,
            client_id=client_id,
            request_timeout_ms=2_000,
            metadata_max_age_ms=300,
            retry_backoff_ms=100,
            reconnect_backoff_max_ms=500,
            metadata_recovery_strategy=strategy,
            metadata_recovery_rebootstrap_trigger_ms=trigger_ms,
        )
    )


async def test_trigger_rebootstraps_when_known_brokers_hang(
    cluster: ApacheKafka, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="kafka_async.cluster.client")
    async with FaultProxy(*_address(cluster.node_bootstrap(1))) as proxy:
        short = _hang_client(proxy.address, "hang-trigger", trigger_ms=1_500)
        default = _hang_client(proxy.address, "hang-default")
        async with short, default:
            cluster.pause_node(1)
            try:
                # Rounds of 2 s time out; the trigger (1.5 s) fires at the next one.
                await anyio.sleep(5.0)
            finally:
                cluster.resume_node(1)
            with anyio.fail_after(60):
                await short.refresh_metadata()
                await default.refresh_metadata()
            short_stats = short.statistics()
            default_stats = default.statistics()
    print(short_stats["rebootstraps"], short_stats["last_rebootstrap_reason"])
    assert short_stats["rebootstraps"] >= 1
    assert short_stats["last_rebootstrap_reason"] == (
        "no metadata for metadata_recovery_rebootstrap_trigger_ms"
    )
    assert _rebootstrapped(caplog, "hang-trigger") >= 1
    assert default_stats["rebootstraps"] == 0
    assert _rebootstrapped(caplog, "hang-default") == 0


async def test_rebootstrap_required_in_a_real_metadata_answer(
    cluster: ApacheKafka, caplog: pytest.LogCaptureFixture
) -> None:
    """Apache Kafka 4.1.1 never sends REBOOTSTRAP_REQUIRED (only its client classes name
    it), so the fault proxy sets it in one real Metadata v13 answer. The proxy also names
    itself as the broker in every Metadata answer, so the clients' requests to the broker
    they know pass through it too (a single node: one address for it)."""
    advertised = await anyio.to_thread.run_sync(advertised_apis, cluster.bootstrap_servers)
    have = advertised.get(METADATA.key)
    if have is None or have[1] < 13:
        said = "no Metadata" if have is None else f"Metadata v{have[0]}-v{have[1]}"
        pytest.skip(
            f"Apache Kafka {cluster.version} ({cluster.mode}) advertises {said}; the top-level "
            "error code that carries REBOOTSTRAP_REQUIRED (KIP-1102) is in Metadata v13+"
        )
    caplog.set_level(logging.INFO, logger="kafka_async.cluster.client")
    async with FaultProxy(*_address(cluster.node_bootstrap(1))) as proxy:
        inject = {"left": 0}

        def through_proxy(msg: Any) -> Any:
            for broker in msg.brokers:
                broker.host, broker.port = "127.0.0.1", proxy.port
            if inject["left"] > 0:
                inject["left"] -= 1
                msg.error_code = REBOOTSTRAP_REQUIRED
            return msg

        proxy.mutate_responses(METADATA.key, through_proxy, count=None)
        told = _hang_client(proxy.address, "required")
        none = _hang_client(proxy.address, "required-none", strategy="none")
        async with told, none:
            for client in (told, none):
                assert client.metadata.brokers[1].port == proxy.port
                inject["left"] = 1
                with anyio.fail_after(30):
                    await client.refresh_metadata()
                assert inject["left"] == 0  # the answer carried the error
            told_stats, none_stats = told.statistics(), none.statistics()
        versions = {r.api_version for r in proxy.requests if r.api_key == METADATA.key}
    assert versions == {13}
    assert told_stats["rebootstraps"] == 1
    assert told_stats["last_rebootstrap_reason"] == "a broker answered REBOOTSTRAP_REQUIRED"
    assert _rebootstrapped(caplog, "required") == 1
    # Strategy "none": the answer counts as a failed attempt; the broker is asked again.
    assert none_stats["rebootstraps"] == 0
    assert _rebootstrapped(caplog, "required-none") == 0
