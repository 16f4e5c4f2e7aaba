"""Protobuf in Confluent's wire format, with the protobuf package.

The serializer takes a generated message class. It registers the message's ``.proto`` file
as the registry's ``PROTOBUF`` schema in the serialized ``FileDescriptorProto`` form (base64,
as confluent-kafka's Python serializer does, since the protobuf package cannot print
``.proto`` text), and the file's imports as schema references (subject = the import path;
``google/protobuf/*`` well-known types are left out, every registry knows them). Each
value carries the message indexes of its message within the file (see
:mod:`~kafka_async.schema_registry.wire`).

The deserializer decodes into a given message class, or, without one, into a class built
from the writer schema of each value's id (a dynamic message of the same type). Registries
hold Protobuf schemas as ``.proto`` text when Java or Go clients registered them; the
protobuf package cannot parse that text, so such a schema is compiled with protoc as the
``grpcio-tools`` package ships it (``pip install grpcio-tools``, in the ``schema-registry-proto``
extra), in a temporary directory with the schema's references as the files it imports.
Without grpcio-tools a ``.proto`` text schema is a
:class:`~kafka_async.schema_registry.errors.SerializationError` that says so (give the
deserializer the message class instead, which needs no schema at all).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import tempfile
from pathlib import Path
from typing import Any

from .client import SchemaRegistryClient
from .errors import SerializationError
from .schema import Schema, SchemaReference
from .serde import RegistryDeserializer, RegistrySerializer
from .wire import SubjectNameStrategy, decode_message_indexes, encode_message_indexes

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf.descriptor import Descriptor, FileDescriptor
    from google.protobuf.message import Message
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError(
        "kafka_async.schema_registry.protobuf needs protobuf: pip install "
        "'kafka-async-client[schema-registry]'"
    ) from exc

__all__ = ["ProtobufDeserializer", "ProtobufSerializer", "message_indexes", "schema_message"]


def message_indexes(desc: Descriptor) -> list[int]:
    """The path of indexes of a message within its file (top-level index, then nested)."""
    path: list[int] = []
    d: Descriptor | None = desc
    while d is not None:
        parent = d.containing_type
        siblings = (
            parent.nested_types
            if parent is not None
            else list(d.file.message_types_by_name.values())
        )
        path.append(next(i for i, s in enumerate(siblings) if s.full_name == d.full_name))
        d = parent
    return path[::-1]


def _file_schema(fd: FileDescriptor, refs: tuple[SchemaReference, ...]) -> Schema:
    return Schema(base64.standard_b64encode(fd.serialized_pb).decode("ascii"), "PROTOBUF", refs)


def _is_well_known(name: str) -> bool:
    return name.startswith("google/protobuf/")


class ProtobufSerializer(RegistrySerializer[bytes]):
    """Serializes instances of ``message_type``; see
    :class:`~kafka_async.schema_registry.serde.RegistrySerializer` for the options (the
    record strategies name the schema by the message's full name). Imports are registered
    as references when ``auto_register`` is on."""

    schema_type = "PROTOBUF"

    def __init__(
        self,
        client: SchemaRegistryClient,
        message_type: type[Message],
        *,
        topic: str | None = None,
        is_key: bool = False,
        subject_name_strategy: str | SubjectNameStrategy = "topic",
        subject: str | None = None,
        auto_register: bool = True,
        use_latest_version: bool = False,
        normalize: bool = False,
        schema_id_in_header: bool = False,
    ) -> None:
        self._desc: Descriptor = message_type.DESCRIPTOR
        super().__init__(
            client,
            _file_schema(self._desc.file, ()),
            topic=topic,
            is_key=is_key,
            subject_name_strategy=subject_name_strategy,
            subject=subject,
            auto_register=auto_register,
            use_latest_version=use_latest_version,
            normalize=normalize,
            schema_id_in_header=schema_id_in_header,
        )
        self._message_type = message_type

    def _record_name(self, schema: Schema | None) -> str | None:
        return str(self._desc.full_name)

    async def _reference_of(self, fd: FileDescriptor) -> SchemaReference:
        refs = tuple(
            [await self._reference_of(d) for d in fd.dependencies if not _is_well_known(d.name)]
        )
        schema = _file_schema(fd, refs)
        if self._auto_register:
            await self._client.register(fd.name, schema, normalize=self._normalize)
        reg = await self._client.lookup(fd.name, schema, normalize=self._normalize)
        return SchemaReference(fd.name, fd.name, reg.version)

    async def _register_references(self, schema: Schema) -> Schema:
        fd = self._desc.file
        refs = tuple(
            [await self._reference_of(d) for d in fd.dependencies if not _is_well_known(d.name)]
        )
        return _file_schema(fd, refs)

    async def _parse(self, schema: Schema) -> bytes:
        # Values are written with the message class; the schema fixes only the indexes.
        indexes: bytes = encode_message_indexes(message_indexes(self._desc))
        return indexes

    def _payload_prefix(self, writer: bytes) -> bytes:
        # The message indexes follow the schema id (in the prefix, or in the header).
        return writer

    def _encode(self, prefix: bytes, writer: bytes, value: Any) -> bytes:
        if not isinstance(value, self._message_type):
            raise SerializationError(
                f"value must be a {self._desc.full_name} message, got {type(value).__name__}"
            )
        body: bytes = value.SerializeToString()
        return prefix + body


def _descriptor(schema: Schema) -> descriptor_pb2.FileDescriptorProto | None:
    """The schema's ``FileDescriptorProto`` when it is in that form (base64), else None
    (``.proto`` text)."""
    try:
        raw = base64.b64decode(schema.schema_str, validate=True)
    except (binascii.Error, ValueError):
        return None
    fdp = descriptor_pb2.FileDescriptorProto()
    try:
        fdp.ParseFromString(raw)
    except Exception:
        return None
    return fdp if fdp.message_type or fdp.name else None


def _compile_proto_text(
    schema: Schema, client: SchemaRegistryClient
) -> list[descriptor_pb2.FileDescriptorProto]:
    """A ``.proto`` text schema compiled by protoc (grpcio-tools): its files in dependency
    order, the schema's own last. Its references are written as the files it imports
    (each reference's ``name`` is the import path), fetched through the client (blocking:
    :meth:`RegistryDeserializer.fetch` puts them in the client's cache first)."""
    try:
        from grpc_tools import protoc  # type: ignore[import-untyped]
    except ImportError:
        raise SerializationError(
            "a PROTOBUF schema in .proto text form needs protoc to be read without the "
            "message class: pip install grpcio-tools (or give the deserializer the class)"
        ) from None
    import importlib.resources

    main = f"registry_{hashlib.sha256(schema.schema_str.encode()).hexdigest()[:16]}.proto"
    with tempfile.TemporaryDirectory(prefix="kafka-async-proto-") as tmp:
        root = Path(tmp)

        def write(name: str, s: Schema) -> None:
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            fdp = _descriptor(s)
            if fdp is not None:
                raise SerializationError(
                    f"the .proto text schema imports {name!r}, registered as a descriptor: "
                    "mixed forms are not supported"
                )
            path.write_text(s.schema_str)
            for ref in s.references:
                if not _is_well_known(ref.name):
                    write(ref.name, client.version_blocking(ref.subject, ref.version).schema)

        write(main, schema)
        out = root / "out.pb"
        include = str(importlib.resources.files("grpc_tools") / "_proto")
        code = protoc.main(
            [
                "protoc",
                f"-I{root}",
                f"-I{include}",
                f"--descriptor_set_out={out}",
                "--include_imports",
                main,
            ]
        )
        if code != 0 or not out.exists():
            raise SerializationError(
                f"protoc could not compile the .proto text schema (exit {code}; its messages "
                "are on the standard error)"
            )
        fds = descriptor_pb2.FileDescriptorSet()
        fds.ParseFromString(out.read_bytes())
    return list(fds.file)


class _Reader:
    """A writer schema's descriptor pool, its file's name, and the classes built so far."""

    __slots__ = ("classes", "file_name", "pool")

    def __init__(self, pool: Any, file_name: str) -> None:
        self.pool = pool
        self.file_name = file_name
        self.classes: dict[tuple[int, ...], type[Message]] = {}


class ProtobufDeserializer(RegistryDeserializer[_Reader | None, Message]):
    """Decodes values into ``message_type`` (the registry is then not asked at all), or,
    when it is None, into a message class built from each value's writer schema and
    message indexes."""

    def __init__(
        self, client: SchemaRegistryClient, message_type: type[Message] | None = None
    ) -> None:
        super().__init__(client)
        self._message_type = message_type

    def _reader(self, schema_id: int | str) -> _Reader | None:
        if self._message_type is not None:
            return None
        return super()._reader(schema_id)

    def _parse_blocking(self, schema: Schema) -> _Reader | None:
        pool = descriptor_pool.DescriptorPool()
        added: set[str] = set()

        def add(s: Schema) -> descriptor_pb2.FileDescriptorProto:
            fdp = _descriptor(s)
            if fdp is None:  # .proto text: protoc compiles it with its imports
                files = _compile_proto_text(s, self._client)
                for f in files[:-1]:  # what it imports, well-known types included
                    if f.name not in added:
                        pool.Add(f)
                        added.add(f.name)
                fdp = files[-1]
            else:
                for ref in s.references:
                    add(self._client.version_blocking(ref.subject, ref.version).schema)
            for dep in fdp.dependency:
                if _is_well_known(dep) and dep not in added:
                    pool.AddSerializedFile(
                        descriptor_pool.Default().FindFileByName(dep).serialized_pb
                    )
                    added.add(dep)
            if fdp.name not in added:
                pool.Add(fdp)
                added.add(fdp.name)
            return fdp

        return _Reader(pool, add(schema).name)

    def _decode(self, reader: _Reader | None, payload: memoryview) -> Message:
        indexes, body = decode_message_indexes(payload)
        if reader is None:
            assert self._message_type is not None
            cls = self._message_type
        else:
            key = tuple(indexes)
            found = reader.classes.get(key)
            if found is None:
                found = reader.classes[key] = self._class_at(reader, indexes)
            cls = found
        msg = cls()
        msg.ParseFromString(bytes(body))
        return msg

    @staticmethod
    def _class_at(reader: _Reader, indexes: list[int]) -> type[Message]:
        """The message class at ``indexes`` in the writer schema's file."""
        fd = reader.pool.FindFileByName(reader.file_name)
        try:
            desc = list(fd.message_types_by_name.values())[indexes[0]]
            for i in indexes[1:]:
                desc = desc.nested_types[i]
        except IndexError:
            raise SerializationError(
                f"message indexes {indexes} name no message of {reader.file_name}"
            ) from None
        cls: type[Message] = message_factory.GetMessageClass(desc)
        return cls


def schema_message(
    schema: Schema, client: SchemaRegistryClient, message_name: str | None = None
) -> Descriptor:
    """The descriptor of message ``message_name`` (a full name; default: the file's first
    message) of a Protobuf schema as the registry holds it (base64 descriptor or ``.proto``
    text), its references fetched with blocking requests (no event loop: the Spark
    functions)."""
    reader = ProtobufDeserializer(client)._parse_blocking(schema)  # noqa: SLF001 - same module
    assert reader is not None
    if message_name is not None:
        found: Descriptor = reader.pool.FindMessageTypeByName(message_name)
        return found
    messages = list(reader.pool.FindFileByName(reader.file_name).message_types_by_name.values())
    if not messages:
        raise SerializationError("the Protobuf schema defines no message")
    first: Descriptor = messages[0]
    return first
