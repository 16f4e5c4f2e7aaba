"""The registry's records: a schema (text, type, references) and a registered schema (the
schema with its id, subject and version)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RegisteredSchema", "Schema", "SchemaReference"]

#: The schema types of Confluent's REST API (``schemaType``; absent means AVRO).
SCHEMA_TYPES = ("AVRO", "JSON", "PROTOBUF")


@dataclass(frozen=True, slots=True)
class SchemaReference:
    """A named reference from one schema to a version of another subject: ``name`` is how
    the referring schema names it (an Avro full name, a JSON Schema ``$ref`` URL, a Protobuf
    import path)."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, Any]:
        """The REST API's form."""
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True, slots=True)
class Schema:
    """A schema's text, its type (``"AVRO"``, ``"JSON"`` or ``"PROTOBUF"``) and the
    references it imports. Equal schemas hash alike, so a schema is a cache key."""

    schema_str: str
    schema_type: str = "AVRO"
    references: tuple[SchemaReference, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The body of a register, lookup or compatibility request."""
        body: dict[str, Any] = {"schema": self.schema_str}
        if self.schema_type != "AVRO":
            body["schemaType"] = self.schema_type
        if self.references:
            body["references"] = [r.to_json() for r in self.references]
        return body

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Schema:
        """A schema from a REST answer (``GET /schemas/ids/N``, a subject version)."""
        refs = tuple(
            SchemaReference(str(r["name"]), str(r["subject"]), int(r["version"]))
            for r in doc.get("references") or ()
        )
        return cls(str(doc["schema"]), str(doc.get("schemaType") or "AVRO"), refs)


@dataclass(frozen=True, slots=True)
class RegisteredSchema:
    """A schema as registered under a subject: its global ``schema_id`` (what the wire
    format carries) and the subject's ``version`` of it."""

    schema_id: int
    subject: str
    version: int
    schema: Schema
    #: The schema's GUID, when the registry gives one (Confluent Schema Registry 8+): what
    #: the header-carried format (``__value_schema_id``) identifies the schema by.
    guid: str | None = None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> RegisteredSchema:
        """From ``GET /subjects/S/versions/V`` or ``POST /subjects/S`` (lookup)."""
        guid = doc.get("guid")
        return cls(
            int(doc["id"]),
            str(doc["subject"]),
            int(doc["version"]),
            Schema.from_json(doc),
            str(guid) if guid else None,
        )
