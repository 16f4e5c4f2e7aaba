"""An async client of Confluent's Schema Registry REST API (also served by Apicurio's
``/apis/ccompat/v7`` and by Karapace), over httpx.

What it does beyond one HTTP call per method:

* Caches what never changes: a schema by its id, the id of a schema under a subject
  (register and lookup answer the same), a subject's numbered version. ``latest`` is asked
  each time (it moves).
* Retries what may pass: no connection, a timeout, HTTP 5xx or 429, with backoff (100 ms
  doubling to 2 s) until the request's deadline (``deadline_s``); then
  :class:`~kafka_async.schema_registry.errors.RegistryUnavailableError`. A 4xx answer is
  raised at once as its typed error.
* Authenticates with HTTP basic auth (``basic_auth=(user, password)``, or user info in the
  URL, which is taken out of it) or a bearer token (a string, or a callable returning one,
  sync or async, asked before each request so it can refresh); TLS through ``verify`` (a CA
  bundle path, an :class:`ssl.SSLContext`, or False) and ``cert`` (a client certificate).
  Neither the password nor the token appears in a message or a ``repr``.
* Several URLs (a list, or comma-separated) are tried in turn when one does not answer.

For code that runs no event loop (the Spark functions, on the driver and in the workers)
the client also has ``*_blocking`` methods: the same lookups and caches on a synchronous
httpx client. The serializers never call them on an event loop: a cache miss there raises
:class:`~kafka_async.serialization.NeedsResolution` and the client awaits the async method.
"""

from __future__ import annotations

import inspect
import json
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import anyio
import httpx

from .errors import (
    RegistryUnavailableError,
    SchemaRegistryConfigError,
    SchemaRegistryError,
    error_for,
)
from .schema import RegisteredSchema, Schema

__all__ = ["COMPATIBILITY_LEVELS", "SchemaRegistryClient"]

#: The compatibility levels the REST API accepts.
COMPATIBILITY_LEVELS = (
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
    "NONE",
)
_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

BearerToken = str | Callable[[], str] | Callable[[], Awaitable[str]]


def _split_urls(url: str | Sequence[str]) -> tuple[list[str], tuple[str, str] | None]:
    """Base URLs without user info, and the user info of the first that had one."""
    raw = [u.strip() for u in url.split(",")] if isinstance(url, str) else list(url)
    out: list[str] = []
    auth: tuple[str, str] | None = None
    for u in raw:
        if not u:
            continue
        parts = urlsplit(u)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SchemaRegistryConfigError(
                f"schema registry URL must be http(s)://host[:port][/path], got {parts.scheme}://"
                f"{parts.hostname or ''}{parts.path}"
            )
        if parts.username is not None:
            if auth is None:
                auth = (parts.username, parts.password or "")
            netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
            parts = parts._replace(netloc=netloc)
        out.append(urlunsplit(parts).rstrip("/"))
    if not out:
        raise SchemaRegistryConfigError("no schema registry URL given")
    return out, auth


def _ssl_context(
    verify: bool | str | ssl.SSLContext, cert: str | tuple[str, str] | None
) -> bool | ssl.SSLContext:
    """httpx's ``verify``: True, False, or a context with the CA file and client cert."""
    if isinstance(verify, ssl.SSLContext):
        ctx = verify
    elif isinstance(verify, str):
        ctx = ssl.create_default_context(cafile=verify)
    elif cert is None:
        return verify
    else:
        ctx = ssl.create_default_context()
        if not verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
    if cert is not None:
        ctx.load_cert_chain(*((cert,) if isinstance(cert, str) else cert))
    return ctx


def _raise_if_tls_failure(
    exc: BaseException, method: str, path: str, base: str, named: dict[str, Any]
) -> None:
    """A failed certificate check is no reason to retry: raise it as it is."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            raise SchemaRegistryError(
                f"schema registry {method} {path}: TLS certificate check of {base} failed: "
                f"{seen.verify_message or seen}",
                **named,
            ) from exc
        seen = seen.__cause__ or seen.__context__
    if "CERTIFICATE_VERIFY_FAILED" in str(exc):
        raise SchemaRegistryError(
            f"schema registry {method} {path}: TLS certificate check of {base} failed: {exc}",
            **named,
        ) from exc


def _q(segment: str) -> str:
    """One URL path segment (subject names may hold '/', ':' and more)."""
    return quote(segment, safe="")


class SchemaRegistryClient:
    """An async client of one schema registry (Confluent's REST API).

    Use it as ``async with SchemaRegistryClient("http://127.0.0.1:8081") as sr:`` (or call
    :meth:`aclose`). Every method is one request (plus retries), except those the cache
    answers. ``deadline_s`` bounds each call including its retries; ``timeout_s`` each HTTP
    request.
    """

    def __init__(
        self,
        url: str | Sequence[str],
        *,
        basic_auth: tuple[str, str] | None = None,
        bearer_token: BearerToken | None = None,
        verify: bool | str | ssl.SSLContext = True,
        cert: str | tuple[str, str] | None = None,
        headers: dict[str, str] | None = None,
        timeout_s: float = 10.0,
        deadline_s: float = 30.0,
    ) -> None:
        self._urls, url_auth = _split_urls(url)
        if basic_auth is not None and url_auth is not None:
            raise SchemaRegistryConfigError("basic auth given twice: in the URL and basic_auth")
        basic_auth = basic_auth or url_auth
        if basic_auth is not None and bearer_token is not None:
            raise SchemaRegistryConfigError("give basic_auth or bearer_token, not both")
        if deadline_s <= 0 or timeout_s <= 0:
            raise SchemaRegistryConfigError("timeout_s and deadline_s must be positive")
        self._auth = httpx.BasicAuth(*basic_auth) if basic_auth is not None else None
        self._bearer = bearer_token
        self._verify = _ssl_context(verify, cert)
        self._headers = {"Accept": _CONTENT_TYPE, **(headers or {})}
        self._timeout_s = timeout_s
        self._deadline_s = deadline_s
        self._http = httpx.AsyncClient(auth=self._auth, verify=self._verify, headers=self._headers)
        self._blocking: httpx.Client | None = None
        self._next_url = 0
        #: Cache: schema id -> schema (ids are global and never reused).
        self._by_id: dict[int, Schema] = {}
        #: Cache: (subject, schema) -> schema id (register/lookup answers).
        self._by_schema: dict[tuple[str, Schema], int] = {}
        #: Cache: (subject, schema) -> the subject's version of it (lookup answers).
        self._lookups: dict[tuple[str, Schema], RegisteredSchema] = {}
        #: Cache: (subject, numbered version) -> registered schema.
        self._versions: dict[tuple[str, int], RegisteredSchema] = {}
        #: Cache: schema GUID -> schema (GUIDs, like ids, name one schema for good).
        self._by_guid: dict[str, Schema] = {}

    def __repr__(self) -> str:
        auth = "basic" if self._auth is not None else "bearer" if self._bearer else "none"
        return (
            f"<SchemaRegistryClient {','.join(self._urls)} auth={auth} "
            f"cached_ids={len(self._by_id)}>"
        )

    async def __aenter__(self) -> SchemaRegistryClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections (the caches stay usable)."""
        await self._http.aclose()
        if self._blocking is not None:
            self._blocking.close()

    def close_blocking(self) -> None:
        """Close the synchronous connections (those of the ``*_blocking`` methods) only; for
        code that never enters the async client."""
        if self._blocking is not None:
            self._blocking.close()
            self._blocking = None

    # ----------------------------------------------------------------------------------
    # Requests
    # ----------------------------------------------------------------------------------

    async def _token_header(self) -> dict[str, str]:
        tok = self._bearer
        if tok is None:
            return {}
        if callable(tok):
            got = tok()
            value = await got if inspect.isawaitable(got) else got
        else:
            value = tok
        return {"Authorization": f"Bearer {value}"}

    def _fail(self, method: str, path: str, resp: httpx.Response, **named: Any) -> Exception:
        try:
            doc = resp.json()
            code = int(doc.get("error_code", 0)) if isinstance(doc, dict) else 0
            text = str(doc.get("message", "")) if isinstance(doc, dict) else resp.text[:300]
        except (ValueError, json.JSONDecodeError):
            code, text = 0, resp.text[:300]
        return error_for(
            resp.status_code,
            code,
            f"schema registry {method} {path}: HTTP {resp.status_code}"
            + (f" (error code {code})" if code else "")
            + (f": {text}" if text else ""),
            **named,
        )

    async def _request(self, method: str, path: str, body: Any = None, **named: Any) -> Any:
        """One call with retries until the deadline; the decoded JSON answer."""
        deadline = time.monotonic() + self._deadline_s
        backoff = 0.1
        last: str = "no attempt"
        content = json.dumps(body).encode() if body is not None else None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RegistryUnavailableError(
                    f"schema registry {method} {path}: no answer within {self._deadline_s:g} s "
                    f"({last})",
                    **named,
                )
            base = self._urls[self._next_url % len(self._urls)]
            headers = await self._token_header()
            if content is not None:
                headers["Content-Type"] = _CONTENT_TYPE
            try:
                resp = await self._http.request(
                    method,
                    base + path,
                    content=content,
                    headers=headers,
                    timeout=min(self._timeout_s, remaining),
                )
            except httpx.TransportError as exc:
                _raise_if_tls_failure(exc, method, path, base, named)
                last = f"{type(exc).__name__} from {base}"
                self._next_url += 1
            else:
                if resp.status_code < 300:
                    return resp.json()
                err = self._fail(method, path, resp, **named)
                if resp.status_code not in _RETRY_STATUSES:
                    raise err
                last = str(err)
            await anyio.sleep(min(backoff, max(0.0, deadline - time.monotonic())))
            backoff = min(backoff * 2, 2.0)

    def _request_blocking(self, method: str, path: str, body: Any = None, **named: Any) -> Any:
        """:meth:`_request` on a synchronous httpx client."""
        if self._blocking is None:
            self._blocking = httpx.Client(
                auth=self._auth, verify=self._verify, headers=self._headers
            )
        headers: dict[str, str] = {}
        if isinstance(self._bearer, str):
            headers["Authorization"] = f"Bearer {self._bearer}"
        elif self._bearer is not None:
            got = self._bearer()
            if inspect.isawaitable(got):
                if inspect.iscoroutine(got):
                    got.close()
                # An async token source cannot be asked from synchronous code.
                raise SchemaRegistryConfigError(
                    f"schema registry {method} {path} from synchronous code (a blocking "
                    "method) with an async bearer token source: give a synchronous token "
                    "source"
                )
            headers["Authorization"] = f"Bearer {got}"
        deadline = time.monotonic() + self._deadline_s
        backoff = 0.1
        last = "no attempt"
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RegistryUnavailableError(
                    f"schema registry {method} {path}: no answer within {self._deadline_s:g} s "
                    f"({last})",
                    **named,
                )
            base = self._urls[self._next_url % len(self._urls)]
            try:
                resp = self._blocking.request(
                    method,
                    base + path,
                    content=json.dumps(body).encode() if body is not None else None,
                    headers=headers if body is None else {**headers, "Content-Type": _CONTENT_TYPE},
                    timeout=min(self._timeout_s, remaining),
                )
            except httpx.TransportError as exc:
                _raise_if_tls_failure(exc, method, path, base, named)
                last = f"{type(exc).__name__} from {base}"
                self._next_url += 1
            else:
                if resp.status_code < 300:
                    return resp.json()
                err = self._fail(method, path, resp, **named)
                if resp.status_code not in _RETRY_STATUSES:
                    raise err
                last = str(err)
            time.sleep(min(backoff, max(0.0, deadline - time.monotonic())))
            backoff = min(backoff * 2, 2.0)

    def schema_by_id_blocking(self, schema_id: int) -> Schema:
        """:meth:`schema_by_id` for synchronous callers without an event loop (the Spark
        functions): the cache, else one blocking request (retried until the deadline). It
        blocks the calling thread: never call it on an event loop."""
        cached = self._by_id.get(schema_id)
        if cached is not None:
            return cached
        doc = self._request_blocking("GET", f"/schemas/ids/{schema_id}", schema_id=schema_id)
        schema = Schema.from_json(doc)
        self._by_id[schema_id] = schema
        return schema

    def schema_by_guid_blocking(self, guid: str) -> Schema:
        """:meth:`schema_by_guid` for synchronous callers without an event loop."""
        cached = self._by_guid.get(guid)
        if cached is not None:
            return cached
        doc = self._request_blocking("GET", f"/schemas/guids/{_q(guid)}")
        schema = Schema.from_json(doc)
        self._by_guid[guid] = schema
        return schema

    def version_blocking(self, subject: str, version: int | str = "latest") -> RegisteredSchema:
        """:meth:`version` for synchronous callers (a referenced schema met by a
        deserializer, the Spark functions on the driver); numbered versions are cached."""
        cached = self._versions.get((subject, version)) if isinstance(version, int) else None
        if cached is not None:
            return cached
        doc = self._request_blocking(
            "GET", f"/subjects/{_q(subject)}/versions/{version}", subject=subject, version=version
        )
        reg = RegisteredSchema.from_json(doc)
        self._remember(reg)
        return reg

    def register_blocking(self, subject: str, schema: Schema) -> int:
        """:meth:`register` for synchronous callers (the Spark functions on the driver)."""
        cached = self._by_schema.get((subject, schema))
        if cached is not None:
            return cached
        doc = self._request_blocking(
            "POST", f"/subjects/{_q(subject)}/versions", schema.to_json(), subject=subject
        )
        schema_id = int(doc["id"])
        self._by_schema[(subject, schema)] = schema_id
        self._by_id.setdefault(schema_id, schema)
        return schema_id

    # ----------------------------------------------------------------------------------
    # Schemas and subjects
    # ----------------------------------------------------------------------------------

    async def schema_by_id(self, schema_id: int) -> Schema:
        """The schema with this global id (``GET /schemas/ids/N``); cached."""
        cached = self._by_id.get(schema_id)
        if cached is not None:
            return cached
        doc = await self._request("GET", f"/schemas/ids/{schema_id}", schema_id=schema_id)
        schema = Schema.from_json(doc)
        self._by_id[schema_id] = schema
        return schema

    async def schema_by_guid(self, guid: str) -> Schema:
        """The schema with this GUID (``GET /schemas/guids/G``, Confluent Schema Registry 8's
        global identifier, what the header-carried format names); cached."""
        cached = self._by_guid.get(guid)
        if cached is not None:
            return cached
        doc = await self._request("GET", f"/schemas/guids/{_q(guid)}")
        schema = Schema.from_json(doc)
        self._by_guid[guid] = schema
        return schema

    def cached_schema(self, schema_id: int) -> Schema | None:
        """The cached schema of this id, or None (no request)."""
        return self._by_id.get(schema_id)

    async def subjects(self, *, deleted: bool = False) -> list[str]:
        """Every subject's name (``GET /subjects``)."""
        doc = await self._request("GET", "/subjects" + ("?deleted=true" if deleted else ""))
        return [str(s) for s in doc]

    async def versions(self, subject: str) -> list[int]:
        """The subject's version numbers (``GET /subjects/S/versions``)."""
        doc = await self._request("GET", f"/subjects/{_q(subject)}/versions", subject=subject)
        return [int(v) for v in doc]

    async def version(self, subject: str, version: int | str = "latest") -> RegisteredSchema:
        """One version of a subject, ``"latest"`` by default. Numbered versions are cached."""
        if isinstance(version, int):
            cached = self._versions.get((subject, version))
            if cached is not None:
                return cached
        doc = await self._request(
            "GET",
            f"/subjects/{_q(subject)}/versions/{version}",
            subject=subject,
            version=version,
        )
        reg = RegisteredSchema.from_json(doc)
        self._remember(reg)
        return reg

    async def latest_version(self, subject: str) -> RegisteredSchema:
        """The subject's latest version (never cached: it moves)."""
        return await self.version(subject, "latest")

    def _remember(self, reg: RegisteredSchema) -> None:
        self._versions[(reg.subject, reg.version)] = reg
        self._by_id.setdefault(reg.schema_id, reg.schema)
        self._by_schema[(reg.subject, reg.schema)] = reg.schema_id
        if reg.guid is not None:
            self._by_guid.setdefault(reg.guid, reg.schema)

    async def register(self, subject: str, schema: Schema, *, normalize: bool = False) -> int:
        """Register ``schema`` under ``subject`` (``POST /subjects/S/versions``) and return
        its id; the same schema again returns the same id (cached). A schema that breaks the
        subject's compatibility rule raises
        :class:`~kafka_async.schema_registry.errors.IncompatibleSchemaError`."""
        cached = self._by_schema.get((subject, schema))
        if cached is not None:
            return cached
        q = "?normalize=true" if normalize else ""
        doc = await self._request(
            "POST", f"/subjects/{_q(subject)}/versions{q}", schema.to_json(), subject=subject
        )
        schema_id = int(doc["id"])
        self._by_schema[(subject, schema)] = schema_id
        self._by_id.setdefault(schema_id, schema)
        return schema_id

    async def lookup(
        self, subject: str, schema: Schema, *, normalize: bool = False
    ) -> RegisteredSchema:
        """The subject's version equal to ``schema`` (``POST /subjects/S``); raises
        :class:`~kafka_async.schema_registry.errors.SchemaNotFoundError` (or
        ``SubjectNotFoundError``) when it has none. Cached."""
        cached = self._lookups.get((subject, schema))
        if cached is not None:
            return cached
        q = "?normalize=true" if normalize else ""
        doc = await self._request(
            "POST", f"/subjects/{_q(subject)}{q}", schema.to_json(), subject=subject
        )
        reg = RegisteredSchema.from_json(doc)
        # The answer's schema text may be the registry's canonical form: cache under ours.
        self._by_schema[(subject, schema)] = reg.schema_id
        self._lookups[(subject, schema)] = reg
        self._remember(reg)
        return reg

    async def is_compatible(
        self, subject: str, schema: Schema, version: int | str = "latest"
    ) -> bool:
        """Whether ``schema`` could be registered under ``subject`` as checked against
        ``version`` by the subject's compatibility rule
        (``POST /compatibility/subjects/S/versions/V``)."""
        doc = await self._request(
            "POST",
            f"/compatibility/subjects/{_q(subject)}/versions/{version}",
            schema.to_json(),
            subject=subject,
            version=version,
        )
        return bool(doc.get("is_compatible"))

    async def delete_subject(self, subject: str, *, permanent: bool = False) -> list[int]:
        """Delete a subject (soft; ``permanent=True`` after a soft delete removes it); the
        versions it had."""
        q = "?permanent=true" if permanent else ""
        doc = await self._request("DELETE", f"/subjects/{_q(subject)}{q}", subject=subject)
        self._versions = {k: v for k, v in self._versions.items() if k[0] != subject}
        self._by_schema = {k: v for k, v in self._by_schema.items() if k[0] != subject}
        self._lookups = {k: v for k, v in self._lookups.items() if k[0] != subject}
        return [int(v) for v in doc]

    # ----------------------------------------------------------------------------------
    # Compatibility configuration
    # ----------------------------------------------------------------------------------

    async def compatibility(self, subject: str | None = None) -> str:
        """The compatibility level of ``subject`` (the global one when None)
        (``GET /config[/S]``)."""
        path = "/config" if subject is None else f"/config/{_q(subject)}"
        doc = await self._request("GET", path, subject=subject)
        return str(doc.get("compatibilityLevel") or doc.get("compatibility"))

    async def set_compatibility(self, level: str, subject: str | None = None) -> str:
        """Set the compatibility level of ``subject`` (the global one when None)
        (``PUT /config[/S]``); returns the level the registry now has."""
        if level not in COMPATIBILITY_LEVELS:
            raise SchemaRegistryConfigError(
                f"compatibility level must be one of {', '.join(COMPATIBILITY_LEVELS)}, "
                f"got {level!r}"
            )
        path = "/config" if subject is None else f"/config/{_q(subject)}"
        doc = await self._request("PUT", path, {"compatibility": level}, subject=subject)
        return str(doc.get("compatibility") or doc.get("compatibilityLevel"))
