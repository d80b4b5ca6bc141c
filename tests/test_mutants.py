"""Seeded mutants (conformance/mutants.py): each breaks its documented rule on its witness, and only there."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from conformance.compare import compare
from conformance.mutants import (
    MUTANTS,
    mutant_rows,
    neutral_scenario,
    witness,
)
from conformance.targets import make_target, plugin_manager
from conformance.targets.mutant import MutantTarget
from conformance.targets.reference import ReferenceTarget
from kfc.commands.check import mutants_cli
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
    assert set(rows[0]) == {"name", "rule", "kip", "profile", "description"}
    res = CliRunner().invoke(mutants_cli, [])
    assert res.exit_code == 0 and all(n in res.output for n in MUTANTS)
