"""Metadata recovery decisions (KIP-899, KIP-1102; cluster/recovery.py, pure)."""

from __future__ import annotations

from kafka_async.cluster.recovery import (
    REBOOTSTRAP_REQUIRED,
    Reason,
    RecoveryPolicy,
    RecoveryState,
    Target,
    cluster_changed,
)
from kafka_async.net.config import ClientConfig


def state(rebootstrap: bool = True, trigger: float = 300.0) -> RecoveryState:
    return RecoveryState(RecoveryPolicy(rebootstrap=rebootstrap, trigger=trigger))


def test_policy_from_settings() -> None:
    default = RecoveryPolicy.from_config(ClientConfig())
    assert default == RecoveryPolicy(rebootstrap=True, trigger=300.0)
    none = RecoveryPolicy.from_config(
        ClientConfig(
            metadata_recovery_strategy="none", metadata_recovery_rebootstrap_trigger_ms=1500
        )
    )
    assert none == RecoveryPolicy(rebootstrap=False, trigger=1.5)
    assert REBOOTSTRAP_REQUIRED == 129


def test_first_bootstrap_is_not_a_rebootstrap() -> None:
    s = state()
    s.attempt(0.0)
    assert s.choose(0.0, have_brokers=False, known_left=False) == (Target.BOOTSTRAP, None)
    assert s.rebootstraps == 0


def test_known_brokers_first_then_rebootstrap_when_all_failed() -> None:
    s = state()
    s.attempt(10.0)
    assert s.choose(10.0, have_brokers=True, known_left=True) == (Target.KNOWN, None)
    target, reason = s.choose(11.0, have_brokers=True, known_left=False)
    assert (target, reason) == (Target.BOOTSTRAP, Reason.UNREACHABLE)
    assert s.rebootstraps == 1
    assert s.last_reason is Reason.UNREACHABLE
    # Until an answer comes, only the bootstrap servers, and no second count.
    assert s.choose(12.0, have_brokers=True, known_left=True) == (Target.BOOTSTRAP, None)
    assert s.rebootstraps == 1
    assert s.answered() is True
    assert s.choose(13.0, have_brokers=True, known_left=True) == (Target.KNOWN, None)
    assert s.answered() is False


def test_strategy_none_keeps_to_the_known_brokers() -> None:
    s = state(rebootstrap=False, trigger=1.0)
    s.attempt(0.0)
    assert s.choose(500.0, have_brokers=True, known_left=False) == (Target.RETRY_KNOWN, None)
    assert s.rebootstrap_required() is False
    assert s.choose(501.0, have_brokers=True, known_left=True) == (Target.KNOWN, None)
    assert s.rebootstraps == 0


def test_trigger_counts_from_the_first_failing_attempt() -> None:
    s = state(trigger=5.0)
    s.attempt(100.0)
    s.attempt(103.0)  # a later round of the same failing stretch
    assert s.choose(104.9, have_brokers=True, known_left=True) == (Target.KNOWN, None)
    assert s.seconds_without_metadata(104.0) == 4.0
    assert s.choose(105.0, have_brokers=True, known_left=True) == (
        Target.BOOTSTRAP,
        Reason.TRIGGER,
    )
    s.answered()
    assert s.seconds_without_metadata(200.0) == 0.0
    s.attempt(200.0)  # a fresh stretch starts the clock again
    assert s.choose(204.0, have_brokers=True, known_left=True) == (Target.KNOWN, None)


def test_rebootstrap_required_starts_one_at_the_next_choice() -> None:
    s = state()
    s.attempt(0.0)
    assert s.rebootstrap_required() is True
    assert s.choose(0.1, have_brokers=True, known_left=True) == (Target.BOOTSTRAP, Reason.REQUIRED)
    # A bootstrap server answering it again during the rebootstrap: just a failure.
    assert s.rebootstrap_required() is False
    assert s.rebootstraps == 1


def test_cluster_changed() -> None:
    assert cluster_changed("a", "b")
    assert not cluster_changed("a", "a")
    assert not cluster_changed(None, "a")
    assert not cluster_changed("a", None)
