"""aiokafka's connection arguments as kafka_async settings: one function shared by the
drop-in's producer, consumer and admin client."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any


def client_settings(
    *,
    bootstrap_servers: str | Sequence[str],
    client_id: str | None,
    metadata_max_age_ms: int,
    request_timeout_ms: int,
    retry_backoff_ms: int,
    security_protocol: str,
    ssl_context: Any,
    connections_max_idle_ms: int,
    sasl_mechanism: str,
    sasl_plain_username: str | None,
    sasl_plain_password: str | None,
    sasl_oauth_token_provider: Any,
    sasl_kerberos_service_name: str = "kafka",
    sasl_kerberos_domain_name: str | None = None,
    api_version: object,
    loop: object,
) -> dict[str, Any]:
    """aiokafka's connection arguments as kafka_async settings (shared by every client)."""
    if loop is not None:
        warnings.warn(
            "the loop argument has no effect (the client runs on the running loop)",
            DeprecationWarning,
            stacklevel=3,
        )
    # api_version: kafka_async negotiates versions per connection, as aiokafka 0.14 does; the
    # value is accepted and not used.
    del api_version
    settings: dict[str, Any] = {
        "bootstrap_servers": bootstrap_servers,
        "metadata_max_age_ms": metadata_max_age_ms,
        "request_timeout_ms": request_timeout_ms,
        "retry_backoff_ms": retry_backoff_ms,
        "security_protocol": security_protocol,
        "connections_max_idle_ms": connections_max_idle_ms,
    }
    if client_id is not None:
        settings["client_id"] = client_id
    if ssl_context is not None:
        settings["ssl_context"] = ssl_context
    if security_protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
        settings["sasl_mechanism"] = sasl_mechanism
        if sasl_mechanism == "GSSAPI":
            # aiokafka's two Kerberos arguments; the login itself is kafka_async's (the
            # ticket cache by default, as aiokafka's gssapi package does).
            settings["sasl_kerberos_service_name"] = sasl_kerberos_service_name
            if sasl_kerberos_domain_name is not None:
                settings["sasl_kerberos_domain_name"] = sasl_kerberos_domain_name
        if sasl_plain_username is not None:
            settings["sasl_plain_username"] = sasl_plain_username
        if sasl_plain_password is not None:
            settings["sasl_plain_password"] = sasl_plain_password
        if sasl_oauth_token_provider is not None:
            settings["sasl_oauth_token_provider"] = sasl_oauth_token_provider
    return settings
