"""The server side of SASL for a :class:`~tests.harness.fake_broker.FakeBroker`.

Tansu only serves SCRAM (and cannot be given users in the build we test with), so the PLAIN,
OAUTHBEARER, bad-signature and re-authentication paths are tested against this: a real
SASL exchange on real sockets, checked the way a Kafka broker checks it. SCRAM is computed
by ``scramp``'s server; PLAIN and OAUTHBEARER are parsed from their RFC formats.

What the broker enforces, per connection:

* every request other than ApiVersions, SaslHandshake and SaslAuthenticate needs a
  successful authentication, else the connection is closed;
* once the session lifetime (``session_lifetime_ms``) has passed, the next such request
  closes the connection (KIP-368), counted in :attr:`SaslServerStats.expired`;
* between a re-authentication's SaslHandshake and its last SaslAuthenticate no other request
  may arrive (counted in :attr:`SaslServerStats.interleaved`, and the connection closes);
* a re-authentication must use the mechanism of the first authentication.

Example::

    async with FakeBroker() as broker:
        server = SaslServer(users={"alice": "pw"}, session_lifetime_ms=1000)
        server.install(broker)
        ...  # a client with security_protocol="SASL_PLAINTEXT" bootstraps from broker.address
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from kafka_async.errors import (
    BrokerResponseError,
    IllegalSaslStateError,
    SaslAuthenticationFailedError,
    UnsupportedSaslMechanismError,
)
from kafka_async.protocol.apis import METADATA, SASL_AUTHENTICATE, SASL_HANDSHAKE
from kafka_async.protocol.apis.sasl_authenticate import SaslAuthenticateResponse
from kafka_async.protocol.apis.sasl_handshake import SaslHandshakeResponse
from tests.harness.fake_broker import CLOSE, FakeBroker, FakeRequest

__all__ = ["SaslServer", "SaslServerStats", "TokenValidator"]

_ALL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")

#: ``validator(token, extensions)``: True to accept the token.
TokenValidator = Callable[[str, Mapping[str, str]], bool]

Handler = Callable[[FakeRequest], Any]


@dataclass
class SaslServerStats:
    """What the server saw since it was installed."""

    #: Successful first authentications, per mechanism.
    successes: dict[str, int] = field(default_factory=dict)
    #: Refused authentications (wrong credentials, unknown user, bad token).
    failures: int = 0
    #: Successful re-authentications (a second or later authentication on a connection).
    reauthentications: int = 0
    #: Requests that arrived after their connection's session had expired.
    expired: int = 0
    #: Requests that arrived in the middle of a SASL exchange.
    interleaved: int = 0
    #: Requests refused because their connection never authenticated.
    unauthenticated: int = 0
    #: Every OAUTHBEARER token presented, in order.
    tokens: list[str] = field(default_factory=list)
    #: Every OAUTHBEARER extension set presented, in order.
    extensions: list[dict[str, str]] = field(default_factory=list)


@dataclass
class _Conn:
    mechanism: str | None = None
    exchange: Any = None  # the per-exchange state of the current mechanism
    in_exchange: bool = False
    authenticated: bool = False
    first_mechanism: str | None = None
    expires_at: float | None = None


class SaslServer:
    """SASL for a FakeBroker. See the module docstring.

    Args:
        mechanisms: the mechanisms the broker enables (in the order it lists them).
        users: user name -> password, for PLAIN and SCRAM.
        token_validator: accepts or refuses OAUTHBEARER tokens (default: refuse all).
        session_lifetime_ms: reported in SaslAuthenticate; 0 means no re-authentication.
        tamper_server_signature: send a wrong SCRAM server signature (an impostor broker that
            does not know the password, which the client must detect).
        scram_iterations: PBKDF2 iterations of the stored SCRAM credentials.
        expiry_grace_ms: how late after its session's expiry a request may be processed.
            A Kafka broker checks expiry when a request arrives; the fake broker reads a
            connection's next request only after answering the previous one, so requests
            pipelined in time can be read late. Tests with slow handlers set this to about
            the time requests queue.
    """

    def __init__(
        self,
        *,
        mechanisms: Iterable[str] = _ALL_MECHANISMS,
        users: Mapping[str, str] | None = None,
        token_validator: TokenValidator | None = None,
        session_lifetime_ms: int = 0,
        tamper_server_signature: bool = False,
        scram_iterations: int = 4096,
        expiry_grace_ms: int = 0,
    ) -> None:
        self.mechanisms = tuple(mechanisms)
        for name in self.mechanisms:
            if name not in _ALL_MECHANISMS:
                raise ValueError(f"unknown SASL mechanism {name!r}")
        self.users = dict(users or {})
        self.token_validator = token_validator
        self.session_lifetime_ms = session_lifetime_ms
        self.tamper_server_signature = tamper_server_signature
        self.scram_iterations = scram_iterations
        self.expiry_grace_ms = expiry_grace_ms
        self.stats = SaslServerStats()
        self._conns: dict[int, _Conn] = {}
        self._scram_auth: dict[tuple[str, str, str], Any] = {}

    # -- wiring ----------------------------------------------------------------------------

    def install(self, broker: FakeBroker) -> None:
        """Answer SASL requests on ``broker`` and require authentication for Metadata."""
        broker.set_default(SASL_HANDSHAKE.key, self.handshake)
        broker.set_default(SASL_AUTHENTICATE.key, self.authenticate)
        broker.set_default(METADATA.key, self.guard(broker.metadata_reply))

    def guard(self, handler: Handler) -> Callable[[FakeRequest], Awaitable[Any]]:
        """Wrap ``handler`` so it only runs for an authenticated, unexpired connection."""

        async def guarded(req: FakeRequest) -> Any:
            conn = self._conns.get(req.connection_id)
            if conn is None or not conn.authenticated:
                self.stats.unauthenticated += 1
                return CLOSE
            if conn.in_exchange:
                self.stats.interleaved += 1
                return CLOSE
            grace = self.expiry_grace_ms / 1000.0
            if conn.expires_at is not None and anyio.current_time() > conn.expires_at + grace:
                self.stats.expired += 1
                return CLOSE
            reply = handler(req)
            if isinstance(reply, Awaitable):
                reply = await reply
            return reply

        return guarded

    # -- handlers --------------------------------------------------------------------------

    def handshake(self, req: FakeRequest) -> Any:
        conn = self._conns.setdefault(req.connection_id, _Conn())
        name = req.body.mechanism
        if name not in self.mechanisms:
            return SaslHandshakeResponse(
                error_code=UnsupportedSaslMechanismError.code, mechanisms=list(self.mechanisms)
            )
        if conn.first_mechanism is not None and name != conn.first_mechanism:
            # KIP-368: a re-authentication must keep the mechanism.
            return SaslHandshakeResponse(
                error_code=IllegalSaslStateError.code, mechanisms=list(self.mechanisms)
            )
        conn.mechanism = name
        conn.exchange = None
        conn.in_exchange = True
        return SaslHandshakeResponse(mechanisms=list(self.mechanisms))  # error_code 0: none

    def authenticate(self, req: FakeRequest) -> Any:
        conn = self._conns.setdefault(req.connection_id, _Conn())
        if conn.mechanism is None or not conn.in_exchange:
            return self._reply(
                message="SaslAuthenticate before SaslHandshake", error=IllegalSaslStateError
            )
        data = bytes(req.body.auth_bytes)
        if conn.mechanism == "PLAIN":
            return self._plain(conn, data)
        if conn.mechanism == "OAUTHBEARER":
            return self._oauth(conn, data)
        return self._scram(conn, data)

    # -- mechanisms ------------------------------------------------------------------------

    def _plain(self, conn: _Conn, data: bytes) -> Any:
        parts = data.split(b"\0")
        if len(parts) != 3:
            return self._fail(conn, "malformed PLAIN message")
        user, password = parts[1].decode(errors="replace"), parts[2].decode(errors="replace")
        if user not in self.users or self.users[user] != password:
            return self._fail(conn, "Invalid username or password")
        return self._succeed(conn, b"")

    def _oauth(self, conn: _Conn, data: bytes) -> Any:
        if conn.exchange == "refused":
            # The client acknowledged our error document; now the failure proper.
            return self._fail(conn, "invalid OAUTHBEARER token")
        fields = data.split(b"\x01")
        if not fields or fields[0] != b"n,,":
            return self._fail(conn, "malformed OAUTHBEARER message")
        token = ""
        extensions: dict[str, str] = {}
        for item in fields[1:]:
            if not item:
                continue
            key, _, value = item.decode(errors="replace").partition("=")
            if key == "auth":
                if not value.startswith("Bearer "):
                    return self._fail(conn, "malformed OAUTHBEARER auth value")
                token = value[len("Bearer ") :]
            else:
                extensions[key] = value
        self.stats.tokens.append(token)
        self.stats.extensions.append(extensions)
        validator = self.token_validator
        if validator is None or not token or not validator(token, extensions):
            conn.exchange = "refused"
            document = {"status": "invalid_token", "scope": "", "openid-configuration": ""}
            return self._reply(json.dumps(document).encode())
        return self._succeed(conn, b"")

    def _scram(self, conn: _Conn, data: bytes) -> Any:
        import scramp  # type: ignore[import-untyped]

        assert conn.mechanism is not None
        text = data.decode(errors="replace")
        if conn.exchange is None:
            mechanism = scramp.ScramMechanism(conn.mechanism)

            def auth_info(username: str) -> Any:
                password = self.users.get(username)
                if password is None:
                    raise scramp.ScramException("unknown user")
                # Keyed by the password too: a test may change it (credentials rotated).
                key = (conn.mechanism or "", username, password)
                if key not in self._scram_auth:
                    self._scram_auth[key] = mechanism.make_auth_info(
                        password, iteration_count=self.scram_iterations
                    )
                return self._scram_auth[key]

            server = mechanism.make_server(auth_info)
            conn.exchange = server
            try:
                server.set_client_first(text)
            except scramp.ScramException:
                return self._fail(conn, "unknown user or malformed client-first message")
            return self._reply(server.get_server_first().encode())
        server = conn.exchange
        try:
            server.set_client_final(text)
        except scramp.ScramException:
            return self._fail(conn, "invalid credentials (wrong proof)")
        final = str(server.get_server_final())
        if self.tamper_server_signature:
            head, _, signature = final.partition("v=")
            flipped = "A" if signature[:1] != "A" else "B"
            final = head + "v=" + flipped + signature[1:]
        return self._succeed(conn, final.encode())

    # -- replies ---------------------------------------------------------------------------

    def _reply(
        self,
        data: bytes = b"",
        *,
        message: str | None = None,
        error: type[BrokerResponseError] | None = None,
    ) -> SaslAuthenticateResponse:
        """A SaslAuthenticate answer: ``data`` for the client, or ``error`` (and ``message``);
        a session lifetime only with success."""
        return SaslAuthenticateResponse(
            error_code=error.code if error is not None else 0,
            error_message=message,
            auth_bytes=data,
            session_lifetime_ms=self.session_lifetime_ms if error is None else 0,
        )

    def _succeed(self, conn: _Conn, data: bytes) -> SaslAuthenticateResponse:
        assert conn.mechanism is not None
        if conn.authenticated:
            self.stats.reauthentications += 1
        else:
            self.stats.successes[conn.mechanism] = self.stats.successes.get(conn.mechanism, 0) + 1
        conn.authenticated = True
        conn.first_mechanism = conn.first_mechanism or conn.mechanism
        conn.in_exchange = False
        conn.exchange = None
        lifetime = self.session_lifetime_ms
        conn.expires_at = anyio.current_time() + lifetime / 1000.0 if lifetime > 0 else None
        return self._reply(data)

    def _fail(self, conn: _Conn, why: str) -> SaslAuthenticateResponse:
        self.stats.failures += 1
        conn.in_exchange = False
        conn.exchange = None
        conn.authenticated = False
        return self._reply(
            message=f"Authentication failed with SASL mechanism {conn.mechanism}: {why}",
            error=SaslAuthenticationFailedError,
        )
