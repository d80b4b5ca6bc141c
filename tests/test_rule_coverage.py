"""Rule coverage: every rule in reference_impl.rules.RULES (KIP-915 coordinator rules included) has at
least one test marked `pytest.mark.rule("ID", "pass")` and one marked `pytest.mark.rule("ID", "fail")`,
and every marker names a registered rule.

The scan is static (a regex over tests/*.py), so it sees decorator markers and markers passed in
`pytest.param(..., marks=pytest.mark.rule(...))` / `marks=[...]` alike, whatever is selected to run.

Some rules only describe how a successful operation behaves: no outcome is ever refused in their
name.  Their failing case is a seeded mutant that breaks the rule (fixtures/mutants/catalogue.json): its
witness must diverge from the reference on the rule's field (tests/test_mutants.py) and the ci suite
must kill it (tests/test_suite.py).
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from conformance.mutants import MUTANTS
from reference_impl.rules import RULES

TESTS = Path(__file__).resolve().parent
THIS = Path(__file__).resolve()

# pytest.mark.rule("ID", "pass"|"fail"), single or double quotes, any whitespace/newlines inside.
MARKER = re.compile(r"""pytest\s*\.\s*mark\s*\.\s*rule\s*\(\s*(['"])(?P<id>[^'"]+)\1\s*,\s*(['"])(?P<case>[^'"]*)\3\s*,?\s*\)""")
ANY_MARKER = re.compile(r"pytest\s*\.\s*mark\s*\.\s*rule\s*\(")

# Behaviour rules whose failing case is the mutant that breaks them.
MUTANT_CASES: dict[str, str] = {m.rule: m.name for m in MUTANTS.values()}


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
    """A 'fail' marker (the reference refuses in the rule's name) or a mutant breaking the rule."""
    missing = sorted(rid for rid in RULES if not FOUND.get(rid, {}).get("fail") and rid not in MUTANT_CASES)
    assert not missing, "rules without a 'fail' case or mutant:\n" + "\n".join(
        f"{rid}: {RULES[rid].statement}" for rid in missing)


def test_kip915_rules_are_covered_like_the_others():
    kip915 = sorted(rid for rid in RULES if rid.startswith("KIP915-"))
    lacking = [f"{rid}: {', '.join(c for c in ('pass', 'fail') if not FOUND.get(rid, {}).get(c))}"
               for rid in kip915 if not (FOUND.get(rid, {}).get("pass") and FOUND.get(rid, {}).get("fail"))]
    assert not lacking, "KIP-915 rules (tests/test_coordinator.py) lacking cases:\n" + "\n".join(lacking)


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
