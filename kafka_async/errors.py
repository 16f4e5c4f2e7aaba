"""Every error kafka_async raises.

Two families:

* client-side errors (bad config, a malformed response, a dead connection, a timeout), raised
  by this library itself;
* broker errors: one class per Kafka error code (``BrokerResponseError`` subclasses), each
  knowing whether retrying can help (``retriable``). ``for_code(code)`` maps a wire error code
  to its class.

All of them derive from :class:`KafkaError`, so ``except KafkaError`` catches everything the
library raises on purpose.
"""

from __future__ import annotations

from typing import ClassVar


class KafkaError(Exception):
    """Base class of every error raised by kafka_async."""

    #: True when the same operation may succeed if tried again later.
    retriable: ClassVar[bool] = False


# --------------------------------------------------------------------------------------------
# Client-side errors
# --------------------------------------------------------------------------------------------


class ConfigError(KafkaError, ValueError):
    """A configuration value is missing, of the wrong type or out of range."""


class ProtocolDecodeError(KafkaError):
    """Bytes from the peer do not form a valid message (truncated, bad length or count)."""


class UnsupportedFieldError(KafkaError, ValueError):
    """A request sets a field that the negotiated API version cannot carry."""


class ProtocolEncodeError(KafkaError, ValueError):
    """A message value cannot be encoded: wrong type, or a number out of its field's range."""


class CorruptRecordError(KafkaError):
    """A record batch failed its CRC or structural checks."""


class DecompressionLimitError(CorruptRecordError):
    """A compressed batch inflates past the configured cap (a decompression bomb)."""


class UnsupportedCodecError(KafkaError):
    """A batch uses a compression codec this build cannot handle."""


class RecordTooLargeClientError(KafkaError, ValueError):
    """A record is larger than ``max_request_size`` or ``max_batch_size`` allows."""


class KafkaConnectionError(KafkaError):
    """The connection to a broker failed or broke; every waiter on it gets this."""

    retriable = True


class ResponseTooLargeError(KafkaConnectionError):
    """A response frame announced a size above ``max_response_size``; the connection closes."""

    retriable = False


class KafkaTimeoutError(KafkaError):
    """A deadline passed before the operation completed."""

    retriable = True


class NoBrokersAvailableError(KafkaConnectionError):
    """None of the bootstrap servers or known brokers could be reached."""


class IncompatibleBrokerVersionError(KafkaError):
    """The broker supports no version of an API that this client needs."""


class ClientClosedError(KafkaError):
    """The client was closed; the operation cannot start or complete."""


# --------------------------------------------------------------------------------------------
# Broker errors (one class per Kafka error code)
# --------------------------------------------------------------------------------------------


class BrokerResponseError(KafkaError):
    """An error code returned by a broker. Subclasses exist for every known code."""

    code: ClassVar[int] = -1
    #: The name Kafka uses for this code, such as ``NOT_LEADER_OR_FOLLOWER``.
    name: ClassVar[str] = "UNKNOWN"
    #: True when the client should refresh its metadata before retrying.
    invalid_metadata: ClassVar[bool] = False

    def __init__(self, message: str | None = None) -> None:
        self.message = message
        text = f"[Error {self.code}] {self.name}"
        if message:
            text += f": {message}"
        super().__init__(text)


class UnknownBrokerError(BrokerResponseError):
    """An error code this client does not know; ``code`` holds the raw value."""

    def __init__(self, code: int, message: str | None = None) -> None:
        self.unknown_code = code
        super().__init__(message)
        self.args = (f"[Error {code}] UNKNOWN_ERROR_CODE" + (f": {message}" if message else ""),)


_BY_CODE: dict[int, type[BrokerResponseError]] = {}


def _register(
    code: int, name: str, retriable: bool = False, invalid_metadata: bool = False
) -> type[BrokerResponseError]:
    cls_name = "".join(part.capitalize() for part in name.split("_")) + "Error"
    cls = type(
        cls_name,
        (BrokerResponseError,),
        {
            "code": code,
            "name": name,
            "retriable": retriable,
            "invalid_metadata": invalid_metadata,
            "__doc__": f"Kafka error code {code}: {name}.",
            "__module__": __name__,
        },
    )
    _BY_CODE[code] = cls
    return cls


def for_code(code: int) -> type[BrokerResponseError] | None:
    """The exception class for a wire error code; None for 0 (no error)."""
    if code == 0:
        return None
    return _BY_CODE.get(code)


def raise_for_code(code: int, message: str | None = None) -> None:
    """Raise the typed error for ``code``; do nothing for 0."""
    if code == 0:
        return
    cls = _BY_CODE.get(code)
    if cls is None:
        raise UnknownBrokerError(code, message)
    raise cls(message)


def error_for_code(code: int, message: str | None = None) -> BrokerResponseError:
    """An instance of the typed error for a non-zero ``code`` (not raised)."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return UnknownBrokerError(code, message)
    return cls(message)
