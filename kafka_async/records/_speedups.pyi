"""Types of the C accelerator ``_speedups.c`` (its twin: ``_pure.py``)."""

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

_T = TypeVar("_T")

def decode_records(
    buf: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    timestamp_override: int | None,
    record_type: type[tuple[Any, ...]],
    /,
) -> list[Any]: ...
def consumer_records(
    records: list[Any],
    lo: int,
    hi: int,
    cls: Callable[..., Any],
    topic: str,
    partition: int,
    timestamp_type: int,
    leader_epoch: int | None,
    /,
) -> list[Any]: ...
def ready(value: _T, /) -> Awaitable[_T]: ...

class RecordWriter:
    def __init__(self, batch_size_limit: int) -> None: ...
    @property
    def buffer(self) -> bytearray: ...
    @property
    def record_count(self) -> int: ...
    @property
    def size_in_bytes(self) -> int: ...
    @property
    def batch_size_limit(self) -> int: ...
    @property
    def base_timestamp(self) -> int: ...
    @property
    def max_timestamp(self) -> int: ...
    def append(
        self,
        timestamp: int | None,
        key: bytes | bytearray | memoryview | None,
        value: bytes | bytearray | memoryview | None,
        headers: Iterable[tuple[str, bytes | bytearray | memoryview | None]] | None = None,
    ) -> int | None: ...
