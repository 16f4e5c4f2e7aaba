"""Security against real Apache Kafka: the run's broker with every security listener.

``ApacheKafka(security=True)`` (the session broker of an Apache run) listens with SSL (client
certificate requested), MTLS (required), SASL_PLAINTEXT and SASL_SSL (PLAIN, SCRAM-SHA-256/512,
OAUTHBEARER with Kafka's unsecured-token validator) and REAUTH (SASL_PLAINTEXT with
``connections.max.reauth.ms=3000``), with the StandardAuthorizer enforcing ACLs. Users admin,
alice and bob (password ``<name>-secret``) exist for PLAIN and both SCRAM mechanisms;
``User:ANONYMOUS`` (PLAINTEXT, and TLS without a client certificate) and ``User:admin`` are
super users, and a resource without ACLs is open to everyone, so the ACL tests give bob (not
alice) access to a resource, or deny alice explicitly.

On any other broker these tests are skipped (``kafka_service.apache``): Tansu's SASL and TLS
are covered by test_security_sasl_tansu.py and test_security_tls.py.
"""

from __future__ import annotations

import base64
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Literal

import anyio
import pytest

from kafka_async.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePattern,
    ResourceType,
    ScramCredentialInfo,
    ScramDeletion,
    ScramMechanism,
    ScramUpsertion,
)
from kafka_async.cluster.client import ClusterClient
from kafka_async.consumer import Consumer
from kafka_async.errors import (
    ClusterAuthorizationFailedError,
    ConfigError,
    GroupAuthorizationFailedError,
    KafkaConnectionError,
    ResourceNotFoundError,
    SaslAuthenticationFailedError,
    TopicAuthorizationFailedError,
)
from kafka_async.net import sasl
from kafka_async.net.config import ClientConfig
from kafka_async.net.connection import BrokerConnection
from kafka_async.net.tls import TLSHandshakeError
from kafka_async.producer import Producer
from kafka_async.protocol.apis import METADATA
from kafka_async.protocol.apis.metadata import MetadataRequest
from kafka_async.structs import TopicPartition
from kafka_async.testing.apache import REAUTH_MS, SASL_USERS, ApacheKafka
from kafka_async.testing.plugin import KafkaService

pytest.importorskip("scramp")

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
PASSWORD_MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
#: How long a refusal may take: it must come at once, not after retries until a deadline.
PROMPT = 5.0


@pytest.fixture(scope="module")
def kafka(kafka_service: KafkaService) -> ApacheKafka:
    return kafka_service.apache


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def unsecured_jwt(sub: str, lifetime_s: float = 3600.0, **claims: Any) -> str:
    """An unsigned JWT (``alg: none``) as Kafka's unsecured validator accepts for tests."""

    def b64(doc: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(doc).encode()).rstrip(b"=").decode()

    now = time.time()
    payload: dict[str, Any] = {"sub": sub, "iat": int(now), "exp": int(now + lifetime_s)}
    payload.update(claims)
    return f"{b64({'alg': 'none'})}.{b64(payload)}."


class JwtProvider:
    """A token provider issuing a fresh unsigned JWT per authentication."""

    def __init__(self, sub: str, lifetime_s: float = 3600.0, **claims: Any) -> None:
        self.sub = sub
        self.lifetime_s = lifetime_s
        self.claims = claims
        self.calls = 0

    async def token(self) -> str:
        self.calls += 1
        return unsecured_jwt(self.sub, self.lifetime_s, **self.claims)


def sasl_settings(
    kafka: ApacheKafka,
    listener: str,
    mechanism: str,
    user: str = "alice",
    password: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Client settings for ``user`` on one SASL listener of the broker."""
    assert kafka.tls is not None
    settings: dict[str, Any] = {
        "bootstrap_servers": kafka.bootstrap(listener),
        "security_protocol": kafka.listeners[listener],
        "sasl_mechanism": mechanism,
        "request_timeout_ms": 15_000,
    }
    if kafka.listeners[listener] == "SASL_SSL":
        settings["ssl_cafile"] = str(kafka.tls.ca)
    if mechanism == "OAUTHBEARER":
        settings["sasl_oauth_token_provider"] = JwtProvider(user)
    else:
        settings["sasl_plain_username"] = user
        settings["sasl_plain_password"] = SASL_USERS[user] if password is None else password
    settings.update(extra)
    return settings


def tls_settings(kafka: ApacheKafka, listener: str, *, client_cert: bool) -> dict[str, Any]:
    assert kafka.tls is not None
    settings: dict[str, Any] = {
        "bootstrap_servers": kafka.bootstrap(listener),
        "security_protocol": "SSL",
        "ssl_cafile": str(kafka.tls.ca),
        "request_timeout_ms": 15_000,
    }
    if client_cert:
        settings["ssl_certfile"] = str(kafka.tls.client_cert)
        settings["ssl_keyfile"] = str(kafka.tls.client_key)
    return settings


async def round_trip(settings: dict[str, Any], topic: str, value: bytes) -> None:
    """Produce ``value`` to ``topic`` and read it back, both with ``settings``."""
    async with Producer(**settings) as producer:
        meta = await producer.send(topic, value=value)
    consumer: Consumer[bytes, bytes]
    async with Consumer(**settings, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek(TopicPartition(topic, 0), meta.offset)
        with anyio.fail_after(30):
            record = await consumer.getone()
    assert record.value == value
    assert record.offset == meta.offset


@asynccontextmanager
async def admin(kafka: ApacheKafka) -> AsyncIterator[AdminClient]:
    """An admin client on PLAINTEXT (``User:ANONYMOUS``, a super user)."""
    async with AdminClient(bootstrap_servers=kafka.bootstrap_servers) as client:
        yield client


def topic_acl(topic: str, principal: str, op: AclOperation, *, deny: bool = False) -> AclBinding:
    return AclBinding(
        ResourcePattern(ResourceType.TOPIC, topic),
        principal,
        operation=op,
        permission_type=AclPermissionType.DENY if deny else AclPermissionType.ALLOW,
    )


async def create_acls(kafka: ApacheKafka, acls: list[AclBinding]) -> None:
    async with admin(kafka) as client:
        await client.create_acls(acls, raise_on_error=True)


async def delete_acls_of(kafka: ApacheKafka, principal: str) -> None:
    async with admin(kafka) as client:
        await client.delete_acls([AclBindingFilter(principal=principal)], raise_on_error=True)


async def eventually(check: Callable[[], Any], *, within: float = 20.0) -> Any:
    """Run the async ``check`` until it stops raising; ACLs and SCRAM users reach the
    brokers through the metadata log, shortly after the admin call returns."""
    deadline = time.monotonic() + within
    while True:
        try:
            return await check()
        except Exception:
            if time.monotonic() > deadline:
                raise
            await anyio.sleep(0.25)


@contextmanager
def prompt() -> Iterator[None]:
    start = time.monotonic()
    yield
    assert time.monotonic() - start < PROMPT, "the refusal took too long (retried?)"


# --------------------------------------------------------------------------------------------
# SASL logins
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("listener", ["SASL_PLAINTEXT", "SASL_SSL"])
@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_sasl_login_produces_and_consumes(
    kafka: ApacheKafka, new_topic: Callable[..., str], listener: str, mechanism: str
) -> None:
    topic = new_topic()
    settings = sasl_settings(kafka, listener, mechanism)
    await round_trip(settings, topic, f"{listener} {mechanism}".encode())
    if mechanism == "OAUTHBEARER":
        provider = settings["sasl_oauth_token_provider"]
        assert provider.calls >= 1  # the token reached the broker through our provider


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_sasl_ssl_scram_metadata_points_at_the_same_listener(
    kafka: ApacheKafka, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(3)
    settings = sasl_settings(kafka, "SASL_SSL", "SCRAM-SHA-512")
    async with ClusterClient(ClientConfig(**settings)) as client:
        await client.refresh_metadata([topic])
        assert client.metadata.partitions_for(topic) == frozenset({0, 1, 2})
        # The broker advertises its SASL_SSL port on this listener; every connection went there.
        port = int(kafka.bootstrap("SASL_SSL").rsplit(":", 1)[1])
        assert {p for _, p in client.statistics()["pool"]["addresses"].values()} == {port}


@pytest.mark.parametrize("listener", ["SASL_PLAINTEXT", "SASL_SSL"])
@pytest.mark.parametrize("mechanism", PASSWORD_MECHANISMS)
async def test_wrong_password_is_a_typed_refusal_at_once(
    kafka: ApacheKafka, listener: str, mechanism: str
) -> None:
    cfg = ClientConfig(**sasl_settings(kafka, listener, mechanism, password="not-the-password"))
    with prompt(), pytest.raises(SaslAuthenticationFailedError) as info:
        async with ClusterClient(cfg):
            pass
    assert not info.value.retriable
    assert mechanism in str(info.value)
    assert "not-the-password" not in str(info.value)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"])
async def test_unknown_user_is_a_typed_refusal(kafka: ApacheKafka, mechanism: str) -> None:
    settings = sasl_settings(kafka, "SASL_PLAINTEXT", mechanism, password="whatever")
    settings["sasl_plain_username"] = "mallory"
    with prompt(), pytest.raises(SaslAuthenticationFailedError):
        async with ClusterClient(ClientConfig(**settings)):
            pass


@pytest.mark.parametrize(
    ("why", "provider"),
    [
        ("expired", JwtProvider("alice", lifetime_s=-60)),
        ("no subject", JwtProvider("")),
        ("not a JWT", None),
    ],
    ids=["expired", "no-subject", "not-a-jwt"],
)
async def test_oauthbearer_invalid_token_is_a_typed_refusal(
    kafka: ApacheKafka, why: str, provider: Any
) -> None:
    class NotAJwt:
        async def token(self) -> str:
            return "opaque-token-that-is-no-jwt"

    settings = sasl_settings(kafka, "SASL_PLAINTEXT", "OAUTHBEARER")
    settings["sasl_oauth_token_provider"] = provider or NotAJwt()
    with prompt(), pytest.raises(SaslAuthenticationFailedError, match="OAUTHBEARER") as info:
        async with ClusterClient(ClientConfig(**settings)):
            pass
    assert not info.value.retriable


@pytest.mark.parametrize("client_type", ["producer", "consumer"])
async def test_producer_and_consumer_raise_the_refusal_at_start(
    kafka: ApacheKafka, client_type: str
) -> None:
    settings = sasl_settings(kafka, "SASL_SSL", "SCRAM-SHA-256", password="wrong")
    client: Any = Producer(**settings) if client_type == "producer" else Consumer(**settings)
    try:
        with prompt(), pytest.raises(SaslAuthenticationFailedError):
            await client.start()
    finally:
        with anyio.fail_after(10):
            await client.close()


# --------------------------------------------------------------------------------------------
# SCRAM users through the admin API
# --------------------------------------------------------------------------------------------


async def test_scram_user_created_described_and_deleted_through_the_admin_api(
    kafka: ApacheKafka, new_topic: Callable[..., str]
) -> None:
    user = f"carol-{uuid.uuid4().hex[:8]}"
    password = "carol-" + uuid.uuid4().hex
    topic = new_topic()

    def login(mechanism: str, listener: str = "SASL_PLAINTEXT") -> ClientConfig:
        settings = sasl_settings(kafka, listener, mechanism, password=password)
        settings["sasl_plain_username"] = user
        return ClientConfig(**settings)

    async def can_log_in(mechanism: str, listener: str = "SASL_PLAINTEXT") -> None:
        async with ClusterClient(login(mechanism, listener)) as client:
            await client.refresh_metadata([topic])

    # Not a user yet.
    with pytest.raises(SaslAuthenticationFailedError):
        await can_log_in("SCRAM-SHA-256")

    async with admin(kafka) as client:
        before = await client.describe_scram_credentials([user])
        assert isinstance(before[user].error, ResourceNotFoundError)
        results = await client.upsert_scram_credentials(
            [
                ScramUpsertion(user, "SCRAM-SHA-256", password),
                ScramUpsertion(user, ScramMechanism.SCRAM_SHA_512, password, iterations=8192),
            ]
        )
        assert list(results) == [user]
        assert results[user].error is None

        async def both_described() -> Any:
            # The broker answering Describe may not have applied the metadata record yet.
            described = await client.describe_scram_credentials([user, "alice"])
            assert described[user].error is None
            assert set(described[user].credentials) == {
                ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
            }
            return described

        described = await eventually(both_described)
        # Users made at format time are listed too.
        assert {c.mechanism for c in described["alice"].credentials} == set(ScramMechanism)
        everyone = await client.describe_scram_credentials()
        assert {user, "admin", "alice", "bob"} <= set(everyone)
        assert "password" not in repr(ScramUpsertion(user, "SCRAM-SHA-256", password))
        assert password not in repr(ScramUpsertion(user, "SCRAM-SHA-256", password))

    # The new user logs in with both mechanisms, over both SASL listeners, and produces.
    await eventually(lambda: can_log_in("SCRAM-SHA-256"))
    await eventually(lambda: can_log_in("SCRAM-SHA-512", "SASL_SSL"))
    settings = sasl_settings(kafka, "SASL_SSL", "SCRAM-SHA-512", password=password)
    settings["sasl_plain_username"] = user
    await round_trip(settings, topic, b"from a user made through the admin API")

    async with admin(kafka) as client:
        deleted = await client.delete_scram_credentials(
            [ScramDeletion(user, "SCRAM-SHA-256")], raise_on_error=True
        )
        assert deleted[user].error is None
        again = await client.delete_scram_credentials([ScramDeletion(user, "SCRAM-SHA-256")])
        assert isinstance(again[user].error, ResourceNotFoundError)

        async def one_left() -> None:
            after = await client.describe_scram_credentials([user])
            assert after[user].credentials == (
                ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
            )

        await eventually(one_left)

    async def refused(mechanism: str) -> None:
        with pytest.raises(SaslAuthenticationFailedError):
            await can_log_in(mechanism)

    await eventually(lambda: refused("SCRAM-SHA-256"))
    await can_log_in("SCRAM-SHA-512")  # the other mechanism's credential is untouched
    async with admin(kafka) as client:
        await client.delete_scram_credentials(
            [ScramDeletion(user, "SCRAM-SHA-512")], raise_on_error=True
        )


async def test_scram_upsertion_is_checked_before_sending(kafka: ApacheKafka) -> None:
    async with admin(kafka) as client:
        with pytest.raises(ConfigError, match="iterations"):
            await client.upsert_scram_credentials([ScramUpsertion("x", "SCRAM-SHA-256", "p", 100)])
        with pytest.raises(ConfigError, match="SCRAM-SHA-256 or SCRAM-SHA-512"):
            await client.upsert_scram_credentials([ScramUpsertion("x", "SCRAM-SHA-1", "p")])
        with pytest.raises(ConfigError, match="password"):
            await client.upsert_scram_credentials([ScramUpsertion("x", "SCRAM-SHA-256", "")])
        assert client.statistics()["requests"].get("AlterUserScramCredentials", 0) == 0


# --------------------------------------------------------------------------------------------
# Re-authentication (KIP-368) on the REAUTH listener
# --------------------------------------------------------------------------------------------


async def test_reauth_listener_closes_a_connection_that_does_not_reauthenticate(
    kafka: ApacheKafka,
) -> None:
    """The control: the listener really ends sessions after connections.max.reauth.ms.

    A connection authenticated by a custom authenticator (which never re-authenticates)
    is closed by the broker at its first request after the session expired.
    """
    cfg = ClientConfig(**sasl_settings(kafka, "REAUTH", "SCRAM-SHA-256"))
    host, port = kafka.bootstrap("REAUTH").rsplit(":", 1)
    lifetimes: list[int] = []

    async def authenticate_once(conn: BrokerConnection) -> None:
        lifetimes.append(await sasl.authenticate_session(conn))

    async with BrokerConnection(host, int(port), cfg, authenticator=authenticate_once) as conn:
        await conn.request(METADATA, MetadataRequest(topics=[]), version=1)
        assert 0 < lifetimes[0] <= REAUTH_MS
        await anyio.sleep(REAUTH_MS / 1000 + 0.5)
        with pytest.raises(KafkaConnectionError):
            await conn.request(METADATA, MetadataRequest(topics=[]), version=1)
        assert conn.reauthentications == 0


async def test_reauthentication_shows_in_the_connection_statistics(kafka: ApacheKafka) -> None:
    """The same connection, used for 2.5 sessions, re-authenticated at least twice."""
    cfg = ClientConfig(**sasl_settings(kafka, "REAUTH", "SCRAM-SHA-512"))
    async with ClusterClient(cfg) as client:
        await client.refresh_metadata([])
        node = next(iter(client.metadata.brokers))
        first = client.statistics()["pool"]["connections"]
        end = time.monotonic() + 2.5 * REAUTH_MS / 1000
        while time.monotonic() < end:
            await client.request(node, METADATA, MetadataRequest(topics=[]), version=1)
            await anyio.sleep(0.05)
        after = client.statistics()["pool"]["connections"]
    assert after.keys() == first.keys()
    for key, stats in after.items():
        assert stats["state"] == "ready", stats.get("close_reason")
        if stats["requests_sent"] > first[key]["requests_sent"] + 10:  # the one in use
            assert stats["reauthentications"] >= 2, stats
            break
    else:
        raise AssertionError(f"no connection carried the requests: {after}")


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("anyio_backend", "mechanism"),
    [
        ("asyncio", "SCRAM-SHA-256"),
        ("trio", "SCRAM-SHA-512"),
        ("asyncio", "PLAIN"),
        ("asyncio", "OAUTHBEARER"),
    ],
)
async def test_producer_and_consumer_keep_working_across_reauthentications(
    kafka: ApacheKafka,
    new_topic: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    mechanism: str,
) -> None:
    """A producer and a consumer run for 2.5 sessions of 3 s on the REAUTH listener: every
    record arrives, every connection re-authenticates in place, none is closed or reopened."""
    topic = new_topic()
    settings = sasl_settings(kafka, "REAUTH", mechanism)
    run_for = 2.5 * REAUTH_MS / 1000
    sent: list[bytes] = []
    got: list[bytes] = []
    caplog.set_level(logging.DEBUG, logger="kafka_async.net")
    consumer: Consumer[bytes, bytes]
    async with (
        Producer(**settings, linger_ms=5) as producer,
        Consumer(**settings, auto_offset_reset="earliest", fetch_max_wait_ms=200) as consumer,
    ):
        consumer.assign([TopicPartition(topic, 0)])
        started = len(caplog.records)

        async def produce() -> None:
            end = time.monotonic() + run_for
            i = 0
            while time.monotonic() < end:
                value = f"r{i}".encode()
                await producer.send(topic, value=value)
                sent.append(value)
                i += 1
                await anyio.sleep(0.1)

        finished = anyio.Event()

        async def consume() -> None:
            while not (finished.is_set() and len(got) >= len(sent)):
                batch = await consumer.getmany(timeout_ms=300)
                for records in batch.values():
                    got.extend(r.value for r in records if r.value is not None)

        with anyio.fail_after(run_for + 30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(consume)
                await produce()
                finished.set()
        during = caplog.records[started:]
    assert got == sent
    assert len(sent) >= 20
    messages = [r.getMessage() for r in during if r.name == "kafka_async.net.connection"]
    reauths = [m for m in messages if "re-authenticated" in m]
    closed = [m for m in messages if m.startswith("closing ")]
    # Each client holds at least one connection to the broker for the whole run: >= 2
    # re-authentications each (the session is 3 s, renewed at 85-95% of it).
    assert len(reauths) >= 4, messages
    assert not closed, closed
    if mechanism == "OAUTHBEARER":
        # A fresh token at every re-authentication.
        assert settings["sasl_oauth_token_provider"].calls >= 1 + len(reauths)


# --------------------------------------------------------------------------------------------
# TLS: client certificate requested (SSL) and required (MTLS)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("client_cert", [False, True], ids=["no-client-cert", "client-cert"])
async def test_tls_with_a_requested_client_certificate(
    kafka: ApacheKafka, new_topic: Callable[..., str], client_cert: bool
) -> None:
    topic = new_topic()
    await round_trip(tls_settings(kafka, "SSL", client_cert=client_cert), topic, b"over TLS")


async def test_client_certificate_is_the_principal(
    kafka: ApacheKafka, new_topic: Callable[..., str]
) -> None:
    """With a certificate the broker knows the client by its subject; without one it is
    ``User:ANONYMOUS``. A DENY ACL for the certificate's principal shows which one it saw."""
    assert kafka.tls is not None
    topic = new_topic()
    principal = f"User:{kafka.tls.client_principal}"
    await create_acls(kafka, [topic_acl(topic, principal, AclOperation.WRITE, deny=True)])
    try:
        with_cert = tls_settings(kafka, "SSL", client_cert=True)

        async def denied() -> None:
            async with Producer(**with_cert) as producer:
                with pytest.raises(TopicAuthorizationFailedError):
                    await producer.send(topic, value=b"denied")

        await eventually(denied)
        # Anonymous (no certificate) is a super user: the same topic takes its record.
        async with Producer(**tls_settings(kafka, "SSL", client_cert=False)) as producer:
            await producer.send(topic, value=b"anonymous")
    finally:
        await delete_acls_of(kafka, principal)


async def test_mutual_tls_with_the_required_client_certificate(
    kafka: ApacheKafka, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    await round_trip(tls_settings(kafka, "MTLS", client_cert=True), topic, b"over mutual TLS")


async def test_mutual_tls_without_a_client_certificate_is_a_typed_tls_error(
    kafka: ApacheKafka,
) -> None:
    cfg = ClientConfig(**tls_settings(kafka, "MTLS", client_cert=False))
    with prompt(), pytest.raises(TLSHandshakeError) as info:
        async with ClusterClient(cfg):
            pass
    assert kafka.bootstrap("MTLS") in str(info.value)
    assert not info.value.retriable


async def test_tls_with_the_wrong_ca_is_a_typed_tls_error(
    kafka: ApacheKafka, tmp_path: Any
) -> None:
    trustme = pytest.importorskip("trustme")
    other = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other))
    settings = tls_settings(kafka, "SSL", client_cert=False)
    settings["ssl_cafile"] = str(other)
    with prompt(), pytest.raises(TLSHandshakeError, match="not signed by a trusted CA"):
        async with ClusterClient(ClientConfig(**settings)):
            pass


# --------------------------------------------------------------------------------------------
# ACLs: typed authorization errors, at once
# --------------------------------------------------------------------------------------------


def as_user(kafka: ApacheKafka, user: str, **extra: Any) -> dict[str, Any]:
    return sasl_settings(kafka, "SASL_PLAINTEXT", "SCRAM-SHA-256", user, **extra)


async def test_acl_denied_produce_consume_and_describe_are_typed_errors(
    kafka: ApacheKafka, new_topic: Callable[..., str]
) -> None:
    """A topic with ACLs for bob only: alice is refused, bob is served."""
    topic = new_topic()
    await create_acls(
        kafka,
        [
            topic_acl(topic, "User:bob", op)
            for op in (AclOperation.WRITE, AclOperation.READ, AclOperation.DESCRIBE)
        ],
    )
    try:
        alice, bob = as_user(kafka, "alice"), as_user(kafka, "bob")

        async def alice_cannot_produce() -> None:
            async with Producer(**alice) as producer:
                with prompt(), pytest.raises(TopicAuthorizationFailedError):
                    await producer.send(topic, value=b"from alice")

        await eventually(alice_cannot_produce)
        await round_trip(bob, topic, b"from bob")

        async with AdminClient(**alice) as client:
            described = await client.describe_topics([topic])
            assert isinstance(described[topic].error, TopicAuthorizationFailedError)
        async with AdminClient(**bob) as client:
            described = await client.describe_topics([topic])
            assert described[topic].error is None

        tp = TopicPartition(topic, 0)
        consumer: Consumer[bytes, bytes]
        # Without a position (the reset's ListOffsets needs the leader), and from an offset
        # given by seek (the fetch needs the leader): metadata refuses the topic either way.
        async with Consumer(**alice, auto_offset_reset="earliest") as consumer:
            consumer.assign([tp])
            with prompt(), pytest.raises(TopicAuthorizationFailedError):
                await consumer.getmany(timeout_ms=3000)
        async with Consumer(**alice) as consumer:
            consumer.assign([tp])
            consumer.seek(tp, 0)
            with prompt(), pytest.raises(TopicAuthorizationFailedError):
                await consumer.getmany(timeout_ms=3000)
            # Still refused on the next call, not an empty answer.
            with prompt(), pytest.raises(TopicAuthorizationFailedError):
                await consumer.getmany(timeout_ms=3000)
            # Once alice may read, the same consumer gets bob's record.
            await create_acls(
                kafka,
                [
                    topic_acl(topic, "User:alice", op)
                    for op in (AclOperation.READ, AclOperation.DESCRIBE)
                ],
            )
            got: list[bytes | None] = []
            with anyio.fail_after(30):
                while not got:
                    try:
                        batch = await consumer.getmany(timeout_ms=500)
                    except TopicAuthorizationFailedError:
                        continue  # the grant has not reached metadata yet
                    got = [r.value for rs in batch.values() for r in rs]
            assert got == [b"from bob"]

    finally:
        await delete_acls_of(kafka, "User:bob")
        await delete_acls_of(kafka, "User:alice")


@pytest.mark.parametrize("group_protocol", ["classic", "consumer"])
async def test_acl_denied_group_is_a_typed_error(
    kafka: ApacheKafka,
    new_topic: Callable[..., str],
    group_protocol: Literal["classic", "consumer"],
) -> None:
    """alice may read the topic (no ACLs on it) but the group has ACLs for bob only. The
    refusal comes from FindCoordinator: a member of either group protocol fails with it at
    once (the KIP-848 member used to look the coordinator up again forever), and on every
    later call, as the Java client throws on every poll (a classic member used to raise it
    once and then answer empty). A classic member tries again on each poll, so once alice
    may read the group the same consumer joins it and reads."""
    topic = new_topic()
    group = f"g-{uuid.uuid4().hex[:8]}"
    await create_acls(
        kafka,
        [
            AclBinding(
                ResourcePattern(ResourceType.GROUP, group), "User:bob", operation=AclOperation.READ
            )
        ],
    )
    try:
        consumer: Consumer[bytes, bytes]
        async with Consumer(**as_user(kafka, "alice"), group_id=group) as consumer:
            with prompt(), pytest.raises(GroupAuthorizationFailedError):
                await consumer.committed(TopicPartition(topic, 0))
        async with Consumer(
            topic,
            **as_user(kafka, "alice"),
            group_id=group,
            group_protocol=group_protocol,
            auto_offset_reset="earliest",
        ) as consumer:
            with prompt(), pytest.raises(GroupAuthorizationFailedError):
                await consumer.getmany(timeout_ms=3000)
            # Still refused on every later call, not an empty answer.
            for _ in range(3):
                with prompt(), pytest.raises(GroupAuthorizationFailedError):
                    await consumer.getmany(timeout_ms=3000)
                await anyio.sleep(0.2)  # past retry_backoff_ms: the classic member retried
            if group_protocol == "classic":
                async with Producer(bootstrap_servers=kafka.bootstrap_servers) as producer:
                    await producer.send(topic, value=b"for alice", partition=0)
                await create_acls(
                    kafka,
                    [
                        AclBinding(
                            ResourcePattern(ResourceType.GROUP, group),
                            "User:alice",
                            operation=AclOperation.READ,
                        )
                    ],
                )
                got: list[bytes | None] = []
                with anyio.fail_after(30):
                    while not got:
                        try:
                            batch = await consumer.getmany(timeout_ms=500)
                        except GroupAuthorizationFailedError:
                            await anyio.sleep(0.2)  # the grant has not reached the broker
                            continue
                        got = [r.value for rs in batch.values() for r in rs]
                assert got == [b"for alice"]
                # In the group now: nothing raised any more, and commits land.
                assert await consumer.getmany(timeout_ms=200) == {}
                await consumer.commit()
                assert await consumer.committed(TopicPartition(topic, 0)) == 1
    finally:
        await delete_acls_of(kafka, "User:bob")
        await delete_acls_of(kafka, "User:alice")


async def test_acl_denied_cluster_operations_are_typed_errors(kafka: ApacheKafka) -> None:
    """alice denied DESCRIBE and ALTER on the cluster: ACL calls are refused."""
    cluster = ResourcePattern(ResourceType.CLUSTER, "kafka-cluster")
    await create_acls(
        kafka,
        [
            AclBinding(cluster, "User:alice", operation=op, permission_type=AclPermissionType.DENY)
            for op in (AclOperation.DESCRIBE, AclOperation.ALTER)
        ],
    )
    try:
        async with AdminClient(**as_user(kafka, "alice")) as client:

            async def describe_refused() -> None:
                with prompt(), pytest.raises(ClusterAuthorizationFailedError):
                    await client.describe_acls()

            await eventually(describe_refused)
            acl = topic_acl("any-topic", "User:bob", AclOperation.READ)
            with prompt():
                created = await client.create_acls([acl])
            assert isinstance(created[acl].error, ClusterAuthorizationFailedError)
            with prompt(), pytest.raises(ClusterAuthorizationFailedError):
                await client.describe_scram_credentials(["alice"])
            # The DENY ACLs are on the cluster only: cluster and topic metadata are served.
            assert (await client.describe_cluster()).brokers
            assert isinstance(await client.list_topics(), Mapping)
    finally:
        await delete_acls_of(kafka, "User:alice")
