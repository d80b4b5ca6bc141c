"""Helpers shared by the suite's test modules (data loading, counterexample reporting)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.invariants import Violated
from conformance.model import jsonable
from conformance.plugin import report_dir, repro_line
from conformance.session import Divergence, Session
from reference_impl.data import fixtures


def load_traces(folder: str) -> list[dict[str, Any]]:
    """Every trace of fixtures/<folder>, from .jsonl files (one per line) and .json files."""
    base = fixtures() / folder
    if not base.is_dir():
        return []
    out: list[dict[str, Any]] = []
    for entry in sorted(base.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".jsonl"):
            out += [json.loads(line) for line in entry.read_text().splitlines() if line.strip()]
        elif entry.name.endswith(".json"):
            t = json.loads(entry.read_text())
            t.setdefault("source", f"fixtures/{folder}/{entry.name}")
            out.append(t)
    return out


def needs(trace: dict[str, Any], capabilities: frozenset[str]) -> None:
    from reference_impl import OPS

    # Ops outside the contract are sent anyway: every target must refuse them (INVALID_COMMAND).
    missing = sorted(({s["command"]["op"] for s in trace["steps"]} & set(OPS)) - capabilities)
    if missing:
        pytest.skip(f"target lacks op(s) {', '.join(missing)}")


def needs_active_software(trace: dict[str, Any], active_software: frozenset[str] | None,
                          node_software: frozenset[str] | None) -> None:
    """Skip a trace that runs the active controller on a release the target cannot run, or asks a node
    whose software answers differently from the target's builders (a harness of one release's code:
    Target.active_software, Target.node_software)."""
    from conformance.replay import foreign_software

    why = foreign_software(trace, active_software, node_software)
    if why is not None:
        pytest.skip(why)


def needs_catch_up_state(trace: dict[str, Any], all_caught_up: bool) -> None:
    """Skip a trace that restores a controller whose metadata.version is not yet known (caught_up false,
    KIP584-API-05) on a target every node of which has caught up (Target.all_nodes_caught_up)."""
    if not all_caught_up:
        return
    for step in trace["steps"]:
        cmd = step["command"]
        if cmd.get("op") == "restore_state" and any(
                isinstance(c, dict) and c.get("caught_up") is False for c in cmd.get("controllers") or []):
            pytest.skip("target cannot hold a controller that has not caught up with the metadata log "
                        "(no FeaturesPublisher of its own)")


def needs_replayable_state(trace: dict[str, Any], replays: bool) -> None:
    """Skip a trace that restores a level its own active controller's ranges leave out (a transcribed
    unit test giving QuorumFeatures or ClusterControlManager such ranges), on a target whose
    restore_state replays the levels into Kafka's FeatureControlManager (Target.replays_restored_levels):
    FeatureControlManager.replay refuses them, a Kafka controller cannot be in that state."""
    from conformance.grammar import KRAFT, MV
    from reference_impl import InputError, load_profile

    if not replays:
        return
    for step in trace["steps"]:
        cmd = step["command"]
        if cmd.get("op") != "restore_state":
            continue
        specs = [c for c in cmd.get("controllers") or [{"id": 3000}] if isinstance(c, dict)]
        active = cmd.get("active_controller", specs[0].get("id") if specs else None)
        spec = next((c for c in specs if c.get("id") == active), {})
        try:
            profile = load_profile(trace.get("profile") or "")
            ranges = spec.get("ranges") or load_profile(spec.get("software") or profile.name).supported("controller", True)
        except InputError:
            continue
        levels = {**(cmd.get("finalized") or {}), MV: cmd.get("metadata_version")}
        if profile.mv(levels[MV]) is None:
            continue  # an unknown metadata.version: refused by the command's own check on either side
        for name, level in sorted(levels.items()):
            lo, hi = ranges.get(name, (0, 0))
            if isinstance(level, int) and level and name != KRAFT and not lo <= level <= hi:
                pytest.skip(f"target replays restored levels into Kafka's controller, whose ranges leave out "
                            f"{name}={level} (FeatureControlManager.replay refuses it)")


def run_steps(request: pytest.FixtureRequest, session: Session, commands: list[dict[str, Any]],
              source: str, rules: list[str]) -> None:
    """Apply commands in lockstep; on a divergence write the trace and fail with the repro line."""
    request.node.user_properties.append(("kfc_rules", rules))
    try:
        for cmd in commands:
            session.step(cmd)
    except Divergence as d:
        fail_with_trace(request, session, d, source, rules)


def fail_with_trace(request: pytest.FixtureRequest, session: Session, d: BaseException, source: str,
                    rules: list[str]) -> None:
    """Write the counterexample trace, record the divergence itself (op, fields, rule of the
    diverging expected outcome) for the report, and fail with one repro line."""
    config = request.config
    divergence = None
    if isinstance(d, Divergence) and d.result.not_run:
        pytest.skip(f"not run: {d.result.failure}")  # the user's request budget, not a finding
    if isinstance(d, Divergence):
        r = d.result
        # A step whose expected outcome carries no rule (a read-back) fails the rule the test checks.
        rule = r.rule or (rules[-1] if rules and r.failure is None else None)
        divergence = {"step": r.index, "op": r.op, "rule": rule, "rule_from": "outcome" if r.rule else "test",
                      "failure": r.failure,
                      "diffs": [{"field": x.field, "expected": x.expected, "actual": x.actual, "text": str(x)}
                                for x in r.diffs]}
        if rule and rule not in rules:
            rules = [*rules, rule]
    elif isinstance(d, Violated):  # an invariant of the stateful model: its own rule
        inv = d.invariant
        divergence = {"step": None, "op": "invariant", "rule": inv.rule, "rule_from": "invariant", "failure": None,
                      "diffs": [{"field": "invariant", "expected": inv.statement, "actual": p, "text": p}
                                for p in d.problems]}
        if inv.rule not in rules:
            rules = [*rules, inv.rule]
    path = session.write_counterexample(report_dir(config) / "traces", source, rules,
                                        config.getoption("--kfc-target"))
    line = repro_line(config, path)
    request.node.user_properties.append(("kfc_divergence", jsonable(divergence)))
    request.node.user_properties.append(("kfc_repro", line))
    pytest.fail(f"{d}\ncounterexample: {path}\nrepro: {line}", pytrace=False)


def record_finding(request: pytest.FixtureRequest, rule: str, problems: list[str], title: str,
                   repro_profile: bool = True) -> None:
    """Fail a check that is not a lockstep step (an invariant of what the nodes say), with its rule id
    and a repro line that runs this one check against the same cluster (without --profile when the
    check is about the release being inferred)."""
    import shlex

    config = request.config
    name = request.node.name
    profile = config.getoption("--kfc-profile") if repro_profile else None
    line = (f"kfc check --no-spark --target {shlex.quote(config.getoption('--kfc-target'))} "
            + (f"--profile {shlex.quote(profile)} " if profile else "") + f"-k {shlex.quote(name)}")
    divergence = {"step": None, "op": "observe", "rule": rule, "failure": None,
                  "diffs": [{"field": "invariant", "expected": title, "actual": p, "text": p} for p in problems]}
    request.node.user_properties.append(("kfc_divergence", divergence))
    request.node.user_properties.append(("kfc_repro", line))
    if rule not in dict(request.node.user_properties).get("kfc_rules", []):
        request.node.user_properties.append(("kfc_rules", [rule]))
    text = "\n".join(f"    {p}" for p in problems)
    pytest.fail(f"rule {rule}: {title}\n{text}\nrepro: {line}", pytrace=False)
