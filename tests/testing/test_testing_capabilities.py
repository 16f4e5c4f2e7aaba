"""The skip evidence: what the broker advertises, as we see it and as librdkafka sees it."""

from __future__ import annotations

import pytest

from kafka_async.testing.capabilities import (
    advertised_apis,
    describe_gap,
    librdkafka_api_versions,
)

pytestmark = pytest.mark.integration


def test_librdkafka_sees_what_we_see(kafka_broker: str) -> None:
    pytest.importorskip("confluent_kafka")
    ours = advertised_apis(kafka_broker)
    theirs = librdkafka_api_versions(kafka_broker)
    assert theirs is not None, "librdkafka's ApiVersions lines were not found in its log"
    # Produce, Fetch, ListOffsets and Metadata: every broker has them, and both clients
    # read the same answer.
    for key in (0, 1, 2, 3):
        assert theirs[key] == ours[key], key


def test_a_gap_names_both_views(kafka_broker: str) -> None:
    pytest.importorskip("confluent_kafka")
    ours = advertised_apis(kafka_broker)
    assert describe_gap(kafka_broker, "Produce", 0, ours) is None
    gap = describe_gap(kafka_broker, "Produce", ours[0][1] + 1, ours)
    assert gap is not None
    seen = f"v{ours[0][0]}-v{ours[0][1]}"
    assert str(gap).endswith(f"to kafka_async: {seen}; to librdkafka: {seen}"), str(gap)
