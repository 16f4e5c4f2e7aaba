"""Authentication and SCRAM users.

SaslHandshake (17), SaslAuthenticate (36), DescribeUserScramCredentials (50),
AlterUserScramCredentials (51).
"""

from __future__ import annotations

from ..schema import (
    BYTES,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    Api,
    array,
    f,
    struct,
)

SASL_HANDSHAKE = Api(
    17,
    "SaslHandshake",
    "0-1",
    "none",
    request=[f("mechanism", STRING)],
    response=[f("error_code", INT16), f("mechanisms", array(STRING))],
)


SASL_AUTHENTICATE = Api(
    36,
    "SaslAuthenticate",
    "0-2",
    "2+",
    request=[f("auth_bytes", BYTES)],
    response=[
        f("error_code", INT16),
        f("error_message", STRING, nullable="0+"),
        f("auth_bytes", BYTES),
        f("session_lifetime_ms", INT64, "1+", ignorable=True),
    ],
)


DESCRIBE_USER_SCRAM_CREDENTIALS = Api(
    50,
    "DescribeUserScramCredentials",
    "0",
    "0+",
    request=[f("users", array(struct("UserName", [f("name", STRING)])), nullable="0+")],
    response=[
        f("throttle_time_ms", INT32),
        f("error_code", INT16),
        f("error_message", STRING, nullable="0+"),
        f(
            "results",
            array(
                struct(
                    "DescribeUserScramCredentialsResult",
                    [
                        f("user", STRING),
                        f("error_code", INT16),
                        f("error_message", STRING, nullable="0+"),
                        f(
                            "credential_infos",
                            array(
                                struct(
                                    "CredentialInfo", [f("mechanism", INT8), f("iterations", INT32)]
                                )
                            ),
                        ),
                    ],
                )
            ),
        ),
    ],
)


ALTER_USER_SCRAM_CREDENTIALS = Api(
    51,
    "AlterUserScramCredentials",
    "0",
    "0+",
    request=[
        f(
            "deletions",
            array(struct("ScramCredentialDeletion", [f("name", STRING), f("mechanism", INT8)])),
        ),
        f(
            "upsertions",
            array(
                struct(
                    "ScramCredentialUpsertion",
                    [
                        f("name", STRING),
                        f("mechanism", INT8),
                        f("iterations", INT32),
                        f("salt", BYTES),
                        f("salted_password", BYTES),
                    ],
                )
            ),
        ),
    ],
    response=[
        f("throttle_time_ms", INT32),
        f(
            "results",
            array(
                struct(
                    "AlterUserScramCredentialsResult",
                    [
                        f("user", STRING),
                        f("error_code", INT16),
                        f("error_message", STRING, nullable="0+"),
                    ],
                )
            ),
        ),
    ],
)
