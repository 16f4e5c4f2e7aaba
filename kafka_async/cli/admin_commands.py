"""``kafka-async`` commands for the Kafka 4.x admin surface: client quotas, log dirs,
transactions and producers, features, the metadata quorum, share groups, SCRAM users,
delegation tokens, leader election, removing consumer group members and listing config
resources.

Each is ``async def cmd_x(args, out) -> exit code``, like :mod:`kafka_async.cli.commands`;
:func:`add_parsers` registers their sub-commands on the top-level parser.
"""

from __future__ import annotations

import argparse
import datetime
import getpass
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from ..admin import (
    AbortTransactionSpec,
    AdminClient,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    DelegationToken,
    ElectionType,
    FeatureUpdate,
    FeatureUpgradeType,
    MemberToRemove,
    ScramDeletion,
    ScramUpsertion,
)
from ..admin.types import ConfigResourceType
from ..errors import ElectionNotNeededError, KafkaError
from ..structs import TopicPartition
from .commands import (
    open_admin,
    partitions_of,
    resolve_positions,
    selected_partitions,
)
from .output import Output
from .parsing import UsageError, parse_kv, parse_start

__all__ = [
    "add_parsers",
    "cmd_configs_list",
    "cmd_delegation_tokens_create",
    "cmd_delegation_tokens_describe",
    "cmd_delegation_tokens_expire",
    "cmd_delegation_tokens_renew",
    "cmd_features_describe",
    "cmd_features_update",
    "cmd_group_members_remove",
    "cmd_leaders_elect",
    "cmd_log_dirs_describe",
    "cmd_quorum_describe",
    "cmd_quotas_alter",
    "cmd_quotas_describe",
    "cmd_share_groups_alter_offsets",
    "cmd_share_groups_delete",
    "cmd_share_groups_delete_offsets",
    "cmd_share_groups_describe",
    "cmd_share_groups_list",
    "cmd_share_groups_offsets",
    "cmd_transactions_abort",
    "cmd_transactions_describe",
    "cmd_transactions_fence",
    "cmd_transactions_list",
    "cmd_transactions_producers",
    "cmd_users_delete",
    "cmd_users_describe",
    "cmd_users_upsert",
]

CommandAdder = Callable[..., argparse.ArgumentParser]


def _report(results: Any, out: Output, describe: Callable[[Any], str], done: str) -> int:
    """One line per item: the item and ``done``, or its error; exit 1 if any failed."""
    failed = 0
    for key, r in results.items():
        if r.error is None:
            out.success(f"{describe(key)}: {done}")
        else:
            failed += 1
            out.error(f"{describe(key)}: {r.error}")
    return 1 if failed else 0


# --------------------------------------------------------------------------------------------
# client quotas
# --------------------------------------------------------------------------------------------

_QUOTA_TYPES = (("user", "user"), ("client_id", "client-id"), ("ip", "ip"))


def _quota_entity(args: argparse.Namespace) -> ClientQuotaEntity:
    parts: list[tuple[str, str | None]] = []
    for attr, etype in _QUOTA_TYPES:
        name = getattr(args, attr)
        default = getattr(args, f"default_{attr}")
        if name is not None and default:
            raise UsageError(f"give --{etype} or --default-{etype}, not both")
        if name is not None:
            parts.append((etype, name))
        elif default:
            parts.append((etype, None))
    if not parts:
        raise UsageError("name the entity: --user, --client-id, --ip or a --default-... flag")
    return ClientQuotaEntity(tuple(parts))


def _quota_filters(args: argparse.Namespace) -> list[ClientQuotaFilter]:
    filters: list[ClientQuotaFilter] = []
    for attr, etype in _QUOTA_TYPES:
        name = getattr(args, attr)
        if name is not None and getattr(args, f"default_{attr}"):
            raise UsageError(f"give --{etype} or --default-{etype}, not both")
        if name is not None:
            filters.append(ClientQuotaFilter.exact(etype, name))
        elif getattr(args, f"default_{attr}"):
            filters.append(ClientQuotaFilter.default(etype))
    return filters


async def cmd_quotas_describe(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        quotas = await admin.describe_client_quotas(_quota_filters(args), strict=args.strict)
    out.table(
        ["ENTITY", "QUOTA", "VALUE"],
        [
            (str(entity), key, f"{value:g}")
            for entity, values in quotas.items()
            for key, value in sorted(values.items())
        ],
    )
    return 0


async def cmd_quotas_alter(args: argparse.Namespace, out: Output) -> int:
    entity = _quota_entity(args)
    ops: dict[str, float | None] = {}
    for pair in args.set or ():
        key, value = parse_kv(pair)
        try:
            ops[key] = float(value)
        except ValueError:
            raise UsageError(f"--set {pair!r}: the value must be a number") from None
    for key in args.remove or ():
        if key in ops:
            raise UsageError(f"quota {key!r} is both set and removed")
        ops[key] = None
    if not ops:
        raise UsageError("nothing to change: give --set NAME=VALUE or --remove NAME")
    async with open_admin(args) as admin:
        results = await admin.alter_client_quotas(
            [ClientQuotaAlteration(entity, ops)], validate_only=args.dry_run
        )
    return _report(
        results, out, str, "valid (dry run, nothing changed)" if args.dry_run else "altered"
    )


# --------------------------------------------------------------------------------------------
# log dirs
# --------------------------------------------------------------------------------------------


async def cmd_log_dirs_describe(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        partitions: list[TopicPartition] | None = None
        if args.topic:
            partitions = [
                TopicPartition(t, p) for t in args.topic for p in await partitions_of(admin, t)
            ]
        got = await admin.describe_log_dirs(args.broker or None, partitions)
    rows: list[tuple[object, ...]] = []
    failed = 0
    for broker, b in got.items():
        if b.error is not None:
            failed += 1
            out.error(f"broker {broker}: {b.error}")
            continue
        for path, d in b.log_dirs.items():
            if d.error is not None:
                rows.append((broker, path, "-", "-", "-", "-", str(d.error)))
                continue
            rows.append(
                (
                    broker,
                    path,
                    "-" if d.total_bytes < 0 else d.total_bytes,
                    "-" if d.usable_bytes < 0 else d.usable_bytes,
                    len(d.replicas),
                    sum(r.size for r in d.replicas.values()),
                    "",
                )
            )
            if args.replicas:
                for tp, r in d.replicas.items():
                    future = " (future)" if r.is_future else ""
                    rows.append(
                        ("", f"  {tp.topic}[{tp.partition}]{future}", "", "", "", r.size, "")
                    )
    out.table(["BROKER", "LOG DIR", "TOTAL", "USABLE", "REPLICAS", "BYTES", "ERROR"], rows)
    return 1 if failed else 0


# --------------------------------------------------------------------------------------------
# transactions and producers
# --------------------------------------------------------------------------------------------


async def cmd_transactions_list(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        listed = await admin.list_transactions(
            states=args.state or None,
            producer_ids=args.producer_id or None,
            duration_ms=args.min_duration_ms,
            transactional_id_pattern=args.pattern,
        )
    out.table(
        ["TRANSACTIONAL ID", "PRODUCER ID", "STATE", "COORDINATOR"],
        [(t.transactional_id, t.producer_id, t.state, t.coordinator) for t in listed],
    )
    return 0


async def cmd_transactions_describe(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        got = await admin.describe_transactions(args.transactional_ids)
    now = int(time.time() * 1000)
    rows: list[tuple[object, ...]] = []
    failed = 0
    for tid, d in got.items():
        if d.error is not None:
            failed += 1
            out.error(f"transactional id {tid}: {d.error}")
            continue
        running = f"{(now - d.start_time_ms) / 1000:.1f}s" if d.start_time_ms >= 0 else "-"
        partitions = ",".join(f"{tp.topic}[{tp.partition}]" for tp in d.partitions) or "-"
        rows.append(
            (tid, d.state, d.producer_id, d.producer_epoch, d.timeout_ms, running, partitions)
        )
    out.table(
        [
            "TRANSACTIONAL ID",
            "STATE",
            "PRODUCER ID",
            "EPOCH",
            "TIMEOUT MS",
            "RUNNING",
            "PARTITIONS",
        ],
        rows,
    )
    return 1 if failed else 0


async def _producers(
    admin: AdminClient, topic: str, partitions: str | None
) -> list[tuple[TopicPartition, Any]]:
    parts = selected_partitions(await partitions_of(admin, topic), partitions, topic)
    got = await admin.describe_producers(
        [TopicPartition(topic, p) for p in parts], raise_on_error=True
    )
    return [(tp, p) for tp, r in got.items() for p in r.producers]


async def cmd_transactions_producers(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        producers = await _producers(admin, args.topic, args.partitions)
    out.table(
        [
            "PARTITION",
            "PRODUCER ID",
            "EPOCH",
            "LAST SEQUENCE",
            "LAST TIMESTAMP",
            "COORDINATOR EPOCH",
            "OPEN TXN START",
        ],
        [
            (
                tp.partition,
                p.producer_id,
                p.producer_epoch,
                p.last_sequence,
                p.last_timestamp,
                p.coordinator_epoch,
                p.current_transaction_start_offset
                if p.current_transaction_start_offset >= 0
                else "-",
            )
            for tp, p in producers
        ],
    )
    return 0


async def cmd_transactions_abort(args: argparse.Namespace, out: Output) -> int:
    tp = TopicPartition(args.topic, args.partition)
    explicit = (args.producer_id, args.producer_epoch, args.coordinator_epoch)
    if args.start_offset is None and None in explicit:
        raise UsageError(
            "name the transaction: --start-offset OFFSET, or --producer-id, --producer-epoch "
            "and --coordinator-epoch"
        )
    if args.start_offset is not None and any(v is not None for v in explicit):
        raise UsageError("give --start-offset or the producer ids, not both")
    async with open_admin(args) as admin:
        if args.start_offset is not None:
            found = [
                p
                for _, p in await _producers(admin, args.topic, str(args.partition))
                if p.current_transaction_start_offset == args.start_offset
            ]
            if not found:
                raise KafkaError(
                    f"no open transaction starts at offset {args.start_offset} of "
                    f"{args.topic}[{args.partition}] (see `transactions producers`)"
                )
            spec = AbortTransactionSpec.of(tp, found[0])
        else:
            spec = AbortTransactionSpec(
                tp, args.producer_id, args.producer_epoch, args.coordinator_epoch
            )
        await admin.abort_transaction(spec)
    out.success(
        f"{tp.topic}[{tp.partition}]: aborted the transaction of producer {spec.producer_id} "
        f"(epoch {spec.producer_epoch})"
    )
    return 0


async def cmd_transactions_fence(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        got = await admin.fence_producers(args.transactional_ids)
    failed = 0
    for tid, r in got.items():
        if r.error is None:
            out.success(
                f"transactional id {tid}: fenced (producer {r.producer_id}, epoch "
                f"{r.producer_epoch})"
            )
        else:
            failed += 1
            out.error(f"transactional id {tid}: {r.error}")
    return 1 if failed else 0


# --------------------------------------------------------------------------------------------
# features and the metadata quorum
# --------------------------------------------------------------------------------------------


async def cmd_features_describe(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        features = await admin.describe_features()
    names = sorted(set(features.supported) | set(features.finalized))
    rows = []
    for name in names:
        s = features.supported.get(name)
        f = features.finalized.get(name)
        rows.append(
            (
                name,
                "-" if s is None else f"{s.min_version}-{s.max_version}",
                0 if f is None else f.max_version_level,
            )
        )
    out.table(["FEATURE", "SUPPORTED", "FINALIZED LEVEL"], rows)
    out.info(f"finalized epoch {features.finalized_epoch} (from broker {features.broker})")
    return 0


async def cmd_features_update(args: argparse.Namespace, out: Output) -> int:
    kind = FeatureUpgradeType.UPGRADE
    if args.downgrade:
        kind = FeatureUpgradeType.SAFE_DOWNGRADE
    if args.unsafe_downgrade:
        kind = FeatureUpgradeType.UNSAFE_DOWNGRADE
    updates: dict[str, FeatureUpdate] = {}
    for pair in args.features:
        name, level = parse_kv(pair)
        try:
            updates[name] = FeatureUpdate(int(level), kind)
        except ValueError:
            raise UsageError(f"{pair!r}: the level must be an integer") from None
    async with open_admin(args) as admin:
        got = await admin.update_features(updates, validate_only=args.dry_run)
    return _report(
        got,
        out,
        lambda name: f"feature {name}",
        "valid (dry run, nothing changed)" if args.dry_run else f"set ({kind.name.lower()})",
    )


async def cmd_quorum_describe(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        q = await admin.describe_metadata_quorum()
    out.line(
        f"leader: {q.leader_id}  epoch: {q.leader_epoch}  high watermark: {q.high_watermark}  "
        f"voters: {len(q.voters)}  observers: {len(q.observers)}"
    )
    leader_end = max((r.log_end_offset for r in q.voters), default=-1)
    now = int(time.time() * 1000)

    def ago(ms: int) -> str:
        return "-" if ms < 0 else f"{max(0, now - ms)} ms ago"

    rows: list[tuple[object, ...]] = [
        (
            r.replica_id,
            role,
            r.log_end_offset,
            max(0, leader_end - r.log_end_offset) if r.log_end_offset >= 0 else "-",
            ago(r.last_fetch_timestamp),
            ago(r.last_caught_up_timestamp),
        )
        for role, replicas in (("voter", q.voters), ("observer", q.observers))
        for r in replicas
    ]
    rows = [(r[0], "leader" if r[0] == q.leader_id else r[1], *r[2:]) for r in rows]
    out.table(["NODE", "ROLE", "LOG END OFFSET", "LAG", "LAST FETCH", "LAST CAUGHT UP"], rows)
    return 0


# --------------------------------------------------------------------------------------------
# share groups
# --------------------------------------------------------------------------------------------


async def cmd_share_groups_list(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        groups = await admin.list_share_groups(states=args.state or None)
    out.table(
        ["GROUP", "STATE", "COORDINATOR"],
        [(g.group_id, g.state or "-", g.coordinator) for g in groups],
    )
    return 0


async def cmd_share_groups_describe(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        got = await admin.describe_share_groups(args.groups)
    failed = 0
    for gid, d in got.items():
        if d.error is not None:
            failed += 1
            out.error(f"share group {gid}: {d.error}")
            continue
        out.line(
            f"Group: {gid}  state: {d.state}  epoch: {d.group_epoch}  assignor: "
            f"{d.assignor or '-'}  members: {len(d.members)}  coordinator: {d.coordinator}"
        )
        if d.members:
            out.table(
                ["MEMBER", "CLIENT ID", "HOST", "EPOCH", "TOPICS", "PARTITIONS"],
                [
                    (
                        m.member_id,
                        m.client_id or "-",
                        m.client_host or "-",
                        m.member_epoch,
                        ",".join(m.subscribed_topics) or "-",
                        ",".join(f"{tp.topic}[{tp.partition}]" for tp in m.assignment) or "-",
                    )
                    for m in d.members
                ],
            )
    return 1 if failed else 0


async def cmd_share_groups_delete(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        got = await admin.delete_share_groups(args.groups)
    return _report(got, out, lambda g: f"share group {g}", "deleted")


async def cmd_share_groups_offsets(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        got = await admin.list_share_group_offsets(args.group)
    out.table(
        ["TOPIC", "PARTITION", "START OFFSET", "ERROR"],
        [
            (
                tp.topic,
                tp.partition,
                o.start_offset if o.start_offset >= 0 else "-",
                "" if o.error is None else str(o.error),
            )
            for tp, o in got.items()
        ],
    )
    return 0


async def cmd_share_groups_alter_offsets(args: argparse.Namespace, out: Output) -> int:
    start = parse_start(args.to)
    if start.kind == "stored":
        raise UsageError("--to stored makes no sense here")
    async with open_admin(args) as admin:
        parts = selected_partitions(
            await partitions_of(admin, args.topic), args.partitions, args.topic
        )
        tps = [TopicPartition(args.topic, p) for p in parts]
        targets = await resolve_positions(admin, tps, start)
        current = await admin.list_share_group_offsets(args.group, tps)
        out.table(
            ["TOPIC", "PARTITION", "CURRENT", "NEW"],
            [
                (
                    tp.topic,
                    tp.partition,
                    current[tp].start_offset if current[tp].start_offset >= 0 else "-",
                    targets[tp],
                )
                for tp in tps
            ],
        )
        if not args.execute:
            out.info("dry run: add --execute to apply")
            return 0
        got = await admin.alter_share_group_offsets(args.group, targets)
    return _report(got, out, lambda tp: f"{tp.topic}[{tp.partition}]", "start offset set")


async def cmd_share_groups_delete_offsets(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        got = await admin.delete_share_group_offsets(args.group, args.topics)
    return _report(got, out, lambda t: f"share group {args.group}, topic {t}", "state deleted")


# --------------------------------------------------------------------------------------------
# SCRAM users and leader election
# --------------------------------------------------------------------------------------------


def _password(args: argparse.Namespace) -> str:
    """The new password: the first line of stdin with --password-stdin, else a prompt on a
    terminal (never an argument: it would show in the process list)."""
    if args.password_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
    elif sys.stdin.isatty():
        line = getpass.getpass(f"password for {args.user}: ")
    else:
        raise UsageError("give the password on stdin with --password-stdin")
    if not line:
        raise UsageError("the password is empty")
    return line


async def cmd_users_describe(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        from .commands import note_if_tansu

        await note_if_tansu(admin, out, "its DescribeUserScramCredentials answer does not decode")
        got = await admin.describe_scram_credentials(args.users or None)
    rows: list[tuple[object, ...]] = []
    failed = 0
    for user, r in got.items():
        if r.error is not None:
            failed += 1
            out.error(f"user {user}: {r.error}")
            continue
        for c in r.credentials:
            rows.append((user, c.mechanism.mechanism_name, c.iterations))
    out.table(["USER", "MECHANISM", "ITERATIONS"], rows)
    return 1 if failed else 0


async def cmd_users_upsert(args: argparse.Namespace, out: Output) -> int:
    password = _password(args)
    ups = [ScramUpsertion(args.user, m, password, args.iterations) for m in args.mechanism]
    async with open_admin(args) as admin:
        got = await admin.upsert_scram_credentials(ups)
    return _report(got, out, lambda u: f"user {u}", "credentials stored")


async def cmd_users_delete(args: argparse.Namespace, out: Output) -> int:
    dels = [ScramDeletion(args.user, m) for m in args.mechanism]
    async with open_admin(args) as admin:
        got = await admin.delete_scram_credentials(dels)
    return _report(got, out, lambda u: f"user {u}", "credentials deleted")


# --------------------------------------------------------------------------------------------
# delegation tokens (as kafka-delegation-tokens.sh)
# --------------------------------------------------------------------------------------------

_TOKEN_HEADERS = [
    "TOKENID",
    "HMAC",
    "OWNER",
    "REQUESTER",
    "RENEWERS",
    "ISSUEDATE",
    "EXPIRYDATE",
    "MAXDATE",
]


def _utc(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def _print_tokens(tokens: list[DelegationToken], out: Output, as_json: bool) -> None:
    """The tokens as kafka-delegation-tokens.sh prints them (the HMAC in base64), or one
    JSON object per token with ``--json``."""
    if as_json:
        for t in tokens:
            doc = {
                "token_id": t.token_id,
                "hmac": t.hmac_base64(),
                "owner": t.owner,
                "token_requester": t.token_requester,
                "renewers": list(t.renewers),
                "issue_timestamp_ms": t.issue_timestamp_ms,
                "expiry_timestamp_ms": t.expiry_timestamp_ms,
                "max_timestamp_ms": t.max_timestamp_ms,
            }
            out.line(json.dumps(doc))
        return
    out.table(
        _TOKEN_HEADERS,
        [
            (
                t.token_id,
                t.hmac_base64(),
                t.owner,
                t.token_requester,
                ",".join(t.renewers),
                _utc(t.issue_timestamp_ms),
                _utc(t.expiry_timestamp_ms),
                _utc(t.max_timestamp_ms),
            )
            for t in tokens
        ],
    )


def _token_hmac(args: argparse.Namespace) -> str:
    """The HMAC (base64) from --hmac, or the first line of stdin with --hmac-stdin (an
    argument shows in the process list)."""
    if args.hmac_stdin:
        if args.hmac is not None:
            raise UsageError("give the HMAC with --hmac or --hmac-stdin, not both")
        hmac = sys.stdin.readline().strip()
    elif args.hmac is not None:
        hmac = args.hmac
    else:
        raise UsageError("give the token's HMAC (base64): --hmac HMAC or --hmac-stdin")
    if not hmac:
        raise UsageError("the HMAC is empty")
    return str(hmac)


async def cmd_delegation_tokens_create(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        token = await admin.create_delegation_token(
            renewers=args.renewer_principal or None,
            max_lifetime_ms=args.max_life_time_period,
            owner=args.owner_principal,
        )
    out.info(f"created delegation token with token id {token.token_id}")
    _print_tokens([token], out, args.json)
    return 0


async def cmd_delegation_tokens_renew(args: argparse.Namespace, out: Output) -> int:
    hmac = _token_hmac(args)
    async with open_admin(args) as admin:
        expiry = await admin.renew_delegation_token(hmac, args.renew_time_period)
    out.success(f"delegation token renewed; it now expires at {_utc(expiry)}")
    return 0


async def cmd_delegation_tokens_expire(args: argparse.Namespace, out: Output) -> int:
    hmac = _token_hmac(args)
    async with open_admin(args) as admin:
        expiry = await admin.expire_delegation_token(hmac, args.expiry_time_period)
    if args.expiry_time_period < 0:
        out.success("delegation token expired")
    else:
        out.success(f"delegation token expiry moved to {_utc(expiry)}")
    return 0


async def cmd_delegation_tokens_describe(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        tokens = await admin.describe_delegation_token(args.owner_principal or None)
    _print_tokens(tokens, out, args.json)
    return 0


async def cmd_leaders_elect(args: argparse.Namespace, out: Output) -> int:
    kind = ElectionType.UNCLEAN if args.unclean else ElectionType.PREFERRED
    async with open_admin(args) as admin:
        tps: list[TopicPartition] | None = None
        if args.topic is not None:
            parts = selected_partitions(
                await partitions_of(admin, args.topic), args.partitions, args.topic
            )
            tps = [TopicPartition(args.topic, p) for p in parts]
        elif not args.all_partitions:
            raise UsageError("name the partitions: -t TOPIC [-p LIST], or --all-partitions")
        got = await admin.elect_leaders(tps, election_type=kind)
    failed = 0
    for tp, r in got.items():
        where = f"{tp.topic}[{tp.partition}]"
        if r.error is None:
            out.success(f"{where}: leader elected")
        elif isinstance(r.error, ElectionNotNeededError):
            out.info(f"{where}: no election needed")
        else:
            failed += 1
            out.error(f"{where}: {r.error}")
    return 1 if failed else 0


# --------------------------------------------------------------------------------------------
# the parsers
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# consumer group members, config resources
# --------------------------------------------------------------------------------------------


async def cmd_group_members_remove(args: argparse.Namespace, out: Output) -> int:
    if bool(args.instance_id) == bool(args.all):
        raise UsageError("name members with --instance-id (repeatable), or give --all")
    members = None if args.all else [MemberToRemove(group_instance_id=i) for i in args.instance_id]
    async with open_admin(args) as admin:
        got = await admin.remove_members_from_consumer_group(
            args.group, members, reason=args.reason
        )
    if not got:
        out.line(f"group {args.group}: no members")
        return 0
    return _report(got, out, lambda k: f"group {args.group} member {k}", "removed")


#: ``--type`` names of config resource types.
_CONFIG_TYPES = {
    "topic": ConfigResourceType.TOPIC,
    "broker": ConfigResourceType.BROKER,
    "broker-logger": ConfigResourceType.BROKER_LOGGER,
    "client-metrics": ConfigResourceType.CLIENT_METRICS,
    "group": ConfigResourceType.GROUP,
}


async def cmd_configs_list(args: argparse.Namespace, out: Output) -> int:
    types = [_CONFIG_TYPES[t] for t in args.type or ()]
    async with open_admin(args) as admin:
        got = await admin.list_config_resources(types)
    names = {v: k for k, v in _CONFIG_TYPES.items()}
    out.table(["TYPE", "NAME"], [(names.get(r.type, str(r.type)), r.name) for r in got])
    return 0


def _entity_options(p: argparse.ArgumentParser) -> None:
    for attr, etype in _QUOTA_TYPES:
        p.add_argument(f"--{etype}", dest=attr, metavar="NAME", help=f"the {etype} entity")
        p.add_argument(
            f"--default-{etype}",
            dest=f"default_{attr}",
            action="store_true",
            help=f"the default {etype} entity (the quota of every {etype} without its own)",
        )


def add_parsers(sub: Any, cmd: CommandAdder, parser_class: type[argparse.ArgumentParser]) -> None:
    """Register the admin commands on ``sub`` (``cmd(parent, name, fn, help)`` adds one)."""

    def group(name: str, help_text: str) -> Any:
        p = sub.add_parser(name, help=help_text, description=help_text)
        s = p.add_subparsers(dest=f"{name}_command", metavar="ACTION", parser_class=parser_class)
        s.required = True
        return s

    # quotas ------------------------------------------------------------------------------
    qs = group("quotas", "describe or alter client quotas (users, client ids, IPs)")
    p = cmd(qs, "describe", cmd_quotas_describe, "quotas of the entities matching all filters")
    _entity_options(p)
    p.add_argument(
        "--strict",
        action="store_true",
        help="only entities made of exactly the filtered types",
    )
    p = cmd(qs, "alter", cmd_quotas_alter, "set or remove quotas of one entity")
    _entity_options(p)
    p.add_argument(
        "--set", action="append", metavar="NAME=VALUE", help="e.g. producer_byte_rate=1048576"
    )
    p.add_argument("--remove", action="append", metavar="NAME", help="a quota to remove")
    p.add_argument("--dry-run", action="store_true", help="validate only, change nothing")

    # log dirs ----------------------------------------------------------------------------
    ls = group("log-dirs", "the brokers' log directories")
    p = cmd(ls, "describe", cmd_log_dirs_describe, "log directories, their size and replicas")
    p.add_argument("--broker", type=int, action="append", metavar="ID", help="default: all")
    p.add_argument("--topic", action="append", metavar="TOPIC", help="only these topics")
    p.add_argument("--replicas", action="store_true", help="list each replica")

    # transactions ------------------------------------------------------------------------
    ts = group("transactions", "list, describe, abort or fence transactions; see producers")
    p = cmd(ts, "list", cmd_transactions_list, "transactions the coordinators know")
    p.add_argument("--state", action="append", metavar="STATE", help="e.g. Ongoing (repeatable)")
    p.add_argument("--producer-id", type=int, action="append", metavar="ID")
    p.add_argument("--min-duration-ms", type=int, default=None, metavar="MS")
    p.add_argument("--pattern", default=None, metavar="REGEX", help="transactional id regex")
    p = cmd(ts, "describe", cmd_transactions_describe, "state and partitions of transactions")
    p.add_argument("transactional_ids", nargs="+", metavar="TRANSACTIONAL_ID")
    p = cmd(ts, "producers", cmd_transactions_producers, "the producers a partition knows")
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-p", "--partitions", default=None, metavar="LIST", help="default: all")
    p = cmd(ts, "abort", cmd_transactions_abort, "abort a hanging transaction on a partition")
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-p", "--partition", type=int, required=True)
    p.add_argument(
        "--start-offset",
        type=int,
        default=None,
        help="the first offset of the open transaction (from `transactions producers`)",
    )
    p.add_argument("--producer-id", type=int, default=None)
    p.add_argument("--producer-epoch", type=int, default=None)
    p.add_argument("--coordinator-epoch", type=int, default=None)
    p = cmd(ts, "fence", cmd_transactions_fence, "fence the producers of transactional ids")
    p.add_argument("transactional_ids", nargs="+", metavar="TRANSACTIONAL_ID")

    # features ----------------------------------------------------------------------------
    fs = group("features", "describe or update the cluster's feature levels")
    cmd(fs, "describe", cmd_features_describe, "supported and finalized feature levels")
    p = cmd(fs, "update", cmd_features_update, "set features' finalized levels")
    p.add_argument("features", nargs="+", metavar="FEATURE=LEVEL")
    p.add_argument("--downgrade", action="store_true", help="allow a (safe) downgrade")
    p.add_argument(
        "--unsafe-downgrade", action="store_true", help="allow a downgrade that may lose data"
    )
    p.add_argument("--dry-run", action="store_true", help="validate only, change nothing")

    # quorum ------------------------------------------------------------------------------
    qr = group("quorum", "the KRaft metadata quorum")
    cmd(qr, "describe", cmd_quorum_describe, "leader, voters and observers with their lag")

    # share groups ------------------------------------------------------------------------
    ss = group("share-groups", "list, describe or delete share groups; their offsets")
    p = cmd(ss, "list", cmd_share_groups_list, "list share groups")
    p.add_argument("--state", action="append", metavar="STATE", help="e.g. Stable (repeatable)")
    p = cmd(ss, "describe", cmd_share_groups_describe, "members and assignments of share groups")
    p.add_argument("groups", nargs="+", metavar="GROUP")
    p = cmd(ss, "delete", cmd_share_groups_delete, "delete empty share groups")
    p.add_argument("groups", nargs="+", metavar="GROUP")
    p = cmd(ss, "offsets", cmd_share_groups_offsets, "start offsets of a share group")
    p.add_argument("group", metavar="GROUP")
    p = cmd(
        ss, "alter-offsets", cmd_share_groups_alter_offsets, "move an empty group's start offsets"
    )
    p.add_argument("group", metavar="GROUP")
    p.add_argument("-t", "--topic", required=True)
    p.add_argument("-p", "--partitions", default=None, metavar="LIST", help="default: all")
    p.add_argument(
        "--to", required=True, metavar="WHERE", help="beginning, end, OFFSET, -N or @TIMESTAMP_MS"
    )
    p.add_argument(
        "--execute", action="store_true", help="apply the change (default: only show the plan)"
    )
    p = cmd(
        ss, "delete-offsets", cmd_share_groups_delete_offsets, "delete a group's state of topics"
    )
    p.add_argument("group", metavar="GROUP")
    p.add_argument("topics", nargs="+", metavar="TOPIC")

    # SCRAM users -------------------------------------------------------------------------
    us = group("users", "describe, create or delete SCRAM users")
    p = cmd(us, "describe", cmd_users_describe, "the SCRAM credentials of users (default all)")
    p.add_argument("users", nargs="*", metavar="USER")
    mechanisms = ("SCRAM-SHA-256", "SCRAM-SHA-512")
    p = cmd(us, "upsert", cmd_users_upsert, "create or replace a user's SCRAM credentials")
    p.add_argument("user", metavar="USER")
    p.add_argument(
        "--mechanism", action="append", choices=mechanisms, required=True, help="repeatable"
    )
    p.add_argument("--iterations", type=int, default=4096, help="4096-16384 (default 4096)")
    p.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    p = cmd(us, "delete", cmd_users_delete, "delete a user's SCRAM credentials")
    p.add_argument("user", metavar="USER")
    p.add_argument(
        "--mechanism", action="append", choices=mechanisms, required=True, help="repeatable"
    )

    # delegation tokens -------------------------------------------------------------------
    ds = group(
        "delegation-tokens",
        "create, renew, expire or describe delegation tokens (only over a SASL connection)",
    )
    p = cmd(ds, "create", cmd_delegation_tokens_create, "issue a token; prints its id and HMAC")
    p.add_argument(
        "--renewer-principal",
        action="append",
        metavar="PRINCIPAL",
        help="who may renew it, e.g. User:bob (repeatable)",
    )
    p.add_argument(
        "--owner-principal",
        default=None,
        metavar="PRINCIPAL",
        help="issue it for this principal instead of the caller (Kafka 3.3+)",
    )
    p.add_argument(
        "--max-life-time-period",
        type=int,
        default=-1,
        metavar="MS",
        help="maximum lifetime (default: the broker's delegation.token.max.lifetime.ms)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    for name, fn, option, what in (
        ("renew", cmd_delegation_tokens_renew, "--renew-time-period", "the new expiry"),
        ("expire", cmd_delegation_tokens_expire, "--expiry-time-period", "the new expiry"),
    ):
        p = cmd(ds, name, fn, f"{name} a token, named by its HMAC")
        p.add_argument("--hmac", default=None, help="the token's HMAC in base64")
        p.add_argument("--hmac-stdin", action="store_true", help="read the HMAC from stdin")
        p.add_argument(
            option,
            type=int,
            default=-1,
            metavar="MS",
            help=f"{what}, counted from now (default -1: "
            + ("the broker's renew interval)" if name == "renew" else "expire it now)"),
        )
    p = cmd(ds, "describe", cmd_delegation_tokens_describe, "tokens the caller may see")
    p.add_argument(
        "--owner-principal",
        action="append",
        metavar="PRINCIPAL",
        help="only tokens of this owner, e.g. User:alice (repeatable; default all)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per token")

    # consumer group members ----------------------------------------------------------------
    gm = group("group-members", "remove members from a consumer group (static members)")
    p = cmd(gm, "remove", cmd_group_members_remove, "remove members; their partitions move now")
    p.add_argument("group", metavar="GROUP")
    p.add_argument(
        "--instance-id", action="append", metavar="ID", help="a static member (repeatable)"
    )
    p.add_argument("--all", action="store_true", help="every member the group has")
    p.add_argument("--reason", default=None, help="logged by the broker (Kafka 3.2+)")

    # config resources --------------------------------------------------------------------
    cs = group("configs", "the cluster's config resources")
    p = cmd(cs, "list", cmd_configs_list, "config resources (ListConfigResources, Kafka 4.1+)")
    p.add_argument(
        "--type", action="append", choices=sorted(_CONFIG_TYPES), help="repeatable; default all"
    )

    # leaders -----------------------------------------------------------------------------
    lsub = group("leaders", "leader elections")
    p = cmd(lsub, "elect", cmd_leaders_elect, "elect preferred (or unclean) leaders")
    p.add_argument("-t", "--topic", default=None)
    p.add_argument("-p", "--partitions", default=None, metavar="LIST", help="default: all")
    p.add_argument("--all-partitions", action="store_true", help="every partition of the cluster")
    p.add_argument(
        "--unclean",
        action="store_true",
        help="elect any live replica where no in-sync one is left (may lose records)",
    )
