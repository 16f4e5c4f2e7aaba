"""Issue 22, defect 3: ``start()`` against a port that refuses took ``request_timeout_ms``
(30 s) to fail, so a web service's start-up with a mistyped port hung.

When every bootstrap server refuses (or does not resolve), Producer, Consumer and
AdminClient ``start()`` now give up after about a second of retries with
``BootstrapUnreachableError`` naming each address; one good server among them is enough,
and a server that does not answer at all keeps the whole deadline."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from kafka_async import AdminClient, Consumer, Producer
from kafka_async.errors import (
    BootstrapUnreachableError,
    KafkaConnectionError,
    KafkaError,
    NoBrokersAvailableError,
)

pytestmark = pytest.mark.integration

#: Far longer than the test's own deadline: a start that waits for it fails the test.
LONG_MS = 100_000


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A loopback server that accepts connections (the kernel's backlog) and never
    answers a request."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield f"127.0.0.1:{s.getsockname()[1]}"


def make(
    kind: str, bootstrap: str, **settings: Any
) -> Producer | Consumer[bytes, bytes] | AdminClient:
    if kind == "producer":
        return Producer(bootstrap, **settings)
    if kind == "consumer":
        return Consumer(bootstrap_servers=bootstrap, **settings)
    return AdminClient(bootstrap, **settings)


@pytest.mark.parametrize("kind", ["producer", "consumer", "admin"])
@pytest.mark.anyio
async def test_start_fails_at_once_when_every_bootstrap_server_refuses(kind: str) -> None:
    ports = [closed_port(), closed_port()]
    bootstrap = ",".join(f"127.0.0.1:{p}" for p in ports)
    client = make(kind, bootstrap, request_timeout_ms=LONG_MS)
    with anyio.fail_after(60), pytest.raises(BootstrapUnreachableError) as info:
        await client.start()
    error = info.value
    assert isinstance(error, NoBrokersAvailableError)
    assert isinstance(error, KafkaConnectionError)
    assert sorted(error.errors) == sorted(f"127.0.0.1:{p}" for p in ports)
    for port in ports:
        assert f"127.0.0.1:{port}" in str(error)
    assert all("cannot connect" in why for why in error.errors.values())
    await client.close()  # closing a client whose start failed is harmless


@pytest.mark.anyio
async def test_one_reachable_server_among_refusing_ones_is_enough(kafka_broker: str) -> None:
    bootstrap = f"127.0.0.1:{closed_port()},{kafka_broker},127.0.0.1:{closed_port()}"
    for _ in range(3):  # the first server tried is picked at random
        with anyio.fail_after(60):
            async with AdminClient(bootstrap) as admin:
                assert await admin.describe_cluster()


@pytest.mark.anyio
async def test_a_server_that_does_not_answer_keeps_the_deadline(silent_server: str) -> None:
    bootstrap = f"127.0.0.1:{closed_port()},{silent_server}"
    client = Producer(bootstrap, request_timeout_ms=2_000)
    with anyio.fail_after(60), pytest.raises(KafkaError) as info:
        await client.start()
    assert not isinstance(info.value, BootstrapUnreachableError)
    assert "2000 ms" in str(info.value)
    await client.close()


def test_what_counts_as_refused_at_once() -> None:
    """An unresolvable name (``socket.gaierror``) and a refused or unreachable address end
    the start early; a connect that timed out does not (no DNS query is made here)."""
    from kafka_async.net.pool import refused_at_once

    def chained(cause: BaseException) -> KafkaConnectionError:
        inner = KafkaConnectionError("cannot connect")
        inner.__cause__ = cause
        outer = KafkaConnectionError(str(inner))
        outer.__cause__ = inner
        return outer

    assert refused_at_once(chained(socket.gaierror(-2, "Name or service not known")))
    assert refused_at_once(chained(ConnectionRefusedError(111, "Connection refused")))
    assert refused_at_once(chained(OSError(101, "Network is unreachable")))
    assert not refused_at_once(chained(TimeoutError()))
    assert not refused_at_once(KafkaConnectionError("connection closed"))
