"""SASL SCRAM against the real Tansu broker (``tansu broker --authentication``).

Why no successful login against Tansu here: the build we test with (0.6.0) cannot be given
a user that an authenticating broker then knows.

* An authenticating broker refuses every request before authentication, including
  AlterUserScramCredentials and the ``tansu user create`` command (it closes the connection:
  ``NotAuthenticated`` in its log).
* A broker without ``--authentication`` accepts AlterUserScramCredentials (and ``tansu user
  create``), but keeps the credentials in process memory only: with S3 storage
  (``EmbeddedBroker(durable=True)``) the stored cluster state (``meta.json``) holds topics,
  producers and transactions but no users, so after a restart with ``--authentication`` the
  broker answers the SCRAM client-first with a fake salt and then ``e=unknown-user``.
  (Postgres storage might keep users; it is not available here.)

So Tansu covers what it can: the mechanism negotiation, a full SCRAM exchange to the
broker's refusal, and that authentication is enforced; successful SCRAM (and the other
paths) run against the scripted broker in test_security_sasl.py, which uses scramp's real
SCRAM server.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import anyio.abc
import pytest

from kafka_async.cluster.client import ClusterClient
from kafka_async.errors import (
    KafkaConnectionError,
    SaslAuthenticationFailedError,
    UnsupportedSaslMechanismError,
)
from kafka_async.net.config import ClientConfig
from kafka_async.net.connection import tcp_stream
from kafka_async.testing import EmbeddedBroker

pytest.importorskip("scramp")

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


@pytest.fixture(scope="module")
def auth_broker() -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker(extra_args=["--authentication"]) as broker:
        yield broker


class CountingStreams:
    """A stream factory over real TCP that counts connection attempts."""

    def __init__(self) -> None:
        self.opened = 0

    async def __call__(self, host: str, port: int, config: ClientConfig) -> anyio.abc.ByteStream:
        self.opened += 1
        return await tcp_stream(host, port, config)


def scram_config(broker: EmbeddedBroker, mechanism: str, **kw: object) -> ClientConfig:
    settings: dict[str, object] = {
        "bootstrap_servers": broker.bootstrap_servers,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": "nobody",
        "sasl_plain_password": "no-such-password",
        "request_timeout_ms": 10_000,
    }
    settings.update(kw)
    return ClientConfig(**settings)  # type: ignore[arg-type]


async def test_tansu_without_authentication_names_its_mechanisms(
    embedded_broker: EmbeddedBroker,
) -> None:
    # A broker without --authentication answers SaslHandshake with UNSUPPORTED_SASL_MECHANISM
    # and a mechanism list (Tansu 0.6.0 echoes the requested mechanism there; the scripted
    # broker tests check that the real list is named). With --authentication, Tansu closes
    # the connection on a PLAIN handshake instead of answering.
    cfg = ClientConfig(
        bootstrap_servers=embedded_broker.bootstrap_servers,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_plain_username="alice",
        sasl_plain_password="pw",
        request_timeout_ms=10_000,
    )
    start = time.monotonic()
    with pytest.raises(UnsupportedSaslMechanismError) as info:
        async with ClusterClient(cfg):
            pass
    assert time.monotonic() - start < 3
    message = str(info.value)
    assert "PLAIN is not enabled on the broker; it offers: " in message
    assert not info.value.retriable


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_tansu_refuses_an_unknown_scram_user_with_a_typed_error_once(
    auth_broker: EmbeddedBroker, mechanism: str
) -> None:
    streams = CountingStreams()
    start = time.monotonic()
    with pytest.raises(SaslAuthenticationFailedError) as info:
        async with ClusterClient(scram_config(auth_broker, mechanism), stream_factory=streams):
            pass
    assert time.monotonic() - start < 3
    # Tansu completes the SCRAM exchange and refuses in its final message.
    assert "unknown-user" in str(info.value)
    assert mechanism in str(info.value)
    # One attempt: wrong credentials are not retried until the 10 s deadline.
    assert streams.opened == 1


async def test_tansu_enforces_authentication(auth_broker: EmbeddedBroker) -> None:
    cfg = ClientConfig(bootstrap_servers=auth_broker.bootstrap_servers, request_timeout_ms=2_000)
    with pytest.raises(KafkaConnectionError):
        async with ClusterClient(cfg):
            pass
