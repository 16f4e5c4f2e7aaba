"""Metadata recovery (KIP-899, KIP-1102): when a client goes back to its bootstrap servers.

A client learns the cluster's brokers from its first Metadata answer and from then on asks
those brokers. If they are all gone (a cluster replaced behind the same DNS name, or every
node restarted on new addresses), asking them for ever cannot help. With
``metadata_recovery_strategy="rebootstrap"`` (the default, as in the Java client since
Kafka 4.0) the client *rebootstraps*: it closes its connections to the known brokers and
asks the bootstrap servers again, resolving their host names anew (every connect resolves
the name, so a DNS change is seen), until one answers. It does so when

* every known broker failed to give metadata within one metadata round (KIP-899),
* a broker answered Metadata (v13+) with the top-level error REBOOTSTRAP_REQUIRED (KIP-1102),
* no metadata came from any broker for ``metadata_recovery_rebootstrap_trigger_ms``
  (default 5 minutes) of trying, even though some broker accepts connections (KIP-1102).

Once a rebootstrap began, metadata is asked only of the bootstrap servers until one
answers; that answer replaces the broker list, and connections to brokers whose address
changed or that left are closed (``ConnectionPool.update_brokers``). With ``"none"`` the
client keeps asking the brokers it knows (the bootstrap servers serve the first request
only), which is the Java client's behaviour before Kafka 4.0.

A different cluster behind the bootstrap servers (another cluster id): the Java client
does not refuse it (it logs the cluster id it now sees); we do the same and log a WARNING
naming both ids. Topics are then matched by name; a topic whose id changed is treated as
recreated (leader epochs start over, see ``metadata.py``), and a producer's or consumer's
state that the new cluster does not know (producer ids, offsets) fails as it would after
any such change.

This module holds the decisions only (plain state, no I/O); ``ClusterClient`` acts on them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from .. import errors as E

#: The top-level Metadata error (v13+) by which a broker asks clients to rebootstrap.
REBOOTSTRAP_REQUIRED = E.RebootstrapRequiredError.code


class Reason(enum.Enum):
    """Why a rebootstrap began."""

    UNREACHABLE = "every known broker failed to answer Metadata"
    REQUIRED = "a broker answered REBOOTSTRAP_REQUIRED"
    TRIGGER = "no metadata for metadata_recovery_rebootstrap_trigger_ms"


class Target(enum.Enum):
    """Where the next Metadata request of a round goes."""

    #: A known broker not yet tried in this round.
    KNOWN = "known"
    #: The bootstrap servers (the first bootstrap, or a rebootstrap under way).
    BOOTSTRAP = "bootstrap"
    #: Every known broker failed and the strategy is "none": start over with them.
    RETRY_KNOWN = "retry-known"


@dataclass(frozen=True, slots=True)
class RecoveryPolicy:
    """The two settings: whether to rebootstrap at all, and the no-metadata trigger (s)."""

    rebootstrap: bool = True
    trigger: float = 300.0

    @classmethod
    def from_config(cls, config: Any) -> RecoveryPolicy:
        """From a ``ClientConfig`` (``metadata_recovery_*`` settings)."""
        return cls(
            rebootstrap=config.metadata_recovery_strategy == "rebootstrap",
            trigger=config.metadata_recovery_rebootstrap_trigger_ms / 1000.0,
        )


@dataclass(slots=True)
class RecoveryState:
    """Where metadata recovery stands; every method is a state transition without I/O."""

    policy: RecoveryPolicy
    #: When the first Metadata attempt since the last answer began (None: the last
    #: attempt got an answer).
    failing_since: float | None = None
    #: A broker answered REBOOTSTRAP_REQUIRED and no rebootstrap has begun since.
    required: bool = False
    #: A rebootstrap is under way: ask only the bootstrap servers until one answers.
    rebootstrapping: bool = False
    #: Rebootstraps begun since the client started.
    rebootstraps: int = 0
    last_reason: Reason | None = None

    def attempt(self, now: float) -> None:
        """A metadata round begins (the trigger counts from the first failing one)."""
        if self.failing_since is None:
            self.failing_since = now

    def choose(
        self, now: float, *, have_brokers: bool, known_left: bool
    ) -> tuple[Target, Reason | None]:
        """Where the next request of a round goes, and the reason when a rebootstrap begins
        now (the caller then logs it and closes the connections to the known brokers).

        ``have_brokers``: metadata named brokers before (False until the first answer);
        ``known_left``: some known broker has not failed yet in this round.
        """
        if self.rebootstrapping or not have_brokers:
            return Target.BOOTSTRAP, None
        reason = self._reason(now, known_left)
        if reason is not None:
            self.required = False
            self.rebootstrapping = True
            self.rebootstraps += 1
            self.last_reason = reason
            return Target.BOOTSTRAP, reason
        return (Target.KNOWN if known_left else Target.RETRY_KNOWN), None

    def _reason(self, now: float, known_left: bool) -> Reason | None:
        if not self.policy.rebootstrap:
            return None
        if self.required:
            return Reason.REQUIRED
        if self.failing_since is not None and now - self.failing_since >= self.policy.trigger:
            return Reason.TRIGGER
        if not known_left:
            return Reason.UNREACHABLE
        return None

    def rebootstrap_required(self) -> bool:
        """A broker answered REBOOTSTRAP_REQUIRED: True when that starts a rebootstrap (the
        round asks the bootstrap servers next); False with strategy "none", or when one is
        already under way (the answer then counts as a failure of that server)."""
        if not self.policy.rebootstrap or self.rebootstrapping:
            return False
        self.required = True
        return True

    def answered(self) -> bool:
        """Metadata arrived; True when it ends a rebootstrap."""
        ended = self.rebootstrapping
        self.failing_since = None
        self.required = False
        self.rebootstrapping = False
        return ended

    def seconds_without_metadata(self, now: float) -> float:
        """How long metadata has been failing (0.0 while it is not)."""
        return 0.0 if self.failing_since is None else now - self.failing_since


def cluster_changed(old: str | None, new: str | None) -> bool:
    """True when a Metadata answer names another cluster than the one known before."""
    return old is not None and new is not None and old != new
