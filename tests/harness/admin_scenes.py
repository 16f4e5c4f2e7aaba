"""Cluster states that admin tests need and a client cannot easily make: a hanging
transaction, and a share-group member.

- :func:`open_hanging_transaction`: a transactional producer (librdkafka, in a child
  process) writes records to a partition inside a transaction and dies without committing or
  aborting, leaving the transaction open on the broker until its timeout (10 minutes here):
  what ``describe_producers`` and ``abort_transaction`` are for.
- :class:`ShareGroupMember`: one member of a share group (KIP-932) made of raw
  ShareGroupHeartbeat requests: it joins, heartbeats until the coordinator has assigned it
  the partitions it expects, and leaves. It fetches nothing; enough for the admin calls on
  share groups.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid

import anyio

from kafka_async.cluster.client import ClusterClient
from kafka_async.net.config import ClientConfig
from kafka_async.protocol.apis import SHARE_GROUP_HEARTBEAT
from kafka_async.protocol.apis.share_group_heartbeat import ShareGroupHeartbeatRequest

__all__ = ["HANGING_TRANSACTION_TIMEOUT_MS", "ShareGroupMember", "open_hanging_transaction"]

#: The transaction timeout of :func:`open_hanging_transaction` (the broker aborts it after).
HANGING_TRANSACTION_TIMEOUT_MS = 600_000

_HANGING = textwrap.dedent(
    """
    import os, sys
    from confluent_kafka import Producer
    bootstrap, topic, partition, txn, count = sys.argv[1:6]
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn,
                  "transaction.timeout.ms": int(sys.argv[6]), "linger.ms": 0})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(int(count)):
        p.produce(topic, value=b"in-txn-%d" % i, partition=int(partition))
    assert p.flush(30) == 0
    print("open", flush=True)
    os._exit(0)  # die inside the transaction: no commit, no abort
    """
)

# Coordinator codes that mean: look the coordinator up again, or wait for it.
_COORDINATOR_CODES = (14, 15, 16)


def open_hanging_transaction(
    bootstrap: str, topic: str, transactional_id: str, *, partition: int = 0, count: int = 5
) -> None:
    """Write ``count`` records to ``topic[partition]`` in a transaction of
    ``transactional_id`` and leave it open (the producer process dies inside it).

    Blocking (run it in a thread from async code); raises ``RuntimeError`` with the child's
    output when the producer could not open the transaction.
    """
    argv = [
        sys.executable,
        "-c",
        _HANGING,
        bootstrap,
        topic,
        str(partition),
        transactional_id,
        str(count),
        str(HANGING_TRANSACTION_TIMEOUT_MS),
    ]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if out.stdout.strip() != "open":
        raise RuntimeError(f"the transactional producer failed: {out.stderr.strip()[-2000:]}")


class ShareGroupMember:
    """A share-group member of raw ShareGroupHeartbeats: :meth:`join`, then :meth:`leave`."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        self.client = ClusterClient(ClientConfig.from_kwargs(bootstrap_servers=bootstrap)[0])
        self.group = group
        self.topic = topic
        #: The member id this client chose (KIP-932: members name themselves).
        self.member_id = uuid.uuid4().hex[:22]
        #: The member epoch of the last answer (0 before joining).
        self.epoch = 0
        #: The coordinator's node id.
        self.coordinator = -1
        #: The partitions of ``topic`` assigned to this member.
        self.assigned: set[int] = set()

    async def _beat(self, epoch: int, topics: list[str] | None) -> int:
        body = ShareGroupHeartbeatRequest(
            group_id=self.group,
            member_id=self.member_id,
            member_epoch=epoch,
            subscribed_topic_names=topics,
        )
        resp = await self.client.request(self.coordinator, SHARE_GROUP_HEARTBEAT, body)
        if resp.error_code in _COORDINATOR_CODES:
            self.client.invalidate_coordinator(self.group)
            self.coordinator = await self.client.coordinator(self.group)
        elif resp.error_code == 0:
            self.epoch = resp.member_epoch
            if resp.assignment is not None:
                self.assigned = {p for t in resp.assignment.topic_partitions for p in t.partitions}
        return resp.error_code

    async def join(self, partitions: int, *, timeout: float = 20.0) -> None:  # noqa: ASYNC109
        """Join and heartbeat until ``partitions`` partitions are assigned to this member;
        ``TimeoutError`` after ``timeout`` seconds, ``RuntimeError`` on a refusal."""
        await self.client.start()
        self.coordinator = await self.client.coordinator(self.group)
        with anyio.fail_after(timeout):
            while len(self.assigned) < partitions:
                code = await self._beat(self.epoch, [self.topic] if self.epoch == 0 else None)
                if code not in (0, *_COORDINATOR_CODES):
                    raise RuntimeError(f"ShareGroupHeartbeat refused with error code {code}")
                await anyio.sleep(0.3)

    async def leave(self) -> None:
        """Leave the group (member epoch -1) and close the connection; always closes."""
        try:
            with anyio.move_on_after(10):
                await self._beat(-1, None)
        finally:
            await self.client.close()
