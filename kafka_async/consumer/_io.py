"""Sending one request with a version chosen per connection (shared by consumer modules)."""

from __future__ import annotations

from collections.abc import Callable

from ..cluster.client import ClusterClient
from ..protocol.schema import Api, ReqT, RespT


async def send(
    client: ClusterClient,
    node_id: int,
    api: Api[ReqT, RespT],
    body: ReqT | Callable[[int], ReqT],
    *,
    purpose: str = "default",
    min_version: int | None = None,
    max_version: int | None = None,
    timeout: float | None = None,
) -> tuple[int, RespT]:
    """Send to ``node_id`` at the highest common version within the bounds.

    ``body`` may be a function of the version, for APIs whose shape changed (OffsetFetch
    v8 moved to per-group lists). Returns (version, decoded response).
    """
    conn = await client.connection(node_id, purpose)
    version = conn.version_for(api, min_version, max_version)
    payload: ReqT = body(version) if callable(body) else body
    resp = await conn.request(api, payload, version=version, timeout=timeout)
    return version, resp
