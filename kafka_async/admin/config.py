"""``AdminSettings``: the typed keyword arguments of :class:`~kafka_async.admin.AdminClient`.

The admin client has no config class of its own: it validates the shared settings with
:class:`~kafka_async.net.config.ClientConfig` and checks ``default_api_timeout_ms`` itself.
"""

from __future__ import annotations

from ..net.config import ClientSettings

__all__ = ["AdminSettings"]


class AdminSettings(ClientSettings, total=False):
    """The keyword arguments of ``AdminClient``, typed for editors and mypy.

    The shared connection/security settings of :class:`ClientSettings` (``client_id``
    defaults to ``"kafka-async-admin"`` here) plus ``default_api_timeout_ms``: the deadline of
    each admin call, retries included, when the call passes no ``timeout_ms`` (60 000).
    """

    default_api_timeout_ms: int
