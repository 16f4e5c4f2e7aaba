"""Issue 22, defect 1: ``committed([tp1, tp2])`` raised ``TypeError: unhashable type: 'list'``.

The single-partition form answers an ``int`` (or None); the collection form answers a dict
``tp -> OffsetAndMetadata | None`` with an entry for every partition asked.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafka_async.consumer import Consumer
from kafka_async.structs import OffsetAndMetadata, TopicPartition
from kafka_async.testing.plugin import KafkaService

pytestmark = pytest.mark.integration


@pytest.mark.anyio
async def test_committed_accepts_a_collection(
    kafka_broker: str, new_topic: Callable[..., str], kafka_service: KafkaService
) -> None:
    topic = new_topic(3)
    tp0, tp1, tp2 = (TopicPartition(topic, p) for p in range(3))
    async with Consumer(
        bootstrap_servers=kafka_broker, group_id=f"g-{topic}", enable_auto_commit=False
    ) as c:
        c.assign([tp0, tp1, tp2])
        await c.commit({tp0: 5, tp1: (7, "meta")})

        many = await c.committed([tp0, tp1, tp2], timeout_ms=30_000)
        assert list(many) == [tp0, tp1, tp2]
        first, second = many[tp0], many[tp1]
        assert isinstance(first, OffsetAndMetadata)
        assert first.offset == 5
        assert isinstance(second, OffsetAndMetadata)
        if second.metadata != "meta" and kafka_service.kind == "tansu":
            pytest.skip(
                f"tansu {kafka_service.version}: the offset committed with metadata 'meta' "
                f"comes back as {(second.offset, second.metadata)!r}"
            )
        assert (second.offset, second.metadata) == (7, "meta")
        assert many[tp2] is None

        # Any iterable works (a set, a generator), and the one-partition form is unchanged.
        assert set(await c.committed({tp1, tp2})) == {tp1, tp2}
        assert list(await c.committed(tp for tp in [tp2])) == [tp2]
        assert await c.committed([]) == {}
        assert await c.committed(tp0) == 5
        assert await c.committed(tp2) is None
