# Generated from kafka_async/protocol/definitions/describe_user_scram_credentials.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeUserScramCredentials: the SCRAM credentials of users.

Versions 0, flexible 0+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT8, INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class DescribeUserScramCredentialsRequest(Message):
    """The DescribeUserScramCredentials request (key 50)."""

    __slots__ = ("users",)

    users: list[UserName] | None
    """The users to describe, or null for all."""

    def __init__(self, *, users: list[UserName] | None = MISSING) -> None:
        self.users = [] if users is MISSING else users


class UserName(Message):
    """The users to describe, or null for all."""

    __slots__ = ("name",)

    name: str
    """User name."""

    def __init__(self, *, name: str = "") -> None:
        self.name = name


class DescribeUserScramCredentialsResponse(Message):
    """The DescribeUserScramCredentials response (key 50)."""

    __slots__ = ("throttle_time_ms", "error_code", "error_message", "results")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or a request-level error."""
    error_message: str | None
    """The broker's description of the error, or null."""
    results: list[DescribeUserScramCredentialsResult]
    """One result per user."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        error_message: str | None = "",
        results: list[DescribeUserScramCredentialsResult] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.error_message = error_message
        self.results = [] if results is MISSING else results


class DescribeUserScramCredentialsResult(Message):
    """One result per user."""

    __slots__ = ("user", "error_code", "error_message", "credential_infos")

    user: str
    """User name."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""
    credential_infos: list[CredentialInfo]
    """The user's credentials."""

    def __init__(
        self,
        *,
        user: str = "",
        error_code: int = 0,
        error_message: str | None = "",
        credential_infos: list[CredentialInfo] = MISSING,
    ) -> None:
        self.user = user
        self.error_code = error_code
        self.error_message = error_message
        self.credential_infos = [] if credential_infos is MISSING else credential_infos


class CredentialInfo(Message):
    """The user's credentials."""

    __slots__ = ("mechanism", "iterations")

    mechanism: int
    """SCRAM mechanism: 1 SHA-256, 2 SHA-512."""
    iterations: int
    """SCRAM iteration count."""

    def __init__(self, *, mechanism: int = 0, iterations: int = 0) -> None:
        self.mechanism = mechanism
        self.iterations = iterations


# The schema the codecs are compiled from (nested structs first).
_USER_NAME = StructDef("UserName", [Field("name", STRING)], UserName)
_DESCRIBE_USER_SCRAM_CREDENTIALS_REQUEST = StructDef(
    "DescribeUserScramCredentialsRequest",
    [Field("users", array(_USER_NAME), nullable="0+")],
    DescribeUserScramCredentialsRequest,
)
_CREDENTIAL_INFO = StructDef(
    "CredentialInfo", [Field("mechanism", INT8), Field("iterations", INT32)], CredentialInfo
)
_DESCRIBE_USER_SCRAM_CREDENTIALS_RESULT = StructDef(
    "DescribeUserScramCredentialsResult",
    [
        Field("user", STRING),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("credential_infos", array(_CREDENTIAL_INFO)),
    ],
    DescribeUserScramCredentialsResult,
)
_DESCRIBE_USER_SCRAM_CREDENTIALS_RESPONSE = StructDef(
    "DescribeUserScramCredentialsResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("results", array(_DESCRIBE_USER_SCRAM_CREDENTIALS_RESULT)),
    ],
    DescribeUserScramCredentialsResponse,
)

DESCRIBE_USER_SCRAM_CREDENTIALS: Api[
    DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse
] = Api(
    50,
    "DescribeUserScramCredentials",
    "0",
    "0+",
    _DESCRIBE_USER_SCRAM_CREDENTIALS_REQUEST,
    _DESCRIBE_USER_SCRAM_CREDENTIALS_RESPONSE,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)
"""DescribeUserScramCredentials (key 50), versions 0."""
