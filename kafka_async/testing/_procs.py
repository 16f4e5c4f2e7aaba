"""Child-process bookkeeping shared by the broker and the local S3 server.

Two guarantees: no child outlives the test run, and no wait blocks an event loop.

* Every child is recorded in ``_LIVE`` until it has been reaped; an ``atexit`` hook
  terminates (then kills) whatever is left when the interpreter exits normally.
* On Linux, a child spawned from the main thread also gets ``PR_SET_PDEATHSIG`` = SIGKILL,
  so even a SIGKILLed test runner leaves no broker behind. Only from the main thread, because
  the kernel ties the signal to the *thread* that forked: a child of a short-lived worker
  thread would die as soon as that thread exits.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import functools
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

import anyio

#: Live children and the pid of the process that spawned each: a forked copy of this process
#: inherits the table, and must leave its parent's children alone.
_LIVE: dict[subprocess.Popen[bytes], int] = {}
_LIVE_LOCK = threading.Lock()
_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None

    def set_pdeathsig() -> None:
        # Runs in the forked child before exec: keep it to one libc call, no allocation.
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)

    return set_pdeathsig


_SET_PDEATHSIG = _load_prctl()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (the kernel's pick, so not a listener's)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def spawn(
    argv: Sequence[str],
    *,
    log: IO[bytes],
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start a child with stdout+stderr into ``log``; it is tracked until reaped."""
    preexec = _SET_PDEATHSIG if threading.current_thread() is threading.main_thread() else None
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(env) if env is not None else None,
        # Own session: a Ctrl-C in the terminal reaches the test runner, which then stops
        # the child in order, instead of the child dying mid-test.
        start_new_session=True,
        preexec_fn=preexec,
    )
    with _LIVE_LOCK:
        _LIVE[proc] = os.getpid()
    return proc


def _forget(proc: subprocess.Popen[bytes]) -> None:
    with _LIVE_LOCK:
        _LIVE.pop(proc, None)


def send_signal(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Send ``sig`` to ``proc`` unless it has exited (a gone process is no error)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, sig)


def terminate_sync(proc: subprocess.Popen[bytes], grace: float) -> int:
    """SIGTERM, wait up to ``grace`` seconds, then SIGKILL; returns the exit status."""
    if proc.poll() is None:
        send_signal(proc, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    return kill_sync(proc)


def kill_sync(proc: subprocess.Popen[bytes]) -> int:
    """SIGKILL and reap. A SIGKILLed process is reaped within milliseconds."""
    send_signal(proc, signal.SIGKILL)
    try:
        code = proc.wait(10.0)
    finally:
        if proc.poll() is not None:
            _forget(proc)
    return code


async def wait_exit(proc: subprocess.Popen[bytes]) -> int:
    """Wait until ``proc`` exits; returns its status. Bound it with ``anyio.move_on_after``.

    Polling (not a worker thread blocked in ``wait``) keeps this cancellable at every step.
    """
    delay = 0.005
    while (code := proc.poll()) is None:
        await anyio.sleep(delay)
        delay = min(delay * 2, 0.05)
    _forget(proc)
    return code


async def terminate_async(proc: subprocess.Popen[bytes], grace: float) -> int:
    """Async :func:`terminate_sync`; shielded so a cancelled caller still leaves no child."""
    with anyio.CancelScope(shield=True):
        if proc.poll() is None:
            send_signal(proc, signal.SIGTERM)
            with anyio.move_on_after(grace):
                await wait_exit(proc)
    return await kill_async(proc)


async def kill_async(proc: subprocess.Popen[bytes]) -> int:
    """Async :func:`kill_sync`."""
    code: int | None = None
    with anyio.CancelScope(shield=True):
        send_signal(proc, signal.SIGKILL)
        with anyio.move_on_after(10.0):
            code = await wait_exit(proc)
    if code is None:
        raise RuntimeError(f"process {proc.pid} survived SIGKILL for 10 s")
    return code


def live_pids() -> list[int]:
    """Pids of children spawned here and not yet reaped (for tests and debugging)."""
    with _LIVE_LOCK:
        return [p.pid for p, owner in _LIVE.items() if owner == os.getpid() and p.poll() is None]


@atexit.register
def _cleanup_at_exit() -> None:
    me = os.getpid()
    with _LIVE_LOCK:
        procs = [proc for proc, owner in _LIVE.items() if owner == me]
    for proc in procs:
        send_signal(proc, signal.SIGTERM)
    deadline = time.monotonic() + 3.0
    for proc in procs:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            send_signal(proc, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5.0)


#: Broker and S3 logs older than this are deleted when a process first needs the log folder.
_LOG_MAX_AGE = 24 * 3600


@functools.lru_cache(maxsize=1)
def log_dir() -> Path:
    """The folder for broker logs (kept after stop, for debugging; pruned after a day)."""
    path = Path(tempfile.gettempdir()) / "kafka-async-testing"
    path.mkdir(parents=True, exist_ok=True)
    cutoff = time.time() - _LOG_MAX_AGE
    for old in path.glob("*.log"):
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            pass  # another process pruned or is writing it
    return path


def tail(path: Path, lines: int = 30) -> str:
    """The last ``lines`` lines of a log file (``"(no log)"`` when it cannot be read)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])
