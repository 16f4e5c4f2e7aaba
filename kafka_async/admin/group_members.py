"""Removing members from a consumer group, and listing config resources (KIP-1142).

:meth:`AdminClient.remove_members_from_consumer_group` and
:meth:`AdminClient.list_config_resources` delegate here.

Removing members is a LeaveGroup (v3+, Kafka 2.4+) sent to the group's coordinator on the
members' behalf, as the Java admin's ``removeMembersFromConsumerGroup`` does. It is meant for
static members (``group_instance_id``, KIP-345): a static member that stops does not leave, so
its partitions stay with it until its session times out; removing it hands them on at once.
A member named by instance id only is found by that id; "remove all" describes the group first
and names every member by member id and instance id. A removed member that is still running
learns it at its next heartbeat (UNKNOWN_MEMBER_ID) and joins again as a new member.

ListConfigResources (API 74) was ListClientMetricsResources in Kafka 3.7-4.0 (v0: client
metrics resources only); v1 (Kafka 4.1+, KIP-1142) lists resources of the types asked
(topics, brokers, groups, client metrics).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..cluster.routing import COORDINATOR_LOADING, COORDINATOR_MOVED, Deadline, Router
from ..errors import (
    ConfigError,
    IncompatibleBrokerVersionError,
    KafkaError,
    UnknownMemberIdError,
    error_for_code,
)
from ..protocol import apis
from ..protocol.apis.leave_group import LeaveGroupRequest, LeaveGroupResponse, MemberIdentity
from ..protocol.apis.list_config_resources import (
    ListConfigResourcesRequest,
    ListConfigResourcesResponse,
)
from .results import ResultMap
from .types import ConfigResource, ConfigResourceType

__all__ = ["MemberToRemove", "RemoveMemberResult"]

#: The reason the broker logs for a member removed by an admin (LeaveGroup v5+).
REMOVED_BY_ADMIN = "member was removed by an admin"


@dataclass(frozen=True)
class MemberToRemove:
    """A member to remove: a static member by ``group_instance_id`` (the usual case), or a
    member by ``member_id`` (with its instance id too, if it has one)."""

    group_instance_id: str | None = None
    member_id: str = ""

    def __post_init__(self) -> None:
        if not self.group_instance_id and not self.member_id:
            raise ConfigError("a member to remove needs a group_instance_id or a member_id")

    @property
    def key(self) -> str:
        """What the result map is keyed by: the instance id, else the member id."""
        return self.group_instance_id or self.member_id


@dataclass(frozen=True)
class RemoveMemberResult:
    """Outcome of removing one member (``error`` None: removed)."""

    group_instance_id: str | None
    member_id: str
    error: KafkaError | None = None


def members_to_remove(members: Iterable[str | MemberToRemove]) -> list[MemberToRemove]:
    """Instance ids (strings) and :class:`MemberToRemove` values, checked and unique."""
    out: list[MemberToRemove] = []
    seen: set[str] = set()
    for m in members:
        member = MemberToRemove(group_instance_id=m) if isinstance(m, str) else m
        if not isinstance(member, MemberToRemove):
            raise ConfigError(f"expected instance ids or MemberToRemove values, got {m!r}")
        if member.key in seen:
            raise ConfigError(f"member {member.key!r} named twice")
        seen.add(member.key)
        out.append(member)
    return out


def leave_request(
    group_id: str, members: Sequence[MemberToRemove], reason: str | None
) -> LeaveGroupRequest:
    why = REMOVED_BY_ADMIN if not reason else f"{REMOVED_BY_ADMIN}: {reason}"
    return LeaveGroupRequest(
        group_id=group_id,
        members=[
            MemberIdentity(member_id=m.member_id, group_instance_id=m.group_instance_id, reason=why)
            for m in members
        ],
    )


def leave_results(
    resp: LeaveGroupResponse, members: Sequence[MemberToRemove]
) -> dict[str, RemoveMemberResult]:
    """One result per member asked; a member the answer leaves out failed with the
    request-level error (or, with none, UNKNOWN_MEMBER_ID as the Java admin reports it)."""
    by_key: dict[str, RemoveMemberResult] = {}
    for r in resp.members:
        key = r.group_instance_id or r.member_id
        by_key[key] = RemoveMemberResult(
            r.group_instance_id,
            r.member_id,
            error_for_code(r.error_code, f"removing {key!r}") if r.error_code else None,
        )
    out: dict[str, RemoveMemberResult] = {}
    for m in members:
        got = by_key.get(m.key)
        if got is None:
            code = resp.error_code or UnknownMemberIdError.code
            got = RemoveMemberResult(
                m.group_instance_id, m.member_id, error_for_code(code, f"removing {m.key!r}")
            )
        out[m.key] = got
    return out


async def remove_members(
    router: Router,
    group_id: str,
    members: Sequence[MemberToRemove],
    *,
    reason: str | None,
    deadline: Deadline,
) -> ResultMap[str, RemoveMemberResult]:
    """LeaveGroup v3+ for ``members`` at the group's coordinator. A group-level refusal
    (GROUP_AUTHORIZATION_FAILED, the group unknown to a 4.x coordinator...) raises."""
    if not members:
        return ResultMap()

    def moved(_v: int, r: LeaveGroupResponse) -> bool:
        return r.error_code in COORDINATOR_MOVED | COORDINATOR_LOADING

    def build(version: int) -> LeaveGroupRequest:
        if version < 3:  # v0-v2 name one member by member id, and no static member
            raise IncompatibleBrokerVersionError(
                f"removing members needs LeaveGroup v3+ (Kafka 2.4+); the coordinator of "
                f"{group_id!r} offers v{version}"
            )
        return leave_request(group_id, members, reason)

    _, resp = await router.to_coordinator(group_id, apis.LEAVE_GROUP, build, deadline, moved=moved)
    router.note_errors([resp.error_code, *(r.error_code for r in resp.members)])
    if resp.error_code and not resp.members:
        raise error_for_code(resp.error_code, f"removing members of group {group_id!r}")
    return ResultMap(leave_results(resp, members))


# -- ListConfigResources (KIP-1142) -----------------------------------------------------------


async def list_config_resources(
    router: Router,
    resource_types: Sequence[ConfigResourceType],
    deadline: Deadline,
) -> list[ConfigResource]:
    """The config resources of ``resource_types`` (empty: every type the broker lists).

    v1 is needed for anything but client metrics resources; a broker that has only v0
    (Kafka 3.7-4.0: ListClientMetricsResources) is asked v0 when only client metrics are
    wanted, and otherwise ``IncompatibleBrokerVersionError`` says what it lacks, as is
    raised when a broker has no version of the API (before 3.7)."""
    types = [ConfigResourceType(t) for t in resource_types]
    if ConfigResourceType.UNKNOWN in types:
        raise ConfigError("list_config_resources: UNKNOWN is not a resource type")
    only_metrics = bool(types) and set(types) == {ConfigResourceType.CLIENT_METRICS}
    body = ListConfigResourcesRequest(resource_types=[int(t) for t in types])

    async def call() -> tuple[int, ListConfigResourcesResponse]:
        return await router.send(
            None,
            apis.LIST_CONFIG_RESOURCES,
            lambda _v: body,
            deadline,
            min_version=0 if only_metrics else 1,
        )

    try:
        version, resp = await router.with_retries(deadline, call)
    except IncompatibleBrokerVersionError as exc:
        need = "v0+ (ListClientMetricsResources)" if only_metrics else "v1+ (KIP-1142)"
        raise IncompatibleBrokerVersionError(
            f"list_config_resources needs ListConfigResources {need}, which the broker does "
            f"not advertise: {exc}"
        ) from exc
    router.note_errors([resp.error_code])
    if resp.error_code:
        raise error_for_code(resp.error_code, "ListConfigResources")
    out: list[ConfigResource] = []
    for r in resp.config_resources:
        rtype = r.resource_type if version >= 1 else int(ConfigResourceType.CLIENT_METRICS)
        try:
            kind = ConfigResourceType(rtype)
        except ValueError:
            continue  # a type this client does not know yet
        out.append(ConfigResource(kind, r.resource_name))
    return sorted(out, key=lambda c: (int(c.type), c.name))
