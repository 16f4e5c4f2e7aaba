"""``kafka-async``: a kcat-like command line for people at a terminal.

Exit codes: 0 success, 1 runtime error (broker unreachable, topic missing, ...: one line on
stderr, never a traceback), 2 usage error (argparse's convention), 130 interrupted.
Set ``KAFKA_ASYNC_DEBUG=1`` to get the traceback of a runtime error as well.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from ..settings.spec import Choice
from .output import Output
from .parsing import UsageError

__all__ = ["build_parser", "main"]

DEFAULT_BOOTSTRAP = "localhost:9092"

CommandFn = Callable[[argparse.Namespace, Output], Coroutine[Any, Any, int]]


class _Parser(argparse.ArgumentParser):
    """argparse with our program name in errors and ``--help`` on every level."""

    def error(self, message: str) -> Any:  # -> NoReturn, typed loosely for subclassing
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _add_common(p: argparse.ArgumentParser, top: bool) -> None:
    # Sub-commands repeat the common options so they work before or after the command
    # name; there the default is SUPPRESS, so an unset sub-command option does not
    # overwrite a value given before the command name.
    none: Any = None if top else argparse.SUPPRESS
    zero: Any = 0 if top else argparse.SUPPRESS
    p.add_argument(
        "-b",
        "--bootstrap-servers",
        default=none,
        metavar="HOST:PORT[,...]",
        help="brokers to bootstrap from "
        f"(default: $KAFKA_BOOTSTRAP_SERVERS or {DEFAULT_BOOTSTRAP})",
    )
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=zero,
        help="log the library's activity to stderr (-vv for debug detail)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=none,
        metavar="SECONDS",
        help="deadline of each request to the cluster, retries included; also how long "
        "an unreachable broker is retried (default 10)",
    )
    p.add_argument(
        "--command-config",
        default=none,
        metavar="FILE",
        help="connection and security settings (security.protocol, sasl.mechanism, "
        "sasl.jaas.config, ssl.truststore.location ...) as a Java properties file, "
        "as Kafka's own tools read it",
    )
    p.add_argument(
        "-X",
        dest="client_config",
        action="append",
        default=[] if top else argparse.SUPPRESS,
        metavar="NAME=VALUE",
        help="one connection or security setting (Java, librdkafka or kafka_async name); "
        "repeatable, wins over --command-config",
    )


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (also used by the tests)."""
    from ..producer.settings import SCHEMA as PRODUCER
    from . import commands as c

    # Producer options take their defaults, meanings and choices from the declarations.
    compression = PRODUCER.by_name["compression_type"].kind
    assert isinstance(compression, Choice)
    codecs = ["none", *compression.values]

    top_common = _Parser(add_help=False)
    _add_common(top_common, top=True)
    common = _Parser(add_help=False)
    _add_common(common, top=False)

    parser = _Parser(
        prog="kafka-async",
        description="Talk to Apache Kafka from the terminal: topics, produce, consume, groups, "
        "offsets, benchmarks, and an embedded development broker.",
        parents=[top_common],
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def cmd(
        parent: Any, name: str, fn: CommandFn, help_text: str, **kw: Any
    ) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = parent.add_parser(
            name, help=help_text, description=help_text, parents=[common], **kw
        )
        p.set_defaults(func=fn)
        return p

    # broker ------------------------------------------------------------------------------
    p = cmd(
        sub,
        "broker",
        c.cmd_broker,
        "run a development broker until Ctrl-C: Apache Kafka when Java 17+ is there, "
        "else the embedded Tansu",
    )
    p.add_argument(
        "--kind",
        choices=("auto", "apache", "tansu"),
        default="auto",
        help="auto (default): Apache Kafka when a Java 17+ is found, else Tansu; apache: "
        "Apache Kafka 4.x, its jars fetched from Maven Central on first use (needs Java "
        "17+); tansu: the embedded broker (no Java; some answers differ from Kafka's)",
    )
    p.add_argument(
        "--port",
        type=int,
        default=None,
        help="listen port (default 9092 when it is free on 127.0.0.1, else a free one)",
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="listen address, Tansu only (default 127.0.0.1)"
    )
    p.add_argument(
        "--durable",
        action="store_true",
        help="Tansu: keep data in a local S3 server (moto) instead of memory",
    )
    p.add_argument(
        "--nodes", type=int, default=1, help="Apache Kafka: how many KRaft nodes (default 1)"
    )
    p.add_argument(
        "--kafka-version",
        default=None,
        help="Apache Kafka: the version (default $KAFKA_ASYNC_APACHE_VERSION or 4.4.0)",
    )
    p.add_argument(
        "--security",
        action="store_true",
        help="Apache Kafka: also open TLS and SASL listeners (test users and certificates)",
    )

    # topics ------------------------------------------------------------------------------
    topics = sub.add_parser("topics", help="list, describe, create, delete or alter topics")
    tsub = topics.add_subparsers(dest="topics_command", metavar="ACTION", parser_class=_Parser)
    tsub.required = True
    p = cmd(tsub, "list", c.cmd_topics_list, "list topics")
    p.add_argument("--internal", action="store_true", help="include internal topics")
    p = cmd(tsub, "describe", c.cmd_topics_describe, "partitions, leaders and replicas")
    p.add_argument("topics", nargs="*", metavar="TOPIC", help="topics (default: all)")
    p.add_argument("--configs", action="store_true", help="also show non-default configs")
    p = cmd(tsub, "create", c.cmd_topics_create, "create topics")
    p.add_argument("topics", nargs="+", metavar="TOPIC")
    p.add_argument("-p", "--partitions", type=int, default=-1, help="partition count")
    p.add_argument("-r", "--replication-factor", type=int, default=-1, help="replicas")
    p.add_argument(
        "-c", "--config", action="append", default=[], metavar="NAME=VALUE", help="topic config"
    )
    p.add_argument("--if-not-exists", action="store_true", help="no error if it exists")
    p = cmd(tsub, "delete", c.cmd_topics_delete, "delete topics")
    p.add_argument("topics", nargs="+", metavar="TOPIC")
    p.add_argument("--if-exists", action="store_true", help="no error if it is missing")
    p = cmd(tsub, "alter", c.cmd_topics_alter, "add partitions or change configs")
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument("-p", "--partitions", type=int, default=None, help="new total partitions")
    p.add_argument(
        "-c", "--config", action="append", default=[], metavar="NAME=VALUE", help="set a config"
    )
    p.add_argument(
        "--delete-config",
        action="append",
        default=[],
        metavar="NAME",
        help="reset a config to its default",
    )

    # produce -----------------------------------------------------------------------------
    p = cmd(sub, "produce", c.cmd_produce, "send lines of stdin (or a file) as records")
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument("-f", "--file", default=None, help="read records from FILE, not stdin")
    p.add_argument(
        "-K",
        "--key-separator",
        default=None,
        metavar="SEP",
        help="split each line into KEY SEP VALUE at the first SEP",
    )
    p.add_argument(
        "-H", "--header", action="append", default=[], metavar="NAME=VALUE", help="add a header"
    )
    p.add_argument("-p", "--partition", type=int, default=None, help="send to this partition")
    p.add_argument(
        "-z",
        "--compression",
        choices=codecs,
        default="none",
        help="compression codec",
    )
    p.add_argument(
        "--acks",
        choices=["0", "1", "all"],
        default=PRODUCER.by_name["acks"].default,
        help=f"{PRODUCER.by_name['acks'].doc} (default {PRODUCER.by_name['acks'].default})",
    )
    p.add_argument(
        "--rate",
        default=None,
        metavar="N",
        help="at most N records per second (e.g. 100/s); each record is acknowledged "
        "before the next is sent",
    )
    linger = PRODUCER.by_name["linger_ms"]
    p.add_argument(
        "--linger-ms",
        type=int,
        default=linger.default,
        help=f"{linger.doc} (default {linger.default})",
    )

    # consume -----------------------------------------------------------------------------
    p = cmd(sub, "consume", c.cmd_consume, "print records of a topic")
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument("-g", "--group", default=None, help="join consumer group GROUP")
    p.add_argument(
        "-p",
        "--partitions",
        default=None,
        metavar="LIST",
        help="assign these partitions (e.g. 0,1 or 0-3); default: all (without --group)",
    )
    p.add_argument(
        "--from",
        dest="start",
        default=None,
        metavar="WHERE",
        help="beginning, end, stored, OFFSET, -N (N before the end) or @TIMESTAMP_MS "
        "(default: beginning; with --group: stored, else beginning)",
    )
    p.add_argument("-n", "--count", type=int, default=None, help="stop after N records")
    p.add_argument(
        "-e", "--exit-at-end", action="store_true", help="stop at the end of every partition"
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument(
        "--format",
        default=None,
        metavar="TEMPLATE",
        help="template with {topic} {partition} {offset} {timestamp} {key} {value} {headers}",
    )
    fmt.add_argument("--json", action="store_true", help="one JSON object per record")
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop when no record arrives for this long",
    )

    # groups ------------------------------------------------------------------------------
    groups = sub.add_parser("groups", help="list, describe, delete or reset consumer groups")
    gsub = groups.add_subparsers(dest="groups_command", metavar="ACTION", parser_class=_Parser)
    gsub.required = True
    p = cmd(gsub, "list", c.cmd_groups_list, "list consumer groups")
    p.add_argument(
        "--type",
        action="append",
        choices=["classic", "consumer", "share", "streams"],
        help="only groups of this type (repeatable; needs ListGroups v5, Kafka 3.8+)",
    )
    p.add_argument(
        "--state",
        action="append",
        metavar="STATE",
        help="only groups in this state, e.g. Stable, Empty (repeatable)",
    )
    p = cmd(gsub, "describe", c.cmd_groups_describe, "members, assignments and lag of groups")
    p.add_argument("groups", nargs="+", metavar="GROUP")
    p = cmd(gsub, "delete", c.cmd_groups_delete, "delete empty groups")
    p.add_argument("groups", nargs="+", metavar="GROUP")
    p = cmd(gsub, "reset-offsets", c.cmd_groups_reset, "move a group's committed offsets")
    p.add_argument("group", metavar="GROUP")
    p.add_argument("-t", "--topic", required=True, help="topic whose offsets to reset")
    p.add_argument("-p", "--partitions", default=None, metavar="LIST", help="default: all")
    p.add_argument(
        "--to",
        required=True,
        metavar="WHERE",
        help="beginning, end, OFFSET, -N (N before the end) or @TIMESTAMP_MS",
    )
    p.add_argument(
        "--execute", action="store_true", help="apply the change (default: only show the plan)"
    )

    # offsets -----------------------------------------------------------------------------
    p = cmd(sub, "offsets", c.cmd_offsets, "earliest and latest offset of each partition")
    p.add_argument("topic", metavar="TOPIC")

    # the Kafka 4.x admin surface: quotas, log-dirs, transactions, features, quorum,
    # share-groups (cli/admin_commands.py) ------------------------------------------------
    from .admin_commands import add_parsers

    add_parsers(sub, cmd, _Parser)

    # reassign ----------------------------------------------------------------------------
    from .reassign import add_commands as add_reassign

    add_reassign(sub, cmd, _Parser)

    # bench -------------------------------------------------------------------------------
    bench = sub.add_parser("bench", help="measure produce or consume throughput")
    bsub = bench.add_subparsers(dest="bench_command", metavar="ACTION", parser_class=_Parser)
    bsub.required = True
    for name, fn, text in (
        ("produce", c.cmd_bench_produce, "produce N records as fast as possible"),
        ("consume", c.cmd_bench_consume, "consume N records as fast as possible"),
    ):
        p = cmd(bsub, name, fn, text)
        p.add_argument("-t", "--topic", default="kafka-async-bench", help="topic")
        p.add_argument("-n", "--count", type=int, default=100_000, help="records")
        if name == "produce":
            p.add_argument("-s", "--size", type=int, default=100, help="value bytes")
            p.add_argument("-P", "--partitions", type=int, default=4, help="if it is created")
            p.add_argument("-z", "--compression", choices=codecs, default="none")
            p.add_argument("--linger-ms", type=int, default=PRODUCER.by_name["linger_ms"].default)
    return parser


def _version() -> str:
    from .. import __version__

    return f"kafka-async {__version__}"


def bootstrap_of(args: argparse.Namespace) -> str:
    """-b, else $KAFKA_BOOTSTRAP_SERVERS, else localhost:9092."""
    value: str | None = getattr(args, "bootstrap_servers", None)
    return value or os.environ.get("KAFKA_BOOTSTRAP_SERVERS") or DEFAULT_BOOTSTRAP


def _leaf_errors(exc: BaseException) -> list[BaseException]:
    """Flatten exception groups (anyio task groups wrap errors) into their leaves."""
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, tuple) and inner:
        out: list[BaseException] = []
        for e in inner:
            out.extend(_leaf_errors(e))
        return out
    return [exc]


def describe_error(exc: BaseException, bootstrap: str) -> str:
    """The one line a failing command prints."""
    from ..errors import (
        KafkaConnectionError,
        KafkaError,
        KafkaTimeoutError,
        UnknownTopicOrPartitionError,
    )

    if isinstance(exc, KafkaConnectionError):
        return f"cannot reach the broker at {bootstrap}: {_one_line(exc)}"
    if isinstance(exc, KafkaTimeoutError):
        return f"timed out talking to {bootstrap}: {_one_line(exc)}"
    if isinstance(exc, UnknownTopicOrPartitionError) and exc.message:
        # Our own message names the topic; the "[Error 3] ..." prefix adds nothing.
        return " ".join(exc.message.split())
    if isinstance(exc, KafkaError):
        return _one_line(exc)
    if isinstance(exc, OSError):
        if exc.filename:
            return f"{exc.strerror or exc}: {exc.filename}"
        return _one_line(exc)
    return f"{type(exc).__name__}: {_one_line(exc)}"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns (and, as a script, exits with) the code."""
    try:
        parser = build_parser()  # imports the clients: a second or more on a busy machine
    except KeyboardInterrupt:  # Ctrl-C while starting: exit as a shell expects, no traceback
        return 130
    args = parser.parse_args(argv)
    out = Output()
    debug = bool(os.environ.get("KAFKA_ASYNC_DEBUG"))
    _setup_logging(getattr(args, "verbose", 0))
    func: CommandFn = args.func
    try:
        import anyio

        code: int = anyio.run(func, args, out)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        sys.stderr.write(f"kafka-async: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: normal for a kcat-like tool.
        _silence_stdout()
        return 0
    except Exception as exc:
        leaves = _leaf_errors(exc)
        usage = [e for e in leaves if isinstance(e, UsageError)]
        if usage:
            parser.print_usage(sys.stderr)
            sys.stderr.write(f"kafka-async: error: {usage[0]}\n")
            return 2
        if any(isinstance(e, KeyboardInterrupt) for e in leaves):
            return 130
        if any(isinstance(e, BrokenPipeError) for e in leaves):
            _silence_stdout()
            return 0
        if debug:
            import traceback

            traceback.print_exc()
        out.error(describe_error(leaves[0], bootstrap_of(args)))
        return 1
    except BaseException as exc:
        # A KeyboardInterrupt can arrive wrapped in a BaseExceptionGroup from a task group.
        if any(isinstance(e, KeyboardInterrupt) for e in _leaf_errors(exc)):
            return 130
        raise
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    return code


def _setup_logging(verbosity: int) -> None:
    import logging

    logger = logging.getLogger("kafka_async")
    if verbosity <= 0:
        # Library warnings (a reconnect, a refresh that failed during shutdown) would
        # otherwise reach stderr through logging's last-resort handler and clutter output
        # that scripts parse; the command reports real failures itself.
        logger.addHandler(logging.NullHandler())
        logger.propagate = False
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbosity > 1 else logging.INFO)


def _silence_stdout() -> None:
    # Python flushes stdout at exit and would complain about the closed pipe again.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def run() -> None:
    """``python -m kafka_async.cli``."""
    sys.exit(main())
