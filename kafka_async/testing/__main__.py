"""Run an embedded broker from the command line until Ctrl-C.

    python -m kafka_async.testing                 # in-memory Tansu on a free port
    python -m kafka_async.testing --port 9092     # on a chosen port
    python -m kafka_async.testing --durable       # S3-backed (local moto server)
    python -m kafka_async.testing --proxy         # behind a FaultProxy (clients use its port)

The first line printed is the bootstrap address (``host:port``), so scripts can read it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from .broker import EmbeddedBroker
from .proxy import FaultProxy


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kafka_async.testing", description="Run an embedded Tansu broker."
    )
    parser.add_argument("--port", type=int, default=None, help="listen port (default: free)")
    parser.add_argument("--durable", action="store_true", help="store data in a local S3")
    parser.add_argument(
        "--proxy", action="store_true", help="advertise a FaultProxy in front of the broker"
    )
    parser.add_argument("--topic", action="append", default=[], metavar="NAME[:PARTITIONS]")
    args = parser.parse_args(argv)

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    proxy: FaultProxy | None = None
    if args.proxy:
        from ._procs import free_port

        port = args.port or free_port()
        proxy = FaultProxy("127.0.0.1", port).start_in_thread()
        broker = EmbeddedBroker(port=port, durable=args.durable, advertised_port=proxy.port)
    else:
        broker = EmbeddedBroker(port=args.port, durable=args.durable)
    try:
        broker.start()
        for spec in args.topic:
            name, _, parts = spec.partition(":")
            broker.create_topic(name, int(parts or 1))
        print(proxy.address if proxy else broker.bootstrap_servers, flush=True)
        print(f"broker log: {broker.log_path}", file=sys.stderr, flush=True)
        while not stop.wait(0.5):
            if not broker.running:
                print("the broker exited; see its log", file=sys.stderr)
                return 1
        return 0
    finally:
        if proxy is not None:
            proxy.reset_connections()
        broker.stop()
        if proxy is not None:
            proxy.stop_thread()


if __name__ == "__main__":
    sys.exit(main())
