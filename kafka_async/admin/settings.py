"""The admin client's own settings, each declared once (the shared connection settings are
in :mod:`kafka_async.net.settings`).

``SCHEMA`` is the source: :class:`~kafka_async.admin.config.AdminConfig` validates with it,
and ``make generate`` writes ``AdminSettings`` / ``AdminFields`` (``settings_generated.py``),
the README table and the ``AdminClient`` docstring's list from it. See
:mod:`kafka_async.settings`.
"""

from __future__ import annotations

from ..settings.spec import Bool, Int, Schema, Setting

#: Imports the generated module needs for the annotations below.
IMPORTS: tuple[str, ...] = ()

#: Literal aliases the generated module defines besides the Choice ones.
ALIASES: dict[str, str] = {}

#: Shared settings whose default differs for the admin client.
SHARED_DEFAULTS = {"client_id": "kafka-async-admin"}

SCHEMA = Schema(
    "admin client",
    [
        Setting(
            "default_api_timeout_ms",
            Int(low=1),
            60_000,
            "deadline of an admin call, retries included, when it passes no timeout_ms",
        ),
        Setting(
            "enable_metrics_push",
            Bool(),
            True,
            "push the metrics a broker's client-metrics subscription asks for (KIP-714)",
        ),
    ],
)
