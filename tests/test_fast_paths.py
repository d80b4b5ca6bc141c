"""The replay's fast paths give the same answers as the slow ones they stand in front of.

* reference_impl.fastcheck: a compiled schema check may only say True where fastjsonschema's
  validator accepts (commands per op, records, the trace and the outcome schema), and says True
  for everything the recorded sources hold (else it would not be a fast path).
* conformance.corpus.loads: msgspec's decoder, else json.loads; the same value (types, key order,
  floats to the bit) wherever msgspec accepts, json's own error where it does not.
* command_problem, outcome_problem, trace_problems: the same answer, message and all, with the fast
  check as without it.
* Image.copy: what copy.deepcopy gives.
"""

from __future__ import annotations

import copy
import json
import math
import random
import struct
from pathlib import Path
from typing import Any

import fastjsonschema
import pytest

from conformance import corpus, model
from conformance.corpus import iter_bodies, loads, parse_body
from conformance.generate import generate
from reference_impl import Cluster
from reference_impl._cluster import Image, replay, tree_copy
from reference_impl._command_schema import accepts, command_problem, document, validator
from reference_impl.api import OPS
from reference_impl.fastcheck import compile_check

VALUES: list[Any] = [None, True, False, 0, 1, -1, 2**40, 2**70, 1.0, 1.5, -0.0, math.inf, math.nan, "", "x", "00ff",
                     "0g", "ab\n", "KIP584-UPD-01", "kfc-trace", [], [1], [1, 2], [1, 2, 3], ["a"], {}, {"a": 1},
                     {"a": [1, 2]}, (1, 2), "UPGRADE", "broker", "group", "FeatureLevelRecord", 1000001, 1000000,
                     "NONE", "format", {"op": "format"}, {"error": "NONE", "error_code": 0, "message": None}]


class _Str(str):
    pass


class _Dict(dict):  # type: ignore[type-arg]
    pass


def _traces(n: int = 60) -> list[dict[str, Any]]:
    return list(generate(n, 5))


def _mutate(rng: random.Random, x: Any) -> Any:
    """One random edit somewhere inside x (a copy; x is not changed)."""
    if isinstance(x, dict) and x and rng.random() < 0.85:
        x = dict(x)
        k = rng.choice(list(x))
        r = rng.random()
        if r < 0.12:
            del x[k]
        elif r < 0.25:
            x[rng.choice(["zz", k + "_", "op", "version", "node", "actual", "diff", "error"])] = rng.choice(VALUES)
        elif r < 0.5:
            x[k] = rng.choice(VALUES)
        elif r < 0.55:
            x = _Dict(x)
        elif r < 0.6 and isinstance(x[k], str):
            x[k] = _Str(x[k])
        else:
            x[k] = _mutate(rng, x[k])
        return x
    if isinstance(x, list) and x and rng.random() < 0.85:
        x = list(x)
        i = rng.randrange(len(x))
        r = rng.random()
        if r < 0.15:
            del x[i]
        elif r < 0.4:
            x[i] = rng.choice(VALUES)
        elif r < 0.45:
            return tuple(x)
        elif r < 0.55:
            x.append(copy.deepcopy(x[i]))
        else:
            x[i] = _mutate(rng, x[i])
        return x
    return rng.choice(VALUES)


def _valid(validate: Any, value: Any) -> bool:
    try:
        validate(value)
    except fastjsonschema.JsonSchemaValueException:
        return False
    return True


def test_the_fast_check_of_each_command_definition_only_vouches_for_valid_commands() -> None:
    rng = random.Random(11)
    commands = [s["command"] for t in _traces() for s in t["steps"]]
    names = list(document()["$defs"])
    for c in commands:
        assert accepts(c["op"])(c), c  # everything the generator sends takes the fast path
    said_yes = 0
    for _ in range(30000):
        c = commands[rng.randrange(len(commands))]
        for _ in range(rng.randrange(1, 4)):
            c = _mutate(rng, c)
        name = c["op"] if isinstance(c, dict) and c.get("op") in names and rng.random() < 0.9 else rng.choice(names)
        if accepts(name)(c):
            said_yes += 1
            assert _valid(validator(name), c), (name, c)
    assert said_yes > 1000


@pytest.mark.parametrize(("name", "pointer"), [("trace.schema.json", ""),
                                               ("target-protocol.schema.json", "/$defs/outcome")])
def test_the_fast_trace_and_outcome_checks_only_vouch_for_valid_data(name: str, pointer: str) -> None:
    rng = random.Random(12)
    check, validate = model.fast_check(name, pointer), model._compiled(name, pointer)
    samples: list[Any] = _traces()
    if pointer:
        samples = [s["expected"] for t in samples for s in t["steps"]]
    for x in samples:
        assert check(x)
    said_yes = 0
    for _ in range(20000):
        x = samples[rng.randrange(len(samples))]
        for _ in range(rng.randrange(1, 4)):
            x = _mutate(rng, x)
        if check(x):
            said_yes += 1
            assert _valid(validate, x), x
    assert said_yes > 500


def test_keywords_are_applied_at_least_as_strictly_as_the_validator() -> None:
    cases: list[tuple[dict[str, Any], list[Any]]] = [
        ({"type": "integer"}, [1, True, 1.0, "1", None]),
        ({"type": ["integer", "null"]}, [None, 0, False, 2.0]),
        ({"type": "number", "maximum": 3}, [3, 3.5, True, 4, -1.0]),
        ({"enum": [1, "a", None, True]}, [1, 1.0, True, "a", None, False, 0, [1]]),
        ({"const": 1}, [1, 1.0, True]),
        ({"type": "string", "pattern": "^a$"}, ["a", "a\n", "ba", _Str("a")]),
        ({"type": ["string", "null"], "pattern": "^(?:[0-9a-fA-F]{2})*$"},
         ["", "ab", "abc", "ag", "ab\n", " ab", None, "\u0660\u0661"]),
        ({"type": "object", "required": ["a"], "additionalProperties": False, "properties": {"a": {"type": "boolean"}}},
         [{"a": True}, {"a": 1}, {}, {"a": True, "b": 1}, _Dict(a=True)]),
        ({"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "integer"}},
         [[1, 2], [1], [1, 2, 3], (1, 2), [1, True]]),
        ({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5}]}, ["x", 5, 4, None]),
        ({"not": {"type": "string"}}, [1, "x"]),  # an unknown keyword: never vouched for
    ]
    for schema, values in cases:
        check, validate = compile_check(schema), fastjsonschema.compile(schema)
        for v in values:
            if check(v):
                assert _valid(validate, v), (schema, v)
    assert compile_check({"not": {}})(1) is False


def test_command_problem_answers_as_the_validator_alone_does() -> None:
    rng = random.Random(13)
    commands = [s["command"] for t in _traces() for s in t["steps"]]

    def slow(op: str, c: dict[str, Any]) -> str | None:
        try:
            validator(op)(c)
            if op == "load_snapshot":
                for i, r in enumerate(c["snapshot"]["records"]):
                    validator(r["type"])(r, name_prefix=f"data.snapshot.records[{i}]")
        except fastjsonschema.JsonSchemaValueException as e:
            from reference_impl._command_schema import _message

            return _message(op, c, e)
        return None

    for _ in range(20000):
        c = commands[rng.randrange(len(commands))]
        for _ in range(rng.randrange(0, 3)):
            c = _mutate(rng, c)
        if not isinstance(c, dict) or not isinstance(c.get("op"), str) or c["op"] not in OPS:
            continue
        assert command_problem(c["op"], c) == slow(c["op"], c), c


def test_problem_messages_are_the_validators_own() -> None:
    rng = random.Random(14)
    traces = _traces(20)
    for _ in range(3000):
        t = _mutate(rng, traces[rng.randrange(len(traces))])
        fast = model.trace_problems(t, "t")
        p = model._problem(model._compiled("trace.schema.json"), t, "t")
        assert fast == ([p] if p else [])
        o = _mutate(rng, rng.choice(traces)["steps"][0]["expected"])
        assert model.outcome_problem(o, "o") == model._problem(
            model._compiled("target-protocol.schema.json", "/$defs/outcome"), o, "o")


def _number_texts(rng: random.Random) -> str:
    k = rng.randrange(6)
    if k == 0:
        return str(rng.randrange(-10**30, 10**30))
    if k == 1:
        return repr(struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0])
    if k == 2:
        return f"{rng.choice(['', '-'])}{rng.randrange(10**rng.randrange(1, 25))}.{rng.randrange(10**20)}" \
               f"e{rng.randrange(-330, 330)}"
    if k == 3:
        return f"{rng.randrange(1, 10)}e{rng.randrange(-400, 400)}"
    if k == 4:
        return str(rng.randrange(-2**70, 2**70))
    return repr(rng.random() * 10 ** rng.randrange(-20, 20))


def test_loads_gives_what_json_loads_gives() -> None:
    rng = random.Random(15)
    texts = [b for _, b in iter_bodies(corpus.corpus_files(_corpus_path())[0])][:50]
    texts += ["NaN", "-Infinity", "[1e400]", "123456789012345678901234567890", "-0", "-0.0", '{"a":1,"a":2}',
              '"\\ud800"', '"\\udc00x"', "\ufeff{}", " {} ", '{"a":"\\u0000"}', "[" * 3000 + "]" * 3000]
    texts += ["[" + ",".join(_number_texts(rng) for _ in range(20)) + "]" for _ in range(3000)]
    texts += [json.dumps({"s": "".join(chr(rng.randrange(0x20, 0x2FFFF)) for _ in range(8))},
                         ensure_ascii=rng.random() < 0.5) for _ in range(500)]
    for text in texts + [t.encode("utf-8") for t in texts[:60]] + ['{"a": 1}'.encode("utf-16")]:
        try:
            want: Any = ("ok", json.loads(text))
        except (ValueError, RecursionError) as e:
            want = ("error", type(e), str(e))
        try:
            got: Any = ("ok", loads(text))
        except (ValueError, RecursionError) as e:
            got = ("error", type(e), str(e))
        assert repr(got) == repr(want), text[:80]


def test_parse_body_reports_bad_json_in_json_loads_words() -> None:
    row = parse_body("t1", '{"format": NaN')
    assert row.trace is None and row.error is not None
    assert row.error.startswith("t1: not valid JSON: ")


def _corpus_path() -> Any:
    return min((Path(__file__).resolve().parents[1] / "fixtures" / "corpus").glob("*.parquet"))


def test_image_copy_is_a_deep_copy() -> None:
    c = Cluster("kip-1155")
    for cmd in ({"op": "format", "controllers": [{"id": 3000}, {"id": 3001}]},
                {"op": "register", "role": "controller", "node": 3001},
                {"op": "register", "role": "broker", "node": 1},
                {"op": "add_metadata", "kind": "scram_credential"},
                {"op": "add_metadata", "kind": "cordoned_log_dir"}):
        c.apply(cmd)
    img = c.image
    assert img.brokers and img.controllers and img.payload
    dup, deep = img.copy(), copy.deepcopy(img)
    assert dup == deep and repr(dup) == repr(deep)
    for part in ("finalized", "brokers", "controllers", "payload"):
        assert getattr(dup, part) is not getattr(img, part)
    assert dup.brokers[1] is not img.brokers[1] and dup.brokers[1]["features"] is not img.brokers[1]["features"]
    replay(dup, {"type": "RemovePayloadRecord", "id": img.payload[0]["id"]})
    assert len(img.payload) == 2
    odd = {"a": [1, (2, [3])], "b": (1, 2), "c": {1: {"x": None}}, "d": Image()}
    assert repr(tree_copy(odd)) == repr(copy.deepcopy(odd))
    assert tree_copy(odd)["a"][1][1] is not odd["a"][1][1]
