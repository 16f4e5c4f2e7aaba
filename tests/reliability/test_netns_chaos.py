"""A short network-fault run (issue 29): three faults of the ``make chaos`` schedule on a
three-node Apache Kafka cluster in network namespaces, our idempotent producer and a consumer
group, nothing lost, duplicated or reordered; CI's short version of ``make chaos`` (20 faults
per workload). It runs ``python -m tests.harness.chaos`` in a child process: the runner moves
its threads into the rig's client namespace, which must never happen to a pytest worker
that goes on to other tests. About 70-90 s on two cores, most of it the cluster's start.

KRaft only: in ZooKeeper mode (2.8 and 3.x, ``KAFKA_ASYNC_APACHE_MODE=zookeeper``)
``ApacheKafka`` starts the cluster's ZooKeeper on 127.0.0.1 in the runner's own namespace (the
rig's client namespace) and gives every node ``zookeeper.connect=127.0.0.1:PORT``, which in a
node's namespace is that namespace's own loopback: on 2.8.2 every node logged "Connecting to
zookeeper on 127.0.0.1:35745" and exited 30 s later with ZooKeeperClientTimeoutException
(state CONNECTING), so no workload ran and no chaos.jsonl was written. The rig has no member
for ZooKeeper (it would need a namespace of its own, reached on the subnet, and faults that
say what they do to it), so the test is skipped in that mode, with that reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_async.testing.apache import default_mode, default_version
from tests.harness.netns import rig_available

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_three_network_faults_lose_nothing(tmp_path: Path) -> None:
    why = rig_available()
    if why:
        pytest.skip(why)
    version = default_version()
    if default_mode(version) == "zookeeper":
        pytest.skip(
            f"Apache Kafka {version} runs in ZooKeeper mode here: the harness starts ZooKeeper "
            "on 127.0.0.1 in the runner's namespace and the rig's nodes, each in a namespace of "
            "its own, cannot reach it (zookeeper.connect=127.0.0.1:PORT is their own loopback; "
            "2.8.2's nodes exited with ZooKeeperClientTimeoutException); the rig is KRaft only"
        )
    results = tmp_path / "chaos.jsonl"
    # seed 31: the client cut from the leader, the leader isolated, packet loss
    argv = [
        sys.executable,
        "-m",
        "tests.harness.chaos",
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
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    status = done.returncode
    print(done.stdout[-4000:], done.stderr[-4000:])
    assert results.exists(), (
        f"the chaos runner wrote no results (exit {status}): {done.stderr[-2000:]}"
    )
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(rows) == 1, rows
    row = rows[0]
    assert row["acked"] > 0
    assert (row["lost"], row["duplicated"], row["reordered"]) == (0, 0, 0), row
    assert not any(row["other"].values()), row
    assert status == 0
