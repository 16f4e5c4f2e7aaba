"""A network-fault rig (issue 29): Kafka nodes and clients in Linux network namespaces,
joined by veth pairs to a bridge in a namespace of the rig's own, on a private subnet that
exists only inside the rig.

Layout (``T`` is a per-rig tag; every name starts with :data:`PREFIX`)::

    kfr-T-br   bridge namespace: bridge "br0", one veth "v-<member>" per member
    kfr-T-n1   node 1: "eth0" 10.213.29.11/24     (n2 .12, n3 .13, ...)
    kfr-T-c1   client 1: "eth0" 10.213.29.101/24

No namespace has a default route, so nothing in the rig can reach anything but the subnet.
The root namespace gets a blackhole route for the subnet while the rig exists, so a stray
packet from outside the rig (a process that forgot to enter a namespace) is dropped on this
machine instead of following the default route out. Before any traffic, :meth:`Rig.verify`
checks with ``ip route get`` from every member's namespace that every other member's
address resolves to that namespace's own ``eth0`` (and raises :class:`RigError` if not).

Faults (all undone by :meth:`Rig.heal`): :meth:`Rig.cut` drops every packet between two
members (nftables, both directions, in both namespaces), :meth:`Rig.loss` drops a random
share of a member's packets (nftables ``numgen random``), :meth:`Rig.link_down` takes the
member's veth down on the bridge side, :meth:`Rig.slow` rate-limits it with ``tc tbf`` both
ways. (netem is not in this kernel.)

Tear-down (:meth:`Rig.teardown`, also registered with ``atexit``) kills every process left
in the rig's namespaces, deletes the namespaces (their veths and rules go with them) and the
blackhole route; :func:`cleanup` does the same for leftovers of any earlier rig, found by
name prefix. Needs root, ``ip``, ``tc`` and ``nft`` (installed with apt-get when missing).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator, Sequence

from tests.harness.apt import apt_install

__all__ = ["PREFIX", "SUBNET", "Rig", "RigError", "cleanup", "rig_available"]

#: Every namespace of every rig starts with this.
PREFIX = "kfr-"
#: The rig's private /24 (not used on this machine: checked before use).
SUBNET = "10.213.29"
_CLONE_NEWNET = 0x40000000
#: One rig at a time on a machine (they share the subnet): build() holds this lock.
LOCK_PATH = "/run/kafka-async-netns-rig.lock"


class RigError(RuntimeError):
    """The rig cannot be built or would not be safe to use."""


def _run(argv: Sequence[str], *, check: bool = True, timeout: float = 30.0) -> str:
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    if check and done.returncode != 0:
        raise RigError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def rig_available() -> str | None:
    """None when this machine can build a rig, else why not."""
    if os.geteuid() != 0:
        return "the network-fault rig needs root (network namespaces)"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"the network-fault rig needs {tool}"
    try:
        apt_install("nftables", lambda: shutil.which("nft"), RigError)
    except RigError as exc:
        return str(exc)
    return None


def _namespaces() -> list[str]:
    out = _run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _kill_in(ns: str) -> None:
    """SIGKILL every process in namespace ``ns`` (SIGCONT first, for stopped ones)."""
    for pid in _run(["ip", "netns", "pids", ns], check=False).split():
        for sig in (signal.SIGCONT, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), sig)


def _drop_guard() -> None:
    """Delete the root namespace's guard route for the subnet (if there)."""
    for _ in range(5):
        if not _run(["ip", "route", "show", f"{SUBNET}.0/24"], check=False).strip():
            return
        _run(["ip", "route", "del", f"{SUBNET}.0/24"], check=False)


def cleanup(prefix: str = PREFIX) -> list[str]:
    """Remove every namespace whose name starts with ``prefix`` (killing what runs in it)
    and the root namespace's guard route; returns the namespaces removed."""
    gone = [ns for ns in _namespaces() if ns.startswith(prefix)]
    for ns in gone:
        _kill_in(ns)
    for ns in gone:
        _run(["ip", "netns", "del", ns], check=False)
    if prefix == PREFIX or not [ns for ns in _namespaces() if ns.startswith(PREFIX)]:
        _drop_guard()
    return gone


def _setns(path: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, _CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise RigError(f"setns({path}) failed: {os.strerror(err)}")
    finally:
        os.close(fd)


class Rig:
    """One rig: ``nodes`` node namespaces and ``clients`` client namespaces on a bridge.

    Members are named ``n1..nN`` and ``c1..cM``; :meth:`address` gives their address and
    :meth:`ns` their namespace.
    """

    def __init__(self, nodes: int = 3, clients: int = 1, tag: str | None = None) -> None:
        self.tag = tag or uuid.uuid4().hex[:4]
        self.members = [f"n{i}" for i in range(1, nodes + 1)] + [
            f"c{j}" for j in range(1, clients + 1)
        ]
        self._addr = {f"n{i}": f"{SUBNET}.{10 + i}" for i in range(1, nodes + 1)}
        self._addr.update({f"c{j}": f"{SUBNET}.{100 + j}" for j in range(1, clients + 1)})
        self.bridge_ns = f"{PREFIX}{self.tag}-br"
        self.cuts: set[frozenset[str]] = set()
        self.losses: dict[str, int] = {}
        self.down: set[str] = set()
        self.slowed: set[str] = set()
        self.built = False
        self._lock: int | None = None

    # -- names -----------------------------------------------------------------------------

    def ns(self, member: str) -> str:
        """The namespace of ``member``."""
        return f"{PREFIX}{self.tag}-{member}"

    def address(self, member: str) -> str:
        """The address of ``member`` on the rig's subnet."""
        return self._addr[member]

    def exec_prefix(self, member: str) -> list[str]:
        """Argv prefix that runs a command inside ``member``'s namespace (it execs it)."""
        return ["ip", "netns", "exec", self.ns(member)]

    @property
    def nodes(self) -> list[str]:
        """The node members, ``n1..nN``."""
        return [m for m in self.members if m.startswith("n")]

    # -- build and tear down ---------------------------------------------------------------

    def _acquire(self, timeout: float) -> None:
        fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise RigError(f"another rig held {LOCK_PATH} for {timeout} s") from None
                time.sleep(0.5)
        self._lock = fd

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing drops the flock
            self._lock = None

    def build(self, wait: float = 900.0) -> Rig:
        """Create namespaces, bridge, veths, addresses, the root guard route; then verify.
        Waits up to ``wait`` seconds for another rig of this machine to be torn down."""
        why = rig_available()
        if why:
            raise RigError(why)
        self._acquire(wait)
        try:
            in_use = _run(["ip", "-o", "addr"]) + _run(["ip", "route"])
        except BaseException:
            self._release()
            raise
        if f"{SUBNET}." in in_use:
            self._release()
            raise RigError(
                f"{SUBNET}.0/24 is already in use on this machine (a rig left over? "
                f"python -m tests.harness.chaos --cleanup):\n{in_use}"
            )
        atexit.register(self.teardown)
        self.built = True
        try:
            # Guard first: from now on nothing in the root namespace can send to the subnet.
            _run(["ip", "route", "add", "blackhole", f"{SUBNET}.0/24"])
            br = self.bridge_ns
            _run(["ip", "netns", "add", br])
            _run(["ip", "-n", br, "link", "set", "lo", "up"])
            _run(["ip", "-n", br, "link", "add", "br0", "type", "bridge"])
            _run(["ip", "-n", br, "link", "set", "br0", "up"])
            for m in self.members:
                ns = self.ns(m)
                _run(["ip", "netns", "add", ns])
                _run(["ip", "-n", ns, "link", "set", "lo", "up"])
                veth = f"v-{m}"
                _run(["ip", "-n", br, "link", "add", veth, "type", "veth", "peer", "name", "eth0"])
                _run(["ip", "-n", br, "link", "set", "eth0", "netns", ns])
                _run(["ip", "-n", br, "link", "set", veth, "master", "br0", "up"])
                _run(["ip", "-n", ns, "addr", "add", f"{self.address(m)}/24", "dev", "eth0"])
                _run(["ip", "-n", ns, "link", "set", "eth0", "up"])
            self.verify()
        except BaseException:
            self.teardown()
            raise
        return self

    def route_ok(self, member: str, address: str) -> str | None:
        """None when ``address`` resolves to ``member``'s own rig interface, else why not."""
        out = _run(["ip", "-n", self.ns(member), "route", "get", address], check=False)
        words = out.split()
        if not words or "dev" not in words:
            return f"no route from {member} to {address}: {out.strip() or 'unreachable'}"
        dev = words[words.index("dev") + 1]
        if dev != "eth0" or "via" in words or words[0] != address:
            return f"{address} from {member} resolves to {out.strip()!r}, not the rig's eth0"
        return None

    def verify(self) -> None:
        """Refuse (:class:`RigError`) unless every member reaches every other member's
        address through its own rig interface only, no member has a default route, and the
        root namespace drops the subnet (the guard route)."""
        problems: list[str] = []
        for m in self.members:
            routes = _run(["ip", "-n", self.ns(m), "route"])
            if "default" in routes:
                problems.append(f"{m} has a default route: {routes.strip()}")
            for other in self.members:
                if other != m:
                    why = self.route_ok(m, self.address(other))
                    if why:
                        problems.append(why)
        for other in self.members:
            out = _run(["ip", "route", "get", self.address(other)], check=False)
            if out.strip() and "dev" in out.split():
                problems.append(f"the root namespace would send to {other}: {out.strip()}")
        if problems:
            raise RigError("the rig is not safe to use:\n" + "\n".join(problems))

    def check_here(self, address: str) -> None:
        """Refuse unless ``address`` is a rig address that resolves to a rig ``eth0`` in
        the calling thread's namespace, which has no default route (``ip`` runs as a child
        process, which inherits the thread's namespace)."""
        if address not in self._addr.values():
            raise RigError(f"{address} is not an address of this rig")
        default = _run(["ip", "route", "show", "default"], check=False)
        if default.strip():
            raise RigError(f"this namespace has a default route: {default.strip()}")
        out = _run(["ip", "route", "get", address], check=False)
        words = out.split()
        if not words or "dev" not in words or words[words.index("dev") + 1] != "eth0":
            raise RigError(f"{address} does not resolve to a rig interface here: {out.strip()}")
        if "via" in words:
            raise RigError(f"{address} would go through a gateway here: {out.strip()}")

    @contextlib.contextmanager
    def inside(self, member: str) -> Iterator[None]:
        """Move the calling thread into ``member``'s namespace (sockets it opens, and child
        processes it starts, live there) and back on exit. Enter before the process starts
        any thread that should follow it (threads inherit their creator's namespace)."""
        root = os.open("/proc/self/ns/net", os.O_RDONLY)
        try:
            _setns(f"/run/netns/{self.ns(member)}")
            try:
                yield
            finally:
                libc = ctypes.CDLL(None, use_errno=True)
                if libc.setns(root, _CLONE_NEWNET) != 0:
                    raise RigError("could not return to the root namespace")
        finally:
            os.close(root)

    def teardown(self) -> None:
        """Kill what runs in the rig, delete its namespaces and the guard route."""
        if not self.built:
            self._release()
            return
        self.built = False
        try:
            cleanup(f"{PREFIX}{self.tag}-")
        finally:
            self._release()
        with contextlib.suppress(Exception):
            atexit.unregister(self.teardown)

    # -- faults ----------------------------------------------------------------------------

    def _apply_rules(self, member: str) -> None:
        """Rewrite ``member``'s nftables table from the current cuts and loss."""
        ns = self.ns(member)
        peers = sorted(
            self.address(o) for pair in self.cuts if member in pair for o in pair if o != member
        )
        loss = self.losses.get(member, 0)
        rules_in: list[str] = []
        rules_out: list[str] = []
        if peers:
            rules_in.append(f"ip saddr {{ {', '.join(peers)} }} drop")
            rules_out.append(f"ip daddr {{ {', '.join(peers)} }} drop")
        if loss:
            chance = "" if loss >= 100 else f"numgen random mod 100 < {loss} "
            rules_in.append(f'iifname "eth0" {chance}drop')
            rules_out.append(f'oifname "eth0" {chance}drop')
        script = "table inet kfr\ndelete table inet kfr\n"
        if rules_in:
            script += (
                "table inet kfr {\n"
                "  chain input {\n    type filter hook input priority 0; policy accept;\n"
                + "".join(f"    {r}\n" for r in rules_in)
                + "  }\n  chain output {\n"
                "    type filter hook output priority 0; policy accept;\n"
                + "".join(f"    {r}\n" for r in rules_out)
                + "  }\n}\n"
            )
        done = subprocess.run(
            ["ip", "netns", "exec", ns, "nft", "-f", "-"],
            input=script,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if done.returncode != 0:
            raise RigError(f"nft in {ns} failed: {done.stderr.strip()}\n{script}")

    def cut(self, a: str, b: str) -> None:
        """Drop every packet between members ``a`` and ``b`` (both ways)."""
        self.cuts.add(frozenset((a, b)))
        self._apply_rules(a)
        self._apply_rules(b)

    def partition(self, *groups: Sequence[str]) -> None:
        """Cut every member of each group from every member of the other groups."""
        for i, g in enumerate(groups):
            for h in groups[i + 1 :]:
                for a in g:
                    for b in h:
                        self.cuts.add(frozenset((a, b)))
        for m in {m for g in groups for m in g}:
            self._apply_rules(m)

    def loss(self, member: str, percent: int) -> None:
        """Drop ``percent`` % (1-100) of ``member``'s packets at random, each way."""
        if not 1 <= percent <= 100:
            raise ValueError(f"percent must be 1..100, got {percent}")
        self.losses[member] = percent
        self._apply_rules(member)

    def link_down(self, member: str) -> None:
        """Take ``member``'s veth down on the bridge side (its carrier goes)."""
        _run(["ip", "-n", self.bridge_ns, "link", "set", f"v-{member}", "down"])
        self.down.add(member)

    def slow(self, member: str, rate: str = "256kbit") -> None:
        """Rate-limit ``member``'s link to ``rate`` both ways (tc tbf on both veth ends)."""
        spec = ["root", "tbf", "rate", rate, "burst", "16kb", "latency", "400ms"]
        _run([*self.exec_prefix(member), "tc", "qdisc", "replace", "dev", "eth0", *spec])
        br = ["ip", "netns", "exec", self.bridge_ns, "tc", "qdisc", "replace"]
        _run([*br, "dev", f"v-{member}", *spec])
        self.slowed.add(member)

    def heal(self) -> None:
        """Undo every fault: rules, links, rate limits."""
        touched = {m for pair in self.cuts for m in pair} | set(self.losses)
        self.cuts.clear()
        self.losses.clear()
        for m in sorted(touched):
            self._apply_rules(m)
        for m in sorted(self.down):
            _run(["ip", "-n", self.bridge_ns, "link", "set", f"v-{m}", "up"])
        self.down.clear()
        for m in sorted(self.slowed):
            _run([*self.exec_prefix(m), "tc", "qdisc", "del", "dev", "eth0", "root"], check=False)
            br = ["ip", "netns", "exec", self.bridge_ns, "tc", "qdisc", "del"]
            _run([*br, "dev", f"v-{m}", "root"], check=False)
        self.slowed.clear()

    def faults(self) -> str:
        """The faults in place, for logs."""
        parts = [f"cut {'-'.join(sorted(p))}" for p in sorted(self.cuts, key=sorted)]
        parts += [f"loss {m} {p}%" for m, p in sorted(self.losses.items())]
        parts += [f"down {m}" for m in sorted(self.down)]
        parts += [f"slow {m}" for m in sorted(self.slowed)]
        return ", ".join(parts) or "none"
