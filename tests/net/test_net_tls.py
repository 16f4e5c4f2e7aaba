"""TLS on a real socket: a loopback TLS server with a throwaway CA speaks our framing.

The server is a few lines answering ApiVersions and Metadata (Tansu's TLS flags do not give
a handshake in the build we use, see the design notes), so this checks our side: the
context, the server name check and framing over the TLS stream.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import pytest
from anyio.streams.tls import TLSListener

from kafka_async.errors import KafkaConnectionError
from kafka_async.net.config import ClientConfig
from kafka_async.net.connection import BrokerConnection
from kafka_async.protocol import headers
from kafka_async.protocol.apis import API_VERSIONS, METADATA
from kafka_async.protocol.apis.metadata import MetadataRequest
from kafka_async.protocol.codec import Reader
from tests.harness.tls import CertificateAuthority

pytest.importorskip("cryptography")

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"]),
]


def _certs(tmp: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate for 127.0.0.1 signed by it: (ca, cert, key) paths."""
    ca = CertificateAuthority()
    cert, key = ca.issue("127.0.0.1").write(tmp / "cert.pem", tmp / "key.pem")
    return ca.write(tmp / "ca.pem"), cert, key


async def _serve(stream: anyio.abc.ByteStream) -> None:
    buf = bytearray()
    try:
        while True:
            buf += await stream.receive()
            while len(buf) >= 4 and len(buf) >= 4 + int.from_bytes(buf[:4], "big"):
                size = int.from_bytes(buf[:4], "big")
                r = Reader(bytes(buf[4 : 4 + size]))
                del buf[: 4 + size]
                api_key, version, cid, _ = headers.decode_request_header(r)
                if api_key == API_VERSIONS.key:
                    keys = [
                        {"api_key": 3, "min_version": 0, "max_version": 12},
                        {"api_key": 18, "min_version": 0, "max_version": 4},
                    ]
                    out = headers.encode_response(API_VERSIONS, version, cid, {"api_keys": keys})
                else:
                    body = {"brokers": [{"node_id": 5, "host": "tls", "port": 1}], "topics": []}
                    out = headers.encode_response(METADATA, version, cid, body)
                await stream.send(len(out).to_bytes(4, "big") + bytes(out))
    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, ssl.SSLError):
        pass


@asynccontextmanager
async def tls_server(tmp_path: Path) -> AsyncIterator[tuple[int, Path]]:
    ca, cert, key = _certs(tmp_path)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    tcp = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = tcp.extra(anyio.abc.SocketAttribute.local_port)
    listener = TLSListener(tcp, server_ctx, standard_compatible=False)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, _serve)
        try:
            yield port, ca
        finally:
            tg.cancel_scope.cancel()


async def test_tls_connection_verifies_the_server_and_frames_requests(tmp_path: Path) -> None:
    async with tls_server(tmp_path) as (port, ca):
        ctx = ssl.create_default_context(cafile=str(ca))
        cfg = ClientConfig(
            bootstrap_servers=f"127.0.0.1:{port}", security_protocol="SSL", ssl_context=ctx
        )
        with anyio.fail_after(10):
            async with BrokerConnection("127.0.0.1", port, cfg) as conn:
                assert conn.version_for(METADATA) == 12
                results = []

                async def one() -> None:
                    results.append(
                        (await conn.request(METADATA, MetadataRequest(topics=[]))).brokers
                    )

                async with anyio.create_task_group() as tg:
                    for _ in range(20):
                        tg.start_soon(one)
                assert len(results) == 20
                assert all(b[0].node_id == 5 for b in results)


async def test_tls_rejects_an_untrusted_server(tmp_path: Path) -> None:
    async with tls_server(tmp_path) as (port, _):
        cfg = ClientConfig(
            bootstrap_servers=f"127.0.0.1:{port}",
            security_protocol="SSL",
            ssl_context=ssl.create_default_context(),  # system CAs do not know our test CA
        )
        async with anyio.create_task_group() as tg:
            conn = BrokerConnection("127.0.0.1", port, cfg)
            with anyio.fail_after(10), pytest.raises(KafkaConnectionError, match="cannot connect"):
                await conn.connect(tg)
