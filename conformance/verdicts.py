"""Verdicts and findings, one home: the words a run ends with, how a run's results become one verdict
(the suite's, `kfc check`'s with the Spark replay, `kfc replay`'s), the one-line repro command, and
how failing tests group into findings (one cause, one finding) and what was not checked, by why.

The plugin writes the suite's verdict into summary.json; the application prints these; nothing
else decides a verdict.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

CONFORMS, DOES_NOT_CONFORM, INPUT_ERRORS, NOTHING_CHECKED = (
    "CONFORMS", "DOES NOT CONFORM", "INPUT ERRORS", "NOTHING CHECKED")
SUITE_VERDICTS = (CONFORMS, DOES_NOT_CONFORM, INPUT_ERRORS, NOTHING_CHECKED)
# `kfc replay` judges a corpus, not a target's conformance: PASS / DIVERGED instead of the first two
PASS, DIVERGED = "PASS", "DIVERGED"
EXECUTED = ("passed", "failed", "unexpectedly-passed")  # test statuses that checked something


def suite_verdict(counts: dict[str, int], exit_status: int) -> str:
    """The suite's verdict from its result counts: a run that executed nothing is never a pass (an
    expected failure checks nothing either)."""
    checked = sum(counts.get(k, 0) for k in EXECUTED)
    failed = counts.get("failed", 0) + counts.get("unexpectedly-passed", 0)
    if checked == 0:
        return NOTHING_CHECKED
    return DOES_NOT_CONFORM if failed or exit_status else CONFORMS


def repro_command(trace_path: Path | str, target_spec: str) -> str:
    """The one line that replays a written trace against the target again."""
    return f"kfc replay-trace {shlex.quote(str(trace_path))} --target {shlex.quote(target_spec)}"


def group_findings(failures: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Failing tests grouped by their cause, most tests first."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for t in failures:
        groups.setdefault(cause(t), []).append(t)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def uncovered_lines(tests: list[dict[str, Any]], covered: set[str], kips: set[str]) -> list[str]:
    """The rules of the KIPs under check that no test exercised, grouped by why: their tests were
    skipped (the skip reason), expected to fail, or no test of this run carries them."""
    from reference_impl.rules import RULES

    missing = sorted(r for r, rule in RULES.items() if rule.kip in kips and r not in covered)
    if not missing:
        return []
    why: dict[str, list[str]] = defaultdict(list)
    for rid in missing:
        mine = [t for t in tests if rid in (t.get("rules") or [])]
        if mine and all(t["status"] == "skipped" for t in mine):
            reasons = sorted({skip_reason(t) for t in mine})
            why["skipped: " + "; ".join(reasons[:2]) + (" …" if len(reasons) > 2 else "")].append(rid)
        elif mine and all(t["status"] in ("skipped", "xfailed") for t in mine):
            why["expected to fail (expectations file)"].append(rid)
        elif RULES[rid].area == "observe":
            why["checked on a live cluster only (kafka:// target, observe tier)"].append(rid)
        else:
            why["no test of this profile and target reaches it"].append(rid)
    total = sum(1 for rule in RULES.values() if rule.kip in kips)
    lines = [f"rules not covered: {len(missing)} of {total}"]
    for reason, rids in sorted(why.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {reason}: {', '.join(rids)}")
    return lines


def skip_reason(test: dict[str, Any]) -> str:
    text = str(test.get("summary") or "no reason given")
    return text.removeprefix("Skipped: ")[:160]


def skipped_lines(tests: list[dict[str, Any]]) -> list[str]:
    """Skipped tests grouped by their reason, most first."""
    reasons = Counter(skip_reason(t) for t in tests if t["status"] == "skipped")
    if not reasons:
        return []
    lines = [f"skipped: {sum(reasons.values())} test(s), by reason"]
    for reason, n in reasons.most_common(8):
        lines.append(f"  {n:>5}  {reason}")
    if len(reasons) > 8:
        lines.append(f"  {sum(n for _, n in reasons.most_common()[8:]):>5}  ({len(reasons) - 8} other reasons)")
    return lines


def failing_rule(test: dict[str, Any]) -> str | None:
    """The rule a failing test broke: the one its diverging expected outcome carries."""
    if test["status"] not in ("failed", "unexpectedly-passed"):
        return None
    div = test.get("divergence") or {}
    if div.get("rule"):
        return str(div["rule"])
    return None


def overall_verdict(suite: dict[str, Any], spark: dict[str, Any] | None) -> str:
    """One verdict for the run, consistent with the exit code."""
    verdict = suite.get("verdict") or (CONFORMS if suite["exit_status"] == 0 else DOES_NOT_CONFORM)
    if spark is None or verdict != CONFORMS:
        return str(verdict)
    counts = spark["by_status"]
    if counts.get("diverged") or counts.get("target-error") or spark["rows_in"] != spark["rows_out"]:
        return DOES_NOT_CONFORM
    if counts.get("input-error"):
        return INPUT_ERRORS
    return CONFORMS


_NODE = re.compile(r"((?:broker|controller|node) -?\d+ \([^)]*\))")
_REFUSAL_FIELDS = {"error", "error_code", "message", "results", "rule"}


def cause(test: dict[str, Any]) -> str:
    """One cause, one finding: a target error groups by the node that failed, a divergence only in
    non-refusal fields (an epoch, a supported range) by those fields, any other by its rule."""
    div = test.get("divergence") or {}
    if div.get("failure"):
        node = _NODE.search(str(div["failure"]))
        return f"target error at {node.group(1)}" if node else "target error"
    if div.get("rule_from") in ("test", "invariant") and div.get("rule"):
        return str(div["rule"])  # a read-back the test makes for its rule, or a model invariant's rule
    fields = {str(d.get("field", "")).split("[")[0].split(".")[0] for d in div.get("diffs") or []}
    if fields and not fields & _REFUSAL_FIELDS and div.get("op") != "observe":
        if fields == {"epoch"}:
            return "KIP584-EPOCH-01"  # the one rule about the epoch, whatever op reported it
        return f"{', '.join(sorted(fields))} differs"
    return failing_rule(test) or "(no rule)"


def replay_verdict(s: dict[str, Any]) -> str:
    """One verdict, consistent with the exit code (0 only for PASS)."""
    st = s["by_status"]
    if st.get("diverged") or st.get("target-error") or not s.get("complete", True):
        return DIVERGED
    if st.get("input-error"):
        return INPUT_ERRORS
    if not st.get("pass"):
        return NOTHING_CHECKED
    return PASS  # skipped traces are shown with their count and reason; they are not passes
