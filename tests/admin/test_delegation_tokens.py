"""Delegation tokens (KIP-48) against real Apache Kafka: the admin calls, the SCRAM token login
(``sasl_scram_token_auth``, Java's ``tokenauth=true``) and the command line.

The run's Apache Kafka (``ApacheKafka(security=True)``, delegation tokens enabled) is used on
its SASL_PLAINTEXT listener, where the SCRAM users alice and bob exist. The controls are the
Java side: Kafka's own ``DelegationTokenCommand`` describes the token our admin created, and
the Java producer logs in with that token (``ScramLoginModule ... tokenauth="true"``) and
writes records our consumer reads.

A token reaches the brokers' credential cache through the metadata log, shortly after the
admin call returns, and leaves it the same way after it is expired: logins are retried
(``eventually``) until they pass, or fail, within a deadline.
"""

from __future__ import annotations

import base64
import json
import time
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

from kafka_async.admin import AdminClient, DelegationToken
from kafka_async.admin import delegation_tokens as dt
from kafka_async.cluster.client import ClusterClient
from kafka_async.cluster.routing import send_request
from kafka_async.consumer import Consumer
from kafka_async.errors import (
    ConfigError,
    DelegationTokenNotFoundError,
    DelegationTokenOwnerMismatchError,
    DelegationTokenRequestNotAllowedError,
    SaslAuthenticationFailedError,
)
from kafka_async.net import sasl
from kafka_async.net.config import ClientConfig
from kafka_async.producer import Producer
from kafka_async.protocol import apis
from kafka_async.protocol.apis import METADATA
from kafka_async.protocol.apis.expire_delegation_token import ExpireDelegationTokenRequest
from kafka_async.protocol.apis.metadata import MetadataRequest
from kafka_async.protocol.apis.renew_delegation_token import RenewDelegationTokenRequest
from kafka_async.structs import TopicPartition
from kafka_async.testing.apache import REAUTH_MS, SASL_USERS, ApacheKafka
from kafka_async.testing.plugin import KafkaService
from tests.cli.test_cli_e2e import ok, one_line_error, run

pytest.importorskip("scramp")

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

T = TypeVar("T")
LISTENER = "SASL_PLAINTEXT"
_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


@pytest.fixture(scope="module")
def kafka(kafka_service: KafkaService) -> ApacheKafka:
    return kafka_service.apache


def user_settings(kafka: ApacheKafka, user: str = "alice", **extra: Any) -> dict[str, Any]:
    """Client settings for SCRAM user ``user`` on the SASL_PLAINTEXT listener."""
    settings: dict[str, Any] = {
        "bootstrap_servers": kafka.bootstrap(LISTENER),
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-256",
        "sasl_plain_username": user,
        "sasl_plain_password": SASL_USERS[user],
        "request_timeout_ms": 15_000,
    }
    settings.update(extra)
    return settings


def token_settings(
    kafka: ApacheKafka, token: DelegationToken, mechanism: str = "SCRAM-SHA-256"
) -> dict[str, Any]:
    """Client settings logging in with ``token``."""
    return user_settings(
        kafka,
        sasl_mechanism=mechanism,
        sasl_plain_username=token.token_id,
        sasl_plain_password=token.hmac_base64(),
        sasl_scram_token_auth=True,
    )


async def eventually(check: Callable[[], Awaitable[T]], *, within: float = 20.0) -> T:
    """``check()`` again until it stops raising (tokens reach the brokers through the
    metadata log), at most ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            return await check()
        except Exception:
            if time.monotonic() > deadline:
                raise
            await anyio.sleep(0.25)


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


async def describe_one(
    kafka: ApacheKafka,
    token_id: str,
    check: Callable[[DelegationToken], bool] = bool,
    owner: str = "User:alice",
) -> DelegationToken:
    """The token as alice's describe shows it, once it is there and ``check`` holds (the
    brokers learn of a token and of its renewal through the metadata log)."""
    async with AdminClient(**user_settings(kafka)) as admin:

        async def one() -> DelegationToken:
            tokens = await admin.describe_delegation_token([owner])
            (found,) = [t for t in tokens if t.token_id == token_id]
            assert check(found), found
            return found

        return await eventually(one)


# --------------------------------------------------------------------------------------------
# The SCRAM client-first message
# --------------------------------------------------------------------------------------------


def test_token_login_client_first_carries_the_tokenauth_extension() -> None:
    plain = sasl.ScramMechanism("SCRAM-SHA-256", "tok", "pw")
    token = sasl.ScramMechanism("SCRAM-SHA-256", "tok", "pw", token_auth=True)
    assert (plain.step(None) or b"").decode().count(",") == 3  # n,,n=tok,r=<nonce>
    first = (token.step(None) or b"").decode()
    assert first.startswith("n,,n=tok,r=")
    assert first.endswith(",tokenauth=true")
    # The extension is in the bare message the proof signs (RFC 5802: client-first-bare).
    assert token._client.client_first_bare == first[3:]
    assert "pw" not in repr(token)
    assert "token_auth" in repr(token)


def test_token_auth_with_a_mechanism_other_than_scram_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="sasl_scram_token_auth=True needs sasl_mechanism SCRAM"):
        ClientConfig(
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_plain_username="tok",
            sasl_plain_password="pw",
            sasl_scram_token_auth=True,
        )


# --------------------------------------------------------------------------------------------
# The life of a token
# --------------------------------------------------------------------------------------------


async def test_token_create_describe_login_renew_expire(
    kafka: ApacheKafka, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    before = int(time.time() * 1000)
    async with AdminClient(**user_settings(kafka)) as admin:
        token = await admin.create_delegation_token(
            renewers=["User:bob"], max_lifetime_ms=3_600_000
        )
    after = int(time.time() * 1000)
    assert token.owner == "User:alice"
    assert token.token_requester == "User:alice"
    assert token.renewers == ("User:bob",)
    assert before - 1000 <= token.issue_timestamp_ms <= after + 1000
    assert token.max_timestamp_ms == token.issue_timestamp_ms + 3_600_000
    # The broker's default expiry (a day) is capped at the maximum lifetime.
    assert token.expiry_timestamp_ms == token.max_timestamp_ms
    assert len(token.hmac) >= 32
    # The HMAC is the secret: never in repr.
    assert token.hmac_base64() not in repr(token)
    assert repr(token.hmac) not in repr(token)

    described = await describe_one(kafka, token.token_id)
    assert described == token

    # Log in with the token (both SCRAM mechanisms), produce and consume as its owner.
    await eventually(lambda: round_trip(token_settings(kafka, token), topic, b"token 256"))
    async with AdminClient(**token_settings(kafka, token, "SCRAM-SHA-512")) as as_token:
        assert await as_token.list_topics()
        # A connection authenticated with a token may not ask for tokens.
        with pytest.raises(DelegationTokenRequestNotAllowedError) as info:
            await as_token.create_delegation_token()
    assert "logged in with a delegation token" in str(info.value)

    # Renew as bob (a renewer): the expiry becomes now + the period.
    async with AdminClient(**user_settings(kafka, "bob")) as bob:
        t0 = int(time.time() * 1000)
        expiry = await bob.renew_delegation_token(token.hmac, 600_000)
        t1 = int(time.time() * 1000)
    assert t0 + 600_000 - 1000 <= expiry <= t1 + 600_000 + 1000
    assert expiry != token.expiry_timestamp_ms
    await describe_one(kafka, token.token_id, lambda t: t.expiry_timestamp_ms == expiry)

    # Expire it (the HMAC given as the base64 the tools print): the broker forgets it.
    async with AdminClient(**user_settings(kafka)) as admin:
        await admin.expire_delegation_token(token.hmac_base64())

        async def forgotten() -> None:
            assert token.token_id not in [
                t.token_id for t in await admin.describe_delegation_token()
            ]

        await eventually(forgotten)
        with pytest.raises(DelegationTokenNotFoundError) as gone:
            await admin.renew_delegation_token(token.hmac)
    assert token.hmac_base64() not in str(gone.value)

    async def refused() -> SaslAuthenticationFailedError:
        try:
            async with AdminClient(**token_settings(kafka, token)) as as_token:
                await as_token.list_topics()
        except SaslAuthenticationFailedError as exc:
            return exc
        raise AssertionError("the expired token still logs in")

    err = await eventually(refused)
    assert "SCRAM-SHA-256" in str(err)
    assert "delegation token login" in str(err)
    assert token.hmac_base64() not in str(err)


async def test_a_token_session_reauthenticates_with_the_token(kafka: ApacheKafka) -> None:
    """On the REAUTH listener (sessions of REAUTH_MS) a token login re-authenticates on the
    same socket with the tokenauth extension again (KIP-368), and the connection stays up."""
    async with AdminClient(**user_settings(kafka)) as admin:
        token = await admin.create_delegation_token()
    try:
        settings = token_settings(kafka, token)
        settings["bootstrap_servers"] = kafka.bootstrap("REAUTH")

        async def logs_in() -> None:
            async with AdminClient(**settings) as as_token:
                await as_token.list_topics()

        await eventually(logs_in)  # the broker has the token now
        async with ClusterClient(ClientConfig(**settings)) as client:
            await client.refresh_metadata([])
            node = next(iter(client.metadata.brokers))
            end = time.monotonic() + 1.3 * REAUTH_MS / 1000
            while time.monotonic() < end:
                await client.request(node, METADATA, MetadataRequest(topics=[]), version=1)
                await anyio.sleep(0.05)
            stats = client.statistics()["pool"]["connections"]
        busiest = max(stats.values(), key=lambda s: int(s["requests_sent"]))
        assert busiest["state"] == "ready", busiest.get("close_reason")
        assert busiest["reauthentications"] >= 1, busiest
    finally:
        async with AdminClient(**user_settings(kafka)) as admin:
            await admin.expire_delegation_token(token.hmac)


async def test_a_stranger_may_not_renew_and_a_wrong_hmac_does_not_log_in(
    kafka: ApacheKafka,
) -> None:
    async with AdminClient(**user_settings(kafka)) as admin:
        token = await admin.create_delegation_token()  # no renewers
    try:
        # The broker that answers bob learns of the token through the metadata log: until it
        # has, it answers DELEGATION_TOKEN_NOT_FOUND (measured: about 50 ms on 4.4.0).
        await describe_one(kafka, token.token_id)
        async with AdminClient(**user_settings(kafka, "bob")) as bob:
            with pytest.raises(DelegationTokenOwnerMismatchError, match="neither the owner"):
                await bob.renew_delegation_token(token.hmac)
        forged = DelegationToken(
            token.token_id,
            b"\x00" * len(token.hmac),
            token.owner,
            token.token_requester,
            (),
            0,
            0,
            0,
        )
        with pytest.raises(SaslAuthenticationFailedError) as info:
            async with AdminClient(**token_settings(kafka, forged)):
                pass
        assert forged.hmac_base64() not in str(info.value)
        assert "delegation token login" in str(info.value)
    finally:
        async with AdminClient(**user_settings(kafka)) as admin:
            await admin.expire_delegation_token(token.hmac)


# The owner and requester fields are new in CreateDelegationToken/DescribeDelegationToken v3
# (KIP-373); a broker that advertises less (Kafka 2.8: v0-v2) cannot take an owner.
@pytest.mark.requires_api("DescribeDelegationToken", min_version=3)
@pytest.mark.requires_api("CreateDelegationToken", min_version=3)
async def test_a_token_for_another_owner_names_its_requester(kafka: ApacheKafka) -> None:
    async with AdminClient(**user_settings(kafka)) as admin:
        token = await admin.create_delegation_token(owner="User:bob")
        try:
            assert (token.owner, token.token_requester) == ("User:bob", "User:alice")
            described = await describe_one(kafka, token.token_id, owner="User:bob")
            assert (described.owner, described.token_requester) == ("User:bob", "User:alice")
            # Only the owner and the renewers may expire it, not the requester.
            with pytest.raises(DelegationTokenOwnerMismatchError):
                await admin.expire_delegation_token(token.hmac)
        finally:
            async with AdminClient(**user_settings(kafka, "bob")) as bob:
                await bob.expire_delegation_token(token.hmac)


def _served(service: KafkaService, api_key: int, wanted: tuple[int, ...]) -> list[int]:
    """The versions of ``wanted`` the broker advertises for API ``api_key`` (ApiVersions)."""
    low, high = service.apis().get(api_key, (0, -1))
    return [v for v in wanted if low <= v <= high]


async def test_every_version_decodes_against_the_broker(
    kafka: ApacheKafka, kafka_service: KafkaService
) -> None:
    """Create and describe at each of v1-v3 the broker advertises (Kafka 4.x: all three;
    v1 has no requester fields, v2 is the first flexible one, v3 has the owner fields);
    each response decodes to the same token."""
    create_versions = _served(kafka_service, apis.CREATE_DELEGATION_TOKEN.key, (1, 2, 3))
    describe_versions = _served(kafka_service, apis.DESCRIBE_DELEGATION_TOKEN.key, (1, 2, 3))
    # Every broker with delegation tokens serves v1 and v2 of both (Kafka 2.8 advertises
    # v0-v2; 3.3 and later v0-v3).
    assert create_versions[:2] == [1, 2], kafka_service.apis().get(apis.CREATE_DELEGATION_TOKEN.key)
    assert describe_versions[:2] == [1, 2]
    async with ClusterClient(ClientConfig(**user_settings(kafka))) as cluster:
        node = await cluster.any_node()
        tokens: list[DelegationToken] = []
        for version in create_versions:
            body = dt.create_request(["User:bob"], 600_000, None, version)
            got, resp = await send_request(
                cluster,
                node,
                apis.CREATE_DELEGATION_TOKEN,
                body,
                min_version=version,
                max_version=version,
            )
            assert got == version
            tokens.append(dt.create_result(resp, version, [("User", "bob")]))
        for version in describe_versions:

            async def described(version: int = version) -> list[DelegationToken]:
                got, resp = await send_request(
                    cluster,
                    node,
                    apis.DESCRIBE_DELEGATION_TOKEN,
                    dt.describe_request(["User:alice"]),
                    min_version=version,
                    max_version=version,
                )
                assert got == version
                seen = {t.token_id: t for t in dt.describe_results(resp, version)}
                assert all(t.token_id in seen for t in tokens)
                return [seen[t.token_id] for t in tokens]

            assert await eventually(described) == tokens
        # Expire all tokens but the last at v1 and v2; renew the last one at v1.
        for version, token in zip((1, 2), tokens[:-1], strict=False):
            got, expired = await send_request(
                cluster,
                node,
                apis.EXPIRE_DELEGATION_TOKEN,
                ExpireDelegationTokenRequest(hmac=token.hmac, expiry_time_period_ms=-1),
                min_version=version,
                max_version=version,
            )
            assert (got, expired.error_code) == (version, 0)
        got, renewed = await send_request(
            cluster,
            node,
            apis.RENEW_DELEGATION_TOKEN,
            RenewDelegationTokenRequest(hmac=tokens[-1].hmac, renew_period_ms=60_000),
            min_version=1,
            max_version=1,
        )
        assert (got, renewed.error_code) == (1, 0)
    async with AdminClient(**user_settings(kafka)) as admin:
        await admin.expire_delegation_token(tokens[-1].hmac)


async def test_plaintext_connection_may_not_ask_for_tokens(kafka: ApacheKafka) -> None:
    async with AdminClient(bootstrap_servers=kafka.bootstrap("PLAINTEXT")) as admin:
        with pytest.raises(DelegationTokenRequestNotAllowedError) as info:
            await admin.create_delegation_token()
        with pytest.raises(DelegationTokenRequestNotAllowedError):
            await admin.describe_delegation_token()
    message = str(info.value)
    assert "CreateDelegationToken" in message
    assert "SASL" in message


async def test_bad_arguments_are_config_errors(kafka: ApacheKafka) -> None:
    async with AdminClient(**user_settings(kafka)) as admin:
        with pytest.raises(ConfigError, match="User:alice"):
            await admin.create_delegation_token(renewers=["bob"])
        with pytest.raises(ConfigError, match="base64"):
            await admin.renew_delegation_token("not base64!")
        assert await admin.describe_delegation_token([]) == []


# --------------------------------------------------------------------------------------------
# The Java side as the control
# --------------------------------------------------------------------------------------------


_TOKEN_COMMAND = "org.apache.kafka.tools.DelegationTokenCommand"


def _jars_with_class(libs: Path, name: str) -> list[str]:
    """The jars in ``libs`` that hold class ``name``."""
    entry = name.replace(".", "/") + ".class"
    found = []
    for jar in sorted(libs.glob("*.jar")):
        with zipfile.ZipFile(jar) as z:
            if entry in z.namelist():
                found.append(jar.name)
    return found


async def test_java_token_command_describes_the_token_we_created(
    kafka: ApacheKafka, tmp_path: Path
) -> None:
    """Kafka's DelegationTokenCommand (the Java Admin) describes our token as we created it."""
    assert kafka.distribution is not None
    libs = kafka.distribution.libs
    if not _jars_with_class(libs, _TOKEN_COMMAND):
        pytest.skip(
            f"{_TOKEN_COMMAND} is in none of the {len(list(libs.glob('*.jar')))} jars of {libs}"
        )
    async with AdminClient(**user_settings(kafka)) as admin:
        token = await admin.create_delegation_token(renewers=["User:bob"])
    try:
        await describe_one(kafka, token.token_id)  # the broker knows it now
        config = tmp_path / "alice.properties"
        config.write_text(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
            f'sasl.jaas.config={_SCRAM_MODULE} required username="alice" '
            f'password="{SASL_USERS["alice"]}";\n'
        )
        argv = kafka.distribution.java_command(
            _TOKEN_COMMAND,
            "--bootstrap-server",
            kafka.bootstrap(LISTENER),
            "--command-config",
            str(config),
            "--describe",
            "--owner-principal",
            "User:alice",
            jvm=["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"],
        )
        done = await anyio.run_process(argv, check=False)
        text = done.stdout.decode()
        assert done.returncode == 0, (text, done.stderr.decode()[-2000:])
        (row,) = [line.split() for line in text.splitlines() if token.token_id in line]
        assert row[:5] == [
            token.token_id,
            token.hmac_base64(),
            "User:alice",
            "User:alice",
            "[User:bob]",
        ]
    finally:
        async with AdminClient(**user_settings(kafka)) as admin:
            await admin.expire_delegation_token(token.hmac)


async def test_java_producer_logs_in_with_the_token_we_created(
    kafka: ApacheKafka, new_topic: Callable[..., str]
) -> None:
    """The Java producer logs in with our token (tokenauth=true) and writes; we read."""
    from tests.harness.java_peers import VerifiableProducer

    assert kafka.distribution is not None
    topic = new_topic()
    async with AdminClient(**user_settings(kafka)) as admin:
        token = await admin.create_delegation_token(renewers=["User:bob"])
    try:
        await describe_one(kafka, token.token_id)  # the broker knows it now
        producer = VerifiableProducer(
            kafka.distribution,
            kafka.bootstrap(LISTENER),
            topic,
            max_messages=5,
            config={
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.jaas.config": f"{_SCRAM_MODULE} required "
                f'username="{token.token_id}" password="{token.hmac_base64()}" '
                'tokenauth="true";',
            },
            name="token-producer",
        )
        producer.start()
        try:
            assert await producer.wait_exit(60) == 0
        finally:
            producer.close()
        assert producer.acked == 5, producer.error_messages
        consumer: Consumer[bytes, bytes]
        async with Consumer(
            **token_settings(kafka, token), auto_offset_reset="earliest"
        ) as consumer:
            consumer.assign([TopicPartition(topic, 0)])
            with anyio.fail_after(30):
                values = [(await consumer.getone()).value for _ in range(5)]
        assert values == [f"{producer.prefix}.{n}".encode() for n in range(5)]
    finally:
        async with AdminClient(**user_settings(kafka)) as admin:
            await admin.expire_delegation_token(token.hmac)


# --------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------


def _cli_config(tmp_path: Path) -> Path:
    path = tmp_path / "alice-cli.properties"
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
        f'sasl.jaas.config={_SCRAM_MODULE} required username="alice" '
        f'password="{SASL_USERS["alice"]}";\n'
    )
    return path


def test_cli_create_describe_renew_expire(kafka_service: KafkaService, tmp_path: Path) -> None:
    kafka = kafka_service.apache
    sasl_bootstrap = kafka.bootstrap(LISTENER)
    conf = ["--command-config", str(_cli_config(tmp_path))]
    created = ok(
        run(
            ["delegation-tokens", "create", "--renewer-principal", "User:bob", "--json", *conf],
            bootstrap=sasl_bootstrap,
        )
    )
    doc = json.loads(created)
    assert doc["owner"] == "User:alice"
    assert doc["renewers"] == ["User:bob"]
    assert len(base64.b64decode(doc["hmac"])) >= 32
    token_id, hmac = doc["token_id"], doc["hmac"]

    deadline = time.monotonic() + 20  # the broker learns of the token through its metadata log
    while True:
        table = ok(run(["delegation-tokens", "describe", *conf], bootstrap=sasl_bootstrap))
        header, *rows = table.splitlines()
        if any(r.startswith(token_id) for r in rows) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert header.split()[:3] == ["TOKENID", "HMAC", "OWNER"]
    (row,) = [r.split() for r in rows if r.startswith(token_id)]
    assert row[1:5] == [hmac, "User:alice", "User:alice", "User:bob"]

    # The token logs in from the command line too: a client.properties with tokenauth="true".
    as_token = tmp_path / "token.properties"
    as_token.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
        f'sasl.jaas.config={_SCRAM_MODULE} required username="{token_id}" '
        f'password="{hmac}" tokenauth="true";\n'
    )
    ok(run(["topics", "list", "--command-config", str(as_token)], bootstrap=sasl_bootstrap))

    renewed = run(
        ["delegation-tokens", "renew", "--hmac-stdin", "--renew-time-period", "600000", *conf],
        bootstrap=sasl_bootstrap,
        stdin=hmac + "\n",
    )
    ok(renewed)
    assert "renewed" in renewed.stderr
    expired = run(["delegation-tokens", "expire", "--hmac", hmac, *conf], bootstrap=sasl_bootstrap)
    ok(expired)
    assert "expired" in expired.stderr
    deadline = time.monotonic() + 20
    while token_id in (
        listed := ok(
            run(["delegation-tokens", "describe", "--json", *conf], bootstrap=sasl_bootstrap)
        )
    ):
        assert time.monotonic() < deadline, listed
        time.sleep(0.5)

    # Over PLAINTEXT the broker refuses, and the one-line error says why.
    line = one_line_error(run(["delegation-tokens", "create"], bootstrap=kafka.bootstrap()))
    assert "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED" in line
    assert "SASL" in line


def test_cli_without_an_hmac_is_a_usage_error() -> None:
    result = run(["delegation-tokens", "renew"])
    assert result.returncode == 2, result.stderr
    assert "--hmac" in result.stderr
