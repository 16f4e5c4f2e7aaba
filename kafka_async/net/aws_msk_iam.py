"""AWS MSK IAM login: SigV4-presigned ``kafka-cluster:Connect``, in both forms MSK accepts.

Amazon MSK clusters with IAM access control take one of two logins, and both carry the same
thing: an AWS Signature Version 4 presigned ``GET`` of the ``kafka-cluster:Connect`` action,
signed with the caller's AWS credentials for the service ``kafka-cluster``, valid 15 minutes.

* ``sasl_mechanism="AWS_MSK_IAM"``: the mechanism of AWS's Java library
  (``software.amazon.msk:aws-msk-iam-auth``). The client sends one JSON object: the signed
  query parameters lower-cased (``action``, ``x-amz-algorithm``, ``x-amz-credential``,
  ``x-amz-date``, ``x-amz-signedheaders`` = ``host``, ``x-amz-expires``, ``x-amz-signature``,
  ``x-amz-security-token`` when the credentials have a session token), the signed ``host``
  (the broker's host name) and ``version`` = ``2020_10_22`` and ``user-agent``. The broker
  answers a JSON object with ``version`` and ``request-id``, which is checked.
* ``sasl_mechanism="OAUTHBEARER"`` with :class:`MskIamTokenProvider`: the token is the
  presigned URL ``https://kafka.<region>.amazonaws.com/?Action=kafka-cluster%3AConnect&...``
  with ``User-Agent`` appended, base64url-encoded without padding, as AWS's signers
  (``aws-msk-iam-sasl-signer-python`` and its Go/JS siblings) make it. Its lifetime runs
  from the signed time; the provider makes a new one before it expires.

The SigV4 code is this module's own (``hmac``/``hashlib``): :func:`presign_query`,
:func:`msk_iam_payload` and :func:`msk_iam_token` are pure functions of the credentials and
the time, which is what the tests compare against AWS's published SigV4 test vectors,
botocore's signer, AWS's Java library and AWS's Python signer.

Credentials: explicit settings (``sasl_aws_access_key_id`` ...), or the standard AWS chain
through botocore (environment, shared config/credentials files and ``sasl_aws_profile``,
web identity, SSO, container and instance metadata), optionally assuming
``sasl_aws_role_arn`` through STS. botocore is the optional ``aws`` extra
(``pip install 'kafka-async-client[aws]'``), imported only when used; it may read files or
call the network, so it runs in a worker thread, never on the event loop. Refreshable
credentials (roles, instance profiles) are refreshed by botocore before they expire.

Region: ``sasl_aws_region``, else read from the broker's host name
(``b-1.name.xxxxxx.c2.kafka.<region>.amazonaws.com``), as AWS's libraries do, else the region
configured (``AWS_REGION``, ``AWS_DEFAULT_REGION``, the profile's ``region``).

Secrets (the secret key, the session token, the signed payload and the token) never appear in
a ``repr``, a log line or an error message.

What is proven here, and what is not: no MSK cluster is reachable from this project's
machines, so no login against a real MSK cluster was tried. The signing is checked against
AWS's own SigV4 test vectors and botocore; the ``AWS_MSK_IAM`` payload field by field against
``aws-msk-iam-auth`` (Java) for the same clock and credentials; the OAUTHBEARER token byte for
byte against ``aws-msk-iam-sasl-signer-python``; and the login end to end against a broker
side (tests/harness/fake_broker.py) that recomputes the signature with botocore.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio.to_thread

from ..errors import ConfigError, SaslAuthenticationFailedError
from ..settings.spec import Setting, Text
from . import sasl

if TYPE_CHECKING:
    from .config import ClientConfig

__all__ = [
    "MSK_ACTION",
    "MSK_PAYLOAD_VERSION",
    "MSK_SERVICE",
    "MSK_TOKEN_EXPIRES",
    "SETTINGS",
    "AwsCredentialSource",
    "AwsCredentials",
    "AwsMskIamMechanism",
    "MskIamTokenProvider",
    "msk_iam_payload",
    "msk_iam_token",
    "presign_query",
    "region_from_host",
    "sigv4_authorization",
]

#: The SigV4 service name MSK signs for.
MSK_SERVICE = "kafka-cluster"
#: The IAM action a login asks for.
MSK_ACTION = "kafka-cluster:Connect"
#: The ``version`` of the AWS_MSK_IAM payload and of the broker's answer.
MSK_PAYLOAD_VERSION = "2020_10_22"
#: Seconds a presigned login stays valid (what AWS's libraries sign: 15 minutes).
MSK_TOKEN_EXPIRES = 900

_ALGORITHM = "AWS4-HMAC-SHA256"
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_AMZ_DATE = "%Y%m%dT%H%M%SZ"
_MECHANISM = "AWS_MSK_IAM"

# --------------------------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------------------------

_TEXT = Text()

#: Settings this module adds to the client schema (see net/settings.py).
SETTINGS: list[Setting] = [
    Setting(
        "sasl_aws_region",
        _TEXT,
        None,
        "AWS_MSK_IAM: the cluster's AWS region; None: read from the broker host name "
        "(...kafka.<region>.amazonaws.com), else the configured one (AWS_REGION, profile)",
        java="",
    ),
    Setting(
        "sasl_aws_profile",
        _TEXT,
        None,
        "AWS_MSK_IAM: the shared config/credentials profile to take credentials from; "
        "None: the default chain",
        java="awsProfileName (aws-msk-iam-auth JAAS option)",
    ),
    Setting(
        "sasl_aws_role_arn",
        _TEXT,
        None,
        "AWS_MSK_IAM: an IAM role to assume through STS with the resolved credentials",
        java="awsRoleArn (aws-msk-iam-auth JAAS option)",
    ),
    Setting(
        "sasl_aws_role_session_name",
        _TEXT,
        None,
        "AWS_MSK_IAM: the session name when assuming sasl_aws_role_arn; None: "
        "kafka-async-<epoch ms>",
        java="awsRoleSessionName (aws-msk-iam-auth JAAS option)",
    ),
    Setting(
        "sasl_aws_sts_region",
        _TEXT,
        None,
        "AWS_MSK_IAM: the STS region for assuming sasl_aws_role_arn; None: the cluster's region",
        java="awsStsRegion (aws-msk-iam-auth JAAS option)",
    ),
    Setting(
        "sasl_aws_access_key_id",
        _TEXT,
        None,
        "AWS_MSK_IAM: an explicit access key id (with sasl_aws_secret_access_key) instead of "
        "the AWS credential chain",
        java="aws.accessKeyId (AWS SDK system property)",
    ),
    Setting(
        "sasl_aws_secret_access_key",
        _TEXT,
        None,
        "AWS_MSK_IAM: the secret of sasl_aws_access_key_id",
        java="aws.secretAccessKey (AWS SDK system property)",
        secret=True,
    ),
    Setting(
        "sasl_aws_session_token",
        _TEXT,
        None,
        "AWS_MSK_IAM: the session token of temporary explicit credentials",
        java="aws.sessionToken (AWS SDK system property)",
        secret=True,
    ),
]

# --------------------------------------------------------------------------------------------
# Credentials
# --------------------------------------------------------------------------------------------


class AwsCredentials:
    """One set of AWS credentials; ``repr`` shows the access key id only."""

    __slots__ = ("access_key_id", "secret_access_key", "session_token")

    def __init__(
        self, access_key_id: str, secret_access_key: str, session_token: str | None = None
    ) -> None:
        if not access_key_id or not secret_access_key:
            raise ConfigError("AWS credentials need both an access key id and a secret key")
        self.access_key_id = access_key_id
        self.secret_access_key = secret_access_key
        self.session_token = session_token or None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AwsCredentials):
            return NotImplemented
        return (self.access_key_id, self.secret_access_key, self.session_token) == (
            other.access_key_id,
            other.secret_access_key,
            other.session_token,
        )

    def __hash__(self) -> int:
        return hash(self.access_key_id)

    def __repr__(self) -> str:
        token = ", session token" if self.session_token else ""
        return f"AwsCredentials({self.access_key_id!r}, <secret hidden>{token})"


def _import_botocore() -> Any:
    try:
        import botocore.exceptions
        import botocore.session
    except ImportError:
        raise ConfigError(
            "AWS MSK IAM credentials from the AWS chain (environment, profile, role, instance "
            "metadata) need botocore: pip install 'kafka-async-client[aws]' (or give "
            "sasl_aws_access_key_id and sasl_aws_secret_access_key)"
        ) from None
    return botocore


def _check_botocore() -> None:
    _import_botocore()


class AwsCredentialSource:
    """Where a client's AWS credentials come from: fixed ones, or botocore's chain.

    With ``credentials`` the source hands those out. Otherwise botocore resolves them once
    (``profile`` or the default chain: environment, shared files, web identity, SSO,
    container and instance metadata) and, with ``role_arn``, assumes that role through STS
    (``sts_region``, default ``region``); botocore refreshes temporary credentials before
    they expire. Every call that may block runs in a worker thread.
    """

    def __init__(
        self,
        *,
        credentials: AwsCredentials | None = None,
        profile: str | None = None,
        role_arn: str | None = None,
        role_session_name: str | None = None,
        sts_region: str | None = None,
        region: str | None = None,
    ) -> None:
        self._static = credentials
        self._profile = profile
        self._role_arn = role_arn
        self._role_session_name = role_session_name
        self._sts_region = sts_region or region
        self._botocore_credentials: Any = None
        self._lock = threading.Lock()
        if credentials is None:
            _import_botocore()

    @classmethod
    def from_config(cls, config: ClientConfig) -> AwsCredentialSource:
        """The source the ``sasl_aws_*`` settings describe (shared by equal settings)."""
        key = (
            config.sasl_aws_access_key_id,
            config.sasl_aws_secret_access_key,
            config.sasl_aws_session_token,
            config.sasl_aws_profile,
            config.sasl_aws_role_arn,
            config.sasl_aws_role_session_name,
            config.sasl_aws_sts_region,
            config.sasl_aws_region,
        )
        with _SOURCES_LOCK:
            source = _SOURCES.get(key)
            if source is None:
                static = None
                if config.sasl_aws_access_key_id is not None:
                    static = AwsCredentials(
                        config.sasl_aws_access_key_id,
                        config.sasl_aws_secret_access_key or "",
                        config.sasl_aws_session_token,
                    )
                source = cls(
                    credentials=static,
                    profile=config.sasl_aws_profile,
                    role_arn=config.sasl_aws_role_arn,
                    role_session_name=config.sasl_aws_role_session_name,
                    sts_region=config.sasl_aws_sts_region,
                    region=config.sasl_aws_region,
                )
                if len(_SOURCES) >= 64:
                    _SOURCES.clear()
                _SOURCES[key] = source
        return source

    async def get(self) -> AwsCredentials:
        """Current credentials (resolved or refreshed in a worker thread when needed)."""
        if self._static is not None and self._role_arn is None:
            return self._static
        return await anyio.to_thread.run_sync(self._get_blocking)

    def _get_blocking(self) -> AwsCredentials:
        botocore = _import_botocore()
        try:
            with self._lock:
                if self._botocore_credentials is None:
                    self._botocore_credentials = self._resolve()
                frozen = self._botocore_credentials.get_frozen_credentials()
        except botocore.exceptions.BotoCoreError as exc:
            # botocore's messages name profiles, files and roles, never secrets.
            raise SaslAuthenticationFailedError(
                f"{_MECHANISM}: cannot get AWS credentials: {exc}"
            ) from None
        except botocore.exceptions.ClientError as exc:
            raise SaslAuthenticationFailedError(
                f"{_MECHANISM}: STS refused to assume {self._role_arn}: {exc}"
            ) from None
        if not frozen.access_key or not frozen.secret_key:
            raise SaslAuthenticationFailedError(f"{_MECHANISM}: the AWS credentials are empty")
        return AwsCredentials(frozen.access_key, frozen.secret_key, frozen.token)

    async def configured_region(self) -> str | None:
        """The configured AWS region: ``AWS_REGION`` (the Java SDK's), else botocore's
        (``AWS_DEFAULT_REGION``, the profile's ``region``); None if none is, or without
        botocore (explicit credentials and no ``aws`` extra)."""
        if os.environ.get("AWS_REGION"):
            return os.environ["AWS_REGION"]
        try:
            _import_botocore()
        except ConfigError:
            return None
        return await anyio.to_thread.run_sync(self._configured_region_blocking)

    def _configured_region_blocking(self) -> str | None:
        import botocore.exceptions
        import botocore.session

        try:
            region = botocore.session.Session(profile=self._profile).get_config_variable("region")
        except botocore.exceptions.BotoCoreError:
            return None
        return str(region) if region else None

    def _resolve(self) -> Any:
        import botocore.credentials
        import botocore.session

        session = botocore.session.Session(profile=self._profile)
        if self._static is not None:
            base: Any = botocore.credentials.Credentials(
                self._static.access_key_id,
                self._static.secret_access_key,
                self._static.session_token,
            )
        else:
            base = session.get_credentials()
            if base is None:
                where = f"profile {self._profile!r}" if self._profile else "the default chain"
                raise SaslAuthenticationFailedError(
                    f"{_MECHANISM}: no AWS credentials found in {where} (environment, shared "
                    "files, web identity, container or instance metadata)"
                )
        if self._role_arn is None:
            return base
        sts_region = self._sts_region

        def client_creator(service: str, **kwargs: Any) -> Any:
            if sts_region is not None:
                kwargs.setdefault("region_name", sts_region)
            return session.create_client(service, **kwargs)

        name = self._role_session_name or f"kafka-async-{int(time.time() * 1000)}"
        fetcher = botocore.credentials.AssumeRoleCredentialFetcher(
            client_creator=client_creator,
            source_credentials=base,
            role_arn=self._role_arn,
            extra_args={"RoleSessionName": name},
        )
        return botocore.credentials.DeferredRefreshableCredentials(
            method="assume-role", refresh_using=fetcher.fetch_credentials
        )

    def __repr__(self) -> str:
        if self._static is not None and self._role_arn is None:
            return f"AwsCredentialSource({self._static!r})"
        parts = [f"profile={self._profile!r}"] if self._profile else ["default chain"]
        if self._role_arn:
            parts.append(f"role_arn={self._role_arn!r}")
        return f"AwsCredentialSource({', '.join(parts)})"


_SOURCES: dict[tuple[str | None, ...], AwsCredentialSource] = {}
_SOURCES_LOCK = threading.Lock()

# --------------------------------------------------------------------------------------------
# SigV4
# --------------------------------------------------------------------------------------------


def _encode(text: str) -> str:
    """SigV4's URI encoding: everything but the unreserved characters, as %XX."""
    return quote(text, safe="-_.~")


def _canonical_query(params: Iterable[tuple[str, str]]) -> str:
    encoded = sorted((_encode(k), _encode(v)) for k, v in params)
    return "&".join(f"{k}={v}" for k, v in encoded)


def _canonical_headers(headers: Mapping[str, str]) -> tuple[str, str]:
    folded: dict[str, list[str]] = {}
    for name, value in headers.items():
        folded.setdefault(name.lower().strip(), []).append(" ".join(value.split()))
    names = sorted(folded)
    text = "".join(f"{n}:{','.join(folded[n])}\n" for n in names)
    return text, ";".join(names)


def _signing_key(secret: str, day: str, region: str, service: str) -> bytes:
    key = ("AWS4" + secret).encode()
    for part in (day, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def _signature(
    credentials: AwsCredentials,
    amz_date: str,
    region: str,
    service: str,
    canonical_request: str,
) -> str:
    day = amz_date[:8]
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(
        (
            _ALGORITHM,
            amz_date,
            scope,
            hashlib.sha256(canonical_request.encode()).hexdigest(),
        )
    )
    key = _signing_key(credentials.secret_access_key, day, region, service)
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def _amz_date(when: datetime) -> str:
    if when.tzinfo is None:
        raise ValueError("the signing time must be timezone-aware")
    return when.astimezone(timezone.utc).strftime(_AMZ_DATE)


def sigv4_authorization(
    credentials: AwsCredentials,
    *,
    method: str,
    path: str,
    query: Sequence[tuple[str, str]],
    headers: Mapping[str, str],
    body: bytes,
    region: str,
    service: str,
    amz_date: str,
) -> str:
    """The ``Authorization`` header of a SigV4 header-signed request.

    ``path`` is used as given (already URI-encoded, not normalised); every header in
    ``headers`` is signed (``host`` and ``x-amz-date`` belong there). Used to check the
    signer against AWS's published test vectors; MSK logins are presigned
    (:func:`presign_query`).
    """
    canonical_headers, signed = _canonical_headers(headers)
    canonical_request = "\n".join(
        (
            method,
            path,
            _canonical_query(query),
            canonical_headers,
            signed,
            hashlib.sha256(body).hexdigest(),
        )
    )
    signature = _signature(credentials, amz_date, region, service, canonical_request)
    return (
        f"{_ALGORITHM} Credential={credentials.access_key_id}/{amz_date[:8]}/{region}/"
        f"{service}/aws4_request, SignedHeaders={signed}, Signature={signature}"
    )


def presign_query(
    credentials: AwsCredentials,
    *,
    host: str,
    region: str,
    service: str,
    params: Sequence[tuple[str, str]],
    when: datetime,
    expires: int,
    path: str = "/",
) -> list[tuple[str, str]]:
    """The query of a SigV4-presigned ``GET https://host{path}?params``: ``params`` then the
    ``X-Amz-*`` parameters (the signature last), in the order AWS's signers write them.

    Only ``host`` is signed; the payload hash is that of an empty body. ``when`` is the
    signing time (timezone-aware).
    """
    amz_date = _amz_date(when)
    query = [
        *params,
        ("X-Amz-Algorithm", _ALGORITHM),
        (
            "X-Amz-Credential",
            f"{credentials.access_key_id}/{amz_date[:8]}/{region}/{service}/aws4_request",
        ),
        ("X-Amz-Date", amz_date),
        ("X-Amz-Expires", str(expires)),
        ("X-Amz-SignedHeaders", "host"),
    ]
    if credentials.session_token:
        query.append(("X-Amz-Security-Token", credentials.session_token))
    canonical_request = "\n".join(
        (
            "GET",
            path,
            _canonical_query(query),
            f"host:{host}\n",
            "host",
            _EMPTY_SHA256,
        )
    )
    query.append(
        (
            "X-Amz-Signature",
            _signature(credentials, amz_date, region, service, canonical_request),
        )
    )
    return query


# --------------------------------------------------------------------------------------------
# The two MSK forms
# --------------------------------------------------------------------------------------------


def default_user_agent() -> str:
    """What this client puts in ``user-agent`` / ``User-Agent`` (not signed)."""
    from .. import __version__

    return f"kafka-async-client/{__version__}"


def msk_iam_payload(
    credentials: AwsCredentials,
    *,
    host: str,
    region: str,
    when: datetime,
    user_agent: str | None = None,
    expires: int = MSK_TOKEN_EXPIRES,
) -> dict[str, str]:
    """The ``AWS_MSK_IAM`` client message's fields (send ``json.dumps`` of it).

    ``host`` is the broker's host name as the client connects to it; it is the one signed
    header, so a broker reached under another name refuses the login.
    """
    query = presign_query(
        credentials,
        host=host,
        region=region,
        service=MSK_SERVICE,
        params=[("Action", MSK_ACTION)],
        when=when,
        expires=expires,
    )
    fields = {key.lower(): value for key, value in query}
    fields["version"] = MSK_PAYLOAD_VERSION
    fields["host"] = host
    fields["user-agent"] = user_agent or default_user_agent()
    return fields


def msk_iam_token(
    credentials: AwsCredentials,
    *,
    region: str,
    when: datetime,
    user_agent: str | None = None,
    expires: int = MSK_TOKEN_EXPIRES,
) -> tuple[str, float]:
    """The OAUTHBEARER token MSK accepts, and when it expires (epoch seconds).

    The token is the presigned ``https://kafka.<region>.amazonaws.com/?Action=...`` URL with
    ``User-Agent`` appended, base64url-encoded without ``=`` padding; it expires
    ``expires`` seconds after the signed time (``when`` to the second).
    """
    host = f"kafka.{region}.amazonaws.com"
    query = presign_query(
        credentials,
        host=host,
        region=region,
        service=MSK_SERVICE,
        params=[("Action", MSK_ACTION)],
        when=when,
        expires=expires,
    )
    query.append(("User-Agent", user_agent or default_user_agent()))
    url = f"https://{host}/?" + "&".join(f"{_encode(k)}={_encode(v)}" for k, v in query)
    token = base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")
    signed = when.astimezone(timezone.utc).replace(microsecond=0)
    return token, signed.timestamp() + expires


_REGION_RE = re.compile(
    r"\.kafka(?:-serverless)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.amazonaws\.com(?:\.cn)?\.?$",
    re.IGNORECASE,
)


def region_from_host(host: str) -> str | None:
    """The AWS region in an MSK broker host name, or None.

    ``b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com`` and the serverless
    ``boot-x.c1.kafka-serverless.us-east-1.amazonaws.com`` give their region.
    """
    match = _REGION_RE.search(host)
    return match.group(1).lower() if match else None


def _now() -> datetime:
    return datetime.now(timezone.utc)


# --------------------------------------------------------------------------------------------
# The AWS_MSK_IAM SASL mechanism
# --------------------------------------------------------------------------------------------


class AwsMskIamMechanism:
    """SASL ``AWS_MSK_IAM``: one signed JSON message, one JSON answer from the broker.

    ``server_host`` is the broker's host name; :func:`kafka_async.net.sasl.prepared_mechanism`
    sets it before ``prepare()``, which gets the credentials (off the event loop) and signs.
    The broker's answer must be JSON with ``version`` ``2020_10_22`` and a ``request-id``
    (kept in :attr:`request_id`); anything else fails the login.
    """

    name = _MECHANISM

    def __init__(
        self,
        source: AwsCredentialSource,
        *,
        region: str | None = None,
        clock: Callable[[], datetime] = _now,
        user_agent: str | None = None,
    ) -> None:
        self._source = source
        self._region = region
        self._clock = clock
        self._user_agent = user_agent
        self._message: bytes | None = None
        self._stage = 0
        #: The broker's host name (set before ``prepare()``).
        self.server_host = ""
        #: The ``request-id`` of the broker's answer (MSK's id to quote to AWS support).
        self.request_id: str | None = None

    @classmethod
    def from_config(cls, config: ClientConfig) -> AwsMskIamMechanism:
        return cls(AwsCredentialSource.from_config(config), region=config.sasl_aws_region)

    async def prepare(self) -> None:
        """Get credentials and sign the login for :attr:`server_host`."""
        host = self.server_host
        if not host:
            raise SaslAuthenticationFailedError(
                f"{_MECHANISM}: the broker's host name was not given to the mechanism"
            )
        region = self._region or region_from_host(host)
        if region is None:
            region = await self._source.configured_region()
        if region is None:
            raise ConfigError(
                f"sasl_aws_region: needed for {_MECHANISM}, since the broker host {host!r} "
                "does not name a region (...kafka.<region>.amazonaws.com) and no AWS region "
                "is configured (AWS_REGION, AWS_DEFAULT_REGION, the profile's region)"
            )
        credentials = await self._source.get()
        fields = msk_iam_payload(
            credentials, host=host, region=region, when=self._clock(), user_agent=self._user_agent
        )
        self._message = json.dumps(fields, separators=(",", ":")).encode()

    def step(self, challenge: bytes | None) -> bytes | None:
        stage, self._stage = self._stage, self._stage + 1
        if stage == 0:
            if self._message is None:
                raise SaslAuthenticationFailedError(f"{_MECHANISM}: prepare() was not awaited")
            message, self._message = self._message, None
            return message
        if stage == 1:
            self.request_id = _check_response(challenge)
            return None
        raise SaslAuthenticationFailedError(f"{_MECHANISM}: unexpected extra message from broker")

    def __repr__(self) -> str:
        return f"AwsMskIamMechanism({self.server_host or 'no host'}, <signature hidden>)"


def _check_response(challenge: bytes | None) -> str:
    if not challenge:
        raise SaslAuthenticationFailedError(
            f"{_MECHANISM}: the broker sent an empty answer (expected its JSON response)"
        )
    try:
        answer = json.loads(challenge)
    except ValueError:
        raise SaslAuthenticationFailedError(
            f"{_MECHANISM}: the broker's answer is not JSON ({len(challenge)} bytes)"
        ) from None
    if not isinstance(answer, dict):
        raise SaslAuthenticationFailedError(f"{_MECHANISM}: the broker's answer is not an object")
    version = answer.get("version")
    if version != MSK_PAYLOAD_VERSION:
        raise SaslAuthenticationFailedError(
            f"{_MECHANISM}: the broker answered version {version!r}, expected "
            f"{MSK_PAYLOAD_VERSION!r}"
        )
    request_id = answer.get("request-id")
    if not isinstance(request_id, str) or not request_id:
        raise SaslAuthenticationFailedError(f"{_MECHANISM}: the broker's answer has no request-id")
    return request_id


def _validate(config: ClientConfig) -> None:
    key, secret = config.sasl_aws_access_key_id, config.sasl_aws_secret_access_key
    if (key is None) != (secret is None):
        raise ConfigError(
            "sasl_aws_access_key_id and sasl_aws_secret_access_key go together (give both, "
            "or neither to use the AWS credential chain)"
        )
    if config.sasl_aws_session_token is not None and key is None:
        raise ConfigError("sasl_aws_session_token needs sasl_aws_access_key_id")
    if key is not None and config.sasl_aws_profile is not None:
        raise ConfigError("give sasl_aws_access_key_id or sasl_aws_profile, not both")
    if key is None or config.sasl_aws_role_arn is not None:
        _check_botocore()


# --------------------------------------------------------------------------------------------
# OAUTHBEARER token provider
# --------------------------------------------------------------------------------------------


class MskIamTokenProvider:
    """An OAUTHBEARER token provider for MSK IAM (``sasl_oauth_token_provider=``).

    Each token is a presigned ``kafka-cluster:Connect`` URL (see :func:`msk_iam_token`),
    valid 15 minutes from its signing; a new one is made once ``refresh_fraction`` of that
    has passed, so new connections and re-authentications (KIP-368) always carry a fresh
    one. Credentials come from ``credentials`` or botocore's chain (``profile``,
    ``role_arn`` ... as in :class:`AwsCredentialSource`), resolved off the event loop::

        Producer(bootstrap_servers="b-1.demo.abc123.c2.kafka.us-east-1.amazonaws.com:9098",
                 security_protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER",
                 sasl_oauth_token_provider=MskIamTokenProvider(region="us-east-1"))
    """

    def __init__(
        self,
        region: str,
        *,
        profile: str | None = None,
        role_arn: str | None = None,
        role_session_name: str | None = None,
        sts_region: str | None = None,
        credentials: AwsCredentials | None = None,
        refresh_fraction: float = 0.8,
        user_agent: str | None = None,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        if not region:
            raise ConfigError("MskIamTokenProvider: region is required (e.g. 'us-east-1')")
        self.region = region
        self._source = AwsCredentialSource(
            credentials=credentials,
            profile=profile,
            role_arn=role_arn,
            role_session_name=role_session_name,
            sts_region=sts_region,
            region=region,
        )
        self._user_agent = user_agent
        self._clock = clock
        self._cache = sasl.RefreshingTokenProvider(self._fetch, refresh_fraction=refresh_fraction)

    async def _fetch(self) -> tuple[str, float]:
        credentials = await self._source.get()
        now = self._clock()
        token, expires_at = msk_iam_token(
            credentials, region=self.region, when=now, user_agent=self._user_agent
        )
        return token, expires_at - now.timestamp()

    async def token(self) -> str:
        """The current token (a new one once the refresh point has passed)."""
        return await self._cache.token()

    @property
    def fetches(self) -> int:
        """How many tokens were made."""
        return self._cache.fetches

    def extensions(self) -> dict[str, str]:
        return {}

    def __repr__(self) -> str:
        return f"MskIamTokenProvider({self.region!r}, {self._source!r}, <token hidden>)"


sasl.register_mechanism(_MECHANISM, AwsMskIamMechanism.from_config, check=None, validate=_validate)
