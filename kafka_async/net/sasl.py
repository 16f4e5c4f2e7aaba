"""SASL authentication run on a fresh connection, after ApiVersions (KIP-43, KIP-152).

A mechanism is a sans-I/O object: ``step(None)`` gives the client's first message and
``step(server_bytes)`` the next one, or ``None`` once the exchange is complete (after
checking the server's final message, for mechanisms that have one). :func:`authenticate`
drives it over SaslHandshake v1 and SaslAuthenticate, so a new mechanism (SCRAM, OAUTHBEARER)
is one class plus one :func:`register_mechanism` call; the connection code does not change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ..errors import ConfigError, IncompatibleBrokerVersionError, raise_for_code
from ..protocol.apis import SASL_AUTHENTICATE, SASL_HANDSHAKE

if TYPE_CHECKING:
    from .config import ClientConfig
    from .connection import BrokerConnection

_UNSUPPORTED_SASL_MECHANISM = 33


class SaslMechanism(Protocol):
    """One client-side SASL exchange (a fresh object per connection)."""

    #: The mechanism name sent in SaslHandshake, such as ``"PLAIN"``.
    name: str

    def step(self, challenge: bytes | None) -> bytes | None:
        """The next client message for the server's ``challenge`` (None on the first call).

        Returns None when authentication is complete; raises a ``KafkaError`` when the
        server's message is invalid (for example a wrong server signature).
        """


MechanismFactory = Callable[["ClientConfig"], SaslMechanism]

_MECHANISMS: dict[str, MechanismFactory] = {}


def register_mechanism(name: str, factory: MechanismFactory) -> None:
    """Make ``sasl_mechanism=name`` valid; ``factory(config)`` builds one exchange."""
    _MECHANISMS[name] = factory


def mechanism_names() -> tuple[str, ...]:
    """Names accepted for ``sasl_mechanism``."""
    return tuple(sorted(_MECHANISMS))


def create_mechanism(config: ClientConfig) -> SaslMechanism:
    """A fresh exchange for the configured mechanism."""
    try:
        factory = _MECHANISMS[config.sasl_mechanism]
    except KeyError:
        raise ConfigError(
            f"sasl_mechanism: expected one of {', '.join(mechanism_names())}, "
            f"got {config.sasl_mechanism!r}"
        ) from None
    return factory(config)


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


register_mechanism("PLAIN", PlainMechanism.from_config)

# Guards against a server that keeps sending challenges forever.
_MAX_ROUNDS = 16


async def authenticate(conn: BrokerConnection) -> None:
    """Authenticate ``conn`` with the mechanism its config names.

    Uses SaslHandshake v1 followed by SaslAuthenticate round trips (the v0 handshake, where
    raw tokens follow without Kafka framing, predates Kafka 1.0 and is not supported).
    """
    mechanism = create_mechanism(conn.config)
    try:
        hs_version = conn.version_for(SASL_HANDSHAKE, min_version=1)
        auth_version = conn.version_for(SASL_AUTHENTICATE)
    except IncompatibleBrokerVersionError as exc:
        raise IncompatibleBrokerVersionError(
            f"{conn.address}: the broker does not support SaslHandshake v1/SaslAuthenticate "
            f"(Kafka >= 1.0 needed): {exc}"
        ) from None
    hs = await conn.request(SASL_HANDSHAKE, {"mechanism": mechanism.name}, version=hs_version)
    if hs.error_code == _UNSUPPORTED_SASL_MECHANISM:
        raise_for_code(
            hs.error_code,
            f"{mechanism.name} is not enabled on the broker; it offers {hs.mechanisms}",
        )
    raise_for_code(hs.error_code)
    token = mechanism.step(None)
    rounds = 0
    while token is not None:
        rounds += 1
        if rounds > _MAX_ROUNDS:
            raise IncompatibleBrokerVersionError(
                f"SASL {mechanism.name} did not finish after {_MAX_ROUNDS} rounds"
            )
        resp = await conn.request(SASL_AUTHENTICATE, {"auth_bytes": token}, version=auth_version)
        raise_for_code(resp.error_code, resp.error_message)
        token = mechanism.step(bytes(resp.auth_bytes))
