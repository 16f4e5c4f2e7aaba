"""OAUTHBEARER with OIDC (KIP-768 client credentials, KIP-1139 JWT bearer) against real servers.

One identity provider of ours (tests/harness/idp.py: JWKS and token endpoints on 127.0.0.1,
RS256 tokens) and one Apache Kafka broker for the module, whose ``OIDC`` listener validates
tokens with Kafka's own ``OAuthBearerValidatorCallbackHandler`` against the IdP's JWKS
(expected audience and issuer checked, JWKS refreshed every second; the handler's class is
the one the release's jars hold, and a release with none, such as Kafka 2.8 from before
KIP-768, skips the broker tests saying so). The client logs in with
``sasl_oauthbearer_method="oidc"``: no token provider of the application's.

The control is the Java client's own OIDC login (``OAuthBearerLoginCallbackHandler``) with
the same IdP and broker: its VerifiableProducer writes records our OIDC consumer reads.
"""

from __future__ import annotations

import pickle
import ssl
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from security_helpers import class_mentions, first_class_present

pytest.importorskip("cryptography")

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kafka_async.cluster.client import ClusterClient
from kafka_async.consumer import Consumer
from kafka_async.errors import (
    ConfigError,
    SaslAuthenticationFailedError,
)
from kafka_async.net import oidc
from kafka_async.net.config import ClientConfig
from kafka_async.net.oidc import (
    JWT_BEARER,
    ClientCredentialsTokenProvider,
    JwtBearerTokenProvider,
    TokenEndpointError,
)
from kafka_async.producer import Producer
from kafka_async.protocol.apis import METADATA
from kafka_async.protocol.apis.metadata import MetadataRequest
from kafka_async.structs import TopicPartition
from kafka_async.testing.apache import ApacheKafka, KafkaPrerequisiteError, ensure_distribution
from kafka_async.testing.plugin import skip_or_fail
from kafka_async.testing.topics import create_topic
from tests.harness.idp import IdentityProvider, decode_jwt, sign_jwt
from tests.harness.java_peers import VerifiableProducer
from tests.harness.soak import record_result

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

CLIENT_ID = "orders-service"
SECRET = "s3cret-Value-that-must-not-leak"
AUDIENCE = "kafka-cluster"
ASSERTION_ISSUER = "svc-with-a-key"
#: How long a refusal may take: it must come at once, not after retries until a deadline.
PROMPT = 10.0


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


class Env:
    """The module's IdP and broker, and the RSA key registered for the jwt-bearer grant."""

    def __init__(self, idp: IdentityProvider, kafka: ApacheKafka, key_file: Path) -> None:
        self.idp = idp
        self.kafka = kafka
        self.key_file = key_file

    def settings(self, **extra: Any) -> dict[str, Any]:
        settings: dict[str, Any] = {
            "bootstrap_servers": self.kafka.bootstrap("OIDC"),
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "OAUTHBEARER",
            "sasl_oauthbearer_method": "oidc",
            "sasl_oauthbearer_token_endpoint_url": self.idp.token_url,
            "sasl_oauthbearer_client_id": CLIENT_ID,
            "sasl_oauthbearer_client_secret": SECRET,
            # Clients on one event loop with the same OIDC settings share one token; a
            # scope of its own keeps each call's token (and the IdP's answer) apart.
            "sasl_oauthbearer_scope": f"kafka-{uuid.uuid4().hex[:8]}",
            "request_timeout_ms": 15_000,
        }
        settings.update(extra)
        return settings

    def topic(self) -> str:
        name = f"oidc-{uuid.uuid4().hex[:10]}"
        create_topic(self.kafka.bootstrap_servers, name, 1)
        return name


#: The broker's OIDC validator and the Java client's OIDC login handler (KIP-768, Kafka 3.1):
#: first in ``...oauthbearer.secured``, then (3.x keeps both, 4.x only this) in
#: ``...oauthbearer``. The first one the release's jars hold is used.
VALIDATOR_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler",
)
LOGIN_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
)
#: The validator that checks signatures (KIP-1139's pluggable validators, Kafka 4.1).
BROKER_JWT_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.BrokerJwtValidator"


@pytest.fixture(scope="module")
def assertion_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[rsa.RSAPrivateKey, Path]:
    """The RSA key registered with the IdP for the jwt-bearer grant, and its PEM file."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_file = tmp_path_factory.mktemp("oidc") / "assertion-key.pem"
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return key, key_file


@pytest.fixture(scope="module")
def idp(assertion_key: tuple[rsa.RSAPrivateKey, Path]) -> Iterator[IdentityProvider]:
    with IdentityProvider(audience=AUDIENCE) as idp:
        idp.add_client(CLIENT_ID, SECRET)
        idp.add_assertion_key(ASSERTION_ISSUER, assertion_key[0].public_key())
        yield idp


@pytest.fixture(scope="module")
def env(idp: IdentityProvider, assertion_key: tuple[rsa.RSAPrivateKey, Path]) -> Iterator[Env]:
    config = {
        "listener.name.oidc.sasl.enabled.mechanisms": "OAUTHBEARER",
        "listener.name.oidc.oauthbearer.sasl.jaas.config": (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;"
        ),
        "sasl.oauthbearer.jwks.endpoint.url": idp.jwks_url,
        "sasl.oauthbearer.jwks.endpoint.refresh.ms": "1000",
        "sasl.oauthbearer.expected.audience": AUDIENCE,
        "sasl.oauthbearer.expected.issuer": idp.issuer,
        # Sessions end with the token (KIP-368): a token's lifetime bounds them.
        "connections.max.reauth.ms": "600000",
    }
    kafka = ApacheKafka(
        heap="384m",
        extra_listeners={"OIDC": "SASL_PLAINTEXT"},
        # Kafka 4 fetches only the URLs listed here (KIP-1103).
        jvm_options=[
            f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={idp.jwks_url},{idp.token_url}"
        ],
        broker_config=config,
    )
    try:
        kafka.distribution = ensure_distribution(kafka.version, cache_dir=kafka.cache_dir)
    except KafkaPrerequisiteError as exc:
        skip_or_fail(f"Apache Kafka cannot run here: {exc}")
    libs = kafka.distribution.libs
    handler = first_class_present(libs, *VALIDATOR_HANDLERS)
    if handler is None:
        jars = len(list(libs.glob("*.jar")))
        pytest.skip(
            f"no OIDC validator in Apache Kafka {kafka.version}'s {jars} jars ({libs}): "
            f"neither {' nor '.join(VALIDATOR_HANDLERS)} is there"
        )
    kafka.broker_config["listener.name.oidc.oauthbearer.sasl.server.callback.handler.class"] = (
        handler
    )
    if first_class_present(libs, BROKER_JWT_VALIDATOR):
        # Set explicitly: on Kafka 4.1.1 with the default validator class
        # (DefaultJwtValidator) this handler accepted a token signed by an unknown key for
        # another audience (seen while writing these tests; a broker gap, so no test asserts
        # it). test_the_broker_really_checks_signatures shows this one checks. Releases
        # without the class (before 4.1) have no validator setting: their handler checks.
        kafka.broker_config["listener.name.oidc.sasl.oauthbearer.jwt.validator.class"] = (
            BROKER_JWT_VALIDATOR
        )
    try:
        kafka.start()
    except KafkaPrerequisiteError as exc:
        skip_or_fail(f"Apache Kafka cannot run here: {exc}")
    try:
        yield Env(idp, kafka, assertion_key[1])
    finally:
        kafka.stop()


async def produce_and_consume(settings: dict[str, Any], topic: str, count: int = 5) -> None:
    values = [f"v{i}".encode() for i in range(count)]
    consumer: Consumer[bytes, bytes]
    async with (
        Producer(**settings) as producer,
        Consumer(**settings, auto_offset_reset="earliest", fetch_max_wait_ms=200) as consumer,
    ):
        for value in values:
            await producer.send(topic, value=value)
        consumer.assign([TopicPartition(topic, 0)])
        got: list[bytes] = []
        with anyio.fail_after(30):
            while len(got) < count:
                for records in (await consumer.getmany(timeout_ms=300)).values():
                    got.extend(r.value for r in records if r.value is not None)
    assert got == values


# --------------------------------------------------------------------------------------------
# Logins
# --------------------------------------------------------------------------------------------


async def test_client_credentials_login_produces_and_consumes(env: Env) -> None:
    """One token for every connection of both clients: the provider is shared."""
    topic = env.topic()
    before = env.idp.requests["/token"]
    await produce_and_consume(env.settings(), topic)
    assert env.idp.requests["/token"] - before == 1
    authorization, form = env.idp.token_requests[-1]
    assert form == {"grant_type": "client_credentials", "scope": env.idp.issued[-1]["scope"]}
    assert authorization is not None
    assert authorization.startswith("Basic ")


async def test_jwt_bearer_login(env: Env) -> None:
    """KIP-1139: an RS256 assertion signed with the key file, traded for a token."""
    topic = env.topic()
    settings = env.settings(
        sasl_oauthbearer_grant_type=JWT_BEARER,
        sasl_oauthbearer_client_id=None,
        sasl_oauthbearer_client_secret=None,
        sasl_oauthbearer_assertion_private_key_file=str(env.key_file),
        sasl_oauthbearer_assertion_claim_iss=ASSERTION_ISSUER,
        sasl_oauthbearer_assertion_claim_sub="batch-job",
        sasl_oauthbearer_assertion_claim_aud=env.idp.token_url,
        sasl_oauthbearer_assertion_claim_jti_include=True,
    )
    await produce_and_consume(settings, topic, count=2)
    authorization, form = env.idp.token_requests[-1]
    assert authorization is None
    assert form["grant_type"] == JWT_BEARER
    header, claims = decode_jwt(form["assertion"])
    assert header == {"alg": "RS256", "typ": "JWT"}
    assert claims["sub"] == "batch-job"
    assert claims["aud"] == env.idp.token_url
    assert claims["nbf"] == claims["iat"] - 60
    assert claims["exp"] == claims["iat"] + 300
    assert env.idp.issued[-1]["sub"] == "batch-job"


async def test_jwt_bearer_with_an_es256_key_and_an_assertion_file(env: Env, tmp_path: Path) -> None:
    """ES256 signing (r||s, not DER), and a ready-made assertion read from a file."""
    key = ec.generate_private_key(ec.SECP256R1())
    env.idp.add_assertion_key("svc-es256", key.public_key())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pass phrase"),
    ).decode()
    signer = JwtBearerTokenProvider(
        env.idp.token_url,
        private_key_pem=pem,
        private_key_passphrase="pass phrase",
        algorithm="ES256",
        claim_iss="svc-es256",
        claim_sub="es-client",
        claim_aud=env.idp.token_url,
    )
    assertion_file = tmp_path / "assertion.jwt"
    assertion_file.write_text(await anyio.to_thread.run_sync(signer.assertion) + "\n")
    settings = env.settings(
        sasl_oauthbearer_grant_type=JWT_BEARER,
        sasl_oauthbearer_client_id=None,
        sasl_oauthbearer_client_secret=None,
        sasl_oauthbearer_assertion_file=str(assertion_file),
    )
    async with ClusterClient(ClientConfig(**settings)) as client:
        await client.refresh_metadata([])
    assert env.idp.issued[-1]["sub"] == "es-client"
    assert "pass phrase" not in repr(signer)
    assert "PRIVATE" not in repr(signer)


# --------------------------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------------------------


async def test_wrong_client_secret_names_the_endpoints_answer(env: Env) -> None:
    settings = env.settings(sasl_oauthbearer_client_secret="not-the-secret")
    start = time.monotonic()
    with pytest.raises(TokenEndpointError) as info:
        async with Producer(**settings):
            pass
    assert time.monotonic() - start < PROMPT, "a 401 is not retried"
    error = info.value
    assert isinstance(error, SaslAuthenticationFailedError)
    assert (error.status, error.error) == (401, "invalid_client")
    assert error.error_description == "Client authentication failed"
    assert "invalid_client (Client authentication failed)" in str(error)
    assert env.idp.token_url in str(error)
    assert "not-the-secret" not in str(error)
    assert "not-the-secret" not in repr(error)
    # The error survives pickling (multiprocessing workers report it) with its fields.
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.status, copy.error, str(copy)) == (401, "invalid_client", str(error))


async def test_wrong_audience_is_refused_by_the_broker(env: Env) -> None:
    env.idp.audience = "some-other-service"
    try:
        with pytest.raises(SaslAuthenticationFailedError) as info:
            async with ClusterClient(ClientConfig(**env.settings())) as client:
                await client.refresh_metadata([])
    finally:
        env.idp.audience = AUDIENCE
    assert not isinstance(info.value, TokenEndpointError)  # the IdP gave a token
    message = str(info.value)
    assert "OAUTHBEARER" in message
    assert "invalid_token" in message, message
    assert SECRET not in message


async def test_the_broker_really_checks_signatures(env: Env) -> None:
    """The listener's control: a token with the right claims and the current kid, signed by
    a key that is not in the JWKS, is refused; so the logins here passed a real signature
    check. (With Kafka 4.1.1's default validator class this token is accepted.)"""
    genuine = decode_jwt(env.idp.issue(CLIENT_ID))[1]
    impostor = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = sign_jwt(impostor, genuine, env.idp.kid)

    with pytest.raises(SaslAuthenticationFailedError, match="invalid_token"):
        async with ClusterClient(ClientConfig(**static_token_settings(env, forged))) as client:
            await client.refresh_metadata([])
    async with ClusterClient(
        ClientConfig(**static_token_settings(env, env.idp.issue(CLIENT_ID)))
    ) as client:
        await client.refresh_metadata([])


class StaticToken:
    """A token provider handing over one token as it is."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def token(self) -> str:
        return self._token


def static_token_settings(env: Env, token: str) -> dict[str, Any]:
    return {
        "bootstrap_servers": env.kafka.bootstrap("OIDC"),
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "OAUTHBEARER",
        "sasl_oauth_token_provider": StaticToken(token),
        "request_timeout_ms": 15_000,
    }


async def test_expired_token_is_refused(env: Env) -> None:
    """An IdP whose clock is two hours behind issues tokens (of an hour) that expired long
    ago while its expires_in still says an hour. The broker refuses such a token; our OIDC
    login refuses it before that, at once, naming the cause."""
    env.idp.clock_offset = -7200
    try:
        expired = env.idp.issue(CLIENT_ID)
        start = time.monotonic()
        with pytest.raises(TokenEndpointError, match=r"expired \d+ s ago") as info:
            async with ClusterClient(ClientConfig(**env.settings())) as client:
                await client.refresh_metadata([])
        assert time.monotonic() - start < PROMPT
    finally:
        env.idp.clock_offset = 0
    assert "clocks" in str(info.value)
    assert env.idp.issued[-1]["exp"] < time.time() - 3000

    # The broker's side, with the expired token handed over as it is.
    with pytest.raises(SaslAuthenticationFailedError, match="invalid_token"):
        async with ClusterClient(ClientConfig(**static_token_settings(env, expired))) as client:
            await client.refresh_metadata([])


# --------------------------------------------------------------------------------------------
# Key rotation and re-authentication
# --------------------------------------------------------------------------------------------


async def test_tokens_signed_with_a_rotated_key_are_accepted(env: Env) -> None:
    """The IdP rotates its signing key (new kid, old key dropped from the JWKS): a new token,
    signed with the new key, is accepted once the broker has the new key (on its 1 s
    refresh or on the unknown kid); a token signed with the dropped key is then refused."""
    async with ClusterClient(ClientConfig(**env.settings())) as client:
        await client.refresh_metadata([])
    old_token = env.idp.issue(CLIENT_ID)
    old_kid = env.idp.kid
    jwks_fetches = env.idp.requests["/jwks"]
    new_kid = env.idp.rotate()
    assert new_kid != old_kid
    with anyio.fail_after(30):
        while True:
            try:
                async with ClusterClient(ClientConfig(**env.settings())) as client:
                    await client.refresh_metadata([])
                break
            except SaslAuthenticationFailedError:
                await anyio.sleep(0.5)
    assert decode_jwt(env.idp.issue(CLIENT_ID))[0]["kid"] == new_kid
    assert [k["kid"] for k in env.idp.jwks()["keys"]] == [new_kid]
    assert env.idp.requests["/jwks"] > jwks_fetches
    # The old key is gone from the broker's set too (within its 1 s refresh).
    refusal: SaslAuthenticationFailedError | None = None
    with anyio.fail_after(30):
        while refusal is None:
            try:
                async with ClusterClient(
                    ClientConfig(**static_token_settings(env, old_token))
                ) as client:
                    await client.refresh_metadata([])
            except SaslAuthenticationFailedError as exc:
                refusal = exc
            else:
                await anyio.sleep(0.5)
    assert "invalid_token" in str(refusal)


async def test_connection_reauthenticates_with_a_fresh_token(env: Env) -> None:
    """Tokens of 4 s: the broker ends each session with its token (KIP-368), and the same
    connection authenticates again with a new token before that."""
    env.idp.lifetime = 4
    try:
        settings = env.settings()
        async with ClusterClient(ClientConfig(**settings)) as client:
            await client.refresh_metadata([])
            node = next(iter(client.metadata.brokers))
            first = env.idp.requests["/token"]
            end = time.monotonic() + 9
            while time.monotonic() < end:
                await client.request(node, METADATA, MetadataRequest(topics=[]), version=1)
                await anyio.sleep(0.1)
            stats = client.statistics()["pool"]["connections"]
    finally:
        env.idp.lifetime = 3600
    used = [s for s in stats.values() if s["requests_sent"] > 50]
    assert used, stats
    assert all(s["state"] == "ready" for s in used), stats
    assert max(s["reauthentications"] for s in used) >= 2, stats
    # Each re-authentication came with a token fetched for it.
    assert env.idp.requests["/token"] - first >= 2


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_soak_a_minute_of_short_tokens(env: Env) -> None:
    """``make soak``: a producer and a consumer with 5 s tokens for a minute: each
    connection re-authenticates about fifteen times, each time with a token fetched for it
    (one provider for both clients); nothing lost or duplicated."""
    env.idp.lifetime = 5
    try:
        settings = env.settings()
        topic = env.topic()
        first = env.idp.requests["/token"]
        run_for = 60.0
        sent: list[bytes] = []
        got: list[bytes] = []
        consumer: Consumer[bytes, bytes]
        async with (
            Producer(**settings, linger_ms=5) as producer,
            Consumer(**settings, auto_offset_reset="earliest", fetch_max_wait_ms=200) as consumer,
        ):
            consumer.assign([TopicPartition(topic, 0)])
            produced = anyio.Event()

            async def produce() -> None:
                end = time.monotonic() + run_for
                while time.monotonic() < end:
                    value = f"s{len(sent)}".encode()
                    await producer.send(topic, value=value)
                    sent.append(value)
                    await anyio.sleep(0.05)
                produced.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(produce)
                with anyio.fail_after(run_for + 60):
                    while not produced.is_set() or len(got) < len(sent):
                        for records in (await consumer.getmany(timeout_ms=300)).values():
                            got.extend(r.value for r in records if r.value is not None)
    finally:
        env.idp.lifetime = 3600
    tokens = env.idp.requests["/token"] - first
    record_result(
        "oidc: 5 s tokens, re-authentication with fresh tokens (60 s)",
        records=len(sent),
        lost=len(set(sent) - set(got)),
        duplicated=len(got) - len(set(got)),
        ok=got == sent and tokens >= 10,
        evidence=f"{tokens} tokens from the IdP",
    )
    assert got == sent
    assert tokens >= 10


# --------------------------------------------------------------------------------------------
# The control: the Java client's own OIDC login
# --------------------------------------------------------------------------------------------


async def test_java_client_oidc_login_writes_what_our_oidc_consumer_reads(env: Env) -> None:
    assert env.kafka.distribution is not None
    login_handler = first_class_present(env.kafka.distribution.libs, *LOGIN_HANDLERS)
    assert login_handler is not None, "a release with the OIDC validator has the login handler"
    topic = env.topic()
    before = env.idp.requests["/token"]
    config = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.login.callback.handler.class": login_handler,
        "sasl.jaas.config": (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;"
        ),
        "sasl.oauthbearer.token.endpoint.url": env.idp.token_url,
        "sasl.oauthbearer.client.credentials.client.id": CLIENT_ID,
        "sasl.oauthbearer.client.credentials.client.secret": SECRET,
    }
    if not class_mentions(
        env.kafka.distribution.libs,
        "org.apache.kafka.common.config.SaslConfigs",
        "sasl.oauthbearer.client.credentials.client.id",
    ):
        # A client without these settings (KIP-1139, Kafka 4.1) takes the client id and
        # secret as options of the login module (KIP-768); 3.6.2's Java client refused the
        # settings above with 'The OAuth configuration option clientId value must be non-null'.
        del config["sasl.oauthbearer.client.credentials.client.id"]
        del config["sasl.oauthbearer.client.credentials.client.secret"]
        config["sasl.jaas.config"] = (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            f'clientId="{CLIENT_ID}" clientSecret="{SECRET}" ;'
        )
    vp = VerifiableProducer(
        env.kafka.distribution,
        env.kafka.bootstrap("OIDC"),
        topic,
        max_messages=20,
        name="vp-oidc",
        config=config,
    )
    # The Java client fetches only allowed URLs too (the property is read by the JVM).
    vp.argv.insert(1, f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={env.idp.token_url}")
    vp.start()
    try:
        assert await vp.wait_exit(90) == 0, vp.lines[-20:]
    finally:
        vp.close()
    assert vp.acked == 20, vp.summary()
    java_token_requests = env.idp.requests["/token"] - before
    assert java_token_requests >= 1

    settings = env.settings()
    consumer: Consumer[bytes, bytes]
    got: list[str] = []
    async with Consumer(**settings, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        with anyio.fail_after(30):
            while len(got) < 20:
                for records in (await consumer.getmany(timeout_ms=300)).values():
                    got.extend(r.value.decode() for r in records if r.value is not None)
    assert got == [f"{vp.prefix}.{n}" for n in range(20)]


# --------------------------------------------------------------------------------------------
# The token endpoint: retries, settings, secrets (the IdP only, no broker)
# --------------------------------------------------------------------------------------------


async def test_token_endpoint_5xx_is_retried_with_backoff(idp: IdentityProvider) -> None:
    provider = ClientCredentialsTokenProvider(
        idp.token_url, CLIENT_ID, SECRET, retry_backoff=0.05, retry_backoff_max=5
    )
    idp.fail_next(2, status=503)
    token = await provider.token()
    assert decode_jwt(token)[1]["sub"] == CLIENT_ID
    assert provider.requests == 3
    # Past the retry deadline the last failure is raised, typed.
    idp.fail_next(100, status=500)
    try:
        quick = ClientCredentialsTokenProvider(
            idp.token_url, CLIENT_ID, SECRET, retry_backoff=0.05, retry_backoff_max=0.3
        )
        with pytest.raises(TokenEndpointError) as info:
            await quick.token()
    finally:
        idp._failures.clear()
    assert info.value.status == 500
    assert info.value.error == "temporarily_unavailable"
    assert quick.requests >= 3


async def test_unreachable_token_endpoint_is_a_typed_error() -> None:
    provider = ClientCredentialsTokenProvider(
        "http://127.0.0.1:1/token", CLIENT_ID, SECRET, retry_backoff=0.05, retry_backoff_max=0.3
    )
    with pytest.raises(TokenEndpointError, match="no answer from the token endpoint") as info:
        await provider.token()
    assert info.value.status is None
    assert SECRET not in str(info.value)


async def test_slow_token_endpoint_read_timeout_and_cancellation() -> None:
    """A token endpoint that does not answer: the read timeout ends each attempt (typed
    error once the retry time is up), and cancelling a fetch returns at once instead of
    waiting out the HTTP timeouts in the worker thread."""
    with IdentityProvider() as idp:
        idp.add_client(CLIENT_ID, SECRET)
        idp.delay = 3.0
        timing_out = ClientCredentialsTokenProvider(
            idp.token_url, CLIENT_ID, SECRET, read_timeout=0.3, retry_backoff_max=0
        )
        with pytest.raises(TokenEndpointError, match="timed out") as info:
            await timing_out.token()
        assert info.value.status is None
        patient = ClientCredentialsTokenProvider(idp.token_url, CLIENT_ID, SECRET)
        start = time.monotonic()
        with anyio.move_on_after(0.3) as scope:
            await patient.token()
        assert scope.cancelled_caught
        assert time.monotonic() - start < 2.0


async def test_https_endpoint_verified_with_https_ca_location(tmp_path: Path) -> None:
    """An https:// token endpoint: trusted through https_ca_location; without it (the
    system's CAs) the certificate is refused at once, typed, not retried."""
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1").configure_cert(server)
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    with IdentityProvider(tls=server) as idp:
        idp.add_client(CLIENT_ID, SECRET)
        assert idp.token_url.startswith("https://127.0.0.1:")
        trusted = ClientCredentialsTokenProvider(
            idp.token_url, CLIENT_ID, SECRET, ca_file=str(ca_file)
        )
        assert decode_jwt(await trusted.token())[1]["sub"] == CLIENT_ID
        untrusted = ClientCredentialsTokenProvider(idp.token_url, CLIENT_ID, SECRET)
        start = time.monotonic()
        with pytest.raises(TokenEndpointError, match="https_ca_location"):
            await untrusted.token()
        assert time.monotonic() - start < PROMPT
        assert untrusted.requests == 1


async def test_header_urlencode_for_secrets_with_special_characters() -> None:
    """RFC 6749 2.3.1: id and secret form-urlencoded inside the Basic header, for an IdP
    that decodes them; without sasl_oauthbearer_header_urlencode such a secret is refused."""
    secret = "p@ss:w%rd+&=/"
    with IdentityProvider(basic_urlencoded=True) as idp:
        idp.add_client("app id", secret)
        encoded = ClientCredentialsTokenProvider(
            idp.token_url, "app id", secret, header_urlencode=True
        )
        assert decode_jwt(await encoded.token())[1]["sub"] == "app id"
        raw = ClientCredentialsTokenProvider(idp.token_url, "app id", secret)
        with pytest.raises(TokenEndpointError, match="invalid_client") as info:
            await raw.token()
        assert secret not in str(info.value)


def test_missing_settings_are_config_errors_naming_them() -> None:
    base: dict[str, Any] = {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "OAUTHBEARER",
        "sasl_oauthbearer_method": "oidc",
    }
    url = "http://127.0.0.1:1/token"
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "sasl_oauthbearer_token_endpoint_url is required"),
        ({"sasl_oauthbearer_token_endpoint_url": url}, "sasl_oauthbearer_client_id is required"),
        (
            {"sasl_oauthbearer_token_endpoint_url": url, "sasl_oauthbearer_client_id": "a"},
            "sasl_oauthbearer_client_secret is required",
        ),
        (
            {"sasl_oauthbearer_token_endpoint_url": url, "sasl_oauthbearer_grant_type": JWT_BEARER},
            "sasl_oauthbearer_assertion_private_key_file",
        ),
        (
            {
                "sasl_oauthbearer_token_endpoint_url": url,
                "sasl_oauthbearer_grant_type": JWT_BEARER,
                "sasl_oauthbearer_assertion_private_key_file": "/nonexistent/key.pem",
            },
            "is not a readable file",
        ),
        ({"sasl_oauthbearer_token_endpoint_url": "ftp://x/token"}, "http:// or https://"),
        ({"sasl_oauthbearer_extensions": "novalue"}, "sasl_oauthbearer_extensions"),
        (
            {
                "sasl_oauthbearer_token_endpoint_url": url,
                "sasl_oauthbearer_client_id": "a",
                "sasl_oauthbearer_client_secret": "b",
                "sasl_oauth_token_provider": StaticToken("t"),
            },
            "give either a token provider or sasl_oauthbearer_method='oidc'",
        ),
    ]
    for extra, expected in cases:
        with pytest.raises(ConfigError, match=expected):
            ClientConfig(**base, **extra)
    # A URL without the method: the error points at the method.
    with pytest.raises(ConfigError, match="sasl_oauthbearer_method='oidc'"):
        ClientConfig(
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="OAUTHBEARER",
            sasl_oauthbearer_token_endpoint_url=url,
        )


def test_jwt_bearer_without_cryptography_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key_file = tmp_path / "k.pem"
    key_file.write_text("not used")
    for name in [m for m in sys.modules if m.startswith("cryptography")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "cryptography", None)
    with pytest.raises(ConfigError, match=r"kafka-async-client\[oidc\]"):
        ClientConfig(
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="OAUTHBEARER",
            sasl_oauthbearer_method="oidc",
            sasl_oauthbearer_token_endpoint_url="http://127.0.0.1:1/token",
            sasl_oauthbearer_grant_type=JWT_BEARER,
            sasl_oauthbearer_assertion_private_key_file=str(key_file),
        )


def test_secrets_stay_out_of_repr_and_to_dict() -> None:
    # The extensions in librdkafka's spelling (ClientConfig's field holds the parsed pairs).
    extensions: Any = "logicalCluster=lkc-1,identityPoolId=pool-2"
    config = ClientConfig(
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="OAUTHBEARER",
        sasl_oauthbearer_method="oidc",
        sasl_oauthbearer_token_endpoint_url="https://user:pw@idp.invalid/token",
        sasl_oauthbearer_client_id=CLIENT_ID,
        sasl_oauthbearer_client_secret=SECRET,
        sasl_oauthbearer_extensions=extensions,
    )
    assert SECRET not in repr(config)
    assert config.to_dict()["sasl_oauthbearer_client_secret"] == "********"
    assert config.sasl_oauthbearer_extensions == (
        ("logicalCluster", "lkc-1"),
        ("identityPoolId", "pool-2"),
    )
    provider = oidc.provider_for(config)  # no event loop: a provider of its own
    assert isinstance(provider, ClientCredentialsTokenProvider)
    assert provider.extensions() == {"logicalCluster": "lkc-1", "identityPoolId": "pool-2"}
    text = repr(provider)
    assert SECRET not in text
    assert "pw@" not in text
    assert CLIENT_ID in text
