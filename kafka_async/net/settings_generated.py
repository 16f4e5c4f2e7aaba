# Generated from kafka_async/net/settings.py by `make generate`
# (tools/generate_settings.py): do not edit.
"""The connection and security settings, typed: ``ClientSettings`` (the keyword arguments of
every client) and ``ClientFields`` (the fields of its config, checked values).

Both come from ``SCHEMA`` in ``kafka_async.net.settings``, which says
what each setting means; see :mod:`kafka_async.settings`.
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from . import sasl
from .settings import SCHEMA as _SCHEMA

SaslMechanismName = Literal[
    "AWS_MSK_IAM", "GSSAPI", "OAUTHBEARER", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"
]
MetadataRecoveryStrategy = Literal["rebootstrap", "none"]
SecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
OAuthBearerMethod = Literal["default", "oidc"]
OAuthBearerGrantType = Literal["client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"]
OAuthBearerAssertionAlgorithm = Literal["RS256", "ES256"]


class ClientSettings(TypedDict, total=False):
    """The keyword arguments of every client, typed for editors and mypy.

    Values are checked again at run time (``ConfigError`` naming the setting).
    """

    #: brokers to bootstrap from: 'host:port,...' or a list; no port means 9092, IPv6 in brackets
    #: (default: "localhost:9092")
    bootstrap_servers: str | Sequence[str]
    #: sent with every request (broker logs, quotas); printable ASCII (default: "kafka-async")
    client_id: str
    #: deadline of one request, ApiVersions and the SASL exchange included (default: 30000)
    request_timeout_ms: int
    #: close a connection idle this long (default: 540000)
    connections_max_idle_ms: int
    #: refresh cluster metadata at least this often (default: 300000)
    metadata_max_age_ms: int
    #: wait before retrying a failed request (default: 100)
    retry_backoff_ms: int
    #: first wait before reconnecting to a broker (doubles per failure) (default: 50)
    reconnect_backoff_ms: int
    #: longest wait between reconnects (>= reconnect_backoff_ms) (default: 1000)
    reconnect_backoff_max_ms: int
    #: deadline of the TCP connect and TLS handshake (default: 10000)
    connect_timeout_ms: int
    #: 'rebootstrap': when no known broker gives metadata, go back to bootstrap_servers (KIP-899);
    #: 'none': keep retrying the known brokers (default: "rebootstrap")
    metadata_recovery_strategy: MetadataRecoveryStrategy
    #: rebootstrap after this long without metadata from any known broker (KIP-1102) (default:
    #: 300000)
    metadata_recovery_rebootstrap_trigger_ms: int
    #: a response frame announcing more bytes is refused before it is read (default: 100 MiB)
    max_response_size: int
    #: 'auto' or the oldest broker expected ('2.8.0'); versions are negotiated per connection either
    #: way (default: "auto")
    api_version: str
    #: PLAINTEXT, SSL (TLS), SASL_PLAINTEXT or SASL_SSL (default: "PLAINTEXT")
    security_protocol: SecurityProtocol
    #: a TLS context you configured (instead of the ssl_* files) (default: None)
    ssl_context: ssl.SSLContext | None
    #: CA bundle (PEM) to verify brokers with; None: the system's CAs (default: None)
    ssl_cafile: str | None
    #: client certificate chain (PEM) for mutual TLS (default: None)
    ssl_certfile: str | None
    #: private key (PEM) of the client certificate, if not in ssl_certfile (default: None)
    ssl_keyfile: str | None
    #: password of ssl_keyfile (default: None)
    ssl_password: str | None
    #: accept any certificate for any host name (test brokers only; logs a warning) (default: False)
    ssl_insecure_skip_verify: bool
    #: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER (default: "PLAIN")
    sasl_mechanism: SaslMechanismName
    #: user name for PLAIN and SCRAM (default: None)
    sasl_plain_username: str | None
    #: password for PLAIN and SCRAM (default: None)
    sasl_plain_password: str | None
    #: SCRAM: log in with a delegation token (user name: token id, password: base64 HMAC) (default:
    #: False)
    sasl_scram_token_auth: bool
    #: OAUTHBEARER: an object with async token() (asked at every authentication) (default: None)
    sasl_oauth_token_provider: sasl.TokenProvider | None
    #: GSSAPI: the broker's Kerberos service name (service/host@REALM) (default: "kafka")
    sasl_kerberos_service_name: str
    #: GSSAPI: host name for the broker's principal instead of the broker's own (default: None)
    sasl_kerberos_domain_name: str | None
    #: GSSAPI: the client's principal (client@REALM); None: the keytab's or cache's (default: None)
    sasl_kerberos_principal: str | None
    #: GSSAPI: keytab file to log in with (tickets renewed from it as needed) (default: None)
    sasl_kerberos_keytab: str | None
    #: GSSAPI: ticket cache ('FILE:/path'); None: KRB5CCNAME's, or a private one with a keytab
    #: (default: None)
    sasl_kerberos_ticket_cache: str | None
    #: OAUTHBEARER: 'default' (sasl_oauth_token_provider gives tokens) or 'oidc' (fetched from
    #: sasl_oauthbearer_token_endpoint_url) (default: "default")
    sasl_oauthbearer_method: OAuthBearerMethod
    #: OIDC: the identity provider's token endpoint (http:// or https://) (default: None)
    sasl_oauthbearer_token_endpoint_url: str | None
    #: OIDC: 'client_credentials' (KIP-768) or 'urn:ietf:params:oauth:grant-type:jwt-bearer'
    #: (KIP-1139) (default: "client_credentials")
    sasl_oauthbearer_grant_type: OAuthBearerGrantType
    #: OIDC client_credentials: the client id (default: None)
    sasl_oauthbearer_client_id: str | None
    #: OIDC client_credentials: the client secret (default: None)
    sasl_oauthbearer_client_secret: str | None
    #: OIDC: the scope asked for (sent only when set) (default: None)
    sasl_oauthbearer_scope: str | None
    #: OIDC: SASL extensions sent with the token (KIP-342), 'k=v,k2=v2' or a dict (default: None)
    sasl_oauthbearer_extensions: str | dict[str, str] | None
    #: OIDC client_credentials: form-urlencode id and secret in the Basic header (RFC 6749 2.3.1)
    #: (default: False)
    sasl_oauthbearer_header_urlencode: bool
    #: OIDC jwt-bearer: how the assertion is signed (default: "RS256")
    sasl_oauthbearer_assertion_algorithm: OAuthBearerAssertionAlgorithm
    #: OIDC jwt-bearer: PEM private key (PKCS#8 or traditional) signing the assertion; read at every
    #: fetch (default: None)
    sasl_oauthbearer_assertion_private_key_file: str | None
    #: OIDC jwt-bearer: the private key itself, PEM text (instead of the file) (default: None)
    sasl_oauthbearer_assertion_private_key_pem: str | None
    #: OIDC jwt-bearer: passphrase of an encrypted private key (default: None)
    sasl_oauthbearer_assertion_private_key_passphrase: str | None
    #: OIDC jwt-bearer: a file holding a ready-made assertion (read at every fetch; the other
    #: assertion settings are then unused) (default: None)
    sasl_oauthbearer_assertion_file: str | None
    #: OIDC jwt-bearer: the assertion's aud claim (default: None)
    sasl_oauthbearer_assertion_claim_aud: str | None
    #: OIDC jwt-bearer: the assertion's iss claim (default: None)
    sasl_oauthbearer_assertion_claim_iss: str | None
    #: OIDC jwt-bearer: the assertion's sub claim (default: None)
    sasl_oauthbearer_assertion_claim_sub: str | None
    #: OIDC jwt-bearer: the assertion's exp, seconds after now (default: 300)
    sasl_oauthbearer_assertion_claim_exp_seconds: int
    #: OIDC jwt-bearer: the assertion's nbf, seconds before now (default: 60)
    sasl_oauthbearer_assertion_claim_nbf_seconds: int
    #: OIDC jwt-bearer: give the assertion a random jti claim (default: False)
    sasl_oauthbearer_assertion_claim_jti_include: bool
    #: OIDC: CA bundle (PEM) verifying an https:// token endpoint; None: the system's CAs (default:
    #: None)
    https_ca_location: str | None
    #: OIDC: deadline of connecting to the token endpoint (default: 10000)
    sasl_login_connect_timeout_ms: int
    #: OIDC: deadline of each read of the token endpoint's answer (default: 10000)
    sasl_login_read_timeout_ms: int
    #: OIDC: first wait before asking the token endpoint again (doubles per attempt) (default: 100)
    sasl_login_retry_backoff_ms: int
    #: OIDC: longest wait between attempts, and how long retries go on (default: 10000)
    sasl_login_retry_backoff_max_ms: int
    #: AWS_MSK_IAM: the cluster's AWS region; None: read from the broker host name
    #: (...kafka.<region>.amazonaws.com), else the configured one (AWS_REGION, profile) (default:
    #: None)
    sasl_aws_region: str | None
    #: AWS_MSK_IAM: the shared config/credentials profile to take credentials from; None: the
    #: default chain (default: None)
    sasl_aws_profile: str | None
    #: AWS_MSK_IAM: an IAM role to assume through STS with the resolved credentials (default: None)
    sasl_aws_role_arn: str | None
    #: AWS_MSK_IAM: the session name when assuming sasl_aws_role_arn; None: kafka-async-<epoch ms>
    #: (default: None)
    sasl_aws_role_session_name: str | None
    #: AWS_MSK_IAM: the STS region for assuming sasl_aws_role_arn; None: the cluster's region
    #: (default: None)
    sasl_aws_sts_region: str | None
    #: AWS_MSK_IAM: an explicit access key id (with sasl_aws_secret_access_key) instead of the AWS
    #: credential chain (default: None)
    sasl_aws_access_key_id: str | None
    #: AWS_MSK_IAM: the secret of sasl_aws_access_key_id (default: None)
    sasl_aws_secret_access_key: str | None
    #: AWS_MSK_IAM: the session token of temporary explicit credentials (default: None)
    sasl_aws_session_token: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientFields:
    """The connection and security settings as the config holds them: each checked, defaults
    filled in."""

    bootstrap_servers: str | Sequence[str] = "localhost:9092"
    client_id: str = "kafka-async"
    request_timeout_ms: int = 30000
    connections_max_idle_ms: int = 540000
    metadata_max_age_ms: int = 300000
    retry_backoff_ms: int = 100
    reconnect_backoff_ms: int = 50
    reconnect_backoff_max_ms: int = 1000
    connect_timeout_ms: int = 10000
    metadata_recovery_strategy: MetadataRecoveryStrategy = "rebootstrap"
    metadata_recovery_rebootstrap_trigger_ms: int = 300000
    max_response_size: int = 104857600
    api_version: str = "auto"
    security_protocol: SecurityProtocol = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_password: str | None = field(default=None, repr=False)
    ssl_insecure_skip_verify: bool = False
    sasl_mechanism: str = "PLAIN"
    sasl_plain_username: str | None = None
    sasl_plain_password: str | None = field(default=None, repr=False)
    sasl_scram_token_auth: bool = False
    sasl_oauth_token_provider: Any = field(default=None, repr=False)
    sasl_kerberos_service_name: str = "kafka"
    sasl_kerberos_domain_name: str | None = None
    sasl_kerberos_principal: str | None = None
    sasl_kerberos_keytab: str | None = None
    sasl_kerberos_ticket_cache: str | None = None
    sasl_oauthbearer_method: OAuthBearerMethod = "default"
    sasl_oauthbearer_token_endpoint_url: str | None = None
    sasl_oauthbearer_grant_type: OAuthBearerGrantType = "client_credentials"
    sasl_oauthbearer_client_id: str | None = None
    sasl_oauthbearer_client_secret: str | None = field(default=None, repr=False)
    sasl_oauthbearer_scope: str | None = None
    sasl_oauthbearer_extensions: tuple[tuple[str, str], ...] | None = None
    sasl_oauthbearer_header_urlencode: bool = False
    sasl_oauthbearer_assertion_algorithm: OAuthBearerAssertionAlgorithm = "RS256"
    sasl_oauthbearer_assertion_private_key_file: str | None = None
    sasl_oauthbearer_assertion_private_key_pem: str | None = field(default=None, repr=False)
    sasl_oauthbearer_assertion_private_key_passphrase: str | None = field(default=None, repr=False)
    sasl_oauthbearer_assertion_file: str | None = None
    sasl_oauthbearer_assertion_claim_aud: str | None = None
    sasl_oauthbearer_assertion_claim_iss: str | None = None
    sasl_oauthbearer_assertion_claim_sub: str | None = None
    sasl_oauthbearer_assertion_claim_exp_seconds: int = 300
    sasl_oauthbearer_assertion_claim_nbf_seconds: int = 60
    sasl_oauthbearer_assertion_claim_jti_include: bool = False
    https_ca_location: str | None = None
    sasl_login_connect_timeout_ms: int = 10000
    sasl_login_read_timeout_ms: int = 10000
    sasl_login_retry_backoff_ms: int = 100
    sasl_login_retry_backoff_max_ms: int = 10000
    sasl_aws_region: str | None = None
    sasl_aws_profile: str | None = None
    sasl_aws_role_arn: str | None = None
    sasl_aws_role_session_name: str | None = None
    sasl_aws_sts_region: str | None = None
    sasl_aws_access_key_id: str | None = None
    sasl_aws_secret_access_key: str | None = field(default=None, repr=False)
    sasl_aws_session_token: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # Each field checked against its declaration (the config subclass adds the
        # relations between fields).
        _SCHEMA.validate(self)
