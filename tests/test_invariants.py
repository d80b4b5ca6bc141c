"""conformance.invariants: the invariants over plain data (shared by the stateful model and the observe
tier), their records, and how a violation reaches a finding with its rule id."""

from __future__ import annotations

import pytest

from conformance import invariants as inv
from conformance.verdicts import cause
from reference_impl.rules import RULES


def test_every_invariant_names_a_rule_of_the_registry_and_numbers_1_to_10() -> None:
    records = [v for v in vars(inv).values() if isinstance(v, inv.Invariant)]
    assert {r.number for r in records} == set(range(1, 11))
    assert all(r.rule in RULES for r in records), [r.rule for r in records if r.rule not in RULES]


def test_levels_outside_names_the_node_and_the_range() -> None:
    ranges = {"metadata.version": (7, 20), "group.version": (0, 1)}
    assert inv.levels_outside({"metadata.version": 20, "group.version": 1}, ranges, "node 1") == []
    assert inv.levels_outside({"metadata.version": 21, "share.version": 1}, ranges, "node 1") == [
        "finalized metadata.version=21 lies outside node 1's supported range 7-20",
        "finalized share.version=1 lies outside node 1's supported range (not supported: 0-0)"]
    assert inv.levels_outside({"kraft.version": 1}, {}, "node 1", skip=("kraft.version",)) == []


def test_zero_levels_and_the_epoch() -> None:
    assert inv.zero_levels({"metadata.version": 20, "group.version": 0}) == ["finalized group.version listed at level 0"]
    assert inv.epoch_went_back(10, 12) == [] and inv.epoch_went_back(12, 12) == []
    assert inv.epoch_went_back(12, 10) == ["the finalized epoch went back from 12 to 10"]


def test_a_violation_is_an_assertion_error_carrying_its_rule_and_groups_by_it() -> None:
    with pytest.raises(AssertionError, match=r"^invariant 5 \(KIP778-MV-02\): metadata.version 6 < minimum 7$") as e:
        raise inv.MV_MINIMUM.violated("metadata.version 6 < minimum 7")
    assert isinstance(e.value, inv.Violated) and e.value.invariant is inv.MV_MINIMUM
    # as conformance.suite._support records it: the finding's cause is the invariant's rule
    divergence = {"step": None, "op": "invariant", "rule": "KIP778-MV-02", "rule_from": "invariant",
                  "diffs": [{"field": "invariant", "text": "metadata.version 6 < minimum 7"}]}
    assert cause({"status": "failed", "divergence": divergence}) == "KIP778-MV-02"
