"""I/O layer: broker connections (framing, pipelining, version negotiation), a pool of
them per cluster, backoff, and the settings they share."""

from __future__ import annotations

from .backoff import BackoffState, ExponentialBackoff
from .config import ClientConfig, ClientSettings, parse_bootstrap_servers
from .connection import BrokerConnection, ConnectionStatistics, StreamFactory, tcp_stream
from .pool import PURPOSES, ConnectionPool, PoolState, PoolStatistics
from .tls import TLSHandshakeError

__all__ = [
    "PURPOSES",
    "BackoffState",
    "BrokerConnection",
    "ClientConfig",
    "ClientSettings",
    "ConnectionPool",
    "ConnectionStatistics",
    "ExponentialBackoff",
    "PoolState",
    "PoolStatistics",
    "StreamFactory",
    "TLSHandshakeError",
    "parse_bootstrap_servers",
    "tcp_stream",
]
