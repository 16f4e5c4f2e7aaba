"""A retriable failure of the positions task (an OffsetFetch that timed out) is retried by
that task and never raised by ``getmany``, as the Java client's ``poll`` retries it."""

from __future__ import annotations

import anyio
import pytest

from kafka_async import Producer
from kafka_async.consumer import Consumer
from kafka_async.protocol.apis import OFFSET_FETCH
from kafka_async.structs import TopicPartition
from kafka_async.testing import ProxiedBroker
from kafka_async.testing.topics import create_topic

pytestmark = pytest.mark.integration


@pytest.mark.anyio
async def test_getmany_does_not_raise_a_timed_out_offset_fetch(
    proxied_broker: ProxiedBroker,
) -> None:
    pb = proxied_broker
    topic = "retriable-positions"
    await anyio.to_thread.run_sync(create_topic, pb.bootstrap_servers, topic, 1)
    async with Producer(bootstrap_servers=pb.bootstrap_servers) as producer:
        for i in range(5):
            await producer.send(topic, value=b"%d" % i, partition=0)
    # The first two committed-offset lookups get no answer: each times out after
    # request_timeout_ms and the positions task asks again.
    pb.proxy.drop_requests(OFFSET_FETCH.key, count=2)
    consumer: Consumer[bytes, bytes]
    async with Consumer(
        bootstrap_servers=pb.bootstrap_servers,
        group_id="retriable-positions",
        auto_offset_reset="earliest",
        request_timeout_ms=1000,
    ) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        got: list[bytes | None] = []
        with anyio.fail_after(30):
            while len(got) < 5:
                batch = await consumer.getmany(timeout_ms=500)  # never raises here
                got += [r.value for rs in batch.values() for r in rs]
    assert got == [b"%d" % i for i in range(5)]
    assert pb.proxy.stats.requests_dropped == 2
