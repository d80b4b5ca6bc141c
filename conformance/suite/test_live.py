"""Live tiers: a running cluster nobody may reset, checked where it is (docs/wire.md).

observe  the invariants of what every node says (conformance.live.checks), and each node's
         ApiVersions in lockstep with the reference started from the observed state
probe    UpdateFeatures with validate_only across the check order (conformance.live.probes), each
         answered by the reference from the same state; the cluster must be unchanged after it

register the registration catalogue (conformance.live.registrations): one synthetic broker at the
         edges of the registration and UpdateFeatures checks, unregistered after each

mutate and register also run in the stateful model (test_stateful); these tests exist only when the
target states its state (a `kafka://` target without control=1).  A tier that cannot run here is
skipped with the reason or the finding that blocks it."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.plugin import live_context
from conformance.session import Session
from conformance.suite._support import record_finding, run_steps
from conformance.targets import TargetError
from conformance.targets.errors import NotRun


def _placeholder(metafunc: pytest.Metafunc, name: str) -> None:
    metafunc.parametrize(name, [pytest.param("-", marks=pytest.mark.kfc_not_here)])


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    names = [n for n in ("observe_check", "node_version", "probe_id", "registration_id") if n in metafunc.fixturenames]
    if not names:
        return
    ctx = live_context(metafunc.config)
    name = names[0]
    if ctx is None:
        _placeholder(metafunc, name)
        return
    if name == "observe_check":
        metafunc.parametrize(name, [pytest.param(c.id, id=c.id, marks=[pytest.mark.kfc_rule(c.rule),
                                                                     pytest.mark.kfc_tier("observe")])
                                    for c in ctx.checks.values()])
    elif name == "node_version":
        from conformance.wire import codec

        params = []
        for n in ctx.observation.nodes:
            hi = n.max_version(codec.API_VERSIONS)
            for v in range((hi if hi is not None else -1) + 1):
                params.append(pytest.param((n.id, v), id=f"{n.role}{n.id}-v{v}",
                                           marks=[pytest.mark.kfc_rule("KIP584-API-01" if v < 3 else "KIP584-OBS-04"),
                                                  pytest.mark.kfc_tier("observe")]))
        metafunc.parametrize(name, params or [pytest.param("-", marks=pytest.mark.kfc_not_here)])
    elif name == "registration_id":
        if "register" not in ctx.tiers:
            _placeholder(metafunc, name)  # a tier the user did not ask for is not part of the run
            return
        metafunc.parametrize(name, [pytest.param(r.id, id=r.id, marks=[pytest.mark.kfc_rule(r.rule),
                                                                      pytest.mark.kfc_tier("register")])
                                    for r in ctx.registrations.values()] or [
            pytest.param("none", id="register", marks=pytest.mark.kfc_tier("register"))])
    elif "probe" not in ctx.tiers:
        _placeholder(metafunc, name)  # a tier the user did not ask for is not part of the run
    else:
        metafunc.parametrize(name, [pytest.param(pid, id=pid, marks=[
            pytest.mark.kfc_rule(*([ctx.probe_rules[pid]] if ctx.probe_rules.get(pid) else ["KIP584-UPD-09"])),
            pytest.mark.kfc_tier("probe")]) for pid in ctx.probes] or [
            pytest.param("none", id="probe", marks=pytest.mark.kfc_tier("probe"))])


@pytest.fixture
def live(request: pytest.FixtureRequest) -> Any:
    return live_context(request.config)


def test_observe(request: pytest.FixtureRequest, observe_check: str, live: Any) -> None:
    check = live.checks[observe_check]
    request.node.user_properties.append(("kfc_rules", [check.rule]))
    request.node.user_properties.append(("kfc_tier", "observe"))
    if check.skip:
        pytest.skip(check.skip)
    node = live.observation.node(check.node) if check.node is not None else None
    if node is not None and check.needs_features and node.newest is None:
        pytest.skip(f"{node.label} reports no features (no ApiVersions v3+ answer)"
                    + (f": {node.error}" if node.error else ""))
    try:
        problems = check.run()
    except TargetError as e:
        if isinstance(e, NotRun):
            pytest.skip(f"not run: {e}")
        problems = [f"the node failed while being read: {e}"]
    if problems:
        record_finding(request, check.rule, problems, f"{check.title}", repro_profile=not check.inferred_only)


def test_observe_api_versions(request: pytest.FixtureRequest, node_version: tuple[int, int], live: Any,
                              kfc_target: Any) -> None:
    """Each node's ApiVersions at every version it advertises, in lockstep with the reference."""
    request.node.user_properties.append(("kfc_tier", "observe"))
    if "lockstep" in live.blocked:
        pytest.skip(live.blocked["lockstep"])
    node, version = node_version
    session = Session(kfc_target, live.profile)
    run_steps(request, session, [{"op": "api_versions", "node": node, "version": version}],
              f"live:observe:api_versions:{node}:v{version}", [])


def test_probe(request: pytest.FixtureRequest, probe_id: str, live: Any, kfc_target: Any) -> None:
    request.node.user_properties.append(("kfc_tier", "probe"))
    if probe_id not in live.probes:
        pytest.skip(live.blocked.get("probe", "no probe can be built for this cluster"))
    probe = live.probes[probe_id]
    session = Session(kfc_target, live.profile)
    watch = session.reference.active_id if session.reference.active_id in live.visible else min(live.visible)
    rule = live.probe_rules.get(probe_id)
    run_steps(request, session, [probe.command], f"live:probe:{probe_id}", [rule] if rule else [])
    # validate_only writes nothing: read the node back in lockstep (the reference did not move either);
    # a difference there is this rule's finding, and its trace replays it against the cluster.
    try:
        run_steps(request, session, [{"op": "api_versions", "node": watch}], f"live:probe:{probe_id}",
                  ["KIP584-UPD-09"])
    finally:
        if session.engine.first is not None:
            live.target.dirty = True  # the cluster moved: the next test observes it afresh


def test_register(request: pytest.FixtureRequest, registration_id: str, live: Any, kfc_target: Any) -> None:
    request.node.user_properties.append(("kfc_tier", "register"))
    if registration_id not in live.registrations:
        pytest.skip(live.blocked.get("register", "no registration can be built for this cluster"))
    reg = live.registrations[registration_id]
    session = Session(kfc_target, live.profile)
    try:
        run_steps(request, session, list(reg.commands), f"live:register:{registration_id}", [reg.rule])
    finally:
        if session.engine.first is not None:
            # The cluster answered otherwise: whatever it registered goes (a refusal here changes nothing).
            live.target.dirty = True
            try:
                live.target.apply({"op": "unregister", "node": reg.node})
            except TargetError:
                pass  # the finding is the divergence; the observation is taken afresh anyway
