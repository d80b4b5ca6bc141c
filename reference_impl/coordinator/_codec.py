"""Byte codec for the coordinator record schemas described in fixtures/coordinator/schemas.json.

Reads the way Kafka's generated message classes read (same layout, same checks, same error texts),
so that malformed input fails with the message Kafka would log.  Plans are compiled once per
(schema, version, known tags) and cached; the hot path is a flat loop over tuples.
"""

from __future__ import annotations

import functools
import json
import struct
from typing import Any

from ..data import fixtures

_I8, _I16, _I32, _I64 = struct.Struct(">b"), struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")
_FIXED = {"int8": _I8, "int16": _I16, "int32": _I32, "int64": _I64}
# op codes of a compiled plan
_PRIM, _UUID, _STR, _BYTES, _ARR_PRIM, _ARR_STR, _ARR_STRUCT = range(7)


class JavaError(Exception):
    """A Java exception Kafka would raise while reading: its class and getMessage() (may be None)."""

    def __init__(self, cls: str, message: str | None, rule: str = "KIP915-CODEC-02"):
        super().__init__(message if message is not None else cls)
        self.cls = cls
        self.message = message
        self.rule = rule

    @property
    def text(self) -> str:
        # Throwable.toString() without the class when there is a message, like Kafka's log lines
        return self.message if self.message is not None else self.cls


def underflow() -> JavaError:
    return JavaError("java.nio.BufferUnderflowException", None)


def runtime(msg: str) -> JavaError:
    return JavaError("java.lang.RuntimeException", msg)


def null_field(name: str) -> JavaError:
    return JavaError("java.lang.RuntimeException", f"non-nullable field {name} was serialized as null",
                     "KIP915-CODEC-03")


@functools.cache
def schema_doc() -> dict[str, Any]:
    path = fixtures() / "coordinator" / "schemas.json"
    return json.loads(path.read_text())


def schemas() -> dict[str, Any]:
    return schema_doc()["schemas"]


def _present(f: dict[str, Any], version: int, lo: int, hi: int) -> bool:
    # Mirrors the generated version conditionals: a bound equal to the schema's own edge emits no check,
    # so out-of-range versions (only the pre-4.0 Java serde lets them through) read the nearest layout.
    since, until = f.get("since", lo), f.get("until", hi)
    return (since <= lo or version >= since) and (until >= hi or version <= until)


def _flexible(s: dict[str, Any], version: int) -> bool:
    fx = s["flexible_from"]
    return fx is not None and (fx <= s["versions"][0] or version >= fx)


def _field_op(name: str, typ: str) -> tuple[Any, ...]:
    nullable = typ.endswith("?")
    t = typ.rstrip("?")
    if t in _FIXED:
        return (_PRIM, name, _FIXED[t])
    if t == "uuid":
        return (_UUID, name, None)
    if t == "string":
        return (_STR, name, nullable)
    if t == "bytes":
        return (_BYTES, name, nullable)
    if t.startswith("["):
        el = t[1:-1]
        if el in _FIXED:
            return (_ARR_PRIM, name, (nullable, _FIXED[el]))
        if el == "string":
            return (_ARR_STR, name, nullable)
        return (_ARR_STRUCT, name, (nullable, el))
    raise ValueError(f"unknown field type {typ}")


@functools.cache
def plan(schema: str, version: int, known: frozenset[int] | None) -> tuple[Any, ...]:
    """(fields, flexible, tagged-by-tag, defaults of absent fields) for reading/writing `schema` at `version`."""
    s = schemas()[schema]
    lo, hi = s["versions"]
    fields, absent = [], {}
    for f in s["fields"]:
        if _present(f, version, lo, hi):
            fields.append(_field_op(f["name"], f["type"]))
        else:
            absent[f["name"]] = f.get("default")
    flexible = _flexible(s, version)
    tagged = {}
    for t in s.get("tagged", []):
        if known is None or t["tag"] in known:
            tagged[t["tag"]] = (_field_op(t["name"], t["type"]), t["default"])
    return tuple(fields), flexible, tagged, absent


class Reader:
    """Reads one buffer; `unknown_tags` counts tagged fields skipped because the reader does not know them."""

    __slots__ = ("buf", "keep_unknown", "known", "n", "pos", "unknown_tags")

    def __init__(self, buf: bytes, pos: int = 0, known: dict[str, frozenset[int]] | None = None,
                 keep_unknown: bool = False):
        self.buf, self.pos, self.n = buf, pos, len(buf)
        self.known = known
        self.unknown_tags = 0
        self.keep_unknown = keep_unknown

    def remaining(self) -> int:
        return self.n - self.pos

    def fixed(self, st: struct.Struct) -> int:
        p = self.pos
        if p + st.size > self.n:
            raise underflow()
        self.pos = p + st.size
        return st.unpack_from(self.buf, p)[0]

    def uvarint(self) -> int:
        """ByteUtils.readUnsignedVarint: at most 5 bytes, result is a (signed) Java int."""
        buf, p, n = self.buf, self.pos, self.n
        result = shift = 0
        for i in range(5):
            if p >= n:
                self.pos = p
                raise underflow()
            b = buf[p]
            p += 1
            if i < 4:
                result |= (b & 0x7F) << shift
                if b < 0x80:
                    break
                shift += 7
            else:
                result = (result | ((b - 256 if b & 0x80 else b) << 28)) & 0xFFFFFFFF
                if b & 0x80:
                    self.pos = p
                    raise JavaError("java.lang.IllegalArgumentException",
                                    "Varint is too long, the most significant bit in the 5th byte is set, "
                                    f"converted value: {result:x}")
        self.pos = p
        return result - (1 << 32) if result & 0x80000000 else result

    def array(self, size: int) -> bytes:
        rem = self.n - self.pos
        if size > rem:
            raise runtime(f"Error reading byte array of {size} byte(s): only {rem} byte(s) available")
        if size < 0:
            raise JavaError("java.lang.NegativeArraySizeException", str(size))
        p = self.pos
        self.pos = p + size
        return self.buf[p:p + size]

    def length(self, flexible: bool, short: bool) -> int:
        if flexible:
            v = self.uvarint() - 1
            return v + (1 << 32) if v < -(1 << 31) else v  # Java int wrap-around
        return self.fixed(_I16 if short else _I32)

    def string(self, name: str, nullable: bool, flexible: bool) -> str | None:
        ln = self.length(flexible, True)
        if ln < 0:
            if nullable:
                return None
            raise null_field(name)
        if ln > 0x7FFF:
            raise runtime(f"string field {name} had invalid length {ln}")
        return self.array(ln).decode("utf-8", "replace")

    def struct(self, schema: str, version: int) -> dict[str, Any]:
        known = None if self.known is None else self.known.get(schema, frozenset())
        fields, flexible, tagged, absent = plan(schema, version, known)
        out: dict[str, Any] = dict(absent)
        for op in fields:
            out[op[1]] = self.value(op, version, flexible)
        for (op, default) in tagged.values():
            out[op[1]] = default
        if flexible:
            unknown = []
            for _ in range(self.uvarint()):
                tag, size = self.uvarint(), self.uvarint()
                hit = tagged.get(tag)
                if hit is not None:
                    # known tags are read by type; the declared size is not checked (as in Kafka)
                    out[hit[0][1]] = self.value(hit[0], version, True)
                else:
                    try:
                        data = self.array(size)
                    except JavaError as e:
                        e.rule = "KIP915-LOAD-02"
                        raise
                    self.unknown_tags += 1
                    if self.keep_unknown:
                        unknown.append([tag, data.hex()])
            if unknown:
                out["_unknown_tags"] = unknown
        return out

    def value(self, op: tuple[Any, ...], version: int, flexible: bool) -> Any:
        code, name, extra = op
        if code == _PRIM:
            return self.fixed(extra)
        if code == _STR:
            return self.string(name, extra, flexible)
        if code == _UUID:
            if self.remaining() < 16:  # readUuid = two readLong calls
                raise underflow()
            return self.array(16).hex()
        if code == _BYTES:
            ln = self.length(flexible, False)
            if ln < 0:
                if extra:
                    return None
                raise null_field(name)
            return self.array(ln).hex()
        nullable = extra if code == _ARR_STR else extra[0]
        ln = self.length(flexible, False)
        if ln < 0:
            if nullable:
                return None
            raise null_field(name)
        if ln > self.remaining():
            raise runtime(f"Tried to allocate a collection of size {ln}, but there are only "
                          f"{self.remaining()} bytes remaining.")
        if code == _ARR_PRIM:
            st = extra[1]
            return [self.fixed(st) for _ in range(ln)]
        if code == _ARR_STR:
            return [self.string(name + " element", False, flexible) for _ in range(ln)]
        return [self.struct(extra[1], version) for _ in range(ln)]


# ---------------------------------------------------------------------------------------------- writing


def uvarint(v: int) -> bytes:
    v &= 0xFFFFFFFF
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _w_len(out: bytearray, n: int, flexible: bool, short: bool) -> None:
    if flexible:
        out += uvarint(n + 1)
    else:
        out += (_I16 if short else _I32).pack(n)


def _w_value(out: bytearray, op: tuple[Any, ...], v: Any, version: int, flexible: bool,
             known: dict[str, frozenset[int]] | None) -> None:
    code, name, extra = op
    if code == _PRIM:
        out += extra.pack(v)
    elif code == _UUID:
        out += bytes.fromhex(v)
    elif code == _STR:
        if v is None:
            if not extra:
                raise ValueError(f"non-nullable field {name} was set to null")
            _w_len(out, -1, flexible, True)
        else:
            b = v.encode("utf-8")
            if len(b) > 0x7FFF:
                raise ValueError(f"'{name}' field is too long to be serialized")
            _w_len(out, len(b), flexible, True)
            out += b
    elif code == _BYTES:
        if v is None:
            if not extra:
                raise ValueError(f"non-nullable field {name} was set to null")
            _w_len(out, -1, flexible, False)
        else:
            b = bytes.fromhex(v)
            _w_len(out, len(b), flexible, False)
            out += b
    else:
        nullable = extra if code == _ARR_STR else extra[0]
        if v is None:
            if not nullable:
                raise ValueError(f"non-nullable field {name} was set to null")
            _w_len(out, -1, flexible, False)
            return
        _w_len(out, len(v), flexible, False)
        for el in v:
            if code == _ARR_PRIM:
                out += extra[1].pack(el)
            elif code == _ARR_STR:
                _w_value(out, (_STR, name, False), el, version, flexible, known)
            else:
                write_struct(out, extra[1], version, el, known)


def write_struct(out: bytearray, schema: str, version: int, obj: dict[str, Any],
                 known: dict[str, frozenset[int]] | None = None) -> None:
    """Append `obj` at `version`.  known = tags this writer knows (None: all); '_unknown_tags' go out verbatim."""
    k = None if known is None else known.get(schema, frozenset())
    fields, flexible, tagged, absent = plan(schema, version, k)
    for name, default in absent.items():
        if name in obj and obj[name] != default:
            raise ValueError(f"Attempted to write a non-default {name} at version {version}")
    for op in fields:
        _w_value(out, op, obj[op[1]], version, flexible, known)
    tags: list[tuple[int, bytes]] = []
    for tag, (op, default) in tagged.items():
        v = obj.get(op[1], default)
        if v != default:  # generated writers emit a tagged field only when it differs from its default
            b = bytearray()
            _w_value(b, op, v, version, True, known)
            tags.append((tag, bytes(b)))
    for tag, hx in obj.get("_unknown_tags", ()):
        tags.append((tag, bytes.fromhex(hx)))
    if not flexible:
        if tags:
            raise ValueError(f"Tagged fields were set, but version {version} of this message does not support them.")
        return
    tags.sort(key=lambda t: t[0])
    out += uvarint(len(tags))
    for tag, payload in tags:
        out += uvarint(tag)
        out += uvarint(len(payload))
        out += payload


def encode(schema: str, version: int, obj: dict[str, Any], known: dict[str, frozenset[int]] | None = None) -> bytes:
    out = bytearray()
    write_struct(out, schema, version, obj, known)
    return bytes(out)


def decode(schema: str, version: int, buf: bytes, known: dict[str, frozenset[int]] | None = None,
           keep_unknown: bool = True) -> dict[str, Any]:
    """Decode a body (no version prefix).  Raises JavaError like the generated read() would."""
    return Reader(buf, 0, known, keep_unknown).struct(schema, version)
