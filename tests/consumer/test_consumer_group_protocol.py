"""The consumer group protocol (KIP-848, ``group_protocol="consumer"``) against a real broker.

Apache Kafka 4.x speaks it; where the run's broker does not advertise ConsumerGroupHeartbeat
(Tansu) these tests are skipped with what it advertised. Heartbeat interval and session
timeout belong to the broker in this protocol: each test sets them on its own group
(``consumer.heartbeat.interval.ms`` / ``consumer.session.timeout.ms`` group configs).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from consumer_helpers import produce

from kafka_async.admin import AdminClient, ConfigResource
from kafka_async.consumer import CommitFailedError, Consumer
from kafka_async.errors import UnsupportedAssignorError
from kafka_async.structs import TopicPartition
from tests.harness.churn import Ownership, run_churn

pytestmark = [pytest.mark.integration, pytest.mark.requires_api("ConsumerGroupHeartbeat", 1)]

log = logging.getLogger(__name__)


async def group_config(bootstrap: str, group: str, session_ms: int = 6000) -> None:
    """Short heartbeats and session for one group (the broker's per-group settings)."""
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.incremental_alter_configs(
            {
                ConfigResource.group(group): {
                    "consumer.heartbeat.interval.ms": "500",
                    "consumer.session.timeout.ms": str(session_ms),
                }
            },
            raise_on_error=True,
        )


def _settings(bootstrap: str, group: str, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap_servers": bootstrap,
        "group_id": group,
        "group_protocol": "consumer",
        "auto_offset_reset": "earliest",
        **extra,
    }


async def _drain(
    consumers: list[Consumer[bytes, bytes]],
    seen: Counter[tuple[int, int]],
    until: Callable[[], bool],
    timeout: float = 60.0,  # noqa: ASYNC109 - a deadline
) -> None:
    with anyio.fail_after(timeout):
        while not until():
            for c in consumers:
                batch = await c.getmany(timeout_ms=50, max_records=50)
                for recs in batch.values():
                    seen.update((r.partition, r.offset) for r in recs)
            await anyio.sleep(0.01)


# -- join, scale up and down -------------------------------------------------------------------


@pytest.mark.anyio
async def test_churn_every_record_once_no_partition_owned_twice(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """3 members, a 4th joins, one leaves, all mid-stream: every record is read exactly
    once (commits on revocation carry the member epoch), no partition has two owners."""
    topic = new_topic(6)
    total = 10_000
    produce(kafka_broker, topic, total, partitions=6)
    group = f"kip848-churn-{topic}"
    await group_config(kafka_broker, group)
    result = await run_churn(
        kafka_broker, topic, 6, total, group_id=group, group_protocol="consumer"
    )
    own = result.ownership
    assert not own.violations, own.violations[:5]
    assert result.missing == 0
    assert not result.duplicates, (result.duplicates[:5], own.events)
    # Everyone that stayed got a share; "d" joined late and still got one.
    assigned = {e[1] for e in own.events if e[2] == "assigned" and e[3]}
    assert {"a", "c", "d"} <= assigned, own.events
    for name, st in result.statistics.items():
        assert st["group_protocol"] == "consumer"
        assert st["member_epoch"] > 0 or name == "b", st
    log.info("KIP-848 churn: pauses %s s", [round(p, 3) for p in result.pauses])


@pytest.mark.anyio
async def test_server_assignors_and_describe(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """``group_remote_assignor`` picks the broker's assignor; the group shows it."""
    topic = new_topic(4)
    for assignor in ("range", "uniform"):
        group = f"kip848-{assignor}-{topic}"
        await group_config(kafka_broker, group)
        kw = _settings(kafka_broker, group, group_remote_assignor=assignor)
        async with Consumer(topic, **kw) as a, Consumer(topic, **kw) as b:
            seen: Counter[tuple[int, int]] = Counter()
            await _drain(
                [a, b],
                seen,
                lambda: len(a.assignment()) == 2 and len(b.assignment()) == 2,
            )
            assert not a.assignment() & b.assignment()
            async with AdminClient(bootstrap_servers=kafka_broker) as admin:
                desc = (await admin.describe_consumer_groups([group]))[group]
            assert desc.group_type == "consumer"
            assert desc.assignor == assignor
            assert {m.member_id for m in desc.members} == {
                a.statistics()["group"]["member_id"],
                b.statistics()["group"]["member_id"],
            }
            if assignor == "range":
                # Range: each member a contiguous block of partitions.
                blocks = sorted(sorted(tp.partition for tp in c.assignment()) for c in (a, b))
                assert blocks == [[0, 1], [2, 3]]


@pytest.mark.anyio
async def test_unknown_server_assignor_is_a_typed_error(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(1)
    kw = _settings(kafka_broker, f"kip848-bad-{topic}", group_remote_assignor="no-such")
    async with Consumer(topic, **kw) as c:

        async def poll_until_raises() -> None:
            with anyio.fail_after(30):
                while True:
                    await c.getmany(timeout_ms=100)

        with pytest.raises(UnsupportedAssignorError, match="no-such"):
            await poll_until_raises()


@pytest.mark.anyio
async def test_regex_subscription_is_evaluated_by_the_broker(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """SubscribedTopicRegex: topics matching now, and one created later, are assigned."""
    prefix = f"rx{os.getpid()}{int(time.time() * 1000) % 100000}"
    first = new_topic(2, prefix=prefix)
    group = f"kip848-regex-{first}"
    await group_config(kafka_broker, group)
    async with Consumer(**_settings(kafka_broker, group)) as c:
        c.subscribe(pattern=f"{prefix}-.*")
        seen: Counter[tuple[int, int]] = Counter()
        await _drain([c], seen, lambda: {tp.topic for tp in c.assignment()} == {first})
        assert c.statistics()["group"]["subscription"] == f"{prefix}-.*"
        later = new_topic(3, prefix=prefix)
        produce(kafka_broker, later, 30, partitions=3)
        await _drain([c], seen, lambda: len(seen) == 30)
        assert {tp.topic for tp in c.assignment()} == {first, later}


# -- failures ---------------------------------------------------------------------------------

_CHILD = r"""
import json, sys, anyio
from kafka_async.consumer import Consumer, ConsumerRebalanceListener
bootstrap, topic, group, session_ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def out(*a):
    print(json.dumps(a), flush=True)
class L(ConsumerRebalanceListener):
    async def on_partitions_assigned(self, tps):
        out("assigned", sorted(tp.partition for tp in tps))
    async def on_partitions_revoked(self, tps):
        out("revoked", sorted(tp.partition for tp in tps))
    async def on_partitions_lost(self, tps):
        out("lost", sorted(tp.partition for tp in tps))
async def main():
    async with Consumer(topic, bootstrap_servers=bootstrap, group_id=group,
                        group_protocol="consumer", enable_auto_commit=False,
                        session_timeout_ms=session_ms, heartbeat_interval_ms=300,
                        auto_offset_reset="earliest", listener=L()) as c:
        while True:
            batch = await c.getmany(timeout_ms=200, max_records=20)
            for tp, recs in batch.items():
                for r in recs:
                    out("rec", r.partition, r.offset)
            # What this batch read, for the partitions still owned: one revoked between
            # getmany() and here is not committed (its new owner reads from the last commit).
            done = {tp: recs[-1].offset + 1 for tp, recs in batch.items() if tp in c.assignment()}
            if done:
                try:
                    await c.commit(done)
                except Exception as exc:
                    out("commit_failed", repr(exc))
                else:
                    for tp, offset in done.items():
                        out("commit", tp.partition, offset)
            await anyio.sleep(0.05)
anyio.run(main)
"""


class Child:
    """A consumer in a child process, reporting its records, commits and rebalances."""

    def __init__(self, bootstrap: str, topic: str, group: str, session_ms: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, bootstrap, topic, group, str(session_ms)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.records: list[tuple[int, int]] = []
        self.committed: dict[int, int] = {}
        self.events: list[tuple[float, str, list[int]]] = []
        self.owned: set[int] = set()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            kind, *rest = json.loads(line)
            if kind == "rec":
                self.records.append((rest[0], rest[1]))
            elif kind == "commit":
                self.committed[rest[0]] = rest[1]
            elif kind in ("assigned", "revoked", "lost"):
                self.events.append((time.monotonic(), kind, rest[0]))
                if kind == "assigned":
                    self.owned |= set(rest[0])
                else:
                    self.owned -= set(rest[0])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(5)


@pytest.fixture
def children() -> Iterator[list[Child]]:
    made: list[Child] = []
    yield made
    for c in made:
        c.close()


@pytest.mark.anyio
async def test_killed_member_partitions_move_after_the_session_timeout(
    kafka_broker: str, new_topic: Callable[..., str], children: list[Child]
) -> None:
    """A member SIGKILLed (no leave heartbeat): after the group's session timeout its
    partitions go to the survivor; every record is read, and only records at or after the
    dead member's last commit are read twice."""
    topic = new_topic(4)
    total = 4000
    produce(kafka_broker, topic, total, partitions=4)
    group = f"kip848-kill-{topic}"
    session_ms = 3000
    await group_config(kafka_broker, group, session_ms=session_ms)
    child = Child(kafka_broker, topic, group, 30_000)
    children.append(child)
    ownership = Ownership(4)
    seen: Counter[tuple[int, int]] = Counter()
    with anyio.fail_after(60):
        while not child.owned:  # noqa: ASYNC110 - a thread fills it in
            await anyio.sleep(0.05)
    async with Consumer(
        topic, **_settings(kafka_broker, group), listener=ownership.listener("survivor")
    ) as c:
        # Slowly (10 records a poll), so both share the work until the child has read and
        # committed a share.
        with anyio.fail_after(60):
            while len(child.records) < 200 or not child.committed or len(c.assignment()) < 2:
                batch = await c.getmany(timeout_ms=50, max_records=10)
                for recs in batch.values():
                    seen.update((r.partition, r.offset) for r in recs)
                await anyio.sleep(0.05)
        mine = set(c.assignment())
        assert len(mine) == 2
        assert {tp.partition for tp in mine}.isdisjoint(child.owned)
        child.proc.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        await anyio.to_thread.run_sync(child.proc.wait)
        await _drain([c], seen, lambda: len(c.assignment()) == 4, timeout=60)
        took = time.monotonic() - killed
        # Not before the session timeout (the broker waited for the dead member), and not
        # much later: generous for a loaded 2-core machine.
        assert took >= session_ms / 1000 - 0.5, took
        assert took < 20, took
        await _drain([c], seen, lambda: len(set(seen) | set(child.records)) >= total)
    assert not ownership.violations
    everything = Counter(seen)
    everything.update(child.records)
    assert set(everything) == {(p, o) for p in range(4) for o in range(total // 4)}
    for p, o in sorted(k for k, n in everything.items() if n > 1):
        assert o >= child.committed.get(p, 0), (p, o, child.committed)


@pytest.mark.anyio
async def test_fenced_member_loses_its_partitions_and_rejoins(
    kafka_broker: str, new_topic: Callable[..., str], children: list[Child]
) -> None:
    """A member frozen (SIGSTOP) past the session timeout is removed by the coordinator;
    thawed, its heartbeat is answered UNKNOWN_MEMBER_ID / FENCED_MEMBER_EPOCH: it gives its
    partitions up as lost (commits nothing), rejoins with epoch 0 and consumes again."""
    topic = new_topic(2)
    produce(kafka_broker, topic, 200, partitions=2)
    group = f"kip848-fence-{topic}"
    await group_config(kafka_broker, group, session_ms=2000)
    # The child's own guard (session_timeout_ms) is long: the broker does the fencing.
    child = Child(kafka_broker, topic, group, 60_000)
    children.append(child)
    seen: Counter[tuple[int, int]] = Counter()
    async with Consumer(topic, **_settings(kafka_broker, group)) as c:
        await _drain([c], seen, lambda: len(child.owned) == 1 and len(c.assignment()) == 1)
        child.proc.send_signal(signal.SIGSTOP)
        try:
            await _drain([c], seen, lambda: len(c.assignment()) == 2)
        finally:
            child.proc.send_signal(signal.SIGCONT)
        # Thawed: lost, then a share again (the group rebalances back to one each).
        await _drain(
            [c], seen, lambda: any(e[1] == "lost" for e in child.events) and len(child.owned) == 1
        )
    kinds = [e[1] for e in child.events]
    assert kinds.index("lost") > kinds.index("assigned"), child.events
    assert "revoked" not in kinds[: kinds.index("lost") + 1], child.events


@pytest.mark.anyio
async def test_poll_timeout_leaves_and_the_next_poll_rejoins(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2)
    group = f"kip848-poll-{topic}"
    await group_config(kafka_broker, group)
    kw = _settings(kafka_broker, group)
    seen: Counter[tuple[int, int]] = Counter()
    async with (
        Consumer(topic, max_poll_interval_ms=2000, **kw) as slow,
        Consumer(topic, **kw) as busy,
    ):
        await _drain([slow, busy], seen, lambda: bool(slow.assignment() and busy.assignment()))
        # "slow" stops polling: after max_poll_interval_ms it leaves, "busy" gets it all.
        await _drain([busy], seen, lambda: len(busy.assignment()) == 2)
        assert slow.assignment() == set()
        assert slow.statistics()["group"]["state"] == "left"
        with pytest.raises(CommitFailedError):
            await slow.commit({TopicPartition(topic, 0): 0})
        await _drain(
            [slow, busy], seen, lambda: bool(slow.assignment()) and len(busy.assignment()) == 1
        )


@pytest.mark.anyio
async def test_static_member_comes_back_to_its_partitions(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """A static member leaves with epoch -2: its partitions stay reserved for it (not moved
    to the other member) and it gets the same ones back when it returns in time."""
    topic = new_topic(4)
    group = f"kip848-static-{topic}"
    await group_config(kafka_broker, group, session_ms=20_000)
    kw = _settings(kafka_broker, group)
    seen: Counter[tuple[int, int]] = Counter()
    async with Consumer(topic, group_instance_id="static-b", **kw) as b:
        async with Consumer(topic, group_instance_id="static-a", **kw) as a:
            await _drain(
                [a, b], seen, lambda: len(a.assignment()) == 2 and len(b.assignment()) == 2
            )
            first_a, first_b = a.assignment(), b.assignment()
        # "a" is gone (epoch -2): "b" keeps its own two and does not get a's.
        with anyio.move_on_after(3):
            while True:
                await b.getmany(timeout_ms=100)
                assert b.assignment() == first_b
        async with Consumer(topic, group_instance_id="static-a", **kw) as a2:
            await _drain([a2, b], seen, lambda: len(a2.assignment()) == 2)
            assert a2.assignment() == first_a
            assert b.assignment() == first_b


# -- mixed groups and upgrades ----------------------------------------------------------------


def _java_consumer(bootstrap: str, topic: str, group: str, protocol: str) -> subprocess.Popen[str]:
    from kafka_async.testing.apache import ensure_distribution

    cmd = ensure_distribution().java_command(
        "org.apache.kafka.tools.VerifiableConsumer",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--group-id",
        group,
        "--group-protocol",
        protocol,
        "--reset-policy",
        "earliest",
        "--verbose",
    )
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


class JavaEvents:
    """Reads a VerifiableConsumer's JSON events in a thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.records: list[tuple[int, int]] = []
        self.owned: set[int] = set()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            name = ev.get("name")
            if name == "record_data":
                self.records.append((ev["partition"], ev["offset"]))
            elif name == "partitions_assigned":
                self.owned |= {p["partition"] for p in ev["partitions"]}
            elif name in ("partitions_revoked", "partitions_lost"):
                self.owned -= {p["partition"] for p in ev["partitions"]}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.thread.join(5)


@pytest.mark.anyio
async def test_mixed_group_with_java_consumers(
    kafka_broker: str, new_topic: Callable[..., str], kafka_service: Any
) -> None:
    """Two of ours and two Java consumers (group.protocol=consumer) in one group: the
    coordinator shares the partitions among all four, with none owned twice."""
    kafka_service.apache  # noqa: B018 - the Java tools come with Apache Kafka runs only
    topic = new_topic(8)
    total = 4000
    produce(kafka_broker, topic, total, partitions=8)
    group = f"kip848-java-{topic}"
    await group_config(kafka_broker, group)
    bootstrap = kafka_broker.split(",")[0]
    javas = [JavaEvents(_java_consumer(bootstrap, topic, group, "consumer")) for _ in range(2)]
    seen: Counter[tuple[int, int]] = Counter()
    try:
        kw = _settings(kafka_broker, group)
        async with Consumer(topic, **kw) as a, Consumer(topic, **kw) as b:

            def shared() -> bool:
                sets = [a.assignment(), b.assignment()]
                owned = [{tp.partition for tp in s} for s in sets] + [j.owned for j in javas]
                every = len(set(seen) | {r for j in javas for r in j.records}) >= total
                return every and all(owned) and sum(map(len, owned)) == 8

            await _drain([a, b], seen, shared, timeout=90)
            owned = [
                {tp.partition for tp in a.assignment()},
                {tp.partition for tp in b.assignment()},
            ]
            owned += [set(j.owned) for j in javas]
            union: set[int] = set()
            for s in owned:
                assert not (union & s), f"partitions owned twice: {owned}"
                union |= s
            assert union == set(range(8))
            async with AdminClient(bootstrap_servers=kafka_broker) as admin:
                desc = (await admin.describe_consumer_groups([group]))[group]
            assert desc.group_type == "consumer"
            assert len(desc.members) == 4
    finally:
        for j in javas:
            j.stop()
    everything = set(seen) | {r for j in javas for r in j.records}
    assert everything == {(p, o) for p in range(8) for o in range(total // 8)}


@pytest.mark.anyio
async def test_online_upgrade_from_classic_and_back(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """A classic group of two is upgraded member by member: a "consumer" member joining
    converts the group; when the last one leaves again, the group is classic once more.
    Records flow throughout; no partition has two owners at any point."""
    topic = new_topic(4)
    total = 2000
    produce(kafka_broker, topic, total, partitions=4)
    group = f"kip848-upgrade-{topic}"
    await group_config(kafka_broker, group)
    ownership = Ownership(4)
    seen: Counter[tuple[int, int]] = Counter()
    classic: dict[str, Any] = {
        "bootstrap_servers": kafka_broker,
        "group_id": group,
        "auto_offset_reset": "earliest",
        "partition_assignment_strategy": "cooperative-sticky",
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 500,
    }
    modern = _settings(kafka_broker, group)

    async def group_type() -> str:
        async with AdminClient(bootstrap_servers=kafka_broker) as admin:
            listing = {g.group_id: g for g in await admin.list_groups()}
        return str(listing[group].type)

    def every_partition_once(members: list[Consumer[bytes, bytes]]) -> bool:
        sets = [m.assignment() for m in members]
        return all(sets) and sum(map(len, sets)) == 4

    async with Consumer(topic, listener=ownership.listener("c1"), **classic) as c1:
        async with Consumer(topic, listener=ownership.listener("c2"), **classic) as c2:
            await _drain([c1, c2], seen, lambda: every_partition_once([c1, c2]))
            assert await group_type() == "classic"
        # c2 leaves; a "consumer" member takes its place: the group is converted.
        async with Consumer(topic, listener=ownership.listener("m1"), **modern) as m1:
            await _drain([c1, m1], seen, lambda: every_partition_once([c1, m1]))
            assert await group_type() == "consumer"
            await _drain([c1, m1], seen, lambda: len(seen) >= total // 2)
        # The last "consumer" member left: back to classic, c1 owns everything.
        await _drain([c1], seen, lambda: len(c1.assignment()) == 4)
        with anyio.fail_after(30):
            while await group_type() != "classic":
                await c1.getmany(timeout_ms=200)
        await _drain([c1], seen, lambda: len(seen) >= total)
    assert not ownership.violations, ownership.violations
    assert set(seen) == {(p, o) for p in range(4) for o in range(total // 4)}


# -- admin and CLI ----------------------------------------------------------------------------


async def _cli(bootstrap: str, *args: str) -> str:
    """``kafka-async`` in a thread (the members in this event loop keep heartbeating)."""
    env = {**os.environ, "NO_COLOR": "1", "KAFKA_BOOTSTRAP_SERVERS": ""}
    argv = [sys.executable, "-m", "kafka_async.cli", "-b", bootstrap, "--timeout", "30", *args]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=120, env=env, check=False
        )

    done = await anyio.to_thread.run_sync(run)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


@pytest.mark.anyio
async def test_cli_lists_and_describes_both_protocols(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2)
    modern, classic = f"kip848-cli-new-{topic}", f"kip848-cli-old-{topic}"
    await group_config(kafka_broker, modern)
    seen: Counter[tuple[int, int]] = Counter()
    async with (
        Consumer(topic, **_settings(kafka_broker, modern, group_instance_id="inst-1")) as new,
        Consumer(
            topic,
            bootstrap_servers=kafka_broker,
            group_id=classic,
            partition_assignment_strategy="range",
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
        ) as old,
    ):
        await _drain(
            [new, old], seen, lambda: len(new.assignment()) == 2 and len(old.assignment()) == 2
        )
        await new.commit({TopicPartition(topic, 0): 0})
        async with AdminClient(bootstrap_servers=kafka_broker) as admin:
            both = await admin.describe_consumer_groups([modern, classic])
        d = both[modern]
        assert d.group_type == "consumer"
        assert d.state == "Stable"
        assert d.group_epoch >= 1
        [member] = d.members
        assert member.group_instance_id == "inst-1"
        assert member.member_epoch == new.statistics()["group"]["member_epoch"]
        assert member.member_type in ("consumer", None)  # v1 tells; v0 does not
        assert member.subscribed_topics == (topic,)
        assert set(member.assignment) == new.assignment()
        assert set(member.target_assignment) == new.assignment()
        c = both[classic]
        assert c.group_type == "classic"
        assert c.assignor == "range"
        assert set(c.members[0].assignment) == old.assignment()

        listed = (await _cli(kafka_broker, "groups", "list", "--type", "consumer")).split()
        assert modern in listed
        assert classic not in listed
        assert classic in (await _cli(kafka_broker, "groups", "list", "--type", "classic")).split()
        text = await _cli(kafka_broker, "groups", "describe", modern, classic)
        lines = text.splitlines()
        assert any(
            line.startswith(f"Group: {modern}") and "type: consumer" in line for line in lines
        )
        assert any(
            line.startswith(f"Group: {classic}") and "type: classic" in line for line in lines
        )
        header = next(line.split() for line in lines if line.startswith("MEMBER"))
        assert header[-3:] == ["EPOCH", "TYPE", "TARGET"]
        committed = next(
            line.split() for line in lines if line.startswith(topic) and line.split()[1] == "0"
        )
        assert committed[2] == "0"  # the commit made with the member epoch
