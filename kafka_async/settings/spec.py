"""A setting's declaration (:class:`Setting`), its value kinds, and :class:`Schema`.

A :class:`Setting` says everything about one keyword argument: its name, its *kind* (the
annotation callers see and the check that validates a value, see below), its default as a
caller would write it, a one-line meaning, and its name in the Java client or librdkafka.
A :class:`Schema` is the tuple of a client's settings with what the run time needs: the
names (to split keyword arguments) and ``validate`` (a setting left at its default costs
nothing to validate).

A kind is a small object with ``annotation`` (the type a caller passes, as source
text for the generated ``TypedDict``), ``stored`` (the type of the config's field, when the
check turns the value into something else: ``acks="all"`` is stored as ``-1``) and
``__call__(name, value)``, which raises :class:`~kafka_async.errors.ConfigError` naming the
setting or returns the value to store. Relations between settings (``heartbeat_interval_ms``
below ``session_timeout_ms``) are not a kind's business: the config class checks them after
every field passed its own check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING
from itertools import compress
from operator import attrgetter, is_not
from typing import Any, Protocol

from ..errors import ConfigError

__all__ = [
    "Bool",
    "Choice",
    "Custom",
    "Func",
    "Instance",
    "Int",
    "Kind",
    "Schema",
    "Setting",
    "Text",
]


class Kind(Protocol):
    """What a setting's value may be: a type for mypy and a check for the run time."""

    #: The type callers pass, as source text (it goes into the generated TypedDict).
    annotation: str
    #: The type of the config field holding the checked value.
    stored: str

    def __call__(self, name: str, value: Any) -> Any:
        """The value to store; raises ``ConfigError`` naming ``name`` when it is wrong."""
        ...


# The kinds and Setting are plain slotted classes, not dataclasses: a dataclass costs about
# half a millisecond to create, paid at every import of a client.


def _optional(annotation: str, optional: bool) -> str:
    return f"{annotation} | None" if optional else annotation


class Int:
    """An integer (never a bool) of at least ``low`` (and at most ``high``); None too when
    ``optional``."""

    __slots__ = ("annotation", "high", "low", "optional", "stored")

    def __init__(self, low: int, high: int | None = None, *, optional: bool = False) -> None:
        self.low = low
        self.high = high
        self.optional = optional
        self.annotation = self.stored = _optional("int", optional)

    def __call__(self, name: str, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            what = "an integer or None" if self.optional else "an integer"
            raise ConfigError(f"{name}: expected {what}, got {value!r}")
        if value < self.low:
            raise ConfigError(f"{name}: must be >= {self.low}, got {value}")
        if self.high is not None and value > self.high:
            raise ConfigError(f"{name}: must be <= {self.high}, got {value}")
        return value


class Bool:
    """True or False; None too when ``optional`` (the config decides what None means)."""

    __slots__ = ("annotation", "optional", "stored")

    def __init__(self, *, optional: bool = False) -> None:
        self.optional = optional
        self.annotation = self.stored = _optional("bool", optional)

    def __call__(self, name: str, value: Any) -> Any:
        if isinstance(value, bool) or (value is None and self.optional):
            return value
        raise ConfigError(f"{name}: expected True or False, got {value!r}")


class Text:
    """A non-empty string (or None when ``optional``)."""

    __slots__ = ("annotation", "optional", "stored")

    def __init__(self, *, optional: bool = True) -> None:
        self.optional = optional
        self.annotation = self.stored = _optional("str", optional)

    def __call__(self, name: str, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if not isinstance(value, str) or not value:
            what = "a non-empty string or None" if self.optional else "a non-empty string"
            raise ConfigError(f"{name}: expected {what}, got {value!r}")
        return value


class Choice:
    """One of ``values`` (strings). ``alias`` names the generated ``Literal`` of them;
    ``none_names`` are extra spellings of None (``compression_type="none"``), which makes
    None a choice too."""

    __slots__ = ("alias", "annotation", "none_names", "stored", "values")

    def __init__(self, values: tuple[str, ...], alias: str, none_names: tuple[str, ...] = ()):
        self.values = values
        self.alias = alias
        self.none_names = none_names
        self.annotation = _optional(alias, bool(none_names))
        self.stored = "str | None" if none_names else alias

    @property
    def literal(self) -> str:
        """The ``Literal[...]`` the alias stands for."""
        return "Literal[" + ", ".join(f'"{v}"' for v in self.values + self.none_names) + "]"

    def __call__(self, name: str, value: Any) -> Any:
        if isinstance(value, str) and value in self.values:
            return value
        if self.none_names and (value is None or value in self.none_names):
            return None
        shown = [*self.values, *self.none_names] + (["None"] if self.none_names else [])
        raise ConfigError(f"{name}: expected one of {', '.join(shown)}, got {value!r}")


class Func:
    """A callable (or None); ``annotation`` is its type as the generated module names it."""

    __slots__ = ("annotation", "stored")

    def __init__(self, annotation: str) -> None:
        self.annotation = self.stored = annotation

    def __call__(self, name: str, value: Any) -> Any:
        if value is not None and not callable(value):
            raise ConfigError(f"{name}: expected a callable or None, got {value!r}")
        return value


class Instance:
    """An instance of ``cls`` (or None); ``annotation`` names it for the generated module."""

    __slots__ = ("annotation", "cls", "stored")

    def __init__(self, cls: type, annotation: str) -> None:
        self.cls = cls
        self.annotation = self.stored = annotation

    def __call__(self, name: str, value: Any) -> Any:
        if value is not None and not isinstance(value, self.cls):
            raise ConfigError(
                f"{name}: expected a {self.cls.__module__}.{self.cls.__qualname__} instance, "
                f"got {type(value).__name__}"
            )
        return value


class Custom:
    """Anything else: the annotation text and a check function ``(name, value) -> value``;
    ``stored_as`` is the stored type when the check turns values into another type."""

    __slots__ = ("annotation", "check", "stored")

    def __init__(
        self, annotation: str, check: Callable[[str, Any], Any], *, stored_as: str | None = None
    ) -> None:
        self.annotation = annotation
        self.check = check
        self.stored = stored_as or annotation

    def __call__(self, name: str, value: Any) -> Any:
        return self.check(name, value)


#: Types whose defaults the generator writes as literals; any other default is made by a
#: factory per config (an assignor object is never shared by two consumers).
_LITERAL_TYPES = (int, float, str, bool, type(None))


class Setting:
    """One keyword argument of a client, declared once.

    ``default`` is the default as a caller would pass it (``acks="all"``), checked like any
    value; ``doc`` one line saying what the setting does (README tables, docstrings,
    TypedDict comments); ``java`` the Java client's name (or librdkafka's, marked so), None
    for ``name`` with dots for underscores, "" when neither has it; ``default_doc`` how the
    docs show the default when ``repr`` would not say it well ("256 KiB"); ``secret`` masks
    the value in ``repr`` and ``to_dict()``; ``typed=False`` leaves it out of the TypedDict
    (the consumer's deserializers are ``Consumer.__init__`` parameters: their types make
    the consumer's K and V); ``required`` (the error's reason) makes the setting one a
    caller must give: its field has no default (``default`` is then only the value the
    check's tests and docs may show).
    """

    __slots__ = (
        "default",
        "default_doc",
        "doc",
        "java",
        "kind",
        "name",
        "required",
        "secret",
        "typed",
    )

    def __init__(
        self,
        name: str,
        kind: Kind,
        default: Any,
        doc: str,
        *,
        java: str | None = None,
        default_doc: str | None = None,
        secret: bool = False,
        typed: bool = True,
        required: str | None = None,
    ) -> None:
        self.name = name
        self.kind = kind
        self.default = default
        self.doc = doc
        self.java = java
        self.default_doc = default_doc
        self.secret = secret
        self.typed = typed
        self.required = required

    def __repr__(self) -> str:
        return f"<Setting {self.name}>"

    def replace(self, **changes: Any) -> Setting:
        """A copy with some attributes changed."""
        attrs = {name: getattr(self, name) for name in self.__slots__}
        attrs.update(changes)
        return Setting(**attrs)

    @property
    def java_name(self) -> str:
        """The Java/librdkafka name ("" when there is none)."""
        return self.name.replace("_", ".") if self.java is None else self.java

    @property
    def literal_default(self) -> bool:
        """True when the checked default is written into the generated field as a literal
        (a required setting has none)."""
        if self.required is not None:
            return True
        return isinstance(self.kind(self.name, self.default), _LITERAL_TYPES)


class Schema:
    """A client's settings, ready for the run time: validation and the split of kwargs."""

    __slots__ = ("_plans", "_required", "by_name", "names", "settings", "what")

    def __init__(self, what: str, settings: Iterable[Setting]) -> None:
        #: "producer", "consumer", ...: names the client in "unknown setting" errors.
        self.what = what
        self.settings: tuple[Setting, ...] = tuple(settings)
        self.by_name: dict[str, Setting] = {s.name: s for s in self.settings}
        if len(self.by_name) != len(self.settings):
            raise ValueError(f"{what}: a setting is declared twice")
        self.names: frozenset[str] = frozenset(self.by_name)
        self._required = [s for s in self.settings if s.required is not None]
        # Per config class: how to read its settings fields, and their default objects.
        self._plans: dict[type, tuple[Callable[[object], tuple[Any, ...]], tuple[Any, ...]]] = {}

    def default(self, name: str) -> Any:
        """A fresh checked default (for the generated fields' ``default_factory``)."""
        setting = self.by_name[name]
        return setting.kind(name, setting.default)

    def validate(self, obj: object) -> None:
        """Check every declared field of a frozen config ``obj`` in place (from its
        ``__post_init__``): a checked value replaces the given one (``"all"`` -> ``-1``).

        A field still holding the dataclass's default object is skipped: the generator
        wrote the checked default there, so ``Producer()`` checks nothing here. Clients are
        built per request in some web apps, so the comparison runs in C (one ``attrgetter``
        call and ``map(is_not, ...)``); only the fields given are checked in Python.
        """
        plan = self._plans.get(obj.__class__)
        if plan is None:
            plan = self._plans[obj.__class__] = self._plan(obj.__class__)
        getter, defaults = plan
        values = getter(obj)
        settings = self.settings
        for i in compress(range(len(values)), map(is_not, values, defaults)):
            setting = settings[i]
            value = values[i]
            checked = setting.kind(setting.name, value)
            if checked is not value:
                object.__setattr__(obj, setting.name, checked)

    def _plan(self, cls: type) -> tuple[Callable[[object], tuple[Any, ...]], tuple[Any, ...]]:
        fields = cls.__dataclass_fields__  # type: ignore[attr-defined]
        missing = object()  # a default made by a factory: never the same object, so checked
        names = [s.name for s in self.settings]
        defaults = tuple(
            missing if fields[n].default is MISSING else fields[n].default for n in names
        )
        getter = attrgetter(*names)
        if len(names) == 1:  # attrgetter of one name returns the value, not a tuple
            return (lambda obj: (getter(obj),)), defaults
        return getter, defaults

    def split(
        self, kwargs: Mapping[str, Any], shared: Schema | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``kwargs`` as (this schema's settings, ``shared``'s); an unknown name raises
        ``ConfigError`` naming it (and the nearest known name)."""
        own: dict[str, Any] = {}
        rest: dict[str, Any] = {}
        unknown: list[str] = []
        names = self.names
        shared_names = shared.names if shared is not None else frozenset()
        for key, value in kwargs.items():
            if key in names:
                own[key] = value
            elif key in shared_names:
                rest[key] = value
            else:
                unknown.append(key)
        if unknown:
            import difflib  # only on this error path: it costs a few ms to import

            unknown.sort()
            close = difflib.get_close_matches(unknown[0], sorted(names | shared_names), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"unknown {self.what} setting(s): {', '.join(unknown)}{hint}")
        for setting in self._required:
            if setting.name not in own:
                raise ConfigError(f"{setting.name}: {setting.required}")
        return own, rest
