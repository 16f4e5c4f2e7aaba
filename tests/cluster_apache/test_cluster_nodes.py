"""The three-node cluster fixture itself: SIGKILL, graceful stop and restart of one node,
and the leader / coordinator / in-sync questions the failover scenarios rely on."""

from __future__ import annotations

import time
import uuid

import pytest

from kafka_async.testing.apache import ApacheKafka

pytestmark = [pytest.mark.integration]


def _wait(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def test_cluster_shape(apache_cluster: ApacheKafka) -> None:
    topic = f"shape-{uuid.uuid4().hex[:8]}"
    apache_cluster.create_topic(topic, 3, configs={"min.insync.replicas": "2"})
    apache_cluster.wait_in_sync(topic)
    assert apache_cluster.node_ids == [1, 2, 3]
    assert len(apache_cluster.bootstrap_servers.split(",")) == 3
    leaders = {apache_cluster.leader_of(topic, p) for p in range(3)}
    assert leaders <= {1, 2, 3}
    for p in range(3):
        replicas, isr = apache_cluster.replicas_of(topic, p)
        assert sorted(replicas) == [1, 2, 3]
        assert sorted(isr) == [1, 2, 3]
    assert apache_cluster.coordinator_of("some-group") in (1, 2, 3)
    assert apache_cluster.coordinator_of("some-txn", key_type=1) in (1, 2, 3)
    with pytest.raises(ValueError, match="no node 4"):
        apache_cluster.kill_node(4)


def test_kill_moves_leadership_and_restart_rejoins(apache_cluster: ApacheKafka) -> None:
    topic = f"kill-{uuid.uuid4().hex[:8]}"
    apache_cluster.create_topic(topic, 1, configs={"min.insync.replicas": "2"})
    apache_cluster.wait_in_sync(topic)
    leader = apache_cluster.leader_of(topic)
    pid = apache_cluster.pid(leader)
    apache_cluster.kill_node(leader)
    assert not apache_cluster.node_running(leader)
    assert apache_cluster.pid(leader) is None
    # The controller fences the dead broker (3 s session timeout) and elects another leader
    # from the ISR, which loses the dead replica.
    assert _wait(lambda: apache_cluster.leader_of(topic) not in (leader, -1), 30)
    assert _wait(lambda: leader not in apache_cluster.replicas_of(topic)[1], 30)
    assert apache_cluster.under_replicated(topic) == {(topic, 0): [leader]}
    apache_cluster.start_node(leader)
    assert apache_cluster.node_running(leader)
    assert apache_cluster.pid(leader) != pid
    apache_cluster.wait_in_sync(topic, timeout=60)
    assert sorted(apache_cluster.replicas_of(topic)[1]) == [1, 2, 3]


@pytest.mark.slow  # the graceful-stop failover scenario runs the same operations quickly
def test_graceful_stop_hands_over_before_exit(apache_cluster: ApacheKafka) -> None:
    topic = f"stop-{uuid.uuid4().hex[:8]}"
    apache_cluster.create_topic(topic, 1)
    apache_cluster.wait_in_sync(topic)
    leader = apache_cluster.leader_of(topic)
    group_coordinator = apache_cluster.coordinator_of("stop-group")
    apache_cluster.stop_node(leader)
    # Controlled shutdown: by the time the process has exited, another replica leads.
    assert apache_cluster.leader_of(topic) not in (leader, -1)
    if group_coordinator == leader:
        assert _wait(lambda: apache_cluster.coordinator_of("stop-group") != leader, 30)
    # What the fixture does before each test: start whatever is down, wait for the ISRs.
    assert apache_cluster.start_stopped() == [leader]
    assert apache_cluster.start_stopped() == []
    apache_cluster.wait_in_sync(timeout=60)
    assert all(apache_cluster.node_running(n) for n in apache_cluster.node_ids)
