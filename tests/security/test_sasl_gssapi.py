"""SASL GSSAPI (Kerberos) against a real MIT KDC and a real Apache Kafka GSSAPI listener.

One KDC (tests/harness/kdc.py: realm ``KAFKA.TEST`` on 127.0.0.1, no DNS) and one broker for
the module. The broker logs in as ``kafka/<host>@KAFKA.TEST`` from a keytab with Java's own
``Krb5LoginModule`` on two listeners: ``KERBEROS`` and ``KERBEROS_REAUTH``
(``connections.max.reauth.ms`` = 3 s, KIP-368). ``<host>`` is what our client (and the Java
client) name 127.0.0.1 by: its name in /etc/hosts, normally ``localhost``. The authorizer of
the broker's mode is on (KRaft's StandardAuthorizer; ZooKeeper mode's AclAuthorizer;
``User:ANONYMOUS`` on PLAINTEXT and ``User:kafka`` are super users; a topic without ACLs is
open), so ACLs on the Kerberos principal ``User:client`` are enforced.

The control is the Java client logging in to the same listener with a keytab (its
``Krb5LoginModule``): what its VerifiableProducer writes our GSSAPI consumer reads, and what
our producer writes its ConsoleConsumer reads.
"""

from __future__ import annotations

import ctypes.util
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from security_helpers import AUTHORIZERS, first_class_present

from kafka_async.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePattern,
    ResourceType,
)
from kafka_async.cluster.client import ClusterClient
from kafka_async.consumer import Consumer
from kafka_async.errors import (
    ConfigError,
    SaslAuthenticationFailedError,
    TopicAuthorizationFailedError,
)
from kafka_async.net import gssapi
from kafka_async.net.config import ClientConfig
from kafka_async.producer import Producer
from kafka_async.protocol.apis import METADATA
from kafka_async.protocol.apis.metadata import MetadataRequest
from kafka_async.structs import TopicPartition
from kafka_async.testing.apache import ApacheKafka, KafkaPrerequisiteError
from kafka_async.testing.plugin import skip_or_fail
from kafka_async.testing.topics import create_topic
from tests.harness.java_peers import JavaProcess, VerifiableProducer
from tests.harness.kdc import KdcUnavailableError, MitKdc
from tests.harness.soak import record_result

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

REALM = "KAFKA.TEST"
#: connections.max.reauth.ms of the KERBEROS_REAUTH listener.
REAUTH_MS = 3000
#: Ticket lifetime of the ``renewer`` principal: shorter than a re-authentication interval.
SHORT_LIFE_S = 3
#: How long a refusal may take: it must come at once, not after retries until a deadline.
PROMPT = 10.0


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


class Env:
    """The module's KDC, broker, keytabs and the host name in the broker's principal."""

    def __init__(self, kdc: MitKdc, kafka: ApacheKafka, host: str, folder: Path) -> None:
        self.kdc = kdc
        self.kafka = kafka
        self.host = host
        self.folder = folder
        self.keytabs: dict[str, Path] = {}

    def settings(
        self, principal: str | None = "client", listener: str = "KERBEROS", **extra: Any
    ) -> dict[str, Any]:
        settings: dict[str, Any] = {
            "bootstrap_servers": self.kafka.bootstrap(listener),
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "GSSAPI",
            "sasl_kerberos_service_name": "kafka",
            "request_timeout_ms": 15_000,
        }
        if principal is not None:
            settings["sasl_kerberos_principal"] = self.kdc.principal(principal)
            settings["sasl_kerberos_keytab"] = str(self.keytabs[principal])
        settings.update(extra)
        return settings

    def topic(self) -> str:
        name = f"krb-{uuid.uuid4().hex[:10]}"
        create_topic(self.kafka.bootstrap_servers, name)
        return name


def _jaas(keytab: Path, principal: str) -> str:
    return (
        "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true "
        f'keyTab="{keytab}" principal="{principal}";'
    )


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    folder = tmp_path_factory.mktemp("kerberos")
    try:
        kdc = MitKdc(REALM).start()
    except KdcUnavailableError as exc:
        skip_or_fail(f"no MIT KDC here: {exc}")
    saved = os.environ.get("KRB5_CONFIG")
    # Our process's GSS-API library reads the realm from here (krb5.conf is per process).
    os.environ["KRB5_CONFIG"] = str(kdc.krb5_conf)
    try:
        # The broker's principal names 127.0.0.1 as the client will: /etc/hosts' name.
        host = gssapi.kerberos_host("127.0.0.1")
        broker_keytab = kdc.add_principal(f"kafka/{host}", folder / "broker.keytab")
        listeners = {"KERBEROS": "SASL_PLAINTEXT", "KERBEROS_REAUTH": "SASL_PLAINTEXT"}
        jaas = _jaas(broker_keytab, f"kafka/{host}@{REALM}")
        config = {
            "sasl.kerberos.service.name": "kafka",
            "super.users": "User:ANONYMOUS;User:kafka",
            "allow.everyone.if.no.acl.found": "true",
            "listener.name.kerberos_reauth.connections.max.reauth.ms": str(REAUTH_MS),
        }
        for name in listeners:
            prefix = f"listener.name.{name.lower()}"
            config[f"{prefix}.sasl.enabled.mechanisms"] = "GSSAPI"
            config[f"{prefix}.gssapi.sasl.jaas.config"] = jaas
        kafka = ApacheKafka(
            heap="384m",
            extra_listeners=listeners,
            jvm_options=[f"-Djava.security.krb5.conf={kdc.krb5_conf}"],
            broker_config=config,
        )
        kafka.broker_config["authorizer.class.name"] = AUTHORIZERS[kafka.mode]
        try:
            kafka.start()
        except KafkaPrerequisiteError as exc:
            skip_or_fail(f"Apache Kafka cannot run here: {exc}")
        try:
            env = Env(kdc, kafka, host, folder)
            for name in ("client", "other", "javaclient"):
                env.keytabs[name] = kdc.add_principal(name, folder / f"{name}.keytab")
            env.keytabs["renewer"] = kdc.add_principal(
                "renewer", folder / "renewer.keytab", max_life=f"{SHORT_LIFE_S} seconds"
            )
            # A keytab whose key the KDC no longer has (the principal was re-keyed since).
            env.keytabs["stale"] = kdc.add_principal("stale", folder / "stale.keytab")
            kdc.export_keytab("stale", folder / "stale-new.keytab")
            # A keytab of a principal deleted from the KDC.
            env.keytabs["gone"] = kdc.add_principal("gone", folder / "gone.keytab")
            kdc.kadmin(f"delprinc -force gone@{REALM}")
            yield env
        finally:
            kafka.stop()
    finally:
        if saved is None:
            os.environ.pop("KRB5_CONFIG", None)
        else:
            os.environ["KRB5_CONFIG"] = saved
        kdc.stop()


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


async def refusal(settings: dict[str, Any]) -> str:
    """The message of the SaslAuthenticationFailedError a connect with ``settings`` raises."""
    start = time.monotonic()
    with pytest.raises(SaslAuthenticationFailedError) as info:
        async with ClusterClient(ClientConfig(**settings)) as client:
            await client.refresh_metadata([])
    assert time.monotonic() - start < PROMPT, "the refusal took too long (retried?)"
    return str(info.value)


# --------------------------------------------------------------------------------------------
# Logins
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_keytab_login_produces_and_consumes(env: Env) -> None:
    """Tickets from the keytab (no kinit), kept in the process's own cache; the GSS-API
    calls that may reach the KDC run in a worker thread on either event loop."""
    before = env.kdc.issued("client")
    await produce_and_consume(env.settings(), env.topic())
    # One initial ticket for every connection of both clients: the cache is shared.
    assert env.kdc.issued("client") - before <= 1


async def test_ticket_cache_login(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kinit -kt`` into this test's KRB5CCNAME; the client has no keytab and reads it."""
    cache = tmp_path / "krb5cc"
    env.kdc.kinit("client", keytab=env.keytabs["client"], ccache=cache)
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{cache}")
    before = env.kdc.issued("client")
    await produce_and_consume(env.settings(principal=None), env.topic(), count=2)
    assert env.kdc.issued("client") == before  # no new login: the cache's ticket was used


async def test_aiokafka_drop_in_logs_in_from_the_ticket_cache(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """aiokafka's GSSAPI arguments through the drop-in (kafka_async.aiokafka): aiokafka
    code that logs in with Kerberos keeps working unchanged."""
    from kafka_async import aiokafka as drop_in

    cache = tmp_path / "krb5cc"
    env.kdc.kinit("client", keytab=env.keytabs["client"], ccache=cache)
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{cache}")
    topic = env.topic()
    common: dict[str, Any] = {
        "bootstrap_servers": env.kafka.bootstrap("KERBEROS"),
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "GSSAPI",
        "sasl_kerberos_service_name": "kafka",
        "sasl_kerberos_domain_name": env.host,
    }
    producer = drop_in.AIOKafkaProducer(**common)
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"from aiokafka code")
    finally:
        await producer.stop()
    consumer = drop_in.AIOKafkaConsumer(topic, auto_offset_reset="earliest", **common)
    await consumer.start()
    try:
        with anyio.fail_after(30):
            record = await consumer.getone()
    finally:
        await consumer.stop()
    assert record.value == b"from aiokafka code"


async def test_expired_ticket_without_keytab_is_refused(env: Env, tmp_path: Path) -> None:
    """A cached ticket that expired and no keytab to get another: a typed error saying so."""
    cache = tmp_path / "krb5cc"
    # Kerberos times are whole seconds: the ticket ends 2 to 3 s from now.
    env.kdc.kinit("client", keytab=env.keytabs["client"], ccache=cache, lifetime="3s")
    settings = env.settings(principal=None, sasl_kerberos_ticket_cache=f"FILE:{cache}")
    async with ClusterClient(ClientConfig(**settings)) as client:
        await client.refresh_metadata([])  # valid for now
    await anyio.sleep(3.2)
    message = await refusal(settings)
    assert "expired" in message, message


async def test_wrong_keytab_is_refused(env: Env) -> None:
    """A keytab with a key the KDC replaced: the KDC refuses the pre-authentication."""
    message = await refusal(env.settings("stale"))
    assert "Preauthentication failed" in message, message
    assert f"stale@{REALM}" in message


async def test_unknown_principal_is_refused(env: Env) -> None:
    message = await refusal(env.settings("gone"))
    assert "not found in Kerberos database" in message, message


async def test_unknown_broker_principal_is_refused(env: Env) -> None:
    """``sasl_kerberos_domain_name`` names a host the KDC has no kafka principal for."""
    message = await refusal(env.settings(sasl_kerberos_domain_name="nowhere.localhost"))
    assert f"kafka/nowhere.localhost@{REALM}" in message, message
    assert "not found" in message, message


async def test_wrong_service_name_is_refused(env: Env) -> None:
    message = await refusal(env.settings(sasl_kerberos_service_name="zookeeper"))
    assert "zookeeper/" in message, message


# --------------------------------------------------------------------------------------------
# Ticket renewal and re-authentication (KIP-368)
# --------------------------------------------------------------------------------------------


@pytest.mark.timeout(90)
async def test_expired_tickets_renewed_from_keytab_across_reauthentications(env: Env) -> None:
    """``renewer``'s tickets last 3 s and the listener ends sessions every 3 s: for 2.5
    sessions the same connection re-authenticates in place, each time with a ticket got
    again from the keytab once the old one has (half) run out, and a producer carries on."""
    settings = env.settings("renewer", listener="KERBEROS_REAUTH")
    topic = env.topic()
    first = env.kdc.issued("renewer")
    sent = 0
    async with ClusterClient(ClientConfig(**settings)) as client, Producer(**settings) as producer:
        await client.refresh_metadata([])
        node = next(iter(client.metadata.brokers))
        end = time.monotonic() + 2.5 * REAUTH_MS / 1000
        while time.monotonic() < end:
            await client.request(node, METADATA, MetadataRequest(topics=[]), version=1)
            await producer.send(topic, value=f"r{sent}".encode())
            sent += 1
            await anyio.sleep(0.1)
        connections = client.statistics()["pool"]["connections"]
    busiest = max(connections.values(), key=lambda s: s["requests_sent"])
    assert busiest["state"] == "ready", busiest.get("close_reason")
    assert busiest["reauthentications"] >= 2, busiest
    # The first login and at least one more after the first ticket's life was half over.
    assert env.kdc.issued("renewer") - first >= 2
    consumer: Consumer[bytes, bytes]
    async with Consumer(**env.settings(), auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        got: list[bytes] = []
        with anyio.fail_after(30):
            while len(got) < sent:
                for records in (await consumer.getmany(timeout_ms=300)).values():
                    got.extend(r.value for r in records if r.value is not None)
    assert got == [f"r{i}".encode() for i in range(sent)]


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_soak_a_minute_of_renewals_and_reauthentications(env: Env) -> None:
    """``make soak``: a producer and a consumer as ``renewer`` (3 s tickets) on the 3 s
    re-authentication listener for a minute: about twenty renewals from the keytab and as
    many re-authentications per connection; nothing lost or duplicated."""
    settings = env.settings("renewer", listener="KERBEROS_REAUTH")
    topic = env.topic()
    first = env.kdc.issued("renewer")
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
    renewals = env.kdc.issued("renewer") - first
    record_result(
        "gssapi: 3 s tickets renewed across 3 s re-authentications (60 s)",
        records=len(sent),
        lost=len(set(sent) - set(got)),
        duplicated=len(got) - len(set(got)),
        ok=got == sent and renewals >= 10,
        evidence=f"{renewals} tickets from the keytab",
    )
    assert got == sent
    assert renewals >= 10


# --------------------------------------------------------------------------------------------
# ACLs on the Kerberos principal
# --------------------------------------------------------------------------------------------


async def test_acls_apply_to_the_kerberos_principal(env: Env) -> None:
    """The broker knows the client as ``User:client`` (its principal's short name): allowed
    on one topic, denied on another; ``User:other`` is not allowed on the first."""
    allowed, denied = env.topic(), env.topic()

    def acl(topic: str, principal: str, permission: AclPermissionType) -> AclBinding:
        return AclBinding(
            ResourcePattern(ResourceType.TOPIC, topic),
            principal,
            operation=AclOperation.WRITE,
            permission_type=permission,
        )

    async with AdminClient(bootstrap_servers=env.kafka.bootstrap_servers) as admin:
        await admin.create_acls(
            [
                acl(allowed, "User:client", AclPermissionType.ALLOW),
                acl(denied, "User:client", AclPermissionType.DENY),
            ],
            raise_on_error=True,
        )
    deadline = time.monotonic() + 20
    # Two principals in one process at the same time: each client has its own credentials.
    async with (
        Producer(**env.settings()) as as_client,
        Producer(**env.settings("other")) as as_other,
    ):
        while True:  # ACLs reach the broker through the metadata log, shortly after
            try:
                with pytest.raises(TopicAuthorizationFailedError):
                    await as_client.send(denied, value=b"no")
                break
            except pytest.fail.Exception:
                if time.monotonic() > deadline:
                    raise
                await anyio.sleep(0.25)
        outcomes: dict[str, BaseException | None] = {}

        async def send(name: str, producer: Producer) -> None:
            try:
                await producer.send(allowed, value=name.encode())
                outcomes[name] = None
            except TopicAuthorizationFailedError as exc:
                outcomes[name] = exc

        async with anyio.create_task_group() as tg:
            tg.start_soon(send, "client", as_client)
            tg.start_soon(send, "other", as_other)
    assert outcomes["client"] is None
    assert isinstance(outcomes["other"], TopicAuthorizationFailedError)


# --------------------------------------------------------------------------------------------
# The control: the Java client on the same listener
# --------------------------------------------------------------------------------------------


def java_client_config(env: Env) -> dict[str, str]:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "GSSAPI",
        "sasl.kerberos.service.name": "kafka",
        "sasl.jaas.config": _jaas(env.keytabs["javaclient"], f"javaclient@{REALM}"),
    }


@pytest.mark.timeout(120)
async def test_java_client_and_ours_read_each_other(env: Env) -> None:
    """The Java producer (Kerberos login with its Krb5LoginModule) writes, our GSSAPI
    consumer reads; our producer writes, the Java ConsoleConsumer (Kerberos too) reads."""
    dist = env.kafka.distribution
    assert dist is not None
    krb5 = f"-Djava.security.krb5.conf={env.kdc.krb5_conf}"
    from_java, to_java = env.topic(), env.topic()
    vp = VerifiableProducer(
        dist,
        env.kafka.bootstrap("KERBEROS"),
        from_java,
        max_messages=10,
        name="vp-gssapi",
        config=java_client_config(env),
    )
    vp.argv.insert(1, krb5)
    ours = [f"ours-{i}" for i in range(10)]
    async with Producer(**env.settings()) as producer:
        for value in ours:
            await producer.send(to_java, value=value.encode())
    props = env.folder / f"consumer-{uuid.uuid4().hex[:6]}.properties"
    props.write_text("".join(f"{k}={v}\n" for k, v in java_client_config(env).items()))
    # The release's ConsoleConsumer: in kafka-tools from 3.7, in the Scala core before.
    console = first_class_present(
        dist.libs, "org.apache.kafka.tools.consumer.ConsoleConsumer", "kafka.tools.ConsoleConsumer"
    )
    assert console is not None, f"no ConsoleConsumer in {dist.libs}"
    cc = JavaProcess(
        dist,
        console,
        [
            "--bootstrap-server",
            env.kafka.bootstrap("KERBEROS"),
            "--topic",
            to_java,
            "--from-beginning",
            "--max-messages",
            str(len(ours)),
            "--timeout-ms",
            "30000",
            "--consumer.config",
            str(props),
        ],
        name="console-consumer-gssapi",
        jvm=[krb5],
    )
    # Both JVMs at once: their start-up is most of this test's time.
    vp.start()
    cc.start()
    try:
        assert await vp.wait_exit(90) == 0, vp.lines[-20:]
        assert await cc.wait_exit(90) == 0, cc.lines[-20:]
    finally:
        vp.close()
        cc.close()
    assert vp.acked == 10, vp.lines[-20:]
    assert [line for line in cc.lines if line.startswith("ours-")] == ours, cc.lines[-20:]
    expected = [f"{vp.prefix}.{n}".encode() for n in range(10)]
    consumer: Consumer[bytes, bytes]
    async with Consumer(**env.settings(), auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(from_java, 0)])
        got: list[bytes] = []
        with anyio.fail_after(30):
            while len(got) < len(expected):
                for records in (await consumer.getmany(timeout_ms=300)).values():
                    got.extend(r.value for r in records if r.value is not None)
    assert got == expected


# --------------------------------------------------------------------------------------------
# No broker
# --------------------------------------------------------------------------------------------


def test_missing_library_is_a_config_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    gssapi._load.cache_clear()
    monkeypatch.setattr(gssapi, "LIBRARY_NAMES", ("libgssapi_krb5_missing.so.9",))
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    try:
        with pytest.raises(ConfigError) as info:
            ClientConfig(security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI")
    finally:
        gssapi._load.cache_clear()
    assert "libgssapi_krb5" in str(info.value)
    assert "libgssapi-krb5-2" in str(info.value)
    assert "krb5-libs" in str(info.value)


def test_missing_keytab_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="sasl_kerberos_keytab"):
        ClientConfig(
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="GSSAPI",
            sasl_kerberos_keytab=str(tmp_path / "none.keytab"),
        )


def test_broker_host_name_as_the_java_client_picks_it() -> None:
    """A host name is kept; 127.0.0.1 becomes its /etc/hosts name (no DNS asked);
    ``sasl_kerberos_domain_name`` replaces either."""
    assert gssapi.kerberos_host("broker-1.example.test") == "broker-1.example.test"
    assert gssapi.kerberos_host("127.0.0.1", "kafka.example.test") == "kafka.example.test"
    names: dict[str, str] = {}
    for line in Path("/etc/hosts").read_text().splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 2:
            names.setdefault(fields[0], fields[1])
    assert gssapi.kerberos_host("127.0.0.1") == names.get("127.0.0.1", "127.0.0.1")
    # A loopback address no line names stays an address.
    if "127.0.0.77" not in names:
        assert gssapi.kerberos_host("127.0.0.77") == "127.0.0.77"
