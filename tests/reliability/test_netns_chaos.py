"""A short network-fault run (issue 29): three faults of the ``make chaos`` schedule on a
three-node Apache Kafka cluster in network namespaces, our idempotent producer and a consumer
group, nothing lost, duplicated or reordered. ``slow``: the cluster alone takes 30-60 s to
start on a two-core machine, so this runs in ``make soak``; ``make chaos`` runs 20 faults
per workload.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import chaos
from tests.harness.netns import rig_available

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_three_network_faults_lose_nothing(tmp_path: Path) -> None:
    why = rig_available()
    if why:
        pytest.skip(why)
    results = tmp_path / "chaos.jsonl"
    # seed 31: the client cut from the leader, the leader isolated, packet loss
    status = chaos.main(
        [
            "--faults",
            "3",
            "--seed",
            "31",
            "--fault-s",
            "5",
            "--heal-s",
            "5",
            "--workloads",
            "ours",
            "--json",
            str(results),
        ]
    )
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(rows) == 1, rows
    row = rows[0]
    assert row["acked"] > 0
    assert (row["lost"], row["duplicated"], row["reordered"]) == (0, 0, 0), row
    assert not any(row["other"].values()), row
    assert status == 0
