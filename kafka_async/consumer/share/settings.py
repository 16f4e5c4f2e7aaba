"""The share consumer's own settings, each declared once (the shared connection settings are
in :mod:`kafka_async.net.settings`).

``SCHEMA`` is the source: :class:`~kafka_async.consumer.share.config.ShareConsumerConfig`
validates with it, and ``make generate`` writes ``ShareConsumerSettings`` /
``ShareConsumerFields`` (``settings_generated.py``), the README table and the
``ShareConsumer`` docstring's list from it. Names follow the consumer's where the meaning is
the same. See :mod:`kafka_async.settings`.
"""

from __future__ import annotations

from ...observability import ClientHooks
from ...settings.spec import Bool, Choice, Func, Instance, Int, Schema, Setting, Text

#: "implicit": each poll accepts every record the previous poll delivered (the Java
#: client's default); "explicit": the application acknowledges each record.
ACKNOWLEDGEMENT_MODES = ("implicit", "explicit")

#: How a ShareFetch acquires records (KIP-1206, the Java client's ``share.acquire.mode``):
#: "batch_optimized" (Kafka's default) acquires whole record batches, so one fetch may
#: acquire more than ``max_poll_records``; "record_limit" makes ``max_poll_records`` a strict
#: limit on what one fetch acquires (ShareFetch v2, Apache Kafka 4.2+).
SHARE_ACQUIRE_MODES = ("batch_optimized", "record_limit")

#: Share fetch and poll sizes travel as int32 on the wire.
_INT32 = 2**31 - 1

#: Imports the generated module needs for the annotations below.
IMPORTS = (
    "from ...observability import ClientHooks",
    "from .acks import AcknowledgementCommitCallback",
    "from ..settings import Deserializer",
)

#: Literal aliases the generated module defines besides the Choice ones.
ALIASES: dict[str, str] = {}

SCHEMA = Schema(
    "share consumer",
    [
        Setting(
            "group_id",
            Text(optional=False),
            None,
            "the share group to join",
            required="a share consumer needs the share group's id",
        ),
        Setting(
            "share_acknowledgement_mode",
            Choice(ACKNOWLEDGEMENT_MODES, "AcknowledgementMode"),
            "implicit",
            "'implicit': a poll accepts the previous poll's records; 'explicit': the "
            "application acknowledges each record",
        ),
        Setting(
            "share_acquire_mode",
            Choice(SHARE_ACQUIRE_MODES, "ShareAcquireMode"),
            "batch_optimized",
            "'batch_optimized': a fetch acquires whole batches (may exceed max_poll_records); "
            "'record_limit': never more than max_poll_records per fetch (brokers 4.2+)",
        ),
        Setting(
            "client_rack",
            Text(),
            None,
            "the rack this consumer runs in (sent to the coordinator when joining)",
        ),
        Setting(
            "key_deserializer",
            Func("Deserializer | None"),
            None,
            "turns key bytes (or None) into the share consumer's K",
            typed=False,
        ),
        Setting(
            "value_deserializer",
            Func("Deserializer | None"),
            None,
            "turns value bytes (or None) into the share consumer's V",
            typed=False,
        ),
        Setting(
            "fetch_max_wait_ms",
            Int(low=0, high=_INT32),
            500,
            "how long a ShareFetch may wait on the broker for fetch_min_bytes",
        ),
        Setting(
            "fetch_min_bytes",
            Int(low=0, high=_INT32),
            1,
            "bytes the broker waits for before it answers a ShareFetch",
        ),
        Setting(
            "fetch_max_bytes",
            Int(low=1, high=_INT32),
            52_428_800,
            "bytes one ShareFetch answer may carry",
            default_doc="50 MiB",
        ),
        Setting(
            "max_poll_records",
            Int(low=1, high=_INT32),
            500,
            "records one poll returns, and one ShareFetch acquires, at most",
        ),
        Setting("check_crcs", Bool(), True, "verify each record batch's CRC"),
        Setting(
            "max_decompressed_size",
            Int(low=1, high=_INT32),
            64 * 1024 * 1024,
            "a compressed batch inflating past this is refused (decompression-bomb guard)",
            java="",
            default_doc="64 MiB",
        ),
        Setting(
            "close_timeout_ms",
            Int(low=0, high=_INT32),
            5_000,
            "how long close() may take (acknowledgements, closing sessions, leaving)",
            java="",
        ),
        Setting(
            "acknowledgement_commit_callback",
            Func("AcknowledgementCommitCallback | None"),
            None,
            "called with ({partition: offsets}, error or None) once per partition each time the "
            "broker answers acknowledgements (also set_acknowledgement_commit_callback())",
            java="",
        ),
        Setting(
            "hooks",
            Instance(ClientHooks, "ClientHooks | None"),
            None,
            "observability hooks (metrics, tracing); None: off",
            java="",
        ),
        Setting(
            "enable_metrics_push",
            Bool(),
            True,
            "push the metrics a broker's client-metrics subscription asks for (KIP-714)",
        ),
    ],
)
