"""Regressions: every trace under fixtures/regressions replays as its own test (its own profile)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.plugin import live_context
from conformance.session import Session
from conformance.suite._support import (
    load_traces,
    needs,
    needs_active_software,
    needs_catch_up_state,
    needs_replayable_state,
    run_steps,
)

REGRESSIONS = {t["id"]: t for t in load_traces("regressions")}


@pytest.mark.parametrize("trace_id", [pytest.param(t["id"], id=t["id"], marks=pytest.mark.kfc_rule(*t.get("rules", [])))
                                      for t in REGRESSIONS.values()])
def test_regression(request: pytest.FixtureRequest, trace_id: str, kfc_target: Any, kfc_profile: str,
                    kfc_capabilities: frozenset[str]) -> None:
    trace = REGRESSIONS[trace_id]
    if trace["profile"] != kfc_profile:
        pytest.skip(f"regression recorded for {trace['profile']}, this run checks {kfc_profile}")
    live = live_context(request.config)
    if live is not None:
        whole = {"profile": trace["profile"],
                 "steps": [{"command": c} for c in trace.get("initial", [])] + list(trace["steps"])}
        from conformance.live.checks import example_precondition  # imports the wire client: live runs only

        first, failed = example_precondition(whole, live, kfc_capabilities)
        if failed:
            pytest.skip(f"precondition: {failed}")
        session = Session(kfc_target, trace["profile"])
        run_steps(request, session, [s["command"] for s in whole["steps"][first:]], trace.get("source", trace["id"]),
                  trace.get("rules", []))
        return
    needs(trace, kfc_capabilities)
    whole = {"profile": trace["profile"],
             "steps": [{"command": c} for c in trace.get("initial", [])] + list(trace["steps"])}
    needs_active_software(whole, kfc_target.active_software, kfc_target.node_software)
    needs_replayable_state(whole, kfc_target.replays_restored_levels)
    needs_catch_up_state(whole, kfc_target.all_nodes_caught_up)
    session = Session(kfc_target, trace["profile"])
    for cmd in trace.get("initial", []):
        session.step(cmd)
    run_steps(request, session, [s["command"] for s in trace["steps"]], trace.get("source", trace["id"]),
              trace.get("rules", []))
