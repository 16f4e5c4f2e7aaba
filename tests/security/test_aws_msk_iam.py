"""AWS MSK IAM login (kafka_async/net/aws_msk_iam.py), proven without MSK.

No MSK cluster is reachable here, so no real MSK login is tried. What is proven instead:

* the SigV4 signer against AWS's published test vectors (tests/security/data/aws/);
* the ``AWS_MSK_IAM`` payload, field by field, against AWS's own Java library
  ``software.amazon.msk:aws-msk-iam-auth`` (from Maven Central, run with ``java`` in
  source-file mode) for the same instant and credentials;
* the OAUTHBEARER token, byte for byte, against AWS's Python signer
  ``aws-msk-iam-sasl-signer-python`` (its clock pinned: botocore's, it is not our code);
* the login end to end: our Producer against ``MskIamServer`` on a FakeBroker, which
  recomputes the signature with botocore from the known secret; a wrong secret, an expired
  signature, a wrong host and an unknown key are refused with typed errors naming the cause,
  and no secret appears in any message or repr;
* credentials through botocore's real chain (environment variables, a shared credentials
  profile), with everything on loopback (instance metadata disabled).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from kafka_async.errors import ConfigError, SaslAuthenticationFailedError
from kafka_async.net import aws_msk_iam
from kafka_async.net.aws_msk_iam import (
    AwsCredentials,
    AwsCredentialSource,
    AwsMskIamMechanism,
    MskIamTokenProvider,
    msk_iam_payload,
    msk_iam_token,
    region_from_host,
    sigv4_authorization,
)
from kafka_async.net.config import ClientConfig
from kafka_async.producer import Producer
from kafka_async.protocol.apis import PRODUCE
from kafka_async.testing.plugin import importorskip_or_fail, skip_or_fail
from tests.harness.fake_broker import FakeBroker, FakeRequest, MskIamServer

importorskip_or_fail("botocore", "AWS MSK IAM tests need botocore (the 'aws' extra)")

DATA = Path(__file__).parent / "data" / "aws"
KEY_ID = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "FwoGZXIvYXdzEXAMPLE/session+token="
MSK_HOST = "b-1.demo.abc123.c2.kafka.us-east-1.amazonaws.com"
WHEN = datetime(2026, 11, 28, 7, 0, 0, tzinfo=timezone.utc)
#: The aws-msk-iam-auth version the Java peer runs (the newest on Maven Central when written).
MSK_IAM_AUTH_VERSION = "2.3.6"


# --------------------------------------------------------------------------------------------
# SigV4 against AWS's published test vectors
# --------------------------------------------------------------------------------------------


def _vectors() -> dict[str, Any]:
    return dict(json.loads((DATA / "sigv4_test_vectors.json").read_text()))


@pytest.mark.parametrize("case", _vectors()["cases"], ids=lambda c: c["name"])
def test_sigv4_matches_aws_test_suite(case: dict[str, Any]) -> None:
    suite = _vectors()
    header = sigv4_authorization(
        AwsCredentials(suite["access_key_id"], suite["secret_access_key"]),
        method=case["method"],
        path=case["path"],
        query=[(k, v) for k, v in case["query"]],
        headers=case["headers"],
        body=case["body"].encode(),
        region=suite["region"],
        service=suite["service"],
        amz_date=suite["amz_date"],
    )
    assert header == (
        f"AWS4-HMAC-SHA256 Credential={suite['access_key_id']}/{suite['amz_date'][:8]}/"
        f"{suite['region']}/{suite['service']}/aws4_request, "
        f"SignedHeaders={case['signed_headers']}, Signature={case['signature']}"
    )


@pytest.mark.parametrize("token", [None, SESSION_TOKEN])
def test_presigned_payload_signature_matches_botocore(token: str | None) -> None:
    """The AWS_MSK_IAM signature recomputed by botocore's SigV4 (the broker side's check)."""
    creds = AwsCredentials(KEY_ID, SECRET, token)
    payload = msk_iam_payload(creds, host=MSK_HOST, region="us-east-1", when=WHEN)
    server = MskIamServer(
        {KEY_ID: SECRET}, host=MSK_HOST, region="us-east-1", clock=lambda: WHEN.timestamp()
    )
    assert server.check(json.dumps(payload).encode()) is None
    payload["x-amz-signature"] = payload["x-amz-signature"][::-1]
    assert "signature does not match" in (server.check(json.dumps(payload).encode()) or "")


# --------------------------------------------------------------------------------------------
# The OAUTHBEARER token against AWS's Python signer
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", [None, SESSION_TOKEN])
def test_token_is_byte_identical_to_aws_python_signer(
    token: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    signer = importorskip_or_fail(
        "aws_msk_iam_sasl_signer.MSKAuthTokenProvider",
        "the dev extra's aws-msk-iam-sasl-signer-python",
    )
    import botocore.auth
    from botocore.credentials import Credentials

    # Its signing time comes from botocore's clock; pin it (not our code).
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda *a, **k: WHEN)
    theirs, their_expiry_ms = signer.generate_auth_token_from_credentials_provider(
        "eu-west-1", _StaticProvider(Credentials(KEY_ID, SECRET, token))
    )
    from importlib.metadata import version

    agent = f"aws-msk-iam-sasl-signer-python/{version('aws-msk-iam-sasl-signer-python')}"
    ours, our_expiry = msk_iam_token(
        AwsCredentials(KEY_ID, SECRET, token), region="eu-west-1", when=WHEN, user_agent=agent
    )
    assert ours == theirs
    assert our_expiry * 1000 == their_expiry_ms == (WHEN.timestamp() + 900) * 1000
    url = base64.urlsafe_b64decode(ours + "=" * (-len(ours) % 4)).decode()
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    assert (parts.scheme, parts.netloc, parts.path) == (
        "https",
        "kafka.eu-west-1.amazonaws.com",
        "/",
    )
    assert query["Action"] == "kafka-cluster:Connect"
    assert query["X-Amz-Expires"] == "900"
    assert query.get("X-Amz-Security-Token") == token
    assert "=" not in ours
    assert "+" not in ours
    assert "/" not in ours


class _StaticProvider:
    """A botocore CredentialProvider handing out fixed credentials (for the AWS signer)."""

    def __new__(cls, credentials: Any) -> Any:
        from botocore.credentials import CredentialProvider

        class Provider(CredentialProvider):  # type: ignore[misc]
            METHOD = "static-test"

            def load(self) -> Any:
                return credentials

        return Provider()


@pytest.mark.anyio
async def test_token_provider_refreshes_before_expiry() -> None:
    now = [WHEN]
    provider = MskIamTokenProvider(
        "us-east-1",
        credentials=AwsCredentials(KEY_ID, SECRET),
        clock=lambda: now[0],
        refresh_fraction=0.8,
    )
    first = await provider.token()
    assert await provider.token() == first
    assert provider.fetches == 1
    # The provider's cache runs on the monotonic clock; tell it 80% of 900 s passed.
    provider._cache._refresh_at = 0.0
    now[0] = WHEN + timedelta(seconds=720)
    second = await provider.token()
    assert second != first
    assert provider.fetches == 2
    query = dict(parse_qsl(urlsplit(base64.urlsafe_b64decode(second + "==").decode()).query))
    assert query["X-Amz-Date"] == "20261128T071200Z"
    assert SECRET not in repr(provider)
    assert "hidden" in repr(provider)


# --------------------------------------------------------------------------------------------
# The AWS_MSK_IAM payload against AWS's Java library
# --------------------------------------------------------------------------------------------

_JAVA_PEER = """
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.msk.auth.iam.internals.AWS4SignedPayloadGenerator;
import software.amazon.msk.auth.iam.internals.AuthenticationRequestParams;

/** Prints the AWS_MSK_IAM payloads aws-msk-iam-auth builds for host, key id, secret: one
 * without and one with the session token (args[3]), a line each. */
public class MskIamPayload {
    public static void main(String[] args) throws Exception {
        AwsCredentials[] all = {
            AwsBasicCredentials.create(args[1], args[2]),
            AwsSessionCredentials.create(args[1], args[2], args[3]),
        };
        for (AwsCredentials credentials : all) {
            AuthenticationRequestParams params =
                AuthenticationRequestParams.create(args[0], credentials, "java-peer-test");
            System.out.write(new AWS4SignedPayloadGenerator().signedPayload(params));
            System.out.println();
        }
        System.out.flush();
    }
}
"""


@pytest.fixture(scope="module")
def msk_iam_auth_jars() -> Path:
    """aws-msk-iam-auth and its runtime dependencies (51 jars, about 14 MB), downloaded once
    from Maven Central into the cache the Kafka jars use, each checked against the SHA-256
    of the lock list in tests/security/data/aws/ (no Maven needed)."""
    from concurrent.futures import ThreadPoolExecutor

    from kafka_async.testing.apache import (
        KafkaPrerequisiteError,
        _download_one,
        cache_root,
        maven_repository,
    )

    lock = DATA / f"aws-msk-iam-auth-{MSK_IAM_AUTH_VERSION}.lock"
    entries = [
        (parts[0], parts[1])
        for line in lock.read_text().splitlines()
        if line.strip() and not line.startswith("#")
        for parts in [line.split()]
    ]
    target = cache_root() / "aws-msk-iam-auth" / MSK_IAM_AUTH_VERSION
    libs = target / "libs"
    if not (target / "COMPLETE").exists():
        shutil.rmtree(libs, ignore_errors=True)
        libs.mkdir(parents=True)
        repo = maven_repository()
        try:
            with ThreadPoolExecutor(max_workers=8) as pool:
                for done in [pool.submit(_download_one, repo, e, libs) for e in entries]:
                    done.result()
        except KafkaPrerequisiteError as exc:
            if "SHA-256" in str(exc):
                raise
            pytest.skip(f"Maven Central unreachable, aws-msk-iam-auth not fetched: {exc}")
        (target / "COMPLETE").write_text(f"aws-msk-iam-auth {MSK_IAM_AUTH_VERSION} ({repo})\n")
    return libs


@pytest.fixture(scope="module")
def java_payloads(msk_iam_auth_jars: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """The two payloads aws-msk-iam-auth builds (without, with a session token), one JVM."""
    from kafka_async.testing.apache import KafkaPrerequisiteError, find_java

    try:
        java = find_java()
    except KafkaPrerequisiteError as exc:
        skip_or_fail(str(exc))
    source = tmp_path_factory.mktemp("java") / "MskIamPayload.java"
    source.write_text(_JAVA_PEER)
    proc = subprocess.run(
        [
            java,
            "-cp",
            f"{msk_iam_auth_jars}/*",
            str(source),
            MSK_HOST,
            KEY_ID,
            SECRET,
            SESSION_TOKEN,
        ],
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("token", [None, SESSION_TOKEN])
def test_payload_matches_aws_java_library(token: str | None, java_payloads: list[Any]) -> None:
    theirs = java_payloads[0 if token is None else 1]
    # The Java library signs at its own "now"; sign at that same instant and compare.
    when = datetime.strptime(theirs["x-amz-date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    ours = msk_iam_payload(
        AwsCredentials(KEY_ID, SECRET, token),
        host=MSK_HOST,
        region=region_from_host(MSK_HOST) or "",
        when=when,
        user_agent="java-peer-test",
        expires=int(theirs["x-amz-expires"]),
    )
    assert theirs["x-amz-expires"] in ("899", "900")
    assert sorted(ours) == sorted(theirs)
    for field in theirs:
        assert ours[field] == theirs[field], field
    assert ("x-amz-security-token" in theirs) == (token is not None)


# --------------------------------------------------------------------------------------------
# Logins against the broker side (MskIamServer on a FakeBroker)
# --------------------------------------------------------------------------------------------


def _produce_ok(req: FakeRequest) -> Any:
    responses = []
    for topic in req.body.topic_data:
        parts = [
            {"index": p.index, "error_code": 0, "base_offset": 0, "record_errors": []}
            for p in topic.partition_data
        ]
        responses.append({"name": topic.name, "partition_responses": parts})
    return {"responses": responses, "throttle_time_ms": 0}


@asynccontextmanager
async def msk_broker(**server_args: Any) -> AsyncIterator[tuple[FakeBroker, MskIamServer]]:
    async with FakeBroker(topics={"t": 1}) as broker:
        server_args.setdefault("host", broker.host)
        server = MskIamServer({KEY_ID: SECRET}, region="us-east-1", **server_args)
        broker.set_default(PRODUCE.key, _produce_ok)
        server.install(broker, guarded=(PRODUCE.key,))
        yield broker, server


def _settings(broker: FakeBroker, **kw: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "bootstrap_servers": broker.address,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "AWS_MSK_IAM",
        "sasl_aws_region": "us-east-1",
        "sasl_aws_access_key_id": KEY_ID,
        "sasl_aws_secret_access_key": SECRET,
        "request_timeout_ms": 10_000,
        "enable_idempotence": False,
        "acks": 1,
        "linger_ms": 0,
    }
    settings.update(kw)
    return settings


@pytest.mark.anyio
async def test_producer_logs_in_with_aws_msk_iam() -> None:
    async with msk_broker() as (broker, server):
        async with Producer(**_settings(broker, sasl_aws_session_token=SESSION_TOKEN)) as p:
            await p.send("t", b"v")
        assert server.outcomes
        assert set(server.outcomes) == {"ok"}
        payload = server.payloads[0]
        assert payload["host"] == broker.host
        assert payload["x-amz-security-token"] == SESSION_TOKEN
        assert payload["user-agent"].startswith("kafka-async-client/")
        assert broker.stats.requests_by_api.get(PRODUCE.key) == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("server_args", "client_args", "cause"),
    [
        ({}, {"sasl_aws_secret_access_key": "not-the-secret-key"}, "signature does not match"),
        ({"clock": lambda: datetime.now(timezone.utc).timestamp() + 901}, {}, "expired"),
        ({"host": MSK_HOST}, {}, "signed for host '127.0.0.1'"),
        ({}, {"sasl_aws_access_key_id": "AKIDUNKNOWN"}, "unknown access key id"),
        ({}, {"sasl_aws_region": "eu-west-1"}, "credential scope is for eu-west-1"),
    ],
    ids=["wrong-secret", "expired", "wrong-host", "unknown-key", "wrong-region"],
)
async def test_refused_logins_are_typed_and_name_the_cause(
    server_args: dict[str, Any], client_args: dict[str, Any], cause: str
) -> None:
    async with msk_broker(**server_args) as (broker, server):
        settings = _settings(broker, **client_args)
        with pytest.raises(SaslAuthenticationFailedError) as info:
            async with Producer(**settings) as p:
                await p.send("t", b"v")
        message = str(info.value)
        assert cause in message, message
        assert "AWS_MSK_IAM" in message
        for secret in (SECRET, settings["sasl_aws_secret_access_key"]):
            assert secret not in message
        assert server.outcomes
        assert all(o != "ok" for o in server.outcomes)
        assert broker.stats.requests_by_api.get(PRODUCE.key) is None


@pytest.mark.anyio
async def test_credentials_from_the_environment_through_botocore(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _isolate_aws(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    async with msk_broker() as (broker, server):
        settings = _settings(broker)
        del settings["sasl_aws_access_key_id"], settings["sasl_aws_secret_access_key"]
        async with Producer(**settings) as p:
            await p.send("t", b"v")
        assert set(server.outcomes) == {"ok"}


@pytest.mark.anyio
async def test_credentials_from_a_shared_profile(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _isolate_aws(monkeypatch, tmp_path)
    (tmp_path / "credentials").write_text(
        f"[msk]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n"
        "[other]\naws_access_key_id = AKIDOTHER\naws_secret_access_key = other\n"
    )
    async with msk_broker() as (broker, _server):
        settings = _settings(broker, sasl_aws_profile="msk")
        del settings["sasl_aws_access_key_id"], settings["sasl_aws_secret_access_key"]
        async with Producer(**settings) as p:
            await p.send("t", b"v")
        with pytest.raises(SaslAuthenticationFailedError, match="unknown access key id"):
            async with Producer(**{**settings, "sasl_aws_profile": "other"}) as p:
                await p.send("t", b"v")
        with pytest.raises(SaslAuthenticationFailedError, match="cannot get AWS credentials"):
            async with Producer(**{**settings, "sasl_aws_profile": "missing"}) as p:
                await p.send("t", b"v")


def _isolate_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """botocore's chain with nothing from this machine and no network (no IMDS)."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    aws_msk_iam._SOURCES.clear()


# --------------------------------------------------------------------------------------------
# Units: region, validation, the broker's answer, secrets
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "region"),
    [
        (MSK_HOST, "us-east-1"),
        ("b-3.prod.x1y2z3.c4.kafka.eu-central-1.amazonaws.com", "eu-central-1"),
        ("boot-abcd1234.c1.kafka-serverless.ap-southeast-2.amazonaws.com", "ap-southeast-2"),
        ("b-1.demo.abc.c2.kafka.cn-north-1.amazonaws.com.cn", "cn-north-1"),
        ("b-1.demo.abc.c2.kafka.us-gov-west-1.amazonaws.com", "us-gov-west-1"),
        ("127.0.0.1", None),
        ("kafka.example.com", None),
    ],
)
def test_region_from_host(host: str, region: str | None) -> None:
    assert region_from_host(host) == region


def test_config_validation_and_hidden_secrets() -> None:
    base: dict[str, Any] = {"security_protocol": "SASL_SSL", "sasl_mechanism": "AWS_MSK_IAM"}
    with pytest.raises(ConfigError, match="go together"):
        ClientConfig(**base, sasl_aws_access_key_id=KEY_ID)
    with pytest.raises(ConfigError, match="sasl_aws_session_token needs"):
        ClientConfig(**base, sasl_aws_session_token=SESSION_TOKEN)
    config = ClientConfig(
        **base,
        sasl_aws_access_key_id=KEY_ID,
        sasl_aws_secret_access_key=SECRET,
        sasl_aws_session_token=SESSION_TOKEN,
    )
    source = AwsCredentialSource.from_config(config)
    mechanism = AwsMskIamMechanism.from_config(config)
    for shown in (repr(config), str(config.to_dict()), repr(source), repr(mechanism)):
        assert SECRET not in shown
        assert SESSION_TOKEN not in shown
    assert KEY_ID in repr(source)


@pytest.mark.anyio
@pytest.mark.anyio
async def test_mechanism_checks_the_brokers_answer() -> None:
    source = AwsCredentialSource(credentials=AwsCredentials(KEY_ID, SECRET))

    async def prepared(host: str, region: str | None = None) -> AwsMskIamMechanism:
        mechanism = AwsMskIamMechanism(source, region=region, clock=lambda: WHEN)
        mechanism.server_host = host
        await mechanism.prepare()
        return mechanism

    mechanism = await prepared(MSK_HOST)
    first = mechanism.step(None)
    assert first is not None
    assert json.loads(first)["host"] == MSK_HOST
    assert mechanism.step(b'{"version":"2020_10_22","request-id":"r-1"}') is None
    assert mechanism.request_id == "r-1"
    for answer, why in [
        (b"", "empty answer"),
        (b"not json", "not JSON"),
        (b'{"version":"2019","request-id":"r"}', "version"),
        (b'{"version":"2020_10_22"}', "no request-id"),
    ]:
        mechanism = await prepared(MSK_HOST)
        mechanism.step(None)
        with pytest.raises(SaslAuthenticationFailedError, match=why):
            mechanism.step(answer)
    with pytest.raises(ConfigError, match="sasl_aws_region"):
        await prepared("127.0.0.1")
    assert (await prepared("127.0.0.1", "us-east-1")).step(None) is not None


@pytest.mark.anyio
async def test_oauthbearer_login_with_the_token_provider() -> None:
    """The OAUTHBEARER form end to end: the broker side decodes the token, and checks the
    presigned URL's signature (for host kafka.<region>.amazonaws.com) with botocore."""
    from tests.harness.sasl_server import SaslServer

    checker = MskIamServer(
        {KEY_ID: SECRET}, host="kafka.us-east-1.amazonaws.com", region="us-east-1"
    )

    def validate(token: str, extensions: Any) -> bool:
        url = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        parts = urlsplit(url)
        fields = {k.lower(): v for k, v in parse_qsl(parts.query)}
        fields.update(host=parts.netloc, version="2020_10_22")
        return checker.check(json.dumps(fields).encode()) is None

    async with FakeBroker(topics={"t": 1}) as broker:
        SaslServer(mechanisms=["OAUTHBEARER"], token_validator=validate).install(broker)
        provider = MskIamTokenProvider("us-east-1", credentials=AwsCredentials(KEY_ID, SECRET))
        settings = _settings(broker, sasl_mechanism="OAUTHBEARER")
        for name in ("sasl_aws_region", "sasl_aws_access_key_id", "sasl_aws_secret_access_key"):
            del settings[name]
        async with Producer(**settings, sasl_oauth_token_provider=provider) as p:
            partitions = await p.partitions_for("t")
        assert partitions
        assert provider.fetches == 1
        wrong = MskIamTokenProvider("us-east-1", credentials=AwsCredentials(KEY_ID, "bad"))
        with pytest.raises(SaslAuthenticationFailedError, match="invalid OAUTHBEARER token"):
            async with Producer(**settings, sasl_oauth_token_provider=wrong) as p:
                await p.partitions_for("t")


class _AssumedRoleSecrets(Mapping[str, str]):
    """The secrets of the roles moto's STS handed out (it runs in this process)."""

    def __init__(self, account: str) -> None:
        self.account = account

    def _roles(self) -> list[Any]:
        from moto.sts.models import sts_backends

        return list(sts_backends[self.account]["aws"].assumed_roles)

    def __getitem__(self, key: str) -> str:
        for role in self._roles():
            if role.access_key_id == key:
                return str(role.secret_access_key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter([r.access_key_id for r in self._roles()])

    def __len__(self) -> int:
        return len(self._roles())


@pytest.mark.anyio
async def test_role_assumed_through_sts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """sasl_aws_role_arn: botocore assumes the role at an STS endpoint (moto's, on
    127.0.0.1) with the chain's credentials, and the login is signed with the role's."""
    server_module = importorskip_or_fail("moto.server", "the dev extra's moto[server]")
    _isolate_aws(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDBASEUSER")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "base-user-secret")
    sts = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    sts.start()
    try:
        host, port = sts.get_host_and_port()
        monkeypatch.setenv("AWS_ENDPOINT_URL_STS", f"http://{host}:{port}")
        role = "arn:aws:iam::123456789012:role/msk-client"
        async with msk_broker() as (broker, server):
            server.secrets = _AssumedRoleSecrets("123456789012")  # type: ignore[assignment]
            settings = _settings(
                broker,
                sasl_aws_role_arn=role,
                sasl_aws_role_session_name="msk-test",
                sasl_aws_sts_region="us-east-1",
            )
            del settings["sasl_aws_access_key_id"], settings["sasl_aws_secret_access_key"]
            async with Producer(**settings) as p:
                await p.send("t", b"v")
        assert set(server.outcomes) == {"ok"}
        payload = server.payloads[0]
        assumed = [r for r in _AssumedRoleSecrets("123456789012")._roles() if r.role_arn == role]
        assert [r.session_name for r in assumed] == ["msk-test"]
        assert payload["x-amz-credential"].startswith(assumed[0].access_key_id + "/")
        assert payload["x-amz-security-token"]
    finally:
        sts.stop()


@pytest.mark.anyio
async def test_reauthentication_signs_again() -> None:
    """KIP-368: with a session lifetime, the connection logs in again before it ends, with a
    newly signed payload each time."""
    from kafka_async.protocol.apis import SASL_AUTHENTICATE

    async with msk_broker(session_lifetime_ms=600) as (broker, server):
        async with Producer(**_settings(broker)) as p:
            await p.send("t", b"v")
            before = len(server.outcomes)
            for _ in range(2):
                await broker.wait_for_request(SASL_AUTHENTICATE.key, timeout=10)
            await p.send("t", b"w")
        assert len(server.outcomes) >= before + 2
        assert set(server.outcomes) == {"ok"}
        dates = [payload["x-amz-date"] for payload in server.payloads]
        assert dates == sorted(dates)


@pytest.mark.anyio
async def test_region_from_the_aws_configuration(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A broker name without a region (127.0.0.1 here, a private DNS name in real life) and
    no sasl_aws_region: the region botocore's configuration names is used, as the Java
    library's fallback to the SDK's region chain does."""
    _isolate_aws(monkeypatch, tmp_path)
    async with msk_broker() as (broker, server):
        settings = _settings(broker)
        del settings["sasl_aws_region"]
        with pytest.raises(ConfigError, match="no AWS region is configured"):
            async with Producer(**settings) as p:
                await p.send("t", b"v")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")  # botocore's
        async with Producer(**settings) as p:
            await p.send("t", b"v")
        monkeypatch.setenv("AWS_REGION", "us-east-1")  # the Java SDK's; it comes first
        monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
        async with Producer(**settings) as p:
            await p.send("t", b"v")
        assert server.outcomes == ["ok", "ok"]
