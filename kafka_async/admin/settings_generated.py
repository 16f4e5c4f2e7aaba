# Generated from kafka_async/admin/settings.py by `make generate`
# (tools/generate_settings.py): do not edit.
"""The admin client settings, typed: ``AdminSettings`` (the keyword arguments of
AdminClient) and ``AdminFields`` (the fields of its config, checked values).

Both come from ``SCHEMA`` in ``kafka_async.admin.settings``, which says
what each setting means; see :mod:`kafka_async.settings`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..net.config import ClientConfig
from ..net.settings_generated import ClientSettings
from .settings import SCHEMA as _SCHEMA


class AdminSettings(ClientSettings, total=False):
    """The keyword arguments of AdminClient, typed for editors and mypy.

    Values are checked again at run time (``ConfigError`` naming the setting).
    """

    #: deadline of an admin call, retries included, when it passes no timeout_ms (default: 60000)
    default_api_timeout_ms: int
    #: push the metrics a broker's client-metrics subscription asks for (KIP-714) (default: True)
    enable_metrics_push: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class AdminFields:
    """The admin client settings as the config holds them: each checked, defaults
    filled in."""

    client: ClientConfig
    default_api_timeout_ms: int = 60000
    enable_metrics_push: bool = True

    def __post_init__(self) -> None:
        # Each field checked against its declaration (the config subclass adds the
        # relations between fields).
        _SCHEMA.validate(self)
