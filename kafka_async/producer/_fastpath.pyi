"""Types of the C fast path ``_fastpath.c`` (its twins: ``_fastpath_pure.py``,
``Producer.enqueue`` and ``partitioner.murmur2_py``)."""

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Literal

def murmur2(data: bytes | bytearray | memoryview, /) -> int: ...
def append_record(
    batch: Any,
    timestamp: int | None,
    key: bytes | bytearray | memoryview | None,
    value: bytes | bytearray | memoryview | None,
    headers: Iterable[tuple[str, bytes | bytearray | memoryview | None]] | None,
    size: int,
    cls: Callable[..., Any],
    /,
) -> Any: ...
def delivery_metadata(delivery: Any, cls: Callable[..., Any], /) -> Any: ...

class Enqueuer:
    """``Producer.enqueue``'s common case (or ``send``'s, ``produce``'s: ``mode``)."""

    def __init__(
        self,
        producer: Any,
        acc: Any,
        topics: dict[str, Any],
        sticky: dict[str, list[int]] | None,
        sticky_bytes: int,
        max_record_size: int,
        key_serializer: Callable[[Any], Any] | None,
        value_serializer: Callable[[Any], Any] | None,
        choose: Callable[..., int],
        delivery_cls: type,
        slow: Callable[..., Awaitable[Any]],
        after_wakeup: Callable[[Any], Awaitable[Any]],
        *,
        mode: Literal["enqueue", "send", "produce"] = "enqueue",
        future_cls: Callable[..., Any] | None = None,
        metadata_cls: type[tuple[Any, ...]] | None = None,
        slow_wait: Callable[[Any], Awaitable[Any]] | None = None,
    ) -> None: ...
    def __call__(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Any = None,
    ) -> Awaitable[Any]: ...

class Sending:
    """What ``Producer.send``'s C variant returns: awaiting it gives the record's metadata."""

    def __await__(self) -> Any: ...
    def send(self, value: Any, /) -> Any: ...
    def throw(self, typ: Any, val: Any = ..., tb: Any = ..., /) -> Any: ...
    def close(self) -> None: ...
