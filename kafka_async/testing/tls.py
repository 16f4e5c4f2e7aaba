"""A real TLS terminator (stunnel) in front of a plaintext broker, for TLS tests.

The Tansu build we test with does not terminate TLS itself, so :class:`StunnelProxy` runs
``stunnel`` on a loopback port with a server certificate, forwarding the decrypted bytes to
the broker. Start the proxy first and give its port to the broker as
``EmbeddedBroker(advertised_port=proxy.port)`` so Metadata sends clients back through TLS::

    with StunnelProxy(cert=cert_pem, key=key_pem) as tls:
        with EmbeddedBroker(advertised_port=tls.port) as broker:
            tls.set_target(broker.host, broker.port)
            ...  # clients bootstrap from tls.address with security_protocol="SSL"

:func:`ensure_stunnel` finds the binary and, when it is missing and we are root on a
Debian-like system (CI), installs Debian's ``stunnel4`` package with apt-get.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

__all__ = ["StunnelProxy", "StunnelUnavailableError", "ensure_stunnel", "find_stunnel"]

_APT_TIMEOUT = 300.0


class StunnelUnavailableError(RuntimeError):
    """stunnel is not installed and could not be installed (the message says why)."""


def find_stunnel() -> str | None:
    """Path of the stunnel binary, or None."""
    for name in ("stunnel", "stunnel4"):
        path = shutil.which(name)
        if path:
            return path
    return None


def ensure_stunnel(*, install: bool = True) -> str:
    """The stunnel binary; installs Debian's ``stunnel4`` if it is missing and allowed.

    Installing needs root and apt-get (as on a fresh Debian CI machine). Raises
    :class:`StunnelUnavailableError` with the reason otherwise.
    """
    path = find_stunnel()
    if path:
        return path
    if not install:
        raise StunnelUnavailableError("stunnel is not installed (Debian package stunnel4)")
    if shutil.which("apt-get") is None:
        raise StunnelUnavailableError("stunnel is not installed and there is no apt-get")
    if os.geteuid() != 0:
        raise StunnelUnavailableError(
            "stunnel is not installed and installing it needs root: apt-get install stunnel4"
        )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    attempts = (
        ["apt-get", "install", "-y", "--no-install-recommends", "stunnel4"],
        ["apt-get", "update"],
        ["apt-get", "install", "-y", "--no-install-recommends", "stunnel4"],
    )
    last = ""
    for argv in attempts:
        try:
            done = subprocess.run(
                argv, env=env, capture_output=True, timeout=_APT_TIMEOUT, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise StunnelUnavailableError(f"{' '.join(argv)} failed: {exc}") from None
        last = done.stderr.decode(errors="replace")[-500:]
        if argv[1] == "install" and done.returncode == 0:
            break
    path = find_stunnel()
    if path is None:
        raise StunnelUnavailableError(f"apt-get install stunnel4 did not work: {last}")
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class StunnelProxy:
    """stunnel accepting TLS on ``127.0.0.1:port`` and forwarding to a plaintext target.

    Args:
        cert, key: the server certificate chain and key (PEM files).
        client_ca: when given, clients must present a certificate signed by this CA
            (``verify = 2``: mutual TLS).
        target: ``(host, port)`` to forward to; may be set later with :meth:`set_target`
            (stunnel is started then), so the proxy's port can be known before the broker
            that must advertise it starts.
        startup_timeout: seconds to wait for stunnel to accept connections.
    """

    def __init__(
        self,
        *,
        cert: str | Path,
        key: str | Path,
        client_ca: str | Path | None = None,
        target: tuple[str, int] | None = None,
        startup_timeout: float = 10.0,
    ) -> None:
        self.cert = Path(cert)
        self.key = Path(key)
        self.client_ca = Path(client_ca) if client_ca is not None else None
        self.target = target
        self.startup_timeout = startup_timeout
        self.host = "127.0.0.1"
        self.port = _free_port()
        self._dir = Path(tempfile.mkdtemp(prefix="kafka-async-stunnel-"))
        self.log_path = self._dir / "stunnel.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """``"127.0.0.1:port"`` to bootstrap from."""
        return f"{self.host}:{self.port}"

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<StunnelProxy {self.address} -> {self.target} {state}>"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        """The end of stunnel's log (handshake errors are logged there)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _config(self) -> str:
        assert self.target is not None
        lines = [
            "foreground = yes",
            "pid =",
            "debug = 5",
            f"output = {self.log_path}",
            "[kafka]",
            f"accept = {self.host}:{self.port}",
            f"connect = {self.target[0]}:{self.target[1]}",
            f"cert = {self.cert}",
            f"key = {self.key}",
        ]
        if self.client_ca is not None:
            lines += [f"CAfile = {self.client_ca}", "verify = 2"]
        return "\n".join(lines) + "\n"

    def set_target(self, host: str, port: int) -> None:
        """Forward to ``host:port`` and start stunnel (restart it if running)."""
        self.target = (host, port)
        self.stop()
        self.start()

    def start(self) -> StunnelProxy:
        """Start stunnel and wait until it accepts connections."""
        if self.target is None:
            raise RuntimeError("StunnelProxy: set a target first")
        binary = ensure_stunnel()
        conf = self._dir / "stunnel.conf"
        conf.write_text(self._config())
        self._proc = subprocess.Popen(
            [binary, str(conf)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(
                    f"stunnel exited with status {self._proc.returncode}:\n{self.log_tail()}"
                )
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"stunnel not accepting within {self.startup_timeout} s")

    def stop(self) -> None:
        """Stop stunnel (SIGTERM, SIGKILL after 2 s)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(2.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(2.0)

    def __enter__(self) -> StunnelProxy:
        if self.target is not None:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)
