"""A minimal one-request-at-a-time Kafka wire client for the test harness.

The harness must work while ``kafka_async.net`` is still being written (and must keep working
if a bug lands there), so it speaks the protocol itself over a plain socket: one frame out,
one frame back, with the schema definitions of ``kafka_async.protocol``. It is not a client:
no pipelining, no retries, a fresh connection per call.

Both a blocking flavour (``request``) and an anyio flavour (``arequest``) exist because the
harness is used from synchronous fixtures as well as from inside event loops.
"""

from __future__ import annotations

import socket
import struct
import time

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

from ..errors import KafkaConnectionError, KafkaTimeoutError, ProtocolDecodeError
from ..protocol import headers
from ..protocol.apis import API_VERSIONS
from ..protocol.apis.api_versions import ApiVersionsRequest, ApiVersionsResponse
from ..protocol.codec import Reader
from ..protocol.schema import AnyApi, Api, ReqT, RespT

CLIENT_ID = "kafka-async-testing"
#: Responses larger than this are refused before reading their body.
MAX_RESPONSE_SIZE = 100 * 1024 * 1024
_SIZE = struct.Struct(">i")
#: ApiVersions v0 is answered by every broker, which is what a readiness probe needs.
PROBE_VERSION = 0
#: Deadline of one readiness probe, seconds.
PROBE_TIMEOUT = 0.5
#: Deadline of one request, seconds, unless the caller gives another.
DEFAULT_TIMEOUT = 10.0


def parse_address(address: str) -> tuple[str, int]:
    """Split ``"host:port"`` (the first server of a comma list); IPv6 may be bracketed."""
    first = address.split(",")[0].strip()
    host, sep, port = first.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"not a host:port address: {address!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def encode_frame(api: AnyApi, version: int, correlation_id: int, body: object) -> bytes:
    """A size-prefixed request frame."""
    payload = headers.encode_request(api, version, correlation_id, CLIENT_ID, body)
    return _SIZE.pack(len(payload)) + bytes(payload)


def decode_payload(
    api: Api[ReqT, RespT], version: int, correlation_id: int, payload: bytes
) -> RespT:
    """Decode a response frame body (without its size prefix), checking the correlation id."""
    r = Reader(payload)
    got = headers.read_response_header(r, api, version)
    if got != correlation_id:
        raise ProtocolDecodeError(f"correlation id {got} does not match request {correlation_id}")
    return api.decode_response(version, r)


def check_frame_size(size: int) -> int:
    if size < 0 or size > MAX_RESPONSE_SIZE:
        raise ProtocolDecodeError(f"response frame size {size} out of range")
    return size


def pick_version(api: AnyApi, broker_versions: ApiVersionsResponse) -> int:
    """The highest version of ``api`` both sides support, from an ApiVersions response."""
    for entry in broker_versions.api_keys:
        if entry.api_key == api.key:
            hi = min(entry.max_version, api.max_version)
            if hi < max(entry.min_version, api.min_version):
                break
            return int(hi)
    raise KafkaConnectionError(f"the broker supports no version of {api.name} that we know")


# --------------------------------------------------------------------------------------------
# Blocking flavour
# --------------------------------------------------------------------------------------------


def _recv_exact(sock: socket.socket, n: int, deadline: float) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise KafkaTimeoutError("timed out waiting for a response")
        sock.settimeout(left)
        try:
            chunk = sock.recv(n - len(chunks))
        except TimeoutError as exc:
            raise KafkaTimeoutError("timed out waiting for a response") from exc
        except OSError as exc:
            raise KafkaConnectionError(f"connection failed: {exc}") from exc
        if not chunk:
            raise KafkaConnectionError("connection closed by the broker")
        chunks += chunk
    return bytes(chunks)


def _roundtrip_sync(
    sock: socket.socket,
    api: Api[ReqT, RespT],
    version: int,
    cid: int,
    body: ReqT,
    deadline: float,
) -> RespT:
    frame = encode_frame(api, version, cid, body)
    left = deadline - time.monotonic()
    if left <= 0:
        raise KafkaTimeoutError("timed out before sending the request")
    sock.settimeout(left)
    try:
        sock.sendall(frame)
    except TimeoutError as exc:
        raise KafkaTimeoutError("timed out sending the request") from exc
    except OSError as exc:
        raise KafkaConnectionError(f"connection failed: {exc}") from exc
    size = check_frame_size(_SIZE.unpack(_recv_exact(sock, 4, deadline))[0])
    return decode_payload(api, version, cid, _recv_exact(sock, size, deadline))


def request(
    address: str,
    api: Api[ReqT, RespT],
    body: ReqT,
    *,
    version: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> RespT:
    """Send one request to ``address`` and return its decoded response (blocking).

    With ``version=None`` an ApiVersions exchange first picks the highest common version.
    """
    host, port = parse_address(address)
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except TimeoutError as exc:
        raise KafkaTimeoutError(f"timed out connecting to {address}") from exc
    except OSError as exc:
        raise KafkaConnectionError(f"cannot connect to {address}: {exc}") from exc
    with sock:
        cid = 1
        if version is None:
            versions = _roundtrip_sync(
                sock, API_VERSIONS, PROBE_VERSION, cid, ApiVersionsRequest(), deadline
            )
            version = pick_version(api, versions)
            cid += 1
        return _roundtrip_sync(sock, api, version, cid, body, deadline)


def probe(address: str, timeout: float = PROBE_TIMEOUT) -> bool:
    """True when a broker at ``address`` answers ApiVersions without an error code."""
    try:
        resp = request(
            address, API_VERSIONS, ApiVersionsRequest(), version=PROBE_VERSION, timeout=timeout
        )
    except (KafkaConnectionError, KafkaTimeoutError, ProtocolDecodeError, ValueError):
        return False
    return bool(resp.error_code == 0 and resp.api_keys)


# --------------------------------------------------------------------------------------------
# anyio flavour
# --------------------------------------------------------------------------------------------


async def _roundtrip_async(
    stream: anyio.abc.ByteStream,
    rx: BufferedByteReceiveStream,
    api: Api[ReqT, RespT],
    version: int,
    cid: int,
    body: ReqT,
) -> RespT:
    await stream.send(encode_frame(api, version, cid, body))
    size = check_frame_size(_SIZE.unpack(await rx.receive_exactly(4))[0])
    return decode_payload(api, version, cid, await rx.receive_exactly(size))


async def arequest(
    address: str,
    api: Api[ReqT, RespT],
    body: ReqT,
    *,
    version: int | None = None,
) -> RespT:
    """Send one request to ``address`` and return its decoded response (anyio).

    Gives up after :data:`DEFAULT_TIMEOUT` seconds (``KafkaTimeoutError``); wrap the call in
    ``anyio.fail_after`` for a shorter deadline.
    """
    host, port = parse_address(address)
    try:
        with anyio.fail_after(DEFAULT_TIMEOUT):
            async with await anyio.connect_tcp(host, port) as stream:
                rx = BufferedByteReceiveStream(stream)
                cid = 1
                if version is None:
                    versions = await _roundtrip_async(
                        stream, rx, API_VERSIONS, PROBE_VERSION, cid, ApiVersionsRequest()
                    )
                    version = pick_version(api, versions)
                    cid += 1
                return await _roundtrip_async(stream, rx, api, version, cid, body)
    except TimeoutError as exc:
        raise KafkaTimeoutError(f"timed out talking to {address}") from exc
    except (OSError, anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError) as exc:
        raise KafkaConnectionError(f"connection to {address} failed: {exc!r}") from exc


async def aprobe(address: str) -> bool:
    """Async :func:`probe`, with a deadline of :data:`PROBE_TIMEOUT` seconds."""
    resp = None
    with anyio.move_on_after(PROBE_TIMEOUT):
        try:
            resp = await arequest(
                address, API_VERSIONS, ApiVersionsRequest(), version=PROBE_VERSION
            )
        except (KafkaConnectionError, KafkaTimeoutError, ProtocolDecodeError, ValueError):
            return False
    if resp is None:
        return False
    return bool(resp.error_code == 0 and resp.api_keys)
