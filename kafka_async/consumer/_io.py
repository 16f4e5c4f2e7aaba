"""Moved: :func:`kafka_async.cluster.routing.send_request` (issue 28). This alias remains only
until the group and share modules import it from there; delete it then."""

from __future__ import annotations

from ..cluster.routing import send_request as send

__all__ = ["send"]
