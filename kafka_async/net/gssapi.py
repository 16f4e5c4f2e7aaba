"""SASL GSSAPI: Kerberos logins (RFC 4752) through the system's MIT GSS-API library.

Select it with ``security_protocol="SASL_PLAINTEXT"`` (or ``"SASL_SSL"``) and
``sasl_mechanism="GSSAPI"``. The settings (names as in aiokafka and librdkafka)::

    sasl_kerberos_service_name   the broker's service name: "kafka" (the first part of
                                 kafka/broker.example.com@REALM)
    sasl_kerberos_domain_name    the host name to put in the broker's principal instead of
                                 the broker's own (aiokafka's setting)
    sasl_kerberos_principal      who logs in: "client@REALM" (librdkafka sasl.kerberos.principal)
    sasl_kerberos_keytab         log in with this keytab (librdkafka sasl.kerberos.keytab)
    sasl_kerberos_ticket_cache   the ticket cache to use: "FILE:/tmp/krb5cc_app"; without a
                                 keytab, tickets someone put there with kinit

Two ways to log in:

* **Keytab** (``sasl_kerberos_keytab``, best with ``sasl_kerberos_principal``): the library
  gets a ticket-granting ticket from the keytab itself, keeps it in a ticket cache of this
  process (``MEMORY:``, one per principal and keytab, unless ``sasl_kerberos_ticket_cache``
  names another) and gets a new one when half of the ticket's life has passed or it has
  expired, at the next authentication (a new connection or a KIP-368 re-authentication).
  Nothing to renew by hand, no ``kinit`` needed.
* **Ticket cache** (no keytab): the tickets in ``sasl_kerberos_ticket_cache`` (default: the
  usual ``KRB5CCNAME`` or the ``default_ccache_name`` of krb5.conf), put there by ``kinit``.
  The cache is read again at every authentication, so a renewing ``kinit``/``k5start`` outside
  the process is picked up; once the ticket has expired authentication fails with
  ``SaslAuthenticationFailedError`` saying so.

Per client, not per process: the keytab and cache are passed to the library with each
credential (``gss_acquire_cred_from``'s credential store, MIT krb5 1.11 and later), never
through the process-wide ``KRB5_CLIENT_KTNAME`` / ``KRB5CCNAME`` environment variables, so two
clients of one process can log in as two principals. The realm's settings (KDC addresses,
``dns_lookup_kdc`` ...) come from krb5.conf (``KRB5_CONFIG``), which is per process.

The broker's principal is ``service/host@REALM`` with ``host`` as the Java client chooses
it: the host name of the broker's address as given (bootstrap servers or advertised
listeners), not canonicalised; for an IP address, its name found by a reverse lookup, which
for a loopback address (127.0.0.0/8, ::1) reads ``/etc/hosts`` only (never DNS) and falls
back to the address itself. ``sasl_kerberos_domain_name`` replaces the host name for every
broker. The realm comes from krb5.conf's ``[domain_realm]`` (or its default realm).

The exchange: the Kerberos AP-REQ (mutual authentication requested), the broker's AP-REP,
then the RFC 4752 security-layer negotiation: the broker sends a wrapped 4-byte message
(offered layers, largest buffer); the client answers wrapped ``1`` (no security layer)
with buffer size 0 and no authorization id (the broker then uses the authenticated
principal, as for the Java client). The calls that may talk to the KDC (acquiring the
credential, the first ``gss_init_sec_context``) run in a worker thread (``prepare()``), the
rest is local.

The binding is ``ctypes`` on ``libgssapi_krb5`` (nothing to compile; Debian/Ubuntu
``libgssapi-krb5-2``, RedHat/Fedora ``krb5-libs``); without it, choosing GSSAPI raises
``ConfigError`` naming the library. Failures (a wrong keytab, an unknown principal, an
expired ticket, a broker principal the KDC does not know) raise
``SaslAuthenticationFailedError`` with the GSS-API major and minor status texts; keys and
tickets never appear in messages or ``repr``.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import hashlib
import ipaddress
import os
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from ..errors import ConfigError, SaslAuthenticationFailedError
from ..settings.spec import Setting, Text
from .sasl import register_mechanism

if TYPE_CHECKING:
    from .config import ClientConfig

__all__ = [
    "SETTINGS",
    "GssapiMechanism",
    "kerberos_host",
    "load_library",
]

#: Settings this module adds to the client schema (see net/settings.py).
SETTINGS: list[Setting] = [
    Setting(
        "sasl_kerberos_service_name",
        Text(optional=False),
        "kafka",
        "GSSAPI: the broker's Kerberos service name (service/host@REALM)",
        java="sasl.kerberos.service.name",
    ),
    Setting(
        "sasl_kerberos_domain_name",
        Text(),
        None,
        "GSSAPI: host name for the broker's principal instead of the broker's own",
        java="",
    ),
    Setting(
        "sasl_kerberos_principal",
        Text(),
        None,
        "GSSAPI: the client's principal (client@REALM); None: the keytab's or cache's",
        java="sasl.kerberos.principal (librdkafka)",
    ),
    Setting(
        "sasl_kerberos_keytab",
        Text(),
        None,
        "GSSAPI: keytab file to log in with (tickets renewed from it as needed)",
        java="sasl.kerberos.keytab (librdkafka)",
    ),
    Setting(
        "sasl_kerberos_ticket_cache",
        Text(),
        None,
        "GSSAPI: ticket cache ('FILE:/path'); None: KRB5CCNAME's, or a private one with a keytab",
        java="ticketCache (Krb5LoginModule)",
    ),
]

# --------------------------------------------------------------------------------------------
# The library
# --------------------------------------------------------------------------------------------

_OM_uint32 = ctypes.c_uint32
_GSS_C_GSS_CODE = 1
_GSS_C_MECH_CODE = 2
_GSS_C_INITIATE = 1
_GSS_C_INDEFINITE = 0xFFFFFFFF
_GSS_C_MUTUAL_FLAG = 2
_GSS_C_CONF_FLAG = 16
_GSS_C_INTEG_FLAG = 32
_GSS_S_CONTINUE_NEEDED = 1
#: Calling and routine errors; the low 16 bits are supplementary information.
_GSS_ERROR_MASK = 0xFFFF0000

#: Where the library is looked for, in order (then ``ctypes.util.find_library``).
LIBRARY_NAMES: tuple[str, ...] = ("libgssapi_krb5.so.2", "libgssapi_krb5.so")
_PACKAGES = "Debian/Ubuntu: apt install libgssapi-krb5-2; RedHat/Fedora: dnf install krb5-libs"


class _Buffer(ctypes.Structure):
    _fields_ = [("length", ctypes.c_size_t), ("value", ctypes.c_void_p)]


class _OidSet(ctypes.Structure):
    _fields_ = [("count", ctypes.c_size_t), ("elements", ctypes.c_void_p)]


class _KeyValue(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class _KeyValueSet(ctypes.Structure):
    _fields_ = [("count", _OM_uint32), ("elements", ctypes.POINTER(_KeyValue))]


_P = ctypes.POINTER
_U = _P(_OM_uint32)
_VP = ctypes.c_void_p
_PVP = _P(ctypes.c_void_p)
_PB = _P(_Buffer)
_SIGNATURES: dict[str, list[Any]] = {
    "gss_import_name": [_U, _PB, _VP, _PVP],
    "gss_display_name": [_U, _VP, _PB, _PVP],
    "gss_release_name": [_U, _PVP],
    "gss_acquire_cred": [_U, _VP, _OM_uint32, _VP, ctypes.c_int, _PVP, _PVP, _U],
    "gss_inquire_cred": [_U, _VP, _PVP, _U, _P(ctypes.c_int), _PVP],
    "gss_release_cred": [_U, _PVP],
    "gss_init_sec_context": [
        _U,
        _VP,
        _PVP,
        _VP,
        _VP,
        _OM_uint32,
        _OM_uint32,
        _VP,
        _PB,
        _PVP,
        _PB,
        _U,
        _U,
    ],
    "gss_delete_sec_context": [_U, _PVP, _PB],
    "gss_wrap": [_U, _VP, ctypes.c_int, _OM_uint32, _PB, _P(ctypes.c_int), _PB],
    "gss_unwrap": [_U, _VP, _PB, _PB, _P(ctypes.c_int), _U],
    "gss_release_buffer": [_U, _PB],
    "gss_display_status": [_U, _OM_uint32, ctypes.c_int, _VP, _U, _PB],
}


class GssLibrary:
    """The functions and constants of a loaded ``libgssapi_krb5`` (see :func:`load_library`)."""

    def __init__(self, lib: ctypes.CDLL, path: str) -> None:
        self.path = path
        for name, argtypes in _SIGNATURES.items():
            func = getattr(lib, name)
            func.argtypes = argtypes
            func.restype = _OM_uint32
            setattr(self, name, func)
        # gss_acquire_cred_from (MIT 1.11+) takes the keytab and cache per credential.
        self.acquire_cred_from: Any = getattr(lib, "gss_acquire_cred_from", None)
        if self.acquire_cred_from is not None:
            self.acquire_cred_from.argtypes = [
                _U,
                _VP,
                _OM_uint32,
                _VP,
                ctypes.c_int,
                _P(_KeyValueSet),
                _PVP,
                _PVP,
                _U,
            ]
            self.acquire_cred_from.restype = _OM_uint32
        self.nt_hostbased_service = _VP.in_dll(lib, "GSS_C_NT_HOSTBASED_SERVICE").value
        self.nt_krb5_principal = _VP.in_dll(lib, "GSS_KRB5_NT_PRINCIPAL_NAME").value
        self.mech_krb5 = _VP.in_dll(lib, "gss_mech_krb5").value
        self._mechs = _OidSet(1, self.mech_krb5)

    gss_import_name: Any
    gss_display_name: Any
    gss_release_name: Any
    gss_acquire_cred: Any
    gss_inquire_cred: Any
    gss_release_cred: Any
    gss_init_sec_context: Any
    gss_delete_sec_context: Any
    gss_wrap: Any
    gss_unwrap: Any
    gss_release_buffer: Any
    gss_display_status: Any

    @property
    def krb5_only(self) -> Any:
        """A ``gss_OID_set`` holding only the Kerberos mechanism."""
        return ctypes.addressof(self._mechs)

    def status_text(self, major: int, minor: int) -> str:
        """The library's words for a major and minor status (gss_display_status)."""
        parts: list[str] = []
        for code, kind in ((major, _GSS_C_GSS_CODE), (minor, _GSS_C_MECH_CODE)):
            if not code and kind == _GSS_C_MECH_CODE:
                continue
            context = _OM_uint32(0)
            for _ in range(8):
                status = _OM_uint32(0)
                buf = _Buffer()
                mech = self.mech_krb5 if kind == _GSS_C_MECH_CODE else None
                rc = self.gss_display_status(
                    ctypes.byref(status), code, kind, mech, ctypes.byref(context), ctypes.byref(buf)
                )
                if rc & _GSS_ERROR_MASK:
                    break
                text = _take(self, buf).decode("utf-8", "replace").strip()
                if text and text not in parts and text != "Success":
                    parts.append(text)
                if context.value == 0:
                    break
        return ": ".join(parts) or f"major status {major:#x}, minor status {minor}"

    def __repr__(self) -> str:
        return f"<GssLibrary {self.path}>"


def _take(lib: GssLibrary, buf: _Buffer) -> bytes:
    """The bytes of a buffer the library allocated, which is then released."""
    data = ctypes.string_at(buf.value, buf.length) if buf.value and buf.length else b""
    if buf.value:
        lib.gss_release_buffer(ctypes.byref(_OM_uint32(0)), ctypes.byref(buf))
    return data


def _input(data: bytes) -> tuple[_Buffer, Any]:
    """A buffer pointing at ``data`` (keep the second item alive while the buffer is used)."""
    holder = ctypes.create_string_buffer(data, len(data))
    return _Buffer(len(data), ctypes.addressof(holder)), holder


@functools.lru_cache(maxsize=1)
def _load() -> GssLibrary | str:
    names = list(LIBRARY_NAMES)
    found = ctypes.util.find_library("gssapi_krb5")
    if found and found not in names:
        names.append(found)
    why = []
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError as exc:
            why.append(str(exc))
            continue
        try:
            return GssLibrary(lib, name)
        except (AttributeError, ValueError) as exc:
            why.append(f"{name} is not MIT's GSS-API library: {exc}")
    return "; ".join(why) or "not found"


def load_library() -> GssLibrary:
    """The system's ``libgssapi_krb5``, loaded once; ``ConfigError`` naming it (and the
    package to install) when it cannot be loaded."""
    loaded = _load()
    if isinstance(loaded, str):
        raise ConfigError(
            f"sasl_mechanism GSSAPI needs MIT Kerberos' GSS-API library libgssapi_krb5 "
            f"({_PACKAGES}); it could not be loaded: {loaded}"
        )
    return loaded


def _check_library() -> None:
    load_library()


# --------------------------------------------------------------------------------------------
# The broker's host name
# --------------------------------------------------------------------------------------------


def _hosts_file_name(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    try:
        with open("/etc/hosts", encoding="utf-8", errors="replace") as fh:
            lines = fh.readlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split("#", 1)[0].split()
        if len(fields) < 2:
            continue
        try:
            if ipaddress.ip_address(fields[0].split("%", 1)[0]) == address:
                return fields[1]
        except ValueError:
            continue
    return None


def kerberos_host(host: str, domain_name: str | None = None) -> str:
    """The host part of the broker's principal, as the Java client picks it.

    ``domain_name`` when given; a host name as it is; for an IP address, its reverse-lookup
    name: for a loopback address from ``/etc/hosts`` only (no resolver that could leave the
    machine), for any other address from the system's resolver, as Java does. When no name
    is found, the address itself. It may block (the resolver): call it off the event loop.
    """
    if domain_name:
        return domain_name
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        return host
    if address.is_loopback:
        return _hosts_file_name(address) or bare
    try:
        name = socket.gethostbyaddr(bare)[0]
    except OSError:
        return bare
    return name or bare


# --------------------------------------------------------------------------------------------
# Credentials and the security context
# --------------------------------------------------------------------------------------------


def _private_cache(principal: str | None, keytab: str) -> str:
    """The process's own ticket cache for tickets got from ``keytab`` as ``principal``."""
    digest = hashlib.sha256(f"{principal or ''}\0{os.path.abspath(keytab)}".encode()).hexdigest()
    return f"MEMORY:kafka_async_{digest[:24]}"


class _Failure(Exception):
    """A GSS-API call failed; ``str`` is the library's explanation."""


def _call(lib: GssLibrary, what: str, func: Callable[..., int], *args: Any) -> int:
    minor = _OM_uint32(0)
    major = func(ctypes.byref(minor), *args)
    if major & _GSS_ERROR_MASK:
        raise _Failure(f"{what}: {lib.status_text(major, minor.value)}")
    return int(major)


class _Context:
    """One GSS-API security context being established (all calls from one thread at a time)."""

    def __init__(
        self,
        lib: GssLibrary,
        target: str,
        principal: str | None,
        keytab: str | None,
        ticket_cache: str | None,
    ) -> None:
        self._lib = lib
        self._cred = ctypes.c_void_p(None)
        self._target = ctypes.c_void_p(None)
        self._handle = ctypes.c_void_p(None)
        self._lock = threading.Lock()
        self.established = False
        try:
            self._acquire(principal, keytab, ticket_cache)
            data, holder = _input(target.encode())
            _call(
                lib,
                f"the broker's name {target!r}",
                lib.gss_import_name,
                ctypes.byref(data),
                lib.nt_hostbased_service,
                ctypes.byref(self._target),
            )
            del holder
        except BaseException:
            self.close()
            raise

    def _acquire(self, principal: str | None, keytab: str | None, cache: str | None) -> None:
        lib = self._lib
        name = ctypes.c_void_p(None)
        try:
            if principal:
                data, holder = _input(principal.encode())
                _call(
                    lib,
                    f"the principal {principal!r}",
                    lib.gss_import_name,
                    ctypes.byref(data),
                    lib.nt_krb5_principal,
                    ctypes.byref(name),
                )
                del holder
            store: list[tuple[bytes, bytes]] = []
            if keytab:
                store.append((b"client_keytab", keytab.encode()))
                store.append((b"ccache", (cache or _private_cache(principal, keytab)).encode()))
            elif cache:
                store.append((b"ccache", cache.encode()))
            if store:
                if lib.acquire_cred_from is None:
                    raise _Failure(
                        "a keytab or ticket cache per client needs gss_acquire_cred_from "
                        "(MIT krb5 1.11 or later)"
                    )
                elements = (_KeyValue * len(store))(*(_KeyValue(k, v) for k, v in store))
                kvset = _KeyValueSet(len(store), elements)
                _call(
                    lib,
                    "getting Kerberos credentials",
                    lib.acquire_cred_from,
                    name,
                    _GSS_C_INDEFINITE,
                    lib.krb5_only,
                    _GSS_C_INITIATE,
                    ctypes.byref(kvset),
                    ctypes.byref(self._cred),
                    None,
                    None,
                )
            else:
                _call(
                    lib,
                    "getting Kerberos credentials",
                    lib.gss_acquire_cred,
                    name,
                    _GSS_C_INDEFINITE,
                    lib.krb5_only,
                    _GSS_C_INITIATE,
                    ctypes.byref(self._cred),
                    None,
                    None,
                )
            # MIT hands out a credential whose tickets have expired (and may even find an
            # expired service ticket in the cache); say so here instead of at the broker.
            lifetime = _OM_uint32(0)
            _call(
                lib,
                "reading the Kerberos credentials",
                lib.gss_inquire_cred,
                self._cred,
                None,
                ctypes.byref(lifetime),
                None,
                None,
            )
            if lifetime.value == 0:
                where = f"the keytab {keytab}" if keytab else f"the ticket cache {cache or ''}"
                raise _Failure(f"the Kerberos ticket from {where.rstrip()} has expired")
        finally:
            if name.value:
                lib.gss_release_name(ctypes.byref(_OM_uint32(0)), ctypes.byref(name))

    def step(self, token: bytes | None) -> bytes:
        """The next token for the broker (``gss_init_sec_context``)."""
        lib = self._lib
        out = _Buffer()
        flags = _OM_uint32(0)
        data, holder = _input(token or b"")
        with self._lock:
            major = _call(
                lib,
                "the Kerberos exchange",
                lib.gss_init_sec_context,
                self._cred,
                ctypes.byref(self._handle),
                self._target,
                lib.mech_krb5,
                _GSS_C_MUTUAL_FLAG | _GSS_C_CONF_FLAG | _GSS_C_INTEG_FLAG,
                0,
                None,
                ctypes.byref(data) if token is not None else None,
                None,
                ctypes.byref(out),
                ctypes.byref(flags),
                None,
            )
        del holder
        result = _take(lib, out)
        if not major & _GSS_S_CONTINUE_NEEDED:  # complete (other bits: informational)
            self.established = True
            if not flags.value & _GSS_C_INTEG_FLAG:
                raise _Failure("the security context offers no integrity protection")
        return result

    def wrap(self, message: bytes) -> bytes:
        out = _Buffer()
        data, holder = _input(message)
        with self._lock:
            _call(
                self._lib,
                "wrapping the security-layer answer",
                self._lib.gss_wrap,
                self._handle,
                0,
                0,
                ctypes.byref(data),
                None,
                ctypes.byref(out),
            )
        del holder
        return _take(self._lib, out)

    def unwrap(self, message: bytes) -> bytes:
        out = _Buffer()
        data, holder = _input(message)
        with self._lock:
            _call(
                self._lib,
                "unwrapping the broker's security-layer message",
                self._lib.gss_unwrap,
                self._handle,
                ctypes.byref(data),
                ctypes.byref(out),
                None,
                None,
            )
        del holder
        return _take(self._lib, out)

    def close(self) -> None:
        """Release the context, the broker's name and the credential."""
        lib = self._lib
        minor = _OM_uint32(0)
        with self._lock:
            if self._handle.value:
                lib.gss_delete_sec_context(ctypes.byref(minor), ctypes.byref(self._handle), None)
            if self._target.value:
                lib.gss_release_name(ctypes.byref(minor), ctypes.byref(self._target))
            if self._cred.value:
                lib.gss_release_cred(ctypes.byref(minor), ctypes.byref(self._cred))

    def __del__(self) -> None:
        # A context dropped mid-exchange (a refused login, a cancelled prepare) is freed
        # here; at interpreter exit the library may already be gone.
        with contextlib.suppress(Exception):
            self.close()


# --------------------------------------------------------------------------------------------
# The mechanism
# --------------------------------------------------------------------------------------------

_START, _CONTEXT, _LAYER, _DONE = range(4)
#: RFC 4752 security layers; Kafka needs none (TLS protects SASL_SSL).
_NO_SECURITY_LAYER = 1


class GssapiMechanism:
    """One GSSAPI exchange (a fresh object per authentication; see the module docstring).

    ``server_host`` is the broker's host as the client dialled it, set by
    :func:`~kafka_async.net.sasl.prepared_mechanism` before :meth:`prepare`.
    """

    name = "GSSAPI"

    def __init__(
        self,
        *,
        service_name: str = "kafka",
        domain_name: str | None = None,
        principal: str | None = None,
        keytab: str | None = None,
        ticket_cache: str | None = None,
        library: GssLibrary | None = None,
    ) -> None:
        self.server_host: str | None = None
        self._service = service_name
        self._domain = domain_name
        self._principal = principal
        self._keytab = keytab
        self._cache = ticket_cache
        self._lib = library
        self._context: _Context | None = None
        self._first: bytes | None = None
        self._stage = _START
        #: ``service@host``, once :meth:`prepare` has chosen it.
        self.target: str | None = None

    @classmethod
    def from_config(cls, config: ClientConfig) -> GssapiMechanism:
        return cls(
            service_name=config.sasl_kerberos_service_name,
            domain_name=config.sasl_kerberos_domain_name,
            principal=config.sasl_kerberos_principal,
            keytab=config.sasl_kerberos_keytab,
            ticket_cache=config.sasl_kerberos_ticket_cache,
        )

    def _who(self) -> str:
        """Who logs in, and from where (paths, never a key)."""
        who = self._principal or ("the keytab's principal" if self._keytab else "the principal")
        if self._keytab:
            return f"{who} (keytab {self._keytab})"
        return f"{who} (ticket cache {self._cache or 'default'})"

    async def prepare(self) -> None:
        """Choose the broker's principal, get credentials and make the first token (in a
        worker thread: they may ask the KDC)."""
        lib = self._lib or load_library()
        if self.server_host is None and not self._domain:
            raise SaslAuthenticationFailedError(
                "GSSAPI: the broker's host name is unknown (set sasl_kerberos_domain_name)"
            )
        host = await anyio.to_thread.run_sync(kerberos_host, self.server_host or "", self._domain)
        self.target = f"{self._service}@{host}"
        self._context, self._first = await anyio.to_thread.run_sync(self._start, lib)

    def _start(self, lib: GssLibrary) -> tuple[_Context, bytes]:
        assert self.target is not None
        try:
            context = _Context(lib, self.target, self._principal, self._keytab, self._cache)
        except _Failure as exc:
            raise SaslAuthenticationFailedError(
                f"GSSAPI: cannot log in as {self._who()}: {exc}"
            ) from None
        try:
            return context, context.step(None)
        except _Failure as exc:
            context.close()
            raise SaslAuthenticationFailedError(
                f"GSSAPI: cannot get a ticket for {self.target} as {self._who()}: {exc}"
            ) from None

    def step(self, challenge: bytes | None) -> bytes | None:
        context = self._context
        if context is None:
            if self._stage == _DONE:
                return None
            raise SaslAuthenticationFailedError("GSSAPI: prepare() was not awaited")
        try:
            if self._stage == _START:
                self._stage = _LAYER if context.established else _CONTEXT
                first, self._first = self._first, None
                return first or b""
            if self._stage == _CONTEXT:
                token = context.step(challenge or b"")
                if context.established:
                    self._stage = _LAYER
                # Established with nothing to send: an empty message asks the broker for its
                # security-layer offer (RFC 4752 section 3.1).
                return token
            if self._stage == _LAYER:
                offer = context.unwrap(challenge or b"")
                if len(offer) != 4:
                    raise _Failure(
                        f"the broker's security-layer message has {len(offer)} bytes, not 4"
                    )
                if not offer[0] & _NO_SECURITY_LAYER:
                    raise _Failure(
                        f"the broker requires a security layer (offered {offer[0]:#x}); "
                        "Kafka clients use none"
                    )
                answer = context.wrap(bytes((_NO_SECURITY_LAYER, 0, 0, 0)))
                self._finish()
                return answer
        except _Failure as exc:
            self._finish()
            raise SaslAuthenticationFailedError(
                f"GSSAPI with {self.target} as {self._who()}: {exc}"
            ) from None
        self._finish()
        return None

    def _finish(self) -> None:
        self._stage = _DONE
        context, self._context = self._context, None
        if context is not None:
            context.close()

    def __repr__(self) -> str:
        return f"GssapiMechanism(target={self.target!r}, principal={self._principal!r})"


def _validate(config: ClientConfig) -> None:
    keytab = config.sasl_kerberos_keytab
    if keytab is not None and not os.path.isfile(keytab):
        raise ConfigError(f"sasl_kerberos_keytab: no such file: {keytab!r}")


register_mechanism("GSSAPI", GssapiMechanism.from_config, check=_check_library, validate=_validate)
