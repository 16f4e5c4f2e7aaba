"""The pure parts of removing group members: naming members, the LeaveGroup body, and
reading its answer (no broker; the broker tests are in test_admin_group_members.py)."""

from __future__ import annotations

import pytest

from kafka_async.admin import MemberToRemove
from kafka_async.admin.group_members import leave_request, leave_results, members_to_remove
from kafka_async.errors import ConfigError, FencedInstanceIdError, UnknownMemberIdError
from kafka_async.protocol.apis.leave_group import LeaveGroupResponse, MemberResponse


def test_members_are_instance_ids_or_member_to_remove_values() -> None:
    got = members_to_remove(["a", MemberToRemove(member_id="m-1")])
    assert [m.key for m in got] == ["a", "m-1"]
    with pytest.raises(ConfigError, match="twice"):
        members_to_remove(["a", MemberToRemove(group_instance_id="a")])
    with pytest.raises(ConfigError):
        MemberToRemove()
    with pytest.raises(ConfigError):
        members_to_remove([3])  # type: ignore[list-item]


def test_the_request_names_every_member_with_the_admin_reason() -> None:
    body = leave_request("g", members_to_remove(["a", "b"]), "rolling restart")
    assert [(m.member_id, m.group_instance_id) for m in body.members] == [("", "a"), ("", "b")]
    assert {m.reason for m in body.members} == {"member was removed by an admin: rolling restart"}
    assert leave_request("g", members_to_remove(["a"]), None).members[0].reason == (
        "member was removed by an admin"
    )


def test_results_per_member_and_the_ones_the_answer_leaves_out() -> None:
    asked = members_to_remove(["a", "b", "c"])
    resp = LeaveGroupResponse(
        error_code=0,
        members=[
            MemberResponse(member_id="", group_instance_id="a", error_code=0),
            MemberResponse(
                member_id="", group_instance_id="b", error_code=FencedInstanceIdError.code
            ),
        ],
    )
    got = leave_results(resp, asked)
    assert list(got) == ["a", "b", "c"]
    assert got["a"].error is None
    assert isinstance(got["b"].error, FencedInstanceIdError)
    assert isinstance(got["c"].error, UnknownMemberIdError)
