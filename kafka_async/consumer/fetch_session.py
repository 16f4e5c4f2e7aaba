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

Topic ids (Fetch v13+, KIP-516): a session is either by name (v4-v12) or by id (v13+); the
broker keys it by (topic id, partition) and refuses a request of the other kind
(FETCH_SESSION_TOPIC_ID_ERROR). So when the kind changes (a topic without a known id joins a
session by id, or the broker's versions change), the next request is a full one that closes
the old session and opens a new one. A topic deleted and recreated under the same name has a
new id: in a session by id its partitions are forgotten under the old id and sent again under
the new one, in the same request.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .. import errors as E
from ..structs import TopicPartition

INITIAL_EPOCH = 0
#: Closes a session, or fetches without one.
FINAL_EPOCH = -1
INVALID_SESSION_ID = 0
MAX_EPOCH = 0x7FFFFFFF

FETCH_SESSION_ID_NOT_FOUND = E.FetchSessionIdNotFoundError.code
INVALID_FETCH_SESSION_EPOCH = E.InvalidFetchSessionEpochError.code
FETCH_SESSION_TOPIC_ID_ERROR = E.FetchSessionTopicIdError.code

_NO_IDS: Mapping[TopicPartition, uuid.UUID] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class PartitionFetch:
    """What we ask of one partition: where to start and how much at most."""

    fetch_offset: int
    max_bytes: int
    #: The leader epoch the metadata knows: the broker fences a request from a client whose
    #: view is older (FENCED_LEADER_EPOCH) or newer (UNKNOWN_LEADER_EPOCH) than its own.
    current_leader_epoch: int = -1
    log_start_offset: int = -1
    #: The leader epoch of the last record read (Fetch v12+): the broker answers with a
    #: diverging epoch when its log no longer matches ours there (KIP-320).
    last_fetched_epoch: int = -1


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
    #: Topic name -> id for every topic in ``fetching`` when the request names topics by id
    #: (Fetch v13+); None when it names them (v4-v12).
    topic_ids: Mapping[str, uuid.UUID] | None = None
    #: The id each partition of ``to_forget`` has in the session (requests by id): for a
    #: recreated topic the old one, while ``to_send`` carries the new.
    forget_ids: Mapping[TopicPartition, uuid.UUID] = field(default_factory=lambda: _NO_IDS)

    @property
    def is_full(self) -> bool:
        return self.epoch in (INITIAL_EPOCH, FINAL_EPOCH)

    @property
    def by_id(self) -> bool:
        return self.topic_ids is not None

    def topic_names(self) -> dict[int, str]:
        """Topic id (as ``UUID.int``) -> name for this request's topics: how a v13+ answer
        is read back. Keyed by the integer: a UUID's hash and equality are Python methods,
        an int's are not (this runs for every topic of every answer)."""
        if self.topic_ids is None:
            return {}
        return {i.int: n for n, i in self.topic_ids.items()}


class FetchSession:
    """The client side of one broker's fetch session."""

    def __init__(self, node_id: int, *, enabled: bool = True) -> None:
        self.node_id = node_id
        self.enabled = enabled
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH if enabled else FINAL_EPOCH
        #: What the broker holds for us (as of the last successful response).
        self.partitions: dict[TopicPartition, PartitionFetch] = {}
        #: The ids the broker holds the session's topics under (a session by id), or None
        #: (a session by name, or none).
        self.topic_ids: dict[str, uuid.UUID] | None = None
        self.full_requests = 0
        self.incremental_requests = 0
        #: Partitions forgotten under an old topic id and sent again under the new one.
        self.replaced_partitions = 0

    def plan(
        self,
        wanted: Mapping[TopicPartition, PartitionFetch],
        topic_ids: Mapping[str, uuid.UUID] | None = None,
    ) -> FetchPlan:
        """The next request for the partitions in ``wanted`` (with their current state).

        ``topic_ids``: name -> id of the topics in ``wanted`` (exactly those) when the
        request will name topics by id (Fetch v13+), None when by name.
        """
        ids = None if topic_ids is None else dict(topic_ids)
        if self.epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            self.full_requests += 1
            everything = dict(wanted)
            return FetchPlan(self.session_id, self.epoch, everything, (), everything, ids, _NO_IDS)
        if (ids is None) != (self.topic_ids is None):
            # The session is of the other kind (by name / by id): close it and open a new
            # one with a full request (session id kept, epoch 0).
            self.full_requests += 1
            everything = dict(wanted)
            return FetchPlan(
                self.session_id, INITIAL_EPOCH, everything, (), everything, ids, _NO_IDS
            )
        self.incremental_requests += 1
        held = self.partitions
        old_ids = self.topic_ids or {}
        changed: dict[TopicPartition, PartitionFetch] = {}
        forget: list[TopicPartition] = []
        forget_ids: dict[TopicPartition, uuid.UUID] = {}
        for tp, pf in wanted.items():
            prev = held.get(tp)
            if ids is not None and prev is not None and old_ids.get(tp.topic) != ids[tp.topic]:
                # Recreated under the same name: the broker holds the old topic's partition.
                forget.append(tp)
                forget_ids[tp] = old_ids[tp.topic]
                self.replaced_partitions += 1
                changed[tp] = pf
            elif prev != pf:
                changed[tp] = pf
        for tp in held:
            if tp not in wanted:
                forget.append(tp)
                if ids is not None:
                    forget_ids[tp] = old_ids[tp.topic]
        return FetchPlan(
            self.session_id,
            self.epoch,
            changed,
            tuple(forget),
            dict(wanted),
            ids,
            MappingProxyType(forget_ids) if forget_ids else _NO_IDS,
        )

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
        self.topic_ids = None if plan.topic_ids is None else dict(plan.topic_ids)

    def on_failure(self) -> None:
        """The request failed (connection error, timeout): its outcome on the broker is
        unknown, so the next request must be a full one."""
        self.reset()

    def reset(self) -> None:
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH if self.enabled else FINAL_EPOCH
        self.partitions = {}
        self.topic_ids = None


__all__ = [
    "FETCH_SESSION_ID_NOT_FOUND",
    "FETCH_SESSION_TOPIC_ID_ERROR",
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "INVALID_FETCH_SESSION_EPOCH",
    "FetchPlan",
    "FetchSession",
    "PartitionFetch",
]
