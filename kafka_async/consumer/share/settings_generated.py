# Generated from kafka_async/consumer/share/settings.py by `make generate`
# (tools/generate_settings.py): do not edit.
"""The share consumer settings, typed: ``ShareConsumerSettings`` (the keyword arguments of
ShareConsumer) and ``ShareConsumerFields`` (the fields of its config, checked values).

Both come from ``SCHEMA`` in ``kafka_async.consumer.share.settings``, which says
what each setting means; see :mod:`kafka_async.settings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...net.config import ClientConfig
from ...net.settings_generated import ClientSettings
from ...observability import ClientHooks
from ..settings import Deserializer
from .acks import AcknowledgementCommitCallback
from .settings import SCHEMA as _SCHEMA

AcknowledgementMode = Literal["implicit", "explicit"]
ShareAcquireMode = Literal["batch_optimized", "record_limit"]


class ShareConsumerSettings(ClientSettings, total=False):
    """The keyword arguments of ShareConsumer, typed for editors and mypy.

    Values are checked again at run time (``ConfigError`` naming the setting).
    """

    #: the share group to join (required)
    group_id: str
    #: 'implicit': a poll accepts the previous poll's records; 'explicit': the application
    #: acknowledges each record (default: "implicit")
    share_acknowledgement_mode: AcknowledgementMode
    #: 'batch_optimized': a fetch acquires whole batches (may exceed max_poll_records);
    #: 'record_limit': never more than max_poll_records per fetch (brokers 4.2+) (default:
    #: "batch_optimized")
    share_acquire_mode: ShareAcquireMode
    #: the rack this consumer runs in (sent to the coordinator when joining) (default: None)
    client_rack: str | None
    #: how long a ShareFetch may wait on the broker for fetch_min_bytes (default: 500)
    fetch_max_wait_ms: int
    #: bytes the broker waits for before it answers a ShareFetch (default: 1)
    fetch_min_bytes: int
    #: bytes one ShareFetch answer may carry (default: 50 MiB)
    fetch_max_bytes: int
    #: records one poll returns, and one ShareFetch acquires, at most (default: 500)
    max_poll_records: int
    #: verify each record batch's CRC (default: True)
    check_crcs: bool
    #: a compressed batch inflating past this is refused (decompression-bomb guard) (default: 64
    #: MiB)
    max_decompressed_size: int
    #: how long close() may take (acknowledgements, closing sessions, leaving) (default: 5000)
    close_timeout_ms: int
    #: called with ({partition: offsets}, error or None) once per partition each time the broker
    #: answers acknowledgements (also set_acknowledgement_commit_callback()) (default: None)
    acknowledgement_commit_callback: AcknowledgementCommitCallback | None
    #: observability hooks (metrics, tracing); None: off (default: None)
    hooks: ClientHooks | None
    #: push the metrics a broker's client-metrics subscription asks for (KIP-714) (default: True)
    enable_metrics_push: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareConsumerFields:
    """The share consumer settings as the config holds them: each checked, defaults
    filled in."""

    client: ClientConfig
    group_id: str
    share_acknowledgement_mode: AcknowledgementMode = "implicit"
    share_acquire_mode: ShareAcquireMode = "batch_optimized"
    client_rack: str | None = None
    key_deserializer: Deserializer | None = None
    value_deserializer: Deserializer | None = None
    fetch_max_wait_ms: int = 500
    fetch_min_bytes: int = 1
    fetch_max_bytes: int = 52428800
    max_poll_records: int = 500
    check_crcs: bool = True
    max_decompressed_size: int = 67108864
    close_timeout_ms: int = 5000
    acknowledgement_commit_callback: AcknowledgementCommitCallback | None = None
    hooks: ClientHooks | None = None
    enable_metrics_push: bool = True

    def __post_init__(self) -> None:
        # Each field checked against its declaration (the config subclass adds the
        # relations between fields).
        _SCHEMA.validate(self)
