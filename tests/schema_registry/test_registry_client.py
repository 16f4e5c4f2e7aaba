"""Our async registry client against a registry on loopback, with confluent-kafka's
``SchemaRegistryClient`` as the independent peer: what one registers the other finds."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka.schema_registry import Schema as CSchema
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient

from kafka_async.errors import ConfigError, KafkaError
from kafka_async.schema_registry import (
    IncompatibleSchemaError,
    InvalidSchemaError,
    RegistryAuthError,
    RegistryUnavailableError,
    Schema,
    SchemaNotFoundError,
    SchemaRegistryClient,
    SchemaRegistryConfigError,
    SchemaRegistryError,
    SubjectNotFoundError,
    VersionNotFoundError,
)
from kafka_async.testing import _procs
from tests.harness.schema_registry import RegistryServer

V1 = json.dumps(
    {
        "type": "record",
        "name": "User",
        "namespace": "t",
        "fields": [{"name": "n", "type": "string"}],
    }
)
V2 = json.dumps(
    {
        "type": "record",
        "name": "User",
        "namespace": "t",
        "fields": [{"name": "n", "type": "string"}, {"name": "age", "type": "int", "default": 0}],
    }
)
#: Adds a field without a default: new readers cannot read old data (BACKWARD breaks).
V_BAD = json.dumps(
    {
        "type": "record",
        "name": "User",
        "namespace": "t",
        "fields": [{"name": "n", "type": "string"}, {"name": "x", "type": "long"}],
    }
)


def subject() -> str:
    return f"s-{uuid.uuid4().hex[:8]}-value"


@pytest.mark.anyio
async def test_register_lookup_versions_and_peer_agree(
    sr: SchemaRegistryClient, registry: RegistryServer
) -> None:
    subj = subject()
    sid = await sr.register(subj, Schema(V1))
    assert await sr.register(subj, Schema(V1)) == sid  # again: the same id
    sid2 = await sr.register(subj, Schema(V2))
    assert sid2 != sid
    assert await sr.versions(subj) == [1, 2]
    assert subj in await sr.subjects()
    latest = await sr.latest_version(subj)
    assert (latest.schema_id, latest.version, latest.subject) == (sid2, 2, subj)
    assert json.loads(latest.schema.schema_str) == json.loads(V2)
    found = await sr.lookup(subj, Schema(V1))
    assert (found.schema_id, found.version) == (sid, 1)
    assert (await sr.schema_by_id(sid)).schema_str == V1

    # The peer sees the same registry state, and what it registers we read.
    peer = ConfluentClient({"url": registry.url})
    assert peer.get_latest_version(subj).schema_id == sid2
    assert peer.lookup_schema(subj, CSchema(V1, "AVRO")).schema_id == sid
    other = subject()
    peer_id = peer.register_schema(other, CSchema(V2, "AVRO"))
    assert peer_id == sid2  # the same schema under another subject: the same id
    got = await sr.version(other, 1)
    assert (got.schema_id, got.version) == (peer_id, 1)
    assert sr.schema_by_id_blocking(peer_id).schema_type == "AVRO"


@pytest.mark.anyio
async def test_compatibility_check_and_config(sr: SchemaRegistryClient) -> None:
    subj = subject()
    await sr.register(subj, Schema(V1))
    assert await sr.compatibility() == "BACKWARD"
    assert await sr.is_compatible(subj, Schema(V2)) is True
    assert await sr.is_compatible(subj, Schema(V_BAD)) is False
    with pytest.raises(IncompatibleSchemaError) as info:
        await sr.register(subj, Schema(V_BAD))
    err = info.value
    assert (err.status, err.error_code, err.subject) == (409, 409, subj)
    assert subj in str(err)
    assert "409" in str(err)
    assert isinstance(err, KafkaError)
    assert not err.retriable

    # Per subject: NONE lets the breaking change in.
    assert await sr.set_compatibility("NONE", subj) == "NONE"
    assert await sr.compatibility(subj) == "NONE"
    assert await sr.is_compatible(subj, Schema(V_BAD)) is True
    await sr.register(subj, Schema(V_BAD))
    with pytest.raises(SchemaRegistryConfigError):
        await sr.set_compatibility("SIDEWAYS", subj)


@pytest.mark.anyio
async def test_not_found_errors_are_typed_and_name_what_was_asked(
    sr: SchemaRegistryClient,
) -> None:
    subj = subject()
    with pytest.raises(SubjectNotFoundError) as s_info:
        await sr.versions(subj)
    assert s_info.value.subject == subj
    assert subj in str(s_info.value)
    assert "40401" in str(s_info.value)
    assert "404" in str(s_info.value)
    await sr.register(subj, Schema(V1))
    with pytest.raises(VersionNotFoundError) as v_info:
        await sr.version(subj, 7)
    assert v_info.value.version == 7
    assert "versions/7" in str(v_info.value)
    with pytest.raises(SchemaNotFoundError) as l_info:
        await sr.lookup(subj, Schema(V2))
    assert l_info.value.error_code == 40403
    with pytest.raises(SchemaNotFoundError) as i_info:
        await sr.schema_by_id(987654)
    assert i_info.value.schema_id == 987654
    assert "987654" in str(i_info.value)
    with pytest.raises(InvalidSchemaError):
        await sr.register(subj, Schema("{not json"))
    assert await sr.delete_subject(subj) == [1]
    with pytest.raises(SubjectNotFoundError):
        await sr.latest_version(subj)


@pytest.mark.anyio
async def test_basic_auth_and_bearer_token_and_no_secret_in_errors() -> None:
    password, token = "pw-" + uuid.uuid4().hex, "tok-" + uuid.uuid4().hex
    with RegistryServer(users={"alice": password}, token=token) as server:
        async with SchemaRegistryClient(server.url, basic_auth=("alice", password)) as ok:
            assert await ok.subjects() == []
            assert password not in repr(ok)
        # User info in the URL is taken out of it and used as basic auth.
        url = server.url.replace("http://", f"http://alice:{password}@")
        async with SchemaRegistryClient(url) as from_url:
            assert await from_url.subjects() == []
            assert password not in repr(from_url)
        calls = 0

        async def fresh_token() -> str:
            nonlocal calls
            calls += 1
            return token

        async with SchemaRegistryClient(server.url, bearer_token=fresh_token) as bearer:
            await bearer.register("s-value", Schema(V1))
            assert calls == 1
            # The deserializers' synchronous path cannot ask an async token source.
            with pytest.raises(SchemaRegistryConfigError):
                bearer.schema_by_id_blocking(999)
        async with SchemaRegistryClient(server.url, bearer_token=token) as sync_bearer:
            assert sync_bearer.schema_by_id_blocking(1).schema_str == V1
        wrong = "wrong-" + uuid.uuid4().hex
        async with SchemaRegistryClient(server.url, basic_auth=("alice", wrong)) as bad:
            with pytest.raises(RegistryAuthError) as info:
                await bad.subjects()
            assert info.value.status == 401
            assert wrong not in str(info.value)
            assert wrong not in repr(bad)
        async with SchemaRegistryClient(server.url, bearer_token=wrong) as bad_token:
            with pytest.raises(RegistryAuthError) as t_info:
                await bad_token.version("s-value", 1)
            assert wrong not in str(t_info.value)
    with pytest.raises(ConfigError):
        SchemaRegistryClient("http://u:p@127.0.0.1:1", basic_auth=("u", "p"))
    with pytest.raises(ConfigError):
        SchemaRegistryClient("http://127.0.0.1:1", basic_auth=("u", "p"), bearer_token="t")
    with pytest.raises(ConfigError):
        SchemaRegistryClient("ftp://127.0.0.1:1")


@pytest.mark.anyio
async def test_no_registry_is_a_retriable_error_at_the_deadline() -> None:
    port = _procs.free_port()  # nothing listens there
    async with SchemaRegistryClient(f"http://127.0.0.1:{port}", deadline_s=0.8) as sr:
        start = time.monotonic()
        with pytest.raises(RegistryUnavailableError) as info:
            await sr.subjects()
        assert time.monotonic() - start < 10
        assert info.value.retriable
        assert "0.8 s" in str(info.value)
        with pytest.raises(RegistryUnavailableError):
            sr.schema_by_id_blocking(1)


@pytest.mark.anyio
async def test_second_url_answers_when_the_first_does_not(registry: RegistryServer) -> None:
    dead = f"http://127.0.0.1:{_procs.free_port()}"
    async with SchemaRegistryClient(f"{dead},{registry.url}", deadline_s=10) as sr:
        assert isinstance(await sr.subjects(), list)


@pytest.mark.anyio
async def test_tls_with_a_private_ca(tmp_path: Path) -> None:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert_path, ca_path = tmp_path / "server.pem", tmp_path / "ca.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(cert_path))
    ca.cert_pem.write_to_path(str(ca_path))
    with RegistryServer(tls_cert=str(cert_path)) as server:
        assert server.url.startswith("https://")
        async with SchemaRegistryClient(server.url, verify=str(ca_path)) as sr:
            assert await sr.subjects() == []
        async with SchemaRegistryClient(server.url, deadline_s=1) as untrusted:
            with pytest.raises(SchemaRegistryError) as info:
                await untrusted.subjects()
            # A failed certificate check is not retried until the deadline.
            assert not isinstance(info.value, RegistryUnavailableError)
            assert "certificate" in str(info.value)


@pytest.mark.anyio
async def test_cache_answers_what_never_changes_without_the_registry() -> None:
    server = RegistryServer()
    server.start()
    try:
        async with SchemaRegistryClient(server.url, deadline_s=0.5) as sr:
            sid = await sr.register("c-value", Schema(V1))
            found = await sr.lookup("c-value", Schema(V1))
            assert (await sr.version("c-value", 1)).schema_id == sid
            server.stop()  # from here on, only the cache can answer
            assert await sr.register("c-value", Schema(V1)) == sid
            assert await sr.lookup("c-value", Schema(V1)) == found
            assert (await sr.schema_by_id(sid)).schema_str == V1
            assert sr.schema_by_id_blocking(sid).schema_str == V1
            assert (await sr.version("c-value", 1)).schema_id == sid
            with pytest.raises(RegistryUnavailableError):
                await sr.latest_version("c-value")  # "latest" moves: never cached
    finally:
        server.stop()
