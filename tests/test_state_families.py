"""The ci run of the stateful model reaches every state family on every profile where it exists, and
every rule the reference applies on a profile has an example there (issue 11, item 9)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from conformance.families import FAMILIES, exists, instances, missing
from conformance.generate import generate_one
from conformance.model import outcome_rules
from conformance.stateful import reached_in_ci
from reference_impl import load_profile, profile_names

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("profile", profile_names())
def test_ci_run_reaches_every_state_family_that_exists(profile: str) -> None:
    """Every family, and every instance of a family of several (each quorum-flag combination, each
    feature level, a snapshot at each metadata.version), on every profile where it exists."""
    reached = reached_in_ci(profile)
    p = load_profile(profile)
    gaps = [m for f in FAMILIES if exists(f, p) for m in missing(f, p, reached)]
    assert not gaps, f"{profile}: the ci run never reaches {gaps}"


def test_families_that_cannot_exist_are_few_and_explained() -> None:
    assert not exists("dynamic-quorum", load_profile("kafka-3.8"))  # no kraft.version before 3.9
    assert not exists("kraft1-read-controller", load_profile("kafka-3.9"))  # KAFKA-18920 is in 3.9.1, not 3.9.0
    assert exists("kraft1-read-controller", load_profile("kafka-4.0"))
    assert not exists("standby-below-finalized", load_profile("kafka-3.7"))  # no older release modelled
    assert not exists("format-quorum-flags", load_profile("kafka-3.8"))  # the flags came with 3.9
    assert not exists("snapshot-below-bootstrap", load_profile("kafka-4.0"))  # 4.0 knows no level below 3.3-IV3
    assert exists("snapshot-below-bootstrap", load_profile("kafka-3.9"))


def test_families_of_several_list_their_instances() -> None:
    p = load_profile("kafka-4.2")
    assert len(instances("format-quorum-flags", p) or []) == 15
    assert "eligible.leader.replicas.version=1" in (instances("every-feature-level", p) or [])
    assert instances("snapshot-every-mv", p) == [str(v) for v in p.mv_levels]
    # a family of several is reached only when every instance is
    assert missing("snapshot-every-mv", p, {"snapshot-every-mv:7": 1}) == [
        f"snapshot-every-mv:{v}" for v in p.mv_levels if v != 7]


def test_every_rule_the_reference_applies_on_a_profile_has_an_example_there() -> None:
    labelled: dict[str, set[str]] = defaultdict(set)
    for path in (ROOT / "fixtures" / "examples").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            if line.strip():
                t = json.loads(line)
                labelled[t["profile"]] |= set(t.get("rules", []))
    gaps = {}
    for profile in profile_names():
        applied = set()
        for i in range(400):  # the scan scripts/fill_examples.py makes
            for step in generate_one(20261122, i, profile)["steps"]:
                applied |= outcome_rules(step["expected"])
        if applied - labelled[profile]:
            gaps[profile] = sorted(applied - labelled[profile])
    assert not gaps, f"rules applied without an example (run python scripts/fill_examples.py): {gaps}"


@pytest.mark.parametrize("script", ["fill_examples.py", "matrices.py"])
def test_generated_examples_and_matrices_are_current(script: str) -> None:
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "--check"], capture_output=True, text=True,
                         cwd=ROOT, check=False, timeout=600)
    assert run.returncode == 0, run.stderr
