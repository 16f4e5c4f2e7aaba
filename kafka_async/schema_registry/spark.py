"""Registry-aware Avro columns for Spark: :func:`from_registry` and :func:`to_registry`, the
registry counterparts of Spark's ``from_avro``/``to_avro`` (which read and write plain Avro
without Confluent's 5-byte prefix and know no registry).

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
"""

from __future__ import annotations

import io
import json
from typing import Any

from .client import SchemaRegistryClient
from .errors import SchemaRegistryConfigError
from .schema import Schema

__all__ = ["avro_to_spark", "from_registry", "to_registry"]


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


def _to_spark_value(value: Any, dtype: Any) -> Any:
    """A fastavro value as Spark takes it for ``dtype`` (structs as tuples)."""
    t = _types()
    if value is None:
        return None
    if isinstance(dtype, t.StructType):
        return tuple(_to_spark_value(value.get(f.name), f.dataType) for f in dtype.fields)
    if isinstance(dtype, t.ArrayType):
        return [_to_spark_value(v, dtype.elementType) for v in value]
    if isinstance(dtype, t.MapType):
        return {k: _to_spark_value(v, dtype.valueType) for k, v in value.items()}
    return value


def _client(url: str, basic_auth: tuple[str, str] | None, bearer_token: str | None) -> Any:
    return SchemaRegistryClient(url, basic_auth=basic_auth, bearer_token=bearer_token)


def from_registry(
    column: Any,
    url: str,
    *,
    subject: str | None = None,
    schema: str | None = None,
    basic_auth: tuple[str, str] | None = None,
    bearer_token: str | None = None,
) -> Any:
    """A struct column decoded from Confluent-framed Avro bytes in ``column`` (a name or a
    Column). The reader schema is ``schema`` or the latest version of ``subject``."""
    from pyspark.sql.functions import udf

    if (subject is None) == (schema is None):
        raise SchemaRegistryConfigError("from_registry needs subject or schema (one of them)")
    if schema is None:
        assert subject is not None
        probe = _client(url, basic_auth, bearer_token)
        try:
            schema = probe.version_blocking(subject, "latest").schema.schema_str
        finally:
            probe.close_blocking()
    reader_doc = json.loads(schema)
    dtype, _ = avro_to_spark(reader_doc)
    state: dict[str, Any] = {}

    def decode(data: Any) -> Any:
        if data is None:
            return None
        deser = state.get("deser")
        if deser is None:
            from .avro import AvroDeserializer

            deser = state["deser"] = AvroDeserializer(
                _client(url, basic_auth, bearer_token), schema
            )
        return _to_spark_value(deser.decode_blocking(bytes(data)), dtype)

    # Spark reads a UDF's annotations to pick a pandas UDF, and warns on these: hide them.
    decode.__annotations__ = {}
    return udf(decode, dtype)(column)


def to_registry(
    column: Any,
    url: str,
    *,
    subject: str,
    schema: str,
    basic_auth: tuple[str, str] | None = None,
    bearer_token: str | None = None,
    auto_register: bool = True,
) -> Any:
    """A binary column: the struct ``column`` encoded as Confluent-framed Avro with
    ``schema``, registered under ``subject`` on the driver (or looked up when
    ``auto_register`` is False)."""
    import fastavro
    from pyspark.sql.functions import udf

    from .wire import frame

    client = _client(url, basic_auth, bearer_token)
    try:
        if auto_register:
            schema_id = client.register_blocking(subject, Schema(schema))
        else:
            found = client.version_blocking(subject, "latest")
            if json.loads(found.schema.schema_str) != json.loads(schema):
                raise SchemaRegistryConfigError(
                    f"auto_register is off and the latest version of {subject!r} is not this schema"
                )
            schema_id = found.schema_id
    finally:
        client.close_blocking()
    prefix = frame(schema_id)
    t = _types()
    state: dict[str, Any] = {}

    def encode(row: Any) -> Any:
        if row is None:
            return None
        parsed = state.get("parsed")
        if parsed is None:
            parsed = state["parsed"] = fastavro.parse_schema(json.loads(schema))
        buf = io.BytesIO()
        buf.write(prefix)
        fastavro.schemaless_writer(buf, parsed, row.asDict(recursive=True))
        return buf.getvalue()

    encode.__annotations__ = {}
    return udf(encode, t.BinaryType())(column)
