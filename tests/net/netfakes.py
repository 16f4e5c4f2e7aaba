"""In-process stand-ins for sockets and brokers, for tests of the connection and pool logic.

``memory_stream_pair()`` gives two connected anyio byte streams. ``FakeBroker`` decodes
request frames with the real protocol definitions and answers them with scripted handlers,
in order, as a Kafka broker does. ``FakeNetwork`` is a ``StreamFactory`` mapping addresses to
fake brokers (or to refusals), counting connects.
"""

from __future__ import annotations

import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from kafka_async.net.config import ClientConfig
from kafka_async.protocol import headers
from kafka_async.protocol.apis import API_VERSIONS, BY_KEY
from kafka_async.protocol.codec import Reader


class MemoryByteStream(anyio.abc.ByteStream):
    """One end of an in-memory byte pipe."""

    def __init__(
        self, send: MemoryObjectSendStream[bytes], receive: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self._send = send
        self._receive = receive
        self._pending = b""
        self.closed = False
        #: While set to an unset Event, send() blocks (simulates a full socket buffer).
        self.gate: anyio.Event | None = None

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._pending:
            try:
                self._pending = await self._receive.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                if self.closed:
                    raise anyio.ClosedResourceError from None
                raise anyio.EndOfStream from None
        chunk, self._pending = self._pending[:max_bytes], self._pending[max_bytes:]
        return chunk

    async def send(self, item: bytes) -> None:
        if self.closed:
            raise anyio.ClosedResourceError
        if self.gate is not None:
            await self.gate.wait()
        try:
            await self._send.send(bytes(item))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise anyio.BrokenResourceError from None

    async def send_eof(self) -> None:
        await self._send.aclose()

    async def aclose(self) -> None:
        self.closed = True
        await self._send.aclose()
        await self._receive.aclose()


def memory_stream_pair() -> tuple[MemoryByteStream, MemoryByteStream]:
    a_send, b_recv = anyio.create_memory_object_stream[bytes](1000)
    b_send, a_recv = anyio.create_memory_object_stream[bytes](1000)
    return MemoryByteStream(a_send, a_recv), MemoryByteStream(b_send, b_recv)


async def read_frame(stream: anyio.abc.ByteReceiveStream, buf: bytearray) -> bytes:
    """Read one size-prefixed frame, keeping leftovers in ``buf``."""
    while len(buf) < 4:
        buf += await stream.receive()
    size = struct.unpack(">i", buf[:4])[0]
    while len(buf) < 4 + size:
        buf += await stream.receive()
    frame = bytes(buf[4 : 4 + size])
    del buf[: 4 + size]
    return frame


def frame(payload: bytes | bytearray) -> bytes:
    return struct.pack(">i", len(payload)) + bytes(payload)


@dataclass
class FakeRequest:
    api_key: int
    version: int
    correlation_id: int
    client_id: str | None
    body: Any


#: Returns the response body, or None to send nothing for this request.
Handler = Callable[[FakeRequest], Awaitable[Any]]

DEFAULT_VERSIONS: dict[int, tuple[int, int]] = {
    0: (0, 11),  # Produce
    3: (0, 12),  # Metadata
    10: (0, 6),  # FindCoordinator
    17: (0, 1),  # SaslHandshake
    18: (0, 4),  # ApiVersions
    36: (0, 2),  # SaslAuthenticate
}


async def echo_metadata(req: FakeRequest) -> dict[str, Any]:
    """A Metadata handler answering with one broker per requested topic named "<n>"."""
    names = [t.name for t in req.body.topics or []]
    return {
        "brokers": [{"node_id": int(n), "host": f"b{n}", "port": 9092} for n in names],
        "topics": [],
    }


@dataclass
class FakeBroker:
    """Answers requests in order with per-API handlers; records everything it saw."""

    versions: dict[int, tuple[int, int]] = field(default_factory=lambda: dict(DEFAULT_VERSIONS))
    handlers: dict[int, Handler] = field(default_factory=dict)
    requests: list[FakeRequest] = field(default_factory=list)
    streams: list[MemoryByteStream] = field(default_factory=list)
    api_versions_seen: list[int] = field(default_factory=list)

    async def serve(self, stream: MemoryByteStream) -> None:
        self.streams.append(stream)
        buf = bytearray()
        try:
            while True:
                data = await read_frame(stream, buf)
                r = Reader(data)
                api_key, version, cid, client_id = headers.decode_request_header(r)
                api = BY_KEY[api_key]
                if headers.request_header_version(api, version) >= 2:
                    headers.skip_tags(r)
                if api_key == API_VERSIONS.key and api_key not in self.handlers:
                    await self._api_versions(stream, version, cid)
                    continue
                body = api.decode_request(version, r)
                req = FakeRequest(api_key, version, cid, client_id, body)
                self.requests.append(req)
                handler = self.handlers.get(api_key)
                if handler is None:
                    continue
                response = await handler(req)
                if response is None:
                    continue
                await stream.send(frame(headers.encode_response(api, version, cid, response)))
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            await stream.aclose()

    async def _api_versions(self, stream: MemoryByteStream, version: int, cid: int) -> None:
        self.api_versions_seen.append(version)
        _lo, hi = self.versions[API_VERSIONS.key]
        keys = [
            {"api_key": k, "min_version": v[0], "max_version": v[1]}
            for k, v in sorted(self.versions.items())
        ]
        if version > hi:
            # KIP-511: answer in v0 with UNSUPPORTED_VERSION and our range.
            body = API_VERSIONS.encode_response(0, {"error_code": 35, "api_keys": keys})
            await stream.send(frame(struct.pack(">i", cid) + body))
            return
        resp = headers.encode_response(API_VERSIONS, version, cid, {"api_keys": keys})
        await stream.send(frame(resp))


@dataclass
class FakeNetwork:
    """A StreamFactory: address -> FakeBroker (served in ``tg``), or refused."""

    tg: anyio.abc.TaskGroup
    brokers: dict[tuple[str, int], FakeBroker] = field(default_factory=dict)
    connects: list[tuple[str, int]] = field(default_factory=list)
    client_streams: list[MemoryByteStream] = field(default_factory=list)
    connect_delay: float = 0.0

    async def __call__(self, host: str, port: int, config: ClientConfig) -> anyio.abc.ByteStream:
        self.connects.append((host, port))
        if self.connect_delay:
            await anyio.sleep(self.connect_delay)
        broker = self.brokers.get((host, port))
        if broker is None:
            raise ConnectionRefusedError(f"nothing listens on {host}:{port}")
        client, server = memory_stream_pair()
        self.client_streams.append(client)
        self.tg.start_soon(broker.serve, server)
        return client
