"""Is a command well-formed?  fixtures/schema/command.schema.json, compiled once per op.

`command_problem(op, command)` is None for a well-formed command, else one line naming the op, the
offending field path and the reason: the message of the INVALID_COMMAND outcome (rule CMD-01).

Each op's definition ($defs/<op>) is compiled on its own with fastjsonschema, under draft-4 rules:
the definitions use only keywords that mean the same in draft 4 and in the document's draft 2020-12,
except that draft 4 counts 1.0 as a number but not an integer.  The reference wants that: its
handlers test `isinstance(x, int)` and call `range()`, and Python's json gives a float for 1.0.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any

import fastjsonschema

from .data import fixtures
from .fastcheck import compile_check

_DRAFT4 = "http://json-schema.org/draft-04/schema#"
_UPDATE_ITEM = re.compile(r"^updates\[(\d+)\](?:\.feature|\.level)?$")


@functools.cache
def document() -> dict[str, Any]:
    """The command schema, as JSON data."""
    return json.loads((fixtures() / "schema" / "command.schema.json").read_text())


def _no_remote(uri: str) -> Any:
    raise ValueError(f"command.schema.json may only refer to its own definitions, not {uri}")


@functools.cache
def validator(name: str) -> Callable[..., Any]:
    """The compiled check of the document's `$defs/<name>` (an op, or a record type).

    Two rewrites that keep the meaning and make the check about twice as fast: every `$ref` is
    replaced by the definition it names (there is no recursion, and a `$ref`'s only siblings are
    descriptions), so the check is one function instead of one call per reference; and a snapshot
    record's `record_body` (an anyOf whose branches each fix one `type`) is left out, because
    `command_problem` checks each record against its type's definition directly instead of trying
    the branches in turn."""
    defs = {**document()["$defs"], "record_body": {}}
    return fastjsonschema.compile({"$schema": _DRAFT4, **_inline(defs[name], defs)},
                                  handlers={s: _no_remote for s in ("http", "https", "file", "ftp")},
                                  use_default=False)


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#/$defs/"):
                _no_remote(ref)
            return _inline(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


# -- the fast check ------------------------------------------------------------------------------
# `validator(name)` is the arbiter; `accepts(name)` (reference_impl.fastcheck, compiled from the same
# definition) says True only for commands the validator accepts, in about a third of the time.  False
# means nothing: the validator decides and words the message, so `command_problem` gives the same
# answer either way.

@functools.cache
def accepts(name: str) -> Callable[[Any], bool]:
    """The fast check of `$defs/<name>`: True only where `validator(name)` accepts."""
    defs = {**document()["$defs"], "record_body": {}}
    return compile_check(_inline(defs[name], defs))


def command_problem(op: str, command: dict[str, Any]) -> str | None:
    """None when `command` (a dict whose op is `op`, one of OPS) is well-formed, else what is wrong."""
    if accepts(op)(command):
        if op != "load_snapshot":
            return None
        for record in command["snapshot"]["records"]:  # each a dict with a known type by now
            if not accepts(record["type"])(record):
                break
        else:
            return None
    try:
        validator(op)(command)
        if op == "load_snapshot":
            for i, record in enumerate(command["snapshot"]["records"]):  # each has a known type by now
                validator(record["type"])(record, name_prefix=f"data.snapshot.records[{i}]")
    except fastjsonschema.JsonSchemaValueException as e:
        return _message(op, command, e)
    return None


def _message(op: str, command: dict[str, Any], e: fastjsonschema.JsonSchemaValueException) -> str:
    value = e.value
    name = e.name or "data"
    path = re.sub(r"^data\.?", "", name)
    item = _UPDATE_ITEM.match(path) if op == "update_features" else None
    if item is not None and e.rule in ("type", "required"):
        # The reference's text for a bad update before there was a schema: recorded examples and the
        # kafka:// target quote it.
        u = command["updates"][int(item.group(1))]
        return f"update_features: each update needs 'feature' (string) and 'level' (int): {u!r}"
    if e.rule == "required" and isinstance(value, dict) and isinstance(e.definition, dict):
        missing = [k for k in e.definition.get("required", []) if k not in value]
        fields = ", ".join(f"{path}.{k}" if path else k for k in missing)
        return f"{op}: malformed command: {fields} {'is' if len(missing) == 1 else 'are'} required"
    reason = e.message[len(name):].strip() if e.message.startswith(name) else e.message
    return f"{op}: malformed command: {path or 'the command'} {reason}, got {_short(value)}"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
