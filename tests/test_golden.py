"""Golden traces (fixtures/golden): hand-checked expected outcomes for the KIP examples and every rule
family, replayed against the reference.  A failure here means the reference or the golden trace is
wrong: investigate which (the trace's "source" cites where its expectations come from)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.compare import compare
from conformance.corpus import write_corpus
from conformance.replay import replay_rows
from conformance.trace import validate
from reference_impl import Cluster
from reference_impl.rules import RULES

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden"
FILES = sorted(GOLDEN.glob("*.json"))

# The examples of the KIPs (KIP-1022 adapted per docs/deviations.md §3b) each have a golden trace.
KIP_EXAMPLES = {
    "kip1022-version-mapping-latest", "kip1022-version-mapping-3.6-IV1", "kip1022-version-mapping-2.9-IV2",
    "kip1022-feature-dependencies-tv2", "kip1022-feature-dependencies-mv17", "kip1022-format-default",
    "kip1022-format-release-3.6-IV1", "kip1022-format-features-mv16", "kip1022-format-mv-and-release",
    "kip1022-format-tv2-unstable-3.9", "kip1022-format-tv3-4.0", "kip1022-format-elr-needs-mv23",
    "kip1022-features-upgrade-no-flag", "kip1022-features-upgrade-tv2", "kip1022-features-upgrade-three",
    "kip1022-features-upgrade-release", "kip1022-features-downgrade-wrong-way",
    "kip1022-features-release-with-feature",
    "kip584-broker-range", "kip584-downgrade-needs-type", "kip584-delete-feature",
    "kip1155-downgrade-lossless", "kip1155-downgrade-needs-capable-nodes", "kip1155-downgrade-invalid-features",
    "kip1155-lossy-downgrade",
}


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def test_there_are_enough_golden_traces() -> None:
    assert len(FILES) >= 40
    assert KIP_EXAMPLES <= {p.stem for p in FILES}, sorted(KIP_EXAMPLES - {p.stem for p in FILES})


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden_trace_is_well_formed(path: Path) -> None:
    t = _load(path)
    assert validate(t, path.name) == []
    assert t["id"] == f"golden-{path.stem}"
    assert t["source"].startswith("golden: ") and len(t["source"]) > 30  # cites where it was checked
    unknown = set(t.get("rules", [])) - set(RULES)
    assert not unknown, f"unknown rule ids {unknown}"
    named = {s["expected"]["rule"] for s in t["steps"] if s["expected"].get("rule")}
    assert named <= set(t.get("rules", [])), f"steps name rules the trace does not list: {named - set(t['rules'])}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_reference_agrees_with_golden_trace(path: Path) -> None:
    t = _load(path)
    c = Cluster(t["profile"])
    for cmd in t.get("initial", []):
        c.apply(cmd)
    for i, step in enumerate(t["steps"]):
        actual = c.apply(step["command"])
        diffs = compare(step["expected"], actual)
        assert not diffs, f"{path.name} step {i} ({step['command']['op']}): {diffs}"


def test_every_rule_family_has_a_golden_trace() -> None:
    # Golden traces are the reference's outcomes; "observe" rules are invariants of what a live
    # cluster's nodes say (conformance.live.checks, tests/test_live_checks.py), not outcomes.
    outcome_rules = {rid for rid, r in RULES.items() if r.area != "observe"}
    families = {rid.split("-")[0] for rid in outcome_rules}
    covered = {rid.split("-")[0] for p in FILES for rid in _load(p).get("rules", [])}
    assert families <= covered, sorted(families - covered)
    covered_ids = {rid for p in FILES for rid in _load(p).get("rules", [])}
    non_915 = {r for r in outcome_rules if not r.startswith("KIP915")}
    assert len(covered_ids & non_915) >= 0.95 * len(non_915), sorted(non_915 - covered_ids)


def test_golden_corpus_replays_through_the_pipeline(tmp_path: Path) -> None:
    path = tmp_path / "golden.parquet"
    write_corpus((_load(p) for p in FILES), path)
    from conformance.corpus import read_corpus

    rows = list(replay_rows("reference", read_corpus(path)))
    assert [r["status"] for r in rows] == ["pass"] * len(FILES), [r for r in rows if r["status"] != "pass"]
