"""SASL against a scripted broker that runs the real exchanges (``SaslServer`` on a
``FakeBroker``: scramp's SCRAM server, PLAIN and OAUTHBEARER parsed from their RFC formats).

Tansu serves SCRAM only and cannot be given users in the build we test with (see
test_security_sasl_tansu.py), so success paths, PLAIN, OAUTHBEARER, an impostor broker and
re-authentication are covered here.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from kafka_async.cluster.client import ClusterClient
from kafka_async.consumer import Consumer
from kafka_async.errors import (
    KafkaConnectionError,
    SaslAuthenticationFailedError,
    UnsupportedSaslMechanismError,
)
from kafka_async.net import sasl
from kafka_async.net.config import ClientConfig
from kafka_async.producer import Producer
from kafka_async.protocol.apis import METADATA
from kafka_async.protocol.apis.metadata import MetadataRequest
from tests.harness.fake_broker import CLOSE, FakeBroker, FakeRequest
from tests.harness.sasl_server import SaslServer

pytest.importorskip("scramp")

pytestmark = pytest.mark.anyio

USERS = {"alice": "alice-secret-pw", "bob": "bob-secret-pw"}


@asynccontextmanager
async def sasl_broker(**server_args: Any) -> AsyncIterator[tuple[FakeBroker, SaslServer]]:
    server_args.setdefault("users", USERS)
    async with FakeBroker(topics={"t": 2}) as broker:
        server = SaslServer(**server_args)
        server.install(broker)
        yield broker, server


def sasl_config(broker: FakeBroker, mechanism: str, **kw: Any) -> ClientConfig:
    settings: dict[str, Any] = {
        "bootstrap_servers": broker.address,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "request_timeout_ms": 10_000,
    }
    if mechanism != "OAUTHBEARER":
        settings.setdefault("sasl_plain_username", "alice")
        settings.setdefault("sasl_plain_password", USERS["alice"])
    settings.update(kw)
    return ClientConfig(**settings)


class Tokens:
    """An OAUTHBEARER token provider issuing a new token per call."""

    def __init__(self, prefix: str = "tok", extensions: Mapping[str, str] | None = None) -> None:
        self.prefix = prefix
        self.calls = 0
        self._extensions = dict(extensions or {})

    async def token(self) -> str:
        self.calls += 1
        await anyio.lowlevel.checkpoint()  # a real provider does I/O here
        return f"{self.prefix}-{self.calls}"

    def extensions(self) -> dict[str, str]:
        return self._extensions


def accept_tokens(prefix: str) -> Any:
    def validate(token: str, extensions: Mapping[str, str]) -> bool:
        return token.startswith(prefix + "-")

    return validate


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_right_credentials_authenticate(mechanism: str) -> None:
    async with sasl_broker() as (broker, server):
        async with ClusterClient(sasl_config(broker, mechanism)) as client:
            await client.refresh_metadata(["t"])
            assert client.metadata.partitions_for("t") == frozenset({0, 1})
        assert server.stats.successes == {mechanism: 1}
        assert server.stats.failures == 0
        assert server.stats.unauthenticated == 0


@pytest.mark.parametrize(
    ("mechanism", "user", "password"),
    [
        ("PLAIN", "alice", "not-the-password"),
        ("SCRAM-SHA-256", "alice", "not-the-password"),
        ("SCRAM-SHA-512", "alice", "not-the-password"),
        ("SCRAM-SHA-256", "mallory", "whatever"),
    ],
)
async def test_wrong_credentials_fail_typed_and_are_not_retried(
    mechanism: str, user: str, password: str
) -> None:
    async with sasl_broker() as (broker, server):
        cfg = sasl_config(broker, mechanism, sasl_plain_username=user, sasl_plain_password=password)
        start = time.monotonic()
        with pytest.raises(SaslAuthenticationFailedError) as info:
            async with ClusterClient(cfg):
                pass
        # Raised at once: not retried until the 10 s request timeout.
        assert time.monotonic() - start < 2
        assert mechanism in str(info.value)
        assert not info.value.retriable
        await anyio.sleep(0.5)
        assert broker.stats.connections == 1
        assert server.stats.failures == 1


async def test_a_running_client_does_not_hammer_a_broker_that_refuses_it() -> None:
    """Credentials revoked while a client runs: its reconnects are paced by the backoff."""
    async with sasl_broker() as (broker, server):
        cfg = sasl_config(
            broker,
            "SCRAM-SHA-256",
            reconnect_backoff_ms=100,
            reconnect_backoff_max_ms=1000,
            metadata_max_age_ms=100,
        )
        async with ClusterClient(cfg) as client:
            await client.refresh_metadata(["t"])
            server.users["alice"] = "rotated-password"
            # The broker drops the connection; every reconnect now fails authentication.
            broker.script(METADATA.key, lambda req: CLOSE, count=1)
            before = broker.stats.connections
            errors: list[BaseException] = []
            with anyio.move_on_after(3.0):
                while True:
                    try:
                        await client.refresh_metadata(["t"])
                    except SaslAuthenticationFailedError as exc:
                        errors.append(exc)
                    await anyio.lowlevel.checkpoint()
            attempts = broker.stats.connections - before
        assert errors, "the refusal must reach the caller"
        # Exponential backoff 0.1 s .. 1 s with jitter: a handful of attempts in 3 s, not
        # the hundreds a tight loop would make.
        assert 1 <= attempts <= 12, attempts
        assert server.stats.failures == attempts


async def test_impostor_broker_with_a_wrong_scram_signature_is_refused() -> None:
    async with sasl_broker(tamper_server_signature=True) as (broker, server):
        with pytest.raises(SaslAuthenticationFailedError, match="signature is wrong"):
            async with ClusterClient(sasl_config(broker, "SCRAM-SHA-512")):
                pass
        # The broker accepted the proof; the client refused the broker and sent nothing else.
        assert server.stats.successes == {"SCRAM-SHA-512": 1}
        assert broker.stats.requests_by_api.get(METADATA.key, 0) == 0


async def test_mechanism_not_enabled_names_the_ones_offered() -> None:
    async with sasl_broker(mechanisms=("SCRAM-SHA-512", "OAUTHBEARER")) as (broker, _):
        with pytest.raises(UnsupportedSaslMechanismError) as info:
            async with ClusterClient(sasl_config(broker, "PLAIN")):
                pass
        message = str(info.value)
        assert "PLAIN is not enabled" in message
        assert "SCRAM-SHA-512, OAUTHBEARER" in message


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_oauthbearer_sends_token_and_extensions() -> None:
    provider = Tokens("good", extensions={"traceId": "abc123"})
    async with sasl_broker(token_validator=accept_tokens("good")) as (broker, server):
        cfg = sasl_config(broker, "OAUTHBEARER", sasl_oauth_token_provider=provider)
        async with ClusterClient(cfg) as client:
            await client.refresh_metadata(["t"])
        assert server.stats.successes == {"OAUTHBEARER": 1}
        assert server.stats.tokens == ["good-1"]
        assert server.stats.extensions == [{"traceId": "abc123"}]


async def test_oauthbearer_refused_token_is_a_typed_error() -> None:
    async with sasl_broker(token_validator=accept_tokens("good")) as (broker, server):
        cfg = sasl_config(broker, "OAUTHBEARER", sasl_oauth_token_provider=Tokens("expired"))
        with pytest.raises(SaslAuthenticationFailedError, match="invalid OAUTHBEARER token"):
            async with ClusterClient(cfg):
                pass
        assert server.stats.failures == 1
        assert broker.stats.connections == 1


async def test_oauthbearer_provider_without_a_token_is_a_typed_error() -> None:
    class Empty:
        async def token(self) -> str:
            return ""

    async with sasl_broker(token_validator=accept_tokens("good")) as (broker, _):
        cfg = sasl_config(broker, "OAUTHBEARER", sasl_oauth_token_provider=Empty())
        with pytest.raises(SaslAuthenticationFailedError, match="returned no token"):
            async with ClusterClient(cfg):
                pass


@pytest.mark.parametrize(
    ("anyio_backend", "mechanism"),
    [("asyncio", "SCRAM-SHA-256"), ("trio", "SCRAM-SHA-256"), ("asyncio", "OAUTHBEARER")],
)
async def test_reauthentication_keeps_requests_flowing(mechanism: str) -> None:
    """KIP-368: sessions of 1 s, requests in flight all the time until the client has
    re-authenticated three times.

    The broker closes a connection used after its session expired and one that sends
    anything in the middle of a SASL exchange; neither may happen, no request may fail, and
    all of it runs on the one connection. The test runs until three re-authentications
    rather than for a fixed time: on a loaded machine the same three take longer.
    """
    provider = Tokens("good")
    # Requests queue for up to 3 x 10 ms in the fake broker, which reads them only then; and
    # the client and the broker share one event loop, which a loaded machine slows down.
    server_args: dict[str, Any] = {"session_lifetime_ms": 1000, "expiry_grace_ms": 100}
    if mechanism == "OAUTHBEARER":
        server_args["token_validator"] = accept_tokens("good")
    async with sasl_broker(**server_args) as (broker, server):

        async def slow_metadata(req: FakeRequest) -> Any:
            # Keeps requests in flight when re-authentication starts.
            await anyio.sleep(0.01)
            return broker.metadata_reply(req)

        broker.set_default(METADATA.key, server.guard(slow_metadata))
        extra = {"sasl_oauth_token_provider": provider} if mechanism == "OAUTHBEARER" else {}
        cfg = sasl_config(broker, mechanism, **extra)
        done = 0
        failed: list[KafkaConnectionError] = []
        async with ClusterClient(cfg) as client:
            node = client.metadata.brokers
            assert node
            node_id = next(iter(node))

            async def hammer() -> None:
                nonlocal done
                while server.stats.reauthentications < 3 and not failed:
                    try:
                        await client.request(
                            node_id, METADATA, MetadataRequest(topics=None), version=1
                        )
                    except KafkaConnectionError as exc:  # reported with the server's view
                        failed.append(exc)
                    done += 1

            # About 3 s unloaded (3 x 0.85..0.95 of the 1 s session).
            with anyio.fail_after(30):
                async with anyio.create_task_group() as tg:
                    for _ in range(3):
                        tg.start_soon(hammer)
        assert not failed, (failed[0], server.stats)
        assert done > 20
        assert server.stats.expired == 0
        assert server.stats.interleaved == 0
        assert server.stats.unauthenticated == 0
        assert server.stats.reauthentications >= 3
        assert broker.stats.connections == 1
        if mechanism == "OAUTHBEARER":
            # A fresh token from the provider at every re-authentication.
            assert len(set(server.stats.tokens)) == len(server.stats.tokens) >= 4
            assert provider.calls == len(server.stats.tokens)


async def test_failed_reauthentication_closes_the_connection_with_a_typed_error_next() -> None:
    async with sasl_broker(session_lifetime_ms=300) as (broker, server):
        client = ClusterClient(sasl_config(broker, "PLAIN"))
        async with client:
            await client.refresh_metadata(["t"])
            server.users["alice"] = "rotated"
            # The re-authentication at ~270 ms fails; the connection closes instead of
            # running past its session. (Waited for, not slept: later on a loaded machine.)
            with anyio.fail_after(10):
                while server.stats.failures < 1:  # noqa: ASYNC110 - the server's counter
                    await anyio.sleep(0.05)
            assert server.stats.failures == 1
            assert server.stats.expired == 0
            with pytest.raises(SaslAuthenticationFailedError):
                await client.refresh_metadata(["t"])


async def test_oauthbearer_token_refreshed_before_expiry_across_reauthentications() -> None:
    """Tokens live 1 s and are refreshed at 80% of that; the broker limits sessions to the
    token's lifetime, so each re-authentication (at 85-95%) presents a fresh token."""
    issued = 0

    async def fetch() -> tuple[str, float]:
        nonlocal issued
        issued += 1
        return f"good-{issued}", 1.0

    provider = sasl.RefreshingTokenProvider(fetch)
    # The client and this broker share one event loop: on a loaded machine the broker can
    # read a request written in time (at most 95% into the session) a little late.
    async with sasl_broker(
        token_validator=accept_tokens("good"), session_lifetime_ms=1000, expiry_grace_ms=100
    ) as (broker, server):
        cfg = sasl_config(broker, "OAUTHBEARER", sasl_oauth_token_provider=provider)
        async with ClusterClient(cfg) as client:
            with anyio.fail_after(10):
                for _ in range(22):
                    await client.refresh_metadata(["t"])
                    await anyio.sleep(0.1)
        assert server.stats.expired == 0
        assert server.stats.reauthentications >= 2
        tokens = server.stats.tokens
        # Every authentication presented a token that had not passed its refresh point.
        assert len(tokens) == len(set(tokens)) == provider.fetches
        assert broker.stats.connections == 1


async def test_reauthentication_does_not_keep_an_idle_connection_alive() -> None:
    async with sasl_broker(session_lifetime_ms=250) as (broker, server):
        cfg = sasl_config(broker, "PLAIN", connections_max_idle_ms=1200)
        async with ClusterClient(cfg) as client:
            await client.refresh_metadata(["t"])
            # Idle for 1.2 s, plus up to one reaper interval (0.3 s): about 1.5 s unloaded.
            with anyio.fail_after(10):
                while broker.stats.open_connections:  # noqa: ASYNC110 - the broker's counter
                    await anyio.sleep(0.05)
            # It re-authenticated while idle, and the reaper still closed it on time.
            assert server.stats.reauthentications >= 2
            assert server.stats.expired == 0
            await client.refresh_metadata(["t"])  # a new connection, authenticated afresh
        assert server.stats.successes == {"PLAIN": 2}


@pytest.mark.parametrize("client_type", ["producer", "consumer"])
async def test_producer_and_consumer_raise_the_typed_refusal_at_start(client_type: str) -> None:
    async with sasl_broker() as (broker, server):
        settings: dict[str, Any] = {
            "bootstrap_servers": broker.address,
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "SCRAM-SHA-256",
            "sasl_plain_username": "alice",
            "sasl_plain_password": "not-the-password",
            "request_timeout_ms": 10_000,
        }
        client: Any = Producer(**settings) if client_type == "producer" else Consumer(**settings)
        start = time.monotonic()
        with pytest.raises(SaslAuthenticationFailedError):
            await client.start()
        await client.close()
        assert time.monotonic() - start < 3
        assert broker.stats.connections == 1
        assert server.stats.failures == 1
