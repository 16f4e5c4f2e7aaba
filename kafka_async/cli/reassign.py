"""``kafka-async reassign``: move partitions to other brokers, watch or cancel the moves.

::

    kafka-async reassign start orders:0=2,3 orders:1=3,1 --wait
    kafka-async reassign list
    kafka-async reassign cancel orders:0
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from ..errors import KafkaTimeoutError
from ..structs import TopicPartition
from .output import Output
from .parsing import UsageError

__all__ = ["add_commands", "parse_move", "parse_partition"]

#: Seconds between two looks at the moves in progress while ``--wait`` waits.
_POLL_S = 0.5


def parse_partition(text: str) -> TopicPartition:
    """``TOPIC:PARTITION`` (the partition after the last colon)."""
    topic, sep, part = text.rpartition(":")
    if not sep or not topic or not part.isdigit():
        raise UsageError(f"expected TOPIC:PARTITION, got {text!r}")
    return TopicPartition(topic, int(part))


def parse_move(text: str) -> tuple[TopicPartition, list[int]]:
    """``TOPIC:PARTITION=B1,B2,...``: a partition and its target broker ids, in order."""
    where, sep, brokers = text.partition("=")
    if not sep:
        raise UsageError(f"expected TOPIC:PARTITION=BROKER,BROKER,..., got {text!r}")
    tp = parse_partition(where)
    ids = [b.strip() for b in brokers.split(",")]
    if not brokers.strip() or not all(b.isdigit() for b in ids):
        raise UsageError(f"{text!r}: the target is a comma-separated list of broker ids")
    replicas = [int(b) for b in ids]
    if len(set(replicas)) != len(replicas):
        raise UsageError(f"{text!r}: a broker id appears twice")
    return tp, replicas


def _moves(args: argparse.Namespace) -> dict[TopicPartition, list[int]]:
    out: dict[TopicPartition, list[int]] = {}
    for text in args.moves:
        tp, replicas = parse_move(text)
        if tp in out:
            raise UsageError(f"{tp.topic}:{tp.partition} is given twice")
        out[tp] = replicas
    return out


async def cmd_reassign_start(args: argparse.Namespace, out: Output) -> int:
    from .commands import open_admin

    moves = _moves(args)
    async with open_admin(args) as admin:
        results = await admin.alter_partition_reassignments(
            dict(moves), allow_replication_factor_change=not args.keep_replication_factor
        )
        failed = 0
        for tp, r in results.items():
            if r.error is None:
                out.success(f"{tp.topic}:{tp.partition}: moving to {_ids(moves[tp])}")
            else:
                failed += 1
                out.error(f"{tp.topic}:{tp.partition}: {r.error}")
        if failed or not args.wait:
            return 1 if failed else 0
        started = [tp for tp, r in results.items() if r.error is None]
        await _wait_done(admin, started, args, out)
    return 0


async def _wait_done(
    admin: Any, tps: Sequence[TopicPartition], args: argparse.Namespace, out: Output
) -> None:
    """Poll the moves in progress until none of ``tps`` is among them (or --wait-timeout)."""
    start = time.monotonic()
    ongoing: dict[TopicPartition, Any] = {}
    with anyio.move_on_after(args.wait_timeout):
        while True:
            ongoing = await admin.list_partition_reassignments(tps)
            if not ongoing:
                out.success(f"done in {time.monotonic() - start:.1f}s")
                return
            await anyio.sleep(_POLL_S)
    names = ", ".join(f"{tp.topic}:{tp.partition}" for tp in ongoing)
    raise KafkaTimeoutError(f"still moving after {args.wait_timeout:g}s: {names}")


async def cmd_reassign_cancel(args: argparse.Namespace, out: Output) -> int:
    from .commands import open_admin

    tps = [parse_partition(t) for t in args.partitions]
    if len(set(tps)) != len(tps):
        raise UsageError("a partition is given twice")
    async with open_admin(args) as admin:
        results = await admin.alter_partition_reassignments(dict.fromkeys(tps))
    failed = 0
    for tp, r in results.items():
        if r.error is None:
            out.success(f"{tp.topic}:{tp.partition}: move cancelled")
        else:
            failed += 1
            out.error(f"{tp.topic}:{tp.partition}: {r.error}")
    return 1 if failed else 0


async def cmd_reassign_list(args: argparse.Namespace, out: Output) -> int:
    from .commands import open_admin, partitions_of

    async with open_admin(args) as admin:
        tps: list[TopicPartition] | None = None
        if args.topics:
            tps = [TopicPartition(t, p) for t in args.topics for p in await partitions_of(admin, t)]
        ongoing = await admin.list_partition_reassignments(tps)
    if not ongoing:
        out.info("no partition is being moved")
        return 0
    out.table(
        ["TOPIC", "PARTITION", "REPLICAS", "ADDING", "REMOVING", "TARGET"],
        [
            (
                r.topic,
                r.partition,
                _ids(r.replicas),
                _ids(r.adding_replicas) or "-",
                _ids(r.removing_replicas) or "-",
                _ids(r.target_replicas),
            )
            for r in sorted(ongoing.values(), key=lambda r: (r.topic, r.partition))
        ],
    )
    return 0


def _ids(ids: Sequence[int]) -> str:
    return ",".join(map(str, ids))


def add_commands(sub: Any, cmd: Callable[..., argparse.ArgumentParser], parser_class: Any) -> None:
    """Add ``reassign start|cancel|list`` to the top-level sub-parsers ``sub``."""
    top = sub.add_parser("reassign", help="move partitions to other brokers, list or cancel moves")
    rsub = top.add_subparsers(dest="reassign_command", metavar="ACTION", parser_class=parser_class)
    rsub.required = True
    p = cmd(
        rsub,
        "start",
        cmd_reassign_start,
        "move partitions to new replicas (the first broker of a list is the preferred leader)",
    )
    p.add_argument("moves", nargs="+", metavar="TOPIC:PARTITION=BROKER,...")
    p.add_argument(
        "--keep-replication-factor",
        action="store_true",
        help="refuse a target with a different replica count (Kafka 3.9+)",
    )
    p.add_argument("--wait", action="store_true", help="wait until every move has completed")
    p.add_argument(
        "--wait-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="give up waiting after this long (default 300)",
    )
    p = cmd(rsub, "cancel", cmd_reassign_cancel, "cancel moves in progress")
    p.add_argument("partitions", nargs="+", metavar="TOPIC:PARTITION")
    p = cmd(rsub, "list", cmd_reassign_list, "the moves in progress")
    p.add_argument("topics", nargs="*", metavar="TOPIC", help="only these topics (default: all)")
