"""A JSON Schema compiled into a fast yes-or-don't-know check, for data that is almost always valid.

`compile_check(schema)` gives `check(value) -> bool`.  True means the schema accepts `value` as
fastjsonschema's compiled validator (draft 4, 6, 7 or 2019 code) accepts it; False means only "ask
that validator", which then decides and words the message.  A caller therefore keeps the validator's
answer on every input and pays for it only on the rare value the check does not vouch for:

    if not check(value):
        validator(value)  # raises with the message, or accepts after all

Why it can say yes safely: it tests exact built-in types (`type(x) is int`: never a bool, a float,
a tuple or a subclass, which some drafts would also accept), it applies each keyword it knows at
least as strictly as every draft fastjsonschema implements does, and a schema with a keyword it does
not know compiles to `return False`.  Why it is faster: no exception machinery, no key-set copies,
a single function of plain `if`s per schema (anyOf branches aside).

Keywords: type, enum, const, properties, required, additionalProperties, items (one schema),
minItems, maxItems, minLength, maxLength, pattern, minimum, maximum, allOf, anyOf; annotations are
ignored.  `$ref`s must be inlined first (reference_impl._command_schema and conformance.model do).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["compile_check"]

_ANNOTATIONS = frozenset({"description", "title", "$comment", "examples", "$schema", "$id", "$defs",
                          "definitions"})
_KNOWN = frozenset({"type", "enum", "const", "properties", "required", "additionalProperties", "items", "minItems",
                    "maxItems", "maximum", "minimum", "pattern", "minLength", "maxLength", "allOf", "anyOf"})
_TYPE_TEST = {
    "null": "{v} is None",
    "boolean": "type({v}) is bool",
    "integer": "type({v}) is int",
    "number": "(type({v}) is int or type({v}) is float)",
    "string": "type({v}) is str",
    "array": "type({v}) is list",
    "object": "type({v}) is dict",
}
_ATOMIC_TYPES = (str, int, float, bool, type(None))
# A pattern the check tests without the regex engine (same answer: every character a hex digit, an
# even number of them).
_HEX_PAIRS, _HEX_DIGITS = "^(?:[0-9a-fA-F]{2})*$", "0123456789abcdefABCDEF"


class _Unsupported(Exception):
    """A keyword or form not compiled here: that (sub)schema's check says False."""


def compile_check(schema: Any) -> Callable[[Any], bool]:
    """The fast check of `schema` (with no `$ref` left)."""
    return _Compiler().build(schema)


class _Compiler:
    def __init__(self) -> None:
        self.functions: list[list[str]] = []
        self.consts: dict[str, Any] = {"_ATOMIC_TYPES": _ATOMIC_TYPES}
        self.n = 0

    def name(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def const(self, value: Any) -> str:
        name = self.name("K")
        self.consts[name] = value
        return name

    def build(self, schema: Any) -> Callable[[Any], bool]:
        top = self.function(schema)
        src = "\n\n".join("\n".join(f) for f in self.functions)
        ns = dict(self.consts)
        exec(compile(src, "<fast schema check>", "exec"), ns)  # noqa: S102 - code generated above, from a schema
        fn: Callable[[Any], bool] = ns[top]
        fn.__doc__ = src  # the generated source, for whoever wonders what it checks
        return fn

    def function(self, schema: Any) -> str:
        """A function `name(v) -> bool` for `schema`; its name."""
        fname = self.name("f")
        body: list[str] = []
        try:
            self.block(schema, "v", 1, body)
            body.append("    return True")
        except _Unsupported:
            body = ["    return False"]
        self.functions.append([f"def {fname}(v):", *body])
        return fname

    def equals_one_of(self, v: str, values: Any) -> str:
        """A test that `v` has the type of one of `values` and equals it (enum / const, exact types)."""
        if not isinstance(values, list) or not values or not all(type(x) in _ATOMIC_TYPES for x in values):
            raise _Unsupported("enum")
        if len(values) == 1:
            x = values[0]
            if x is None:
                return f"{v} is None"
            return f"type({v}) is {type(x).__name__} and {v} == {x!r}"
        pairs = self.const(frozenset((type(x), x) for x in values))
        return f"type({v}) in _ATOMIC_TYPES and (type({v}), {v}) in {pairs}"

    def block(self, schema: Any, v: str, ind: int, out: list[str], known: str | None = None) -> str | None:
        """Lines (at indent level `ind`) that `return False` unless `v` passes `schema`.  `known`: the
        one JSON type `v` is already known to have (exactly); returns what is known after these lines."""
        pad = "    " * ind
        if schema is True or schema == {}:
            return known
        if not isinstance(schema, dict):
            raise _Unsupported(repr(schema))
        if set(schema) - _KNOWN - _ANNOTATIONS or schema.get("exclusiveMaximum") or schema.get("exclusiveMinimum"):
            raise _Unsupported(str(sorted(set(schema) - _KNOWN - _ANNOTATIONS)))
        for sub in schema.get("allOf", []):  # first: a branch may tell the type, which saves tests below
            known = self.block(sub, v, ind, out, known)
        types = schema.get("type")
        if types is not None:
            types = [types] if isinstance(types, str) else list(types)
            if not types or any(t not in _TYPE_TEST for t in types):
                raise _Unsupported(f"type {types!r}")
            if types != [known]:
                out.append(pad + "if not (" + " or ".join(_TYPE_TEST[t].format(v=v) for t in types) + "): "
                           "return False")
            if len(types) == 1:
                known = types[0]
        elif known is not None:
            types = [known]
        if "enum" in schema:
            out.append(pad + f"if not ({self.equals_one_of(v, schema['enum'])}): return False")
        if "const" in schema:
            out.append(pad + f"if not ({self.equals_one_of(v, [schema['const']])}): return False")
        self.object_keywords(schema, types, v, ind, out)
        self.array_keywords(schema, types, v, ind, out)
        if any(k in schema for k in ("pattern", "minLength", "maxLength")):  # fastjsonschema: any str
            inner = pad
            if types != ["string"]:  # else the type test above has made sure
                out.append(pad + f"if isinstance({v}, str):")
                inner = pad + "    "
            if schema.get("pattern") == _HEX_PAIRS:
                out.append(inner + f"if len({v}) % 2 or {v}.strip({_HEX_DIGITS!r}): return False")
            elif "pattern" in schema:
                from fastjsonschema.draft04 import DOLLAR_FINDER  # fastjsonschema's own `$` -> `\Z`

                rx = self.const(re.compile(DOLLAR_FINDER.sub(r"\\Z", schema["pattern"])))
                out.append(inner + f"if not {rx}.search({v}): return False")
            if "minLength" in schema:
                out.append(inner + f"if len({v}) < {int(schema['minLength'])}: return False")
            if "maxLength" in schema:
                out.append(inner + f"if len({v}) > {int(schema['maxLength'])}: return False")
        for key, op in (("maximum", ">"), ("minimum", "<")):  # bools too: stricter than any draft
            if key in schema:
                bound = schema[key]
                if type(bound) not in (int, float):
                    raise _Unsupported(key)
                out.append(pad + f"if isinstance({v}, (int, float)) and {v} {op} {bound!r}: return False")
        if "anyOf" in schema:
            names = [self.function(sub) for sub in schema["anyOf"]]
            out.append(pad + "if not (" + " or ".join(f"{n}({v})" for n in names) + "): return False")
        return known

    def object_keywords(self, schema: dict[str, Any], types: list[str] | None, v: str, ind: int,
                        out: list[str]) -> None:
        """properties / required / additionalProperties: fastjsonschema applies them to any dict;
        here a dict subclass is a don't-know."""
        if not any(k in schema for k in ("properties", "required", "additionalProperties")):
            return
        exact = types == ["object"]
        pad = "    " * ind
        inner = pad if exact else pad + "    "
        deeper = ind + (1 if exact else 2)  # the indent level of code inside an `if` / `for` at `inner`
        if not exact:
            out.append(pad + f"if isinstance({v}, dict):")
            out.append(inner + f"if type({v}) is not dict: return False")
        props = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(props, dict) or not isinstance(required, list):
            raise _Unsupported("properties")
        if required:
            out.append(inner + "if not (" + " and ".join(f"{k!r} in {v}" for k in required) + "): return False")
        for key, sub in props.items():
            x = self.name("x")
            lines: list[str] = []
            self.block(sub, x, deeper, lines)
            if lines:
                out.append(inner + f"if {key!r} in {v}:")
                out.append(inner + f"    {x} = {v}[{key!r}]")
                out.extend(lines)
        extra = schema.get("additionalProperties", True)
        if extra is False:
            out.append(inner + f"if not {v}.keys() <= {self.const(frozenset(props))}: return False")
        elif extra is not True and extra != {}:
            k, x = self.name("k"), self.name("x")
            lines = []
            self.block(extra, x, deeper, lines)
            if lines:
                out.append(inner + f"for {k}, {x} in {v}.items():")
                out.append(inner + f"    if {k} in {self.const(frozenset(props))}: continue")
                out.extend(lines)

    def array_keywords(self, schema: dict[str, Any], types: list[str] | None, v: str, ind: int,
                       out: list[str]) -> None:
        """items / minItems / maxItems: fastjsonschema applies them to a list or tuple; here a tuple
        or list subclass is a don't-know."""
        if not any(k in schema for k in ("items", "minItems", "maxItems")):
            return
        exact = types == ["array"]
        pad = "    " * ind
        inner = pad if exact else pad + "    "
        if not exact:
            out.append(pad + f"if isinstance({v}, (list, tuple)):")
            out.append(inner + f"if type({v}) is not list: return False")
        if "minItems" in schema:
            out.append(inner + f"if len({v}) < {int(schema['minItems'])}: return False")
        if "maxItems" in schema:
            out.append(inner + f"if len({v}) > {int(schema['maxItems'])}: return False")
        items = schema.get("items", True)
        if items is False:
            out.append(inner + f"if {v}: return False")
        elif isinstance(items, dict):
            x = self.name("x")
            lines: list[str] = []
            self.block(items, x, ind + (1 if exact else 2), lines)
            if lines:
                out.append(inner + f"for {x} in {v}:")
                out.extend(lines)
        elif items is not True:
            raise _Unsupported("items")
