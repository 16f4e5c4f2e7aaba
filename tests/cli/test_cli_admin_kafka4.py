"""The ``kafka-async`` commands of the Kafka 4.x admin surface, run for real against the run's
broker: quotas, log-dirs, transactions, features, quorum and share-groups.

Each test names the APIs it needs (``requires_api``): a broker that does not advertise one
skips the test quoting what it advertises.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence

import anyio
import pytest

from kafka_async.admin import AdminClient
from tests.harness.admin_scenes import ShareGroupMember, open_hanging_transaction
from tests.harness.broker_gaps import confirm_broker_gap, java_admin_error

pytestmark = pytest.mark.integration


_ENV = {**os.environ, "NO_COLOR": "1", "KAFKA_BOOTSTRAP_SERVERS": "", "PYTHONUNBUFFERED": "1"}


def run(
    args: Sequence[str], *, bootstrap: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``kafka-async -b BOOTSTRAP --timeout 30 ARGS`` as a child process."""
    argv = [sys.executable, "-m", "kafka_async.cli", "-b", bootstrap, "--timeout", "30", *args]
    return subprocess.run(
        argv, input=stdin, capture_output=True, text=True, timeout=120, env=_ENV, check=False
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    """The output of a command that must have succeeded."""
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.stdout


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The one error line of a command that failed at run time (exit 1)."""
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kafka-async: error: ")
    return lines[0]


def usage_error(result: subprocess.CompletedProcess[str]) -> str:
    """The error line of a command refused for its arguments (exit 2, after the usage)."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("kafka-async: error: ")
    return last


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def _until(check: Callable[[], str], want: Callable[[str], bool], what: str) -> str:
    """Run ``check`` (a command's output) until ``want`` accepts it, at most 20 s."""
    deadline = time.monotonic() + 20
    last = ""
    while time.monotonic() < deadline:
        last = check()
        if want(last):
            return last
        time.sleep(0.3)
    pytest.fail(f"{what} not seen within 20 s; last output:\n{last}")


@pytest.mark.requires_api("DescribeClientQuotas", min_version=0)
@pytest.mark.requires_api("AlterClientQuotas", min_version=0)
def test_quotas_alter_and_describe(kafka_broker: str) -> None:
    user = _name("cli-user")
    entity = ["--user", user, "--client-id", "app"]
    dry = run(
        ["quotas", "alter", *entity, "--set", "producer_byte_rate=1024", "--dry-run"],
        bootstrap=kafka_broker,
    )
    assert "dry run" in dry.stderr
    ok(dry)
    ok(
        run(
            ["quotas", "alter", *entity, "--set", "producer_byte_rate=1024"], bootstrap=kafka_broker
        )
    )

    def described() -> str:
        return ok(run(["quotas", "describe", "--user", user], bootstrap=kafka_broker))

    out = _until(described, lambda o: "producer_byte_rate" in o, "the quota")
    assert f"client-id=app,user={user}" in out
    assert "1024" in out
    ok(run(["quotas", "alter", *entity, "--remove", "producer_byte_rate"], bootstrap=kafka_broker))
    _until(described, lambda o: "producer_byte_rate" not in o, "the quota removed")
    # Usage errors: exit 2, one line.
    assert "name the entity" in usage_error(
        run(["quotas", "alter", "--set", "a=1"], bootstrap=kafka_broker)
    )
    assert "must be a number" in usage_error(
        run(["quotas", "alter", "--user", user, "--set", "a=x"], bootstrap=kafka_broker)
    )


@pytest.mark.requires_api("DescribeLogDirs", min_version=1)
def test_log_dirs_describe(kafka_broker: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic(2)
    out = ok(run(["log-dirs", "describe", "--topic", topic, "--replicas"], bootstrap=kafka_broker))
    assert "LOG DIR" in out
    assert f"{topic}[0]" in out
    assert f"{topic}[1]" in out


@pytest.mark.requires_api("ListTransactions", min_version=0)
@pytest.mark.requires_api("DescribeTransactions", min_version=0)
@pytest.mark.requires_api("DescribeProducers", min_version=0)
@pytest.mark.requires_api("WriteTxnMarkers", min_version=0)
def test_transactions_list_describe_producers_abort_fence(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(1)
    txn = _name("cli-txn")
    open_hanging_transaction(kafka_broker, topic, txn)

    listed = ok(run(["transactions", "list", "--state", "Ongoing"], bootstrap=kafka_broker))
    assert txn in listed
    described = ok(run(["transactions", "describe", txn], bootstrap=kafka_broker))
    assert "Ongoing" in described
    assert f"{topic}[0]" in described
    producers = ok(run(["transactions", "producers", "-t", topic], bootstrap=kafka_broker))
    # The hanging transaction starts at offset 0 of partition 0.
    row = [line.split() for line in producers.splitlines()[1:] if line.strip()]
    assert [r[0] for r in row] == ["0"]
    assert row[0][-1] == "0"

    aborted = run(
        ["transactions", "abort", "-t", topic, "-p", "0", "--start-offset", "0"],
        bootstrap=kafka_broker,
    )
    ok(aborted)
    assert "aborted the transaction" in aborted.stderr
    _until(
        lambda: ok(run(["transactions", "producers", "-t", topic], bootstrap=kafka_broker)),
        lambda o: o.splitlines()[1].split()[-1] == "-",
        "no open transaction",
    )
    # Nothing starts at offset 0 any more: a clear error, exit 1.
    again = run(
        ["transactions", "abort", "-t", topic, "-p", "0", "--start-offset", "0"],
        bootstrap=kafka_broker,
    )
    assert "no open transaction starts at offset 0" in one_line_error(again)

    fenced = run(["transactions", "fence", txn], bootstrap=kafka_broker)
    ok(fenced)
    assert f"transactional id {txn}: fenced" in fenced.stderr
    no_spec = run(["transactions", "abort", "-t", topic, "-p", "0"], bootstrap=kafka_broker)
    assert "name the transaction" in usage_error(no_spec)


def _supported_features(bootstrap: str) -> list[str]:
    """The feature names the broker supports, from its ApiVersions answer (the admin client)."""

    async def ask() -> list[str]:
        async with AdminClient(bootstrap_servers=bootstrap) as admin:
            return sorted((await admin.describe_features()).supported)

    return anyio.run(ask)


@pytest.mark.requires_api("ApiVersions", min_version=3)
@pytest.mark.requires_api("UpdateFeatures", min_version=1)
def test_features_describe_and_dry_run_update(kafka_broker: str) -> None:
    supported = _supported_features(kafka_broker)
    if "metadata.version" not in supported:
        # A ZooKeeper-mode broker (3.x) advertises UpdateFeatures but has no such feature.
        pytest.skip(
            f"the broker supports no metadata.version feature (supported: {supported}): "
            "a ZooKeeper-mode broker"
        )
    out = ok(run(["features", "describe"], bootstrap=kafka_broker))
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:] if line.strip()}
    assert "metadata.version" in rows
    level = rows["metadata.version"][-1]
    dry = run(
        ["features", "update", f"metadata.version={level}", "--dry-run"], bootstrap=kafka_broker
    )
    ok(dry)
    assert "dry run" in dry.stderr
    too_high = run(
        ["features", "update", "metadata.version=999", "--dry-run"], bootstrap=kafka_broker
    )
    assert "metadata.version" in one_line_error(too_high)


@pytest.mark.requires_api("DescribeQuorum", min_version=0)
def test_quorum_describe(kafka_broker: str) -> None:
    out = ok(run(["quorum", "describe"], bootstrap=kafka_broker))
    assert out.startswith("leader: ")
    assert " leader " in out


@pytest.mark.requires_api("ShareGroupHeartbeat", min_version=1)
@pytest.mark.requires_api("ShareGroupDescribe", min_version=1)
@pytest.mark.requires_api("DescribeShareGroupOffsets", min_version=0)
@pytest.mark.requires_api("DeleteShareGroupOffsets", min_version=0)
def test_share_groups_commands(kafka_broker: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic(2)
    group = _name("cli-share")
    member = ShareGroupMember(kafka_broker, group, topic)

    # The member lives in its own event loop; the commands run as separate processes.
    with anyio.from_thread.start_blocking_portal() as portal:
        try:
            portal.call(member.join, 2)
            assert group in ok(run(["share-groups", "list"], bootstrap=kafka_broker))
            described = ok(run(["share-groups", "describe", group], bootstrap=kafka_broker))
            assert member.member_id in described
            assert f"{topic}[0]" in described
            offsets = ok(run(["share-groups", "offsets", group], bootstrap=kafka_broker))
            assert topic in offsets
            busy = run(["share-groups", "delete", group], bootstrap=kafka_broker)
            assert "NON_EMPTY_GROUP" in one_line_error(busy)
            plan = run(
                ["share-groups", "alter-offsets", group, "-t", topic, "--to", "beginning"],
                bootstrap=kafka_broker,
            )
            assert "dry run" in plan.stderr
            ok(plan)
        finally:
            portal.call(member.leave)

    _until(
        lambda: ok(run(["share-groups", "describe", group], bootstrap=kafka_broker)),
        lambda o: "state: Empty" in o,
        "the group empty",
    )
    deleted = run(["share-groups", "delete-offsets", group, topic], bootstrap=kafka_broker)
    ok(deleted)
    assert "state deleted" in deleted.stderr
    ok(run(["share-groups", "delete", group], bootstrap=kafka_broker))
    missing = run(["share-groups", "describe", group], bootstrap=kafka_broker)
    assert group in one_line_error(missing)


@pytest.mark.requires_api("DescribeUserScramCredentials", min_version=0)
@pytest.mark.requires_api("AlterUserScramCredentials", min_version=0)
def test_users_upsert_describe_delete(kafka_broker: str) -> None:
    user = _name("cli-scram")
    password = uuid.uuid4().hex
    both = ["--mechanism", "SCRAM-SHA-256", "--mechanism", "SCRAM-SHA-512"]
    made = run(
        ["users", "upsert", user, *both, "--iterations", "8192", "--password-stdin"],
        bootstrap=kafka_broker,
        stdin=password + "\n",
    )
    ok(made)
    assert f"user {user}: credentials stored" in made.stderr
    assert password not in made.stdout + made.stderr
    asked = run(["users", "describe", user], bootstrap=kafka_broker)
    if asked.returncode and "null array for non-nullable" in asked.stderr:
        # Tansu advertises DescribeUserScramCredentials but answers with a null results
        # array, which Kafka's schema does not allow. librdkafka reads it as empty; the Java
        # client (the reference) is asked the same: if it refuses it too, the gap is Tansu's.
        theirs = java_admin_error(kafka_broker, "admin.describeUserScramCredentials().all().get()")
        confirm_broker_gap(
            "DescribeUserScramCredentials", asked.stderr.strip(), theirs, peer="the Java client"
        )
    described = ok(asked)
    rows = [line.split() for line in described.splitlines()[1:] if line.strip()]
    assert sorted(rows) == [[user, "SCRAM-SHA-256", "8192"], [user, "SCRAM-SHA-512", "8192"]]
    ok(run(["users", "delete", user, *both], bootstrap=kafka_broker))
    gone = run(["users", "describe", user], bootstrap=kafka_broker)
    assert user in one_line_error(gone)
    # No password on a pipe without --password-stdin: a usage error, nothing sent.
    refused = run(
        ["users", "upsert", user, "--mechanism", "SCRAM-SHA-256"], bootstrap=kafka_broker, stdin=""
    )
    assert "--password-stdin" in usage_error(refused)


@pytest.mark.requires_api("ElectLeaders", min_version=1)
def test_leaders_elect(kafka_broker: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic(2)
    for extra in ([], ["--unclean"]):
        done = run(["leaders", "elect", "-t", topic, *extra], bootstrap=kafka_broker)
        ok(done)
        # Every partition is led by its preferred (and only in-sync) replica already.
        assert f"{topic}[0]: no election needed" in done.stderr
        assert f"{topic}[1]: no election needed" in done.stderr
    assert "--all-partitions" in usage_error(run(["leaders", "elect"], bootstrap=kafka_broker))
