"""Every error kafka_async raises.

Two families:

* client-side errors (bad config, a malformed response, a dead connection, a timeout), raised
  by this library itself;
* broker errors: one class per Kafka error code (``BrokerResponseError`` subclasses), each
  knowing whether retrying can help (``retriable``). ``for_code(code)`` maps a wire error code
  to its class. Those classes are generated from one table, ``tools/errors.def`` (code,
  Kafka's name, class name, flags, docstring), by ``tools/generate_errors.py``
  (``make generate``); edit the table, not the GENERATED region.

All of them derive from :class:`KafkaError`, so ``except KafkaError`` catches everything the
library raises on purpose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .structs import TopicPartition


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


class BootstrapUnreachableError(NoBrokersAvailableError):
    """At start, every bootstrap server refused the connection or its name did not resolve
    (a mistyped host or port, a broker not running): ``start()`` gives up after about a
    second of retries instead of waiting ``request_timeout_ms``. ``errors`` maps each
    ``host:port`` to its error. A server that does not answer at all (a connect or request
    timing out) still gets the whole ``request_timeout_ms``."""

    def __init__(self, errors: Mapping[str, str]) -> None:
        super().__init__(
            "no bootstrap server can be reached: "
            + "; ".join(f"{addr}: {why}" for addr, why in errors.items())
        )
        self.errors = dict(errors)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.errors,))


class IncompatibleBrokerVersionError(KafkaError):
    """The broker supports no version of an API that this client needs."""


class ClientClosedError(KafkaError):
    """The client was closed; the operation cannot start or complete."""


class ProduceFailedError(KafkaError):
    """Records queued with ``Producer.produce`` (no delivery handle) failed since the last
    ``flush``: ``count`` of them, the first with ``first_error`` (also the ``__cause__``).
    Raised by ``flush`` once per failure window; the counter starts again at zero."""

    def __init__(self, count: int, first_error: BaseException) -> None:
        super().__init__(
            f"{count} record(s) queued with produce() failed since the last flush; "
            f"the first with {type(first_error).__name__}: {first_error}"
        )
        self.count = count
        self.first_error = first_error

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.count, self.first_error))


class RecordDeserializationError(KafkaError):
    """A consumer's ``key_deserializer`` or ``value_deserializer`` raised on one record.

    ``topic``, ``partition`` and ``offset`` name the record, ``origin`` says which part
    failed (``"key"`` or ``"value"``), ``cause`` is the deserializer's exception (also the
    ``__cause__``). The consumer's position stays AT that record: the records before it
    were handed out, the same error comes again on the next read, and
    ``consumer.seek(error.topic_partition, error.offset + 1)`` skips the record (the Java
    client's ``RecordDeserializationException``). Nothing is skipped silently."""

    def __init__(
        self, topic: str, partition: int, offset: int, origin: str, cause: BaseException
    ) -> None:
        super().__init__(
            f"{topic}-{partition} offset {offset}: the {origin} deserializer raised "
            f"{type(cause).__name__}: {cause} ({self._what_now(offset)})"
        )
        self.topic = topic
        self.partition = partition
        self.offset = offset
        #: ``"key"`` or ``"value"``: which deserializer raised.
        self.origin = origin
        self.cause = cause
        self.__cause__ = cause

    @staticmethod
    def _what_now(offset: int) -> str:
        return f"the position stays at offset {offset}; seek to {offset + 1} to skip the record"

    @property
    def topic_partition(self) -> TopicPartition:
        """The record's partition (to pass to ``seek``)."""
        from .structs import TopicPartition

        return TopicPartition(self.topic, self.partition)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.topic, self.partition, self.offset, self.origin, self.cause))


class BackgroundTaskError(KafkaError):
    """A background task of the client (connection reader, sender, fetcher, group
    coordinator) stopped with an unexpected error, so the client cannot go on. The original
    error is the ``__cause__``. ``close()`` still works and returns."""


class InvalidStateError(KafkaError):
    """A result was read before it existed (a delivery's outcome before the record was
    settled)."""


class TransactionStateError(KafkaError):
    """A transactional call was made in a state that does not allow it."""


class TransactionAbortedError(KafkaError):
    """The record was dropped because its transaction was aborted before it was sent."""


# --------------------------------------------------------------------------------------------
# Broker errors (one class per Kafka error code)
# --------------------------------------------------------------------------------------------


class BrokerResponseError(KafkaError):
    """An error code returned by a broker. Subclasses exist for every known code.

    Each subclass declares ``code`` and ``name`` (Kafka's), and three flags a client acts on:
    ``retriable`` (the Java client's ``RetriableException`` set: trying again later may
    succeed), ``invalid_metadata`` (refresh the cluster metadata before retrying, the leader
    moved or the topic changed) and ``invalid_coordinator`` (look the group or transaction
    coordinator up again).
    """

    code: ClassVar[int] = -1
    #: The name Kafka uses for this code, such as ``NOT_LEADER_OR_FOLLOWER``.
    name: ClassVar[str] = "UNKNOWN"
    #: True when the client should refresh its metadata before retrying.
    invalid_metadata: ClassVar[bool] = False
    #: True when the client should find the coordinator again before retrying.
    invalid_coordinator: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        # Only classes that declare their own code join the registry (not UnknownBrokerError
        # or user subclasses of a code class).
        if "code" in cls.__dict__:
            other = _BY_CODE.get(cls.code)
            if other is not None:
                raise TypeError(f"error code {cls.code} already belongs to {other.__name__}")
            _BY_CODE[cls.code] = cls

    def __init__(self, message: str | None = None) -> None:
        self.message = message
        text = f"[Error {self.code}] {self.name}"
        if message:
            text += f": {message}"
        super().__init__(text)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.message,))


class UnknownBrokerError(BrokerResponseError):
    """An error code this client does not know; ``unknown_code`` holds the raw value."""

    def __init__(self, code: int, message: str | None = None) -> None:
        self.unknown_code = code
        super().__init__(message)
        self.args = (f"[Error {code}] UNKNOWN_ERROR_CODE" + (f": {message}" if message else ""),)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.unknown_code, self.message))


_BY_CODE: dict[int, type[BrokerResponseError]] = {}

# BEGIN GENERATED by tools/generate_errors.py from tools/errors.def (make generate).
# One class per code Kafka defines, declared one by one (not made at import time) so
# that type checkers and IDEs see them. Edit tools/errors.def, not this region.


class UnknownServerError(BrokerResponseError):
    """The broker hit an unexpected error; its log has the details. (code -1)"""

    code = -1
    name = "UNKNOWN_SERVER_ERROR"


class OffsetOutOfRangeError(BrokerResponseError):
    """The requested offset is outside the range the partition holds. (code 1)"""

    code = 1
    name = "OFFSET_OUT_OF_RANGE"


class CorruptMessageError(BrokerResponseError):
    """A record batch failed its CRC or is otherwise malformed. (code 2)"""

    code = 2
    name = "CORRUPT_MESSAGE"
    retriable = True


class UnknownTopicOrPartitionError(BrokerResponseError):
    """The broker does not host this topic or partition (it may not exist yet). (code 3)"""

    code = 3
    name = "UNKNOWN_TOPIC_OR_PARTITION"
    retriable = True
    invalid_metadata = True


class InvalidFetchSizeError(BrokerResponseError):
    """The fetch asked for a size the broker does not accept. (code 4)"""

    code = 4
    name = "INVALID_FETCH_SIZE"


class LeaderNotAvailableError(BrokerResponseError):
    """The partition has no leader at the moment, usually during an election. (code 5)"""

    code = 5
    name = "LEADER_NOT_AVAILABLE"
    retriable = True
    invalid_metadata = True


class NotLeaderOrFollowerError(BrokerResponseError):
    """The broker is not the leader (or not a replica) of this partition. (code 6)"""

    code = 6
    name = "NOT_LEADER_OR_FOLLOWER"
    retriable = True
    invalid_metadata = True


class RequestTimedOutError(BrokerResponseError):
    """The broker did not finish the request within its timeout. (code 7)"""

    code = 7
    name = "REQUEST_TIMED_OUT"
    retriable = True


class BrokerNotAvailableError(BrokerResponseError):
    """The broker named in the request is not available. (code 8)"""

    code = 8
    name = "BROKER_NOT_AVAILABLE"


class ReplicaNotAvailableError(BrokerResponseError):
    """The replica the request needs is not available on this broker. (code 9)"""

    code = 9
    name = "REPLICA_NOT_AVAILABLE"
    retriable = True
    invalid_metadata = True


class MessageTooLargeError(BrokerResponseError):
    """A record batch is larger than the broker accepts. (code 10)"""

    code = 10
    name = "MESSAGE_TOO_LARGE"


class StaleControllerEpochError(BrokerResponseError):
    """The request carried a controller epoch older than the current controller's. (code 11)"""

    code = 11
    name = "STALE_CONTROLLER_EPOCH"


class OffsetMetadataTooLargeError(BrokerResponseError):
    """The metadata string of an offset commit is longer than the broker allows. (code 12)"""

    code = 12
    name = "OFFSET_METADATA_TOO_LARGE"


class NetworkError(BrokerResponseError):
    """The connection between brokers broke before an answer arrived. (code 13)"""

    code = 13
    name = "NETWORK_EXCEPTION"
    retriable = True
    invalid_metadata = True


class CoordinatorLoadInProgressError(BrokerResponseError):
    """The coordinator is still loading its state. (code 14)"""

    code = 14
    name = "COORDINATOR_LOAD_IN_PROGRESS"
    retriable = True


class CoordinatorNotAvailableError(BrokerResponseError):
    """The coordinator is not available. (code 15)"""

    code = 15
    name = "COORDINATOR_NOT_AVAILABLE"
    retriable = True
    invalid_coordinator = True


class NotCoordinatorError(BrokerResponseError):
    """The broker is not the coordinator for this group or transactional id. (code 16)"""

    code = 16
    name = "NOT_COORDINATOR"
    retriable = True
    invalid_coordinator = True


class InvalidTopicError(BrokerResponseError):
    """The topic name is invalid, or the operation is not allowed on this topic. (code 17)"""

    code = 17
    name = "INVALID_TOPIC_EXCEPTION"


class RecordListTooLargeError(BrokerResponseError):
    """A batch is larger than the broker's log segment can hold. (code 18)"""

    code = 18
    name = "RECORD_LIST_TOO_LARGE"


class NotEnoughReplicasError(BrokerResponseError):
    """Fewer in-sync replicas than required; nothing was written. (code 19)"""

    code = 19
    name = "NOT_ENOUGH_REPLICAS"
    retriable = True


class NotEnoughReplicasAfterAppendError(BrokerResponseError):
    """Written, but to fewer in-sync replicas than required. (code 20)"""

    code = 20
    name = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
    retriable = True


class InvalidRequiredAcksError(BrokerResponseError):
    """The produce request's acks value is not one the broker accepts (-1, 0 or 1). (code 21)"""

    code = 21
    name = "INVALID_REQUIRED_ACKS"


class IllegalGenerationError(BrokerResponseError):
    """The group generation in the request is not the current one. (code 22)"""

    code = 22
    name = "ILLEGAL_GENERATION"


class InconsistentGroupProtocolError(BrokerResponseError):
    """The member's group protocols do not match those of the group's other members. (code 23)"""

    code = 23
    name = "INCONSISTENT_GROUP_PROTOCOL"


class InvalidGroupIdError(BrokerResponseError):
    """The group id is not valid (empty, for example). (code 24)"""

    code = 24
    name = "INVALID_GROUP_ID"


class UnknownMemberIdError(BrokerResponseError):
    """The coordinator does not know this member id. (code 25)"""

    code = 25
    name = "UNKNOWN_MEMBER_ID"


class InvalidSessionTimeoutError(BrokerResponseError):
    """The session timeout is outside the range the broker allows
    (group.min/max.session.timeout.ms). (code 26)"""

    code = 26
    name = "INVALID_SESSION_TIMEOUT"


class RebalanceInProgressError(BrokerResponseError):
    """The group is rebalancing; the member must rejoin. (code 27)"""

    code = 27
    name = "REBALANCE_IN_PROGRESS"


class InvalidCommitOffsetSizeError(BrokerResponseError):
    """The offset commit's data has a size the broker does not accept. (code 28)"""

    code = 28
    name = "INVALID_COMMIT_OFFSET_SIZE"


class TopicAuthorizationFailedError(BrokerResponseError):
    """Not authorized to access the topic. (code 29)"""

    code = 29
    name = "TOPIC_AUTHORIZATION_FAILED"


class GroupAuthorizationFailedError(BrokerResponseError):
    """Not authorized to access the group. (code 30)"""

    code = 30
    name = "GROUP_AUTHORIZATION_FAILED"


class ClusterAuthorizationFailedError(BrokerResponseError):
    """Not authorized for this cluster-wide operation. (code 31)"""

    code = 31
    name = "CLUSTER_AUTHORIZATION_FAILED"


class InvalidTimestampError(BrokerResponseError):
    """A record's timestamp is outside the range the broker accepts for the topic. (code 32)"""

    code = 32
    name = "INVALID_TIMESTAMP"


class UnsupportedSaslMechanismError(BrokerResponseError):
    """The broker does not support the requested SASL mechanism. (code 33)"""

    code = 33
    name = "UNSUPPORTED_SASL_MECHANISM"


class IllegalSaslStateError(BrokerResponseError):
    """A SASL message arrived in a state of the SASL exchange that does not allow it. (code 34)"""

    code = 34
    name = "ILLEGAL_SASL_STATE"


class UnsupportedVersionError(BrokerResponseError):
    """The broker does not support this API version. (code 35)"""

    code = 35
    name = "UNSUPPORTED_VERSION"


class TopicAlreadyExistsError(BrokerResponseError):
    """A topic with this name already exists. (code 36)"""

    code = 36
    name = "TOPIC_ALREADY_EXISTS"


class InvalidPartitionsError(BrokerResponseError):
    """The partition count asked for is not valid (below 1, or not above the current count).
    (code 37)"""

    code = 37
    name = "INVALID_PARTITIONS"


class InvalidReplicationFactorError(BrokerResponseError):
    """The replication factor is not valid (below 1, or more than there are brokers). (code 38)"""

    code = 38
    name = "INVALID_REPLICATION_FACTOR"


class InvalidReplicaAssignmentError(BrokerResponseError):
    """The explicit replica assignment is not valid. (code 39)"""

    code = 39
    name = "INVALID_REPLICA_ASSIGNMENT"


class InvalidConfigError(BrokerResponseError):
    """A configuration name or value is not valid. (code 40)"""

    code = 40
    name = "INVALID_CONFIG"


class NotControllerError(BrokerResponseError):
    """The broker is not the active controller. (code 41)"""

    code = 41
    name = "NOT_CONTROLLER"
    retriable = True


class InvalidRequestError(BrokerResponseError):
    """The broker could not make sense of the request. (code 42)"""

    code = 42
    name = "INVALID_REQUEST"


class UnsupportedForMessageFormatError(BrokerResponseError):
    """The message format of the topic does not support this request. (code 43)"""

    code = 43
    name = "UNSUPPORTED_FOR_MESSAGE_FORMAT"


class PolicyViolationError(BrokerResponseError):
    """The request breaks a policy configured on the broker (a create-topic policy, say).
    (code 44)"""

    code = 44
    name = "POLICY_VIOLATION"


class OutOfOrderSequenceNumberError(BrokerResponseError):
    """A produce sequence number was not the one the broker expected. (code 45)"""

    code = 45
    name = "OUT_OF_ORDER_SEQUENCE_NUMBER"


class DuplicateSequenceNumberError(BrokerResponseError):
    """The broker already holds a batch with this sequence number. (code 46)"""

    code = 46
    name = "DUPLICATE_SEQUENCE_NUMBER"


class InvalidProducerEpochError(BrokerResponseError):
    """The producer epoch is older than the broker's: the producer is fenced. (code 47)"""

    code = 47
    name = "INVALID_PRODUCER_EPOCH"


class InvalidTxnStateError(BrokerResponseError):
    """The transactional operation is not valid in the transaction's current state. (code 48)"""

    code = 48
    name = "INVALID_TXN_STATE"


class InvalidProducerIdMappingError(BrokerResponseError):
    """The producer id is not the one the transactional id is mapped to. (code 49)"""

    code = 49
    name = "INVALID_PRODUCER_ID_MAPPING"


class InvalidTransactionTimeoutError(BrokerResponseError):
    """The transaction timeout exceeds the broker's transaction.max.timeout.ms. (code 50)"""

    code = 50
    name = "INVALID_TRANSACTION_TIMEOUT"


class ConcurrentTransactionsError(BrokerResponseError):
    """Another operation on the same transaction is still in progress. (code 51)"""

    code = 51
    name = "CONCURRENT_TRANSACTIONS"
    retriable = True


class TransactionCoordinatorFencedError(BrokerResponseError):
    """The transaction coordinator that sent the request is no longer the current one. (code 52)"""

    code = 52
    name = "TRANSACTION_COORDINATOR_FENCED"


class TransactionalIdAuthorizationFailedError(BrokerResponseError):
    """Not authorized to use this transactional id. (code 53)"""

    code = 53
    name = "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"


class SecurityDisabledError(BrokerResponseError):
    """The request needs a security feature that the broker has disabled. (code 54)"""

    code = 54
    name = "SECURITY_DISABLED"


class OperationNotAttemptedError(BrokerResponseError):
    """The broker did not try this part of a batched request because another part failed.
    (code 55)"""

    code = 55
    name = "OPERATION_NOT_ATTEMPTED"


class KafkaStorageError(BrokerResponseError):
    """The broker could not access its log directory. (code 56)"""

    code = 56
    name = "KAFKA_STORAGE_ERROR"
    retriable = True
    invalid_metadata = True


class LogDirNotFoundError(BrokerResponseError):
    """The log directory named in the request is not one the broker has. (code 57)"""

    code = 57
    name = "LOG_DIR_NOT_FOUND"


class SaslAuthenticationFailedError(BrokerResponseError):
    """SASL authentication failed. (code 58)"""

    code = 58
    name = "SASL_AUTHENTICATION_FAILED"


class UnknownProducerIdError(BrokerResponseError):
    """The broker no longer has state for this producer id. (code 59)"""

    code = 59
    name = "UNKNOWN_PRODUCER_ID"


class ReassignmentInProgressError(BrokerResponseError):
    """A partition reassignment is already in progress. (code 60)"""

    code = 60
    name = "REASSIGNMENT_IN_PROGRESS"


class DelegationTokenAuthDisabledError(BrokerResponseError):
    """Delegation tokens are not enabled on the broker. (code 61)"""

    code = 61
    name = "DELEGATION_TOKEN_AUTH_DISABLED"


class DelegationTokenNotFoundError(BrokerResponseError):
    """The delegation token does not exist on the broker. (code 62)"""

    code = 62
    name = "DELEGATION_TOKEN_NOT_FOUND"


class DelegationTokenOwnerMismatchError(BrokerResponseError):
    """The principal is not the owner or a renewer of the delegation token. (code 63)"""

    code = 63
    name = "DELEGATION_TOKEN_OWNER_MISMATCH"


class DelegationTokenRequestNotAllowedError(BrokerResponseError):
    """Delegation token requests are not allowed on this connection (plaintext, or token-
    authenticated). (code 64)"""

    code = 64
    name = "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"


class DelegationTokenAuthorizationFailedError(BrokerResponseError):
    """Not authorized for this delegation token operation. (code 65)"""

    code = 65
    name = "DELEGATION_TOKEN_AUTHORIZATION_FAILED"


class DelegationTokenExpiredError(BrokerResponseError):
    """The delegation token has expired. (code 66)"""

    code = 66
    name = "DELEGATION_TOKEN_EXPIRED"


class InvalidPrincipalTypeError(BrokerResponseError):
    """The principal type is not supported. (code 67)"""

    code = 67
    name = "INVALID_PRINCIPAL_TYPE"


class NonEmptyGroupError(BrokerResponseError):
    """The group still has members; the operation needs an empty group. (code 68)"""

    code = 68
    name = "NON_EMPTY_GROUP"


class GroupIdNotFoundError(BrokerResponseError):
    """The group does not exist. (code 69)"""

    code = 69
    name = "GROUP_ID_NOT_FOUND"


class FetchSessionIdNotFoundError(BrokerResponseError):
    """The fetch session id is unknown to the broker. (code 70)"""

    code = 70
    name = "FETCH_SESSION_ID_NOT_FOUND"
    retriable = True


class InvalidFetchSessionEpochError(BrokerResponseError):
    """The fetch session epoch does not match the broker's. (code 71)"""

    code = 71
    name = "INVALID_FETCH_SESSION_EPOCH"
    retriable = True


class ListenerNotFoundError(BrokerResponseError):
    """The partition's leader has no listener matching the one the metadata request came in on.
    (code 72)"""

    code = 72
    name = "LISTENER_NOT_FOUND"
    retriable = True
    invalid_metadata = True


class TopicDeletionDisabledError(BrokerResponseError):
    """Topic deletion is disabled on the broker (delete.topic.enable=false). (code 73)"""

    code = 73
    name = "TOPIC_DELETION_DISABLED"


class FencedLeaderEpochError(BrokerResponseError):
    """The leader epoch in the request is older than the broker's. (code 74)"""

    code = 74
    name = "FENCED_LEADER_EPOCH"
    retriable = True
    invalid_metadata = True


class UnknownLeaderEpochError(BrokerResponseError):
    """The leader epoch in the request is newer than the broker's. (code 75)"""

    code = 75
    name = "UNKNOWN_LEADER_EPOCH"
    retriable = True
    invalid_metadata = True


class UnsupportedCompressionTypeError(BrokerResponseError):
    """The partition's data uses a compression type the request's version cannot carry. (code 76)"""

    code = 76
    name = "UNSUPPORTED_COMPRESSION_TYPE"


class StaleBrokerEpochError(BrokerResponseError):
    """The broker epoch in the request is not the current one. (code 77)"""

    code = 77
    name = "STALE_BROKER_EPOCH"


class OffsetNotAvailableError(BrokerResponseError):
    """The new leader's high watermark has not caught up yet; the offset is not available yet.
    (code 78)"""

    code = 78
    name = "OFFSET_NOT_AVAILABLE"
    retriable = True


class MemberIdRequiredError(BrokerResponseError):
    """The member must rejoin with the member id the coordinator gave it. (code 79)"""

    code = 79
    name = "MEMBER_ID_REQUIRED"


class PreferredLeaderNotAvailableError(BrokerResponseError):
    """The preferred leader of the partition is not available for an election. (code 80)"""

    code = 80
    name = "PREFERRED_LEADER_NOT_AVAILABLE"
    retriable = True
    invalid_metadata = True


class GroupMaxSizeReachedError(BrokerResponseError):
    """The group has reached the broker's maximum group size. (code 81)"""

    code = 81
    name = "GROUP_MAX_SIZE_REACHED"


class FencedInstanceIdError(BrokerResponseError):
    """Another member with the same group instance id replaced this one. (code 82)"""

    code = 82
    name = "FENCED_INSTANCE_ID"


class EligibleLeadersNotAvailableError(BrokerResponseError):
    """No eligible leader is available for the partition. (code 83)"""

    code = 83
    name = "ELIGIBLE_LEADERS_NOT_AVAILABLE"
    retriable = True
    invalid_metadata = True


class ElectionNotNeededError(BrokerResponseError):
    """The partition already has its preferred leader; no election was needed. (code 84)"""

    code = 84
    name = "ELECTION_NOT_NEEDED"
    retriable = True
    invalid_metadata = True


class NoReassignmentInProgressError(BrokerResponseError):
    """No partition reassignment is in progress to cancel. (code 85)"""

    code = 85
    name = "NO_REASSIGNMENT_IN_PROGRESS"


class GroupSubscribedToTopicError(BrokerResponseError):
    """The group is subscribed to the topic, so its offsets for it cannot be deleted. (code 86)"""

    code = 86
    name = "GROUP_SUBSCRIBED_TO_TOPIC"


class InvalidRecordError(BrokerResponseError):
    """The broker refused a record that failed its validation (a null key on a compacted topic,
    say). (code 87)"""

    code = 87
    name = "INVALID_RECORD"


class UnstableOffsetCommitError(BrokerResponseError):
    """Transactional offsets for the partition are still pending; try the fetch again later.
    (code 88)"""

    code = 88
    name = "UNSTABLE_OFFSET_COMMIT"
    retriable = True


class ThrottlingQuotaExceededError(BrokerResponseError):
    """A quota was exceeded; retry after the throttle time. (code 89)"""

    code = 89
    name = "THROTTLING_QUOTA_EXCEEDED"
    retriable = True


class ProducerFencedError(BrokerResponseError):
    """A newer producer with the same transactional id fenced this one. (code 90)"""

    code = 90
    name = "PRODUCER_FENCED"


class ResourceNotFoundError(BrokerResponseError):
    """The request refers to a resource that does not exist. (code 91)"""

    code = 91
    name = "RESOURCE_NOT_FOUND"


class DuplicateResourceError(BrokerResponseError):
    """The request names the same resource twice. (code 92)"""

    code = 92
    name = "DUPLICATE_RESOURCE"


class UnacceptableCredentialError(BrokerResponseError):
    """The credential does not meet the broker's requirements. (code 93)"""

    code = 93
    name = "UNACCEPTABLE_CREDENTIAL"


class InconsistentVoterSetError(BrokerResponseError):
    """The sender or receiver of a voter request is not one of the expected voters. (code 94)"""

    code = 94
    name = "INCONSISTENT_VOTER_SET"


class InvalidUpdateVersionError(BrokerResponseError):
    """The update version in the request is not valid. (code 95)"""

    code = 95
    name = "INVALID_UPDATE_VERSION"


class FeatureUpdateFailedError(BrokerResponseError):
    """The broker could not update the finalized features. (code 96)"""

    code = 96
    name = "FEATURE_UPDATE_FAILED"


class PrincipalDeserializationFailureError(BrokerResponseError):
    """The broker could not deserialize the request's principal while forwarding it. (code 97)"""

    code = 97
    name = "PRINCIPAL_DESERIALIZATION_FAILURE"


class SnapshotNotFoundError(BrokerResponseError):
    """The requested metadata snapshot does not exist. (code 98)"""

    code = 98
    name = "SNAPSHOT_NOT_FOUND"


class PositionOutOfRangeError(BrokerResponseError):
    """The requested snapshot position is outside the snapshot. (code 99)"""

    code = 99
    name = "POSITION_OUT_OF_RANGE"


class UnknownTopicIdError(BrokerResponseError):
    """The broker does not host a topic with this id. (code 100)"""

    code = 100
    name = "UNKNOWN_TOPIC_ID"
    retriable = True
    invalid_metadata = True


class DuplicateBrokerRegistrationError(BrokerResponseError):
    """The broker id is already registered by another broker. (code 101)"""

    code = 101
    name = "DUPLICATE_BROKER_REGISTRATION"


class BrokerIdNotRegisteredError(BrokerResponseError):
    """The broker id has not been registered with the controller. (code 102)"""

    code = 102
    name = "BROKER_ID_NOT_REGISTERED"


class InconsistentTopicIdError(BrokerResponseError):
    """The topic id in the request does not match the topic id of the log. (code 103)"""

    code = 103
    name = "INCONSISTENT_TOPIC_ID"
    retriable = True
    invalid_metadata = True


class InconsistentClusterIdError(BrokerResponseError):
    """The cluster id in the request does not match the broker's. (code 104)"""

    code = 104
    name = "INCONSISTENT_CLUSTER_ID"


class TransactionalIdNotFoundError(BrokerResponseError):
    """The transactional id does not exist. (code 105)"""

    code = 105
    name = "TRANSACTIONAL_ID_NOT_FOUND"


class FetchSessionTopicIdError(BrokerResponseError):
    """The fetch session was used with inconsistent topic ids. (code 106)"""

    code = 106
    name = "FETCH_SESSION_TOPIC_ID_ERROR"
    retriable = True


class IneligibleReplicaError(BrokerResponseError):
    """The new in-sync replica set holds a replica that is not eligible. (code 107)"""

    code = 107
    name = "INELIGIBLE_REPLICA"


class NewLeaderElectedError(BrokerResponseError):
    """The partition state was updated, but the partition has a new leader. (code 108)"""

    code = 108
    name = "NEW_LEADER_ELECTED"


class OffsetMovedToTieredStorageError(BrokerResponseError):
    """The requested offset has moved to tiered storage. (code 109)"""

    code = 109
    name = "OFFSET_MOVED_TO_TIERED_STORAGE"


class FencedMemberEpochError(BrokerResponseError):
    """The member epoch is fenced: the member gives up its partitions and joins again. (code 110)"""

    code = 110
    name = "FENCED_MEMBER_EPOCH"


class UnreleasedInstanceIdError(BrokerResponseError):
    """Another member of the group still uses this group instance id. (code 111)"""

    code = 111
    name = "UNRELEASED_INSTANCE_ID"


class UnsupportedAssignorError(BrokerResponseError):
    """The group does not support the requested assignor (or its version range). (code 112)"""

    code = 112
    name = "UNSUPPORTED_ASSIGNOR"


class StaleMemberEpochError(BrokerResponseError):
    """The member epoch is stale: retry with the epoch of the latest heartbeat response.
    (code 113)"""

    code = 113
    name = "STALE_MEMBER_EPOCH"


class MismatchedEndpointTypeError(BrokerResponseError):
    """The request was sent to an endpoint of the wrong type (broker or controller). (code 114)"""

    code = 114
    name = "MISMATCHED_ENDPOINT_TYPE"


class UnsupportedEndpointTypeError(BrokerResponseError):
    """The endpoint type is not supported. (code 115)"""

    code = 115
    name = "UNSUPPORTED_ENDPOINT_TYPE"


class UnknownControllerIdError(BrokerResponseError):
    """The controller id is not known. (code 116)"""

    code = 116
    name = "UNKNOWN_CONTROLLER_ID"


class UnknownSubscriptionIdError(BrokerResponseError):
    """The client telemetry subscription id is not known or outdated. (code 117)"""

    code = 117
    name = "UNKNOWN_SUBSCRIPTION_ID"


class TelemetryTooLargeError(BrokerResponseError):
    """The client telemetry push is larger than the broker accepts. (code 118)"""

    code = 118
    name = "TELEMETRY_TOO_LARGE"


class InvalidRegistrationError(BrokerResponseError):
    """The controller considers the broker registration not valid. (code 119)"""

    code = 119
    name = "INVALID_REGISTRATION"


class TransactionAbortableError(BrokerResponseError):
    """The transaction hit an error; aborting it lets the producer continue. (code 120)"""

    code = 120
    name = "TRANSACTION_ABORTABLE"


class InvalidRecordStateError(BrokerResponseError):
    """The record's delivery state does not allow the acknowledgement (share groups). (code 121)"""

    code = 121
    name = "INVALID_RECORD_STATE"


class ShareSessionNotFoundError(BrokerResponseError):
    """The share session does not exist on the broker. (code 122)"""

    code = 122
    name = "SHARE_SESSION_NOT_FOUND"
    retriable = True


class InvalidShareSessionEpochError(BrokerResponseError):
    """The share session epoch does not match the broker's. (code 123)"""

    code = 123
    name = "INVALID_SHARE_SESSION_EPOCH"
    retriable = True


class FencedStateEpochError(BrokerResponseError):
    """The share-group state epoch does not match the share coordinator's. (code 124)"""

    code = 124
    name = "FENCED_STATE_EPOCH"


class InvalidVoterKeyError(BrokerResponseError):
    """The voter key does not match the replica that received it. (code 125)"""

    code = 125
    name = "INVALID_VOTER_KEY"


class DuplicateVoterError(BrokerResponseError):
    """The voter is already in the set of voters. (code 126)"""

    code = 126
    name = "DUPLICATE_VOTER"


class VoterNotFoundError(BrokerResponseError):
    """The voter is not in the set of voters. (code 127)"""

    code = 127
    name = "VOTER_NOT_FOUND"


class InvalidRegularExpressionError(BrokerResponseError):
    """The regular expression is not valid. (code 128)"""

    code = 128
    name = "INVALID_REGULAR_EXPRESSION"


class RebootstrapRequiredError(BrokerResponseError):
    """The client's metadata is stale; it should bootstrap again to get fresh metadata.
    (code 129)"""

    code = 129
    name = "REBOOTSTRAP_REQUIRED"


class StreamsInvalidTopologyError(BrokerResponseError):
    """The streams topology is not valid. (code 130)"""

    code = 130
    name = "STREAMS_INVALID_TOPOLOGY"


class StreamsInvalidTopologyEpochError(BrokerResponseError):
    """The streams topology epoch is not valid. (code 131)"""

    code = 131
    name = "STREAMS_INVALID_TOPOLOGY_EPOCH"


class StreamsTopologyFencedError(BrokerResponseError):
    """The streams topology epoch is out of date. (code 132)"""

    code = 132
    name = "STREAMS_TOPOLOGY_FENCED"


class ShareSessionLimitReachedError(BrokerResponseError):
    """The broker has reached its limit of share sessions. (code 133)"""

    code = 133
    name = "SHARE_SESSION_LIMIT_REACHED"


# END GENERATED


def for_code(code: int) -> type[BrokerResponseError] | None:
    """The exception class for a wire error code; None for 0 (no error) or an unknown code."""
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


#: Every code whose class has ``invalid_metadata`` set: after one of these the partition's
#: leader (or the topic) must be looked up again before retrying.
INVALID_METADATA_CODES: frozenset[int] = frozenset(
    code for code, cls in _BY_CODE.items() if cls.invalid_metadata
)
