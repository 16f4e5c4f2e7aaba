"""Settings declared once: the :class:`~kafka_async.settings.spec.Setting` machinery.

Every keyword argument a client takes is declared in one place, the ``SCHEMA`` of its
package's ``settings.py`` (``net/settings.py`` for the connection and security settings all
clients share, ``producer/settings.py``, ``consumer/settings.py``, ``admin/settings.py``):
name, the type a caller passes, default, the check that validates it, a one-line meaning and
the Java client's (or librdkafka's) name. Everything else is derived from it:

* at run time, :class:`~kafka_async.settings.spec.Schema` validates each value (``ConfigError``
  naming the setting) and splits a client's keyword arguments between its config and the
  shared :class:`~kafka_async.net.config.ClientConfig`;
* ``make generate`` (``tools/generate_settings.py``) writes each package's
  ``settings_generated.py`` (the ``TypedDict`` that types the client's ``**settings`` for mypy
  and the frozen dataclass of the config's fields), the settings tables of
  docs/reference/settings.md and the lists in the clients' docstrings;
  ``tests/settings/test_settings_generated.py`` fails while any of them is stale.
"""
