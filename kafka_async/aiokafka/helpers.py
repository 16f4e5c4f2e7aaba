"""aiokafka's helpers (``aiokafka.helpers``): an SSL context for ``ssl_context=``."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from os import PathLike
from typing import TypeAlias

__all__ = ["create_ssl_context"]

_Path: TypeAlias = str | bytes | PathLike[str] | PathLike[bytes]


def create_ssl_context(
    *,
    cafile: _Path | None = None,
    capath: _Path | None = None,
    cadata: str | bytes | None = None,
    certfile: _Path | None = None,
    keyfile: _Path | None = None,
    password: Callable[[], str | bytes | bytearray] | str | bytes | bytearray | None = None,
) -> ssl.SSLContext:
    """A client :class:`ssl.SSLContext` that verifies the broker (hostname checked).

    ``cafile``/``capath``/``cadata`` name the authorities trusted (the system's without
    them); ``certfile`` (with ``keyfile`` and ``password`` when the key is apart or
    encrypted) is the client's certificate for brokers that ask for one.
    """
    context = ssl.create_default_context(
        ssl.Purpose.SERVER_AUTH, cafile=cafile, capath=capath, cadata=cadata
    )
    if certfile is not None:
        context.load_cert_chain(certfile=certfile, keyfile=keyfile, password=password)
    return context
