"""The project's own test harness: what our tests need and users of the wheel do not.

Not part of the installed package (the wheel carries only ``kafka_async.testing``: the
brokers, the fault proxy, topic helpers and the opt-in pytest plugin). Tests import these
modules as ``tests.harness.<module>``; ``tests/conftest.py`` puts the repository's root on
``sys.path`` for that (at the end, so an installed ``kafka_async`` still wins over the
source tree: ``tools/dist_check.py`` runs the tests against the built wheel).

* ``ledger``: a ledger of produced records and a checker for loss, duplication, reordering.
* ``java_peers``: Apache Kafka's own test tools (the Java client) driven from Python.
* ``broker_gaps``: the same operation through librdkafka or the Java client, to tell a
  broker's gap from our bug.
* ``fake_broker`` / ``sasl_server``: a scripted, hostile in-process broker (and its SASL).
* ``mutations``: seeded byte mutations for fuzzing.
* ``churn``: group churn with an ownership ledger.
* ``admin_scenes``: cluster states the admin tests need and no client call makes.
* ``tls``: throwaway certificates and a stunnel TLS terminator; ``apt``: installs what
  the tests need (stunnel, chromium) where the runner is root with apt-get.
* ``soak``: ``make soak``, the reliability scenarios and their table of results.
"""
