"""The stateful model: Hypothesis generates format / registration / rolling-restart / update /
downgrade / snapshot / coordinator sequences; every step runs in lockstep on the target and the
reference (invariant 11) and the invariants below are checked on what the target reports.

Invariants (numbers as in the suite's documentation):
 1 every finalized level lies in the supported range of every registered node (kraft.version: brokers)
 2 a failed update changes nothing (levels and epoch)
 3 the epoch never decreases, and grows by the number of records an operation applied
 4 dependencies hold in the finalized state (where the profile checks them; see `_deps_apply`)
 5 metadata.version never below the profile's minimum, nor below 3.7-IV0 after a KIP-1155 downgrade
 6 no level goes down without a downgrade type
 7 a finalized level 0 is the same as absent (never listed)
 8 ApiVersions and BrokerRegistration below v4 never carry a range with min 0
 9 reloading a snapshot preserves describe
10 KIP-915: an older loader's state equals the newer loader's state projected to what it knows
11 the target agrees with the reference on every outcome
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from conformance.plugin import report_dir
from conformance.session import Coverage, Session
from conformance.suite._support import fail_with_trace, load_traces
from reference_impl import load_profile, profile_names

MV, KRAFT = "metadata.version", "kraft.version"
TYPES = ["UPGRADE", "SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE", "UNKNOWN"]
PAYLOADS = ["scram_credential", "delegation_token", "directory_assignment", "elr_partition_state",
            "cordoned_log_dir"]
BROKER_IDS = [1, 2, 3]
# Ops the machine generates; in the ci profile every one the target supports must be reached.
GENERATED_OPS = {"format", "register", "unregister", "update_features", "describe", "api_versions",
                 "features_tool", "add_metadata", "snapshot", "load_snapshot", "load_coordinator",
                 "version_mapping", "feature_dependencies"}
FAMILIES = {"KIP584", "KIP778", "KIP919", "KIP1022"}

EXAMPLES = {"ci": 50, "dev": 200, "deep": 5000}
STEPS = {"ci": 25, "dev": 40, "deep": 60}


def _settings(name: str) -> settings:
    # The explain phase replays a counterexample many times to annotate it; our trace says more.
    common: dict[str, Any] = {"deadline": None, "suppress_health_check": list(HealthCheck),
                                  "max_examples": EXAMPLES[name], "stateful_step_count": STEPS[name],
                                  "phases": [p for p in Phase if p != Phase.explain]}
    if name == "ci":
        return settings(derandomize=True, database=None, **common)
    db = DirectoryBasedExampleDatabase(os.environ.get("KFC_HYPOTHESIS_DB", ".hypothesis/kfc-examples"))
    return settings(database=db, **common)


@contextlib.contextmanager
def _no_local_constants(active: bool) -> Iterator[None]:
    """Hypothesis mixes literals from every local module imported so far into its draws, so a
    derandomized run would change with what the process imported (an in-process target, a plugin).
    The ci run draws without them: same command, same sequences.  Private API, guarded."""
    try:
        from hypothesis.internal.conjecture import providers

        original, cache = providers._get_local_constants, providers.CONSTANTS_CACHE
        empty = type(providers._local_constants)(integers=type(providers._local_constants.integers)(),
                                                 floats=type(providers._local_constants.floats)(),
                                                 bytes=type(providers._local_constants.bytes)(),
                                                 strings=type(providers._local_constants.strings)())
    except (ImportError, AttributeError, TypeError):
        active = False
    if not active:
        yield
        return
    providers._get_local_constants = lambda: empty
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()


class _Run:
    """Shared between the machine instances of one test: target, profile, coverage, last machine."""

    def __init__(self, target: Any, profile: str, capabilities: frozenset[str]):
        self.target, self.profile, self.capabilities = target, profile, capabilities
        self.coverage = Coverage()
        self.last: FeatureMachine | None = None

    def execute(self, hypothesis_profile: str) -> None:
        """Run the machine under a Hypothesis profile; its instances find this run through RUN."""
        global RUN
        RUN = self
        with _no_local_constants(hypothesis_profile == "ci"):
            run_state_machine_as_test(FeatureMachine, settings=_settings(hypothesis_profile))


RUN: _Run | None = None


class FeatureMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        assert RUN is not None
        self.run = RUN
        RUN.last = self
        self.p = load_profile(RUN.profile)
        self.s = Session(RUN.target, RUN.profile, coverage=RUN.coverage, allure_steps=False)
        self.brokers: set[int] = set()
        self.controllers: list[int] = [3000]
        self.obs: dict[str, Any] | None = None
        self.mv_lowered = False  # release profiles do not re-check dependencies when MV goes down
        self.kip1155_floor = False

    # -- helpers ----------------------------------------------------------------------------------
    def can(self, op: str) -> bool:
        return op in self.run.capabilities

    @property
    def ref(self) -> Any:
        return self.s.reference

    def step(self, command: dict[str, Any]) -> dict[str, Any]:
        return self.s.step(command)

    def observe(self) -> dict[str, Any]:
        """describe through the active controller (ApiVersions v4), with invariants 3, 5, 7."""
        out = self.step({"op": "describe", "node": self.ref.active_id})  # the node's newest ApiVersions
        if out["error"] != "NONE":
            return self.obs or {}
        fin = out["finalized"]
        assert all(v != 0 for v in fin.values()), f"invariant 7: finalized level 0 listed: {fin}"
        if self.obs is not None:
            assert out["epoch"] >= self.obs["epoch"], f"invariant 3: epoch went from {self.obs['epoch']} to {out['epoch']}"
        mv = fin.get(MV, 0)
        assert mv >= self.p.mv_minimum, f"invariant 5: metadata.version {mv} < minimum {self.p.mv_minimum}"
        if self.kip1155_floor:
            assert mv >= 15, f"invariant 5: metadata.version {mv} below 3.7-IV0 after a KIP-1155 downgrade"
        self.obs = out
        self.check_ranges(fin)
        self.check_dependencies(fin)
        return out

    def check_ranges(self, fin: dict[str, int]) -> None:
        """Invariant 1, from each registered node's own ApiVersions v4."""
        for node in sorted(self.brokers) + [c for c in self.controllers if c in self.ref.image.controllers]:
            out = self.step({"op": "api_versions", "node": node})
            if out["error"] != "NONE" or out.get("supported") is None:
                continue
            for name, level in fin.items():
                if name == KRAFT and node not in self.brokers:
                    # kraft.version lives in raft control records: a controller registers (and a
                    # 3.7/3.8 one replays) without checking it (ClusterControlManager.registerController).
                    continue
                lo, hi = out["supported"].get(name, (0, 0))
                assert lo <= level <= hi, (f"invariant 1: finalized {name}={level} outside node {node}'s "
                                           f"range {lo}-{hi}")

    def _deps_apply(self) -> bool:
        # Kafka never re-checks dependencies when metadata.version goes down (controller-notes §3), and
        # 3.x does not check them on update at all: the invariant holds where both are true.
        if self.p.b("kip1155"):
            return True
        return self.p.b("update_checks_dependencies") and not self.mv_lowered

    def check_dependencies(self, fin: dict[str, int]) -> None:
        """Invariant 4."""
        if not self._deps_apply():
            return
        for name, level in fin.items():
            feat = self.p.features.get(name)
            if name == MV or feat is None or level not in feat.levels:
                continue
            for dep, need in feat.levels[level].dependencies.items():
                assert fin.get(dep, 0) >= need, f"invariant 4: {name}={level} needs {dep}>={need}, have {fin}"

    # -- set-up -----------------------------------------------------------------------------------
    @initialize(data=st.data())
    def format_cluster(self, data: st.DataObject) -> None:
        self._format(data)

    def _format(self, data: st.DataObject) -> None:
        p = self.p
        levels = [v for v in p.mv_levels if v >= p.mv_minimum_bootstrap]
        unstable = data.draw(st.booleans(), label="unstable") if data.draw(st.integers(0, 9)) == 0 else False
        prod = [v for v in levels if p.versions[v].production]
        rv = p.mv_name(data.draw(st.sampled_from(levels if unstable else prod), label="mv"))
        if data.draw(st.integers(0, 3), label="bad release?") == 3:  # unknown, or too old to bootstrap
            too_old = [p.mv_name(v) for v in p.mv_levels if v < p.mv_minimum_bootstrap]
            rv = data.draw(st.sampled_from(["9.9-IV0", "2.8-IV1", *too_old]), label="bad release")
        ncontrollers = data.draw(st.integers(1, 3), label="controllers")
        controllers = [{"id": 3000 + i} for i in range(ncontrollers)]
        cmd: dict[str, Any] = {"op": "format", "release_version": rv, "controllers": controllers}
        if unstable:
            cmd["unstable"] = True
        if p.b("format_style") in ("3.9", "4.x") and data.draw(st.integers(0, 3), label="dyn") == 0:
            cmd["standalone"] = True
        feats = [f for f in p.production_features if f != KRAFT]
        if feats and p.b("format_style") != "3.7" and data.draw(st.booleans(), label="with features"):
            f = data.draw(st.sampled_from(feats), label="feature")
            top = p.features[f].latest_testing
            cmd["features"] = [f"{f}={data.draw(st.integers(0, top + 1), label='level')}"]
            cmd.pop("release_version") if data.draw(st.integers(0, 4)) == 0 else None
        out = self.step(cmd)
        if out["error"] != "NONE":
            cmd = {"op": "format", "release_version": p.mv_name(prod[-1]), "controllers": controllers}
            self.step(cmd)
        self.brokers, self.controllers = set(), [c["id"] for c in controllers]
        self.obs, self.mv_lowered, self.kip1155_floor = None, False, False
        # Real controllers register themselves at start-up (KIP-919); mostly start from there, else
        # from unregistered voters, whose checks block every update until they register.
        if self.can("register") and len(self.controllers) > 1 and data.draw(st.integers(0, 3), label="start-up") != 3:
            for node in self.controllers:
                self.step({"op": "register", "role": "controller", "node": node, "software": p.name})
        self.observe()

    @precondition(lambda self: self.can("format"))
    @rule(data=st.data())
    def reformat(self, data: st.DataObject) -> None:
        if data.draw(st.integers(0, 3), label="reformat?") == 3:  # keep most runs on one cluster
            self._format(data)

    # -- registration, rolling restarts -------------------------------------------------------------
    @precondition(lambda self: self.can("register"))
    @rule(node=st.sampled_from(BROKER_IDS), software=st.sampled_from(profile_names()),
          version=st.sampled_from([None, None, 4, 3, 2, 0]), explicit=st.integers(0, 9))
    def register_broker(self, node: int, software: str, version: int | None, explicit: int) -> None:
        cmd: dict[str, Any] = {"op": "register", "role": "broker", "node": node}
        if explicit == 0:
            base = load_profile(software).supported("broker")
            cmd["ranges"] = {k: list(v) for k, v in base.items() if k != KRAFT}  # a third-party node
        else:
            cmd["software"] = software
        if version is not None:
            cmd["version"] = version
        out = self.step(cmd)
        if out["error"] == "NONE":
            self.brokers.add(node)
            if version is not None and version < 4 and "sent_features" in out:
                assert all(r[0] != 0 for r in out["sent_features"].values()), (
                    f"invariant 8: BrokerRegistration v{version} carried a min-0 range: {out['sent_features']}")
        self.observe()

    @precondition(lambda self: self.can("register") and len(self.controllers) > 1)
    @rule(data=st.data(), software=st.sampled_from(profile_names()))
    def register_controller(self, data: st.DataObject, software: str) -> None:
        node = data.draw(st.sampled_from(self.controllers), label="controller")
        self.step({"op": "register", "role": "controller", "node": node, "software": software})
        self.observe()

    @precondition(lambda self: self.can("unregister"))
    @rule(node=st.sampled_from(BROKER_IDS))
    def unregister(self, node: int) -> None:
        out = self.step({"op": "unregister", "node": node})
        if out["error"] == "NONE":
            self.brokers.discard(node)
        self.observe()

    # -- updates ------------------------------------------------------------------------------------
    def _level_for(self, data: st.DataObject, name: str) -> int:
        cur = (self.obs or {}).get("finalized", {}).get(name, 0)
        # Most interesting first: Hypothesis favours (and shrinks towards) the start of the list.
        if name == MV:
            cands = [cur - 1, self.p.mv_minimum, 15, cur + 1, cur, self.p.mv_latest_production, cur - 2, cur + 2, 0]
        else:
            feat = self.p.features.get(name)
            top = feat.latest_testing if feat else 1
            cands = [cur + 1, cur - 1, top, 0, cur, top + 1, -1]
        return data.draw(st.sampled_from(list(dict.fromkeys(cands))), label=f"{name} level")

    @precondition(lambda self: self.can("update_features"))
    @rule(data=st.data(), version=st.sampled_from([2, 2, 1, 0]), validate_only=st.integers(0, 4))
    def update_features(self, data: st.DataObject, version: int, validate_only: int) -> None:
        names = [MV, *self.p.production_features, "unknown.feature.version"]
        chosen = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True), label="features")
        updates = []
        for name in chosen:
            u: dict[str, Any] = {"feature": name, "level": self._level_for(data, name)}
            u["upgrade_type"] = data.draw(st.sampled_from(TYPES[:3] * 3 + TYPES[3:]), label="type")
            updates.append(u)
        cmd = {"op": "update_features", "version": min(version, self.p.b("update_features_max_version")),
               "updates": updates, "validate_only": validate_only == 0}
        self._update(cmd)

    def _update(self, cmd: dict[str, Any]) -> dict[str, Any]:
        before = self.obs or self.observe()
        out = self.step(cmd)
        expected_records = len(self.s.steps[-1]["expected"].get("records", []))
        after = self.observe()
        failed = out["error"] != "NONE" or (out.get("results") and all(
            r["error"] != "NONE" for r in out["results"].values()))
        fb, fa = before.get("finalized", {}), after.get("finalized", {})
        validate_only = cmd.get("validate_only") and cmd.get("version", 2) >= 1  # v0 has no ValidateOnly
        if failed or validate_only:
            assert (fa, after.get("epoch")) == (fb, before.get("epoch")), (
                f"invariant 2: a failed/validate-only update changed {fb}@{before.get('epoch')} "
                f"to {fa}@{after.get('epoch')}")
        else:
            grew = after["epoch"] - before["epoch"]
            assert grew == expected_records, f"invariant 3: epoch grew by {grew}, {expected_records} record(s) applied"
            types = {u["feature"]: (u.get("upgrade_type", "UPGRADE") if cmd.get("version", 2) >= 1 else "UPGRADE")
                     for u in cmd["updates"]}
            for name, old in fb.items():
                new = fa.get(name, 0)
                if new < old:
                    assert types.get(name) in ("SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"), (
                        f"invariant 6: {name} went {old}->{new} without a downgrade type ({types.get(name)})")
                    if name == MV:
                        self.mv_lowered = True
                        if self.p.b("kip1155"):
                            self.kip1155_floor = True
        return out

    @precondition(lambda self: self.can("update_features"))
    @rule(data=st.data(), unsafe=st.booleans(), validate_only=st.integers(0, 4))
    def downgrade_metadata_version(self, data: st.DataObject, unsafe: bool, validate_only: int) -> None:
        """A metadata.version downgrade: one step, across a metadata change, or below the minimum."""
        cur = (self.obs or {}).get("finalized", {}).get(MV, 0)
        below = [v for v in reversed(self.p.mv_levels) if v < cur]
        target = data.draw(st.sampled_from([*below, self.p.mv_minimum - 1] if below else [cur, self.p.mv_minimum - 1]),
                           label="down to")
        self._update({"op": "update_features", "version": min(2, self.p.b("update_features_max_version")),
                      "validate_only": validate_only == 4, "updates": [
                          {"feature": MV, "level": target, "upgrade_type": "UNSAFE_DOWNGRADE" if unsafe else "SAFE_DOWNGRADE"}]})

    @precondition(lambda self: self.can("update_features") and self.p.b("kip1155"))
    @rule(data=st.data(), unsafe=st.booleans())
    def kip1155_downgrade(self, data: st.DataObject, unsafe: bool) -> None:
        cur = (self.obs or {}).get("finalized", {}).get(MV, 0)
        target = data.draw(st.sampled_from(sorted({14, 15, 17, 21, 23, max(cur - 1, 7)})), label="down to")
        self._update({"op": "update_features", "version": 2, "updates": [
            {"feature": MV, "level": target, "upgrade_type": "UNSAFE_DOWNGRADE" if unsafe else "SAFE_DOWNGRADE"}]})

    @precondition(lambda self: self.can("features_tool"))
    @rule(data=st.data(), action=st.sampled_from(["upgrade", "downgrade", "disable", "describe"]),
          dry_run=st.booleans(), unsafe=st.booleans())
    def features_tool(self, data: st.DataObject, action: str, dry_run: bool, unsafe: bool) -> None:
        cmd: dict[str, Any] = {"op": "features_tool", "action": action, "dry_run": dry_run, "unsafe": unsafe}
        if action == "disable":
            cmd["features"] = [data.draw(st.sampled_from([*self.p.production_features, MV]), label="f")]
        elif action != "describe":
            if self.p.b("features_tool_style") in ("4.0", "4.2") and data.draw(st.booleans(), label="by release"):
                prod = [v for v in self.p.mv_levels if self.p.versions[v].production and v >= self.p.mv_minimum_bootstrap]
                cmd["release_version"] = self.p.mv_name(data.draw(st.sampled_from(prod), label="release"))
            else:
                name = data.draw(st.sampled_from([MV, *self.p.production_features]), label="f")
                cmd["features"] = [f"{name}={self._level_for(data, name)}"]
        self.step(cmd)
        self.observe()

    # -- data that makes downgrades lossy; snapshots ---------------------------------------------
    @precondition(lambda self: self.can("add_metadata"))
    @rule(kind=st.sampled_from(PAYLOADS))
    def add_metadata(self, kind: str) -> None:
        self.step({"op": "add_metadata", "kind": kind})
        self.observe()

    @precondition(lambda self: self.can("snapshot") and self.can("load_snapshot"))
    @rule()
    def snapshot_reload(self) -> None:
        before = self.observe()
        snap = self.step({"op": "snapshot"})
        if snap["error"] != "NONE" or "snapshot" not in snap:
            return
        self.step({"op": "load_snapshot", "snapshot": snap["snapshot"]})
        after = self.observe()
        keys = ("finalized", "supported", "epoch")
        assert {k: after.get(k) for k in keys} == {k: before.get(k) for k in keys}, (
            f"invariant 9: describe changed across a snapshot reload: {before} -> {after}")

    # -- read-only probes -------------------------------------------------------------------------
    @precondition(lambda self: self.can("api_versions"))
    @rule(data=st.data(), version=st.integers(0, 4))
    def api_versions(self, data: st.DataObject, version: int) -> None:
        node = data.draw(st.sampled_from(sorted(self.brokers) + self.controllers + [99]), label="node")
        out = self.step({"op": "api_versions", "node": node, "version": version})
        if out["error"] == "NONE" and version < 4 and out.get("supported"):
            assert all(r[0] != 0 for r in out["supported"].values()), (
                f"invariant 8: ApiVersions v{version} carried a min-0 range: {out['supported']}")

    @precondition(lambda self: self.can("version_mapping") and self.can("feature_dependencies"))
    @rule(data=st.data())
    def tools(self, data: st.DataObject) -> None:
        levels = [v for v in self.p.mv_levels if v >= self.p.mv_minimum_bootstrap]
        rv = data.draw(st.sampled_from([self.p.mv_name(v) for v in levels] + ["9.9-IV9", "3.6"]), label="rv")
        self.step({"op": "version_mapping", "release_version": rv})
        name = data.draw(st.sampled_from([MV, *self.p.production_features, "nope.version"]), label="f")
        self.step({"op": "feature_dependencies", "features": [f"{name}={data.draw(st.integers(0, 30), label='l')}"]})

    # -- KIP-915 ------------------------------------------------------------------------------------
    @precondition(lambda self: self.can("load_coordinator"))
    @rule(data=st.data(), coordinator=st.sampled_from(["group", "transaction"]),
          writer=st.sampled_from(profile_names()))
    def load_coordinator(self, data: st.DataObject, coordinator: str, writer: str) -> None:
        from reference_impl.coordinator import NewerWriter, load, project, sample_records

        seed = data.draw(st.integers(0, 2**16), label="seed")
        w = NewerWriter(writer, seed)
        raw = w.write(coordinator, sample_records(coordinator, seed), unknown_tags=seed % 3, future_keys=seed % 2)
        if seed % 5 == 0 and raw[0][1] is not None:
            # A value version newer than any release knows (KIP-915: older loaders must cope).
            raw[0] = (raw[0][0], (9).to_bytes(2, "big") + raw[0][1][2:])
        recs = [{"key": k.hex(), "value": None if v is None else v.hex()} for k, v in raw]
        out = self.step({"op": "load_coordinator", "coordinator": coordinator, "records": recs})
        if out["error"] != "NONE":
            return
        # Invariant 10: what the older software knows equals the newer software's view, projected.
        newer = load(writer, coordinator, raw)
        reader = self.ref.active_profile.name  # without a node, the active controller's software loads
        if newer.ok and _newer_or_same(writer, reader):
            projected = project(newer.state, coordinator, reader)
            assert out["state"] == projected, "invariant 10: older loader state != projection of newer state"


def _newer_or_same(writer: str, reader: str) -> bool:
    names = list(profile_names())
    return names.index(writer) >= names.index(reader)


# -- the test -----------------------------------------------------------------------------------------

def test_stateful_model(request: pytest.FixtureRequest, kfc_target: Any, kfc_profile: str,
                        kfc_capabilities: frozenset[str]) -> None:
    name = request.config.getoption("--kfc-hypothesis-profile")
    run = _Run(kfc_target, kfc_profile, kfc_capabilities)
    request.node.user_properties.append(("kfc_rules", []))
    try:
        run.execute(name)
    except Exception as e:
        if run.last is None:
            raise
        fail_with_trace(request, run.last.s, e, f"stateful:{kfc_profile}:{name}", [])
    finally:
        _write_coverage(request, run)
    if name == "ci":
        reached = set(run.coverage.ops)
        missing_ops = sorted((GENERATED_OPS & kfc_capabilities) - reached)
        assert not missing_ops, f"coverage: the ci run never reached op(s) {missing_ops}"
        families = required_families(kfc_profile, kfc_capabilities)
        missing = sorted(families - run.coverage.families)
        assert not missing, f"coverage: the ci run never reached rule family(ies) {missing}"


def required_families(profile: str, capabilities: frozenset[str]) -> set[str]:
    """The rule families a ci run must reach: the profile's KIP families that the recorded examples
    (fixtures/examples) reach through ops the target has -- in this profile's examples, or, for a
    family those never show, in any profile's."""
    families = set(FAMILIES) | ({"KIP1155"} if load_profile(profile).b("kip1155") else set())
    ops = GENERATED_OPS & capabilities
    here_any, here, anywhere = Coverage(), Coverage(), Coverage()  # this profile / ... via ops / any via ops
    for trace in load_traces("examples"):
        mine = trace["profile"] == profile
        for step in trace["steps"]:
            reached = step["command"].get("op") in ops
            for cov, counted in ((here_any, mine), (here, mine and reached), (anywhere, reached)):
                if counted:
                    cov.add(step["command"], step["expected"])
    return families & (here.families | (anywhere.families - here_any.families))


def _write_coverage(request: pytest.FixtureRequest, run: _Run) -> None:
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
