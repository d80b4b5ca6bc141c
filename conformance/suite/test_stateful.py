"""The stateful model's test: conformance.stateful walks the target in lockstep with the reference
(invariants 1-11, listed there); here the run is a pytest test -- skips with their reasons, the
failing trace and repro, coverage written, the live cluster's levels restored after the mutate tier,
and the ci gate on the ops and rule families a run must reach."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis.errors import Flaky

from conformance import hypothesis_profiles
from conformance.model import outcome_rules
from conformance.plugin import live_context, report_dir
from conformance.stateful import FAMILIES, GENERATED_OPS, Run
from conformance.suite._support import fail_with_trace, load_traces
from reference_impl import load_profile


def test_stateful_model(request: pytest.FixtureRequest, kfc_target: Any, kfc_profile: str,
                        kfc_capabilities: frozenset[str]) -> None:
    name = hypothesis_profiles.resolve(request.config.getoption("--hypothesis-profile", None))
    live = live_context(request.config)
    if live is not None:
        if "lockstep" in live.blocked:
            pytest.skip(live.blocked["lockstep"])
        if "update_features" not in kfc_capabilities:
            pytest.skip("the stateful model needs UpdateFeatures on a live cluster: "
                        + live.blocked.get("probe", "tiers probe or mutate"))
        request.node.user_properties.append(("kfc_tier", "mutate" if "mutate" in live.tiers else "probe"))
    elif not {"format", "describe"} <= kfc_capabilities:
        pytest.skip("the stateful model needs format and describe from the target")
    run = Run(kfc_target, kfc_profile, kfc_capabilities, live)
    request.node.user_properties.append(("kfc_rules", []))
    try:
        run.execute(name)
    except Exception as e:
        if run.last is None:
            raise
        session, cause = run.last.session, e
        if isinstance(e, Flaky) and run.first is not None:
            session, cause = run.first
        # steps walked before the first divergence, and the shrunk counterexample's length
        request.node.user_properties.append(("kfc_model", {"steps_to_first": run.steps_to_first,
                                                           "steps": run.steps,
                                                           "shrunk_length": sum(s.index >= 0 for s in session.engine.steps)}))
        fail_with_trace(request, session, cause, f"stateful:{kfc_profile}:{name}", [])
    finally:
        _write_coverage(request, run)
        if live is not None and "mutate" in live.tiers:
            _restore_live(request, live)
    if name == hypothesis_profiles.DEFAULT:
        reached = set(run.coverage.ops)
        missing_ops = sorted((GENERATED_OPS & kfc_capabilities) - reached)
        assert not missing_ops, f"coverage: the ci run never reached op(s) {missing_ops}"
        # A live cluster starts from one state: the gate there is the families its tiers reach from anywhere.
        families = {"KIP584"} if live is not None else required_families(kfc_profile, kfc_capabilities)
        missing = sorted(families - run.coverage.families)
        assert not missing, f"coverage: the ci run never reached rule family(ies) {missing}"


def _restore_live(request: pytest.FixtureRequest, live: Any) -> None:
    """Put the starting levels back after the mutate tier; what cannot be restored is reported."""
    from conformance.live.restore import restore_levels

    report = restore_levels(live.target, live.start_levels, live.profile)
    out = report_dir(request.config)
    out.mkdir(parents=True, exist_ok=True)
    (out / "restore.json").write_text(json.dumps(report, indent=1) + "\n")
    request.node.user_properties.append(("kfc_restore", report))
    if report["not_restored"]:
        lines = [f"{r['feature']}: wanted {r['wanted']}, now {r['now']} ({r['why']})" for r in report["not_restored"]]
        pytest.fail("the mutate tier could not restore the starting levels:\n    " + "\n    ".join(lines),
                    pytrace=False)


def required_families(profile: str, capabilities: frozenset[str]) -> set[str]:
    """The rule families a ci run must reach: the profile's KIP families that the recorded examples
    (fixtures/examples) reach through ops the target has -- in this profile's examples, or, for a
    family those never show, in any profile's."""
    families = set(FAMILIES) | ({"KIP1155"} if load_profile(profile).behaviour["kip1155"] else set())
    ops = GENERATED_OPS & capabilities
    here_any: set[str] = set()  # families of this profile's examples
    here: set[str] = set()  # ... reached through ops the target has
    anywhere: set[str] = set()  # families of any profile's examples reached through those ops
    for trace in load_traces("examples"):
        mine = trace["profile"] == profile
        for step in trace["steps"]:
            reached = step["command"].get("op") in ops
            if not (mine or reached):
                continue
            found = _families(step["expected"])  # what Coverage.add would count, as Coverage.families
            if mine:
                here_any |= found
                if reached:
                    here |= found
            if reached:
                anywhere |= found
    return families & (here | (anywhere - here_any))


def _families(outcome: dict[str, Any]) -> set[str]:
    """The rule families of one outcome, as `Coverage.add` then `Coverage.families` see them."""
    return {r.split("-")[0] for r in outcome_rules(outcome)}


def _write_coverage(request: pytest.FixtureRequest, run: Run) -> None:
    try:
        import allure

        allure.dynamic.epic("stateful model")
        allure.dynamic.feature(run.profile)
        allure.attach(json.dumps(run.coverage.to_json(), indent=1), name="coverage (ops, outcome codes, rules)",
                      attachment_type=allure.attachment_type.JSON)
    except ImportError:
        pass
    out = report_dir(request.config) / "coverage"
    out.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    path = Path(out) / f"stateful-{run.profile}-{worker}.json"
    path.write_text(json.dumps(run.coverage.to_json(), indent=1) + "\n")
