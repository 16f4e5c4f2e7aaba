"""``AdminConfig``: the checked settings of :class:`~kafka_async.admin.AdminClient`.

The shared connection settings go to :class:`~kafka_async.net.config.ClientConfig` (with
``client_id`` defaulting to ``"kafka-async-admin"``); the admin client's own are declared in
:mod:`kafka_async.admin.settings`. ``AdminSettings`` types ``AdminClient``'s keyword
arguments.
"""

from __future__ import annotations

from typing import Any

from ..net.config import ClientConfig
from ..net.settings import SCHEMA as CLIENT_SCHEMA
from .settings import SCHEMA, SHARED_DEFAULTS
from .settings_generated import AdminFields, AdminSettings

__all__ = ["AdminConfig", "AdminSettings"]


class AdminConfig(AdminFields):
    """Every admin client setting, checked."""

    __slots__ = ()

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> AdminConfig:
        """Validate keyword arguments (shared ones go to ``ClientConfig``)."""
        own, shared = SCHEMA.split(kwargs, CLIENT_SCHEMA)
        for name, value in SHARED_DEFAULTS.items():
            if shared.get(name) is None:
                shared[name] = value
        return cls(client=ClientConfig(**shared), **own)
