"""The schema engine: one definition per Kafka API covers every version of it.

A definition lists fields with the versions they exist in, the versions in which they may be
null, and (for flexible versions) their tag. From it this module compiles, per version and
lazily, an encoder and a decoder, so the version is a run-time choice made per connection
from ApiVersions. Compiling means generating a small straight-line Python function per
struct and version (see ``_CodeGen``): the per-request cost of Produce and Fetch is then a
few microseconds per partition instead of an interpreted walk over field descriptors.

Values are instances of typed slotted classes, one per struct, written by the generator
(``tools/generate_protocol.py``) from the definitions in ``kafka_async/protocol/definitions``
into ``kafka_async/protocol/apis``; each generated module builds its :class:`StructDef` and
:class:`Api` objects from these primitives. An :class:`Api` is generic in its request and
response classes, so ``conn.request(METADATA, MetadataRequest(...))`` is typed end to end.
Encoders also accept plain mappings for any struct at run time (testing tools rewrite
decoded messages as dicts); client code builds the typed classes.

Rules carried over from Kafka's own generator:

* a field absent from the chosen version must hold its default, unless it is ``ignorable``
  (then it is dropped); otherwise :class:`~kafka_async.errors.UnsupportedFieldError`;
* null is only allowed in a field's nullable versions;
* in flexible versions strings, bytes and arrays use compact (unsigned varint) lengths, and
  every struct ends with a tagged-field section; unknown tags are skipped on decode.

A value that cannot be encoded at all (an int out of range, a wrong type) raises
:class:`~kafka_async.errors.ProtocolEncodeError` naming the message; malformed input to a
decoder raises :class:`~kafka_async.errors.ProtocolDecodeError` and nothing else.
"""

from __future__ import annotations

import abc
import keyword
import uuid as _uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from struct import Struct as _Struct
from struct import error as struct_error
from struct import unpack_from as _unpack_from
from typing import Any, ClassVar, Generic, TypeVar

from ..errors import KafkaError, ProtocolDecodeError, ProtocolEncodeError, UnsupportedFieldError
from . import codec as c
from .codec import Reader

# --------------------------------------------------------------------------------------------
# Version ranges
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive version range; ``hi=None`` means open ended; ``lo > hi`` is empty."""

    lo: int
    hi: int | None

    @classmethod
    def parse(cls, spec: str | Versions | None) -> Versions:
        """Parse Kafka's notation: ``"3+"``, ``"0-4"``, ``"7"`` or ``"none"``."""
        if isinstance(spec, Versions):
            return spec
        if spec is None or spec == "none":
            return NONE
        spec = spec.strip()
        if spec.endswith("+"):
            return cls(int(spec[:-1]), None)
        if "-" in spec:
            lo, hi = spec.split("-")
            return cls(int(lo), int(hi))
        v = int(spec)
        return cls(v, v)

    def __contains__(self, version: object) -> bool:
        if not isinstance(version, int):
            return False
        return self.lo <= version and (self.hi is None or version <= self.hi)

    @property
    def empty(self) -> bool:
        return self.hi is not None and self.hi < self.lo

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.hi is None:
            return f"{self.lo}+"
        if self.lo == self.hi:
            return str(self.lo)
        return f"{self.lo}-{self.hi}"


NONE = Versions(0, -1)
ALL = Versions(0, None)

# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------

Decoder = Callable[[Reader], Any]
Encoder = Callable[[bytearray, Any], None]


class Type(abc.ABC):
    """A field type. Subclasses give the classic and flexible (compact) codecs."""

    name: str = "?"
    nullable_ok = False  # whether the type can be null at all on the wire

    @abc.abstractmethod
    def zero(self) -> Any:
        """The value a field of this type holds when not set."""

    @abc.abstractmethod
    def encoder(self, flexible: bool, nullable: bool, version: int) -> Encoder:
        """The writer for this type in the given encoding."""

    @abc.abstractmethod
    def decoder(self, flexible: bool, nullable: bool, version: int) -> Decoder:
        """The reader for this type in the given encoding."""


class Primitive(Type):
    """A wire type with a fixed codec: integers, bool, float64, uuid, string, bytes, records."""

    def __init__(
        self,
        name: str,
        zero: Any,
        enc: Encoder,
        dec: Decoder,
        *,
        compact: tuple[Encoder, Decoder] | None = None,
        nullable: tuple[Encoder, Decoder] | None = None,
        compact_nullable: tuple[Encoder, Decoder] | None = None,
        fmt: str | None = None,
    ) -> None:
        self.name = name
        self._zero = zero
        #: ``struct`` format letter for fixed-width types, so that compiled codecs can pack
        #: and unpack runs of adjacent fixed-width fields in one call.
        self.fmt = fmt
        self._codecs: dict[tuple[bool, bool], tuple[Encoder, Decoder]] = {
            (False, False): (enc, dec),
            (True, False): compact or (enc, dec),
        }
        if nullable is not None:
            self.nullable_ok = True
            self._codecs[(False, True)] = nullable
            self._codecs[(True, True)] = compact_nullable or nullable

    def zero(self) -> Any:
        return self._zero

    def _pick(self, flexible: bool, nullable: bool) -> tuple[Encoder, Decoder]:
        try:
            return self._codecs[(flexible, nullable)]
        except KeyError:
            raise TypeError(f"type {self.name} cannot be nullable") from None

    def encoder(self, flexible: bool, nullable: bool, version: int) -> Encoder:
        return self._pick(flexible, nullable)[0]

    def decoder(self, flexible: bool, nullable: bool, version: int) -> Decoder:
        return self._pick(flexible, nullable)[1]

    def __repr__(self) -> str:
        return self.name


INT8 = Primitive("int8", 0, c.write_int8, Reader.int8, fmt="b")
INT16 = Primitive("int16", 0, c.write_int16, Reader.int16, fmt="h")
UINT16 = Primitive("uint16", 0, c.write_uint16, Reader.uint16, fmt="H")
INT32 = Primitive("int32", 0, c.write_int32, Reader.int32, fmt="i")
UINT32 = Primitive("uint32", 0, c.write_uint32, Reader.uint32, fmt="I")
INT64 = Primitive("int64", 0, c.write_int64, Reader.int64, fmt="q")
FLOAT64 = Primitive("float64", 0.0, c.write_float64, Reader.float64, fmt="d")
BOOL = Primitive("bool", False, c.write_bool, Reader.boolean, fmt="?")
UUID = Primitive("uuid", c.ZERO_UUID, c.write_uuid, Reader.uuid)
STRING = Primitive(
    "string",
    "",
    c.write_string,
    Reader.string,
    compact=(c.write_compact_string, Reader.compact_string),
    nullable=(c.write_nullable_string, Reader.nullable_string),
    compact_nullable=(c.write_compact_nullable_string, Reader.compact_nullable_string),
)
BYTES = Primitive(
    "bytes",
    b"",
    c.write_bytes,
    Reader.bytes_,
    compact=(c.write_compact_bytes, Reader.compact_bytes),
    nullable=(c.write_nullable_bytes, Reader.nullable_bytes),
    compact_nullable=(c.write_compact_nullable_bytes, Reader.compact_nullable_bytes),
)
# Record batches: always carried as (nullable) bytes; decoded lazily as a zero-copy view.
RECORDS = Primitive(
    "records",
    None,
    c.write_nullable_bytes,
    Reader.records,
    compact=(c.write_compact_nullable_bytes, Reader.compact_records),
    nullable=(c.write_nullable_bytes, Reader.records),
    compact_nullable=(c.write_compact_nullable_bytes, Reader.compact_records),
)


class Array(Type):
    """``[]elem``: an array of a primitive or of a struct."""

    nullable_ok = True

    def __init__(self, elem: Type | StructDef) -> None:
        self.elem = elem
        self.name = f"[]{elem.name}"

    def zero(self) -> Any:
        return []

    def encoder(self, flexible: bool, nullable: bool, version: int) -> Encoder:
        elem = self.elem
        enc = (
            elem.encoder_for(version, flexible)
            if isinstance(elem, StructDef)
            else elem.encoder(flexible, False, version)
        )
        write_len = c.write_uvarint if flexible else c.write_int32
        bias = 1 if flexible else 0
        null_len = 0 if flexible else -1

        def encode_array(out: bytearray, value: Any) -> None:
            if value is None:
                if not nullable:
                    raise UnsupportedFieldError(f"null is not allowed for {self.name} here")
                write_len(out, null_len)
                return
            write_len(out, len(value) + bias)
            for item in value:
                enc(out, item)

        return encode_array

    def decoder(self, flexible: bool, nullable: bool, version: int) -> Decoder:
        elem = self.elem
        dec = (
            elem.decoder_for(version, flexible)
            if isinstance(elem, StructDef)
            else elem.decoder(flexible, False, version)
        )
        read_len = Reader.compact_array_len if flexible else Reader.array_len

        def decode_array(r: Reader) -> Any:
            n = read_len(r)
            if n is None:
                if not nullable:
                    raise ProtocolDecodeError(f"null array for non-nullable {self.name}")
                return None
            return [dec(r) for _ in range(n)]

        return decode_array

    def __repr__(self) -> str:
        return self.name


# --------------------------------------------------------------------------------------------
# Fields and structs
# --------------------------------------------------------------------------------------------


class Field:
    """One field of a struct: name (snake_case), type, and the versions it lives in."""

    __slots__ = (
        "default",
        "ignorable",
        "name",
        "nullable",
        "tag",
        "tagged",
        "type",
        "versions",
    )

    def __init__(
        self,
        name: str,
        type: Type | StructDef,
        versions: str = "0+",
        *,
        nullable: str | None = None,
        default: Any = ...,
        ignorable: bool = False,
        tag: int | None = None,
        tagged: str | None = None,
    ) -> None:
        self.name = name
        self.type = type
        self.versions = Versions.parse(versions)
        self.nullable = Versions.parse(nullable)
        self.ignorable = ignorable
        self.tag = tag
        self.tagged = Versions.parse(tagged) if tag is not None else NONE
        if tag is not None and tagged is None:
            self.tagged = self.versions
        self.default = default

    def make_default(self) -> Any:
        """A fresh default value (never shared between messages, so lists can be mutated)."""
        if self.default is not ...:
            return list(self.default) if isinstance(self.default, list) else self.default
        if isinstance(self.type, StructDef):
            return None if not self.nullable.empty else self.type.cls()
        return self.type.zero()

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.type!r}, {str(self.versions)!r})"


def f(
    name: str,
    type: Type | StructDef | list[Field],
    versions: str = "0+",
    **kwargs: Any,
) -> Field:
    """Shorthand used by the API definitions."""
    if isinstance(type, list):
        raise TypeError("use struct(...) or array(struct(...)) for nested fields")
    return Field(name, type, versions, **kwargs)


def array(elem: Type | StructDef) -> Array:
    """``[]elem``: an array of a primitive type or of a struct."""
    return Array(elem)


class Message:
    """Base of the generated value classes: slotted, keyword constructor, equality, repr."""

    __slots__ = ()
    _schema: ClassVar[StructDef]

    def __init__(self, **kwargs: Any) -> None:
        schema = self._schema
        for fld in schema.fields:
            if fld.name in kwargs:
                object.__setattr__(self, fld.name, kwargs.pop(fld.name))
            else:
                object.__setattr__(self, fld.name, fld.make_default())
        if kwargs:
            raise TypeError(f"{schema.name} has no field(s) {sorted(kwargs)}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._schema.names)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        body = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._schema.names)
        return f"{self._schema.name}({body})"

    def to_dict(self) -> dict[str, Any]:
        """A plain-dict copy (nested structs converted too), handy for logging and tests."""

        def conv(v: Any) -> Any:
            if isinstance(v, Message):
                return v.to_dict()
            if isinstance(v, list):
                return [conv(x) for x in v]
            if isinstance(v, memoryview):
                return bytes(v)
            return v

        return {n: conv(getattr(self, n)) for n in self._schema.names}


class StructDef:
    """A named list of fields; compiles per-version codecs and a value class."""

    nullable_ok = True

    def __init__(
        self, name: str, fields: Sequence[Field], cls: type[Message] | None = None
    ) -> None:
        self.name = name
        self.fields = list(fields)
        self.names = tuple(fld.name for fld in self.fields)
        seen: set[str] = set()
        for fld in self.fields:
            if not fld.name.isidentifier() or keyword.iskeyword(fld.name):
                # Compiled codecs use the names as attributes in generated source.
                raise ValueError(f"field name {fld.name!r} in {name} is not a Python identifier")
            if fld.name in seen:
                raise ValueError(f"duplicate field {fld.name} in {name}")
            seen.add(fld.name)
        self.by_name = {fld.name: fld for fld in self.fields}
        if cls is None:
            # An ad hoc struct (tests, tools): a class made here, with a compiled __init__.
            cls = type(
                name, (Message,), {"__slots__": self.names, "_schema": self, "__module__": __name__}
            )
            cls.__init__ = _make_init(self)  # type: ignore[method-assign]
        else:
            # A generated class: its slots must be exactly this struct's fields.
            if tuple(cls.__slots__) != self.names:
                raise ValueError(f"{cls.__name__}.__slots__ do not match the fields of {name}")
            cls._schema = self
        self.cls: type[Message] = cls
        self._enc: dict[tuple[int, bool], Encoder] = {}
        self._dec: dict[tuple[int, bool], Decoder] = {}

    # A StructDef can be used directly as a field type (a single nested struct).
    def zero(self) -> Any:
        return self.cls()

    def encoder(self, flexible: bool, nullable: bool, version: int) -> Encoder:
        enc = self.encoder_for(version, flexible)
        if not nullable:
            return enc

        def encode_nullable_struct(out: bytearray, value: Any) -> None:
            if value is None:
                out.append(0xFF)
            else:
                out.append(1)
                enc(out, value)

        return encode_nullable_struct

    def decoder(self, flexible: bool, nullable: bool, version: int) -> Decoder:
        dec = self.decoder_for(version, flexible)
        if not nullable:
            return dec

        def decode_nullable_struct(r: Reader) -> Any:
            marker = r.int8()
            if marker < 0:
                return None
            return dec(r)

        return decode_nullable_struct

    def walk(self) -> Iterator[StructDef]:
        """This struct and every struct nested in it."""
        yield self
        for fld in self.fields:
            t = fld.type
            if isinstance(t, Array):
                t = t.elem
            if isinstance(t, StructDef):
                yield from t.walk()

    # -- compilation -------------------------------------------------------------------------

    def encoder_for(self, version: int, flexible: bool) -> Encoder:
        """The compiled encoder of this struct at ``version`` (cached)."""
        key = (version, flexible)
        enc = self._enc.get(key)
        if enc is None:
            enc = self._compile_encoder(version, flexible)
            self._enc[key] = enc
        return enc

    def decoder_for(self, version: int, flexible: bool) -> Decoder:
        """The compiled decoder of this struct at ``version`` (cached)."""
        key = (version, flexible)
        dec = self._dec.get(key)
        if dec is None:
            dec = self._compile_decoder(version, flexible)
            self._dec[key] = dec
        return dec

    def _compile_encoder(self, version: int, flexible: bool) -> Encoder:
        return _CodeGen(self, version, flexible).encoder()

    def _compile_decoder(self, version: int, flexible: bool) -> Decoder:
        return _CodeGen(self, version, flexible).decoder()


# --------------------------------------------------------------------------------------------
# Code generation
# --------------------------------------------------------------------------------------------

# Array elements of a struct's own generated class are encoded inline (no call per element)
# down to this many levels below the top struct.
_INLINE_DEPTH = 2
# How a null array is written: compact (length 0) or classic (length -1).
_NULL_ARRAY = {True: b"\x00", False: b"\xff\xff\xff\xff"}
# How null bytes (and records) are written: the same lengths.
_NULL_BYTES = _NULL_ARRAY
_IMMUTABLE = (type(None), bool, int, float, str, bytes, _uuid.UUID)


def _raise_extra(struct_name: str, known: frozenset[str], value: Mapping[str, Any]) -> None:
    extra = sorted(set(value.keys()) - known)
    raise UnsupportedFieldError(f"{struct_name} has no field(s) {extra}")


def _same_as_default(value: Any, default: Any) -> bool:
    """Whether a dict given for a struct field only restates the struct's defaults."""
    if isinstance(value, Mapping) and isinstance(default, Message):
        plain = default.to_dict()
        return all(k in plain and plain[k] == v for k, v in value.items())
    return False


def _raise_absent(struct_name: str, fld: Field, version: int, value: Any, default: Any) -> None:
    if _same_as_default(value, default):
        return
    raise UnsupportedFieldError(
        f"{struct_name}.{fld.name}={value!r} cannot be sent at version {version} "
        f"(valid in versions {fld.versions})"
    )


def _raise_null(struct_name: str, fld: Field) -> None:
    raise UnsupportedFieldError(
        f"{struct_name}.{fld.name} may not be null in this version "
        f"(nullable in versions {fld.nullable})"
    )


def _raise_null_decoded(struct_name: str, name: str) -> None:
    raise ProtocolDecodeError(f"null array for non-nullable {struct_name}.{name}")


def _write_tags(out: bytearray, tags: list[tuple[int, bytearray]]) -> None:
    c.write_uvarint(out, len(tags))
    for tag, body in tags:
        c.write_uvarint(out, tag)
        c.write_uvarint(out, len(body))
        out += body


def _read_tags(r: Reader, obj: Any, known: dict[int, tuple[str, Decoder]]) -> None:
    count = r.check_count(r.uvarint(), 2)
    for _ in range(count):
        tag = r.uvarint()
        size = r.check_count(r.uvarint())
        entry = known.get(tag)
        if entry is None:
            r.skip(size)  # a tag this version does not know: skipped for forward compatibility
            continue
        sub = Reader(r.buf, r.pos, r.pos + size)
        setattr(obj, entry[0], entry[1](sub))
        sub.expect_end()
        r.pos = sub.end


def _fixed(t: Any) -> str | None:
    return t.fmt if isinstance(t, Primitive) else None


def _default_expr(fld: Field, bind: Callable[[Any], str]) -> str:
    """Source for a fresh default value of ``fld`` (mutable defaults are never shared)."""
    d = fld.make_default()
    if isinstance(d, _IMMUTABLE):
        return bind(d)
    if isinstance(d, list) and not d:
        return "[]"
    if isinstance(fld.type, StructDef) and type(d) is fld.type.cls:
        return f"{bind(fld.type.cls)}()"
    return f"{bind(fld.make_default)}()"


def _raise_kwargs(struct_name: str, extra: dict[str, Any]) -> None:
    raise TypeError(f"{struct_name} has no field(s) {sorted(extra)}")


def _make_init(sd: StructDef) -> Callable[..., None]:
    """A keyword-only ``__init__`` for the value class of ``sd``, compiled like the codecs.

    Decoding builds a default struct for every tagged or absent nested struct field, so
    construction is on the hot path too.
    """
    ns: dict[str, Any] = {}
    count = 0

    def bind(obj: Any) -> str:
        nonlocal count
        count += 1
        ns[f"_d{count}"] = obj
        return f"_d{count}"

    missing = bind(_MISSING)
    params = []
    body = []
    for fld in sd.fields:
        expr = _default_expr(fld, bind)
        if expr.startswith("_d") and expr[2:].isdigit():
            params.append(f"{fld.name}={expr}")
            body.append(f"    __self.{fld.name} = {fld.name}")
        else:
            params.append(f"{fld.name}={missing}")
            body.append(
                f"    __self.{fld.name} = {expr} if {fld.name} is {missing} else {fld.name}"
            )
    # Dunder names for self and the catch-all, so that no field name can collide with them.
    sig = ", ".join(["__self", "*", *params, "**__extra"]) if params else "__self, **__extra"
    lines = [
        f"def __init__({sig}):",
        "    if __extra:",
        f"        {bind(_raise_kwargs)}({sd.name!r}, __extra)",
    ]
    lines += body
    code = compile("\n".join(lines) + "\n", f"<{sd.name} __init__>", "exec")
    exec(code, ns)  # the source is built here from the schema, never from input
    init: Callable[..., None] = ns["__init__"]
    init.__qualname__ = f"{sd.name}.__init__"
    return init


_MISSING: Any = object()
#: The ``__init__`` default of generated fields whose default is a fresh list or struct.
MISSING: Any = _MISSING


class _CodeGen:
    """Compiles one struct at one version into a straight-line Python function.

    Why generate source instead of looping over field descriptors: the interpreted loop
    costs a closure call, a lookup and a default computation per field per message, while
    the generated function reads each field once, packs or unpacks each run of adjacent
    fixed-width fields with one ``struct`` call, and finds every helper as a global of its
    own namespace. The per-request overhead of Produce and Fetch is dominated by this.
    """

    def __init__(self, sd: StructDef, version: int, flexible: bool) -> None:
        self.sd = sd
        self.version = version
        self.flexible = flexible
        self.ns: dict[str, Any] = {
            "Mapping": Mapping,
            "Message": Message,
            "NEED": Reader.need,
            "Struct": _Struct,
            "unpack_from": _unpack_from,
            "range": range,
            "len": len,
            "list": list,
            "isinstance": isinstance,
            "type": type,
            "dict": dict,
            "bytearray": bytearray,
        }
        self.count = 0
        self.plain: list[Field] = []
        self.tagged: list[Field] = []
        self.absent: list[Field] = []
        for fld in sd.fields:
            if version not in fld.versions:
                self.absent.append(fld)
            elif flexible and version in fld.tagged:
                self.tagged.append(fld)
            else:
                self.plain.append(fld)
        self.tagged.sort(key=lambda fld: fld.tag or 0)

    def bind(self, obj: Any) -> str:
        self.count += 1
        name = f"_g{self.count}"
        self.ns[name] = obj
        return name

    def compile(self, lines: list[str], fn: str) -> Any:
        source = "\n".join(lines) + "\n"
        code = compile(source, f"<{self.sd.name} v{self.version} {fn}>", "exec")
        exec(code, self.ns)  # the source is built above from the schema, never from input
        func = self.ns[fn]
        func.__qualname__ = f"{self.sd.name}.{fn}_v{self.version}"
        return func

    # -- encoder -----------------------------------------------------------------------------

    def encoder(self) -> Encoder:
        lines = ["def encode(out, value):"]
        self.emit_struct(lines, "    ", self.sd, "value", 0)
        func: Encoder = self.compile(lines, "encode")
        return func

    def split(self, sd: StructDef) -> tuple[list[Field], list[Field], list[Field]]:
        """``sd``'s fields at this version: (plain, tagged by tag number, absent)."""
        if sd is self.sd:
            return self.plain, self.tagged, self.absent
        plain: list[Field] = []
        tagged: list[Field] = []
        absent: list[Field] = []
        for fld in sd.fields:
            if self.version not in fld.versions:
                absent.append(fld)
            elif self.flexible and self.version in fld.tagged:
                tagged.append(fld)
            else:
                plain.append(fld)
        tagged.sort(key=lambda fld: fld.tag or 0)
        return plain, tagged, absent

    def emit_struct(
        self, lines: list[str], ind: str, sd: StructDef, value: str, depth: int
    ) -> None:
        """Code that writes struct ``sd`` held in variable ``value``.

        At depth 0 (the function's argument) the value may be a message or a mapping. Deeper
        down this is the inlined body of an array element already known to be exactly
        ``sd.cls``, which saves a call per element (Produce: one per partition).
        """
        version = self.version
        plain, tagged, absent = self.split(sd)
        checked = [fld for fld in absent if not fld.ignorable]
        wanted = plain + tagged + checked
        p = f"s{depth}_" if depth else "v"
        var = {fld.name: f"{p}{i}" for i, fld in enumerate(wanted)}
        defaults = {fld.name: self.bind(fld.make_default()) for fld in wanted}
        if depth == 0:
            known = self.bind(frozenset(sd.names))
            lines.append(
                f"{ind}if type({value}) is dict or "
                f"(not isinstance({value}, Message) and isinstance({value}, Mapping)):"
            )
            lines.append(f"{ind}    if not {value}.keys() <= {known}:")
            lines.append(f"{ind}        {self.bind(_raise_extra)}({sd.name!r}, {known}, {value})")
            if wanted:
                lines.append(f"{ind}    get = {value}.get")
            for fld in wanted:
                lines.append(f"{ind}    {var[fld.name]} = get({fld.name!r}, {defaults[fld.name]})")
            lines.append(f"{ind}else:")
            for fld in wanted:
                lines.append(f"{ind}    {var[fld.name]} = {value}.{fld.name}")
            if not wanted:
                lines.append(f"{ind}    pass")
        else:
            for fld in wanted:
                lines.append(f"{ind}{var[fld.name]} = {value}.{fld.name}")
        raise_absent = self.bind(_raise_absent)
        for fld in checked:
            v, d = var[fld.name], defaults[fld.name]
            lines.append(f"{ind}if {v} != {d}:")
            lines.append(
                f"{ind}    {raise_absent}({sd.name!r}, {self.bind(fld)}, {version}, {v}, {d})"
            )
        run: list[Field] = []

        def flush() -> None:
            if run:
                fmt = ">" + "".join(_fixed(fld.type) or "" for fld in run)
                pack = self.bind(_Struct(fmt).pack)
                lines.append(f"{ind}out += {pack}({', '.join(var[fld.name] for fld in run)})")
                run.clear()

        for fld in plain:
            if _fixed(fld.type) and version not in fld.nullable:
                run.append(fld)
                continue
            flush()
            self.emit_write(lines, ind, sd, fld, var[fld.name], depth)
        flush()
        if self.flexible:
            if not tagged:
                lines.append(f"{ind}out.append(0)")
            else:
                tags, body = f"{p}tags", f"{p}body"
                lines.append(f"{ind}{tags} = []")
                for fld in tagged:
                    v = var[fld.name]
                    enc = self.bind(fld.type.encoder(True, version in fld.nullable, version))
                    lines.append(f"{ind}if {v} != {defaults[fld.name]}:")
                    lines.append(f"{ind}    {body} = bytearray()")
                    lines.append(f"{ind}    {enc}({body}, {v})")
                    lines.append(f"{ind}    {tags}.append(({fld.tag}, {body}))")
                lines.append(f"{ind}{self.bind(_write_tags)}(out, {tags})")
        elif not plain and depth:
            lines.append(f"{ind}pass")

    def emit_write(
        self, lines: list[str], ind: str, sd: StructDef, fld: Field, v: str, depth: int
    ) -> None:
        t = fld.type
        version, flexible = self.version, self.flexible
        nullable = version in fld.nullable
        null_error = f"{self.bind(_raise_null)}({sd.name!r}, {self.bind(fld)})"
        if isinstance(t, Array):
            lines.append(f"{ind}if {v} is None:")
            if nullable:
                null_len = self.bind(_NULL_ARRAY[flexible])
                lines.append(f"{ind}    out += {null_len}")
            else:
                lines.append(f"{ind}    {null_error}")
            lines.append(f"{ind}else:")
            write_len = self.bind(c.write_uvarint if flexible else c.write_int32)
            bias = " + 1" if flexible else ""
            lines.append(f"{ind}    {write_len}(out, len({v}){bias})")
            elem = t.elem
            fmt = _fixed(elem)
            item = f"item{depth}"
            if isinstance(elem, StructDef):
                enc = self.bind(elem.encoder_for(version, flexible))
                lines.append(f"{ind}    for {item} in {v}:")
                if depth < _INLINE_DEPTH:
                    lines.append(f"{ind}        if type({item}) is {self.bind(elem.cls)}:")
                    self.emit_struct(lines, ind + "            ", elem, item, depth + 1)
                    lines.append(f"{ind}        else:")
                    lines.append(f"{ind}            {enc}(out, {item})")
                else:
                    lines.append(f"{ind}        {enc}(out, {item})")
            elif fmt:
                pack = self.bind(_Struct(">" + fmt).pack)
                lines.append(f"{ind}    for {item} in {v}:")
                lines.append(f"{ind}        out += {pack}({item})")
            else:
                enc = self.bind(elem.encoder(flexible, False, version))
                lines.append(f"{ind}    for {item} in {v}:")
                lines.append(f"{ind}        {enc}(out, {item})")
            return
        if not nullable and t.nullable_ok:
            lines.append(f"{ind}if {v} is None:")
            lines.append(f"{ind}    {null_error}")
        if t is BYTES or t is RECORDS:
            # Inline: record batches are the bulk of every Produce request.
            if nullable:
                null = self.bind(_NULL_BYTES[flexible])
                lines.append(f"{ind}if {v} is None:")
                lines.append(f"{ind}    out += {null}")
                lines.append(f"{ind}else:")
                ind += "    "
            if flexible:
                lines.append(f"{ind}{self.bind(c.write_uvarint)}(out, len({v}) + 1)")
            else:
                lines.append(f"{ind}out += {self.bind(_Struct('>i').pack)}(len({v}))")
            lines.append(f"{ind}out += {v}")
            return
        enc = self.bind(t.encoder(flexible, nullable, version))
        lines.append(f"{ind}{enc}(out, {v})")

    # -- decoder -----------------------------------------------------------------------------

    def decoder(self) -> Decoder:
        sd, version, flexible = self.sd, self.version, self.flexible
        lines = ["def decode(r):", f"    o = {self.bind(sd.cls)}.__new__({self.bind(sd.cls)})"]
        for fld in self.absent + self.tagged:
            lines.append(f"    o.{fld.name} = {_default_expr(fld, self.bind)}")
        run: list[Field] = []

        def flush() -> None:
            if run:
                st = _Struct(">" + "".join(_fixed(fld.type) or "" for fld in run))
                targets = ", ".join(f"o.{fld.name}" for fld in run)
                if len(run) == 1:
                    targets += ","
                unpack = self.bind(st.unpack_from)
                lines.append(f"    {targets} = {unpack}(r.buf, NEED(r, {st.size}))")
                run.clear()

        for fld in self.plain:
            if _fixed(fld.type) and version not in fld.nullable:
                run.append(fld)
                continue
            flush()
            self.emit_read(lines, fld)
        flush()
        if flexible:
            known = {
                fld.tag: (fld.name, fld.type.decoder(True, version in fld.nullable, version))
                for fld in self.tagged
            }
            # Nearly always an empty tag section: one zero byte, checked inline.
            lines.append("    pos = r.pos")
            lines.append("    if pos < r.end and r.buf[pos] == 0:")
            lines.append("        r.pos = pos + 1")
            lines.append("    else:")
            lines.append(f"        {self.bind(_read_tags)}(r, o, {self.bind(known)})")
        lines.append("    return o")
        func: Decoder = self.compile(lines, "decode")
        return func

    def emit_read(self, lines: list[str], fld: Field) -> None:
        t = fld.type
        version, flexible = self.version, self.flexible
        nullable = version in fld.nullable
        target = f"o.{fld.name}"
        if isinstance(t, Array):
            read_len = self.bind(Reader.compact_array_len if flexible else Reader.array_len)
            lines.append(f"    n = {read_len}(r)")
            lines.append("    if n is None:")
            if nullable:
                lines.append(f"        {target} = None")
            else:
                lines.append(
                    f"        {self.bind(_raise_null_decoded)}({self.sd.name!r}, {fld.name!r})"
                )
            lines.append("    else:")
            elem = t.elem
            fmt = _fixed(elem)
            if isinstance(elem, StructDef):
                dec = self.bind(elem.decoder_for(version, flexible))
                lines.append(f"        {target} = [{dec}(r) for _ in range(n)]")
            elif fmt:
                size = _Struct(">" + fmt).size
                lines.append(
                    f"        {target} = list(unpack_from('>%d{fmt}' % n, r.buf, "
                    f"NEED(r, n * {size})))"
                )
            else:
                dec = self.bind(elem.decoder(flexible, False, version))
                lines.append(f"        {target} = [{dec}(r) for _ in range(n)]")
            return
        dec = self.bind(t.decoder(flexible, nullable, version))
        lines.append(f"    {target} = {dec}(r)")


def struct(name: str, fields: Sequence[Field]) -> StructDef:
    """A named struct: usable as a field type directly or inside ``array(...)``."""
    return StructDef(name, fields)


# --------------------------------------------------------------------------------------------
# APIs
# --------------------------------------------------------------------------------------------


def _encode(sd: StructDef, version: int, flexible: bool, body: Any) -> bytearray:
    out = bytearray()
    try:
        sd.encoder_for(version, flexible)(out, body)
    except KafkaError:
        raise
    except (struct_error, TypeError, ValueError, AttributeError, OverflowError) as exc:
        # One typed error for every bad value, naming the message, instead of whatever the
        # primitive writer happened to raise.
        raise ProtocolEncodeError(
            f"cannot encode {sd.name} v{version}: {type(exc).__name__}: {exc}"
        ) from exc
    return out


# The request and response classes of an API (generated Message subclasses). Unbounded, so
# that helpers can narrow them with protocols (say, "a response with an error_code").
ReqT = TypeVar("ReqT")
RespT = TypeVar("RespT")


class Api(Generic[ReqT, RespT]):
    """One Kafka API: key, valid versions, flexible versions, request and response schemas.

    Generic in the request and response classes, so that encoding takes the request class
    and decoding returns the response class (the compiled codecs build exactly these).
    """

    def __init__(
        self,
        key: int,
        name: str,
        versions: str,
        flexible: str,
        request: StructDef | Sequence[Field],
        response: StructDef | Sequence[Field],
        request_cls: type[ReqT] | None = None,
        response_cls: type[RespT] | None = None,
    ) -> None:
        self.key = key
        self.name = name
        self.versions = Versions.parse(versions)
        self.flexible = Versions.parse(flexible)
        # Generated modules pass their schemas and classes; tests may pass bare field lists
        # (an ad hoc API whose message classes are made here).
        if not isinstance(request, StructDef):
            request = StructDef(f"{name}Request", request)
        if not isinstance(response, StructDef):
            response = StructDef(f"{name}Response", response)
        if request_cls not in (None, request.cls) or response_cls not in (None, response.cls):
            raise ValueError(f"{name}: the classes do not belong to the schemas")
        self.request = request
        self.response = response
        self.request_cls: type[ReqT] = request.cls  # type: ignore[assignment]
        self.response_cls: type[RespT] = response.cls  # type: ignore[assignment]
        assert self.versions.hi is not None, "an API needs a highest version"
        self.min_version = self.versions.lo
        self.max_version: int = self.versions.hi

    def _check(self, version: int) -> bool:
        if version not in self.versions:
            raise UnsupportedFieldError(
                f"{self.name} has no version {version} (valid {self.versions})"
            )
        return version in self.flexible

    def is_flexible(self, version: int) -> bool:
        """Whether ``version`` uses compact encodings and tagged fields."""
        return version in self.flexible

    # The four codecs. Requests are encoded by clients and decoded by (fake) brokers. The
    # encoders also take a mapping of field names (testing tools that rewrite messages).

    def encode_request(self, version: int, body: ReqT | Mapping[str, object]) -> bytearray:
        """Encode a request body at ``version``."""
        return _encode(self.request, version, self._check(version), body)

    def decode_request(self, version: int, data: bytes | bytearray | memoryview | Reader) -> ReqT:
        """Decode a request body (fake brokers and tests)."""
        r = data if isinstance(data, Reader) else Reader(data)
        msg: ReqT = self.request.decoder_for(version, self._check(version))(r)
        return msg

    def encode_response(self, version: int, body: RespT | Mapping[str, object]) -> bytearray:
        """Encode a response body (fake brokers and tests)."""
        return _encode(self.response, version, self._check(version), body)

    def decode_response(self, version: int, data: bytes | bytearray | memoryview | Reader) -> RespT:
        """Decode a response body; raises ``ProtocolDecodeError`` on malformed input."""
        r = data if isinstance(data, Reader) else Reader(data)
        msg: RespT = self.response.decoder_for(version, self._check(version))(r)
        return msg

    def __repr__(self) -> str:
        return f"<Api {self.name} key={self.key} versions={self.versions}>"


#: An API of any message types, for code that handles every API alike (registries,
#: headers, fake brokers and proxies).
AnyApi = Api[Any, Any]
