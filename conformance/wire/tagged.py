"""A walk over the bytes of one kio entity that drops the tagged fields its schema does not know.

KIP-482: a receiver skips tagged fields it does not know (Kafka adds them without a version bump).
kio's native reader raises on them instead, so before reading a flexible message again we rewrite it
without those fields.  The same walk tells where bytes stop being the message they should be: a
`WalkError` carries the byte position."""

from __future__ import annotations

import dataclasses
import struct
from typing import Any, get_args, get_origin

from kio.serial._introspect import EntityField, EntityTupleField, PrimitiveTupleField, classify_field

_FIXED = {"int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8,
          "float64": 8, "bool": 1, "uuid": 16, "error_code": 2, "timedelta_i32": 4, "timedelta_i64": 8,
          "datetime_i64": 8}


class WalkError(Exception):
    """The bytes are not the entity: `pos` is where the walk could not go on."""

    def __init__(self, pos: int, what: str):
        super().__init__(f"at byte {pos}: {what}")
        self.pos, self.what = pos, what


@dataclasses.dataclass
class Stripped:
    data: bytes  # the entity's bytes without unknown tagged fields
    end: int  # where the entity ended in the input
    skipped: list[int]  # the unknown tags dropped (every level)


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    start = pos
    while True:
        if pos >= len(data):
            raise WalkError(start, "unsigned varint runs past the end")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise WalkError(start, "unsigned varint longer than 5 bytes")


def _put_uvarint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class _Walk:
    def __init__(self, data: bytes, pos: int):
        self.data, self.pos = data, pos
        self.out = bytearray()
        self.skipped: list[int] = []

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise WalkError(self.pos, f"{what}: {n} byte(s) needed, {len(self.data) - self.pos} left")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        self.out += chunk
        return chunk

    def uvarint(self, what: str) -> int:
        value, end = _uvarint(self.data, self.pos)
        self.out += self.data[self.pos:end]
        self.pos = end
        return value

    def signed(self, fmt: str, what: str) -> int:
        size = struct.calcsize(fmt)
        return int(struct.unpack(fmt, self.take(size, what))[0])

    def entity(self, schema: Any, header: bool = False) -> None:
        flexible = bool(getattr(schema, "__flexible__", False))
        tags: dict[int, dataclasses.Field[Any]] = {}
        for f in dataclasses.fields(schema):
            tag = f.metadata.get("tag")
            if tag is not None:
                tags[int(tag)] = f
                continue
            self.field(f, flexible, header)
        if flexible:
            self.tagged(tags, schema.__name__)

    def tagged(self, tags: dict[int, dataclasses.Field[Any]], where: str) -> None:
        count, self.pos = _uvarint(self.data, self.pos)
        kept: list[bytes] = []
        last = -1
        for _ in range(count):
            at = self.pos
            tag, self.pos = _uvarint(self.data, self.pos)
            size, self.pos = _uvarint(self.data, self.pos)
            if tag <= last:
                raise WalkError(at, f"{where}: tagged field {tag} after {last} (tags must ascend)")
            last = tag
            if self.pos + size > len(self.data):
                raise WalkError(at, f"{where}: tagged field {tag} of {size} byte(s) runs past the end")
            body = self.data[self.pos:self.pos + size]
            self.pos += size
            f = tags.get(tag)
            if f is None:
                self.skipped.append(tag)  # KIP-482: unknown to us, skipped
                continue
            inner = _Walk(body, 0)
            inner.field(f, True, False, tagged=True)
            if inner.pos != len(body):
                raise WalkError(at, f"{where}: tagged field {tag} ({f.name}) is {size} byte(s) but its value "
                                f"ends after {inner.pos}")
            self.skipped += inner.skipped
            kept.append(_put_uvarint(tag) + _put_uvarint(len(inner.out)) + bytes(inner.out))
        self.out += _put_uvarint(len(kept)) + b"".join(kept)

    def field(self, f: dataclasses.Field[Any], flexible: bool, header: bool, tagged: bool = False) -> None:
        kind = f.metadata.get("kafka_type")
        cls = classify_field(f)
        optional = not tagged and type(None) in get_args(f.type if get_origin(f.type) is not tuple
                                                         else get_args(f.type)[0])
        if isinstance(cls, (EntityTupleField, PrimitiveTupleField)):
            if flexible:
                n = self.uvarint(f"{f.name}: array length") - 1
            else:
                n = self.signed(">i", f"{f.name}: array length")
            for _ in range(max(n, 0)):
                if isinstance(cls, EntityTupleField):
                    self.entity(cls.type_)
                else:
                    self.primitive(str(kind), flexible, f.name, False)
            return
        if isinstance(cls, EntityField):
            if optional:
                marker = self.signed(">b", f"{f.name}: null marker")
                if marker == -1:
                    return
            self.entity(cls.type_)
            return
        if header and f.name == "client_id":
            self.primitive("string", False, f.name, True)  # RequestHeader.client_id: always a legacy string
            return
        self.primitive(str(kind), flexible, f.name, optional)

    def primitive(self, kind: str, flexible: bool, name: str, optional: bool) -> None:
        if kind in _FIXED:
            self.take(_FIXED[kind], name)
            return
        if kind in ("string", "bytes", "records"):
            if flexible:
                n = self.uvarint(f"{name}: length") - 1
            elif kind == "string":
                n = self.signed(">h", f"{name}: length")
            else:
                n = self.signed(">i", f"{name}: length")
            if n < -1:
                raise WalkError(self.pos, f"{name}: length {n}")
            self.take(max(n, 0), name)
            return
        raise WalkError(self.pos, f"{name}: kafka type {kind!r} unknown to the walk")


def strip_unknown_tags(schema: Any, data: bytes, pos: int = 0, header: bool = False) -> Stripped:
    """The entity `schema` starting at data[pos], without tagged fields it does not know (WalkError:
    not that entity)."""
    w = _Walk(data, pos)
    w.entity(schema, header)
    return Stripped(bytes(w.out), w.pos, w.skipped)
