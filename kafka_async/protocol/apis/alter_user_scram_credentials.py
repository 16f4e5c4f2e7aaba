# Generated from kafka_async/protocol/definitions/alter_user_scram_credentials.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""AlterUserScramCredentials: create, replace or delete SCRAM credentials.

Versions 0, flexible 0+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BYTES,
    INT8,
    INT16,
    INT32,
    MISSING,
    STRING,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class AlterUserScramCredentialsRequest(Message):
    """The AlterUserScramCredentials request (key 51)."""

    __slots__ = ("deletions", "upsertions")

    deletions: list[ScramCredentialDeletion]
    """Credentials to delete."""
    upsertions: list[ScramCredentialUpsertion]
    """Credentials to create or replace."""

    def __init__(
        self,
        *,
        deletions: list[ScramCredentialDeletion] = MISSING,
        upsertions: list[ScramCredentialUpsertion] = MISSING,
    ) -> None:
        self.deletions = [] if deletions is MISSING else deletions
        self.upsertions = [] if upsertions is MISSING else upsertions


class ScramCredentialDeletion(Message):
    """Credentials to delete."""

    __slots__ = ("name", "mechanism")

    name: str
    """User name."""
    mechanism: int
    """SCRAM mechanism: 1 SHA-256, 2 SHA-512."""

    def __init__(self, *, name: str = "", mechanism: int = 0) -> None:
        self.name = name
        self.mechanism = mechanism


class ScramCredentialUpsertion(Message):
    """Credentials to create or replace."""

    __slots__ = ("name", "mechanism", "iterations", "salt", "salted_password")

    name: str
    """User name."""
    mechanism: int
    """SCRAM mechanism: 1 SHA-256, 2 SHA-512."""
    iterations: int
    """SCRAM iteration count."""
    salt: bytes
    """SCRAM salt."""
    salted_password: bytes
    """SCRAM salted password."""

    def __init__(
        self,
        *,
        name: str = "",
        mechanism: int = 0,
        iterations: int = 0,
        salt: bytes = b"",
        salted_password: bytes = b"",
    ) -> None:
        self.name = name
        self.mechanism = mechanism
        self.iterations = iterations
        self.salt = salt
        self.salted_password = salted_password


class AlterUserScramCredentialsResponse(Message):
    """The AlterUserScramCredentials response (key 51)."""

    __slots__ = ("throttle_time_ms", "results")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    results: list[AlterUserScramCredentialsResult]
    """One result per user."""

    def __init__(
        self, *, throttle_time_ms: int = 0, results: list[AlterUserScramCredentialsResult] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.results = [] if results is MISSING else results


class AlterUserScramCredentialsResult(Message):
    """One result per user."""

    __slots__ = ("user", "error_code", "error_message")

    user: str
    """User name."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(
        self, *, user: str = "", error_code: int = 0, error_message: str | None = ""
    ) -> None:
        self.user = user
        self.error_code = error_code
        self.error_message = error_message


# The schema the codecs are compiled from (nested structs first).
_SCRAM_CREDENTIAL_DELETION = StructDef(
    "ScramCredentialDeletion",
    [Field("name", STRING), Field("mechanism", INT8)],
    ScramCredentialDeletion,
)
_SCRAM_CREDENTIAL_UPSERTION = StructDef(
    "ScramCredentialUpsertion",
    [
        Field("name", STRING),
        Field("mechanism", INT8),
        Field("iterations", INT32),
        Field("salt", BYTES),
        Field("salted_password", BYTES),
    ],
    ScramCredentialUpsertion,
)
_ALTER_USER_SCRAM_CREDENTIALS_REQUEST = StructDef(
    "AlterUserScramCredentialsRequest",
    [
        Field("deletions", array(_SCRAM_CREDENTIAL_DELETION)),
        Field("upsertions", array(_SCRAM_CREDENTIAL_UPSERTION)),
    ],
    AlterUserScramCredentialsRequest,
)
_ALTER_USER_SCRAM_CREDENTIALS_RESULT = StructDef(
    "AlterUserScramCredentialsResult",
    [
        Field("user", STRING),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
    ],
    AlterUserScramCredentialsResult,
)
_ALTER_USER_SCRAM_CREDENTIALS_RESPONSE = StructDef(
    "AlterUserScramCredentialsResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("results", array(_ALTER_USER_SCRAM_CREDENTIALS_RESULT)),
    ],
    AlterUserScramCredentialsResponse,
)

ALTER_USER_SCRAM_CREDENTIALS: Api[
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse
] = Api(
    51,
    "AlterUserScramCredentials",
    "0",
    "0+",
    _ALTER_USER_SCRAM_CREDENTIALS_REQUEST,
    _ALTER_USER_SCRAM_CREDENTIALS_RESPONSE,
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
)
"""AlterUserScramCredentials (key 51), versions 0."""
