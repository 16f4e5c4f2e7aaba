"""JSON Schema in Confluent's wire format, with jsonschema.

The serializer validates each value against the schema before writing it as JSON text; the
deserializer parses the JSON and (``validate=True``) validates it against the writer schema.
Schema references are ``$ref`` URLs: a reference's ``name`` is the URL the referring schema
uses, and the referenced subject version is served under it.
"""

from __future__ import annotations

import json
from typing import Any

from .client import SchemaRegistryClient
from .errors import SchemaRegistryConfigError, SerializationError
from .schema import Schema
from .serde import RegistryDeserializer, RegistrySerializer
from .wire import SubjectNameStrategy

try:
    import jsonschema
    import jsonschema.validators
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT7
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError(
        "kafka_async.schema_registry.json_schema needs jsonschema: pip install "
        "'kafka-async-client[schema-registry]'"
    ) from exc

__all__ = ["JSONDeserializer", "JSONSerializer"]


def _as_schema(schema: Schema | str | dict[str, Any] | None) -> Schema | None:
    if isinstance(schema, dict):
        return Schema(json.dumps(schema), "JSON")
    if isinstance(schema, str):
        return Schema(schema, "JSON")
    if schema is not None and schema.schema_type != "JSON":
        raise SchemaRegistryConfigError(f"not a JSON Schema: type {schema.schema_type}")
    return schema


def _validator(doc: dict[str, Any], refs: list[tuple[str, dict[str, Any]]]) -> Any:
    """A validator of the schema's draft (Draft 7 when ``$schema`` is absent) whose
    ``$ref`` URLs resolve to the referenced schemas."""
    registry: Registry[Any] = Registry().with_resources(
        (name, Resource.from_contents(ref_doc, default_specification=DRAFT7))
        for name, ref_doc in refs
    )
    cls = jsonschema.validators.validator_for(doc, default=jsonschema.Draft7Validator)
    cls.check_schema(doc)
    return cls(doc, registry=registry)


class _Writer:
    __slots__ = ("validator",)

    def __init__(self, validator: Any) -> None:
        self.validator = validator


class JSONSerializer(RegistrySerializer[_Writer]):
    """Serializes JSON-compatible values (dicts, lists ...) after validating them; see
    :class:`~kafka_async.schema_registry.serde.RegistrySerializer` for the options. The
    record strategies name the schema by its ``title``. ``validate=False`` skips the
    validation (faster; the registry's schema then only documents the data)."""

    schema_type = "JSON"

    def __init__(
        self,
        client: SchemaRegistryClient,
        schema: Schema | str | dict[str, Any] | None = None,
        *,
        topic: str | None = None,
        is_key: bool = False,
        subject_name_strategy: str | SubjectNameStrategy = "topic",
        subject: str | None = None,
        auto_register: bool = True,
        use_latest_version: bool = False,
        normalize: bool = False,
        validate: bool = True,
        schema_id_in_header: bool = False,
    ) -> None:
        super().__init__(
            client,
            _as_schema(schema),
            topic=topic,
            is_key=is_key,
            subject_name_strategy=subject_name_strategy,
            subject=subject,
            auto_register=auto_register,
            use_latest_version=use_latest_version,
            normalize=normalize,
            schema_id_in_header=schema_id_in_header,
        )
        self._validate = validate

    def _record_name(self, schema: Schema | None) -> str | None:
        if schema is None:
            return None
        title = json.loads(schema.schema_str).get("title")
        return str(title) if title else None

    async def _parse(self, schema: Schema) -> _Writer:
        refs: list[tuple[str, dict[str, Any]]] = []

        async def walk(s: Schema) -> None:
            for ref in s.references:
                reg = await self._client.version(ref.subject, ref.version)
                await walk(reg.schema)
                refs.append((ref.name, json.loads(reg.schema.schema_str)))

        await walk(schema)
        return _Writer(_validator(json.loads(schema.schema_str), refs))

    def _encode(self, prefix: bytes, writer: _Writer, value: Any) -> bytes:
        if self._validate:
            error = jsonschema.exceptions.best_match(writer.validator.iter_errors(value))
            if error is not None:
                raise SerializationError(
                    f"value does not match the JSON Schema of subject {self.subject!r} at "
                    f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
                )
        return prefix + json.dumps(value, separators=(",", ":")).encode()


class JSONDeserializer(RegistryDeserializer[_Writer, Any]):
    """Parses values written with any registered JSON Schema; ``validate`` (True) checks
    each against its writer schema."""

    def __init__(self, client: SchemaRegistryClient, *, validate: bool = True) -> None:
        super().__init__(client)
        self._validate = validate

    def _parse_blocking(self, schema: Schema) -> _Writer:
        refs: list[tuple[str, dict[str, Any]]] = []

        def walk(s: Schema) -> None:
            for ref in s.references:
                reg = self._client.version_blocking(ref.subject, ref.version)
                walk(reg.schema)
                refs.append((ref.name, json.loads(reg.schema.schema_str)))

        walk(schema)
        return _Writer(_validator(json.loads(schema.schema_str), refs))

    def _decode(self, reader: _Writer, payload: memoryview) -> Any:
        value = json.loads(bytes(payload))
        if self._validate:
            error = jsonschema.exceptions.best_match(reader.validator.iter_errors(value))
            if error is not None:
                raise SerializationError(
                    f"value does not match its JSON Schema at "
                    f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
                )
        return value
