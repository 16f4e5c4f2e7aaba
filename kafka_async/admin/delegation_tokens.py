"""Delegation tokens (KIP-48): create, renew, expire and describe them.

:meth:`AdminClient.create_delegation_token` and its three siblings delegate here, with the
Java Admin's semantics (``createDelegationToken`` ...). A delegation token is a shared
secret (its HMAC) the broker issues to an authenticated principal, its *owner*; whoever holds
the token id and the HMAC can log in as the owner with SCRAM (``sasl_scram_token_auth=True``,
user name the token id, password :meth:`DelegationToken.hmac_base64`) until the token
expires. The owner and the *renewers* may push the expiry out (up to the token's maximum
lifetime) or expire it early.

The broker answers these requests only on a connection authenticated with SASL (not
PLAINTEXT, not TLS without a client certificate) and not on one that itself logged in with a
token; elsewhere it refuses with ``DelegationTokenRequestNotAllowedError``. A broker without
``delegation.token.secret.key`` refuses with ``DelegationTokenAuthDisabledError``. Each call
goes to any broker (KRaft brokers forward the change to the controller).

Principals are written as in ACLs: ``"User:alice"``.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..cluster.routing import Router
from ..errors import BrokerResponseError, ConfigError, error_for_code
from ..protocol import apis
from ..protocol.apis.create_delegation_token import (
    CreatableRenewers,
    CreateDelegationTokenRequest,
    CreateDelegationTokenResponse,
)
from ..protocol.apis.describe_delegation_token import (
    DescribeDelegationTokenOwner,
    DescribeDelegationTokenRequest,
    DescribeDelegationTokenResponse,
)
from ..protocol.apis.expire_delegation_token import (
    ExpireDelegationTokenRequest,
    ExpireDelegationTokenResponse,
)
from ..protocol.apis.renew_delegation_token import (
    RenewDelegationTokenRequest,
    RenewDelegationTokenResponse,
)

__all__ = ["DelegationToken"]


@dataclass(frozen=True)
class DelegationToken:
    """A delegation token as the broker describes it (Java's ``DelegationToken`` with its
    ``TokenInformation`` folded in).

    ``hmac`` is the token's secret: it is left out of ``repr`` and of every message.
    """

    #: The token id: the SCRAM user name of a login with this token.
    token_id: str
    #: The token's HMAC (its secret); the SCRAM password is its base64, :meth:`hmac_base64`.
    hmac: bytes = field(repr=False)
    #: The principal the token logs in as (``"User:alice"``).
    owner: str
    #: The principal that asked for the token (the owner unless one user created it for
    #: another; equal to ``owner`` on brokers before Kafka 3.3).
    token_requester: str
    #: The principals that may renew (and expire) the token besides its owner.
    renewers: tuple[str, ...]
    #: When the token was issued (ms since the epoch).
    issue_timestamp_ms: int
    #: When the token expires unless it is renewed (ms since the epoch).
    expiry_timestamp_ms: int
    #: The latest the token can ever expire, however often it is renewed (ms since the epoch).
    max_timestamp_ms: int

    def hmac_base64(self) -> str:
        """The HMAC in base64: the SCRAM password of a login with this token (what
        ``kafka-delegation-tokens.sh --create`` prints as HMAC)."""
        return base64.b64encode(self.hmac).decode("ascii")


# -- principals ------------------------------------------------------------------------------


def split_principal(principal: str, what: str) -> tuple[str, str]:
    """``"User:alice"`` -> ``("User", "alice")``; ConfigError naming ``what`` otherwise."""
    if not isinstance(principal, str):
        raise ConfigError(f"{what}: expected a principal like 'User:alice', got {principal!r}")
    kind, sep, name = principal.partition(":")
    if not sep or not kind or not name:
        raise ConfigError(f"{what}: expected a principal like 'User:alice', got {principal!r}")
    return kind, name


def _principals(principals: Sequence[str] | None, what: str) -> list[tuple[str, str]]:
    if principals is None:
        return []
    if isinstance(principals, str):
        principals = [principals]
    return [split_principal(p, what) for p in principals]


def _hmac(value: bytes | bytearray | memoryview | str) -> bytes:
    """An HMAC given as bytes, or as the base64 text the tools print."""
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
    elif isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except ValueError:
            raise ConfigError("hmac: a str must be the token's HMAC in base64") from None
    else:
        raise ConfigError(f"hmac: expected bytes or base64 text, got {type(value).__name__}")
    if not raw:
        raise ConfigError("hmac: empty")
    return raw


def _period(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{what}: expected an int of milliseconds, got {value!r}")
    return value


# -- the broker's refusals, typed and explained ------------------------------------------------

#: What each refusal means here, beyond the error class's own one-line description.
_CAUSES: dict[str, str] = {
    "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED": (
        "the broker answers delegation token requests only on a connection authenticated "
        "with SASL (security_protocol SASL_PLAINTEXT or SASL_SSL), and not on one that "
        "logged in with a delegation token itself"
    ),
    "DELEGATION_TOKEN_AUTH_DISABLED": (
        "delegation tokens are disabled on the broker (set delegation.token.secret.key, "
        "the same on every broker and controller)"
    ),
    "DELEGATION_TOKEN_NOT_FOUND": "no token has this HMAC (never issued, or expired and removed)",
    "DELEGATION_TOKEN_OWNER_MISMATCH": "this principal is neither the owner nor a renewer",
    "DELEGATION_TOKEN_EXPIRED": "the token has expired",
    "DELEGATION_TOKEN_AUTHORIZATION_FAILED": (
        "this principal may not act for the token's owner (CreateTokens/DescribeTokens ACLs)"
    ),
}


def refusal(api: str, code: int) -> BrokerResponseError:
    """The typed error for ``code``, its message naming the call and the likely cause."""
    err = error_for_code(code)
    cause = _CAUSES.get(err.name, "")
    return error_for_code(code, f"{api} refused: {cause}" if cause else f"{api} refused")


def _check(api: str, code: int) -> None:
    if code:
        raise refusal(api, code)


# -- pure request building and mapping -------------------------------------------------------


def create_request(
    renewers: Sequence[str] | None, max_lifetime_ms: int, owner: str | None, version: int = 3
) -> CreateDelegationTokenRequest:
    """The CreateDelegationToken body at ``version``.

    No owner is null from v3 on (the requester owns the token); below v3 the owner fields do
    not exist, so they keep their default, which is all an encoder accepts there.
    """
    owner_type: str | None
    owner_name: str | None
    if owner is not None:
        owner_type, owner_name = split_principal(owner, "owner")
    elif version >= 3:
        owner_type = owner_name = None
    else:
        owner_type = owner_name = ""
    return CreateDelegationTokenRequest(
        owner_principal_type=owner_type,
        owner_principal_name=owner_name,
        renewers=[
            CreatableRenewers(principal_type=t, principal_name=n)
            for t, n in _principals(renewers, "renewers")
        ],
        max_lifetime_ms=_period(max_lifetime_ms, "max_lifetime_ms"),
    )


def create_result(
    resp: CreateDelegationTokenResponse, version: int, renewers: Sequence[tuple[str, str]]
) -> DelegationToken:
    """The token a CreateDelegationToken response describes; raises its error."""
    _check("CreateDelegationToken", resp.error_code)
    owner = f"{resp.principal_type}:{resp.principal_name}"
    # Before v3 the response names no requester: the requester is the owner.
    requester = (
        f"{resp.token_requester_principal_type}:{resp.token_requester_principal_name}"
        if version >= 3
        else owner
    )
    return DelegationToken(
        token_id=resp.token_id,
        hmac=bytes(resp.hmac),
        owner=owner,
        token_requester=requester,
        renewers=tuple(f"{t}:{n}" for t, n in renewers),
        issue_timestamp_ms=resp.issue_timestamp_ms,
        expiry_timestamp_ms=resp.expiry_timestamp_ms,
        max_timestamp_ms=resp.max_timestamp_ms,
    )


def describe_request(owners: Sequence[str] | None) -> DescribeDelegationTokenRequest:
    """The DescribeDelegationToken body (owners None: every token the caller may see)."""
    if owners is None:
        return DescribeDelegationTokenRequest(owners=None)
    return DescribeDelegationTokenRequest(
        owners=[
            DescribeDelegationTokenOwner(principal_type=t, principal_name=n)
            for t, n in _principals(owners, "owners")
        ]
    )


def describe_results(resp: DescribeDelegationTokenResponse, version: int) -> list[DelegationToken]:
    """The tokens of a DescribeDelegationToken response; raises its error."""
    _check("DescribeDelegationToken", resp.error_code)
    out: list[DelegationToken] = []
    for t in resp.tokens:
        owner = f"{t.principal_type}:{t.principal_name}"
        requester = (
            f"{t.token_requester_principal_type}:{t.token_requester_principal_name}"
            if version >= 3
            else owner
        )
        out.append(
            DelegationToken(
                token_id=t.token_id,
                hmac=bytes(t.hmac),
                owner=owner,
                token_requester=requester,
                renewers=tuple(f"{r.principal_type}:{r.principal_name}" for r in t.renewers),
                issue_timestamp_ms=t.issue_timestamp,
                expiry_timestamp_ms=t.expiry_timestamp,
                max_timestamp_ms=t.max_timestamp,
            )
        )
    return out


# -- the calls ------------------------------------------------------------------------------


async def create_delegation_token(
    router: Router,
    *,
    renewers: Sequence[str] | None,
    max_lifetime_ms: int,
    owner: str | None,
    timeout_ms: int | None,
) -> DelegationToken:
    body = create_request(renewers, max_lifetime_ms, owner)  # checks the arguments
    asked = [(r.principal_type, r.principal_name) for r in body.renewers]
    deadline = router.deadline(timeout_ms)
    # An owner other than the requester needs v3 (Kafka 3.3, KIP-373); older brokers would
    # silently issue the token to the requester instead.
    min_version = 3 if owner is not None else None

    async def call() -> tuple[int, CreateDelegationTokenResponse]:
        return await router.send(
            None,
            apis.CREATE_DELEGATION_TOKEN,
            lambda v: create_request(renewers, max_lifetime_ms, owner, v),
            deadline,
            min_version=min_version,
        )

    version, resp = await router.with_retries(deadline, call)
    router.note_errors([resp.error_code])
    return create_result(resp, version, asked)


async def renew_delegation_token(
    router: Router,
    hmac: bytes | bytearray | memoryview | str,
    *,
    renew_period_ms: int,
    timeout_ms: int | None,
) -> int:
    body = RenewDelegationTokenRequest(
        hmac=_hmac(hmac), renew_period_ms=_period(renew_period_ms, "renew_period_ms")
    )
    deadline = router.deadline(timeout_ms)

    async def call() -> tuple[int, RenewDelegationTokenResponse]:
        return await router.send(None, apis.RENEW_DELEGATION_TOKEN, lambda v: body, deadline)

    _, resp = await router.with_retries(deadline, call)
    router.note_errors([resp.error_code])
    _check("RenewDelegationToken", resp.error_code)
    return resp.expiry_timestamp_ms


async def expire_delegation_token(
    router: Router,
    hmac: bytes | bytearray | memoryview | str,
    *,
    expiry_time_period_ms: int,
    timeout_ms: int | None,
) -> int:
    body = ExpireDelegationTokenRequest(
        hmac=_hmac(hmac),
        expiry_time_period_ms=_period(expiry_time_period_ms, "expiry_time_period_ms"),
    )
    deadline = router.deadline(timeout_ms)

    async def call() -> tuple[int, ExpireDelegationTokenResponse]:
        return await router.send(None, apis.EXPIRE_DELEGATION_TOKEN, lambda v: body, deadline)

    _, resp = await router.with_retries(deadline, call)
    router.note_errors([resp.error_code])
    _check("ExpireDelegationToken", resp.error_code)
    return resp.expiry_timestamp_ms


async def describe_delegation_token(
    router: Router, owners: Sequence[str] | None, *, timeout_ms: int | None
) -> list[DelegationToken]:
    body = describe_request(owners)
    if body.owners == []:
        return []
    deadline = router.deadline(timeout_ms)

    async def call() -> tuple[int, DescribeDelegationTokenResponse]:
        return await router.send(None, apis.DESCRIBE_DELEGATION_TOKEN, lambda v: body, deadline)

    version, resp = await router.with_retries(deadline, call)
    router.note_errors([resp.error_code])
    return describe_results(resp, version)
