"""A schema registry on loopback for the tests: Confluent's REST API, run as a child process.

Why our own: Apicurio Registry (the issue's first choice) cannot be assembled here. Its
Maven artifact ``io.apicurio:apicurio-registry-app`` is a Quarkus application jar, not a
runnable one: it needs Quarkus's build step (quarkus-maven-plugin) over its dependencies,
and those are not all on Maven Central as this machine and CI reach it (3.3.3 lacks
``apicurio-registry-schema-util-provider:3.3.3`` and the Quarkus 3.33.3.1 parent POMs;
2.6.13.Final lacks its schema-util-provider and ``apicurio-common-app-components``).
Karapace is not published on PyPI. So this module serves the REST API itself, and
confluent-kafka's ``SchemaRegistryClient`` and serializers, an independent implementation
of the client side, are the peer the tests check ours against.

What it serves (the subset the clients use): ``/subjects`` (list, versions, register,
lookup, delete), ``/schemas/ids/N`` (and ``/versions``), ``/compatibility/subjects/S/versions/V``,
``/config`` (global and per subject), ``/schemas/guids/G`` (every schema gets a GUID, given
next to its id as Confluent Schema Registry 8 does), with Confluent's error bodies (``error_code``,
``message``). Registering the same schema again returns its id; the same schema under
another subject gets the same id. Compatibility rules:

* AVRO: Avro's schema resolution (records by field name with defaults, enums, unions,
  arrays, maps, fixed, the numeric and string/bytes promotions, named references).
* JSON: a simplified check: a property that becomes required, or changes its ``type``,
  breaks the direction that must read the other's data; ``additionalProperties: false``
  with a dropped property too.
* PROTOBUF (base64 ``FileDescriptorProto`` schemas): a field number whose type changes.

Optional basic auth (``users``) answers 401 without valid credentials; a bearer ``token``
likewise. For the tests of slow or silent registries, ``PUT /_harness/delay``
(``{"seconds": S}``; :meth:`RegistryServer.set_delay`) makes every later answer wait S seconds
(0 restores prompt answers; the registry's state is kept).

Example::

    with RegistryServer() as registry:
        client = SchemaRegistryClient(registry.url)
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import socket
import ssl
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["RegistryServer", "avro_can_read"]

_CT = "application/vnd.schemaregistry.v1+json"
_LEVELS = {
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
    "NONE",
}


class _Fail(Exception):
    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


# ------------------------------------------------------------------------------------------
# Avro schema resolution (can data written with `writer` be read with `reader`?)
# ------------------------------------------------------------------------------------------

_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
_PROMOTIONS = {
    ("int", "long"),
    ("int", "float"),
    ("int", "double"),
    ("long", "float"),
    ("long", "double"),
    ("float", "double"),
    ("string", "bytes"),
    ("bytes", "string"),
}


def _collect_names(doc: Any, ns: str | None, names: dict[str, Any]) -> None:
    if isinstance(doc, list):
        for d in doc:
            _collect_names(d, ns, names)
    elif isinstance(doc, dict):
        t = doc.get("type")
        if t in ("record", "error", "enum", "fixed"):
            name = str(doc["name"])
            ns = doc.get("namespace", ns) if "." not in name else name.rsplit(".", 1)[0]
            full = name if "." in name or not ns else f"{ns}.{name}"
            names[full] = doc
            for f in doc.get("fields", ()):
                _collect_names(f["type"], ns, names)
        elif t == "array":
            _collect_names(doc["items"], ns, names)
        elif t == "map":
            _collect_names(doc["values"], ns, names)
        elif isinstance(t, dict | list):
            _collect_names(t, ns, names)


def _resolve(doc: Any, names: Mapping[str, Any]) -> Any:
    if isinstance(doc, str) and doc not in _PRIMITIVES:
        if doc in names:
            return names[doc]
        for full, d in names.items():
            if full.rsplit(".", 1)[-1] == doc:
                return d
        raise _Fail(422, 42201, f"unknown Avro type name {doc!r}")
    if isinstance(doc, dict) and doc.get("type") in _PRIMITIVES and len(doc) == 1:
        return doc["type"]
    if (
        isinstance(doc, dict)
        and isinstance(doc.get("type"), str)
        and doc["type"]
        not in (
            "record",
            "error",
            "enum",
            "fixed",
            "array",
            "map",
        )
    ):
        # A primitive with attributes (logicalType ...): its base type decides.
        return _resolve(doc["type"], names)
    return doc


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def avro_can_read(
    reader: Any, writer: Any, rnames: Mapping[str, Any], wnames: Mapping[str, Any]
) -> bool:
    """Whether Avro's schema resolution reads data of ``writer`` as ``reader``."""
    seen: set[tuple[int, int]] = set()

    def can(r: Any, w: Any) -> bool:
        r, w = _resolve(r, rnames), _resolve(w, wnames)
        if isinstance(w, list):
            return all(can(r, b) for b in w)
        if isinstance(r, list):
            return any(can(b, w) for b in r)
        if isinstance(r, str) or isinstance(w, str):
            if isinstance(r, str) and isinstance(w, str):
                return r == w or (w, r) in _PROMOTIONS
            return False
        rt, wt = r.get("type"), w.get("type")
        if rt != wt and not ({rt, wt} <= {"record", "error"}):
            return False
        if (
            rt in ("record", "error", "enum", "fixed")
            and _short(str(r["name"])) != _short(str(w["name"]))
            and _short(str(w["name"])) not in map(_short, r.get("aliases", ()))
        ):
            return False
        key = (id(r), id(w))
        if key in seen:
            return True
        seen.add(key)
        if rt == "array":
            return can(r["items"], w["items"])
        if rt == "map":
            return can(r["values"], w["values"])
        if rt == "fixed":
            return bool(r["size"] == w["size"])
        if rt == "enum":
            return set(w["symbols"]) <= set(r["symbols"]) or "default" in r
        wf = {f["name"]: f for f in w["fields"]}
        for f in r["fields"]:
            match = wf.get(f["name"]) or next(
                (wf[a] for a in f.get("aliases", ()) if a in wf), None
            )
            if match is None:
                if "default" not in f:
                    return False
            elif not can(f["type"], match["type"]):
                return False
        return True

    return can(reader, writer)


# ------------------------------------------------------------------------------------------
# The registry's state
# ------------------------------------------------------------------------------------------


@dataclass
class _Stored:
    schema: str
    schema_type: str
    references: list[dict[str, Any]]

    def key(self) -> tuple[str, str, str]:
        text = self.schema
        if self.schema_type in ("AVRO", "JSON"):
            try:
                text = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
            except ValueError:
                pass
        refs = json.dumps(sorted((r["name"], r["subject"], r["version"]) for r in self.references))
        return (self.schema_type, text, refs)


@dataclass
class _Version:
    version: int
    schema_id: int
    deleted: bool = False


@dataclass
class _State:
    schemas: dict[int, _Stored] = field(default_factory=dict)
    #: Each schema's GUID (Confluent Schema Registry 8 gives one per schema, next to its id).
    guids: dict[int, str] = field(default_factory=dict)
    ids: dict[tuple[str, str, str], int] = field(default_factory=dict)
    subjects: dict[str, list[_Version]] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)
    global_level: str = "BACKWARD"
    lock: threading.Lock = field(default_factory=threading.Lock)


def _live(state: _State, subject: str) -> list[_Version]:
    return [v for v in state.subjects.get(subject, ()) if not v.deleted]


def _version_of(state: _State, subject: str, spec: str) -> _Version:
    live = _live(state, subject)
    if not live:
        raise _Fail(404, 40401, f"Subject '{subject}' not found.")
    if spec in ("latest", "-1"):
        return live[-1]
    try:
        n = int(spec)
    except ValueError:
        raise _Fail(
            422, 42202, f"The specified version '{spec}' is not a valid version id."
        ) from None
    for v in live:
        if v.version == n:
            return v
    raise _Fail(404, 40402, f"Version {n} not found.")


def _stored_from(body: Mapping[str, Any]) -> _Stored:
    if not isinstance(body.get("schema"), str):
        raise _Fail(422, 42201, "Invalid schema: no 'schema' string")
    return _Stored(
        body["schema"], str(body.get("schemaType") or "AVRO"), list(body.get("references") or [])
    )


def _ref_docs(state: _State, stored: _Stored) -> list[_Stored]:
    """The referenced schemas, depth first."""
    out: list[_Stored] = []
    for ref in stored.references:
        v = _version_of(state, str(ref["subject"]), str(ref["version"]))
        s = state.schemas[v.schema_id]
        out.extend(_ref_docs(state, s))
        out.append(s)
    return out


def _avro_names(state: _State, stored: _Stored) -> tuple[Any, dict[str, Any]]:
    names: dict[str, Any] = {}
    try:
        for ref in _ref_docs(state, stored):
            _collect_names(json.loads(ref.schema), None, names)
        doc = json.loads(stored.schema)
    except ValueError as exc:
        raise _Fail(422, 42201, f"Invalid schema: {exc}") from None
    _collect_names(doc, None, names)
    return doc, names


def _validate(state: _State, stored: _Stored) -> None:
    if stored.schema_type == "AVRO":
        doc, names = _avro_names(state, stored)
        avro_can_read(doc, doc, names, names)  # resolves every name
    elif stored.schema_type == "JSON":
        try:
            doc = json.loads(stored.schema)
        except ValueError as exc:
            raise _Fail(422, 42201, f"Invalid schema: {exc}") from None
        if not isinstance(doc, dict | bool):
            raise _Fail(422, 42201, "Invalid schema: a JSON Schema is an object or a boolean")
    elif stored.schema_type == "PROTOBUF":
        _proto_fields(stored)
    else:
        raise _Fail(422, 42201, f"Invalid schema type {stored.schema_type}")
    _ref_docs(state, stored)


def _proto_fields(stored: _Stored) -> dict[tuple[str, int], int] | None:
    """(message full name, field number) -> field type, for base64 descriptor schemas."""
    try:
        raw = base64.b64decode(stored.schema, validate=True)
    except (binascii.Error, ValueError):
        return None  # .proto text: not checked
    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto()
    try:
        fdp.ParseFromString(raw)
    except Exception as exc:
        raise _Fail(422, 42201, f"Invalid schema: {exc}") from None
    out: dict[tuple[str, int], int] = {}

    def walk(prefix: str, messages: Any) -> None:
        for m in messages:
            name = f"{prefix}.{m.name}" if prefix else m.name
            for f in m.field:
                out[(name, f.number)] = f.type
            walk(name, m.nested_type)

    walk(fdp.package, fdp.message_type)
    return out


def _json_reads(reader: Any, writer: Any) -> bool:
    """Simplified: can ``reader`` accept every document ``writer`` accepts?"""
    if not isinstance(reader, dict) or not isinstance(writer, dict):
        return reader == writer or reader is True
    if reader.get("type") != writer.get("type") and "type" in reader:
        return False
    new_required = set(reader.get("required", ())) - set(writer.get("required", ()))
    if new_required:
        return False
    rprops, wprops = reader.get("properties", {}), writer.get("properties", {})
    for name, wp in wprops.items():
        if name in rprops:
            if not _json_reads(rprops[name], wp):
                return False
        elif reader.get("additionalProperties") is False:
            return False
    return True


def _reads(state: _State, reader: _Stored, writer: _Stored) -> bool:
    if reader.schema_type != writer.schema_type:
        return False
    if reader.schema_type == "AVRO":
        rdoc, rnames = _avro_names(state, reader)
        wdoc, wnames = _avro_names(state, writer)
        return avro_can_read(rdoc, wdoc, rnames, wnames)
    if reader.schema_type == "JSON":
        return _json_reads(json.loads(reader.schema), json.loads(writer.schema))
    rf, wf = _proto_fields(reader), _proto_fields(writer)
    if rf is None or wf is None:
        return True
    return all(rf[k] == t for k, t in wf.items() if k in rf)


def _compatible(state: _State, subject: str, new: _Stored, against: list[_Version]) -> bool:
    level = state.config.get(subject, state.global_level)
    if level == "NONE" or not against:
        return True
    olds = against if level.endswith("TRANSITIVE") else against[-1:]
    for v in olds:
        old = state.schemas[v.schema_id]
        if level.startswith(("BACKWARD", "FULL")) and not _reads(state, new, old):
            return False
        if level.startswith(("FORWARD", "FULL")) and not _reads(state, old, new):
            return False
    return True


def _schema_json(stored: _Stored) -> dict[str, Any]:
    out: dict[str, Any] = {"schema": stored.schema}
    if stored.schema_type != "AVRO":
        out["schemaType"] = stored.schema_type
    if stored.references:
        out["references"] = stored.references
    return out


def _handle(state: _State, method: str, path: str, query: dict[str, list[str]], body: Any) -> Any:
    parts = [unquote(p) for p in path.strip("/").split("/")] if path.strip("/") else []
    with state.lock:
        if parts == ["subjects"] and method == "GET":
            deleted = query.get("deleted") == ["true"]
            return sorted(
                s for s, vs in state.subjects.items() if (deleted and vs) or _live(state, s)
            )
        if len(parts) >= 2 and parts[0] == "subjects":
            subject = parts[1]
            if len(parts) == 2 and method == "POST":
                stored = _stored_from(body)
                key = stored.key()
                for v in _live(state, subject):
                    if state.schemas[v.schema_id].key() == key:
                        return {
                            "subject": subject,
                            "id": v.schema_id,
                            "guid": state.guids[v.schema_id],
                            "version": v.version,
                            **_schema_json(state.schemas[v.schema_id]),
                        }
                if not _live(state, subject):
                    raise _Fail(404, 40401, f"Subject '{subject}' not found.")
                raise _Fail(404, 40403, "Schema not found")
            if len(parts) == 2 and method == "DELETE":
                if query.get("permanent") == ["true"]:
                    gone = [v.version for v in state.subjects.pop(subject, [])]
                    if not gone:
                        raise _Fail(404, 40401, f"Subject '{subject}' not found.")
                    return gone
                live = _live(state, subject)
                if not live:
                    raise _Fail(404, 40401, f"Subject '{subject}' not found.")
                for v in live:
                    v.deleted = True
                return [v.version for v in live]
            if len(parts) == 3 and parts[2] == "versions" and method == "GET":
                live = _live(state, subject)
                if not live:
                    raise _Fail(404, 40401, f"Subject '{subject}' not found.")
                return [v.version for v in live]
            if len(parts) == 3 and parts[2] == "versions" and method == "POST":
                stored = _stored_from(body)
                _validate(state, stored)
                key = stored.key()
                live = _live(state, subject)
                for v in live:
                    if state.schemas[v.schema_id].key() == key:
                        return {"id": v.schema_id, "guid": state.guids[v.schema_id]}
                if not _compatible(state, subject, stored, live):
                    raise _Fail(
                        409,
                        409,
                        f"Schema being registered is incompatible with an earlier schema for "
                        f'subject "{subject}"',
                    )
                schema_id = state.ids.get(key)
                if schema_id is None:
                    schema_id = len(state.schemas) + 1
                    state.schemas[schema_id] = stored
                    state.guids[schema_id] = str(uuid.uuid4())
                    state.ids[key] = schema_id
                versions = state.subjects.setdefault(subject, [])
                number = versions[-1].version + 1 if versions else 1
                versions.append(_Version(number, schema_id))
                return {"id": schema_id, "guid": state.guids[schema_id]}
            if len(parts) == 4 and parts[2] == "versions" and method == "GET":
                v = _version_of(state, subject, parts[3])
                return {
                    "subject": subject,
                    "version": v.version,
                    "id": v.schema_id,
                    "guid": state.guids[v.schema_id],
                    **_schema_json(state.schemas[v.schema_id]),
                }
            if len(parts) == 5 and parts[2] == "versions" and parts[4] == "schema":
                v = _version_of(state, subject, parts[3])
                return json.loads(state.schemas[v.schema_id].schema)
        if len(parts) == 3 and parts[:2] == ["schemas", "guids"] and method == "GET":
            for sid, guid in state.guids.items():
                if guid == parts[2]:
                    return {"guid": guid, **_schema_json(state.schemas[sid])}
            raise _Fail(404, 40403, f"Schema {parts[2]} not found")
        if len(parts) >= 3 and parts[:2] == ["schemas", "ids"] and method == "GET":
            try:
                schema_id = int(parts[2])
            except ValueError:
                raise _Fail(404, 40403, "Schema not found") from None
            stored_or_none = state.schemas.get(schema_id)
            if stored_or_none is None:
                raise _Fail(404, 40403, f"Schema {schema_id} not found")
            if len(parts) == 3:
                return _schema_json(stored_or_none)
            if parts[3] == "versions":
                return [
                    {"subject": s, "version": v.version}
                    for s, vs in state.subjects.items()
                    for v in vs
                    if v.schema_id == schema_id and not v.deleted
                ]
            if parts[3] == "schema":
                return json.loads(stored_or_none.schema)
        if len(parts) == 5 and parts[:2] == ["compatibility", "subjects"] and method == "POST":
            subject = parts[2]
            stored = _stored_from(body)
            _validate(state, stored)
            live = _live(state, subject)
            if parts[4] in ("latest", "-1"):
                against = live
            else:
                against = [_version_of(state, subject, parts[4])]
            return {"is_compatible": _compatible(state, subject, stored, against)}
        if parts and parts[0] == "config":
            subject_or_none = parts[1] if len(parts) == 2 else None
            if method == "GET":
                if subject_or_none is None:
                    return {"compatibilityLevel": state.global_level}
                level = state.config.get(subject_or_none)
                if level is None:
                    if query.get("defaultToGlobal") == ["true"]:
                        return {"compatibilityLevel": state.global_level}
                    raise _Fail(
                        404,
                        40408,
                        f"Subject '{subject_or_none}' does not have subject-level "
                        "compatibility configured",
                    )
                return {"compatibilityLevel": level}
            if method == "PUT":
                level = str((body or {}).get("compatibility", ""))
                if level not in _LEVELS:
                    raise _Fail(422, 42203, f"Invalid compatibility level {level!r}")
                if subject_or_none is None:
                    state.global_level = level
                else:
                    state.config[subject_or_none] = level
                return {"compatibility": level}
        if parts == [] and method == "GET":
            return {}
    raise _Fail(404, 404, f"HTTP 404 Not Found: {method} {path}")


def _make_handler(
    state: _State, users: Mapping[str, str], token: str | None
) -> type[BaseHTTPRequestHandler]:
    accepted = {"Basic " + base64.b64encode(f"{u}:{p}".encode()).decode() for u, p in users.items()}
    if token is not None:
        accepted.add(f"Bearer {token}")

    control = {"delay_s": 0.0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            sys.stderr.write(f"{self.command} {self.path}\n")

        def _send(self, status: int, doc: Any) -> None:
            raw = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", _CT)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            split = urlsplit(self.path)
            if split.path == "/_harness/delay" and self.command == "PUT":
                control["delay_s"] = float(json.loads(raw)["seconds"])
                self._send(200, {"seconds": control["delay_s"]})
                return
            if accepted and self.headers.get("Authorization") not in accepted:
                self._send(401, {"error_code": 401, "message": "Unauthorized"})
                return
            if control["delay_s"] > 0:
                time.sleep(control["delay_s"])
            try:
                body = json.loads(raw) if raw else None
                self._send(
                    200, _handle(state, self.command, split.path, parse_qs(split.query), body)
                )
            except _Fail as exc:
                self._send(exc.status, {"error_code": exc.code, "message": str(exc)})
            except ValueError as exc:
                self._send(422, {"error_code": 42201, "message": f"Invalid request: {exc}"})

        do_GET = do_POST = do_PUT = do_DELETE = _serve

    return Handler


def serve(
    port: int, users: Mapping[str, str], token: str | None, tls_cert: str | None = None
) -> None:
    """Serve on 127.0.0.1:``port`` until killed (HTTPS with ``tls_cert``: key and chain in
    one PEM file)."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _make_handler(_State(), users, token))
    server.daemon_threads = True
    if tls_cert is not None:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(tls_cert)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


class RegistryServer:
    """The registry as a child process on 127.0.0.1 (a free port). ``users`` (name ->
    password) and ``token`` turn authentication on; ``tls_cert`` (a PEM file with the key and
    the chain) serves HTTPS. Start and stop it with ``with``; the
    start waits (at most ``start_timeout`` s) until it answers."""

    def __init__(
        self,
        *,
        users: Mapping[str, str] | None = None,
        token: str | None = None,
        tls_cert: str | None = None,
        start_timeout: float = 20.0,
    ) -> None:
        self.users = dict(users or {})
        self.token = token
        self.tls_cert = tls_cert
        self.start_timeout = start_timeout
        self.port = 0
        self._proc: Any = None
        self._log: Any = None

    @property
    def url(self) -> str:
        """The base URL (``http://127.0.0.1:PORT``)."""
        scheme = "https" if self.tls_cert is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the child and wait until it answers."""
        from kafka_async.testing import _procs

        self.port = _procs.free_port()
        log_path = _procs.log_dir() / f"schema-registry-{self.port}.log"
        self._log = log_path.open("wb")
        argv = [sys.executable, str(Path(__file__).resolve()), "--port", str(self.port)]
        for u, p in self.users.items():
            argv += ["--user", f"{u}:{p}"]
        if self.token is not None:
            argv += ["--token", self.token]
        if self.tls_cert is not None:
            argv += ["--tls-cert", self.tls_cert]
        self._proc = _procs.spawn(argv, log=self._log)
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(f"schema registry exited: {_procs.tail(log_path)}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise TimeoutError(
                        f"schema registry did not answer within {self.start_timeout:g} s"
                    ) from None
                time.sleep(0.05)

    def set_delay(self, seconds: float) -> None:
        """Make every later answer wait ``seconds`` (0: answer at once again)."""
        import urllib.request

        req = urllib.request.Request(
            f"{self.url}/_harness/delay",
            data=json.dumps({"seconds": seconds}).encode(),
            method="PUT",
            headers={"Content-Type": _CT},
        )
        with urllib.request.urlopen(req, timeout=5.0) as resp:
            resp.read()

    def stop(self) -> None:
        """Stop the child (SIGTERM, then SIGKILL after 5 s)."""
        from kafka_async.testing import _procs

        if self._proc is not None:
            _procs.terminate_sync(self._proc, 5.0)
            self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> RegistryServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--user", action="append", default=[], help="NAME:PASSWORD")
    ap.add_argument("--token")
    ap.add_argument("--tls-cert")
    ns = ap.parse_args()
    serve(ns.port, dict(u.split(":", 1) for u in ns.user), ns.token, ns.tls_cert)
