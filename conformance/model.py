"""The one outcome model: what a command, an outcome, a hello and a trace look like, checked by
compiled JSON Schemas (fixtures/schema), and which outcome fields a comparison reads.

The schemas are the single definition of shape; the trace schema refers to the protocol schema's
`outcome` and `command` (`$ref` across files, inlined here before compiling).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

import fastjsonschema

from reference_impl.data import fixtures

Command = dict[str, Any]  # {"op": …, op-specific fields}; per-op schema: fixtures/schema/command.schema.json


class Outcome(TypedDict, total=False):
    """Every outcome has error, error_code and message; the other fields depend on the op."""

    op: str | None
    error: str
    error_code: int | None
    message: str | None
    rule: str | None


class Hello(TypedDict):
    name: str
    profile: str | None
    capabilities: list[str]
    protocol_version: int
    unreported: NotRequired[list[str]]  # outcome fields it cannot report (REPORTABLE names)


# How a comparison reads an outcome field (conformance.compare): "exact" fields are compared when
# both sides report them; "required" ones must be reported whenever the expected outcome has them.
@dataclass(frozen=True)
class Field:
    name: str
    required: bool = False


COMPARED_FIELDS: tuple[Field, ...] = (
    Field("levels", True), Field("metadata_version"), Field("finalized", True), Field("supported", True),
    Field("epoch", True), Field("lines", True), Field("exit_code"), Field("dependencies"), Field("state"),
    Field("skipped_unknown_keys"), Field("ignored_tagged_fields"), Field("sent_features"), Field("lost"),
    Field("stderr"), Field("broker_epoch", True), Field("epoch_before"), Field("version"), Field("validate_only"),
    Field("profile"), Field("dynamic_quorum"), Field("role"), Field("node"), Field("action"), Field("request"),
    Field("kind"), Field("formatted"), Field("kraft_version"), Field("voters"), Field("active_controller"),
    Field("brokers"), Field("controllers"), Field("payload"),
)
# Compared by conformance.compare's own code, not field by field: `message` by its key fragment,
# `rule` when the target sends one (per-feature results' too), records normalized (features,
# epoch, given incarnations), a snapshot's body, each per-feature result, `response` as an outcome.
COMPARED_SPECIALLY = ("error", "error_code", "message", "rule", "records", "snapshot", "results", "response")
# Every outcome field docs/target-protocol.md documents and the comparison does not read, with why
# (tests/test_compare_fields.py fails when a documented field is in neither place).
NOT_COMPARED: dict[str, str] = {
    "op": "customary echo of the command's op: the command itself says it",
    "note": "the reference's own remark that a release lacks the tool (computed from its catalogue); "
            "not Kafka output",
    "records[].offset": "compared through the epochs it equals (epoch, broker_epoch, a record's epoch)",
    "records[].incarnation (generated)": "an id the cluster generates (the reference N-M, a real broker a "
                                         "UUID); an incarnation the command gives is compared",
    "snapshot.cluster_id": "generated when the cluster is formatted; a snapshot loads back only into its own",
}
# What a target may declare it cannot report (its hello's `unreported`): the comparison skips those
# fields for that target only.
REPORTABLE = frozenset(f.name for f in COMPARED_FIELDS) | {"records", "snapshot", "results", "response"}


def compared_fields() -> frozenset[str]:
    """Every top-level outcome field a comparison reads."""
    return frozenset(f.name for f in COMPARED_FIELDS) | frozenset(COMPARED_SPECIALLY)


def unreported_of(hello: dict[str, Any]) -> frozenset[str]:
    """The outcome fields a target says it cannot report (its hello's `unreported`)."""
    return frozenset(hello.get("unreported") or ())


OUTCOME_KEYS = ("error", "error_code", "message")  # required in every outcome


def outcome_rules(outcome: dict[str, Any]) -> set[str]:
    """The rule ids an outcome carries: its own and its per-feature results'."""
    found = {outcome["rule"]} if outcome.get("rule") else set()
    found |= {r["rule"] for r in (outcome.get("results") or {}).values() if isinstance(r, dict) and r.get("rule")}
    return found
STATUSES = ("pass", "diverged", "target-error", "input-error")
Status = Literal["pass", "diverged", "target-error", "input-error"]


class ModelError(ValueError):
    """Data that does not fit the model; the message names where and what."""


# -- schemas ---------------------------------------------------------------------------------------

def _schema_file(name: str) -> dict[str, Any]:
    return json.loads((fixtures() / "schema" / name).read_text())  # type: ignore[no-any-return]


def _inline(node: Any, here: dict[str, Any], cache: dict[str, dict[str, Any]]) -> Any:
    """Replace every `$ref` (local, or `file.json#/$defs/x` into another schema file) by a copy of
    its target (our schemas are not recursive), so any validator can compile the result alone."""
    if isinstance(node, list):
        return [_inline(v, here, cache) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return {k: _inline(v, here, cache) for k, v in node.items()}
    file, _, pointer = ref.partition("#")
    doc = cache.setdefault(file, _schema_file(file)) if file else here
    target: Any = doc
    for part in filter(None, pointer.split("/")):
        target = target[part]
    resolved = _inline(target, doc, cache)
    siblings = {k: _inline(v, here, cache) for k, v in node.items() if k != "$ref"}
    return {"allOf": [resolved], **siblings} if siblings else resolved


@functools.cache
def schema(name: str) -> dict[str, Any]:
    """A schema of fixtures/schema with its cross-file references inlined (jsonschema can use it too)."""
    doc = _schema_file(name)
    return _inline(doc, doc, {name: doc})  # type: ignore[no-any-return]


@functools.cache
def _compiled(name: str, pointer: str = "") -> Callable[[Any], Any]:
    target: Any = schema(name)
    for part in filter(None, pointer.split("/")):
        target = target[part]
    return fastjsonschema.compile(target)


def _problem(validate: Callable[[Any], Any], value: Any, where: str) -> str | None:
    try:
        validate(value)
    except fastjsonschema.JsonSchemaValueException as e:
        name = e.name or "data"
        path = name.removeprefix("data").lstrip(".") or "(top)"
        return f"{where}: at {path}: {e.message.removeprefix(name).strip()}"
    return None


# -- fast paths --------------------------------------------------------------------------------------
# Every replayed step meets the outcome schema and every corpus row the trace schema, and nearly all
# of them are valid.  `fast_check` compiles a schema into a check that says True only where the
# compiled validator accepts (reference_impl.fastcheck); the validator runs only when it says False,
# so every answer, and every message, is the validator's.

@functools.cache
def fast_check(name: str, pointer: str = "") -> Callable[[Any], bool]:
    """The fast check of a schema of fixtures/schema (or of the part at `pointer`)."""
    from reference_impl.fastcheck import compile_check

    target: Any = schema(name)
    for part in filter(None, pointer.split("/")):
        target = target[part]
    return compile_check(target)


def outcome_check() -> Callable[[Any], bool]:
    """`outcome_ok` itself, to keep at hand in a loop."""
    return fast_check("target-protocol.schema.json", "/$defs/outcome")


def outcome_ok(outcome: Any) -> bool:
    """True only if `outcome` is an outcome (False: ask `outcome_problem`)."""
    return fast_check("target-protocol.schema.json", "/$defs/outcome")(outcome)


def trace_ok(trace: Any) -> bool:
    """True only if `trace` is a kfc trace v1 (False: ask `trace_problems`)."""
    return fast_check("trace.schema.json")(trace)


def outcome_problem(outcome: Any, where: str = "outcome") -> str | None:
    """Why `outcome` is not an outcome (None when it is one)."""
    if outcome_ok(outcome):
        return None
    return _problem(_compiled("target-protocol.schema.json", "/$defs/outcome"), outcome, where)


def hello_problem(hello: Any, where: str = "hello") -> str | None:
    body = {"id": 0, "type": "hello", **hello} if isinstance(hello, dict) else hello
    problem = _problem(_compiled("target-protocol.schema.json", "/$defs/hello_response"), body, where)
    if problem is None and isinstance(hello, dict):
        unknown = sorted(unreported_of(hello) - REPORTABLE)
        if unknown:
            return (f"{where}: at unreported: {', '.join(map(repr, unknown))} not an outcome field a target may "
                    f"leave unreported (known: {', '.join(sorted(REPORTABLE))})")
    return problem


def trace_problems(trace: Any, where: str = "trace") -> list[str]:
    """Why `trace` is not a kfc trace v1 (empty when it is one)."""
    if trace_ok(trace):
        return []
    problem = _problem(_compiled("trace.schema.json"), trace, where)
    return [problem] if problem else []


def jsonable(value: Any) -> Any:
    """The JSON form of an outcome (tuples become lists, keys strings), as a trace stores it."""
    return json.loads(json.dumps(value, default=str))


__all__ = ["COMPARED_FIELDS", "COMPARED_SPECIALLY", "NOT_COMPARED", "OUTCOME_KEYS", "REPORTABLE", "STATUSES",
           "Command", "Field", "Hello", "ModelError", "Outcome", "Status", "compared_fields", "fast_check",
           "hello_problem", "jsonable", "outcome_check", "outcome_ok", "outcome_problem", "schema", "trace_ok",
           "trace_problems", "unreported_of"]
