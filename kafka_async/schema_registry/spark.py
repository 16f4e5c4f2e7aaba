"""Registry-aware columns for Spark, Avro, JSON Schema and Protobuf: :func:`from_registry` and
:func:`to_registry`, the registry counterparts of Spark's ``from_avro``/``to_avro`` (which
read and write plain Avro without Confluent's 5-byte prefix and know no registry).

    from kafka_async.schema_registry.spark import from_registry, to_registry

    df = spark.read.format("kafka_async").option(...).load()
    typed = df.select(from_registry("value", url, subject="orders-value").alias("v")).select("v.*")
    encoded = to_registry(struct("*"), url, subject="orders-value", schema=text)
    out = typed.select(encoded.alias("value"))

``from_registry`` takes the subject's latest schema on the driver (or the ``schema`` given)
and gives a struct column of its Spark types; each value is decoded with the writer schema of
its own id and resolved into that reader schema (Avro's schema resolution), so records
written with older compatible versions fill the same columns. ``to_registry`` registers the
schema (or finds its id) on the driver and encodes each struct row with it. Executors reach
the registry only for schema ids they have not seen (one request each); the functions carry
the URL and credentials, not a client, to the executors.

Type mapping (Avro -> Spark): boolean, int, long, float, double, string, bytes/fixed ->
BooleanType, IntegerType, LongType, FloatType, DoubleType, StringType, BinaryType; enum ->
StringType; record -> StructType; array -> ArrayType; map -> MapType(StringType, ...);
``["null", T]`` -> T, nullable; logical types date, timestamp-millis/-micros and decimal ->
DateType, TimestampType, DecimalType. Other unions raise
:class:`~kafka_async.schema_registry.errors.SchemaRegistryConfigError`.

JSON Schema (``schema_type="JSON"``, or a subject whose latest version is one) -> Spark:
``object`` with ``properties`` -> StructType (a property not in ``required``, or typed
``[T, "null"]``, is nullable); ``object`` with only ``additionalProperties`` -> MapType;
``array`` -> ArrayType; ``string``/``integer``/``number``/``boolean`` -> StringType, LongType,
DoubleType, BooleanType; ``enum`` -> StringType; local ``$ref`` (``#/definitions/...``,
``#/$defs/...``) followed. Values are written as compact JSON text after the prefix, a null
field as an absent property.

Protobuf (``schema_type="PROTOBUF"``): the message ``message_name`` of the schema's file (by
default its first message) -> StructType with a field per message field (in declaration
order): int32/sint32/sfixed32 -> IntegerType, int64/uint32/uint64/sint64/fixed32/fixed64/
sfixed64 -> LongType (uint64 above 2**63-1 does not fit), float/double, bool, string, bytes,
enum -> its value's name (StringType), message -> StructType (nullable: unset is null),
repeated -> ArrayType, map -> MapType. Written with the message's indexes, as the
serializers do. ``.proto`` text schemas need grpcio-tools (see the protobuf module).
"""

from __future__ import annotations

import io
import json
from typing import Any

from .client import SchemaRegistryClient
from .errors import SchemaRegistryConfigError
from .schema import Schema

__all__ = [
    "avro_to_spark",
    "from_registry",
    "json_schema_to_spark",
    "proto_to_spark",
    "to_registry",
]


def _types() -> Any:
    try:
        from pyspark.sql import types
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ImportError(
            "kafka_async.schema_registry.spark needs pyspark: pip install "
            "'kafka-async-client[spark,schema-registry]'"
        ) from exc
    return types


def avro_to_spark(doc: Any, named: dict[str, Any] | None = None) -> tuple[Any, bool]:
    """``(Spark DataType, nullable)`` of an Avro schema (parsed JSON)."""
    t = _types()
    named = {} if named is None else named
    if isinstance(doc, str):
        primitive = {
            "boolean": t.BooleanType(),
            "int": t.IntegerType(),
            "long": t.LongType(),
            "float": t.FloatType(),
            "double": t.DoubleType(),
            "string": t.StringType(),
            "bytes": t.BinaryType(),
            "null": t.NullType(),
        }
        if doc in primitive:
            return primitive[doc], doc == "null"
        if doc in named:
            return named[doc], False
        short = {k.rsplit(".", 1)[-1]: v for k, v in named.items()}
        if doc in short:
            return short[doc], False
        raise SchemaRegistryConfigError(f"unknown Avro type {doc!r}")
    if isinstance(doc, list):
        members = [m for m in doc if m != "null"]
        if len(members) != 1:
            raise SchemaRegistryConfigError(
                f"Avro union {json.dumps(doc)} has no Spark type here (only [null, T] unions)"
            )
        dtype, _ = avro_to_spark(members[0], named)
        return dtype, len(members) != len(doc)
    kind = doc.get("type")
    logical = doc.get("logicalType")
    if logical == "date" and kind == "int":
        return t.DateType(), False
    if logical in ("timestamp-millis", "timestamp-micros") and kind == "long":
        return t.TimestampType(), False
    if logical == "decimal" and kind in ("bytes", "fixed"):
        return t.DecimalType(int(doc["precision"]), int(doc.get("scale", 0))), False
    if kind == "record":
        fields = []
        name = str(doc["name"])
        ns = doc.get("namespace")
        full = name if "." in name or not ns else f"{ns}.{name}"
        for f in doc["fields"]:
            dtype, nullable = avro_to_spark(f["type"], named)
            fields.append(t.StructField(f["name"], dtype, nullable))
        struct = t.StructType(fields)
        named[full] = struct
        return struct, False
    if kind == "enum":
        named[str(doc["name"])] = t.StringType()
        return t.StringType(), False
    if kind == "fixed":
        named[str(doc["name"])] = t.BinaryType()
        return t.BinaryType(), False
    if kind == "array":
        item, nullable = avro_to_spark(doc["items"], named)
        return t.ArrayType(item, nullable), False
    if kind == "map":
        value, nullable = avro_to_spark(doc["values"], named)
        return t.MapType(t.StringType(), value, nullable), False
    return avro_to_spark(kind, named)


def json_schema_to_spark(
    doc: Any, root: Any = None, seen: tuple[str, ...] = ()
) -> tuple[Any, bool]:
    """``(Spark DataType, nullable)`` of a JSON Schema (parsed JSON)."""
    t = _types()
    root = doc if root is None else root
    if not isinstance(doc, dict):
        raise SchemaRegistryConfigError(f"JSON Schema {doc!r} has no Spark type here")
    ref = doc.get("$ref")
    if isinstance(ref, str):
        if not ref.startswith("#/") or ref in seen:
            raise SchemaRegistryConfigError(
                f"JSON Schema $ref {ref!r}: only local, non-recursive references have a "
                "Spark type here"
            )
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        return json_schema_to_spark(target, root, (*seen, ref))
    kind = doc.get("type")
    nullable = False
    if isinstance(kind, list):
        members = [k for k in kind if k != "null"]
        nullable = len(members) != len(kind)
        if len(members) != 1:
            raise SchemaRegistryConfigError(
                f"JSON Schema type {kind!r} has no Spark type here (one type, or [T, null])"
            )
        kind = members[0]
    if kind is None and "enum" in doc:
        return t.StringType(), nullable
    if kind is None and "properties" in doc:
        kind = "object"
    simple = {
        "string": t.StringType(),
        "integer": t.LongType(),
        "number": t.DoubleType(),
        "boolean": t.BooleanType(),
    }
    if kind in simple:
        return simple[kind], nullable
    if kind == "array":
        item, item_null = json_schema_to_spark(doc.get("items", {}), root, seen)
        return t.ArrayType(item, item_null), nullable
    if kind == "object":
        props = doc.get("properties")
        if props:
            required = set(doc.get("required", ()))
            fields = []
            for name, sub in props.items():
                dtype, sub_null = json_schema_to_spark(sub, root, seen)
                fields.append(t.StructField(name, dtype, sub_null or name not in required))
            return t.StructType(fields), nullable
        extra = doc.get("additionalProperties")
        if isinstance(extra, dict):
            value, value_null = json_schema_to_spark(extra, root, seen)
            return t.MapType(t.StringType(), value, value_null), nullable
    raise SchemaRegistryConfigError(f"JSON Schema {json.dumps(doc)} has no Spark type here")


# FieldDescriptor types -> Spark type names (see the module docstring).
_PROTO_SCALARS = {
    1: "DoubleType",
    2: "FloatType",
    3: "LongType",
    4: "LongType",
    5: "IntegerType",
    6: "LongType",
    7: "LongType",
    8: "BooleanType",
    9: "StringType",
    12: "BinaryType",
    13: "LongType",
    14: "StringType",
    15: "IntegerType",
    16: "LongType",
    17: "IntegerType",
    18: "LongType",
}


def _is_map(field: Any) -> bool:
    return bool(field.message_type is not None and field.message_type.GetOptions().map_entry)


def _is_repeated(field: Any) -> bool:
    if hasattr(field, "is_repeated"):  # protobuf 5.28+ (``label`` is gone in 7)
        return bool(field.is_repeated)
    return bool(field.label == 3)


def proto_to_spark(desc: Any, seen: tuple[str, ...] = ()) -> Any:
    """The Spark StructType of a Protobuf message descriptor."""
    t = _types()
    if desc.full_name in seen:
        raise SchemaRegistryConfigError(
            f"Protobuf message {desc.full_name} is recursive: no Spark type"
        )
    seen = (*seen, desc.full_name)

    def of(field: Any) -> tuple[Any, bool]:
        if field.type == 11:  # message
            return proto_to_spark(field.message_type, seen), True
        if field.type not in _PROTO_SCALARS:
            raise SchemaRegistryConfigError(f"Protobuf field {field.full_name}: no Spark type")
        return getattr(t, _PROTO_SCALARS[field.type])(), False

    fields = []
    for f in desc.fields:
        if _is_map(f):
            key, _ = of(f.message_type.fields_by_name["key"])
            value, value_null = of(f.message_type.fields_by_name["value"])
            fields.append(t.StructField(f.name, t.MapType(key, value, value_null), False))
        elif _is_repeated(f):
            item, _ = of(f)
            fields.append(t.StructField(f.name, t.ArrayType(item, False), False))
        else:
            dtype, nullable = of(f)
            fields.append(t.StructField(f.name, dtype, nullable))
    return t.StructType(fields)


def _proto_value(field: Any, v: Any) -> Any:
    if field.type == 11:
        return _proto_row(v)
    if field.type == 14:
        found = field.enum_type.values_by_number.get(v)
        return found.name if found is not None else str(v)
    return v


def _proto_row(msg: Any) -> tuple[Any, ...]:
    """A message as the tuple of its StructType (:func:`proto_to_spark`)."""
    out: list[Any] = []
    for f in msg.DESCRIPTOR.fields:
        v = getattr(msg, f.name)
        if _is_map(f):
            vf = f.message_type.fields_by_name["value"]
            out.append({k: _proto_value(vf, x) for k, x in v.items()})
        elif _is_repeated(f):
            out.append([_proto_value(f, x) for x in v])
        elif f.type == 11:
            out.append(_proto_row(v) if msg.HasField(f.name) else None)
        else:
            out.append(_proto_value(f, v))
    return tuple(out)


def _fill_proto(msg: Any, d: dict[str, Any]) -> None:
    """Set ``msg``'s fields from a row's dict (the inverse of :func:`_proto_row`)."""
    for f in msg.DESCRIPTOR.fields:
        v = d.get(f.name)
        if v is None:
            continue
        target = getattr(msg, f.name)
        if _is_map(f):
            vf = f.message_type.fields_by_name["value"]
            for k, x in v.items():
                if vf.type == 11:
                    _fill_proto(target[k], x)
                else:
                    target[k] = _proto_scalar(vf, x)
        elif _is_repeated(f):
            for x in v:
                if f.type == 11:
                    _fill_proto(target.add(), x)
                else:
                    target.append(_proto_scalar(f, x))
        elif f.type == 11:
            _fill_proto(target, v)
        else:
            setattr(msg, f.name, _proto_scalar(f, v))


def _proto_scalar(field: Any, v: Any) -> Any:
    if field.type == 14 and isinstance(v, str):
        return field.enum_type.values_by_name[v].number
    return v


def _without_nulls(value: Any) -> Any:
    """``value`` with the None-valued keys of its dicts left out, at every depth."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _to_spark_value(value: Any, dtype: Any) -> Any:
    """A decoded value as Spark takes it for ``dtype`` (structs as tuples)."""
    t = _types()
    if value is None:
        return None
    if isinstance(dtype, t.DoubleType | t.FloatType) and isinstance(value, int):
        return float(value)  # JSON's 1 for a number: Spark would make it null
    if isinstance(dtype, t.StructType):
        return tuple(_to_spark_value(value.get(f.name), f.dataType) for f in dtype.fields)
    if isinstance(dtype, t.ArrayType):
        return [_to_spark_value(v, dtype.elementType) for v in value]
    if isinstance(dtype, t.MapType):
        return {k: _to_spark_value(v, dtype.valueType) for k, v in value.items()}
    return value


def _client(url: str, basic_auth: tuple[str, str] | None, bearer_token: str | None) -> Any:
    return SchemaRegistryClient(url, basic_auth=basic_auth, bearer_token=bearer_token)


def _protobuf_message(schema: Schema, client: Any, message_name: str | None) -> Any:
    from .protobuf import schema_message

    return schema_message(schema, client, message_name)


def from_registry(
    column: Any,
    url: str,
    *,
    subject: str | None = None,
    schema: str | None = None,
    schema_type: str | None = None,
    message_name: str | None = None,
    basic_auth: tuple[str, str] | None = None,
    bearer_token: str | None = None,
) -> Any:
    """A struct column decoded from Confluent-framed bytes in ``column`` (a name or a
    Column). The reader schema is ``schema`` (of ``schema_type``: ``"AVRO"`` by default,
    ``"JSON"``, ``"PROTOBUF"``) or the latest version of ``subject`` (its type is the
    registry's). For Protobuf, ``message_name`` picks the message (default: the first)."""
    from pyspark.sql.functions import udf

    if (subject is None) == (schema is None):
        raise SchemaRegistryConfigError("from_registry needs subject or schema (one of them)")
    probe = _client(url, basic_auth, bearer_token)
    try:
        if schema is None:
            assert subject is not None
            found = probe.version_blocking(subject, "latest").schema
        else:
            found = Schema(schema, (schema_type or "AVRO").upper())
        kind = found.schema_type
        if kind == "PROTOBUF":
            dtype = proto_to_spark(_protobuf_message(found, probe, message_name))
        elif kind == "JSON":
            dtype, _ = json_schema_to_spark(json.loads(found.schema_str))
        elif kind == "AVRO":
            dtype, _ = avro_to_spark(json.loads(found.schema_str))
        else:
            raise SchemaRegistryConfigError(f"unknown schema type {kind!r}")
    finally:
        probe.close_blocking()
    reader_text = found.schema_str
    state: dict[str, Any] = {}

    def decode(data: Any) -> Any:
        if data is None:
            return None
        deser = state.get("deser")
        if deser is None:
            client = _client(url, basic_auth, bearer_token)
            if kind == "AVRO":
                from .avro import AvroDeserializer

                deser = AvroDeserializer(client, reader_text)
            elif kind == "JSON":
                from .json_schema import JSONDeserializer

                deser = JSONDeserializer(client)
            else:
                from .protobuf import ProtobufDeserializer

                deser = ProtobufDeserializer(client)
            state["deser"] = deser
        value = deser.decode_blocking(bytes(data))
        if kind == "PROTOBUF":
            return _proto_row(value)
        return _to_spark_value(value, dtype)

    # Spark reads a UDF's annotations to pick a pandas UDF, and warns on these: hide them.
    decode.__annotations__ = {}
    return udf(decode, dtype)(column)


def to_registry(
    column: Any,
    url: str,
    *,
    subject: str,
    schema: str,
    schema_type: str = "AVRO",
    message_name: str | None = None,
    basic_auth: tuple[str, str] | None = None,
    bearer_token: str | None = None,
    auto_register: bool = True,
) -> Any:
    """A binary column: the struct ``column`` encoded in Confluent's wire format with
    ``schema`` (of ``schema_type``: ``"AVRO"``, ``"JSON"`` or ``"PROTOBUF"``, the latter as
    the registry holds it: a base64 ``FileDescriptorProto`` or ``.proto`` text), registered
    under ``subject`` on the driver (or looked up when ``auto_register`` is False). For
    Protobuf, ``message_name`` picks the message (default: the file's first)."""
    import fastavro
    from pyspark.sql.functions import udf

    from .wire import encode_message_indexes, frame

    kind = schema_type.upper()
    given = Schema(schema, kind)
    client = _client(url, basic_auth, bearer_token)
    try:
        if auto_register:
            schema_id = client.register_blocking(subject, given)
        else:
            found = client.version_blocking(subject, "latest")
            same = (
                json.loads(found.schema.schema_str) == json.loads(schema)
                if kind in ("AVRO", "JSON")
                else found.schema.schema_str == schema
            )
            if not same:
                raise SchemaRegistryConfigError(
                    f"auto_register is off and the latest version of {subject!r} is not this schema"
                )
            schema_id = found.schema_id
        if kind == "PROTOBUF":  # checked on the driver: the message exists
            from .protobuf import message_indexes

            indexes = encode_message_indexes(
                message_indexes(_protobuf_message(given, client, message_name))
            )
    finally:
        client.close_blocking()
    prefix = frame(schema_id)
    t = _types()
    state: dict[str, Any] = {}

    def encode(row: Any) -> Any:
        if row is None:
            return None
        d = row.asDict(recursive=True)
        if kind == "JSON":
            # A null field is an absent property (what an optional property allows).
            return (
                prefix + json.dumps(_without_nulls(d), separators=(",", ":"), default=str).encode()
            )
        if kind == "PROTOBUF":
            cls = state.get("cls")
            if cls is None:
                from google.protobuf import message_factory

                desc = _protobuf_message(
                    given, _client(url, basic_auth, bearer_token), message_name
                )
                cls = state["cls"] = message_factory.GetMessageClass(desc)
            msg = cls()
            _fill_proto(msg, d)
            return prefix + indexes + msg.SerializeToString()
        parsed = state.get("parsed")
        if parsed is None:
            parsed = state["parsed"] = fastavro.parse_schema(json.loads(schema))
        buf = io.BytesIO()
        buf.write(prefix)
        fastavro.schemaless_writer(buf, parsed, d)
        return buf.getvalue()

    encode.__annotations__ = {}
    return udf(encode, t.BinaryType())(column)
