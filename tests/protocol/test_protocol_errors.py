"""Broker error codes: one class per code, their flags, and the code -> class lookups."""

from __future__ import annotations

import pickle

import pytest

from kafka_async import errors
from kafka_async.errors import (
    BrokerResponseError,
    CoordinatorLoadInProgressError,
    KafkaError,
    NotCoordinatorError,
    NotLeaderOrFollowerError,
    TopicAuthorizationFailedError,
    UnknownBrokerError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
    error_for_code,
    for_code,
    raise_for_code,
)


def _code_classes() -> list[type[BrokerResponseError]]:
    return [
        obj
        for obj in vars(errors).values()
        if isinstance(obj, type)
        and issubclass(obj, BrokerResponseError)
        and obj is not BrokerResponseError
        and "code" in obj.__dict__
    ]


def test_every_code_from_minus_one_to_133_has_exactly_one_class() -> None:
    classes = _code_classes()
    codes = [cls.code for cls in classes]
    assert len(codes) == len(set(codes))
    assert set(codes) == {-1} | set(range(1, 134))
    names = [cls.name for cls in classes]
    assert len(names) == len(set(names))
    for cls in classes:
        assert for_code(cls.code) is cls
        assert cls.__name__.endswith("Error")
        assert cls.__doc__


def test_registry_rejects_a_second_class_for_a_code() -> None:
    with pytest.raises(TypeError, match="already belongs"):
        type("Dup", (BrokerResponseError,), {"code": 6, "name": "DUP"})


@pytest.mark.parametrize(
    ("code", "name", "retriable", "invalid_metadata"),
    [
        (-1, "UNKNOWN_SERVER_ERROR", False, False),
        (1, "OFFSET_OUT_OF_RANGE", False, False),
        (2, "CORRUPT_MESSAGE", True, False),
        (3, "UNKNOWN_TOPIC_OR_PARTITION", True, True),
        (5, "LEADER_NOT_AVAILABLE", True, True),
        (6, "NOT_LEADER_OR_FOLLOWER", True, True),
        (7, "REQUEST_TIMED_OUT", True, False),
        (10, "MESSAGE_TOO_LARGE", False, False),
        (14, "COORDINATOR_LOAD_IN_PROGRESS", True, False),
        (15, "COORDINATOR_NOT_AVAILABLE", True, False),
        (16, "NOT_COORDINATOR", True, False),
        (19, "NOT_ENOUGH_REPLICAS", True, False),
        (20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", True, False),
        (22, "ILLEGAL_GENERATION", False, False),
        (27, "REBALANCE_IN_PROGRESS", False, False),
        (29, "TOPIC_AUTHORIZATION_FAILED", False, False),
        (36, "TOPIC_ALREADY_EXISTS", False, False),
        (45, "OUT_OF_ORDER_SEQUENCE_NUMBER", False, False),
        (47, "INVALID_PRODUCER_EPOCH", False, False),
        (51, "CONCURRENT_TRANSACTIONS", True, False),
        (56, "KAFKA_STORAGE_ERROR", True, True),
        (74, "FENCED_LEADER_EPOCH", True, True),
        (75, "UNKNOWN_LEADER_EPOCH", True, True),
        (89, "THROTTLING_QUOTA_EXCEEDED", True, False),
        (90, "PRODUCER_FENCED", False, False),
        (100, "UNKNOWN_TOPIC_ID", True, True),
        (120, "TRANSACTION_ABORTABLE", False, False),
    ],
)
def test_well_known_flags(code: int, name: str, retriable: bool, invalid_metadata: bool) -> None:
    cls = for_code(code)
    assert cls is not None
    assert cls.name == name
    assert cls.retriable is retriable
    assert cls.invalid_metadata is invalid_metadata


def test_invalid_metadata_implies_retriable() -> None:
    for cls in _code_classes():
        if cls.invalid_metadata or cls.invalid_coordinator:
            assert cls.retriable, cls


def test_coordinator_errors() -> None:
    assert NotCoordinatorError.invalid_coordinator
    assert not CoordinatorLoadInProgressError.invalid_coordinator  # right broker, just busy


def test_lookups() -> None:
    assert for_code(0) is None
    assert for_code(6) is NotLeaderOrFollowerError
    assert for_code(-1) is UnknownServerError
    assert for_code(9999) is None
    raise_for_code(0)
    with pytest.raises(UnknownTopicOrPartitionError) as info:
        raise_for_code(3, "no such topic")
    assert info.value.message == "no such topic"
    assert str(info.value) == "[Error 3] UNKNOWN_TOPIC_OR_PARTITION: no such topic"
    with pytest.raises(UnknownBrokerError) as unknown:
        raise_for_code(9999)
    assert unknown.value.unknown_code == 9999
    assert "9999" in str(unknown.value)
    err = error_for_code(29)
    assert isinstance(err, TopicAuthorizationFailedError)
    assert isinstance(err, KafkaError)
    assert not err.retriable
    assert isinstance(error_for_code(4242), UnknownBrokerError)


def test_errors_survive_pickling() -> None:
    # Errors cross process boundaries (the Spark source): they must pickle with their message.
    err = pickle.loads(pickle.dumps(NotLeaderOrFollowerError("moved")))
    assert isinstance(err, NotLeaderOrFollowerError)
    assert err.message == "moved"
    unknown = pickle.loads(pickle.dumps(UnknownBrokerError(4242, "x")))
    assert unknown.unknown_code == 4242
    assert str(unknown) == "[Error 4242] UNKNOWN_ERROR_CODE: x"


def test_import_by_name() -> None:
    from kafka_async.errors import NotLeaderOrFollowerError as Imported

    assert Imported.code == 6
