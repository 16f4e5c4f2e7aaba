"""OAUTHBEARER tokens from an OAuth 2 identity provider (OIDC): KIP-768 and KIP-1139.

With ``sasl_mechanism="OAUTHBEARER", sasl_oauthbearer_method="oidc"`` the client fetches its
own tokens from ``sasl_oauthbearer_token_endpoint_url``, as the Java client's
``OAuthBearerLoginCallbackHandler`` and librdkafka's ``sasl.oauthbearer.method=oidc`` do, with
one of two grants (``sasl_oauthbearer_grant_type``):

* ``client_credentials`` (KIP-768, RFC 6749 section 4.4): the client id and secret go in an
  HTTP Basic ``Authorization`` header (each form-urlencoded first when
  ``sasl_oauthbearer_header_urlencode`` is True, as RFC 6749 section 2.3.1 asks; the Java
  client's default is False, for identity providers that do not decode), and the form body
  is ``grant_type=client_credentials`` plus ``scope`` when set.
* ``urn:ietf:params:oauth:grant-type:jwt-bearer`` (KIP-1139, RFC 7523): the client signs a
  JWT assertion with its private key (RS256 or ES256; ``iss``/``sub``/``aud`` from settings,
  ``iat`` now, ``exp`` and ``nbf`` offsets, a random ``jti`` on request) and posts
  ``grant_type=...&assertion=...``; or it posts an assertion made elsewhere, read from
  ``sasl_oauthbearer_assertion_file`` at every fetch (so it can be replaced while the
  client runs). Signing needs the ``cryptography`` package (the ``oidc`` extra), imported
  only when an assertion is signed here.

The answer's ``access_token`` (``id_token`` when there is none, as in the Java client) is the
bearer token; its lifetime is the sooner of ``expires_in`` and the JWT's ``exp`` (the broker
ends the session at ``exp``), and a token already expired (an identity provider's clock
behind) is a :class:`TokenEndpointError` rather than a session the broker ends at once. The
token is cached and fetched again once 80% of its lifetime has passed
(:class:`~kafka_async.net.sasl.RefreshingTokenProvider`), so connections opened or
re-authenticated (KIP-368) late in its life get a fresh one. All connections of the clients
running on one event loop with the same OIDC settings share one provider and so one token.

The HTTP exchange uses the standard library (``http.client``) in a worker thread
(``anyio.to_thread``), never blocking the event loop, with connect and read timeouts
(``sasl_login_connect_timeout_ms``, ``sasl_login_read_timeout_ms``). A connection error, a
timeout or an HTTP status the Java client retries (5xx other than 501/505, 408, 429) is
retried with exponential backoff from ``sasl_login_retry_backoff_ms`` until
``sasl_login_retry_backoff_max_ms`` has passed since the first attempt. Any other failure is
a :class:`TokenEndpointError` (a ``SaslAuthenticationFailedError``) carrying the endpoint's
``error`` and ``error_description`` (RFC 6749 section 5.2); no message ever contains the
client secret, the private key or a token. HTTPS verifies the endpoint's certificate and
host name with the system's CAs, or with ``https_ca_location``. Proxies are not used.

The providers are public: :class:`ClientCredentialsTokenProvider` and
:class:`JwtBearerTokenProvider` can be passed as ``sasl_oauth_token_provider`` too.
"""

from __future__ import annotations

import abc
import base64
import http.client
import json
import os
import ssl
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.lowlevel
import anyio.to_thread

from ..errors import ConfigError, SaslAuthenticationFailedError
from ..settings.spec import Bool, Choice, Custom, Int, Setting, Text
from .sasl import RefreshingTokenProvider

if TYPE_CHECKING:
    from .config import ClientConfig

__all__ = [
    "CLIENT_CREDENTIALS",
    "JWT_BEARER",
    "SETTINGS",
    "ClientCredentialsTokenProvider",
    "JwtBearerTokenProvider",
    "TokenEndpointError",
    "provider_for",
    "validate",
]

CLIENT_CREDENTIALS: Final = "client_credentials"
JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"

#: HTTP statuses the Java client does not retry (HttpJwtRetriever): the request itself is
#: wrong, so sending it again cannot help. Every other failure status is retried.
_UNRETRYABLE_STATUSES = frozenset(
    {400, 401, 402, 403, 404, 405, 406, 407, 409, 410, 411, 412, 413, 414, 415, 501, 505}
)
#: An error body is shown trimmed to this many characters.
_SNIPPET = 200


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


class TokenEndpointError(SaslAuthenticationFailedError):
    """The identity provider's token endpoint gave no token.

    ``url`` is the endpoint (without any user info), ``status`` the HTTP status (None when
    no answer came: connection refused, timeout, TLS failure), ``error`` and
    ``error_description`` the RFC 6749 error fields of the answer (``"invalid_client"``,
    ...) when it had them. The message names all of these and never the client secret.
    """

    def __init__(
        self,
        message: str | None = None,
        *,
        url: str = "",
        status: int | None = None,
        error: str | None = None,
        error_description: str | None = None,
    ) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.error = error
        self.error_description = error_description

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_error,
            (type(self), self.message, self.url, self.status, self.error, self.error_description),
        )


def _rebuild_error(
    cls: type[TokenEndpointError],
    message: str | None,
    url: str,
    status: int | None,
    error: str | None,
    error_description: str | None,
) -> TokenEndpointError:
    return cls(message, url=url, status=status, error=error, error_description=error_description)


# --------------------------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------------------------


def _extensions(name: str, value: Any) -> Any:
    """librdkafka's ``"k=v,k2=v2"`` or a dict -> a tuple of pairs (hashable, frozen)."""
    if value is None:
        return None
    pairs: list[tuple[str, str]] = []
    if isinstance(value, str):
        for part in value.split(","):
            if not part.strip():
                continue
            key, sep, val = part.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"{name}: expected 'key=value,key2=value2', got {value!r}")
            pairs.append((key.strip(), val))
    elif isinstance(value, Mapping):
        for key, val in value.items():
            if not isinstance(key, str) or not isinstance(val, str):
                raise ConfigError(f"{name}: keys and values must be strings, got {key!r}")
            pairs.append((key, val))
    else:
        raise ConfigError(f"{name}: expected 'key=value,...' or a dict, got {value!r}")
    for key, _ in pairs:
        if not key.isalpha() or not key.isascii() or key == "auth":
            raise ConfigError(f"{name}: invalid extension name {key!r} (letters only, not 'auth')")
    return tuple(pairs)


def _url(name: str, value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{name}: expected an http(s) URL, got {value!r}")
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{name}: expected an http:// or https:// URL, got {_safe_url(value)!r}")
    return value


_TEXT = Text()

#: Settings this module adds to the client schema (see net/settings.py).
SETTINGS: list[Setting] = [
    Setting(
        "sasl_oauthbearer_method",
        Choice(("default", "oidc"), "OAuthBearerMethod"),
        "default",
        "OAUTHBEARER: 'default' (sasl_oauth_token_provider gives tokens) or 'oidc' (fetched "
        "from sasl_oauthbearer_token_endpoint_url)",
        java="sasl.oauthbearer.method (librdkafka)",
    ),
    Setting(
        "sasl_oauthbearer_token_endpoint_url",
        Custom("str | None", _url),
        None,
        "OIDC: the identity provider's token endpoint (http:// or https://)",
        java="sasl.oauthbearer.token.endpoint.url",
    ),
    Setting(
        "sasl_oauthbearer_grant_type",
        Choice((CLIENT_CREDENTIALS, JWT_BEARER), "OAuthBearerGrantType"),
        CLIENT_CREDENTIALS,
        "OIDC: 'client_credentials' (KIP-768) or 'urn:ietf:params:oauth:grant-type:jwt-bearer' "
        "(KIP-1139)",
        java="sasl.oauthbearer.grant.type (librdkafka); Java: sasl.oauthbearer.jwt.retriever.class",
    ),
    Setting(
        "sasl_oauthbearer_client_id",
        _TEXT,
        None,
        "OIDC client_credentials: the client id",
        java="sasl.oauthbearer.client.credentials.client.id; sasl.oauthbearer.client.id "
        "(librdkafka)",
    ),
    Setting(
        "sasl_oauthbearer_client_secret",
        _TEXT,
        None,
        "OIDC client_credentials: the client secret",
        java="sasl.oauthbearer.client.credentials.client.secret; "
        "sasl.oauthbearer.client.secret (librdkafka)",
        secret=True,
    ),
    Setting(
        "sasl_oauthbearer_scope",
        _TEXT,
        None,
        "OIDC: the scope asked for (sent only when set)",
        java="sasl.oauthbearer.scope",
    ),
    Setting(
        "sasl_oauthbearer_extensions",
        Custom(
            "str | dict[str, str] | None",
            _extensions,
            stored_as="tuple[tuple[str, str], ...] | None",
        ),
        None,
        "OIDC: SASL extensions sent with the token (KIP-342), 'k=v,k2=v2' or a dict",
        java="sasl.oauthbearer.extensions (librdkafka); Java: extension_<k> in sasl.jaas.config",
    ),
    Setting(
        "sasl_oauthbearer_header_urlencode",
        Bool(),
        False,
        "OIDC client_credentials: form-urlencode id and secret in the Basic header (RFC 6749 "
        "2.3.1)",
        java="sasl.oauthbearer.header.urlencode",
    ),
    Setting(
        "sasl_oauthbearer_assertion_algorithm",
        Choice(("RS256", "ES256"), "OAuthBearerAssertionAlgorithm"),
        "RS256",
        "OIDC jwt-bearer: how the assertion is signed",
        java="sasl.oauthbearer.assertion.algorithm",
    ),
    Setting(
        "sasl_oauthbearer_assertion_private_key_file",
        _TEXT,
        None,
        "OIDC jwt-bearer: PEM private key (PKCS#8 or traditional) signing the assertion; read "
        "at every fetch",
        java="sasl.oauthbearer.assertion.private.key.file",
    ),
    Setting(
        "sasl_oauthbearer_assertion_private_key_pem",
        _TEXT,
        None,
        "OIDC jwt-bearer: the private key itself, PEM text (instead of the file)",
        java="sasl.oauthbearer.assertion.private.key.pem (librdkafka)",
        secret=True,
    ),
    Setting(
        "sasl_oauthbearer_assertion_private_key_passphrase",
        _TEXT,
        None,
        "OIDC jwt-bearer: passphrase of an encrypted private key",
        java="sasl.oauthbearer.assertion.private.key.passphrase",
        secret=True,
    ),
    Setting(
        "sasl_oauthbearer_assertion_file",
        _TEXT,
        None,
        "OIDC jwt-bearer: a file holding a ready-made assertion (read at every fetch; the "
        "other assertion settings are then unused)",
        java="sasl.oauthbearer.assertion.file",
    ),
    Setting(
        "sasl_oauthbearer_assertion_claim_aud",
        _TEXT,
        None,
        "OIDC jwt-bearer: the assertion's aud claim",
        java="sasl.oauthbearer.assertion.claim.aud",
    ),
    Setting(
        "sasl_oauthbearer_assertion_claim_iss",
        _TEXT,
        None,
        "OIDC jwt-bearer: the assertion's iss claim",
        java="sasl.oauthbearer.assertion.claim.iss",
    ),
    Setting(
        "sasl_oauthbearer_assertion_claim_sub",
        _TEXT,
        None,
        "OIDC jwt-bearer: the assertion's sub claim",
        java="sasl.oauthbearer.assertion.claim.sub",
    ),
    Setting(
        "sasl_oauthbearer_assertion_claim_exp_seconds",
        Int(low=1, high=86_400),
        300,
        "OIDC jwt-bearer: the assertion's exp, seconds after now",
        java="sasl.oauthbearer.assertion.claim.exp.seconds",
    ),
    Setting(
        "sasl_oauthbearer_assertion_claim_nbf_seconds",
        Int(low=0, high=86_400),
        60,
        "OIDC jwt-bearer: the assertion's nbf, seconds before now",
        java="sasl.oauthbearer.assertion.claim.nbf.seconds",
    ),
    Setting(
        "sasl_oauthbearer_assertion_claim_jti_include",
        Bool(),
        False,
        "OIDC jwt-bearer: give the assertion a random jti claim",
        java="sasl.oauthbearer.assertion.claim.jti.include",
    ),
    Setting(
        "https_ca_location",
        _TEXT,
        None,
        "OIDC: CA bundle (PEM) verifying an https:// token endpoint; None: the system's CAs",
        java="https.ca.location (librdkafka); Java: ssl.truststore.location",
    ),
    Setting(
        "sasl_login_connect_timeout_ms",
        Int(low=1),
        10_000,
        "OIDC: deadline of connecting to the token endpoint",
        java="sasl.login.connect.timeout.ms",
    ),
    Setting(
        "sasl_login_read_timeout_ms",
        Int(low=1),
        10_000,
        "OIDC: deadline of each read of the token endpoint's answer",
        java="sasl.login.read.timeout.ms",
    ),
    Setting(
        "sasl_login_retry_backoff_ms",
        Int(low=0),
        100,
        "OIDC: first wait before asking the token endpoint again (doubles per attempt)",
        java="sasl.login.retry.backoff.ms",
    ),
    Setting(
        "sasl_login_retry_backoff_max_ms",
        Int(low=0),
        10_000,
        "OIDC: longest wait between attempts, and how long retries go on",
        java="sasl.login.retry.backoff.max.ms",
    ),
]

#: The names above, for the provider cache key.
_SETTING_NAMES = tuple(s.name for s in SETTINGS)


def _safe_url(url: str) -> str:
    """``url`` without user info (``https://user:pass@host`` would show a password)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    netloc = parts.hostname or ""
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


# --------------------------------------------------------------------------------------------
# Validation and the shared provider
# --------------------------------------------------------------------------------------------


def _import_cryptography() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        raise ConfigError(
            "sasl_oauthbearer_grant_type jwt-bearer signs its assertion with the "
            "'cryptography' package: pip install 'kafka-async-client[oidc]'"
        ) from None
    return serialization


def validate(config: ClientConfig) -> None:
    """Raise ``ConfigError`` naming the first setting OIDC needs and ``config`` lacks."""
    if config.sasl_oauth_token_provider is not None:
        raise ConfigError(
            "sasl_oauth_token_provider: give either a token provider or "
            "sasl_oauthbearer_method='oidc', not both"
        )
    if config.sasl_oauthbearer_token_endpoint_url is None:
        raise ConfigError(
            "sasl_oauthbearer_token_endpoint_url is required when sasl_oauthbearer_method is 'oidc'"
        )
    if config.sasl_oauthbearer_grant_type == CLIENT_CREDENTIALS:
        for name in ("sasl_oauthbearer_client_id", "sasl_oauthbearer_client_secret"):
            if getattr(config, name) is None:
                raise ConfigError(
                    f"{name} is required with sasl_oauthbearer_grant_type='client_credentials'"
                )
        return
    if config.sasl_oauthbearer_assertion_file is not None:
        _readable(config.sasl_oauthbearer_assertion_file, "sasl_oauthbearer_assertion_file")
        return
    key_file = config.sasl_oauthbearer_assertion_private_key_file
    key_pem = config.sasl_oauthbearer_assertion_private_key_pem
    if key_file is None and key_pem is None:
        raise ConfigError(
            "sasl_oauthbearer_assertion_private_key_file (or _private_key_pem, or "
            "sasl_oauthbearer_assertion_file) is required with the jwt-bearer grant"
        )
    if key_file is not None and key_pem is not None:
        raise ConfigError(
            "sasl_oauthbearer_assertion_private_key_file and _private_key_pem: give one, not both"
        )
    if key_file is not None:
        _readable(key_file, "sasl_oauthbearer_assertion_private_key_file")
    _import_cryptography()


def _readable(path: str, name: str) -> None:
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise ConfigError(f"{name}: {path!r} is not a readable file")


#: Per event loop: OIDC settings -> the provider all connections with them share. Per loop
#: because the provider's lock belongs to the loop it was first used on.
_PROVIDERS: anyio.lowlevel.RunVar[dict[tuple[Any, ...], RefreshingTokenProvider]] = (
    anyio.lowlevel.RunVar("kafka_async_oidc_providers")
)


def provider_for(config: ClientConfig) -> RefreshingTokenProvider:
    """The token provider for ``config``'s OIDC settings, shared by every connection (and
    every client) on the running event loop that has the same settings."""
    key = tuple(getattr(config, name) for name in _SETTING_NAMES)
    try:
        cache = _PROVIDERS.get()
    except LookupError:
        cache = {}
        _PROVIDERS.set(cache)
    except RuntimeError:  # no event loop (anyio's NoEventLoopError, sniffio's): no sharing
        return _build(config)
    provider = cache.get(key)
    if provider is None:
        provider = cache[key] = _build(config)
    return provider


def _build(config: ClientConfig) -> RefreshingTokenProvider:
    url = config.sasl_oauthbearer_token_endpoint_url
    if url is None:  # validate() ran when the config was made
        raise ConfigError("sasl_oauthbearer_token_endpoint_url is required")
    common: dict[str, Any] = {
        "scope": config.sasl_oauthbearer_scope,
        "extensions": dict(config.sasl_oauthbearer_extensions or ()),
        "ca_file": config.https_ca_location,
        "connect_timeout": config.sasl_login_connect_timeout_ms / 1000,
        "read_timeout": config.sasl_login_read_timeout_ms / 1000,
        "retry_backoff": config.sasl_login_retry_backoff_ms / 1000,
        "retry_backoff_max": config.sasl_login_retry_backoff_max_ms / 1000,
    }
    if config.sasl_oauthbearer_grant_type == CLIENT_CREDENTIALS:
        return ClientCredentialsTokenProvider(
            url,
            config.sasl_oauthbearer_client_id or "",
            config.sasl_oauthbearer_client_secret or "",
            header_urlencode=config.sasl_oauthbearer_header_urlencode,
            **common,
        )
    return JwtBearerTokenProvider(
        url,
        assertion_file=config.sasl_oauthbearer_assertion_file,
        private_key_file=config.sasl_oauthbearer_assertion_private_key_file,
        private_key_pem=config.sasl_oauthbearer_assertion_private_key_pem,
        private_key_passphrase=config.sasl_oauthbearer_assertion_private_key_passphrase,
        algorithm=config.sasl_oauthbearer_assertion_algorithm,
        claim_iss=config.sasl_oauthbearer_assertion_claim_iss,
        claim_sub=config.sasl_oauthbearer_assertion_claim_sub,
        claim_aud=config.sasl_oauthbearer_assertion_claim_aud,
        claim_exp_seconds=config.sasl_oauthbearer_assertion_claim_exp_seconds,
        claim_nbf_seconds=config.sasl_oauthbearer_assertion_claim_nbf_seconds,
        claim_jti_include=config.sasl_oauthbearer_assertion_claim_jti_include,
        **common,
    )


# --------------------------------------------------------------------------------------------
# The token endpoint
# --------------------------------------------------------------------------------------------


class _Retry(Exception):
    """A failure worth another attempt; carries the error to raise if none is left."""

    def __init__(self, error: TokenEndpointError) -> None:
        super().__init__(str(error))
        self.error = error


class _TokenEndpoint:
    """POSTs a form to the token endpoint and reads the token from the answer (blocking;
    run in a worker thread)."""

    def __init__(
        self, url: str, *, ca_file: str | None, connect_timeout: float, read_timeout: float
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        self.url = url
        self.shown = _safe_url(url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._target = parts.path or "/"
        if parts.query:
            self._target += "?" + parts.query
        self._ca_file = ca_file
        self._context: ssl.SSLContext | None = None
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout

    def _tls(self) -> ssl.SSLContext:
        if self._context is None:
            try:
                self._context = ssl.create_default_context(cafile=self._ca_file)
            except (OSError, ssl.SSLError) as exc:
                raise ConfigError(
                    f"https_ca_location: cannot load {self._ca_file!r}: {exc}"
                ) from None
        return self._context

    def post(self, form: Mapping[str, str], headers: Mapping[str, str]) -> tuple[str, float]:
        """The token and its lifetime in seconds; raises ``_Retry`` or ``TokenEndpointError``."""
        body = urllib.parse.urlencode(form).encode()
        conn: http.client.HTTPConnection
        if self._https:
            conn = http.client.HTTPSConnection(
                self._host, self._port, timeout=self._connect_timeout, context=self._tls()
            )
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self._connect_timeout)
        try:
            try:
                conn.connect()
                if conn.sock is not None:
                    conn.sock.settimeout(self._read_timeout)
                conn.request(
                    "POST",
                    self._target,
                    body=body,
                    headers={
                        "Accept": "application/json",
                        "Cache-Control": "no-cache",
                        "Content-Type": "application/x-www-form-urlencoded",
                        **headers,
                    },
                )
                response = conn.getresponse()
                status = response.status
                data = response.read(1 << 20)
            except ssl.SSLCertVerificationError as exc:
                # Not retried: the certificate will not become valid by asking again.
                raise TokenEndpointError(
                    f"OAUTHBEARER: the token endpoint {self.shown} has a certificate this client "
                    f"does not trust ({exc.verify_message}); set https_ca_location to its CA",
                    url=self.shown,
                ) from None
            except (OSError, http.client.HTTPException) as exc:
                raise _Retry(
                    TokenEndpointError(
                        f"OAUTHBEARER: no answer from the token endpoint {self.shown}: "
                        f"{type(exc).__name__}: {exc}",
                        url=self.shown,
                    )
                ) from None
        finally:
            conn.close()
        return self._parse(status, data)

    def _parse(self, status: int, data: bytes) -> tuple[str, float]:
        text = data.decode("utf-8", "replace")
        try:
            doc = json.loads(text) if text.strip() else None
        except ValueError:
            doc = None
        if status not in (200, 201):
            error = description = None
            if isinstance(doc, dict):
                error = _str_or_none(doc.get("error") or doc.get("errorCode"))
                description = _str_or_none(doc.get("error_description") or doc.get("errorSummary"))
            if error is not None:
                said = error + (f" ({description})" if description else "")
            else:
                snippet = text.strip()[:_SNIPPET] or "an empty body"
                said = f"HTTP {status} with {snippet}"
            failure = TokenEndpointError(
                f"OAUTHBEARER: the token endpoint {self.shown} refused: {said} [HTTP {status}]",
                url=self.shown,
                status=status,
                error=error,
                error_description=description,
            )
            if status in _UNRETRYABLE_STATUSES:
                raise failure
            raise _Retry(failure)
        token = None
        if isinstance(doc, dict):
            token = doc.get("access_token") or doc.get("id_token")
        if not isinstance(token, str) or not token.strip():
            raise TokenEndpointError(
                f"OAUTHBEARER: the token endpoint {self.shown} answered HTTP {status} without "
                "an access_token",
                url=self.shown,
                status=status,
            )
        token = token.strip()
        assert isinstance(doc, dict)
        lifetime = _lifetime(doc.get("expires_in"), token)
        if lifetime is None:
            raise TokenEndpointError(
                f"OAUTHBEARER: the token endpoint {self.shown} gave a token without expires_in "
                "and the token has no exp claim, so its lifetime is unknown",
                url=self.shown,
                status=status,
            )
        if lifetime <= 0:
            # The broker refuses it, or (within its clock skew) grants a session of 0 ms and
            # closes the connection at the next request: say why here, once.
            raise TokenEndpointError(
                f"OAUTHBEARER: the token endpoint {self.shown} gave a token that expired "
                f"{-lifetime:.0f} s ago (its exp claim); are the identity provider's and this "
                "machine's clocks right?",
                url=self.shown,
                status=status,
            )
        return token, lifetime


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _lifetime(expires_in: Any, token: str) -> float | None:
    """Seconds the token stays valid: the sooner of ``expires_in`` and the JWT's ``exp``
    (None: neither is there).

    ``exp`` counts even when ``expires_in`` is given: it is what the broker goes by (the
    session ends at ``exp``, KIP-368), and it is often whole seconds earlier than
    ``expires_in`` says. Refreshing by ``expires_in`` alone would re-authenticate with the
    token that is about to end the session.
    """
    given: float | None = None
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool):
        given = float(expires_in)
    elif isinstance(expires_in, str):
        try:
            given = float(expires_in)
        except ValueError:
            pass
    claims = _jwt_claims(token)
    exp = claims.get("exp") if claims else None
    if isinstance(exp, (int, float)) and not isinstance(exp, bool):
        remaining = float(exp) - time.time()
        return remaining if given is None else min(given, remaining)
    return given


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _jwt_claims(token: str) -> dict[str, Any] | None:
    """The payload of a JWS compact token, unverified (only to read ``exp``)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


# --------------------------------------------------------------------------------------------
# The providers
# --------------------------------------------------------------------------------------------


class _OidcTokenProvider(RefreshingTokenProvider, abc.ABC):
    """A :class:`RefreshingTokenProvider` whose fetch asks a token endpoint, with retries;
    each grant says what one request carries (:meth:`_request`)."""

    grant_type = ""

    def __init__(
        self,
        token_endpoint_url: str,
        *,
        scope: str | None,
        extensions: Mapping[str, str] | None,
        ca_file: str | None,
        connect_timeout: float,
        read_timeout: float,
        retry_backoff: float,
        retry_backoff_max: float,
        refresh_fraction: float,
    ) -> None:
        _url("token_endpoint_url", token_endpoint_url)
        super().__init__(
            self._fetch_with_retries, refresh_fraction=refresh_fraction, extensions=extensions
        )
        self.token_endpoint_url = token_endpoint_url
        self.scope = scope
        self._endpoint = _TokenEndpoint(
            token_endpoint_url,
            ca_file=ca_file,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
        )
        self._retry_backoff = retry_backoff
        self._retry_backoff_max = retry_backoff_max
        #: HTTP requests sent to the token endpoint (attempts, retries included).
        self.requests = 0

    @abc.abstractmethod
    def _request(self) -> tuple[dict[str, str], dict[str, str]]:
        """The form and headers of one token request (runs in the worker thread)."""

    def _attempt(self) -> tuple[str, float]:
        form, headers = self._request()
        if self.scope:
            form["scope"] = self.scope
        return self._endpoint.post(form, headers)

    async def _fetch_with_retries(self) -> tuple[str, float]:
        start = time.monotonic()
        backoff = self._retry_backoff
        while True:
            self.requests += 1
            try:
                # Abandoned on cancellation: a closing client does not wait out the HTTP
                # timeouts; the thread finishes on its own and its answer is dropped.
                return await anyio.to_thread.run_sync(self._attempt, abandon_on_cancel=True)
            except _Retry as retry:
                elapsed = time.monotonic() - start
                if elapsed + backoff > self._retry_backoff_max:
                    raise retry.error from None
            await anyio.sleep(backoff)
            backoff = min(max(backoff * 2, 0.001), self._retry_backoff_max)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self._endpoint.shown!r}, <token hidden>, "
            f"fetches={self.fetches})"
        )


class ClientCredentialsTokenProvider(_OidcTokenProvider):
    """Tokens from the client-credentials grant (KIP-768): a client id and secret.

    What ``sasl_oauthbearer_method="oidc"`` builds by default; it can also be passed as
    ``sasl_oauth_token_provider``::

        provider = ClientCredentialsTokenProvider(
            "https://idp.example.com/oauth2/token", "my-client", secret, scope="kafka"
        )
        Producer(..., sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=provider)

    Times are in seconds. The secret never appears in ``repr`` or in any error message.
    """

    grant_type = CLIENT_CREDENTIALS

    def __init__(
        self,
        token_endpoint_url: str,
        client_id: str,
        client_secret: str,
        *,
        scope: str | None = None,
        extensions: Mapping[str, str] | None = None,
        header_urlencode: bool = False,
        ca_file: str | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 10.0,
        retry_backoff: float = 0.1,
        retry_backoff_max: float = 10.0,
        refresh_fraction: float = 0.8,
    ) -> None:
        if not client_id or not client_secret:
            raise ConfigError("ClientCredentialsTokenProvider: client id and secret are required")
        super().__init__(
            token_endpoint_url,
            scope=scope,
            extensions=extensions,
            ca_file=ca_file,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            retry_backoff=retry_backoff,
            retry_backoff_max=retry_backoff_max,
            refresh_fraction=refresh_fraction,
        )
        self.client_id = client_id
        self._secret = client_secret
        self._urlencode = header_urlencode

    def _request(self) -> tuple[dict[str, str], dict[str, str]]:
        client_id, secret = self.client_id, self._secret
        if self._urlencode:
            client_id = urllib.parse.quote_plus(client_id)
            secret = urllib.parse.quote_plus(secret)
        basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode("ascii")
        return {"grant_type": CLIENT_CREDENTIALS}, {"Authorization": f"Basic {basic}"}

    def __repr__(self) -> str:
        return (
            f"ClientCredentialsTokenProvider({self._endpoint.shown!r}, "
            f"client_id={self.client_id!r}, <secret hidden>, fetches={self.fetches})"
        )


class JwtBearerTokenProvider(_OidcTokenProvider):
    """Tokens from the JWT-bearer grant (KIP-1139, RFC 7523): a signed assertion.

    Either ``assertion_file`` (a ready-made assertion, read at every fetch) or a private key
    (``private_key_file``, read at every fetch so it can be rotated, or ``private_key_pem``)
    with which a fresh assertion is signed per fetch: header ``{"alg", "typ": "JWT"}``,
    claims ``iss``/``sub``/``aud`` when given, ``iat`` now, ``exp`` ``claim_exp_seconds``
    later, ``nbf`` ``claim_nbf_seconds`` earlier, and a random ``jti`` with
    ``claim_jti_include``. Signing uses the ``cryptography`` package (the ``oidc`` extra).
    """

    grant_type = JWT_BEARER

    def __init__(
        self,
        token_endpoint_url: str,
        *,
        assertion_file: str | None = None,
        private_key_file: str | None = None,
        private_key_pem: str | None = None,
        private_key_passphrase: str | None = None,
        algorithm: str = "RS256",
        claim_iss: str | None = None,
        claim_sub: str | None = None,
        claim_aud: str | None = None,
        claim_exp_seconds: int = 300,
        claim_nbf_seconds: int = 60,
        claim_jti_include: bool = False,
        scope: str | None = None,
        extensions: Mapping[str, str] | None = None,
        ca_file: str | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 10.0,
        retry_backoff: float = 0.1,
        retry_backoff_max: float = 10.0,
        refresh_fraction: float = 0.8,
    ) -> None:
        if algorithm not in ("RS256", "ES256"):
            raise ConfigError(
                f"JwtBearerTokenProvider: algorithm must be RS256 or ES256, got {algorithm!r}"
            )
        if assertion_file is None and (private_key_file is None) == (private_key_pem is None):
            raise ConfigError(
                "JwtBearerTokenProvider: give assertion_file, or one of private_key_file and "
                "private_key_pem"
            )
        if assertion_file is None:
            _import_cryptography()
        super().__init__(
            token_endpoint_url,
            scope=scope,
            extensions=extensions,
            ca_file=ca_file,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            retry_backoff=retry_backoff,
            retry_backoff_max=retry_backoff_max,
            refresh_fraction=refresh_fraction,
        )
        self.algorithm = algorithm
        self._assertion_file = assertion_file
        self._key_file = private_key_file
        self._key_pem = private_key_pem
        self._passphrase = private_key_passphrase
        self.claims: dict[str, Any] = {
            k: v for k, v in (("iss", claim_iss), ("sub", claim_sub), ("aud", claim_aud)) if v
        }
        self._exp_seconds = claim_exp_seconds
        self._nbf_seconds = claim_nbf_seconds
        self._jti = claim_jti_include
        self._clock: Callable[[], float] = time.time

    def assertion(self) -> str:
        """A fresh assertion (blocking: reads files and signs)."""
        if self._assertion_file is not None:
            try:
                with open(self._assertion_file, encoding="utf-8") as fh:
                    text = fh.read().strip()
            except OSError as exc:
                raise ConfigError(
                    f"sasl_oauthbearer_assertion_file: cannot read {self._assertion_file!r}: "
                    f"{exc.strerror}"
                ) from None
            if not text:
                raise ConfigError(
                    f"sasl_oauthbearer_assertion_file: {self._assertion_file!r} is empty"
                )
            return text
        now = int(self._clock())
        claims = {
            **self.claims,
            "iat": now,
            "exp": now + self._exp_seconds,
            "nbf": now - self._nbf_seconds,
        }
        if self._jti:
            claims["jti"] = str(uuid.uuid4())
        header = {"alg": self.algorithm, "typ": "JWT"}
        signing_input = (
            _b64url(json.dumps(header, separators=(",", ":")).encode())
            + "."
            + _b64url(json.dumps(claims, separators=(",", ":")).encode())
        )
        signature = _sign(self._load_key(), self.algorithm, signing_input.encode("ascii"))
        return signing_input + "." + _b64url(signature)

    def _load_key(self) -> Any:
        serialization = _import_cryptography()
        name = "sasl_oauthbearer_assertion_private_key_file"
        if self._key_file is not None:
            try:
                with open(self._key_file, "rb") as fh:
                    data = fh.read()
            except OSError as exc:
                raise ConfigError(
                    f"{name}: cannot read {self._key_file!r}: {exc.strerror}"
                ) from None
        else:
            name = "sasl_oauthbearer_assertion_private_key_pem"
            data = (self._key_pem or "").encode()
        password = self._passphrase.encode() if self._passphrase else None
        try:
            return serialization.load_pem_private_key(data, password=password)
        except (ValueError, TypeError) as exc:
            # cryptography's messages name the problem (bad passphrase, not PEM), not the key.
            raise ConfigError(f"{name}: cannot load the private key: {exc}") from None

    def _request(self) -> tuple[dict[str, str], dict[str, str]]:
        return {"grant_type": JWT_BEARER, "assertion": self.assertion()}, {}

    def __repr__(self) -> str:
        return (
            f"JwtBearerTokenProvider({self._endpoint.shown!r}, {self.algorithm}, "
            f"claims={self.claims!r}, <key hidden>, fetches={self.fetches})"
        )


def _sign(key: Any, algorithm: str, data: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    if algorithm == "RS256":
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ConfigError(
                f"sasl_oauthbearer_assertion_algorithm RS256 needs an RSA key, got "
                f"{type(key).__name__}"
            )
        return bytes(key.sign(data, padding.PKCS1v15(), hashes.SHA256()))
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise ConfigError(
            f"sasl_oauthbearer_assertion_algorithm ES256 needs a P-256 EC key, got "
            f"{type(key).__name__}"
        )
    # JWS wants r and s as two 32-byte big-endian numbers, not DER (RFC 7518 3.4).
    r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")
