"""Typed errors of the schema-registry client and of the serializers.

Every message names what was asked (subject, version, schema id, URL path) and the HTTP
status with the registry's own error code and message; none carries a credential (the
client never puts the basic-auth password or the bearer token into a message or a repr).
"""

from __future__ import annotations

from typing import ClassVar

from kafka_async.errors import ConfigError, KafkaError

__all__ = [
    "IncompatibleSchemaError",
    "InvalidSchemaError",
    "RegistryAuthError",
    "RegistryUnavailableError",
    "SchemaNotFoundError",
    "SchemaRegistryConfigError",
    "SchemaRegistryError",
    "SerializationError",
    "SubjectNotFoundError",
    "VersionNotFoundError",
    "error_for",
]


class SchemaRegistryError(KafkaError):
    """A schema registry answered with an error, or could not be reached.

    ``status`` is the HTTP status (0 when no answer came), ``error_code`` the registry's
    ``error_code`` (Confluent's REST API: 40401 subject not found, 40402 version not found,
    40403 schema not found, 409 incompatible, 42201 invalid schema ...; 0 when absent),
    ``subject``/``version``/``schema_id`` what the request named, when it named them.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        error_code: int = 0,
        subject: str | None = None,
        version: int | str | None = None,
        schema_id: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.subject = subject
        self.version = version
        self.schema_id = schema_id


class SubjectNotFoundError(SchemaRegistryError):
    """The subject does not exist (HTTP 404, error code 40401)."""


class VersionNotFoundError(SchemaRegistryError):
    """The subject has no such version (HTTP 404, error code 40402)."""


class SchemaNotFoundError(SchemaRegistryError):
    """No schema has that id, or the subject has no version equal to the schema (40403)."""


class IncompatibleSchemaError(SchemaRegistryError):
    """The registry refused a schema that breaks the subject's compatibility rule (HTTP 409),
    or a compatibility check answered ``is_compatible: false``."""


class InvalidSchemaError(SchemaRegistryError):
    """The registry could not parse the schema, or a reference is missing (HTTP 422)."""


class RegistryAuthError(SchemaRegistryError):
    """The registry refused the credentials (HTTP 401) or the operation (HTTP 403)."""


class RegistryUnavailableError(SchemaRegistryError):
    """No answer, or a server-side error (HTTP 5xx, 429), until the request's deadline."""

    retriable: ClassVar[bool] = True


class SchemaRegistryConfigError(ConfigError):
    """A serializer or client setting is missing or inconsistent (e.g. auto-registration off
    and use-latest-version off with a schema the registry does not have)."""


class SerializationError(KafkaError):
    """A value could not be serialized or deserialized with its schema (wrong shape, not
    Confluent's wire format, an unknown schema id). On the consumer it arrives as the
    ``cause`` of :class:`~kafka_async.errors.RecordDeserializationError`."""


def error_for(
    status: int,
    error_code: int,
    message: str,
    *,
    subject: str | None = None,
    version: int | str | None = None,
    schema_id: int | None = None,
) -> SchemaRegistryError:
    """The typed error for one HTTP answer: by the registry's error code first, then by the
    HTTP status."""
    cls: type[SchemaRegistryError]
    if error_code == 40401:
        cls = SubjectNotFoundError
    elif error_code == 40402:
        cls = VersionNotFoundError
    elif error_code == 40403:
        cls = SchemaNotFoundError
    elif status == 409:
        cls = IncompatibleSchemaError
    elif status == 422:
        cls = InvalidSchemaError
    elif status in (401, 403):
        cls = RegistryAuthError
    elif status >= 500 or status == 429:
        cls = RegistryUnavailableError
    elif status == 404:
        cls = SchemaNotFoundError if schema_id is not None else SubjectNotFoundError
    else:
        cls = SchemaRegistryError
    return cls(
        message,
        status=status,
        error_code=error_code,
        subject=subject,
        version=version,
        schema_id=schema_id,
    )
