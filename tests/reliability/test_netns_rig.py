"""The network-fault rig of issue 29 (tests/harness/netns.py) on its own, without Kafka:
members reach each other only through the rig, each fault stops traffic and heals, the rig
refuses to run when a route could leave it, and tear-down leaves nothing behind.

Traffic here goes only between namespaces of the rig (private addresses that exist nowhere
else); the root namespace only asks ``ip route get``, which sends nothing. Needs root.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator

import pytest

from tests.harness.chaos import KINDS, schedule
from tests.harness.netns import PREFIX, SUBNET, Rig, RigError, cleanup, rig_available

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", autouse=True)
def _root_and_tools() -> None:
    why = rig_available()  # installs nftables with apt-get when missing
    if why:
        pytest.skip(why)


def _rig_in_use() -> bool:
    out = subprocess.run(["ip", "route"], capture_output=True, text=True, check=False).stdout
    return f"{SUBNET}." in out


# First: the module's rig (below) holds the subnet until the module ends.
def test_teardown_and_cleanup_leave_nothing() -> None:
    if _rig_in_use():
        pytest.skip(f"another rig holds {SUBNET}.0/24")

    def names(prefix: str) -> list[str]:
        out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        return [line.split()[0] for line in out.splitlines() if line.startswith(prefix)]

    first = Rig(nodes=1, clients=1).build()
    tag = f"{PREFIX}{first.tag}-"
    assert len(names(tag)) == 3
    first.teardown()
    assert names(tag) == []
    assert not _rig_in_use()
    # A rig whose process died without tearing down: cleanup finds it by name prefix.
    second = Rig(nodes=1, clients=1).build()
    second.built = False  # as if the process had died: teardown() would do nothing
    tag = f"{PREFIX}{second.tag}-"
    left = names(tag)
    assert len(left) == 3
    assert sorted(cleanup(tag)) == sorted(left)
    assert names(tag) == []
    assert not _rig_in_use()
    second.teardown()  # nothing left to remove; releases the one-rig-at-a-time lock


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    built = Rig(nodes=2, clients=1).build()  # waits while another rig runs
    try:
        yield built
    finally:
        built.teardown()


@pytest.fixture(scope="module")
def server(rig: Rig) -> Iterator[tuple[str, int]]:
    """A listening socket inside n1's namespace, bound to n1's rig address."""
    with rig.inside("n1"):
        sock = socket.create_server((rig.address("n1"), 0), backlog=50)
    try:
        yield rig.address("n1"), sock.getsockname()[1]
    finally:
        sock.close()


def _connects(rig: Rig, member: str, target: tuple[str, int], timeout: float = 1.5) -> bool:
    """True when a TCP connection from ``member``'s namespace to ``target`` completes."""
    with rig.inside(member):
        rig.check_here(target[0])
        try:
            with socket.create_connection(target, timeout=timeout):
                return True
        except OSError:
            return False


def test_members_reach_each_other_only_through_the_rig(rig: Rig, server: tuple[str, int]) -> None:
    assert _connects(rig, "c1", server)
    assert _connects(rig, "n2", server)
    for member in rig.members:
        routes = subprocess.run(
            ["ip", "-n", rig.ns(member), "route"], capture_output=True, text=True, check=True
        ).stdout
        assert "default" not in routes
    # The root namespace has no way to the subnet: its guard route drops it on this machine.
    probe = subprocess.run(
        ["ip", "route", "get", rig.address("n1")], capture_output=True, text=True, check=False
    )
    assert probe.returncode != 0 or "dev" not in probe.stdout.split()


def test_each_fault_stops_traffic_and_heals(rig: Rig, server: tuple[str, int]) -> None:
    rig.cut("c1", "n1")
    assert rig.faults() == "cut c1-n1"
    assert not _connects(rig, "c1", server)
    assert _connects(rig, "n2", server)  # only that pair is cut
    rig.heal()
    assert _connects(rig, "c1", server)

    rig.partition(["n1"], ["n2", "c1"])
    assert not _connects(rig, "c1", server)
    assert not _connects(rig, "n2", server)
    rig.heal()

    rig.link_down("n1")
    assert not _connects(rig, "c1", server)
    rig.heal()

    rig.loss("n1", 100)
    assert not _connects(rig, "c1", server)
    rig.heal()

    rig.slow("n1")
    qdisc = subprocess.run(
        [*rig.exec_prefix("n1"), "tc", "qdisc", "show", "dev", "eth0"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "tbf" in qdisc
    rig.heal()
    qdisc = subprocess.run(
        [*rig.exec_prefix("n1"), "tc", "qdisc", "show", "dev", "eth0"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "tbf" not in qdisc
    assert rig.faults() == "none"
    assert _connects(rig, "c1", server)
    assert _connects(rig, "n2", server)


def test_a_route_out_of_the_rig_is_refused(rig: Rig) -> None:
    ns = rig.ns("c1")
    subprocess.run(["ip", "-n", ns, "route", "add", "default", "dev", "eth0"], check=True)
    try:
        with pytest.raises(RigError, match="default route"):
            rig.verify()
        with rig.inside("c1"):
            with pytest.raises(RigError, match="not an address of this rig"):
                rig.check_here("192.0.2.250")
            with pytest.raises(RigError, match="default route"):
                rig.check_here(rig.address("n1"))
    finally:
        subprocess.run(["ip", "-n", ns, "route", "del", "default"], check=True)
    rig.verify()


def test_schedule_is_seeded_and_covers_every_kind() -> None:
    first = [str(f) for f in schedule(20, seed=7)]
    assert first == [str(f) for f in schedule(20, seed=7)]
    assert first != [str(f) for f in schedule(20, seed=8)]
    kinds = {f.kind for f in schedule(len(KINDS), seed=3)}
    assert kinds == set(KINDS)
    assert all(10 <= f.percent <= 40 for f in schedule(40, seed=1) if f.kind == "loss")
