"""A small OAuth 2 / OIDC identity provider on 127.0.0.1, for the OAUTHBEARER tests.

:class:`IdentityProvider` serves, from a standard-library HTTP server in a thread:

* ``GET /jwks``: the JSON Web Key Set (RFC 7517) of its current RS256 signing keys, each with
  a ``kid``; :meth:`IdentityProvider.rotate` makes a new key (new ``kid``), signs with it from
  then on and drops the old one from the set, as an identity provider rotating keys does.
* ``POST /token``: the token endpoint (RFC 6749), two grants:

  - ``client_credentials`` with the client authenticated by HTTP Basic (id and secret
    form-urldecoded when ``basic_urlencoded``) or by ``client_id``/``client_secret`` in the
    form; clients are registered with :meth:`add_client`.
  - ``urn:ietf:params:oauth:grant-type:jwt-bearer`` (RFC 7523): the ``assertion`` must be a
    JWT signed (RS256 or ES256) by the key registered for its ``iss`` with
    :meth:`add_assertion_key`, with ``aud`` the token URL (or :attr:`issuer`), a ``sub``,
    and ``exp``/``nbf`` that hold now.

  A token is an RS256 JWT: ``iss`` :attr:`issuer`, ``sub`` the client (or the assertion's
  ``sub``), ``aud`` :attr:`audience`, ``iat``, ``exp`` (``iat`` + :attr:`lifetime`),
  ``scope`` when asked; the answer also has ``expires_in``. :attr:`clock_offset` shifts
  ``iat``/``exp`` (an identity provider whose clock is wrong issues already-expired tokens
  while ``expires_in`` still says :attr:`lifetime`).

With ``tls`` (a server ``SSLContext``) it serves HTTPS. Errors are RFC 6749 section 5.2 JSON
documents (``invalid_client``, ``invalid_grant``,
``unsupported_grant_type``, ``invalid_request``); :meth:`fail_next` makes the next requests
fail with a status (503 for retry tests). :attr:`requests` counts requests per path, and
:attr:`issued` lists the claims of every token issued.
"""

from __future__ import annotations

import base64
import json
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

__all__ = ["IdentityProvider", "b64url", "decode_jwt", "sign_jwt"]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7515)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _int_b64(n: int) -> str:
    return b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


def sign_jwt(key: rsa.RSAPrivateKey, claims: dict[str, Any], kid: str | None = None) -> str:
    """An RS256 JWT of ``claims`` signed with ``key``."""
    header: dict[str, Any] = {"alg": "RS256", "typ": "JWT"}
    if kid is not None:
        header["kid"] = kid
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + "." + b64url(signature)


def decode_jwt(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Header and claims of a JWT, unverified."""
    header, payload, _ = token.split(".")
    return json.loads(_unb64url(header)), json.loads(_unb64url(payload))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (a read timeout, a cancelled fetch, a refused certificate)
        # leaves a broken pipe behind: expected here, not worth a traceback.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _OAuthError(Exception):
    def __init__(self, status: int, error: str, description: str) -> None:
        super().__init__(f"{error}: {description}")
        self.status = status
        self.error = error
        self.description = description


class IdentityProvider:
    """The identity provider; a context manager that starts and stops its server.

    ``audience`` is the ``aud`` of the tokens it issues, ``lifetime`` their lifetime in
    seconds; both may be changed while it runs.
    """

    def __init__(
        self,
        *,
        audience: str = "kafka",
        lifetime: float = 3600.0,
        issuer: str | None = None,
        basic_urlencoded: bool = False,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.audience = audience
        self.lifetime = lifetime
        self.clock_offset = 0.0
        #: Seconds the token endpoint waits before answering (a slow or hung IdP).
        self.delay = 0.0
        self.basic_urlencoded = basic_urlencoded
        self._tls = tls
        self._issuer = issuer
        self._clients: dict[str, str] = {}
        self._assertion_keys: dict[str, Any] = {}
        self._keys: list[tuple[str, rsa.RSAPrivateKey]] = []
        self._lock = threading.Lock()
        self._failures: list[int] = []
        #: Requests per path (``"/token"``, ``"/jwks"``).
        self.requests: Counter[str] = Counter()
        #: The claims of every token issued, in order.
        self.issued: list[dict[str, Any]] = []
        #: The RFC 6749 error codes answered, in order.
        self.errors: list[str] = []
        #: The Authorization headers and forms received at /token (newest last).
        self.token_requests: list[tuple[str | None, dict[str, str]]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.rotate()

    # -- configuration -------------------------------------------------------------------------

    def add_client(self, client_id: str, secret: str) -> None:
        """Register a client_credentials client."""
        self._clients[client_id] = secret

    def add_assertion_key(self, issuer: str, public_key: Any) -> None:
        """Register the public key (RSA or P-256) that signs ``issuer``'s assertions."""
        self._assertion_keys[issuer] = public_key

    def rotate(self) -> str:
        """A new signing key with a new ``kid``; the old key leaves the JWKS. Returns the kid."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        kid = uuid.uuid4().hex[:12]
        with self._lock:
            self._keys = [(kid, key)]
        return kid

    @property
    def kid(self) -> str:
        """The ``kid`` tokens are signed with now."""
        return self._keys[-1][0]

    def fail_next(self, count: int, status: int = 503) -> None:
        """Answer the next ``count`` token requests with ``status``."""
        with self._lock:
            self._failures.extend([status] * count)

    # -- addresses -----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        scheme = "https" if self._tls is not None else "http"
        return f"{scheme}://{host!s}:{port}"

    @property
    def token_url(self) -> str:
        return self.base_url + "/token"

    @property
    def jwks_url(self) -> str:
        return self.base_url + "/jwks"

    @property
    def issuer(self) -> str:
        return self._issuer or self.base_url

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> IdentityProvider:
        idp = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_GET(self) -> None:
                idp.requests[self.path] += 1
                if self.path == "/jwks":
                    self._send(200, idp.jwks())
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self) -> None:
                idp.requests[self.path] += 1
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode()
                if self.path != "/token":
                    self._send(404, {"error": "not_found"})
                    return
                form = dict(urllib.parse.parse_qsl(body, keep_blank_values=True))
                try:
                    self._send(200, idp.token(self.headers.get("Authorization"), form))
                except _OAuthError as exc:
                    idp.errors.append(exc.error)
                    self._send(
                        exc.status, {"error": exc.error, "error_description": exc.description}
                    )

            def _send(self, status: int, doc: dict[str, Any]) -> None:
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

        self._server = _Server(("127.0.0.1", 0), Handler)
        if self._tls is not None:
            self._server.socket = self._tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="test-idp", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> IdentityProvider:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- endpoints -----------------------------------------------------------------------------

    def jwks(self) -> dict[str, Any]:
        with self._lock:
            keys = list(self._keys)
        out = []
        for kid, key in keys:
            numbers = key.public_key().public_numbers()
            out.append(
                {
                    "kty": "RSA",
                    "use": "sig",
                    "alg": "RS256",
                    "kid": kid,
                    "n": _int_b64(numbers.n),
                    "e": _int_b64(numbers.e),
                }
            )
        return {"keys": out}

    def token(self, authorization: str | None, form: dict[str, str]) -> dict[str, Any]:
        """The token endpoint's answer; raises ``_OAuthError`` for an error answer."""
        self.token_requests.append((authorization, form))
        if self.delay:
            time.sleep(self.delay)
        with self._lock:
            status = self._failures.pop(0) if self._failures else None
        if status is not None:
            raise _OAuthError(status, "temporarily_unavailable", "injected failure")
        grant = form.get("grant_type")
        if grant == "client_credentials":
            subject = self._client_credentials(authorization, form)
        elif grant == JWT_BEARER:
            subject = self._jwt_bearer(form.get("assertion", ""))
        else:
            raise _OAuthError(400, "unsupported_grant_type", f"grant_type {grant!r}")
        token = self.issue(subject, scope=form.get("scope"))
        return {"access_token": token, "token_type": "Bearer", "expires_in": int(self.lifetime)}

    def issue(self, subject: str, scope: str | None = None) -> str:
        """A token for ``subject`` as the token endpoint makes them (signed with the current
        key, :attr:`audience`, :attr:`lifetime` and :attr:`clock_offset` applied)."""
        now = time.time() + self.clock_offset
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": subject,
            "aud": self.audience,
            "iat": int(now),
            "exp": int(now + self.lifetime),
            "jti": uuid.uuid4().hex,
        }
        if scope:
            claims["scope"] = scope
        with self._lock:
            kid, key = self._keys[-1]
        token = sign_jwt(key, claims, kid)
        self.issued.append(claims)
        return token

    def _client_credentials(self, authorization: str | None, form: dict[str, str]) -> str:
        if authorization and authorization.startswith("Basic "):
            try:
                decoded = base64.b64decode(authorization[6:]).decode()
            except ValueError:
                raise _OAuthError(400, "invalid_request", "bad Basic header") from None
            client_id, _, secret = decoded.partition(":")
            if self.basic_urlencoded:
                client_id = urllib.parse.unquote_plus(client_id)
                secret = urllib.parse.unquote_plus(secret)
        else:
            client_id = form.get("client_id", "")
            secret = form.get("client_secret", "")
        if not client_id or self._clients.get(client_id) != secret:
            raise _OAuthError(401, "invalid_client", "Client authentication failed")
        return client_id

    def _jwt_bearer(self, assertion: str) -> str:
        try:
            header_b64, payload_b64, signature_b64 = assertion.split(".")
            header = json.loads(_unb64url(header_b64))
            claims = json.loads(_unb64url(payload_b64))
            signature = _unb64url(signature_b64)
        except ValueError:
            raise _OAuthError(400, "invalid_grant", "the assertion is not a JWT") from None
        key = self._assertion_keys.get(claims.get("iss", ""))
        if key is None:
            raise _OAuthError(400, "invalid_grant", f"unknown issuer {claims.get('iss')!r}")
        signed = f"{header_b64}.{payload_b64}".encode()
        try:
            if header.get("alg") == "RS256" and isinstance(key, rsa.RSAPublicKey):
                key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
            elif header.get("alg") == "ES256" and isinstance(key, ec.EllipticCurvePublicKey):
                if len(signature) != 64:
                    raise InvalidSignature
                r = int.from_bytes(signature[:32], "big")
                s = int.from_bytes(signature[32:], "big")
                key.verify(encode_dss_signature(r, s), signed, ec.ECDSA(hashes.SHA256()))
            else:
                raise _OAuthError(400, "invalid_grant", f"alg {header.get('alg')!r} not accepted")
        except InvalidSignature:
            raise _OAuthError(400, "invalid_grant", "bad assertion signature") from None
        now = time.time()
        if claims.get("aud") not in (self.token_url, self.issuer):
            raise _OAuthError(400, "invalid_grant", f"assertion aud {claims.get('aud')!r}")
        if not isinstance(claims.get("exp"), int) or claims["exp"] < now:
            raise _OAuthError(400, "invalid_grant", "assertion expired")
        if isinstance(claims.get("nbf"), int) and claims["nbf"] > now + 5:
            raise _OAuthError(400, "invalid_grant", "assertion not yet valid")
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise _OAuthError(400, "invalid_grant", "assertion without sub")
        return subject
