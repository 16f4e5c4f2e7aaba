"""aiokafka's error names, bound to kafka_async's exception classes.

Every class ``aiokafka.errors`` defines has a name here. Where kafka_async raises an error of
the same meaning, the name is an *alias* of kafka_async's class (``NotLeaderForPartitionError``
is :class:`kafka_async.errors.NotLeaderOrFollowerError`), so an ``except`` clause written for
aiokafka catches what kafka_async raises. Names with no kafka_async counterpart are new
classes deriving from :class:`kafka_async.errors.KafkaError`; the drop-in's clients raise them
where aiokafka does (``ConsumerStoppedError``, ``IllegalStateError``, ``IllegalOperation``).

Differences that remain (see the migration guide): ``KafkaError`` derives from ``Exception``
(aiokafka's from ``RuntimeError``); a broker error's code is ``code`` and its Kafka name
``name`` (aiokafka: ``errno`` and ``message``), ``message`` is the text the broker or client
gave; several aiokafka names share one class here (``KafkaConfigurationError`` and
``IllegalArgumentError`` are both :class:`~kafka_async.errors.ConfigError`).
"""

from __future__ import annotations

from kafka_async import errors as _k
from kafka_async.consumer import errors as _ck

KafkaError = _k.KafkaError
BrokerResponseError = _k.BrokerResponseError

# -- aiokafka's client-side errors -------------------------------------------------------------

#: Bad arguments (aiokafka: wrong ``NewTopic`` fields, bad settings); kafka_async's ConfigError.
IllegalArgumentError = _k.ConfigError
KafkaConfigurationError = _k.ConfigError
NoBrokersAvailable = _k.NoBrokersAvailableError
KafkaProtocolError = _k.ProtocolDecodeError
IncompatibleBrokerVersion = _k.IncompatibleBrokerVersionError
CommitFailedError = _ck.CommitFailedError
NoOffsetForPartitionError = _ck.NoOffsetForPartitionError
KafkaTimeoutError = _k.KafkaTimeoutError
KafkaConnectionError = _k.KafkaConnectionError
UnsupportedCodecError = _k.UnsupportedCodecError
RecordTooLargeError = _k.RecordTooLargeClientError
#: SASL authentication refused by the broker (code 58 as well).
AuthenticationFailedError = _k.SaslAuthenticationFailedError
#: The broker fenced this transactional producer (a newer instance, or the transaction timed
#: out).
ProducerFenced = _k.ProducerFencedError


class IllegalStateError(KafkaError):
    """A call that the client's current state does not allow (a partition not assigned)."""


class NodeNotReadyError(KafkaError):
    """A broker connection is not ready (kept for aiokafka code; kafka_async retries)."""

    retriable = True


class CorrelationIdError(_k.ProtocolDecodeError):
    """A response did not match its request (kept for aiokafka code)."""

    retriable = True


class Cancelled(KafkaError):
    """A request was cancelled (kept for aiokafka code)."""

    retriable = True


class TooManyInFlightRequests(KafkaError):
    """Too many unanswered requests (kept for aiokafka code)."""

    retriable = True


class StaleMetadata(KafkaError):
    """Metadata was out of date (kept for aiokafka code)."""

    retriable = True


class MetadataEmptyBrokerList(KafkaError):
    """A metadata response listed no broker (kept for aiokafka code)."""

    retriable = True


class UnrecognizedBrokerVersion(KafkaError):
    """The broker's version could not be told (kept for aiokafka code)."""


class AuthenticationMethodNotSupported(KafkaError):
    """The SASL mechanism is not supported here (kept for aiokafka code)."""


class KafkaUnavailableError(KafkaError):
    """Kafka could not be reached (kept for aiokafka code)."""


class QuotaViolationError(KafkaError):
    """A quota was exceeded (kept for aiokafka code)."""


class ConsumerStoppedError(_k.ClientClosedError):
    """Raised by ``getone``/``getmany`` of a stopped consumer (``async for`` ends instead).

    A :class:`kafka_async.errors.ClientClosedError`, so code written for either catches it.
    """


class IllegalOperation(KafkaError):
    """An operation the configuration does not allow: a commit without ``group_id``, a
    transaction without ``transactional_id``, a send outside a transaction."""


class ProducerClosed(_k.ClientClosedError):
    """The producer was stopped."""


class NoError(BrokerResponseError):
    """Error code 0 (no error), as ``for_code(0)`` returns it."""


# Set after the class exists: a ``code`` in the class body would register 0 in
# kafka_async's code table.
NoError.code = 0
NoError.name = "NONE"

# -- broker errors by aiokafka's names (each the kafka_async class of the same code) ----------

UnknownError = _k.UnknownServerError
OffsetOutOfRangeError = _k.OffsetOutOfRangeError
CorruptRecordException = _k.CorruptMessageError
InvalidMessageError = _k.CorruptMessageError
UnknownTopicOrPartitionError = _k.UnknownTopicOrPartitionError
InvalidFetchRequestError = _k.InvalidFetchSizeError
LeaderNotAvailableError = _k.LeaderNotAvailableError
NotLeaderForPartitionError = _k.NotLeaderOrFollowerError
RequestTimedOutError = _k.RequestTimedOutError
BrokerNotAvailableError = _k.BrokerNotAvailableError
ReplicaNotAvailableError = _k.ReplicaNotAvailableError
MessageSizeTooLargeError = _k.MessageTooLargeError
StaleControllerEpochError = _k.StaleControllerEpochError
OffsetMetadataTooLargeError = _k.OffsetMetadataTooLargeError
StaleLeaderEpochCodeError = _k.NetworkError
GroupLoadInProgressError = _k.CoordinatorLoadInProgressError
CoordinatorLoadInProgressError = _k.CoordinatorLoadInProgressError
GroupCoordinatorNotAvailableError = _k.CoordinatorNotAvailableError
CoordinatorNotAvailableError = _k.CoordinatorNotAvailableError
NotCoordinatorForGroupError = _k.NotCoordinatorError
NotCoordinatorError = _k.NotCoordinatorError
InvalidTopicError = _k.InvalidTopicError
RecordListTooLargeError = _k.RecordListTooLargeError
NotEnoughReplicasError = _k.NotEnoughReplicasError
NotEnoughReplicasAfterAppendError = _k.NotEnoughReplicasAfterAppendError
InvalidRequiredAcksError = _k.InvalidRequiredAcksError
IllegalGenerationError = _k.IllegalGenerationError
InconsistentGroupProtocolError = _k.InconsistentGroupProtocolError
InvalidGroupIdError = _k.InvalidGroupIdError
UnknownMemberIdError = _k.UnknownMemberIdError
InvalidSessionTimeoutError = _k.InvalidSessionTimeoutError
RebalanceInProgressError = _k.RebalanceInProgressError
InvalidCommitOffsetSizeError = _k.InvalidCommitOffsetSizeError
TopicAuthorizationFailedError = _k.TopicAuthorizationFailedError
GroupAuthorizationFailedError = _k.GroupAuthorizationFailedError
ClusterAuthorizationFailedError = _k.ClusterAuthorizationFailedError
InvalidTimestampError = _k.InvalidTimestampError
UnsupportedSaslMechanismError = _k.UnsupportedSaslMechanismError
IllegalSaslStateError = _k.IllegalSaslStateError
UnsupportedVersionError = _k.UnsupportedVersionError
TopicAlreadyExistsError = _k.TopicAlreadyExistsError
InvalidPartitionsError = _k.InvalidPartitionsError
InvalidReplicationFactorError = _k.InvalidReplicationFactorError
InvalidReplicationAssignmentError = _k.InvalidReplicaAssignmentError
InvalidConfigurationError = _k.InvalidConfigError
NotControllerError = _k.NotControllerError
InvalidRequestError = _k.InvalidRequestError
UnsupportedForMessageFormatError = _k.UnsupportedForMessageFormatError
PolicyViolationError = _k.PolicyViolationError
OutOfOrderSequenceNumber = _k.OutOfOrderSequenceNumberError
DuplicateSequenceNumber = _k.DuplicateSequenceNumberError
InvalidProducerEpoch = _k.InvalidProducerEpochError
InvalidTxnState = _k.InvalidTxnStateError
InvalidProducerIdMapping = _k.InvalidProducerIdMappingError
InvalidTransactionTimeout = _k.InvalidTransactionTimeoutError
ConcurrentTransactions = _k.ConcurrentTransactionsError
TransactionCoordinatorFenced = _k.TransactionCoordinatorFencedError
TransactionalIdAuthorizationFailed = _k.TransactionalIdAuthorizationFailedError
SecurityDisabled = _k.SecurityDisabledError
OperationNotAttempted = _k.OperationNotAttemptedError
KafkaStorageError = _k.KafkaStorageError
LogDirNotFound = _k.LogDirNotFoundError
SaslAuthenticationFailed = _k.SaslAuthenticationFailedError
UnknownProducerId = _k.UnknownProducerIdError
ReassignmentInProgress = _k.ReassignmentInProgressError
DelegationTokenAuthDisabled = _k.DelegationTokenAuthDisabledError
DelegationTokenNotFound = _k.DelegationTokenNotFoundError
DelegationTokenOwnerMismatch = _k.DelegationTokenOwnerMismatchError
DelegationTokenRequestNotAllowed = _k.DelegationTokenRequestNotAllowedError
DelegationTokenAuthorizationFailed = _k.DelegationTokenAuthorizationFailedError
DelegationTokenExpired = _k.DelegationTokenExpiredError
InvalidPrincipalType = _k.InvalidPrincipalTypeError
NonEmptyGroup = _k.NonEmptyGroupError
GroupIdNotFound = _k.GroupIdNotFoundError
FetchSessionIdNotFound = _k.FetchSessionIdNotFoundError
InvalidFetchSessionEpoch = _k.InvalidFetchSessionEpochError
ListenerNotFound = _k.ListenerNotFoundError
MemberIdRequired = _k.MemberIdRequiredError


def for_code(error_code: int) -> type[BrokerResponseError]:
    """The class of a wire error code, as aiokafka's ``for_code``: ``NoError`` for 0,
    ``UnknownError`` for a code not known."""
    if error_code == 0:
        return NoError
    return _k.for_code(error_code) or UnknownError
