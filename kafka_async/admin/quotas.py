"""Client quotas (KIP-546): describe and alter the quotas of users, client ids and IPs.

:meth:`AdminClient.describe_client_quotas` and :meth:`AdminClient.alter_client_quotas`
delegate here. A quota belongs to an *entity*: one or more components, each an entity type
(``user``, ``client-id`` or ``ip``) with a name, or ``None`` for that type's default entity
(the quota every user without its own gets, say). Both requests go to any broker, which
forwards alterations to the controller.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from ..cluster.routing import Router
from ..errors import ConfigError, KafkaError, UnknownServerError, error_for_code
from ..protocol import apis
from ..protocol.apis.alter_client_quotas import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    EntityData,
    EntryData,
    OpData,
)
from ..protocol.apis.describe_client_quotas import (
    ComponentData,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)
from .results import ResultMap

__all__ = [
    "ClientQuotaAlterResult",
    "ClientQuotaAlteration",
    "ClientQuotaEntity",
    "ClientQuotaFilter",
]

#: The entity types Kafka knows.
ENTITY_TYPES = ("user", "client-id", "ip")
_MATCH_EXACT, _MATCH_DEFAULT, _MATCH_ANY = 0, 1, 2


class _Unset(enum.Enum):
    """A keyword of :meth:`ClientQuotaEntity.of` left out."""

    UNSET = 0


@dataclass(frozen=True, order=True)
class ClientQuotaEntity:
    """Who a quota applies to: ``(entity_type, name)`` pairs sorted by type; a name of
    ``None`` is the type's default entity.

    ``ClientQuotaEntity.of(user="alice")``, ``ClientQuotaEntity.of(user=None)`` (the default
    user), ``ClientQuotaEntity.of(user="alice", client_id="app")``.
    """

    components: tuple[tuple[str, str | None], ...]

    def __post_init__(self) -> None:
        if not self.components:
            raise ConfigError("a client quota entity needs at least one component")
        types = [t for t, _ in self.components]
        if len(set(types)) != len(types):
            raise ConfigError(f"a client quota entity names a type twice: {types}")
        for t, name in self.components:
            if not isinstance(t, str) or not t:
                raise ConfigError(f"entity type must be a non-empty str, got {t!r}")
            if name is not None and (not isinstance(name, str) or not name):
                raise ConfigError(f"entity name must be a non-empty str or None, got {name!r}")
        object.__setattr__(self, "components", tuple(sorted(self.components)))

    @classmethod
    def of(
        cls,
        *,
        user: str | _Unset | None = _Unset.UNSET,
        client_id: str | _Unset | None = _Unset.UNSET,
        ip: str | _Unset | None = _Unset.UNSET,
    ) -> ClientQuotaEntity:
        """An entity from keyword components (``None``: the type's default entity)."""
        given = {"user": user, "client-id": client_id, "ip": ip}
        return cls(tuple((t, v) for t, v in given.items() if not isinstance(v, _Unset)))

    def as_dict(self) -> dict[str, str | None]:
        """``{"user": "alice", "client-id": None}``."""
        return dict(self.components)

    def __str__(self) -> str:
        return ",".join(f"{t}={'<default>' if n is None else n}" for t, n in self.components)


@dataclass(frozen=True)
class ClientQuotaFilter:
    """One component of a describe filter: an entity type and how to match its name.

    Use the constructors: :meth:`exact` (one named entity), :meth:`default` (the type's
    default entity) or :meth:`any` (every entity of the type, named or default).
    """

    entity_type: str
    match_type: int
    match: str | None = None

    @classmethod
    def exact(cls, entity_type: str, name: str) -> ClientQuotaFilter:
        """Entities whose ``entity_type`` component is ``name``."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"ClientQuotaFilter.exact needs a non-empty name, got {name!r}")
        return cls(_check_type(entity_type), _MATCH_EXACT, name)

    @classmethod
    def default(cls, entity_type: str) -> ClientQuotaFilter:
        """Entities whose ``entity_type`` component is the default entity."""
        return cls(_check_type(entity_type), _MATCH_DEFAULT)

    @classmethod
    def any(cls, entity_type: str) -> ClientQuotaFilter:
        """Entities with any ``entity_type`` component."""
        return cls(_check_type(entity_type), _MATCH_ANY)


@dataclass(frozen=True)
class ClientQuotaAlteration:
    """Changes to one entity's quotas: quota name -> new value, or ``None`` to remove it
    (``{"producer_byte_rate": 1048576.0, "consumer_byte_rate": None}``)."""

    entity: ClientQuotaEntity
    ops: Mapping[str, float | None] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class ClientQuotaAlterResult:
    """Outcome of altering one entity's quotas."""

    entity: ClientQuotaEntity
    error: KafkaError | None = None


def _check_type(entity_type: object) -> str:
    if not isinstance(entity_type, str) or not entity_type:
        raise ConfigError(f"entity type must be a non-empty str, got {entity_type!r}")
    return entity_type


class _EntityComponent(Protocol):
    entity_type: str
    entity_name: str | None


def _entity_of(data: Iterable[_EntityComponent]) -> ClientQuotaEntity:
    return ClientQuotaEntity(tuple((e.entity_type, e.entity_name) for e in data))


def _entity_data(entity: ClientQuotaEntity) -> list[EntityData]:
    return [EntityData(entity_type=t, entity_name=n) for t, n in entity.components]


# -- pure request building and mapping -------------------------------------------------------


def describe_request(
    filters: Sequence[ClientQuotaFilter], strict: bool
) -> DescribeClientQuotasRequest:
    """The DescribeClientQuotas body for ``filters`` (all must match)."""
    if isinstance(filters, ClientQuotaFilter):
        filters = [filters]
    for f in filters:
        if not isinstance(f, ClientQuotaFilter):
            raise ConfigError(f"describe_client_quotas expects ClientQuotaFilter values, got {f!r}")
    return DescribeClientQuotasRequest(
        components=[
            ComponentData(entity_type=f.entity_type, match_type=f.match_type, match=f.match)
            for f in filters
        ],
        strict=bool(strict),
    )


def describe_results(
    resp: DescribeClientQuotasResponse,
) -> dict[ClientQuotaEntity, dict[str, float]]:
    """Entity -> its quotas; raises the response's error."""
    if resp.error_code:
        raise error_for_code(resp.error_code, resp.error_message or None)
    out: dict[ClientQuotaEntity, dict[str, float]] = {}
    for entry in resp.entries or ():
        out[_entity_of(entry.entity)] = {v.key: v.value for v in entry.values}
    return dict(sorted(out.items()))


def alter_request(
    alterations: Sequence[ClientQuotaAlteration], validate_only: bool
) -> AlterClientQuotasRequest:
    """The AlterClientQuotas body; each entity at most once."""
    entries: list[EntryData] = []
    seen: set[ClientQuotaEntity] = set()
    for a in alterations:
        if not isinstance(a, ClientQuotaAlteration):
            raise ConfigError(
                f"alter_client_quotas expects ClientQuotaAlteration values, got {a!r}"
            )
        if not isinstance(a.entity, ClientQuotaEntity):
            raise ConfigError(f"ClientQuotaAlteration.entity must be a ClientQuotaEntity: {a!r}")
        if a.entity in seen:
            raise ConfigError(f"entity {a.entity} is altered twice in one call")
        seen.add(a.entity)
        ops: list[OpData] = []
        for key, value in a.ops.items():
            if not isinstance(key, str) or not key:
                raise ConfigError(f"quota names must be non-empty strings, got {key!r}")
            if value is None:
                ops.append(OpData(key=key, value=0.0, remove=True))
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"quota {key!r} of {a.entity}: expected a number, got {value!r}")
            if not math.isfinite(value):
                raise ConfigError(f"quota {key!r} of {a.entity}: {value!r} is not finite")
            ops.append(OpData(key=key, value=float(value), remove=False))
        entries.append(EntryData(entity=_entity_data(a.entity), ops=ops))
    return AlterClientQuotasRequest(entries=entries, validate_only=bool(validate_only))


def alter_results(
    resp: AlterClientQuotasResponse, asked: Sequence[ClientQuotaEntity]
) -> dict[ClientQuotaEntity, ClientQuotaAlterResult]:
    """Per-entity results, in the order asked; an entity the broker left out gets an error."""
    got: dict[ClientQuotaEntity, ClientQuotaAlterResult] = {}
    for entry in resp.entries:
        entity = _entity_of(entry.entity)
        error = error_for_code(entry.error_code, entry.error_message) if entry.error_code else None
        got[entity] = ClientQuotaAlterResult(entity, error)
    missing = UnknownServerError("the broker returned no result for this entity")
    return {e: got.get(e) or ClientQuotaAlterResult(e, missing) for e in asked}


# -- the calls ------------------------------------------------------------------------------


async def describe_client_quotas(
    router: Router,
    filters: Sequence[ClientQuotaFilter],
    *,
    strict: bool,
    timeout_ms: int | None,
) -> dict[ClientQuotaEntity, dict[str, float]]:
    body = describe_request(filters, strict)
    deadline = router.deadline(timeout_ms)

    async def call() -> tuple[int, DescribeClientQuotasResponse]:
        return await router.send(None, apis.DESCRIBE_CLIENT_QUOTAS, lambda v: body, deadline)

    _, resp = await router.with_retries(deadline, call)
    router.note_errors([resp.error_code])
    return describe_results(resp)


async def alter_client_quotas(
    router: Router,
    alterations: Sequence[ClientQuotaAlteration],
    *,
    validate_only: bool,
    timeout_ms: int | None,
    raise_on_error: bool,
) -> ResultMap[ClientQuotaEntity, ClientQuotaAlterResult]:
    if isinstance(alterations, ClientQuotaAlteration):
        alterations = [alterations]
    body = alter_request(alterations, validate_only)
    if not body.entries:
        return ResultMap()
    asked = [a.entity for a in alterations]
    deadline = router.deadline(timeout_ms)

    async def call() -> tuple[int, AlterClientQuotasResponse]:
        return await router.send(None, apis.ALTER_CLIENT_QUOTAS, lambda v: body, deadline)

    _, resp = await router.with_retries(deadline, call)
    got = alter_results(resp, asked)
    router.note_errors(e.error_code for e in resp.entries)
    result = ResultMap(got)
    if raise_on_error:
        result.raise_first()
    return result
