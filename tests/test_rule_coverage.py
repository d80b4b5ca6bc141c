"""Rule coverage: every rule in reference_impl.rules.RULES (KIP-915 coordinator rules included) has at
least one test marked `pytest.mark.rule("ID", "pass")` and one marked `pytest.mark.rule("ID", "fail")`,
and every marker names a registered rule.

The scan is static (a regex over tests/*.py), so it sees decorator markers and markers passed in
`pytest.param(..., marks=pytest.mark.rule(...))` / `marks=[...]` alike, whatever is selected to run.

Some rules only describe how a successful operation behaves; no outcome is ever refused in their
name, so they cannot have an honest failing case.  They are listed in NO_FAILING_CASE with the
reason, visibly rather than silently: they still need a "pass" case, and an entry that gains a
"fail" marker must be removed from the list.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from reference_impl.rules import RULES

TESTS = Path(__file__).resolve().parent
THIS = Path(__file__).resolve()

# pytest.mark.rule("ID", "pass"|"fail"), single or double quotes, any whitespace/newlines inside.
MARKER = re.compile(r"""pytest\s*\.\s*mark\s*\.\s*rule\s*\(\s*(['"])(?P<id>[^'"]+)\1\s*,\s*(['"])(?P<case>[^'"]*)\3\s*,?\s*\)""")
ANY_MARKER = re.compile(r"pytest\s*\.\s*mark\s*\.\s*rule\s*\(")

# Rules that state how a successful operation behaves: the reference never refuses an operation in their
# name, so a "fail" case would have to name another rule.  Reported to the lead; not silently exempt.
NO_FAILING_CASE: dict[str, str] = {
    "KIP584-UPD-07": "level 0 deleting a feature / 0 == absent describes the success path; a refused disable "
                     "names KIP584-UPD-05 or the support rules",
    "KIP584-UPD-08": "a no-op update succeeding and writing a record has no refusal of its own",
    "KIP584-UPD-09": "validate_only changes only whether records are written; refusals name the check that failed",
    "KIP584-UPD-10": "the v0/v1 per-feature answer shape; refused features name their own rule",
    "KIP584-EPOCH-01": "the epoch is an observation (offset of the last record), never a refusal",
    "KIP584-API-01": "ApiVersions < v3 simply carries no features; nothing is refused",
    "KIP584-API-02": "finalized level 0 is omitted from a successful answer; nothing is refused",
    "KIP778-MV-03": "a lossless downgrade is allowed; its refused counterparts are KIP778-MV-04/05",
    "KIP1022-UPD-02": "the 4.x fail-fast shape; the refusal carries the rule of the feature that failed",
    "KIP1022-API-01": "ApiVersions < v4 omitting min-0 ranges is a successful answer",
    "KIP1022-REG-01": "BrokerRegistration < v4 omitting min-0 features is what the broker sends; the refusal "
                      "that follows names KIP584-REG-02",
    "KIP1155-DG-04": "record order of an accepted downgrade",
    "KIP1155-DG-05": "the snapshot of an accepted downgrade",
    "KIP1155-DG-07": "an accepted UNSAFE_DOWNGRADE dropping data",
    "SNAP-02": "a snapshot reloading to the same describe is a round-trip property",
    "KIP1022-FMT-10": "default feature levels of a successful format",
    "KIP1022-FMT-11": "bootstrap record order of a successful format",
    "KIP1022-MAP-01": "version-mapping output of a successful run",
    "KIP1022-DEP-01": "feature-dependencies output of a successful run",
    "KIP1022-TOOL-04": "what kafka-features upgrade --release-version sends",
}


def _test_files() -> list[Path]:
    # conftest.py only documents the convention (its docstring shows a placeholder marker); this file holds
    # the patterns and their self-test.
    return sorted(p for p in TESTS.glob("*.py") if p.resolve() != THIS and p.name != "conftest.py")


def _scan() -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """rule id -> case -> ["file:line", ...], plus a list of markers the strict pattern could not read."""
    found: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    unreadable: list[str] = []
    for path in _test_files():
        src = path.read_text(encoding="utf-8")
        strict_starts = set()
        for m in MARKER.finditer(src):
            line = src.count("\n", 0, m.start()) + 1
            found[m.group("id")][m.group("case")].append(f"{path.name}:{line}")
            strict_starts.add(m.start())
        for m in ANY_MARKER.finditer(src):
            if m.start() not in strict_starts:
                line = src.count("\n", 0, m.start()) + 1
                unreadable.append(f"{path.name}:{line}: {src[m.start():m.start() + 80].splitlines()[0]}")
    return found, unreadable


FOUND, UNREADABLE = _scan()


def test_the_scan_finds_markers():
    assert FOUND, "no pytest.mark.rule markers found under tests/"
    assert any(rid.startswith("KIP915-") for rid in RULES), "the KIP-915 rules are missing from the registry"


def test_every_marker_is_readable():
    assert not UNREADABLE, "markers that are not pytest.mark.rule(\"ID\", \"pass\"|\"fail\") with literal " \
                           "strings:\n" + "\n".join(UNREADABLE)


def test_every_marker_case_is_pass_or_fail():
    bad = [f"{rid} {case!r} at {', '.join(where)}" for rid, cases in FOUND.items() for case, where in cases.items()
           if case not in ("pass", "fail")]
    assert not bad, "marker case must be 'pass' or 'fail':\n" + "\n".join(bad)


def test_every_marker_names_a_registered_rule():
    unknown = {rid: [w for ws in cases.values() for w in ws] for rid, cases in FOUND.items() if rid not in RULES}
    assert not unknown, "markers naming rules that reference_impl.rules does not register:\n" + "\n".join(
        f"{rid}: {', '.join(where)}" for rid, where in sorted(unknown.items()))


def test_every_rule_has_a_passing_case():
    missing = sorted(rid for rid in RULES if not FOUND.get(rid, {}).get("pass"))
    assert not missing, "rules without a 'pass' case:\n" + "\n".join(f"{rid}: {RULES[rid].statement}" for rid in missing)


def test_every_rule_has_a_failing_case():
    missing = sorted(rid for rid in RULES if not FOUND.get(rid, {}).get("fail") and rid not in NO_FAILING_CASE)
    assert not missing, "rules without a 'fail' case:\n" + "\n".join(f"{rid}: {RULES[rid].statement}" for rid in missing)


def test_kip915_rules_are_covered_like_the_others():
    kip915 = sorted(rid for rid in RULES if rid.startswith("KIP915-"))
    lacking = [f"{rid}: {', '.join(c for c in ('pass', 'fail') if not FOUND.get(rid, {}).get(c))}"
               for rid in kip915 if not (FOUND.get(rid, {}).get("pass") and FOUND.get(rid, {}).get("fail"))]
    assert not lacking, "KIP-915 rules (tests/test_coordinator.py) lacking cases:\n" + "\n".join(lacking)


@pytest.mark.parametrize("rid", sorted(NO_FAILING_CASE))
def test_no_failing_case_list_is_accurate(rid):
    assert rid in RULES, f"{rid} is listed in NO_FAILING_CASE but is not a registered rule"
    assert not FOUND.get(rid, {}).get("fail"), (
        f"{rid} now has a 'fail' case at {FOUND[rid]['fail']}: remove it from NO_FAILING_CASE")


def test_marker_regex_reads_every_form():
    src = '''
@pytest.mark.rule("A-1", "pass")
@pytest.mark.rule('A-2', 'fail')
pytest.param(1, marks=pytest.mark.rule("A-3", "pass"))
pytest.param(1, marks=[pytest.mark.rule(
    "A-4",
    "fail",
), pytest.mark.slow])
'''
    got = [(m.group("id"), m.group("case")) for m in MARKER.finditer(src)]
    assert got == [("A-1", "pass"), ("A-2", "fail"), ("A-3", "pass"), ("A-4", "fail")]
    assert len(ANY_MARKER.findall(src)) == 4
    # A marker that is not two literal strings is seen by the loose pattern only (reported as unreadable).
    assert not MARKER.search("pytest.mark.rule(RULE_ID, 'pass')") and ANY_MARKER.search("pytest.mark.rule(RULE_ID)")
