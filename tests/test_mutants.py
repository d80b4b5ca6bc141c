"""Seeded mutants (conformance/mutants/, declared in fixtures/mutants/catalogue.json): each breaks its
documented rule on its witness, and only there; the catalogue is checked when it is read, and mutants
reach the reference only through reference_impl.lowlevel."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from click.testing import CliRunner

from conformance.compare import compare
from conformance.live.target import WIRE_INEXPRESSIBLE
from conformance.mutants import (
    MUTANTS,
    _build,
    _catalogue,
    mutant_rows,
    neutral_scenario,
    parse_spec,
    witness,
)
from conformance.targets import make_target, plugin_manager
from conformance.targets.mutant import MutantTarget
from conformance.targets.reference import ReferenceTarget
from kfc.commands.check import mutants_cli
from reference_impl import Cluster, lowlevel
from reference_impl.coordinator import decode
from reference_impl.rules import RULES

NAMES = sorted(MUTANTS)
FAMILIES = {"KIP-584", "KIP-778", "KIP-919", "KIP-1022", "KIP-1155", "KIP-915"}


def rules_of(out: dict[str, Any]) -> set[str]:
    """The rule ids an outcome carries: top level, and per feature (3.x UpdateFeatures results)."""
    found = {out["rule"]} if out.get("rule") else set()
    for r in (out.get("results") or {}).values():
        if isinstance(r, dict) and r.get("rule"):
            found.add(r["rule"])
    return found


def first_divergence(name: str) -> tuple[int, dict[str, Any], dict[str, Any]] | None:
    m = MUTANTS[name]
    ref, mut = ReferenceTarget(m.profile), MutantTarget(name)
    for i, cmd in enumerate(witness(name)):
        a, b = ref.apply(cmd), mut.apply(cmd)
        fields = ("error", "error_code", "rule") + (() if m.diverges_on == "rule" else (m.diverges_on,))
        if compare(a, b) or any(a.get(f) != b.get(f) for f in fields):
            return i, a, b
    return None


def test_registry_shape():
    assert len(MUTANTS) >= 28
    assert {m.kip for m in MUTANTS.values()} >= FAMILIES
    for name, m in MUTANTS.items():
        assert m.name == name and m.rule in RULES, m
        assert m.description and m.profile
        assert witness(name), name
    # One mutant per rule: each mutant is the suite's evidence for exactly one rule.
    assert len({m.rule for m in MUTANTS.values()}) == len(MUTANTS)


@pytest.mark.parametrize("name", NAMES)
def test_witness_diverges_on_the_mutants_rule(name):
    m = MUTANTS[name]
    hit = first_divergence(name)
    assert hit is not None, f"{name}: witness does not tell the mutant from the reference"
    step, ref, mut = hit
    if m.diverges_on == "rule":
        # A refusal the mutant misses or misattributes: the reference names the mutant's rule.
        assert m.rule in rules_of(ref), (step, ref, mut)
        assert m.rule not in rules_of(mut), (step, ref, mut)
    else:
        # A behaviour rule: the field it is about is where the outcomes differ.
        assert ref.get(m.diverges_on) != mut.get(m.diverges_on), (step, ref, mut)


@pytest.mark.parametrize("name", NAMES)
def test_mutant_agrees_on_the_neutral_scenario(name):
    m = MUTANTS[name]
    ref, mut = ReferenceTarget(m.profile), MutantTarget(name)
    for cmd in neutral_scenario(m.profile):
        a, b = ref.apply(cmd), mut.apply(cmd)
        assert a["error"] == "NONE", a
        assert compare(a, b) == [], (cmd, a, b)
        assert a.get("records") == b.get("records"), cmd


def test_mutants_coexist_and_leave_the_reference_alone():
    one, two = MutantTarget("negative-level-off-by-one"), MutantTarget("safe-downgrade-may-raise")
    for name, target in (("negative-level-off-by-one", one), ("safe-downgrade-may-raise", two)):
        other = two if target is one else one
        ref = ReferenceTarget(MUTANTS[name].profile)
        outs = [(ref.apply(c), target.apply(c), other.apply(c)) for c in witness(name)]
        a, b, c = outs[-1]
        assert a["rule"] == MUTANTS[name].rule and b["rule"] != a["rule"]
        assert compare(a, c) == []  # the other mutant is untouched by this bug


def test_make_target_resolves_mutants():
    t = make_target("mutant:epoch-from-feature-records")
    assert isinstance(t, MutantTarget) and t.profile == "kafka-4.2"
    assert t.hello()["profile"] == "kafka-4.2" and t.hello()["mutant"] == "epoch-from-feature-records"
    t = make_target("mutant:epoch-from-feature-records@kafka-4.1")
    assert t.profile == "kafka-4.1" and t.apply({"op": "state"})["profile"] == "kafka-4.1"
    t.reset("kafka-4.0")
    assert t.apply({"op": "state"})["profile"] == "kafka-4.0"
    with pytest.raises(ValueError, match="unknown mutant"):
        make_target("mutant:no-such-bug")
    assert isinstance(make_target("reference"), ReferenceTarget)
    kinds = [k for ks in plugin_manager().hook.kfc_target_kinds() for k in ks]
    assert "mutant:NAME[@PROFILE]" in kinds


def test_cli_lists_every_mutant():
    res = CliRunner().invoke(mutants_cli, ["--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert rows == mutant_rows() and len(rows) == len(MUTANTS)
    assert set(rows[0]) == {"name", "rule", "kip", "profile", "description", "wire"}
    res = CliRunner().invoke(mutants_cli, [])
    assert res.exit_code == 0 and all(n in res.output for n in MUTANTS)


def test_parse_spec_defaults_to_the_mutants_profile():
    m, profile = parse_spec("downgrade-floor-off-by-one")
    assert (m.name, profile) == ("downgrade-floor-off-by-one", "kip-1155")
    assert parse_spec("downgrade-floor-off-by-one@kafka-4.2")[1] == "kafka-4.2"


# ---------------------------------------------------------------------------------------- the catalogue

def _doc_with(name: str, **changes: Any) -> dict[str, Any]:
    """The catalogue with one mutant's entry changed (a value of None removes the key)."""
    doc = copy.deepcopy(_catalogue.read())
    entry = next(e for e in doc["mutants"] if e["name"] == name)
    for k, v in changes.items():
        if v is None:
            entry.pop(k)
        else:
            entry[k] = v
    return doc


def test_catalogue_is_the_registry():
    doc = _catalogue.read()
    assert [e["name"] for e in doc["mutants"]] == list(MUTANTS)
    assert [e["name"] for e in _catalogue.entries(doc)] == list(MUTANTS)
    for e in doc["mutants"]:  # plain data: what the seam is and how it changes, never code
        assert ("edit" in e) != ("variant" in e), e["name"]
        assert MUTANTS[e["name"]].seam == e["seam"]


@pytest.mark.parametrize(("changes", "error"), [
    ({"rule": "KIP584-UPD-99"}, "rule 'KIP584-UPD-99' is not in reference_impl.rules.RULES"),
    ({"profile": "kafka-9.9"}, "unknown profile 'kafka-9.9'"),
    ({"seam": "no_such_function"}, "is not Cluster or in reference_impl.lowlevel.REPLACEABLE"),
    ({"seam": "UpdateContext.no_such_method"}, "UpdateContext defines no attribute 'no_such_method'"),
    ({"variant": "no-records-at-level-0"}, "exactly one of 'edit' and 'variant'"),
    ({"edit": None}, "exactly one of 'edit' and 'variant'"),
    ({"edit": {"old": "x"}}, "edit must be"),
    ({"witness": None}, "missing ['witness']"),
    ({"wittness": []}, "unknown ['wittness']"),
    ({"witness": []}, "empty witness"),
    ({"wire": None}, "missing ['wire']"),
    ({"wire": "maybe"}, "wire must be"),
    ({"wire": {"unreachable": " "}}, "wire must be"),
    ({"wire": {"unreachable": "x", "reachable_with": ["--standalone"]}}, "wire must be"),
    ({"wire": {"reachable_with": ["--release-version"]}}, "wire must be"),
    ({"wire": {"reachable_with": ["--port", "1"]}}, "wire must be"),
])
def test_catalogue_errors_name_the_mutant(changes, error):
    doc = _doc_with("negative-level-off-by-one", **changes)
    with pytest.raises(_catalogue.CatalogueError) as e:
        _catalogue.entries(doc)
    assert "mutant 'negative-level-off-by-one'" in str(e.value) and error in str(e.value)


def test_catalogue_rejects_a_variant_on_another_seam_and_twins():
    doc = _doc_with("disable-writes-nothing", seam="UpdateContext.check_support")
    with pytest.raises(_catalogue.CatalogueError, match="'disable-writes-nothing'.*replaces UpdateContext.check, not"):
        _catalogue.entries(doc)
    doc = _doc_with("disable-writes-nothing", variant="no-such-variant")
    with pytest.raises(_catalogue.CatalogueError, match="unknown variant 'no-such-variant'"):
        _catalogue.entries(doc)
    doc = copy.deepcopy(_catalogue.read())
    doc["mutants"].append(doc["mutants"][0])
    with pytest.raises(_catalogue.CatalogueError, match=f"'{doc['mutants'][0]['name']}': declared twice"):
        _catalogue.entries(doc)


def test_coordinator_recipes_expand_to_record_bytes():
    assert _catalogue._record_bytes({"header": 4242, "body": "000178"}) == "1092000178"
    assert _catalogue._record_bytes("7a7a") == "7a7a" and _catalogue._record_bytes(None) is None
    fields = {"offset": 5, "leaderEpoch": 1, "metadata": "m", "commitTimestamp": 9}
    hx = _catalogue._record_bytes({"header": 5, "schema": "OffsetCommitValue", "version": 4, "fields": fields})
    raw = bytes.fromhex(hx)
    assert raw[:2] == b"\x00\x05"  # the version the loader sees, not the one the body is written at
    assert {k: v for k, v in decode("OffsetCommitValue", 4, raw[2:]).items() if k in fields} == fields
    load = witness("value-version-read-as-highest")[0]
    assert load["records"][0]["value"] == hx


def test_neutral_scenario_follows_the_profile():
    assert neutral_scenario("kafka-3.9")[0] == {"op": "format", "release_version": "3.8-IV0"}
    assert neutral_scenario("kip-1155")[0] == {"op": "format", "standalone": True, "release_version": "4.0-IV3"}
    s = neutral_scenario("kafka-4.2")
    s.clear()
    assert neutral_scenario("kafka-4.2"), "callers get a copy"


# ------------------------------------------------------------------------------------ the machinery

def test_an_edit_that_no_longer_applies_fails_loudly():
    with pytest.raises(RuntimeError, match="no longer applies to update_features: 'no such line' occurs 0 times"):
        _build.cluster_class("stale", "update_features", ("no such line", "x"), None)
    with pytest.raises(RuntimeError, match=r"occurs ([2-9]|\d\d+) times"):  # ambiguous: it must pin one place
        _build.cluster_class("ambiguous", "UpdateContext.check", ("raise self.fail(name, level, ", "x"), None)


def test_lowlevel_replacements_reach_the_callers_only_in_the_subclass():
    calls: list[int] = []
    original = lowlevel.kip1155_downgrade

    def spy(ctx, level, utype):
        calls.append(level)
        return original(ctx, level, utype)

    cls = lowlevel.cluster_class("Spy", kip1155_downgrade=spy)
    assert issubclass(cls, Cluster) and cls.__name__ == "Spy"
    downgrade = [{"op": "format", "release_version": "4.0-IV1"},
                 {"op": "update_features", "updates": [{"feature": "metadata.version", "level": 22,
                                                        "upgrade_type": "UNSAFE_DOWNGRADE"}]}]
    spied, ref = cls("kip-1155"), Cluster("kip-1155")
    assert [spied.apply(c) for c in downgrade] == [ref.apply(c) for c in downgrade]
    assert calls == [22]
    fresh = Cluster("kip-1155")
    for c in downgrade:
        fresh.apply(c)
    assert calls == [22], "the reference still calls the original"
    assert lowlevel.kip1155_downgrade is original
    with pytest.raises(TypeError, match="cannot replace dependency_reason"):
        lowlevel.cluster_class("Nope", dependency_reason=spy)


def test_lowlevel_replacement_reaches_modules_that_import_it():
    """Reader lives in the codec; the loader imports it: load_coordinator must use the replacement."""
    seen: list[str] = []

    class TracingReader(lowlevel.Reader):
        __slots__ = ()

        def struct(self, schema, version):
            seen.append(schema)
            return super().struct(schema, version)

    load = witness("value-version-read-as-highest")[0]
    out = lowlevel.cluster_class("Tracing", Reader=TracingReader)("kafka-4.2").apply(load)
    assert out["op"] == "load_coordinator" and seen == ["OffsetCommitKey"]
    assert Cluster("kafka-4.2").apply(load) == out and seen == ["OffsetCommitKey"]


# Ops of a witness that no Kafka RPC expresses (format only sets the witness up).
_OFF_THE_WIRE = set(WIRE_INEXPRESSIBLE) - {"format"}


def test_every_mutant_says_whether_a_client_sees_it_over_the_wire():
    """Each mutant is declared wire-reachable (the live tiers must kill it over kafka://, see
    tests/test_live.py) or unreachable with the reason; a witness that needs an op no RPC expresses,
    or that is a format alone, cannot be reachable."""
    reachable = [m for m in MUTANTS.values() if m.wire_reachable]
    assert reachable and len(reachable) < len(MUTANTS)
    for m in MUTANTS.values():
        ops = {c["op"] for c in m.witness}
        if ops & _OFF_THE_WIRE or ops == {"format"}:
            assert not m.wire_reachable, f"{m.name}: its witness needs {sorted(ops)}, which no RPC reaches"
        if not m.wire_reachable:
            assert len(m.wire_unreachable or "") > 20, m.name
    rows = {r["name"]: r["wire"] for r in mutant_rows()}
    assert all(rows[m.name].startswith("reachable") for m in reachable)
    assert MUTANTS["update-skips-dependencies"].wire_serve == ("--release-version", "3.9-IV0")  # a dependency unmet
    assert MUTANTS["kraft-version-downgrade-allowed"].wire_serve == ("--standalone",)  # kraft.version 1
