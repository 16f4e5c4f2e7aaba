"""An MIT Kerberos KDC for tests: a throwaway realm on 127.0.0.1, its principals and keytabs.

:class:`MitKdc` creates a realm (default ``KAFKA.TEST``) in a temporary folder with
``kdb5_util create -s``, starts ``krb5kdc`` in the foreground bound to ``127.0.0.1`` on a free
port (UDP and TCP, ``kdc_listen`` / ``kdc_tcp_listen``), and writes a ``krb5.conf`` that sends
every request for the realm there and never asks DNS (``dns_lookup_kdc``,
``dns_lookup_realm``, ``dns_canonicalize_hostname`` and ``rdns`` are all false, and clients
use TCP only)::

    with MitKdc() as kdc:
        keytab = kdc.add_principal("kafka/localhost")      # random key, exported to a keytab
        kdc.add_principal("client", max_life="5 seconds")  # short tickets for renewal tests
        kdc.kinit("client", keytab=..., ccache=tmp / "cc")  # a ticket cache (needs krb5-user)
        use(kdc.krb5_conf)                                  # KRB5_CONFIG / java.security.krb5.conf

The programs come from Debian's ``krb5-kdc`` and ``krb5-admin-server`` (``kdb5_util``,
``krb5kdc``, ``kadmin.local``) and ``krb5-user`` (``kinit``, ``klist``); :func:`ensure_kdc`
installs them with apt-get when they are missing and we are root (as ``ensure_stunnel`` does
for the TLS tests). :attr:`MitKdc.log_path` is the KDC's log: one line per ticket issued
(:meth:`MitKdc.issued` counts them), so a test can see a client going back to the KDC.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from kafka_async.testing import _procs
from tests.harness.apt import apt_install

__all__ = ["KdcUnavailableError", "MitKdc", "ensure_kdc", "ensure_kinit"]

_APT_TIMEOUT = 300.0
#: Seconds allowed for each kadmin.local / kdb5_util / kinit run.
_TOOL_TIMEOUT = 30.0
_START_TIMEOUT = 20.0
_SBIN = ("/usr/sbin", "/sbin")


class KdcUnavailableError(RuntimeError):
    """The MIT KDC programs are missing and could not be installed (the message says why)."""


def _which(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in _SBIN:
        path = Path(folder) / name
        if path.exists():
            return str(path)
    return None


def ensure_kdc(*, install: bool = True) -> dict[str, str]:
    """Paths of ``krb5kdc``, ``kdb5_util`` and ``kadmin.local``, installing Debian's
    ``krb5-kdc`` and ``krb5-admin-server`` when they are missing (root and apt-get needed)."""
    found: dict[str, str] = {}
    for package, program in (
        ("krb5-kdc", "krb5kdc"),
        ("krb5-kdc", "kdb5_util"),
        ("krb5-admin-server", "kadmin.local"),
    ):
        if install:
            found[program] = apt_install(
                package,
                functools.partial(_which, program),
                KdcUnavailableError,
                timeout=_APT_TIMEOUT,
            )
        else:
            path = _which(program)
            if path is None:
                raise KdcUnavailableError(f"{program} is not installed (Debian package {package})")
            found[program] = path
    return found


def ensure_kinit(*, install: bool = True) -> str:
    """Path of ``kinit`` (Debian's ``krb5-user``), installed when missing and allowed."""
    if not install:
        path = _which("kinit")
        if path is None:
            raise KdcUnavailableError("kinit is not installed (Debian package krb5-user)")
        return path
    return apt_install("krb5-user", lambda: _which("kinit"), KdcUnavailableError)


def _free_port() -> int:
    """A port free for both TCP and UDP on 127.0.0.1 (the KDC listens on both)."""
    for _ in range(50):
        port = _procs.free_port()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            try:
                udp.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise KdcUnavailableError("no port free for both TCP and UDP on 127.0.0.1")


class MitKdc:
    """A KDC of a throwaway realm on 127.0.0.1; see the module docstring.

    Args:
        realm: the realm name.
        max_life: the realm's longest ticket lifetime (kdc.conf ``max_life``); one principal
            can have a shorter one (:meth:`add_principal`'s ``max_life``).
        install: install the Debian packages with apt-get when they are missing.
    """

    def __init__(
        self, realm: str = "KAFKA.TEST", *, max_life: str = "1h", install: bool = True
    ) -> None:
        self.realm = realm
        self.max_life = max_life
        self._install = install
        self.port = 0
        self.folder: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Path | None = None
        self._programs: dict[str, str] = {}

    # -- paths --------------------------------------------------------------------------------

    def _dir(self) -> Path:
        if self.folder is None:
            raise RuntimeError("the KDC has not been started")
        return self.folder

    @property
    def krb5_conf(self) -> Path:
        """The client configuration (``KRB5_CONFIG``, ``-Djava.security.krb5.conf``)."""
        return self._dir() / "krb5.conf"

    @property
    def log_path(self) -> Path:
        """The KDC's log (one line per request it answered)."""
        return self._dir() / "kdc.log"

    def env(self) -> dict[str, str]:
        """The environment for the MIT tools: this realm's krb5.conf and kdc.conf."""
        return dict(
            os.environ,
            KRB5_CONFIG=str(self.krb5_conf),
            KRB5_KDC_PROFILE=str(self._dir() / "kdc.conf"),
        )

    def principal(self, name: str) -> str:
        """``name@REALM`` (``name`` unchanged when it already names a realm)."""
        return name if "@" in name else f"{name}@{self.realm}"

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> MitKdc:
        """Create the realm and start the KDC; returns when it accepts TCP connections."""
        self._programs = ensure_kdc(install=self._install)
        self.folder = Path(tempfile.mkdtemp(prefix="kdc-"))
        self.port = _free_port()
        self._write_config()
        # The master key only protects the throwaway database; nobody needs to know it.
        self._run(
            self._programs["kdb5_util"],
            "-r",
            self.realm,
            "create",
            "-s",
            "-P",
            secrets.token_hex(16),
        )
        out = open(self._dir() / "krb5kdc.out", "wb")  # noqa: SIM115 - closed below
        try:
            self._proc = _procs.spawn(
                [self._programs["krb5kdc"], "-n", "-r", self.realm], log=out, env=self.env()
            )
        finally:
            out.close()
        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            if self._proc.poll() is not None:
                raise KdcUnavailableError(
                    f"krb5kdc exited ({self._proc.returncode}):\n"
                    f"{_procs.tail(self._dir() / 'krb5kdc.out', 20)}\n"
                    f"{_procs.tail(self.log_path, 20)}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise KdcUnavailableError(
                        f"krb5kdc did not listen on 127.0.0.1:{self.port} within {_START_TIMEOUT} s"
                    ) from None
                time.sleep(0.05)
        return self

    def stop(self) -> None:
        """Stop the KDC (SIGTERM, then SIGKILL) and remove its folder."""
        if self._proc is not None:
            _procs.terminate_sync(self._proc, 5.0)
            self._proc = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> MitKdc:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        running = self._proc is not None and self._proc.poll() is None
        return f"<MitKdc {self.realm} 127.0.0.1:{self.port} running={running}>"

    # -- principals ---------------------------------------------------------------------------

    def add_principal(
        self, name: str, keytab: Path | None = None, *, max_life: str | None = None
    ) -> Path:
        """Create ``name`` with a random key and export it to ``keytab`` (default: a new
        file in the realm's folder); returns the keytab's path."""
        options = f'-maxlife "{max_life}" ' if max_life else ""
        # +requires_preauth, as real realms do: a ticket only for who proves the key.
        self.kadmin(f"addprinc -randkey +requires_preauth {options}{self.principal(name)}")
        return self.export_keytab(name, keytab)

    def export_keytab(self, name: str, keytab: Path | None = None) -> Path:
        """Write ``name``'s keys to ``keytab``. ``ktadd`` makes new random keys (a new key
        version), so a keytab exported earlier no longer works: that is a wrong keytab."""
        if keytab is None:
            keytab = self._dir() / f"{name.replace('/', '_')}-{secrets.token_hex(4)}.keytab"
        self.kadmin(f"ktadd -k {keytab} {self.principal(name)}")
        return keytab

    def kadmin(self, query: str) -> str:
        """Run one ``kadmin.local`` query; returns its output."""
        return self._run(self._programs["kadmin.local"], "-r", self.realm, "-q", query)

    def kinit(self, name: str, *, keytab: Path, ccache: Path, lifetime: str | None = None) -> None:
        """``kinit -kt keytab`` into the ticket cache file ``ccache`` (``krb5-user``)."""
        argv = [ensure_kinit(install=self._install), "-k", "-t", str(keytab)]
        if lifetime:
            argv += ["-l", lifetime]
        self._run(*argv, "-c", f"FILE:{ccache}", self.principal(name))

    def issued(self, name: str) -> int:
        """How many initial tickets (AS requests) the KDC issued to ``name`` so far."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return 0
        who = self.principal(name)
        return sum(
            1
            for line in text.splitlines()
            if "AS_REQ" in line and "ISSUE" in line and f" {who} for" in line
        )

    # -- helpers ------------------------------------------------------------------------------

    def _run(self, *argv: str) -> str:
        try:
            done = subprocess.run(
                list(argv),
                env=self.env(),
                capture_output=True,
                timeout=_TOOL_TIMEOUT,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise KdcUnavailableError(f"{argv[0]} took over {_TOOL_TIMEOUT} s") from None
        output = (done.stdout + done.stderr).decode(errors="replace")
        # kadmin.local exits 0 when a query fails; its complaint is "what: why while doing".
        failed = any(
            " while " in line for line in done.stderr.decode(errors="replace").splitlines()
        )
        if done.returncode != 0 or failed:
            raise KdcUnavailableError(f"{' '.join(argv[:1] + argv[-1:])} failed: {output[-800:]}")
        return output

    def _write_config(self) -> None:
        folder = self._dir()
        (folder / "kdc.conf").write_text(
            f"""\
[kdcdefaults]
    kdc_listen = 127.0.0.1:{self.port}
    kdc_tcp_listen = 127.0.0.1:{self.port}

[realms]
    {self.realm} = {{
        database_name = {folder}/principal
        key_stash_file = {folder}/stash
        acl_file = {folder}/kadm5.acl
        kdc_listen = 127.0.0.1:{self.port}
        kdc_tcp_listen = 127.0.0.1:{self.port}
        max_life = {self.max_life}
        max_renewable_life = 0
        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
    }}

[logging]
    kdc = FILE:{folder}/kdc.log
"""
        )
        (folder / "kadm5.acl").write_text("")
        # rdns and dns_canonicalize_hostname false: "kafka@localhost" means
        # kafka/localhost@REALM without asking any resolver; udp_preference_limit = 1: TCP only
        # (the Java client too), so a lost datagram never stalls a test.
        (folder / "krb5.conf").write_text(
            f"""\
[libdefaults]
    default_realm = {self.realm}
    dns_lookup_kdc = false
    dns_lookup_realm = false
    dns_canonicalize_hostname = false
    rdns = false
    udp_preference_limit = 1
    forwardable = false
    default_ccache_name = FILE:{folder}/default-ccache
    default_client_keytab_name = FILE:{folder}/no-default-client.keytab
    default_keytab_name = FILE:{folder}/no-default.keytab

[realms]
    {self.realm} = {{
        kdc = 127.0.0.1:{self.port}
    }}

[domain_realm]
    localhost = {self.realm}
    .localhost = {self.realm}
"""
        )
