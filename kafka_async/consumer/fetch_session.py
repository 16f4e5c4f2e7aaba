"""Incremental fetch sessions (KIP-227), as pure bookkeeping for one broker.

A full Fetch names every partition with its offset. With a session the broker remembers the
set, so later ("incremental") requests only carry partitions that are new or whose fetch
state changed, and list the ones to drop in ``forgotten_topics_data``; the broker likewise
only answers partitions that have something to say. For a consumer reading many partitions
this shrinks every request and response.

The (session id, epoch) pair sequences requests: epoch 0 asks for a new session, epoch N>0
continues session ``session_id`` and must be the previous epoch + 1, so requests of one
session are strictly one at a time. A broker that does not do sessions answers session id 0,
and every request stays a full one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..structs import TopicPartition

INITIAL_EPOCH = 0
#: Closes a session, or fetches without one.
FINAL_EPOCH = -1
INVALID_SESSION_ID = 0
MAX_EPOCH = 0x7FFFFFFF

FETCH_SESSION_ID_NOT_FOUND = 70
INVALID_FETCH_SESSION_EPOCH = 71


@dataclass(frozen=True, slots=True)
class PartitionFetch:
    """What we ask of one partition: where to start and how much at most."""

    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    log_start_offset: int = -1


@dataclass(frozen=True)
class FetchPlan:
    """One request's session fields and partition lists."""

    session_id: int
    epoch: int
    #: Partitions to send (all of them for a full request).
    to_send: Mapping[TopicPartition, PartitionFetch]
    #: Partitions to drop from the session (incremental requests only).
    to_forget: tuple[TopicPartition, ...]
    #: Every partition this request fetches (session contents after it is applied).
    fetching: Mapping[TopicPartition, PartitionFetch]

    @property
    def is_full(self) -> bool:
        return self.epoch in (INITIAL_EPOCH, FINAL_EPOCH)


class FetchSession:
    """The client side of one broker's fetch session."""

    def __init__(self, node_id: int, *, enabled: bool = True) -> None:
        self.node_id = node_id
        self.enabled = enabled
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH if enabled else FINAL_EPOCH
        #: What the broker holds for us (as of the last successful response).
        self.partitions: dict[TopicPartition, PartitionFetch] = {}
        self.full_requests = 0
        self.incremental_requests = 0

    def plan(self, wanted: Mapping[TopicPartition, PartitionFetch]) -> FetchPlan:
        """The next request for the partitions in ``wanted`` (with their current state)."""
        if self.epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            self.full_requests += 1
            return FetchPlan(self.session_id, self.epoch, dict(wanted), (), dict(wanted))
        self.incremental_requests += 1
        changed = {tp: pf for tp, pf in wanted.items() if self.partitions.get(tp) != pf}
        forget = tuple(tp for tp in self.partitions if tp not in wanted)
        return FetchPlan(self.session_id, self.epoch, changed, forget, dict(wanted))

    def on_response(self, plan: FetchPlan, error_code: int, session_id: int) -> None:
        """Advance the session after the response to ``plan`` (any error resets it)."""
        if not self.enabled:
            return
        if error_code != 0:
            # FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH or any other top-level
            # error: start over with a full request asking for a new session.
            self.reset()
            return
        if session_id == INVALID_SESSION_ID:
            # The broker keeps no session for us; every request stays a full one.
            self.reset()
            return
        if plan.is_full:
            self.session_id = session_id
            self.epoch = 1
        else:
            self.epoch = 1 if self.epoch >= MAX_EPOCH else self.epoch + 1
        self.partitions = dict(plan.fetching)

    def on_failure(self) -> None:
        """The request failed (connection error, timeout): its outcome on the broker is
        unknown, so the next request must be a full one."""
        self.reset()

    def reset(self) -> None:
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH if self.enabled else FINAL_EPOCH
        self.partitions = {}


__all__ = [
    "FETCH_SESSION_ID_NOT_FOUND",
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "INVALID_FETCH_SESSION_EPOCH",
    "FetchPlan",
    "FetchSession",
    "PartitionFetch",
]
