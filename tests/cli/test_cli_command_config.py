"""``kafka-async --command-config FILE`` and ``-X NAME=VALUE``: the command line on a secured
cluster, with the ``client.properties`` a Java-tools user already has.

The parsing is pure and tested on its own; the end-to-end tests log in with SCRAM to the
session Apache Kafka's SASL_PLAINTEXT listener (``ApacheKafka(security=True)``), the control
being the same file with a wrong password, refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_async.cli import client_config
from kafka_async.errors import ConfigError
from kafka_async.testing.apache import SASL_USERS
from kafka_async.testing.plugin import KafkaService
from tests.cli.test_cli_e2e import ok, one_line_error, run

_SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


def test_a_java_client_properties_file_becomes_client_settings() -> None:
    text = (
        "# written for kafka-topics.sh\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism : SCRAM-SHA-512\n"
        f"sasl.jaas.config={_SCRAM} required \\\n"
        '    username="alice" password="alice-secret";\n'
        "ssl.truststore.location=/etc/kafka/ca.pem\n"
        "ssl.truststore.type=PEM\n"
        "request.timeout.ms=5000\n"
    )
    got = client_config.to_settings(client_config.parse_properties(text), source="f")
    assert got.settings == {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "alice",
        "sasl_plain_password": "alice-secret",
        "ssl_cafile": "/etc/kafka/ca.pem",
        "request_timeout_ms": 5000,
    }
    assert got.ignored == ["ssl.truststore.type"]
    assert "alice-secret" not in repr(got)


def test_librdkafka_and_own_names_are_accepted_and_x_wins() -> None:
    file = client_config.to_settings(
        {"sasl.mechanisms": "PLAIN", "sasl.username": "u", "sasl.password": "p1"}, source="f"
    )
    x = client_config.to_settings(
        client_config.from_assignments(
            ["sasl_plain_password=p2", "enable.ssl.certificate.verification=false"]
        ),
        source="-X",
    )
    merged = client_config.merge(file, x).settings
    assert merged["sasl_mechanism"] == "PLAIN"
    assert merged["sasl_plain_password"] == "p2"
    assert merged["ssl_insecure_skip_verify"] is True


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"request.timeout.ms": "soon"}, "request.timeout.ms: expected an integer"),
        ({"sasl.jaas.config": "username=x"}, "sasl.jaas.config: expected"),
        ({"sasl.jaas.config": "com.example.MyModule required a=b;"}, "MyModule is not understood"),
        ({"sasl.jaas.config": f"{_SCRAM} required colour=blue;"}, "option colour"),
        ({"ssl_context": "x"}, "cannot be set from text"),
    ],
)
def test_bad_values_are_config_errors_naming_the_key(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        client_config.to_settings(props, source="client.properties")


def test_x_without_equals_is_an_error() -> None:
    with pytest.raises(ConfigError, match="expected NAME=VALUE"):
        client_config.from_assignments(["security.protocol"])


def _properties(tmp_path: Path, password: str, extra: str = "") -> Path:
    path = tmp_path / f"client-{len(password)}.properties"
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        f'sasl.jaas.config={_SCRAM} required username="alice" password="{password}";\n' + extra
    )
    return path


@pytest.mark.integration
def test_command_config_logs_in_with_scram(kafka_service: KafkaService, tmp_path: Path) -> None:
    kafka = kafka_service.apache
    sasl = kafka.bootstrap("SASL_PLAINTEXT")
    good = _properties(tmp_path, SASL_USERS["alice"], "ssl.truststore.type=PEM\n")
    result = run(["topics", "list", "--command-config", str(good)], bootstrap=sasl)
    ok(result)
    assert "ignoring ssl.truststore.type" in result.stderr

    # The control: the same file with a wrong password is refused, in one line, naming SASL.
    bad = _properties(tmp_path, "not-" + SASL_USERS["alice"])
    line = one_line_error(run(["topics", "list", "--command-config", str(bad)], bootstrap=sasl))
    assert "SCRAM-SHA-512" in line
    assert "not-" not in line

    # -X wins over the file.
    fixed = run(
        [
            "topics",
            "list",
            "--command-config",
            str(bad),
            "-X",
            f"sasl.password={SASL_USERS['alice']}",
        ],
        bootstrap=sasl,
    )
    ok(fixed)


def test_a_missing_command_config_file_is_a_usage_error(tmp_path: Path) -> None:
    result = run(["topics", "list", "--command-config", str(tmp_path / "nope.properties")])
    assert result.returncode == 2, result.stderr
    assert "cannot read" in result.stderr
