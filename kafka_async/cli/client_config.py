"""Connection settings for the command line: ``--command-config FILE`` and ``-X NAME=VALUE``.

A secured cluster needs more than ``--bootstrap-servers``: a security protocol, a SASL
mechanism and its credentials, a CA file. The command line takes them the way the tools
users already have do:

* ``--command-config FILE``: a Java properties file as Kafka's own tools read it
  (``kafka-topics.sh --command-config``), so the ``client.properties`` a team already keeps
  works unchanged: Java names (``security.protocol``, ``sasl.mechanism``,
  ``ssl.truststore.location`` for a PEM file), librdkafka names (``sasl.mechanisms``,
  ``sasl.username``, ``ssl.ca.location``) and this library's own names
  (``sasl_plain_username``) are all accepted. ``sasl.jaas.config`` is read for the options
  the login modules carry (user name and password, keytab and principal, OIDC client id and
  secret).
* ``-X NAME=VALUE`` (as kcat does), repeatable, applied after the file.

Only the connection and security settings every client shares are accepted (see
``docs/reference/settings.md``); a key Kafka's tools know but this client does not use
(``ssl.truststore.type``) is reported on stderr and ignored, as the Java tools warn about
unused keys. A value of the wrong type is a ``ConfigError`` naming the key and the file.
Everything here is pure: the caller reads the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..net.settings import SCHEMA
from ..settings.spec import Bool, Choice, Int, Setting

__all__ = ["ClientOverrides", "from_assignments", "merge", "parse_properties", "to_settings"]

#: librdkafka and Java names that the settings' ``java`` field does not already name.
_ALIASES: dict[str, str] = {
    "sasl.mechanisms": "sasl_mechanism",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "ssl.keystore.location": "ssl_certfile",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
}

#: JAAS login-module options, by module (the last part of its class name), to settings.
_JAAS_OPTIONS: dict[str, dict[str, str]] = {
    "PlainLoginModule": {"username": "sasl_plain_username", "password": "sasl_plain_password"},
    "ScramLoginModule": {
        "username": "sasl_plain_username",
        "password": "sasl_plain_password",
        "tokenauth": "sasl_scram_token_auth",
    },
    "Krb5LoginModule": {
        "keyTab": "sasl_kerberos_keytab",
        "principal": "sasl_kerberos_principal",
    },
    "OAuthBearerLoginModule": {
        "clientId": "sasl_oauthbearer_client_id",
        "clientSecret": "sasl_oauthbearer_client_secret",
        "scope": "sasl_oauthbearer_scope",
    },
    "IAMLoginModule": {
        "awsProfileName": "sasl_aws_profile",
        "awsRoleArn": "sasl_aws_role_arn",
        "awsRoleSessionName": "sasl_aws_role_session_name",
        "awsStsRegion": "sasl_aws_sts_region",
    },
}

#: JAAS options that only steer Java's login module; they carry nothing this client needs.
_JAAS_IGNORED = frozenset(
    {"useKeyTab", "storeKey", "useTicketCache", "debug", "doNotPrompt", "refreshKrb5Config"}
)

_JAAS_RE = re.compile(r"^\s*(?P<module>[\w.$]+)\s+(?:required|requisite|sufficient|optional)\b")
_JAAS_OPTION_RE = re.compile(
    r'(?P<key>[\w.]+)\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>[^\s;"]+))'
)


@dataclass
class ClientOverrides:
    """Settings read from a file or ``-X``, and the keys that were ignored."""

    settings: dict[str, Any] = field(default_factory=dict, repr=False)
    #: Keys this client does not use, for one warning line each.
    ignored: list[str] = field(default_factory=list)


def parse_properties(text: str) -> dict[str, str]:
    """A Java properties file's ``key=value`` pairs (``#``/``!`` comments, ``:`` separators,
    backslash line continuations and escapes, as ``java.util.Properties`` reads them)."""
    props: dict[str, str] = {}
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip() if pending else raw.strip()
        if not pending and (not line or line[0] in "#!"):
            continue
        # An odd number of trailing backslashes continues the line.
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending += line[:-1]
            continue
        logical.append(pending + line)
        pending = ""
    if pending:
        logical.append(pending)
    for line in logical:
        match = re.match(r"((?:[^=:\s\\]|\\.)+)\s*[=:\s]\s*(.*)$", line)
        if match is None:
            props[_unescape(line.strip())] = ""
            continue
        props[_unescape(match.group(1))] = _unescape(match.group(2).rstrip())
    return props


def _unescape(text: str) -> str:
    escapes = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(1)), text)


def from_assignments(items: Iterable[str]) -> dict[str, str]:
    """``-X NAME=VALUE`` arguments as a mapping; a missing ``=`` is a ``ConfigError``."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"-X: expected NAME=VALUE, got {item!r}")
        out[name.strip()] = value
    return out


def _java_names() -> dict[str, str]:
    names: dict[str, str] = {}
    for setting in SCHEMA.settings:
        for part in re.split(r"\s*[,/]\s*", setting.java_name):
            key = part.split(" (")[0].strip()
            if key and "=" not in key and not key.endswith(".class"):
                names.setdefault(key, setting.name)
    for key, name in _ALIASES.items():
        if name in SCHEMA.by_name:
            names.setdefault(key, name)
    return names


def _convert(setting: Setting, key: str, value: str, source: str) -> Any:
    kind = setting.kind
    if isinstance(kind, Int):
        try:
            return int(value.strip())
        except ValueError:
            raise ConfigError(f"{source}: {key}: expected an integer, got {value!r}") from None
    if isinstance(kind, Bool):
        lowered = value.strip().lower()
        if lowered not in ("true", "false"):
            raise ConfigError(f"{source}: {key}: expected true or false, got {value!r}")
        return lowered == "true"
    if isinstance(kind, Choice) or "str" in kind.annotation or "str" in kind.stored:
        return value
    raise ConfigError(f"{source}: {key}: {setting.name} cannot be set from text")


def _jaas(value: str, source: str) -> dict[str, str]:
    """The settings carried by a ``sasl.jaas.config`` value (one login module)."""
    match = _JAAS_RE.match(value)
    if match is None:
        raise ConfigError(
            f"{source}: sasl.jaas.config: expected '<LoginModule class> required "
            f'key="value" ...;\', got something else'
        )
    module = match.group("module").rsplit(".", 1)[-1]
    options = _JAAS_OPTIONS.get(module)
    if options is None:
        raise ConfigError(
            f"{source}: sasl.jaas.config: login module {module} is not understood "
            f"(known: {', '.join(sorted(_JAAS_OPTIONS))})"
        )
    out: dict[str, str] = {}
    for opt in _JAAS_OPTION_RE.finditer(value[match.end() :]):
        key = opt.group("key")
        text = opt.group("quoted")
        text = _unescape(text) if text is not None else opt.group("bare")
        if key in options and options[key] in SCHEMA.by_name:
            out[options[key]] = text
        elif key not in _JAAS_IGNORED and not key.startswith("unsecuredLogin"):
            raise ConfigError(
                f"{source}: sasl.jaas.config: option {key} of {module} is not supported here"
            )
    return out


def to_settings(props: Mapping[str, str], *, source: str) -> ClientOverrides:
    """Client settings for ``props`` (keys in Java, librdkafka or this library's spelling).

    ``source`` names the file (or ``-X``) in error messages; values never appear in them.
    """
    names = _java_names()
    result = ClientOverrides()
    raw: dict[str, tuple[str, str]] = {}
    for key, value in props.items():
        if key == "sasl.jaas.config":
            for option, text in _jaas(value, source).items():
                raw[option] = (f"sasl.jaas.config ({option})", text)
            continue
        if key == "enable.ssl.certificate.verification":
            raw["ssl_insecure_skip_verify"] = (key, "false" if value.strip() == "true" else "true")
            continue
        name: str | None = key if key in SCHEMA.by_name else names.get(key)
        if name is None:
            result.ignored.append(key)
            continue
        raw[name] = (key, value)
    for name, (key, value) in raw.items():
        result.settings[name] = _convert(SCHEMA.by_name[name], key, value, source)
    return result


def merge(*parts: ClientOverrides) -> ClientOverrides:
    """Later parts win (``-X`` over the file)."""
    out = ClientOverrides()
    for part in parts:
        out.settings.update(part.settings)
        out.ignored.extend(k for k in part.ignored if k not in out.ignored)
    return out
