"""Example tables: the reference's own test scenarios (fixtures/examples), each labelled with the
rule ids it exercises, replayed in lockstep against the target for the profile under check."""

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

EXAMPLES = {t["id"]: t for t in load_traces("examples")}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "example_id" not in metafunc.fixturenames:
        return
    profile = _profile(metafunc.config)
    chosen = [t for t in EXAMPLES.values() if t["profile"] == profile]
    # Parametrize by id: the trace itself would become a (huge) report parameter.
    metafunc.parametrize("example_id", [
        pytest.param(t["id"], id=f"{t['id']}-{_short(t)}", marks=pytest.mark.kfc_rule(*t["rules"])) for t in chosen
    ])


def _profile(config: pytest.Config) -> str:
    from conformance.plugin import suite_target
    from reference_impl import DEFAULT_PROFILE

    # The profile is fixed per run; without --kfc-profile it is the target's own.
    name = config.getoption("--kfc-profile") or suite_target(config)[1].get("profile") or DEFAULT_PROFILE
    return str(name)


def _short(t: dict[str, Any]) -> str:
    src = t.get("source", "")
    name = src.split("::")[-1].split("[")[0].split("#")[0]
    return name.removeprefix("test_")[:60]


def test_example(request: pytest.FixtureRequest, example_id: str, kfc_target: Any, kfc_profile: str,
                 kfc_capabilities: frozenset[str]) -> None:
    example = EXAMPLES[example_id]
    live = live_context(request.config)
    first = 0
    if live is not None:
        # A running cluster cannot be set up: the example runs only where its set-up leads to this state.
        from conformance.live.checks import example_precondition  # imports the wire client: live runs only

        first, failed = example_precondition(example, live, kfc_capabilities)
        if failed:
            pytest.skip(f"precondition: {failed}")
    else:
        needs(example, kfc_capabilities)
        needs_active_software(example, kfc_target.active_software, kfc_target.node_software)
        needs_replayable_state(example, kfc_target.replays_restored_levels)
        needs_catch_up_state(example, kfc_target.all_nodes_caught_up)
    session = Session(kfc_target, example["profile"])
    commands = [s["command"] for s in example["steps"][first:]]
    try:
        run_steps(request, session, commands, example.get("source", example["id"]), example["rules"])
    finally:
        if live is not None and {"mutate", "register"} & set(live.tiers):
            _restore(live, commands)


def _restore(live: Any, commands: list[dict[str, Any]]) -> None:
    """After an example on a live cluster: unregister its synthetic brokers and put the starting
    levels back, so that the next test starts where the run's context says the cluster is."""
    from conformance.live.restore import restore_levels

    ours = {c.get("node") for c in commands if c.get("op") == "register" and c.get("role", "broker") == "broker"}
    for node in sorted(n for n in ours if isinstance(n, int) and n not in live.visible):
        live.target.apply({"op": "unregister", "node": node})
    report = restore_levels(live.target, live.start_levels, live.profile)
    if report["not_restored"]:
        raise AssertionError(f"live cluster: the starting levels could not be restored after the example: "
                             f"{report['not_restored']}")
