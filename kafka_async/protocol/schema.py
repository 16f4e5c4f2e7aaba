"""The schema engine: one definition per Kafka API covers every version of it.

A definition lists fields with the versions they exist in, the versions in which they may be
null, and (for flexible versions) their tag. From it this module compiles, per version and
lazily, an encoder and a decoder, so the version is a run-time choice made per connection
from ApiVersions.

Values are instances of generated slotted classes (one per struct in the schema) with
attribute access. Encoders also accept plain dicts for any struct, which keeps call sites
short: ``METADATA.encode_request(12, {"topics": [{"name": "orders"}]})``.

Rules carried over from Kafka's own generator:

* a field absent from the chosen version must hold its default, unless it is ``ignorable``
  (then it is dropped); otherwise :class:`~kafka_async.errors.UnsupportedFieldError`;
* null is only allowed in a field's nullable versions;
* in flexible versions strings, bytes and arrays use compact (unsigned varint) lengths, and
  every struct ends with a tagged-field section; unknown tags are skipped on decode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from struct import error as struct_error
from typing import Any

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


class Type:
    """A field type. Subclasses give the classic and flexible (compact) codecs."""

    name: str = "?"
    nullable_ok = False  # whether the type can be null at all on the wire

    def zero(self) -> Any:
        raise NotImplementedError  # pragma: no cover - abstract

    def encoder(self, flexible: bool, nullable: bool, version: int) -> Encoder:
        raise NotImplementedError  # pragma: no cover - abstract

    def decoder(self, flexible: bool, nullable: bool, version: int) -> Decoder:
        raise NotImplementedError  # pragma: no cover - abstract


class Primitive(Type):
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
    ) -> None:
        self.name = name
        self._zero = zero
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


INT8 = Primitive("int8", 0, c.write_int8, Reader.int8)
INT16 = Primitive("int16", 0, c.write_int16, Reader.int16)
UINT16 = Primitive("uint16", 0, c.write_uint16, Reader.uint16)
INT32 = Primitive("int32", 0, c.write_int32, Reader.int32)
UINT32 = Primitive("uint32", 0, c.write_uint32, Reader.uint32)
INT64 = Primitive("int64", 0, c.write_int64, Reader.int64)
FLOAT64 = Primitive("float64", 0.0, c.write_float64, Reader.float64)
BOOL = Primitive("bool", False, c.write_bool, Reader.boolean)
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
    return Array(elem)


class Message:
    """Base of the generated value classes: slotted, keyword constructor, equality, repr."""

    __slots__ = ()
    _schema: StructDef

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

    def __init__(self, name: str, fields: Sequence[Field]) -> None:
        self.name = name
        self.fields = list(fields)
        self.names = tuple(fld.name for fld in self.fields)
        seen: set[str] = set()
        for fld in self.fields:
            if fld.name in seen:
                raise ValueError(f"duplicate field {fld.name} in {name}")
            seen.add(fld.name)
        self.by_name = {fld.name: fld for fld in self.fields}
        self.cls: type[Message] = type(
            name, (Message,), {"__slots__": self.names, "_schema": self, "__module__": __name__}
        )
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
        key = (version, flexible)
        enc = self._enc.get(key)
        if enc is None:
            enc = self._compile_encoder(version, flexible)
            self._enc[key] = enc
        return enc

    def decoder_for(self, version: int, flexible: bool) -> Decoder:
        key = (version, flexible)
        dec = self._dec.get(key)
        if dec is None:
            dec = self._compile_decoder(version, flexible)
            self._dec[key] = dec
        return dec

    def _compile_encoder(self, version: int, flexible: bool) -> Encoder:
        plain: list[tuple[str, Encoder, bool]] = []  # name, encoder, nullable
        tagged: list[tuple[int, str, Encoder, Field]] = []
        absent: list[Field] = []
        for fld in self.fields:
            if version not in fld.versions:
                absent.append(fld)
                continue
            nullable = version in fld.nullable
            enc = fld.type.encoder(flexible, nullable, version)
            if flexible and version in fld.tagged:
                assert fld.tag is not None
                tagged.append((fld.tag, fld.name, enc, fld))
            else:
                plain.append((fld.name, _guard_null(enc, fld, nullable), nullable))
        tagged.sort(key=lambda t: t[0])
        struct_name = self.name
        known = frozenset(self.names)

        def encode_struct(out: bytearray, value: Any) -> None:
            if isinstance(value, Mapping):
                extra = value.keys() - known
                if extra:
                    raise UnsupportedFieldError(f"{struct_name} has no field(s) {sorted(extra)}")
                get: Callable[[str, Field], Any] = lambda n, fld: (  # noqa: E731
                    value[n] if n in value else fld.make_default()
                )
            else:
                get = lambda n, fld: getattr(value, n)  # noqa: E731
            for fld in absent:
                v = get(fld.name, fld)
                if not fld.ignorable and v != fld.make_default():
                    raise UnsupportedFieldError(
                        f"{struct_name}.{fld.name}={v!r} cannot be sent at version {version} "
                        f"(valid in versions {fld.versions})"
                    )
            by_name = self.by_name
            for name, enc, _ in plain:
                enc(out, get(name, by_name[name]))
            if flexible:
                present: list[tuple[int, bytearray]] = []
                for tag, name, enc, fld in tagged:
                    v = get(name, fld)
                    if v == fld.make_default():
                        continue
                    body = bytearray()
                    enc(body, v)
                    present.append((tag, body))
                c.write_uvarint(out, len(present))
                for tag, body in present:
                    c.write_uvarint(out, tag)
                    c.write_uvarint(out, len(body))
                    out += body

        return encode_struct

    def _compile_decoder(self, version: int, flexible: bool) -> Decoder:
        plain: list[tuple[str, Decoder]] = []
        tagged: dict[int, tuple[str, Decoder]] = {}
        defaults: list[Field] = []
        for fld in self.fields:
            if version not in fld.versions:
                defaults.append(fld)
                continue
            dec = fld.type.decoder(flexible, version in fld.nullable, version)
            if flexible and version in fld.tagged:
                assert fld.tag is not None
                tagged[fld.tag] = (fld.name, dec)
                defaults.append(fld)
            else:
                plain.append((fld.name, dec))
        cls = self.cls
        setter = object.__setattr__

        def decode_struct(r: Reader) -> Any:
            obj = cls.__new__(cls)
            for fld in defaults:
                setter(obj, fld.name, fld.make_default())
            for name, dec in plain:
                setter(obj, name, dec(r))
            if flexible:
                count = r.check_count(r.uvarint(), 2)
                for _ in range(count):
                    tag = r.uvarint()
                    size = r.uvarint()
                    entry = tagged.get(tag)
                    if entry is None:
                        r.skip(size)  # unknown tag: forward compatible
                        continue
                    sub = Reader(r.buf, r.pos, r.pos + r.check_count(size))
                    setter(obj, entry[0], entry[1](sub))
                    sub.expect_end()
                    r.pos = sub.end
            return obj

        return decode_struct


def _guard_null(enc: Encoder, fld: Field, nullable: bool) -> Encoder:
    """Refuse None in a version where the field is not nullable (instead of a TypeError)."""
    if nullable or not (isinstance(fld.type, (Array, StructDef)) or fld.type.nullable_ok):
        return enc

    def guarded(out: bytearray, value: Any) -> None:
        if value is None:
            raise UnsupportedFieldError(
                f"{fld.name} may not be null in this version (nullable in {fld.nullable})"
            )
        enc(out, value)

    return guarded


def struct(name: str, fields: Sequence[Field]) -> StructDef:
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


class Api:
    """One Kafka API: key, valid versions, flexible versions, request and response schemas."""

    def __init__(
        self,
        key: int,
        name: str,
        versions: str,
        flexible: str,
        request: Sequence[Field],
        response: Sequence[Field],
    ) -> None:
        self.key = key
        self.name = name
        self.versions = Versions.parse(versions)
        self.flexible = Versions.parse(flexible)
        self.request = StructDef(f"{name}Request", request)
        self.response = StructDef(f"{name}Response", response)
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
        return version in self.flexible

    # The four codecs. Requests are encoded by clients and decoded by (fake) brokers.

    def encode_request(self, version: int, body: Any) -> bytearray:
        """Encode a request body (a message object or a dict) at ``version``."""
        return _encode(self.request, version, self._check(version), body)

    def decode_request(self, version: int, data: bytes | memoryview | Reader) -> Any:
        r = data if isinstance(data, Reader) else Reader(data)
        return self.request.decoder_for(version, self._check(version))(r)

    def encode_response(self, version: int, body: Any) -> bytearray:
        """Encode a response body (fake brokers and tests)."""
        return _encode(self.response, version, self._check(version), body)

    def decode_response(self, version: int, data: bytes | memoryview | Reader) -> Any:
        r = data if isinstance(data, Reader) else Reader(data)
        return self.response.decoder_for(version, self._check(version))(r)

    def Request(self, **kwargs: Any) -> Any:
        return self.request.cls(**kwargs)

    def Response(self, **kwargs: Any) -> Any:
        return self.response.cls(**kwargs)

    def __repr__(self) -> str:
        return f"<Api {self.name} key={self.key} versions={self.versions}>"
