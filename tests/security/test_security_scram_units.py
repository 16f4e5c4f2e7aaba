"""The pure parts of the admin client's SCRAM user management (kafka_async.admin.scram).

The broker-facing behaviour (users created, described, logged in with, deleted) runs against
Apache Kafka in test_security_apache.py.
"""

from __future__ import annotations

import hashlib
import hmac

import pytest

from kafka_async.admin import ScramDeletion, ScramMechanism, ScramUpsertion
from kafka_async.admin import scram as s
from kafka_async.errors import ConfigError

scramp = pytest.importorskip("scramp")


@pytest.mark.parametrize("mechanism", list(ScramMechanism))
def test_salted_password_gives_the_keys_an_independent_scram_server_derives(
    mechanism: ScramMechanism,
) -> None:
    """RFC 5802: StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey =
    HMAC(SaltedPassword, "Server Key"); scramp derives both from the password itself."""
    salt = bytes(range(32))
    salted = s.salted_password(mechanism, "pencil-ü", salt, 4096)
    digest = mechanism.hash_name
    stored = hashlib.new(digest, hmac.digest(salted, b"Client Key", digest)).digest()
    server = hmac.digest(salted, b"Server Key", digest)
    theirs = scramp.ScramMechanism(mechanism.mechanism_name).make_auth_info(
        "pencil-ü", iteration_count=4096, salt=salt
    )
    assert (theirs[1], theirs[2]) == (stored, server)


def test_mechanism_names_and_codes() -> None:
    assert ScramMechanism.of("SCRAM-SHA-256") is ScramMechanism.SCRAM_SHA_256
    assert ScramMechanism.of("scram-sha-512") is ScramMechanism.SCRAM_SHA_512
    assert ScramMechanism.of(2) is ScramMechanism.SCRAM_SHA_512
    assert ScramMechanism.SCRAM_SHA_256.mechanism_name == "SCRAM-SHA-256"
    for bad in ("SCRAM-SHA-1", 0, 3, True, None):
        with pytest.raises(ConfigError, match="SCRAM-SHA-256 or SCRAM-SHA-512"):
            ScramMechanism.of(bad)  # type: ignore[arg-type]


def test_upsertion_fields_salt_the_password_and_never_carry_it() -> None:
    fields = s.upsertion_fields(ScramUpsertion("carol", "SCRAM-SHA-512", "secret", 8192))
    assert fields.name == "carol"
    assert fields.mechanism == 2
    assert fields.iterations == 8192
    assert len(fields.salt) == 32
    assert fields.salted_password == s.salted_password(
        ScramMechanism.SCRAM_SHA_512, "secret", fields.salt, 8192
    )
    assert b"secret" not in fields.salt + fields.salted_password
    other = s.upsertion_fields(ScramUpsertion("carol", "SCRAM-SHA-512", "secret", 8192))
    assert other.salt != fields.salt  # a fresh random salt each time
    fixed = s.upsertion_fields(ScramUpsertion("carol", 1, "secret", salt=b"NaCl"))
    assert fixed.salt == b"NaCl"
    assert "secret" not in repr(ScramUpsertion("carol", 1, "secret", salt=b"NaCl"))
    assert "NaCl" not in repr(ScramUpsertion("carol", 1, "secret", salt=b"NaCl"))


@pytest.mark.parametrize(
    ("upsertion", "match"),
    [
        (ScramUpsertion("u", "SCRAM-SHA-256", "p", 4095), "iterations"),
        (ScramUpsertion("u", "SCRAM-SHA-256", "p", 16385), "iterations"),
        (ScramUpsertion("", "SCRAM-SHA-256", "p"), "user"),
        (ScramUpsertion("u", "SCRAM-SHA-256", ""), "password"),
        (ScramUpsertion("u", "SCRAM-SHA-256", "p", salt=b""), "salt"),
        (ScramUpsertion("u", "PLAIN", "p"), "SCRAM-SHA-256 or SCRAM-SHA-512"),
    ],
)
def test_bad_upsertions_are_config_errors(upsertion: ScramUpsertion, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        s.upsertion_fields(upsertion)


def test_one_alteration_per_user_per_request() -> None:
    """Kafka refuses a request that alters one user twice (DUPLICATE_RESOURCE)."""
    ups = [
        s.upsertion_fields(ScramUpsertion("a", "SCRAM-SHA-256", "p")),
        s.upsertion_fields(ScramUpsertion("a", "SCRAM-SHA-512", "p")),
        s.upsertion_fields(ScramUpsertion("b", "SCRAM-SHA-256", "p")),
    ]
    dels = [s.deletion_fields(ScramDeletion("b", "SCRAM-SHA-512"))]
    rounds = s.alter_rounds(ups, dels)
    assert [users for _, users in rounds] == [["b", "a"], ["a", "b"]]
    first, second = (body for body, _ in rounds)
    assert [(d.name, d.mechanism) for d in first.deletions] == [("b", 2)]
    assert [(u.name, u.mechanism) for u in first.upsertions] == [("a", 1)]
    assert second.deletions == []
    assert [(u.name, u.mechanism) for u in second.upsertions] == [("a", 2), ("b", 1)]
    assert s.alter_rounds([], []) == []
