"""Group churn with an ownership ledger: members join and leave mid-stream, every record must
be read once, no partition may have two owners, and the time partitions spent without an
owner (the rebalance pause) is measured. Used by the group protocol tests and the
``rebalance`` benchmark, so both protocols are measured on the same churn.

The script: members ``a``, ``b``, ``c`` start; once a quarter of the records is read ``d``
joins; at half ``b`` leaves (close(): commit, revoke, leave); the run ends when every record
is read. Ownership comes from the members' rebalance listeners, so it is what the
application sees: a partition is owned from ``on_partitions_assigned`` to
``on_partitions_revoked``/``on_partitions_lost``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from kafka_async.consumer import Consumer, ConsumerRebalanceListener
from kafka_async.structs import TopicPartition


@dataclass
class Ownership:
    """Who owns which partition, as the members' listeners report it, with a timeline."""

    partitions: int
    owner: dict[TopicPartition, str] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    #: ``(monotonic time, partitions owned by someone)`` after every listener call.
    timeline: list[tuple[float, int]] = field(default_factory=list)
    events: list[tuple[float, str, str, list[TopicPartition]]] = field(default_factory=list)

    def listener(self, name: str) -> ConsumerRebalanceListener:
        ledger = self

        class Listener(ConsumerRebalanceListener):
            async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
                ledger._assigned(name, assigned)

            async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
                ledger._released(name, revoked, "revoked")

            async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
                ledger._released(name, lost, "lost")

        return Listener()

    def _note(self, name: str, kind: str, tps: set[TopicPartition]) -> None:
        now = time.monotonic()
        self.events.append((now, name, kind, sorted(tps)))
        self.timeline.append((now, len(self.owner)))

    def _assigned(self, name: str, tps: set[TopicPartition]) -> None:
        for tp in tps:
            other = self.owner.get(tp)
            if other is not None and other != name:
                self.violations.append(f"{tp} given to {name} while {other} owns it")
            self.owner[tp] = name
        self._note(name, "assigned", tps)

    def _released(self, name: str, tps: set[TopicPartition], kind: str) -> None:
        for tp in tps:
            if self.owner.get(tp) == name:
                del self.owner[tp]
        self._note(name, kind, tps)

    def pauses(self, until: float) -> list[float]:
        """Each stretch (seconds) after the group first owned every partition during which
        at least one partition had no owner, up to ``until``."""
        out: list[float] = []
        full_once = False
        gap_start: float | None = None
        for t, owned in self.timeline:
            if t > until:
                break
            if owned == self.partitions:
                if gap_start is not None:
                    out.append(t - gap_start)
                    gap_start = None
                full_once = True
            elif full_once and gap_start is None:
                gap_start = t
        if gap_start is not None:
            out.append(until - gap_start)
        return out

    def unowned_partition_seconds(self, until: float) -> float:
        """Partition-seconds without an owner after the group first owned every partition,
        up to ``until``: a pause of one partition for 1 s counts 1, of six for 1 s counts 6."""
        total = 0.0
        full_once = False
        last_t, last_owned = 0.0, 0
        for t, owned in self.timeline:
            if t > until:
                break
            if full_once:
                total += (t - last_t) * (self.partitions - last_owned)
            if owned == self.partitions:
                full_once = True
            last_t, last_owned = t, owned
        if full_once:
            total += max(0.0, until - last_t) * (self.partitions - last_owned)
        return total


@dataclass
class ChurnResult:
    """What a churn run saw."""

    total: int
    consumed: Counter[tuple[int, int]]
    ownership: Ownership
    pauses: list[float]
    #: See ``Ownership.unowned_partition_seconds``.
    unowned_partition_seconds: float
    seconds: float
    statistics: Mapping[str, Any]

    @property
    def missing(self) -> int:
        return self.total - len(self.consumed)

    @property
    def duplicates(self) -> list[tuple[int, int]]:
        return sorted(k for k, n in self.consumed.items() if n > 1)


async def run_churn(
    bootstrap: str,
    topic: str,
    partitions: int,
    total: int,
    *,
    deadline: float = 120.0,
    **settings: Any,
) -> ChurnResult:
    """Run the churn described in the module docstring on ``topic`` (``total`` records
    already produced over ``partitions``), members configured with ``settings`` (group id,
    group protocol, timeouts...). Raises ``TimeoutError`` after ``deadline`` seconds."""
    ledger = Ownership(partitions)
    seen: Counter[tuple[int, int]] = Counter()
    done = anyio.Event()
    stop: dict[str, anyio.Event] = {}
    stats: dict[str, Any] = {}
    done_at: list[float] = []

    async def member(name: str, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        stop[name] = anyio.Event()
        async with Consumer(
            topic,
            bootstrap_servers=bootstrap,
            listener=ledger.listener(name),
            auto_offset_reset="earliest",
            enable_auto_commit=True,
            auto_commit_interval_ms=300,
            **settings,
        ) as c:
            task_status.started()
            while not stop[name].is_set() and not done.is_set():
                batch = await c.getmany(timeout_ms=100, max_records=max(20, total // 500))
                for recs in batch.values():
                    seen.update((r.partition, r.offset) for r in recs)
                if len(seen) >= total and not done.is_set():
                    done_at.append(time.monotonic())
                    done.set()
                # Slow consumers, so the joins and leaves happen mid-stream.
                await anyio.sleep(0.01)
            stats[name] = c.statistics()["group"]

    started = time.monotonic()
    with anyio.fail_after(deadline):
        async with anyio.create_task_group() as tg:
            for name in ("a", "b", "c"):
                await tg.start(member, name)
            while len(seen) < total // 4:  # noqa: ASYNC110 - polling a counter
                await anyio.sleep(0.05)
            await tg.start(member, "d")
            while len(seen) < total // 2:  # noqa: ASYNC110 - polling a counter
                await anyio.sleep(0.05)
            stop["b"].set()
            await done.wait()
    ended = time.monotonic()
    return ChurnResult(
        total=total,
        consumed=seen,
        ownership=ledger,
        # Up to the moment the last record was read: the closes after it are not churn.
        pauses=ledger.pauses(done_at[0] if done_at else ended),
        unowned_partition_seconds=ledger.unowned_partition_seconds(
            done_at[0] if done_at else ended
        ),
        seconds=ended - started,
        statistics=stats,
    )


__all__ = ["ChurnResult", "Ownership", "run_churn"]
