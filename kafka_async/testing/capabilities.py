"""What a broker advertises, as we see it and as librdkafka sees it.

Tests ask the broker what it supports (ApiVersions) instead of naming a broker: a test marked
``@pytest.mark.requires_api("DeleteRecords")`` runs wherever the broker advertises the API and
is skipped elsewhere. A skip for a broker gap must show that the gap is the broker's, not ours:
:func:`librdkafka_api_versions` asks the same broker through librdkafka (confluent-kafka) and
reads the ApiVersions answer from its protocol debug log, so the skip reason can quote both.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..protocol.apis import ALL_APIS
from . import _wire

__all__ = [
    "ApiGap",
    "ApiRange",
    "advertised_apis",
    "api_key_of",
    "describe_gap",
    "librdkafka_api_versions",
]

#: ``(min_version, max_version)`` of one API key.
ApiRange = tuple[int, int]

_RDKAFKA_LINE = re.compile(r"ApiKey .*?\((\d+)\) Versions (\d+)\.\.(\d+)")


def api_key_of(api: str | int) -> int:
    """The key of an API named like Kafka names it (``"DeleteRecords"``) or given as a key."""
    if isinstance(api, int):
        return api
    for definition in ALL_APIS:
        if definition.name == api:
            return definition.key
    raise ValueError(f"unknown API name {api!r}")


def advertised_apis(bootstrap_servers: str, *, timeout: float = 10.0) -> dict[int, ApiRange]:
    """The API keys and version ranges the first broker of ``bootstrap_servers`` advertises."""
    from ..protocol.apis import API_VERSIONS
    from ..protocol.apis.api_versions import ApiVersionsRequest

    resp = _wire.request(
        bootstrap_servers,
        API_VERSIONS,
        ApiVersionsRequest(),
        version=_wire.PROBE_VERSION,
        timeout=timeout,
    )
    return {int(e.api_key): (int(e.min_version), int(e.max_version)) for e in resp.api_keys}


def librdkafka_api_versions(
    bootstrap_servers: str, *, timeout: float = 10.0
) -> dict[int, ApiRange] | None:
    """The ApiVersions answer librdkafka got from the broker; None without confluent-kafka.

    librdkafka logs each advertised key at ``debug=feature`` ("ApiKey Name (N) Versions
    a..b"); this connects an admin client, waits for those lines and parses them.
    """
    try:
        from confluent_kafka.admin import AdminClient
    except ImportError:
        return None
    seen: dict[int, ApiRange] = {}
    done = threading.Event()

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            match = _RDKAFKA_LINE.search(record.getMessage())
            if match:
                seen[int(match.group(1))] = (int(match.group(2)), int(match.group(3)))
                done.set()

    logger = logging.getLogger(f"kafka_async.testing.rdkafka.{id(seen)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    handler = _Collect()
    logger.addHandler(handler)
    try:
        settings: dict[str, Any] = {
            "bootstrap.servers": bootstrap_servers,
            "debug": "feature",
            "logger": logger,
        }
        admin = AdminClient(settings)
        admin.list_topics(timeout=timeout)
        # The lines arrive in a burst; poll until it has been quiet for a moment.
        deadline = time.monotonic() + timeout
        last = -1
        while time.monotonic() < deadline and (not done.is_set() or len(seen) != last):
            last = len(seen)
            admin.poll(0.2)
    finally:
        logger.removeHandler(handler)
    return seen or None


@dataclass(frozen=True)
class ApiGap:
    """A requirement a broker does not meet, with what each client saw."""

    api: str
    key: int
    min_version: int
    ours: ApiRange | None
    librdkafka: ApiRange | str | None

    def __str__(self) -> str:
        def show(seen: ApiRange | str | None) -> str:
            if isinstance(seen, str):
                return seen
            return "not advertised" if seen is None else f"v{seen[0]}-v{seen[1]}"

        return (
            f"the broker does not support {self.api} (key {self.key}) v{self.min_version}+: "
            f"ApiVersions to kafka_async: {show(self.ours)}; "
            f"to librdkafka: {show(self.librdkafka)}"
        )


def describe_gap(
    bootstrap_servers: str,
    api: str | int,
    min_version: int,
    ours: Mapping[int, ApiRange],
) -> ApiGap | None:
    """None when ``api`` v``min_version``+ is advertised; else the gap with librdkafka's view."""
    key = api_key_of(api)
    name = (
        api
        if isinstance(api, str)
        else next((a.name for a in ALL_APIS if a.key == key), f"API {key}")
    )
    have = ours.get(key)
    if have is not None and have[1] >= min_version:
        return None
    seen = _librdkafka_view(bootstrap_servers)
    theirs: ApiRange | str | None = seen if isinstance(seen, str) else (seen or {}).get(key)
    return ApiGap(name, key, min_version, have, theirs)


#: librdkafka's ApiVersions view per bootstrap address, asked once per process: a broker's
#: advertised versions do not change while it runs, and each probe costs a connection and a
#: quiet period of librdkafka's log (a whole run of skipped tests asked it hundreds of times).
_LIBRDKAFKA_VIEWS: dict[str, dict[int, ApiRange] | str | None] = {}


def _librdkafka_view(bootstrap_servers: str) -> dict[int, ApiRange] | str | None:
    if bootstrap_servers not in _LIBRDKAFKA_VIEWS:
        try:
            view: dict[int, ApiRange] | str | None = librdkafka_api_versions(bootstrap_servers)
        except Exception as exc:  # evidence is best effort; say why it is missing
            view = f"not asked ({type(exc).__name__}: {exc})"
        _LIBRDKAFKA_VIEWS[bootstrap_servers] = view
    return _LIBRDKAFKA_VIEWS[bootstrap_servers]
