"""SASL authentication run on a fresh connection, after ApiVersions (KIP-43, KIP-152).

A mechanism is a sans-I/O object: ``step(None)`` gives the client's first message and
``step(server_bytes)`` the next one, or ``None`` once the exchange is complete (after
checking the server's final message, for mechanisms that have one). A mechanism that needs
I/O before its first message (OAUTHBEARER asks its token provider) also has an async
``prepare()``. :func:`authenticate` drives it over SaslHandshake v1 and SaslAuthenticate, so a
new mechanism is one class plus one :func:`register_mechanism` call.

Mechanisms: PLAIN (RFC 4616), SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802/7677, via the
``scramp`` package, imported only when SCRAM is configured; the server's signature is
checked) and OAUTHBEARER (RFC 7628 as Kafka uses it, KIP-255/KIP-342 extensions).

Re-authentication (KIP-368): SaslAuthenticate v1+ reports ``session_lifetime_ms``; the
connection runs the same exchange again on the same socket before it runs out (see
``BrokerConnection``). :func:`authenticate_session` returns that lifetime.

Secrets: no mechanism object shows its password or token in ``repr``, and no error message
built here contains them.
"""

from __future__ import annotations

import inspect
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from ..errors import (
    ConfigError,
    IncompatibleBrokerVersionError,
    SaslAuthenticationFailedError,
    UnsupportedSaslMechanismError,
    raise_for_code,
)
from ..protocol.apis import SASL_AUTHENTICATE, SASL_HANDSHAKE
from ..protocol.apis.sasl_authenticate import SaslAuthenticateRequest
from ..protocol.apis.sasl_handshake import SaslHandshakeRequest
from ..protocol.schema import Api, ReqT, RespT

if TYPE_CHECKING:
    from .config import ClientConfig
    from .connection import BrokerConnection

_UNSUPPORTED_SASL_MECHANISM = UnsupportedSaslMechanismError.code

#: A SCRAM iteration count above this is refused: a hostile broker could otherwise make
#: every connect burn seconds of CPU in PBKDF2.
MAX_SCRAM_ITERATIONS = 1_000_000
#: Kafka's minimum; fewer would let an impostor collect a proof that is cheap to crack.
MIN_SCRAM_ITERATIONS = 4096


class SaslMechanism(Protocol):
    """One client-side SASL exchange (a fresh object per authentication)."""

    #: The mechanism name sent in SaslHandshake, such as ``"PLAIN"``.
    name: str

    def step(self, challenge: bytes | None) -> bytes | None:
        """The next client message for the server's ``challenge`` (None on the first call).

        Returns None when authentication is complete; raises a ``KafkaError`` when the
        server's message is invalid (for example a wrong server signature).
        """


MechanismFactory = Callable[["ClientConfig"], SaslMechanism]

_MECHANISMS: dict[str, MechanismFactory] = {}
_CHECKS: dict[str, Callable[[], None]] = {}
_VALIDATORS: dict[str, Callable[[ClientConfig], None]] = {}


def register_mechanism(
    name: str,
    factory: MechanismFactory,
    *,
    check: Callable[[], None] | None = None,
    validate: Callable[[ClientConfig], None] | None = None,
) -> None:
    """Make ``sasl_mechanism=name`` valid; ``factory(config)`` builds one exchange.

    ``check()``, if given, runs when a config selects the mechanism and raises
    ``ConfigError`` when something it needs (an optional package) is missing.
    ``validate(config)``, if given, runs when a config selects the mechanism and raises
    ``ConfigError`` when the settings it needs are missing or contradict each other.
    """
    _MECHANISMS[name] = factory
    if check is not None:
        _CHECKS[name] = check
    if validate is not None:
        _VALIDATORS[name] = validate


def mechanism_names() -> tuple[str, ...]:
    """Names accepted for ``sasl_mechanism``."""
    return tuple(sorted(_MECHANISMS))


def check_mechanism(name: str) -> None:
    """Raise ``ConfigError`` if ``name`` is unknown or cannot run here."""
    if name not in _MECHANISMS:
        raise ConfigError(
            f"sasl_mechanism: expected one of {', '.join(mechanism_names())}, got {name!r}"
        )
    check = _CHECKS.get(name)
    if check is not None:
        check()


def validate_config(config: ClientConfig) -> None:
    """Raise ``ConfigError`` if ``config`` lacks what its ``sasl_mechanism`` needs."""
    check_mechanism(config.sasl_mechanism)
    validate = _VALIDATORS.get(config.sasl_mechanism)
    if validate is not None:
        validate(config)
    if config.sasl_scram_token_auth and not config.sasl_mechanism.startswith("SCRAM-"):
        raise ConfigError(
            "sasl_scram_token_auth=True needs sasl_mechanism SCRAM-SHA-256 or SCRAM-SHA-512 "
            f"(delegation tokens log in with SCRAM), got {config.sasl_mechanism}"
        )


def _needs_password(config: ClientConfig) -> None:
    if config.sasl_plain_username is None or config.sasl_plain_password is None:
        raise ConfigError(
            f"sasl_plain_username and sasl_plain_password are required when "
            f"security_protocol is {config.security_protocol} with {config.sasl_mechanism}"
        )


def create_mechanism(config: ClientConfig) -> SaslMechanism:
    """A fresh exchange for the configured mechanism."""
    check_mechanism(config.sasl_mechanism)
    return _MECHANISMS[config.sasl_mechanism](config)


# --------------------------------------------------------------------------------------------
# PLAIN
# --------------------------------------------------------------------------------------------


class PlainMechanism:
    """SASL PLAIN (RFC 4616): one message ``authzid NUL user NUL password``.

    It sends the password in the clear, so use it with SASL_SSL outside tests.
    """

    name = "PLAIN"

    def __init__(self, username: str, password: str) -> None:
        self._message = b"\0" + username.encode() + b"\0" + password.encode()
        self._sent = False

    @classmethod
    def from_config(cls, config: ClientConfig) -> PlainMechanism:
        return cls(config.sasl_plain_username or "", config.sasl_plain_password or "")

    def step(self, challenge: bytes | None) -> bytes | None:
        if not self._sent:
            self._sent = True
            return self._message
        return None

    def __repr__(self) -> str:
        return "PlainMechanism(<credentials hidden>)"


register_mechanism("PLAIN", PlainMechanism.from_config, validate=_needs_password)


# --------------------------------------------------------------------------------------------
# SCRAM
# --------------------------------------------------------------------------------------------


def _import_scramp() -> Any:
    try:
        import scramp  # type: ignore[import-untyped]
    except ImportError:
        raise ConfigError(
            "SCRAM-SHA-256/SCRAM-SHA-512 need the 'scramp' package: "
            "pip install 'kafka-async-client[scram]'"
        ) from None
    return scramp


def _check_scramp() -> None:
    _import_scramp()


_ITERATIONS_RE = re.compile(r"(?:^|,)i=(\d+)(?:,|$)")


#: The SCRAM extension (RFC 5802 section 5.1, after the nonce) that makes Kafka's broker look
#: the user name up as a delegation token id (Java's ``ScramLoginModule tokenauth="true"``).
TOKEN_AUTH_EXTENSION = "tokenauth=true"


class ScramMechanism:
    """SCRAM-SHA-256 / SCRAM-SHA-512 without channel binding (what Kafka supports).

    Three messages: client-first, client-final (the proof), then the server's final message
    is checked: it must carry the signature only a server knowing the password can compute.
    A mismatch, or a server error (``e=...``), raises ``SaslAuthenticationFailedError``.

    ``token_auth`` logs in with a delegation token (KIP-48): the user name is the token id,
    the password the base64 of its HMAC, and the client-first message carries the
    ``tokenauth=true`` extension (``n,,n=<token id>,r=<nonce>,tokenauth=true``), which is
    part of the signed auth message as every extension is.
    """

    def __init__(
        self, name: str, username: str, password: str, *, token_auth: bool = False
    ) -> None:
        if name not in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            raise ConfigError(f"sasl_mechanism: unknown SCRAM variant {name!r}")
        self.name = name
        self.token_auth = token_auth
        self._scramp = _import_scramp()
        self._client = self._scramp.ScramClient([name], username, password)
        self._stage = 0

    @classmethod
    def factory(cls, name: str) -> MechanismFactory:
        def build(config: ClientConfig) -> ScramMechanism:
            return cls(
                name,
                config.sasl_plain_username or "",
                config.sasl_plain_password or "",
                token_auth=config.sasl_scram_token_auth,
            )

        return build

    @property
    def failure_hint(self) -> str | None:
        """What a refused token login most likely means (added to the broker's message)."""
        if not self.token_auth:
            return None
        return (
            "a delegation token login: the token id is unknown, the token expired or was "
            "expired, or the password is not the base64 of its HMAC"
        )

    def _client_first(self) -> bytes:
        first = str(self._client.get_client_first())
        if self.token_auth:
            # scramp writes no extensions; it signs its ``client_first_bare`` in the client
            # proof and checks the server's signature over it, so the extension goes into
            # both the message sent and the bare message signed.
            bare = str(self._client.client_first_bare)
            if not first.endswith(bare):
                raise ConfigError("the installed scramp builds its client-first message oddly")
            self._client.client_first_bare = f"{bare},{TOKEN_AUTH_EXTENSION}"
            first = f"{first},{TOKEN_AUTH_EXTENSION}"
        return first.encode()

    def step(self, challenge: bytes | None) -> bytes | None:
        stage, self._stage = self._stage, self._stage + 1
        exc_type = self._scramp.ScramException
        try:
            if stage == 0:
                return self._client_first()
            text = _decode(challenge, self.name)
            if stage == 1:
                if text.startswith("e="):
                    raise SaslAuthenticationFailedError(
                        f"{self.name}: the broker refused: {text[2:]}"
                    )
                match = _ITERATIONS_RE.search(text)
                if match and int(match.group(1)) > MAX_SCRAM_ITERATIONS:
                    raise SaslAuthenticationFailedError(
                        f"{self.name}: the broker asks for {match.group(1)} iterations, "
                        f"more than the {MAX_SCRAM_ITERATIONS} this client allows"
                    )
                if match and int(match.group(1)) < MIN_SCRAM_ITERATIONS:
                    # A proof made with few iterations is cheap to brute-force offline.
                    raise SaslAuthenticationFailedError(
                        f"{self.name}: the broker asks for only {match.group(1)} iterations "
                        f"(Kafka requires at least {MIN_SCRAM_ITERATIONS})"
                    )
                self._client.set_server_first(text)
                return bytes(self._client.get_client_final().encode())
            if stage == 2:
                if text.startswith("e="):
                    raise SaslAuthenticationFailedError(
                        f"{self.name}: the broker refused the credentials: {text[2:]}"
                    )
                self._client.set_server_final(text)
                return None
        except exc_type as exc:
            if stage == 2:
                raise SaslAuthenticationFailedError(
                    f"{self.name}: the broker's signature is wrong, so it does not know "
                    f"the password; refusing to talk to it ({exc})"
                ) from None
            raise SaslAuthenticationFailedError(
                f"{self.name}: invalid message from the broker: {exc}"
            ) from None
        raise SaslAuthenticationFailedError(f"{self.name}: unexpected extra message from broker")

    def __repr__(self) -> str:
        token = ", token_auth" if self.token_auth else ""
        return f"ScramMechanism({self.name}{token}, <credentials hidden>)"


def _decode(challenge: bytes | None, name: str) -> str:
    try:
        return (challenge or b"").decode("utf-8")
    except UnicodeDecodeError:
        raise SaslAuthenticationFailedError(f"{name}: the broker sent non-UTF-8 data") from None


register_mechanism(
    "SCRAM-SHA-256",
    ScramMechanism.factory("SCRAM-SHA-256"),
    check=_check_scramp,
    validate=_needs_password,
)
register_mechanism(
    "SCRAM-SHA-512",
    ScramMechanism.factory("SCRAM-SHA-512"),
    check=_check_scramp,
    validate=_needs_password,
)


# --------------------------------------------------------------------------------------------
# OAUTHBEARER
# --------------------------------------------------------------------------------------------


class TokenProvider(Protocol):
    """What ``sasl_oauth_token_provider`` must look like (aiokafka's shape).

    ``token()`` is awaited at every authentication, re-authentications included, so a
    provider that caches its token should refresh it some time before it expires; the
    broker limits the session to the token's lifetime and the connection re-authenticates
    before that (KIP-368). ``extensions()`` (optional, sync or async) returns SASL
    extensions (KIP-342) sent with the token.
    """

    async def token(self) -> str: ...


class RefreshingTokenProvider:
    """A token provider that caches a token and fetches a new one before it expires.

    ``fetch()`` is an async callable returning ``(token, lifetime_seconds)``; the token is
    reused until ``refresh_fraction`` (default 80%) of its lifetime has passed, so
    connections opened or re-authenticated late in a token's life get a fresh one. Callers
    arriving during a fetch share it. ``extensions`` are sent with every token::

        async def fetch() -> tuple[str, float]:
            ...  # ask the identity provider
            return access_token, expires_in

        Producer(..., sasl_mechanism="OAUTHBEARER",
                 sasl_oauth_token_provider=RefreshingTokenProvider(fetch))
    """

    def __init__(
        self,
        fetch: Callable[[], Awaitable[tuple[str, float]]],
        *,
        refresh_fraction: float = 0.8,
        extensions: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < refresh_fraction <= 1:
            raise ConfigError(f"refresh_fraction: must be in (0, 1], got {refresh_fraction}")
        self._fetch = fetch
        self._fraction = refresh_fraction
        self._extensions = dict(extensions or {})
        self._clock = clock
        self._token: str | None = None
        self._refresh_at = 0.0
        self._lock: anyio.Lock | None = None
        #: How many times ``fetch`` was called.
        self.fetches = 0

    async def token(self) -> str:
        """The cached token, or a new one once the refresh point has passed."""
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self._token is None or self._clock() >= self._refresh_at:
                token, lifetime = await self._fetch()
                self.fetches += 1
                if not isinstance(token, str) or not token:
                    raise SaslAuthenticationFailedError(
                        "OAUTHBEARER: the token fetch returned no token"
                    )
                if lifetime <= 0:
                    raise SaslAuthenticationFailedError(
                        f"OAUTHBEARER: the token fetch returned a lifetime of {lifetime} s"
                    )
                self._token = token
                self._refresh_at = self._clock() + lifetime * self._fraction
            return self._token

    def extensions(self) -> dict[str, str]:
        return dict(self._extensions)

    def __repr__(self) -> str:
        return f"RefreshingTokenProvider(<token hidden>, fetches={self.fetches})"


_EXTENSION_KEY_RE = re.compile(r"^[A-Za-z]+$")
_EXTENSION_VALUE_RE = re.compile(r"^[\x21-\x7e \t\r\n]*$")
_KVSEP = b"\x01"


class OAuthBearerMechanism:
    """OAUTHBEARER: one message carrying a bearer token (and extensions).

    When the broker refuses, it sends an error document first and expects a lone ``0x01``
    back before it answers with SASL_AUTHENTICATION_FAILED; the error document is kept for
    the exception message (it names the problem, never the token).
    """

    name = "OAUTHBEARER"

    def __init__(self, provider: Any) -> None:
        self._provider = provider
        self._message: bytes | None = None
        self._stage = 0
        self._server_error: str | None = None

    @classmethod
    def from_config(cls, config: ClientConfig) -> OAuthBearerMechanism:
        if config.sasl_oauthbearer_method == "oidc":
            # Imported here: oidc builds on this module (RefreshingTokenProvider).
            from . import oidc

            return cls(oidc.provider_for(config))
        return cls(config.sasl_oauth_token_provider)

    async def prepare(self) -> None:
        """Ask the provider for a token (and extensions) and build the client message."""
        token = await self._provider.token()
        if not isinstance(token, str) or not token:
            raise SaslAuthenticationFailedError(
                "OAUTHBEARER: the token provider returned no token (expected a non-empty str)"
            )
        if "\x01" in token or any(c.isspace() for c in token):
            raise SaslAuthenticationFailedError(
                "OAUTHBEARER: the token provider returned a token with whitespace or control "
                "characters"
            )
        extensions: Any = {}
        get_extensions = getattr(self._provider, "extensions", None)
        if get_extensions is not None:
            extensions = get_extensions()
            if inspect.isawaitable(extensions):
                extensions = await extensions
        self._message = _oauth_message(token, extensions or {})

    def step(self, challenge: bytes | None) -> bytes | None:
        stage, self._stage = self._stage, self._stage + 1
        if stage == 0:
            if self._message is None:
                raise SaslAuthenticationFailedError("OAUTHBEARER: prepare() was not awaited")
            message, self._message = self._message, None
            return message
        if stage == 1 and challenge:
            # The broker's error document; the protocol wants a lone separator back.
            self._server_error = challenge.decode("utf-8", "replace")
            return _KVSEP
        if self._server_error is not None:
            raise SaslAuthenticationFailedError(
                f"OAUTHBEARER: the broker refused the token: {self._server_error}"
            )
        return None

    def __repr__(self) -> str:
        return "OAuthBearerMechanism(<token hidden>)"


def _oauth_message(token: str, extensions: Mapping[str, str]) -> bytes:
    if not isinstance(extensions, Mapping):
        raise ConfigError(
            f"sasl_oauth_token_provider.extensions(): expected a dict, got "
            f"{type(extensions).__name__}"
        )
    parts = [b"n,,", b"auth=Bearer " + token.encode()]
    for key, value in extensions.items():
        if not isinstance(key, str) or not _EXTENSION_KEY_RE.match(key) or key == "auth":
            raise ConfigError(
                f"sasl_oauth_token_provider.extensions(): invalid key {key!r} (letters only, "
                "not 'auth')"
            )
        if not isinstance(value, str) or not _EXTENSION_VALUE_RE.match(value):
            raise ConfigError(f"sasl_oauth_token_provider.extensions(): invalid value for {key!r}")
        parts.append(f"{key}={value}".encode())
    return _KVSEP.join(parts) + _KVSEP + _KVSEP


def _needs_token_provider(config: ClientConfig) -> None:
    if config.sasl_oauthbearer_method == "oidc":
        from . import oidc

        oidc.validate(config)
        return
    if config.sasl_oauth_token_provider is None:
        hint = ""
        if config.sasl_oauthbearer_token_endpoint_url is not None:
            hint = " (or sasl_oauthbearer_method='oidc' to use sasl_oauthbearer_token_endpoint_url)"
        raise ConfigError(
            f"sasl_oauth_token_provider is required when sasl_mechanism is OAUTHBEARER{hint}"
        )


register_mechanism("OAUTHBEARER", OAuthBearerMechanism.from_config, validate=_needs_token_provider)


# --------------------------------------------------------------------------------------------
# The exchange
# --------------------------------------------------------------------------------------------

# Guards against a server that keeps sending challenges forever.
_MAX_ROUNDS = 16


#: Sends one request on the connection being authenticated and returns the response. On a
#: fresh connection it is ``conn.request``; during re-authentication the connection passes
#: a sender that writes while it holds its write lock.
class Send(Protocol):
    """Sends one request at ``version`` and returns its typed response."""

    async def __call__(self, api: Api[ReqT, RespT], body: ReqT, version: int) -> RespT: ...


async def prepared_mechanism(config: ClientConfig, host: str | None = None) -> SaslMechanism:
    """A fresh exchange for ``config``, with its I/O done (a token fetched, for OAUTHBEARER).

    A mechanism that needs the broker's host name (AWS_MSK_IAM signs it) has a
    ``server_host`` attribute; it is set to ``host`` before ``prepare()``.
    """
    mechanism = create_mechanism(config)
    if host is not None and hasattr(mechanism, "server_host"):
        mechanism.server_host = host
    prepare = getattr(mechanism, "prepare", None)
    if prepare is not None:
        await prepare()
    return mechanism


async def authenticate(conn: BrokerConnection) -> None:
    """Authenticate ``conn`` with the mechanism its config names (see
    :func:`authenticate_session`)."""
    await authenticate_session(conn)


async def authenticate_session(
    conn: BrokerConnection,
    send: Send | None = None,
    *,
    mechanism: SaslMechanism | None = None,
) -> int:
    """Run SaslHandshake v1 and the SaslAuthenticate round trips; return the session
    lifetime in ms the broker granted (0: no limit, no re-authentication needed).

    The v0 handshake, where raw tokens follow without Kafka framing, predates Kafka 1.0 and
    is not supported. Raises ``UnsupportedSaslMechanismError`` naming the mechanisms the
    broker offers, ``SaslAuthenticationFailedError`` for refused credentials (or a broker
    that fails to prove it knows them, for SCRAM). ``mechanism`` is a fresh exchange
    already prepared (re-authentication prepares it before pausing the connection).
    """
    if send is None:

        async def send(api: Api[ReqT, RespT], body: ReqT, version: int) -> RespT:
            return await conn.request(api, body, version=version)

    try:
        hs_version = conn.version_for(SASL_HANDSHAKE, min_version=1)
        auth_version = conn.version_for(SASL_AUTHENTICATE)
    except IncompatibleBrokerVersionError as exc:
        raise IncompatibleBrokerVersionError(
            f"{conn.address}: the broker does not support SaslHandshake v1/SaslAuthenticate "
            f"(Kafka >= 1.0 needed): {exc}"
        ) from None
    if mechanism is None:
        mechanism = await prepared_mechanism(conn.config, conn.host)
    hs = await send(SASL_HANDSHAKE, SaslHandshakeRequest(mechanism=mechanism.name), hs_version)
    if hs.error_code == _UNSUPPORTED_SASL_MECHANISM:
        offered = ", ".join(hs.mechanisms) or "none"
        raise UnsupportedSaslMechanismError(
            f"{conn.address}: SASL mechanism {mechanism.name} is not enabled on the broker; "
            f"it offers: {offered}"
        )
    raise_for_code(hs.error_code)
    token = mechanism.step(None)
    rounds = 0
    lifetime = 0
    while token is not None:
        rounds += 1
        if rounds > _MAX_ROUNDS:
            raise SaslAuthenticationFailedError(
                f"{conn.address}: SASL {mechanism.name} did not finish after {_MAX_ROUNDS} rounds"
            )
        resp = await send(
            SASL_AUTHENTICATE, SaslAuthenticateRequest(auth_bytes=token), auth_version
        )
        if resp.error_code:
            message = resp.error_message or "no reason given"
            hint = getattr(mechanism, "failure_hint", None)
            if hint:
                message = f"{message} ({hint})"
            raise_for_code(
                resp.error_code, f"{conn.address}: SASL {mechanism.name} failed: {message}"
            )
        lifetime = resp.session_lifetime_ms
        token = mechanism.step(resp.auth_bytes)
    return max(lifetime, 0)
