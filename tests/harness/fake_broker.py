"""``FakeBroker``: a hostile in-process Kafka broker that answers with whatever bytes a test
scripts.

A real broker never sends a truncated Metadata response, a frame of 2^31-1 bytes, a Fetch
response whose zstd batch inflates to gigabytes or a correlation id that answers another
request; a client must still survive all of them with one typed error. This broker speaks
just enough Kafka for a client to bootstrap (ApiVersions and Metadata answered properly) and
lets a test script the answer to any request::

    async with FakeBroker(topics={"t": 1}) as broker:
        broker.script(METADATA.key, lambda req: Payload(b"\\x00\\x00"), count=1)
        async with ClusterClient(ClientConfig(bootstrap_servers=broker.address)) as client:
            ...

A handler gets a :class:`FakeRequest` (header fields and the decoded body) and returns what
to send back:

* a message object (or a plain dict): encoded with ``kafka_async.protocol`` at the request's
  version, with the right header and size prefix (a well-formed answer);
* :class:`Payload` (bytes after the size prefix; the correlation id is the handler's job,
  :func:`response_payload` builds a proper one): framed with a correct size prefix;
* :class:`Raw`: written to the socket exactly as given (bad size prefixes, partial frames);
* :data:`SILENCE`: no answer at all (a black hole), :data:`CLOSE`: the connection is closed.

Requests with no script and no built-in answer close the connection. The broker runs in the
task group of whoever enters it (``async with``); everything lives on 127.0.0.1.
"""

from __future__ import annotations

import json
import struct
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from kafka_async.errors import KafkaError, UnknownTopicOrPartitionError, UnsupportedVersionError
from kafka_async.protocol import headers
from kafka_async.protocol.apis import (
    API_VERSIONS,
    BY_KEY,
    GET_TELEMETRY_SUBSCRIPTIONS,
    METADATA,
    PUSH_TELEMETRY,
)
from kafka_async.protocol.apis.api_versions import ApiVersion, ApiVersionsResponse
from kafka_async.protocol.apis.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kafka_async.protocol.codec import Reader
from kafka_async.protocol.schema import AnyApi

__all__ = [
    "CLOSE",
    "SILENCE",
    "FakeBroker",
    "FakeRequest",
    "MskIamServer",
    "Payload",
    "Raw",
    "frame",
    "response_payload",
]

_SIZE = struct.Struct(">i")
#: A request frame above this is not something a test client sends; the connection closes.
_MAX_REQUEST = 64 * 1024 * 1024


@dataclass(frozen=True)
class FakeRequest:
    """A request as the fake broker received it."""

    connection_id: int
    api: AnyApi | None
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    #: The decoded request body; None when the API is unknown or the body did not decode.
    body: Any


@dataclass(frozen=True)
class Payload:
    """Response bytes after the size prefix (header included); the broker frames them."""

    data: bytes
    #: Close the connection right after sending.
    close: bool = False


@dataclass(frozen=True)
class Raw:
    """Bytes written to the socket as they are (size prefix included, or not)."""

    data: bytes
    #: Close the connection right after sending (a frame cut short by a dying broker).
    close: bool = False


class _Silence:
    def __repr__(self) -> str:
        return "SILENCE"


class _Close:
    def __repr__(self) -> str:
        return "CLOSE"


#: Answer nothing: the request stays unanswered (a half-open peer).
SILENCE = _Silence()
#: Close the connection instead of answering.
CLOSE = _Close()

Reply = Any  # a message object or dict, Payload, Raw, SILENCE or CLOSE
Handler = Callable[[FakeRequest], "Reply | Awaitable[Reply]"]


def response_payload(api: AnyApi, version: int, correlation_id: int, body: Any) -> bytes:
    """A well-formed response (header + body, no size prefix), to mutate or cut."""
    return bytes(headers.encode_response(api, version, correlation_id, body))


def frame(payload: bytes, size: int | None = None) -> bytes:
    """``payload`` with a size prefix (``size`` overrides the true length, for lies)."""
    return _SIZE.pack(len(payload) if size is None else size) + payload


@dataclass
class _Script:
    handler: Handler
    remaining: int | None


@dataclass
class FakeBrokerStats:
    """Counters since the broker started."""

    connections: int = 0
    open_connections: int = 0
    requests: int = 0
    requests_by_api: dict[int, int] = field(default_factory=dict)


class FakeBroker:
    """An in-process Kafka broker with scripted answers (see the module docstring).

    Args:
        topics: topic name -> partition count; Metadata reports this broker as every
            partition's leader unless :attr:`leaders` says otherwise.
        node_id: this broker's id in Metadata.
        api_versions: per API key, a ``(min, max)`` range replacing the advertised one (the
            default advertises every version ``kafka_async.protocol`` defines).
    """

    def __init__(
        self,
        topics: Mapping[str, int] | None = None,
        *,
        node_id: int = 1,
        api_versions: Mapping[int, tuple[int, int]] | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.host = host
        self.node_id = node_id
        self.topics: dict[str, int] = dict(topics or {})
        self.topic_ids: dict[str, uuid.UUID] = {name: uuid.uuid4() for name in self.topics}
        #: (topic, partition) -> leader node id, for partitions led by another broker.
        self.leaders: dict[tuple[str, int], int] = {}
        #: (topic, partition) -> the leader epoch Metadata reports (default 0).
        self.leader_epochs: dict[tuple[str, int], int] = {}
        #: Brokers Metadata lists: (node_id, host, port); this broker is added at start.
        self.peers: list[tuple[int, str, int]] = []
        self.cluster_id = "fake-cluster"
        # Not the client-telemetry APIs (KIP-714): a broker offers them only with a telemetry
        # plugin, and this one would close the connection on them (no built-in answer).
        self.api_versions: dict[int, tuple[int, int]] = {
            key: (api.min_version, api.max_version)
            for key, api in BY_KEY.items()
            if key not in (GET_TELEMETRY_SUBSCRIPTIONS.key, PUSH_TELEMETRY.key)
        }
        self.api_versions.update(api_versions or {})
        self.stats = FakeBrokerStats()
        #: Every request received (newest last).
        self.requests: deque[FakeRequest] = deque(maxlen=10_000)
        self._scripts: dict[int, deque[_Script]] = {}
        self._defaults: dict[int, Handler] = {
            API_VERSIONS.key: self._api_versions_reply,
            METADATA.key: self.metadata_reply,
        }
        self._listener: anyio.abc.SocketListener | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._conn_ids = 0
        self._streams: dict[int, anyio.abc.SocketStream] = {}
        self._request_seen = anyio.Event()

    # -- addresses -----------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._listener is None:
            raise RuntimeError("the fake broker is not running")
        return int(self._listener.extra(anyio.abc.SocketAttribute.local_port))

    @property
    def address(self) -> str:
        """``"host:port"`` to bootstrap from."""
        return f"{self.host}:{self.port}"

    def __repr__(self) -> str:
        where = self.address if self._listener is not None else "stopped"
        return f"<FakeBroker node {self.node_id} {where} requests={self.stats.requests}>"

    # -- scripting -------------------------------------------------------------------------

    def script(self, api_key: int, handler: Handler, count: int | None = None) -> None:
        """Answer the next ``count`` requests of ``api_key`` (all, if None) with ``handler``.

        Scripts of one API queue up: when one is used up the next applies, then the default.
        """
        self._scripts.setdefault(api_key, deque()).append(_Script(handler, count))

    def set_default(self, api_key: int, handler: Handler) -> None:
        """The answer to ``api_key`` requests once its scripts are used up."""
        self._defaults[api_key] = handler

    def clear_scripts(self) -> None:
        """Forget every script (defaults stay)."""
        self._scripts.clear()

    def close_connections(self) -> int:
        """Close every open client connection (right away, in the broker's task group);
        returns how many."""
        streams = list(self._streams.values())
        self._streams.clear()
        if self._tg is not None:
            for stream in streams:
                self._tg.start_soon(stream.aclose)
        return len(streams)

    async def wait_for_request(self, api_key: int, timeout: float = 10.0) -> FakeRequest:  # noqa: ASYNC109
        """The first request of ``api_key`` that arrives after this call."""
        start = self.stats.requests
        with anyio.fail_after(timeout):
            while True:
                event = self._request_seen
                new = min(self.stats.requests - start, len(self.requests))
                if new:
                    for req in list(self.requests)[-new:]:
                        if req.api_key == api_key:
                            return req
                await event.wait()

    def _handler_for(self, api_key: int) -> Handler | None:
        queue = self._scripts.get(api_key)
        while queue:
            head = queue[0]
            if head.remaining is None:
                return head.handler
            if head.remaining > 0:
                head.remaining -= 1
                if head.remaining == 0:
                    queue.popleft()
                return head.handler
            queue.popleft()
        return self._defaults.get(api_key)

    # -- built-in answers ------------------------------------------------------------------

    def _api_versions_reply(self, req: FakeRequest) -> Reply:
        # Every error_code left out is 0: no error.
        body = ApiVersionsResponse(
            api_keys=[
                ApiVersion(api_key=k, min_version=lo, max_version=hi)
                for k, (lo, hi) in sorted(self.api_versions.items())
            ],
            throttle_time_ms=0,
        )
        if req.api is not None and req.api_version > API_VERSIONS.max_version:
            # KIP-511: an unknown version is answered at v0 with UNSUPPORTED_VERSION.
            body.error_code = UnsupportedVersionError.code
            return Payload(response_payload(API_VERSIONS, 0, req.correlation_id, body))
        return body

    def metadata_body(self, topics: list[str] | None = None) -> MetadataResponse:
        """The Metadata response this broker gives (for tests that change it first)."""
        brokers = [(self.node_id, self.host, self.port), *self.peers]
        names = list(self.topics) if topics is None else topics
        out_topics = []
        for name in names:
            if name not in self.topics:
                out_topics.append(
                    MetadataResponseTopic(
                        error_code=UnknownTopicOrPartitionError.code,
                        name=name,
                        topic_id=uuid.UUID(int=0),
                        partitions=[],
                    )
                )
                continue
            parts = []
            for p in range(self.topics[name]):
                leader = self.leaders.get((name, p), self.node_id)
                parts.append(
                    MetadataResponsePartition(
                        partition_index=p,
                        leader_id=leader,
                        leader_epoch=self.leader_epochs.get((name, p), 0),
                        replica_nodes=[leader],
                        isr_nodes=[leader],
                        offline_replicas=[],
                    )
                )
            out_topics.append(
                MetadataResponseTopic(
                    name=name,
                    topic_id=self.topic_ids[name],
                    is_internal=False,
                    partitions=parts,
                )
            )
        return MetadataResponse(
            throttle_time_ms=0,
            brokers=[
                MetadataResponseBroker(node_id=n, host=h, port=p, rack=None) for n, h, p in brokers
            ],
            cluster_id=self.cluster_id,
            controller_id=self.node_id,
            topics=out_topics,
        )

    def metadata_reply(self, req: FakeRequest) -> Reply:
        """The default Metadata answer: every known topic (or the ones asked for)."""
        topics = None
        body = req.body
        if body is not None and getattr(body, "topics", None) is not None:
            topics = [t.name for t in body.topics if t.name is not None]
        return self.metadata_body(topics)

    # -- life cycle ------------------------------------------------------------------------

    async def __aenter__(self) -> FakeBroker:
        multi = await anyio.create_tcp_listener(local_host=self.host, local_port=0)
        first = multi.listeners[0]
        assert isinstance(first, anyio.abc.SocketListener)
        for extra in multi.listeners[1:]:
            await extra.aclose()
        self._listener = first
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        tg.start_soon(self._accept_loop, first)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        tg, self._tg = self._tg, None
        assert tg is not None
        tg.cancel_scope.cancel()
        try:
            return await tg.__aexit__(exc_type, exc, tb)
        finally:
            with anyio.CancelScope(shield=True):
                if self._listener is not None:
                    await self._listener.aclose()
            # Keep _listener set so address/port stay readable in failure messages.

    async def _accept_loop(self, listener: anyio.abc.SocketListener) -> None:
        while True:
            stream = await listener.accept()
            assert self._tg is not None
            self._conn_ids += 1
            self._tg.start_soon(self._serve, self._conn_ids, stream)

    async def _serve(self, cid: int, stream: anyio.abc.SocketStream) -> None:
        self.stats.connections += 1
        self.stats.open_connections += 1
        self._streams[cid] = stream
        buffered = BufferedByteReceiveStream(stream)
        try:
            async with stream:
                while True:
                    prefix = await buffered.receive_exactly(4)
                    size = _SIZE.unpack(prefix)[0]
                    if not 8 <= size <= _MAX_REQUEST:
                        return
                    data = await buffered.receive_exactly(size)
                    req = self._parse(cid, data)
                    if req is None:
                        return
                    if not await self._answer(stream, req):
                        return
        except (
            anyio.EndOfStream,
            anyio.IncompleteRead,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            OSError,
        ):
            return
        finally:
            self._streams.pop(cid, None)
            self.stats.open_connections -= 1

    def _parse(self, cid: int, data: bytes) -> FakeRequest | None:
        r = Reader(data)
        try:
            api_key, version, corr, client_id = headers.decode_request_header(r)
        except KafkaError:
            return None
        api = BY_KEY.get(api_key)
        body = None
        if api is not None and version in api.versions:
            try:
                if headers.request_header_version(api, version) >= 2:
                    headers.skip_tags(r)
                body = api.decode_request(version, r)
            except KafkaError:
                body = None
        req = FakeRequest(cid, api, api_key, version, corr, client_id, body)
        self.stats.requests += 1
        self.stats.requests_by_api[api_key] = self.stats.requests_by_api.get(api_key, 0) + 1
        self.requests.append(req)
        event, self._request_seen = self._request_seen, anyio.Event()
        event.set()
        return req

    async def _answer(self, stream: anyio.abc.SocketStream, req: FakeRequest) -> bool:
        """Send the scripted answer; False when the connection must close."""
        handler = self._handler_for(req.api_key)
        if handler is None:
            return False
        reply = handler(req)
        if isinstance(reply, Awaitable):
            reply = await reply
        if reply is SILENCE:
            return True
        if reply is CLOSE:
            return False
        keep_open = True
        if isinstance(reply, Raw):
            data, keep_open = reply.data, not reply.close
        elif isinstance(reply, Payload):
            data, keep_open = frame(reply.data), not reply.close
        else:
            if req.api is None:
                return False
            data = frame(response_payload(req.api, req.api_version, req.correlation_id, reply))
        if data:
            await stream.send(data)
        return keep_open


# --------------------------------------------------------------------------------------------
# AWS_MSK_IAM: the broker side of MSK's IAM login (issue 24)
# --------------------------------------------------------------------------------------------

#: The payload fields that are SigV4 query parameters, lower-cased -> as signed.
_MSK_SIGNED_QUERY = {
    "action": "Action",
    "x-amz-algorithm": "X-Amz-Algorithm",
    "x-amz-credential": "X-Amz-Credential",
    "x-amz-date": "X-Amz-Date",
    "x-amz-expires": "X-Amz-Expires",
    "x-amz-signedheaders": "X-Amz-SignedHeaders",
    "x-amz-security-token": "X-Amz-Security-Token",
}


class MskIamServer:
    """The broker side of ``AWS_MSK_IAM`` on a :class:`FakeBroker` (no MSK here).

    It checks a login as MSK must: the JSON payload's version and action, the signed host
    against this broker's name, the region and service of the credential scope, the signing
    time against ``clock`` (not expired, not from the future), the access key id against
    ``secrets`` and the signature, recomputed with botocore's SigV4 code (an implementation
    independent of the client's) from the known secret. A refusal is SaslAuthenticate's
    SASL_AUTHENTICATION_FAILED with a message naming the cause; success answers
    ``{"version": "2020_10_22", "request-id": ...}``. Metadata and Produce are answered only
    on authenticated connections (others are closed).
    """

    def __init__(
        self,
        secrets: Mapping[str, str],
        *,
        host: str,
        region: str,
        clock: Callable[[], float] | None = None,
        max_skew: float = 300.0,
        session_lifetime_ms: int = 0,
    ) -> None:
        import time

        self.secrets = dict(secrets)
        self.host = host
        self.region = region
        self.clock = clock or time.time
        self.max_skew = max_skew
        #: Sent with a successful login (KIP-368; MSK limits sessions to the credentials').
        self.session_lifetime_ms = session_lifetime_ms
        #: Login outcomes in order: "ok" or the refusal's reason.
        self.outcomes: list[str] = []
        #: Every payload received (decoded JSON objects).
        self.payloads: list[dict[str, Any]] = []
        self._authenticated: set[int] = set()

    def install(self, broker: FakeBroker, *, guarded: tuple[int, ...] = ()) -> None:
        """Answer SaslHandshake/SaslAuthenticate on ``broker``; Metadata (and the APIs in
        ``guarded``) only for authenticated connections."""
        from kafka_async.protocol.apis import SASL_AUTHENTICATE, SASL_HANDSHAKE

        broker.set_default(SASL_HANDSHAKE.key, self._handshake)
        broker.set_default(SASL_AUTHENTICATE.key, self._authenticate)
        for key in (METADATA.key, *guarded):
            handler = broker._defaults.get(key)
            if handler is not None:
                broker.set_default(key, self._guard(handler))

    def _guard(self, handler: Handler) -> Handler:
        def guarded(req: FakeRequest) -> Reply:
            if req.connection_id not in self._authenticated:
                return CLOSE
            return handler(req)

        return guarded

    def _handshake(self, req: FakeRequest) -> Reply:
        from kafka_async.errors import UnsupportedSaslMechanismError
        from kafka_async.protocol.apis.sasl_handshake import SaslHandshakeResponse

        if req.body.mechanism != "AWS_MSK_IAM":
            return SaslHandshakeResponse(
                error_code=UnsupportedSaslMechanismError.code, mechanisms=["AWS_MSK_IAM"]
            )
        return SaslHandshakeResponse(mechanisms=["AWS_MSK_IAM"])

    def _authenticate(self, req: FakeRequest) -> Reply:
        from kafka_async.errors import SaslAuthenticationFailedError
        from kafka_async.protocol.apis.sasl_authenticate import SaslAuthenticateResponse

        why = self.check(bytes(req.body.auth_bytes))
        self.outcomes.append(why or "ok")
        if why is not None:
            self._authenticated.discard(req.connection_id)
            return SaslAuthenticateResponse(
                error_code=SaslAuthenticationFailedError.code,
                error_message=f"[{uuid.uuid4()}]: Access denied: {why}",
                auth_bytes=b"",
                session_lifetime_ms=0,
            )
        self._authenticated.add(req.connection_id)
        answer = {"version": "2020_10_22", "request-id": str(uuid.uuid4())}
        return SaslAuthenticateResponse(
            error_code=0,
            error_message=None,
            auth_bytes=json.dumps(answer).encode(),
            session_lifetime_ms=self.session_lifetime_ms,
        )

    def check(self, data: bytes) -> str | None:
        """None if ``data`` is a valid login for this broker, else the reason it is not."""
        import hmac
        from datetime import datetime, timezone
        from urllib.parse import quote

        from botocore.auth import SigV4QueryAuth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        try:
            payload = json.loads(data)
        except ValueError:
            return "the payload is not JSON"
        if not isinstance(payload, dict) or not all(isinstance(v, str) for v in payload.values()):
            return "the payload is not an object of strings"
        self.payloads.append(payload)
        if payload.get("version") != "2020_10_22":
            return f"unknown payload version {payload.get('version')!r}"
        if payload.get("action") != "kafka-cluster:Connect":
            return f"unexpected action {payload.get('action')!r}"
        if payload.get("host") != self.host:
            return f"signed for host {payload.get('host')!r}, this broker is {self.host!r}"
        if payload.get("x-amz-algorithm") != "AWS4-HMAC-SHA256":
            return "unsupported signing algorithm"
        if payload.get("x-amz-signedheaders") != "host":
            return "the signed headers must be exactly 'host'"
        scope = payload.get("x-amz-credential", "").split("/")
        if len(scope) != 5 or scope[4] != "aws4_request":
            return "malformed credential scope"
        key_id, day, region, service = scope[:4]
        if region != self.region or service != "kafka-cluster":
            return (
                f"credential scope is for {region}/{service}, expected {self.region}/kafka-cluster"
            )
        try:
            signed_at = datetime.strptime(payload["x-amz-date"], "%Y%m%dT%H%M%SZ").replace(
                tzinfo=timezone.utc
            )
            expires = int(payload["x-amz-expires"])
        except (KeyError, ValueError):
            return "malformed x-amz-date or x-amz-expires"
        if day != payload["x-amz-date"][:8]:
            return "credential scope date differs from x-amz-date"
        now = self.clock()
        if now > signed_at.timestamp() + expires:
            return f"the signature expired at {signed_at.timestamp() + expires:.0f} (now {now:.0f})"
        if signed_at.timestamp() > now + self.max_skew:
            return "the signature was made in the future (clock skew)"
        secret = self.secrets.get(key_id)
        if secret is None:
            return f"unknown access key id {key_id!r}"
        query = "&".join(
            f"{quote(name, safe='-_.~')}={quote(payload[field], safe='-_.~')}"
            for field, name in _MSK_SIGNED_QUERY.items()
            if field in payload
        )
        request = AWSRequest(method="GET", url=f"https://{self.host}/?{query}")
        request.context["timestamp"] = payload["x-amz-date"]
        auth = SigV4QueryAuth(
            Credentials(key_id, secret, payload.get("x-amz-security-token")),
            "kafka-cluster",
            region,
            expires=expires,
        )
        canonical = auth.canonical_request(request)
        expected = auth.signature(auth.string_to_sign(request, canonical), request)
        if not hmac.compare_digest(expected, payload.get("x-amz-signature", "")):
            return "the signature does not match (wrong secret access key?)"
        return None
