"""How FastStream's own Kafka test suite was run on the drop-in (not collected by pytest here).

Steps (2026-11-28; FastStream 0.7.8 installed, its tests from the GitHub snapshot of 2026-08-22
at ag2ai/faststream 7c9a125, the newest the mirror had):

1. ``git archive HEAD tests pyproject.toml | tar -x -C /tmp/fsrun``;
2. a venv whose ``.pth`` adds this project's ``.venv`` site-packages and the repository, plus
   ``pytest-asyncio==1.3.0 dirty-equals==0.11 pytest-rerunfailures typer`` (kept out of the
   project's venv: pytest-asyncio would change how this project's tests run);
3. this file copied to ``/tmp/fsrun/conftest.py``; an Apache Kafka node from
   ``kafka_async.testing.apache``; ``FS_BOOTSTRAP=host:port``;
4. ``pytest tests/brokers/kafka -m kafka --ignore tests/brokers/kafka/test_misconfigure.py``
   (that file needs faststream[nats]); ``FS_INSTALL=0`` runs the same on real aiokafka.

Results of two runs each (414 tests selected, 2 xfailed on both):

* drop-in: 414 passed; then 413 passed, 1 failed
  (``test_consume.py::TestConsume::test_manual_partition_consume``: ``assign()`` of a topic
  that only the publish after ``start()`` creates, with ``auto_offset_reset="latest"``: the
  "latest" offset was looked up after the record landed);
* aiokafka 0.14.0: 413 passed, 1 failed (``test_ack_policy.py::TestAckPolicy::test_get_one``);
  then 412 passed, 2 failed (``test_consume_no_ack``, ``test_consume_batch_without_value``).

Each failure passed in the other runs on both: timing races of the tests, not a difference.
"""

import os
from typing import Any

if os.environ.get("FS_INSTALL", "1") == "1":
    from kafka_async.aiokafka import install

    install()

import aiokafka.admin
import faststream.kafka
import faststream.kafka.fastapi

BS = os.environ.get("FS_BOOTSTRAP", "localhost:9092")


def _redirect(cls: Any, *, keyword: bool) -> None:
    """Brokers, routers and admin clients the suite builds with the default ``localhost``
    go to ``$FS_BOOTSTRAP`` instead."""
    orig = cls.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        if keyword or "bootstrap_servers" in kwargs or not args:
            if kwargs.get("bootstrap_servers", "localhost") in ("localhost", "localhost:9092"):
                kwargs["bootstrap_servers"] = BS
        elif args[0] in ("localhost", "localhost:9092"):
            args = (BS, *args[1:])
        orig(self, *args, **kwargs)

    cls.__init__ = init


_redirect(faststream.kafka.KafkaBroker, keyword=False)
_redirect(faststream.kafka.fastapi.KafkaRouter, keyword=False)
_redirect(aiokafka.admin.AIOKafkaAdminClient, keyword=True)
