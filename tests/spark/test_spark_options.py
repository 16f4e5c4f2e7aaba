"""Option parsing of the Spark source and sink (Spark's Kafka connector names)."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_async.errors import ConfigError
from kafka_async.spark.options import (
    Subscription,
    client_config,
    offsets_from_dict,
    offsets_to_dict,
    offsets_to_json,
    parse_offsets_json,
    parse_sink_options,
    parse_source_options,
)
from kafka_async.structs import TopicPartition as TP

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def test_subscribe_defaults_batch_and_streaming() -> None:
    batch = parse_source_options({**BASE, "subscribe": "a, b"}, streaming=False)
    assert batch.subscription == Subscription(topics=("a", "b"))
    assert batch.starting == "earliest"
    assert batch.ending == "latest"
    assert batch.fail_on_data_loss is True
    assert batch.include_headers is False
    stream = parse_source_options({**BASE, "subscribe": "a"}, streaming=True)
    assert stream.starting == "latest"


def test_option_names_are_case_insensitive() -> None:
    opts = parse_source_options(
        {
            "KAFKA.BOOTSTRAP.SERVERS": "h:1",
            "SubScribe": "t",
            "STARTINGOFFSETS": "latest",
            "maxoffsetspertrigger": "7",
            "INCLUDEHEADERS": "TRUE",
        },
        streaming=True,
    )
    assert opts.starting == "latest"
    assert opts.max_offsets_per_trigger == 7
    assert opts.include_headers is True
    assert opts.consumer_config["bootstrap_servers"] == "h:1"


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"subscribe": "a", "assign": '{"a":[0]}'},
        {"subscribe": "a", "subscribePattern": "a.*"},
    ],
)
def test_exactly_one_subscription_style(extra: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        parse_source_options({**BASE, **extra}, streaming=False)


def test_assign_and_pattern() -> None:
    opts = parse_source_options({**BASE, "assign": '{"a":[1,0],"b":[2]}'}, streaming=False)
    assert opts.subscription.assign == (TP("a", 0), TP("a", 1), TP("b", 2))
    assert opts.subscription.matches("a")
    assert not opts.subscription.matches("c")
    pat = parse_source_options({**BASE, "subscribePattern": "ev-.*"}, streaming=False)
    assert pat.subscription.matches("ev-1")
    assert not pat.subscription.matches("xev-1")
    with pytest.raises(ConfigError, match="regex"):
        parse_source_options({**BASE, "subscribePattern": "("}, streaming=False)
    with pytest.raises(ConfigError, match="assign"):
        parse_source_options({**BASE, "assign": '{"a":[-1]}'}, streaming=False)


def test_batch_forbids_latest_start_and_earliest_end() -> None:
    with pytest.raises(ConfigError, match="latest"):
        parse_source_options(
            {**BASE, "subscribe": "t", "startingOffsets": "latest"}, streaming=False
        )
    with pytest.raises(ConfigError, match="-1"):
        parse_source_options(
            {**BASE, "subscribe": "t", "startingOffsets": '{"t":{"0":-1}}'}, streaming=False
        )
    with pytest.raises(ConfigError, match="earliest"):
        parse_source_options(
            {**BASE, "subscribe": "t", "endingOffsets": "earliest"}, streaming=False
        )
    with pytest.raises(ConfigError, match="-2"):
        parse_source_options(
            {**BASE, "subscribe": "t", "endingOffsets": '{"t":{"0":-2}}'}, streaming=False
        )
    with pytest.raises(ConfigError, match="batch queries only"):
        parse_source_options({**BASE, "subscribe": "t", "endingOffsets": "latest"}, streaming=True)


def test_offsets_json() -> None:
    parsed = parse_offsets_json('{"t":{"0":23,"1":-2},"u":{"3":-1}}', "startingOffsets")
    assert parsed == {TP("t", 0): 23, TP("t", 1): -2, TP("u", 3): -1}
    assert offsets_to_json(parsed) == '{"t":{"0":23,"1":-2},"u":{"3":-1}}'
    for bad in ("[1]", "{}", '{"t":[1]}', '{"t":{"x":1}}', '{"t":{"0":-3}}', '{"t":{"0":"1"}}'):
        with pytest.raises(ConfigError):
            parse_offsets_json(bad, "startingOffsets")
    with pytest.raises(ConfigError, match="neither"):
        parse_offsets_json("soon", "startingOffsets")


@given(
    st.dictionaries(
        st.tuples(st.text(min_size=1, max_size=5), st.integers(0, 1000)).map(lambda t: TP(*t)),
        st.integers(-2, 2**62),
        max_size=10,
    )
)
def test_offsets_dict_round_trip(offsets: dict[TP, int]) -> None:
    assert offsets_from_dict(offsets_to_dict(offsets)) == offsets
    if offsets:
        assert parse_offsets_json(offsets_to_json(offsets), "o") == offsets


@pytest.mark.parametrize(
    ("key", "value"),
    [("maxOffsetsPerTrigger", "0"), ("minPartitions", "-1"), ("minPartitions", "many")],
)
def test_positive_ints(key: str, value: str) -> None:
    with pytest.raises(ConfigError, match=key):
        parse_source_options({**BASE, "subscribe": "t", key: value}, streaming=True)


def test_bool_option_rejects_garbage() -> None:
    with pytest.raises(ConfigError, match="failOnDataLoss"):
        parse_source_options({**BASE, "subscribe": "t", "failOnDataLoss": "maybe"}, streaming=False)


def test_timestamp_options() -> None:
    opts = parse_source_options(
        {
            **BASE,
            "subscribe": "t",
            "startingTimestamp": "1000",
            "startingOffsetsByTimestamp": '{"t":{"0":5}}',
            "startingOffsetsByTimestampStrategy": "LATEST",
        },
        streaming=True,
    )
    assert opts.starting_timestamp == 1000
    assert opts.starting_by_timestamp == {TP("t", 0): 5}
    assert opts.timestamp_strategy == "latest"
    with pytest.raises(ConfigError, match="startingTimestamp"):
        parse_source_options({**BASE, "subscribe": "t", "startingTimestamp": "x"}, streaming=True)


def test_client_config_maps_java_names_per_role() -> None:
    opts = {
        **BASE,
        "kafka.client.id": "me",
        "kafka.request.timeout.ms": "5000",
        "kafka.fetch.max.bytes": "1048576",
        "kafka.linger.ms": "7",
        "kafka.acks": "all",
        "kafka.compression.type": "lz4",
        "kafka.enable.idempotence": "false",
        "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "SCRAM-SHA-256",
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
        'required username="alice" password="s3\\"cret";',
        "kafka.group.id": "ignored",
        "subscribe": "not-a-kafka-option",
    }
    consumer = client_config(opts, "consumer")
    assert consumer == {
        "bootstrap_servers": "127.0.0.1:9092",
        "client_id": "me",
        "request_timeout_ms": 5000,
        "fetch_max_bytes": 1048576,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-256",
        "sasl_plain_username": "alice",
        "sasl_plain_password": 's3\\"cret',
    }
    producer = client_config(opts, "producer")
    assert producer["linger_ms"] == 7
    assert producer["acks"] == "all"
    assert producer["compression_type"] == "lz4"
    assert producer["enable_idempotence"] is False
    assert "fetch_max_bytes" not in producer


@pytest.mark.parametrize(
    "key", ["kafka.auto.offset.reset", "kafka.value.deserializer", "kafka.enable.auto.commit"]
)
def test_client_config_refuses_what_the_source_manages(key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        client_config({**BASE, key: "x"}, "consumer")


def test_bootstrap_servers_required() -> None:
    with pytest.raises(ConfigError, match="bootstrap"):
        parse_source_options({"subscribe": "t"}, streaming=False)
    with pytest.raises(ConfigError, match="bootstrap"):
        parse_sink_options({"topic": "t"})


def test_sink_options() -> None:
    sink = parse_sink_options({**BASE, "topic": " out "})
    assert sink.topic == "out"
    assert sink.producer_config["enable_idempotence"] is True
    assert parse_sink_options(BASE).topic is None
    with pytest.raises(ConfigError, match="topic"):
        parse_sink_options({**BASE, "topic": " "})


def test_parsed_options_pickle() -> None:
    opts = parse_source_options(
        {**BASE, "subscribe": "t", "startingOffsets": '{"t":{"0":1}}'}, streaming=False
    )
    assert pickle.loads(pickle.dumps(opts)) == opts


def test_passwords_stay_out_of_repr() -> None:
    secret = {"kafka.sasl.plain.password": "hunter2", **BASE}
    assert "hunter2" not in repr(parse_source_options({**secret, "subscribe": "t"}, streaming=True))
    assert "hunter2" not in repr(parse_sink_options(secret))


def test_consumer_pool_options() -> None:
    opts = parse_source_options({**BASE, "subscribe": "a"}, streaming=True)
    assert opts.use_consumer_cache is True
    assert opts.consumer_cache_capacity == 64
    assert opts.consumer_cache_timeout_ms == 300_000
    opts = parse_source_options(
        {
            **BASE,
            "subscribe": "a",
            "kafkaConsumer.useConsumerCache": "false",
            "kafkaconsumer.cache.capacity": "8",
            "kafkaConsumer.cache.timeout": "90s",
        },
        streaming=False,
    )
    assert opts.use_consumer_cache is False
    assert opts.consumer_cache_capacity == 8
    assert opts.consumer_cache_timeout_ms == 90_000
    for text, ms in (("1500", 1500), ("250ms", 250), ("5m", 300_000), ("2min", 120_000)):
        got = parse_source_options(
            {**BASE, "subscribe": "a", "kafkaConsumer.cache.timeout": text}, streaming=True
        )
        assert got.consumer_cache_timeout_ms == ms


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("kafkaConsumer.useConsumerCache", "maybe"),
        ("kafkaConsumer.cache.capacity", "0"),
        ("kafkaConsumer.cache.capacity", "many"),
        ("kafkaConsumer.cache.timeout", "0"),
        ("kafkaConsumer.cache.timeout", "-5s"),
        ("kafkaConsumer.cache.timeout", "5 days"),
    ],
)
def test_consumer_pool_options_refused(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        parse_source_options({**BASE, "subscribe": "a", name: value}, streaming=True)
