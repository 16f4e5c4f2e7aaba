"""SCRAM users managed through the admin API (KIP-554).

Pure parts of :meth:`AdminClient.upsert_scram_credentials`,
:meth:`~AdminClient.describe_scram_credentials` and :meth:`~AdminClient.delete_scram_credentials`:
the values callers pass and get back, the salted password the broker stores, and the
request bodies and result mapping of DescribeUserScramCredentials (50) and
AlterUserScramCredentials (51).

The password never leaves the client: an upsertion sends the salt, the iteration count and
``SaltedPassword = Hi(password, salt, iterations)`` (RFC 5802), from which the broker derives
the keys it keeps. No value here shows a password in ``repr``.
"""

from __future__ import annotations

import enum
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..cluster.routing import error_or_none
from ..errors import ConfigError, KafkaError, UnknownServerError
from ..protocol.apis.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)
from ..protocol.apis.describe_user_scram_credentials import (
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    UserName,
)

__all__ = [
    "ScramCredentialInfo",
    "ScramDeletion",
    "ScramMechanism",
    "ScramUpsertion",
    "UserScramCredentials",
    "UserScramResult",
]

#: Kafka refuses fewer iterations than this (and more than :data:`MAX_ITERATIONS`).
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
_SALT_BYTES = 32


class ScramMechanism(enum.IntEnum):
    """The SCRAM variants Kafka stores credentials for (the protocol's INT8 codes)."""

    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def mechanism_name(self) -> str:
        """The SASL name, as ``sasl_mechanism`` spells it (``"SCRAM-SHA-256"``)."""
        return self.name.replace("_", "-")

    @property
    def hash_name(self) -> str:
        return "sha256" if self is ScramMechanism.SCRAM_SHA_256 else "sha512"

    @classmethod
    def of(cls, value: ScramMechanism | str | int) -> ScramMechanism:
        """Accept the enum, its SASL name (``"SCRAM-SHA-512"``) or its protocol code."""
        if isinstance(value, ScramMechanism):
            return value
        if isinstance(value, str):
            for m in cls:
                if m.mechanism_name == value.upper():
                    return m
        elif isinstance(value, int) and not isinstance(value, bool):
            try:
                return cls(value)
            except ValueError:
                pass
        raise ConfigError(
            f"SCRAM mechanism: expected SCRAM-SHA-256 or SCRAM-SHA-512, got {value!r}"
        )


@dataclass(frozen=True)
class ScramUpsertion:
    """Create or replace ``user``'s credential for one mechanism.

    ``salt`` defaults to 32 random bytes; ``iterations`` must be within Kafka's
    4096-16384.
    """

    user: str
    mechanism: ScramMechanism | str | int
    password: str = field(repr=False)
    iterations: int = MIN_ITERATIONS
    salt: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True)
class ScramDeletion:
    """Remove ``user``'s credential for one mechanism."""

    user: str
    mechanism: ScramMechanism | str | int


@dataclass(frozen=True)
class ScramCredentialInfo:
    """One stored credential: its mechanism and iteration count (never the secret)."""

    mechanism: ScramMechanism
    iterations: int


@dataclass(frozen=True)
class UserScramCredentials:
    """What the broker stores for one user (:meth:`AdminClient.describe_scram_credentials`).

    ``error`` is ``ResourceNotFoundError`` for a user without SCRAM credentials.
    """

    user: str
    credentials: tuple[ScramCredentialInfo, ...] = ()
    error: KafkaError | None = None


@dataclass(frozen=True)
class UserScramResult:
    """Outcome of altering one user's credentials (all its upsertions and deletions)."""

    user: str
    error: KafkaError | None = None


def salted_password(
    mechanism: ScramMechanism, password: str, salt: bytes, iterations: int
) -> bytes:
    """RFC 5802 ``Hi(password, salt, i)``: PBKDF2 with HMAC of the mechanism's hash.

    Kafka uses the password's UTF-8 bytes as they are (no SASLprep), and so does this.
    """
    return hashlib.pbkdf2_hmac(mechanism.hash_name, password.encode(), salt, iterations)


def _check_user(user: object, what: str) -> str:
    if not isinstance(user, str) or not user:
        raise ConfigError(f"{what}: user must be a non-empty str, got {user!r}")
    return user


def upsertion_fields(up: ScramUpsertion) -> ScramCredentialUpsertion:
    """One ``upsertions`` entry of AlterUserScramCredentials (the password salted here)."""
    if not isinstance(up, ScramUpsertion):
        raise ConfigError(f"upsert_scram_credentials expects ScramUpsertion values, got {up!r}")
    user = _check_user(up.user, "ScramUpsertion")
    mech = ScramMechanism.of(up.mechanism)
    if not isinstance(up.password, str) or not up.password:
        raise ConfigError(f"ScramUpsertion for {user!r}: the password must be a non-empty str")
    if not isinstance(up.iterations, int) or not (
        MIN_ITERATIONS <= up.iterations <= MAX_ITERATIONS
    ):
        raise ConfigError(
            f"ScramUpsertion for {user!r}: iterations must be {MIN_ITERATIONS}-{MAX_ITERATIONS} "
            f"(Kafka's limits), got {up.iterations!r}"
        )
    salt = os.urandom(_SALT_BYTES) if up.salt is None else bytes(up.salt)
    if not salt:
        raise ConfigError(f"ScramUpsertion for {user!r}: the salt must not be empty")
    return ScramCredentialUpsertion(
        name=user,
        mechanism=int(mech),
        iterations=up.iterations,
        salt=salt,
        salted_password=salted_password(mech, up.password, salt, up.iterations),
    )


def deletion_fields(d: ScramDeletion) -> ScramCredentialDeletion:
    """One ``deletions`` entry of AlterUserScramCredentials."""
    if not isinstance(d, ScramDeletion):
        raise ConfigError(f"delete_scram_credentials expects ScramDeletion values, got {d!r}")
    return ScramCredentialDeletion(
        name=_check_user(d.user, "ScramDeletion"), mechanism=int(ScramMechanism.of(d.mechanism))
    )


def alter_rounds(
    upsertions: Sequence[ScramCredentialUpsertion], deletions: Sequence[ScramCredentialDeletion]
) -> list[tuple[AlterUserScramCredentialsRequest, list[str]]]:
    """AlterUserScramCredentials bodies (and the users each names), in order.

    Kafka refuses a request that alters one user twice (DUPLICATE_RESOURCE), so a user's
    second alteration (its other mechanism, say) goes into a second request, and so on.
    A deletion and an upsertion of the same user and mechanism keep their order
    (deletions first, as given).
    """
    rounds: list[AlterUserScramCredentialsRequest] = []
    seen: dict[str, int] = {}

    def round_for(name: str) -> AlterUserScramCredentialsRequest:
        n = seen.get(name, 0)
        seen[name] = n + 1
        if n == len(rounds):
            rounds.append(AlterUserScramCredentialsRequest())
        return rounds[n]

    for deletion in deletions:
        round_for(deletion.name).deletions.append(deletion)
    for upsertion in upsertions:
        round_for(upsertion.name).upsertions.append(upsertion)
    return [
        (
            body,
            list(
                dict.fromkeys(
                    [*(e.name for e in body.deletions), *(e.name for e in body.upsertions)]
                )
            ),
        )
        for body in rounds
    ]


def alter_results(
    resp: AlterUserScramCredentialsResponse, users: Sequence[str]
) -> dict[str, UserScramResult]:
    """Per-user results, in the order asked; a user the broker left out gets an error."""
    got = {
        r.user: UserScramResult(r.user, error_or_none(r.error_code, r.error_message))
        for r in resp.results
    }
    return {
        u: got.get(u) or UserScramResult(u, UnknownServerError("the broker returned no result"))
        for u in users
    }


def describe_request(users: Sequence[str] | None) -> DescribeUserScramCredentialsRequest:
    if users is None:
        return DescribeUserScramCredentialsRequest(users=None)
    return DescribeUserScramCredentialsRequest(
        users=[UserName(name=_check_user(u, "describe_scram_credentials")) for u in users]
    )


def describe_results(
    resp: DescribeUserScramCredentialsResponse,
) -> tuple[KafkaError | None, dict[str, UserScramCredentials]]:
    """(top-level error, per-user credentials) of DescribeUserScramCredentials."""
    top = error_or_none(resp.error_code, resp.error_message)
    out: dict[str, UserScramCredentials] = {}
    for r in resp.results:
        infos = tuple(
            ScramCredentialInfo(ScramMechanism(i.mechanism), i.iterations)
            for i in r.credential_infos
            if i.mechanism in (1, 2)
        )
        out[r.user] = UserScramCredentials(
            r.user, infos, error_or_none(r.error_code, r.error_message)
        )
    return top, out
