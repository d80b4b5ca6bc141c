"""The stateful model (library code; conformance/suite/test_stateful.py is its test): Hypothesis
generates format / registration / rolling-restart / update / downgrade / snapshot / coordinator
sequences; every step runs in lockstep on the target and the
reference (invariant 11) and the invariants below are checked on what the target reports.

Invariants (each a record in conformance.invariants, with its rule id; 1, 3 and 7 are functions there
that the observe tier checks on a running cluster too):
 1 every finalized level lies in the supported range of every registered node (kraft.version: brokers
   that registered under a controller whose release checks it)
 2 a failed update changes nothing (levels and epoch)
 3 the epoch never decreases; a controller's moves to the end of a batch that changed the finalized
   features and stays otherwise (Kafka's FeaturesPublisher)
 4 dependencies hold in the finalized state (where the profile checks them; see `_deps_apply`)
 5 metadata.version never below the profile's minimum, nor below 3.7-IV0 after a KIP-1155 downgrade
 6 no level goes down without a downgrade type
 7 a finalized level 0 is the same as absent (never listed)
 8 ApiVersions and BrokerRegistration below v4 never carry a range with min 0 (nodes of 3.9.0+: KAFKA-17492)
 9 reloading a snapshot preserves describe's levels and ranges; the epoch becomes the snapshot's end
10 KIP-915: an older loader's state equals the newer loader's state projected to what it knows
11 the target agrees with the reference on every outcome
"""

from __future__ import annotations

import contextlib
import functools
import gc
import random
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from reference_impl import load_profile, profile_names

from . import families, hypothesis_profiles
from ._hypothesis_seam import without_local_constants
from .grammar import KRAFT, MV, PAYLOADS, Chooser, DrawChooser, Grammar, RandomChooser
from .invariants import (
    DEPENDENCIES,
    DOWNGRADE_TYPE,
    EPOCH,
    EPOCH_AT_WRITE,
    IN_RANGE,
    LEVEL_ZERO,
    MIN0_API_VERSIONS,
    MIN0_REGISTRATION,
    MV_FLOOR_1155,
    MV_MINIMUM,
    PROJECTION,
    SNAPSHOT,
    UNCHANGED,
    epoch_went_back,
    levels_outside,
    zero_levels,
)
from .session import Coverage, Divergence, Session

if TYPE_CHECKING:
    from .live.context import LiveContext
    from .targets.base import Target

GENERATED_OPS = {"format", "register", "unregister", "update_features", "describe", "api_versions",
                 "features_tool", "add_metadata", "snapshot", "load_snapshot", "load_coordinator",
                 "version_mapping", "feature_dependencies"}
FAMILIES = {"KIP584", "KIP778", "KIP919", "KIP1022"}
DIRECTED_PART = 8  # a directed family longer than this is walked half at a time
WALKS_PER_EXAMPLE = 2  # directed walks in one random example (each is tens of steps; the tour walks them all)
TOUR_SEED = 20261128


class Run:
    """One run of the machine: target, profile, capabilities, coverage, and the last machine."""

    def __init__(self, target: Target, profile: str, capabilities: frozenset[str],
                 live: LiveContext | None = None):
        self.target, self.profile, self.capabilities = target, profile, capabilities
        self.live = live  # a running cluster's context, or None
        self.coverage = Coverage()
        self.last: FeatureMachine | None = None
        # The first divergence met: what is reported when Hypothesis cannot replay it (a live cluster
        # has moved on, so its replay may not fail again: Hypothesis calls that flaky).
        self.first: tuple[Session, Divergence] | None = None
        self.steps = 0  # steps sent over all examples: how long the model walked before it diverged
        self.steps_to_first: int | None = None

    def machine(self) -> type[FeatureMachine]:
        """The machine class bound to this run (Hypothesis instantiates it once per example)."""
        return type("FeatureMachine", (FeatureMachine,), {"run": self})

    def execute(self, hypothesis_profile: str, variant: int = 0) -> None:
        name = hypothesis_profiles.resolve(hypothesis_profile)
        if self.live is None:
            self.tour(variant)
        # Hypothesis derives a derandomized run's seed from the factory's source; a partial has none,
        # so editing the machine does not reshuffle the kfc-ci run (`variant` picks another seed).
        factory = functools.partial(self.machine(), **({"variant": variant} if variant else {}))
        with without_local_constants(name == hypothesis_profiles.DEFAULT), _collector_ignoring_what_lives_now():
            run_state_machine_as_test(factory, settings=settings.get_profile(name))  # type: ignore[arg-type]  # any factory

    def tour(self, variant: int = 0) -> None:
        """Every part of every directed walk once, before the random examples, with seeded draws: the
        families the walks reach are reached by every run, whatever Hypothesis draws.  Each part on a
        machine (and trace) of its own, from a fresh format: a divergence's trace is that part only."""
        rng = random.Random(TOUR_SEED + variant)
        machine = self.machine()
        for kind, part in machine().tour_parts():
            machine().tour_walk(kind, part, RandomChooser(rng))


class FeatureMachine(RuleBasedStateMachine):
    run: Run  # bound by Run.machine()

    def __init__(self, variant: int = 0) -> None:
        super().__init__()
        self.run.last = self
        self.grammar = Grammar(self.run.profile)
        self.grammar.active_software = self.run.target.active_software
        live = self.run.live
        self.live = live is not None
        self.mutate = live is None or "mutate" in live.tiers
        if live is not None:
            self.grammar.live(live.visible)
        self.profile = self.grammar.profile
        self.session = Session(self.run.target, self.run.profile, coverage=self.run.coverage, allure_steps=False,
                               capabilities=self.run.capabilities)
        self.brokers: set[int] = set()
        self.kraft_checked: set[int] = set()  # brokers that registered under a controller checking kraft.version
        self.obs: dict[str, Any] | None = None
        self.mv_lowered = False  # release profiles do not re-check dependencies when MV goes down
        self.kip1155_floor = False
        self.walks = 0  # directed walks so far in this example

    # -- helpers ----------------------------------------------------------------------------------
    def can(self, op: str) -> bool:
        return op in self.run.capabilities

    @property
    def ref(self) -> Any:
        return self.session.reference

    def step(self, command: dict[str, Any]) -> dict[str, Any]:
        self.run.steps += 1
        try:
            return self.session.step(command)
        except Divergence as d:
            if self.run.first is None:
                self.run.first = (self.session, d)
                self.run.steps_to_first = self.run.steps
            raise

    @property
    def watched(self) -> int:
        """The node whose describe states the cluster: the active controller, on a live cluster the
        first node it shows when its controller is not observed."""
        if self.grammar.visible is None or self.ref.active_id in self.grammar.visible:
            return int(self.ref.active_id)
        return min(self.grammar.visible)

    def _unfinalized_mv(self, fin: dict[str, int]) -> bool:
        """A live cluster that started without metadata.version and still has none (KIP778-OBS-01)."""
        ctx = self.run.live
        return ctx is not None and MV not in ctx.start_levels and MV not in fin

    def observe(self) -> dict[str, Any]:
        """describe through the active controller (ApiVersions v4), with invariants 3, 5, 7."""
        out = self.step({"op": "describe", "node": self.watched})  # the node's newest ApiVersions
        if out["error"] != "NONE":
            return self.obs or {}
        fin = out["finalized"]
        problems = zero_levels(fin)
        if problems:
            raise LEVEL_ZERO.violated(*problems)
        if self.obs is not None:
            problems = epoch_went_back(self.obs["epoch"], out["epoch"])
            if problems:
                raise EPOCH.violated(*problems)
        mv = fin.get(MV, 0)
        # A live cluster that started without metadata.version has its finding (KIP778-OBS-01) already.
        if not (self._unfinalized_mv(fin) or mv >= self.profile.mv_minimum):
            raise MV_MINIMUM.violated(f"metadata.version {mv} < minimum {self.profile.mv_minimum}")
        if self.obs is not None and mv < self.obs["finalized"].get(MV, 0):
            self.mv_lowered = True  # by any path (UpdateFeatures or kafka-features downgrade)
        if self.kip1155_floor and mv < 15:
            raise MV_FLOOR_1155.violated(f"metadata.version {mv} below 3.7-IV0 after a KIP-1155 downgrade")
        self.obs = out
        self.check_ranges(fin)
        self.check_dependencies(fin)
        return out

    def check_ranges(self, fin: dict[str, int]) -> None:
        """Invariant 1, from each registered node's own ApiVersions v4."""
        for node in sorted(self.brokers) + [c for c in self.ref.voters if c in self.ref.image.controllers]:
            if self.grammar.visible is not None and node not in self.grammar.visible:
                continue  # a synthetic node on a live cluster has no listener to ask
            out = self.step({"op": "api_versions", "node": node})
            if out["error"] != "NONE" or out.get("supported") is None:
                continue
            # A 3.9.0 controller lists its image's kraft.version record, which registrations are not
            # checked against (Kafka 3.9.0's own classes accept a 3.8 broker then; KAFKA-18920).
            image_only = not self.ref.active_profile.behaviour.get("controller_reports_kraft_version", True)
            # kraft.version lives in raft control records: a controller registers (and a 3.7/3.8 one
            # replays) without checking it (ClusterControlManager.registerController), and a broker that
            # registered while a 3.7/3.8 controller was active was never checked against it (a later
            # controller does not re-check registrations).
            skip = (KRAFT,) if node not in self.kraft_checked or image_only else ()
            problems = levels_outside(fin, out["supported"], f"node {node}", skip=skip)
            if problems:
                raise IN_RANGE.violated(*problems)

    def _deps_apply(self) -> bool:
        # Kafka never re-checks dependencies when metadata.version goes down (controller-notes §3), and
        # 3.x does not check them on update at all: the invariant holds where both are true.
        if self.profile.behaviour["kip1155"]:
            return True
        return bool(self.profile.behaviour["update_checks_dependencies"]) and not self.mv_lowered

    def check_dependencies(self, fin: dict[str, int]) -> None:
        """Invariant 4."""
        if not self._deps_apply():
            return
        raft = self.profile.behaviour["kraft_version_update"] == "raft"
        for name, level in fin.items():
            feat = self.profile.features.get(name)
            if name == MV or feat is None or level not in feat.levels:
                continue
            if name == KRAFT and raft:
                continue  # 4.1+ upgrades kraft.version in the raft layer, without a dependency check
            for dep, need in feat.levels[level].dependencies.items():
                if dep == MV and self._unfinalized_mv(fin):
                    continue  # a live cluster without metadata.version: its finding is KIP778-OBS-01
                if fin.get(dep, 0) < need:
                    raise DEPENDENCIES.violated(f"{name}={level} needs {dep}>={need}, have {fin}")

    # -- set-up -----------------------------------------------------------------------------------
    @initialize(data=st.data())
    def format_cluster(self, data: st.DataObject) -> None:
        if self.live:
            # A running cluster starts where it is: its brokers, none of them checked by us for kraft.version.
            self.brokers = set(self.ref.image.brokers)
            self.observe()
            return
        self._format(DrawChooser(data))

    def teardown(self) -> None:
        """On a live cluster every example starts from the same state (Hypothesis replays and shrinks
        examples): unregister our synthetic brokers and put the starting levels back."""
        live = self.run.live
        if live is None or not ({"mutate", "register"} & set(live.tiers)):
            return
        from .live.restore import restore_levels

        for node in sorted(set(self.ref.image.brokers) - live.visible):  # ours: synthetic, no listener
            self.run.target.apply({"op": "unregister", "node": node})
        report = restore_levels(self.run.target, live.start_levels, live.profile)
        if report["not_restored"]:
            raise AssertionError("live cluster: the starting levels could not be restored between examples, so "
                                 f"the next one would start elsewhere: {report['not_restored']}")

    def send(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Without the mutate tier an update is a probe: validate_only, at v1 or later."""
        if cmd.get("op") != "update_features":
            return cmd
        # kraft.version changes the quorum's own protocol and never goes back: on a live cluster it is only probed.
        irreversible = self.live and any(u.get("feature") == KRAFT for u in cmd.get("updates", []))
        if self.live and self.mutate and not irreversible and not (cmd.get("validate_only") and cmd.get("version", 1)):
            from .live.restore import reversible

            # Only changes the reference can undo reach a live cluster; the others are probed.
            live = self.run.live
            assert live is not None  # self.live says so
            irreversible = not reversible(self.ref, cmd, live.start_levels, live.visible)
        if not self.mutate or irreversible:
            cmd = {**cmd, "validate_only": True, "version": max(1, cmd.get("version", 1))}
        return cmd

    def _new_cluster(self) -> None:
        """A format or restore_state started a new cluster: the machine's bookkeeping restarts."""
        self.brokers, self.kraft_checked, self.obs = set(), set(), None
        self.mv_lowered, self.kip1155_floor = False, False

    def _format(self, ch: Chooser) -> None:
        if self.step(self.grammar.format(ch))["error"] != "NONE":
            self.step(self.grammar.format(ch, valid=True))
        self._new_cluster()
        if self.can("register"):
            for cmd in self.grammar.start_up_registrations(ch, self.ref):
                self.step(cmd)
        self.observe()

    @precondition(lambda self: self.can("format"))
    @rule(data=st.data())
    def reformat(self, data: st.DataObject) -> None:
        ch = DrawChooser(data)
        if ch.chance(0.25, "reformat"):  # keep most runs on one cluster
            self._format(ch)

    # -- registration, rolling restarts -------------------------------------------------------------
    def _registered(self, node: int) -> None:
        """A broker registered: checked against kraft.version if the active controller's release has it."""
        self.brokers.add(node)
        if KRAFT in self.ref.active_profile.features:
            self.kraft_checked.add(node)
        else:
            self.kraft_checked.discard(node)

    @precondition(lambda self: self.can("register"))
    @rule(data=st.data())
    def register_broker(self, data: st.DataObject) -> None:
        cmd = self.grammar.register_broker(DrawChooser(data), self.ref)
        out = self.step(cmd)
        if out["error"] == "NONE":
            self._registered(cmd["node"])
            version = cmd.get("version")
            node = self.ref.node(cmd["node"])
            omits = node is not None and node.profile.behaviour["min0_ranges_below_v4"] == "omit"  # 3.9.0+
            if omits and version is not None and version < 4 and "sent_features" in out \
                    and any(r[0] == 0 for r in out["sent_features"].values()):
                raise MIN0_REGISTRATION.violated(f"BrokerRegistration v{version} carried a min-0 range: "
                                                 f"{out['sent_features']}")
        self.observe()

    @precondition(lambda self: self.can("register") and len(self.ref.voters) > 1 and not self.live)
    @rule(data=st.data())
    def register_controller(self, data: st.DataObject) -> None:
        self.step(self.grammar.register_controller(DrawChooser(data), self.ref))
        self.observe()

    @precondition(lambda self: self.can("register") and bool(self.brokers))
    @rule(data=st.data())
    def roll_broker(self, data: st.DataObject) -> None:
        cmd = self.grammar.roll_broker(DrawChooser(data), self.ref)
        if self.step(cmd)["error"] == "NONE":
            self._registered(cmd["node"])
        self.observe()

    @precondition(lambda self: self.can("unregister"))
    @rule(data=st.data())
    def unregister(self, data: st.DataObject) -> None:
        ch = DrawChooser(data)
        # KIP-1312 (4.4+): while a controller other than the active one is registered (a stale registration
        # may be holding upgrades back), sometimes unregister a controller instead.
        stale = any(n != self.ref.active_id for n in self.ref.image.controllers)
        if self.grammar.has_unregister_controller and stale and ch.chance(0.3, "a controller (KIP-1312)"):
            self.step(self.grammar.unregister_controller(ch, self.ref))
            self.observe()
            return
        cmd = self.grammar.unregister(ch, self.ref)
        if self.step(cmd)["error"] == "NONE":
            self.brokers.discard(cmd["node"])
            self.kraft_checked.discard(cmd["node"])
        self.observe()

    @precondition(lambda self: self.can("register") and self.can("update_features") and len(self.ref.voters) > 1
                  and not self.live)
    @rule(data=st.data())
    def controller_rollback(self, data: st.DataObject) -> None:
        for cmd in self.grammar.controller_rollback(DrawChooser(data), self.ref):
            if cmd["op"] == "update_features":
                self._update(cmd)
            else:
                self.step(cmd)
                self.observe()

    # -- updates ------------------------------------------------------------------------------------
    @precondition(lambda self: self.can("update_features"))
    @rule(data=st.data())
    def update_features(self, data: st.DataObject) -> None:
        self._update(self.grammar.update_features(DrawChooser(data), self.ref))

    @precondition(lambda self: self.can("update_features"))
    @rule(data=st.data())
    def downgrade_metadata_version(self, data: st.DataObject) -> None:
        self._update(self.grammar.downgrade_metadata_version(DrawChooser(data), self.ref))

    @precondition(lambda self: self.can("update_features") and self.profile.behaviour["kip1155"])
    @rule(data=st.data())
    def kip1155_downgrade(self, data: st.DataObject) -> None:
        self._update(self.grammar.kip1155_downgrade(DrawChooser(data), self.ref))

    def _update(self, cmd: dict[str, Any]) -> dict[str, Any]:
        cmd = self.send(cmd)
        before = self.obs or self.observe()
        out = self.step(cmd)
        written = self.session.engine.steps[-1].expected.get("records", [])
        expected_records = len(written)
        after = self.observe()
        failed = out["error"] != "NONE" or (out.get("results") and all(
            r["error"] != "NONE" for r in out["results"].values()))
        fb, fa = before.get("finalized", {}), after.get("finalized", {})
        validate_only = cmd.get("validate_only") and cmd.get("version", 2) >= 1  # v0 has no ValidateOnly
        # A live cluster's epoch also moves on its own (NoOpRecords, KIP-835): there it may only grow more.
        if failed or validate_only:
            if self.live:
                if fa != fb:
                    raise UNCHANGED.violated(f"a failed/validate-only update changed {fb} to {fa}")
            else:
                if (fa, after.get("epoch")) != (fb, before.get("epoch")):
                    raise UNCHANGED.violated(f"a failed/validate-only update changed {fb}@{before.get('epoch')} "
                                             f"to {fa}@{after.get('epoch')}")
        else:
            # The controller's epoch is where the features last changed (Kafka's FeaturesPublisher):
            # the end of this write's batch if it wrote a FeatureLevelRecord, else where it was.
            changed = any(r.get("type") == "FeatureLevelRecord" for r in written)
            want = written[-1]["offset"] if changed else before["epoch"]
            if not (after["epoch"] == want or (self.live and after["epoch"] >= want)):
                raise EPOCH_AT_WRITE.violated(f"epoch {before['epoch']} -> {after['epoch']} after {expected_records} "
                                        f"record(s) applied; want {want}")
            types = {u["feature"]: (u.get("upgrade_type", "UPGRADE") if cmd.get("version", 2) >= 1 else "UPGRADE")
                     for u in cmd["updates"]}
            for name, old in fb.items():
                new = fa.get(name, 0)
                if new < old:
                    if types.get(name) not in ("SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"):
                        raise DOWNGRADE_TYPE.violated(f"{name} went {old}->{new} without a downgrade type "
                                                f"({types.get(name)})")
                    if name == MV:
                        self.mv_lowered = True
                        if self.profile.behaviour["kip1155"]:
                            self.kip1155_floor = True
        return out

    @precondition(lambda self: self.can("features_tool"))
    @rule(data=st.data())
    def features_tool(self, data: st.DataObject) -> None:
        self.step(self.grammar.features_tool(DrawChooser(data), self.ref))
        self.observe()

    # -- data that makes downgrades lossy; snapshots ---------------------------------------------
    @precondition(lambda self: self.can("add_metadata"))
    @rule(data=st.data())
    def add_metadata(self, data: st.DataObject) -> None:
        self.step(self.grammar.add_metadata(DrawChooser(data)))
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
        keys = ("finalized", "supported")
        if {k: after.get(k) for k in keys} != {k: before.get(k) for k in keys}:
            raise SNAPSHOT.violated(f"describe changed across a snapshot reload: {before} -> {after}")
        # Loading publishes the whole image: the epoch is where the snapshot ends.
        if after.get("epoch") != snap["snapshot"]["end_offset"]:
            raise SNAPSHOT.violated(f"epoch {after.get('epoch')} after loading a snapshot that ends at "
                              f"{snap['snapshot']['end_offset']}")

    # -- directed scenarios --------------------------------------------------------------------------
    def _may_walk(self, kind: str) -> bool:
        """A directed walk of this kind may start: not on a live cluster, and at most WALKS_PER_EXAMPLE
        per example, so that most of the ci walk's steps stay random (the walks are long)."""
        return not self.live and self.walks < WALKS_PER_EXAMPLE and kind in self._directed_kinds()

    def _directed_kinds(self) -> list[str]:
        """The families of several instances this target can walk (conformance.families.instances)."""
        kinds = []
        if self.can("format") and families.exists("format-quorum-flags", self.profile):
            kinds.append("format-quorum-flags")
        if self.can("format") and self.can("update_features"):
            kinds.append("every-feature-level")
        if self.can("format") and self.can("register"):
            kinds.append("reregister")
            if self.grammar.active_software is None:  # a target of one release's code runs no other release
                kinds.append("rolling")
        if self.can("format") and self.can("update_features"):
            kinds += ["mv-downgrade", "unmet-dependencies"]
            if self.can("register") and self.grammar.active_software is None:
                kinds.append("standby-rollback")
        if self.can("format") and self.can("register"):
            kinds.append("registration-above-range")
        if self.can("feature_dependencies"):
            kinds.append("feature-dependencies")
        if {"restore_state", "snapshot", "load_snapshot"} <= self.run.capabilities:
            kinds.append("snapshot-every-mv")
        if {"format", "register", "api_versions"} <= self.run.capabilities and \
                families.exists("kraft1-read-broker", self.profile):
            kinds.append("kraft1-read-broker")
        if self._edges():
            kinds.append("edges")
        return kinds

    def _edges(self) -> list[str]:
        """Families one or two requests reach, walked together (one rule: the rules share the ci walk)."""
        edges = []
        if self.can("format") and self.can("register"):
            edges.append("register-every-version")
        if self.can("format") and self.can("features_tool") and families.exists("features-tool-release", self.profile):
            edges.append("features-tool-release")
        if self.can("load_coordinator"):
            edges += [f"coordinator-unknown-value-version:{c}" for c in families.COORDINATORS]
        return edges

    def _fresh(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """A step that starts a new cluster (format, restore_state): the machine's bookkeeping restarts
        (a refused one leaves the cluster as it was)."""
        out = self.step(cmd)
        if out.get("error") == "NONE":
            self._new_cluster()
        self.observe()
        return out

    def _items(self, kind: str) -> list[Any]:
        """The instances a directed walk of this kind goes through."""
        if kind == "format-quorum-flags":
            return list(families.QUORUM_COMBOS)
        if kind == "every-feature-level":
            return [tuple(i.split("=")) for i in families.instances(kind, self.profile) or []]
        if kind == "snapshot-every-mv":
            return list(self.profile.mv_levels)
        if kind == "edges":
            return self._edges()
        if kind in ("unmet-dependencies", "feature-dependencies"):
            return [(name, lv) for name in self.profile.production_features
                    for lv, level in sorted(self.profile.features[name].levels.items())
                    if lv and (level.dependencies or kind == "feature-dependencies")]
        return [True, False] if kind in ("reregister", "rolling") else [None]

    @staticmethod
    def _part_size(items: list[Any]) -> int:
        """A long family goes half at a time."""
        return len(items) if len(items) <= DIRECTED_PART else -(-len(items) // 2)

    def _parts(self, items: list[Any]) -> int:
        return -(-len(items) // self._part_size(items)) if items else 0

    def tour_parts(self) -> list[tuple[str, int]]:
        """Every directed walk and every part of it (Run.tour walks each once)."""
        return [(kind, part) for kind in self._directed_kinds() for part in range(self._parts(self._items(kind)))]

    def tour_walk(self, kind: str, part: int, ch: Chooser) -> None:
        """One part of the tour: a fresh cluster, then the walk."""
        self._format(ch)
        self.walk(kind, ch, part)

    def _directed(self, kind: str, data: st.DataObject) -> None:
        """A directed walk drawn by Hypothesis (one rule per kind, below), within a random example."""
        self.walks += 1
        self.walk(kind, DrawChooser(data))

    def walk(self, kind: str, ch: Chooser, part: int | None = None) -> None:
        """A few instances of one family that random draws rarely reach (static voters with each quorum
        flag, a feature at each level, re-registrations, snapshots at every metadata.version, …), in a
        row; then a fresh cluster as after a reformat.  `part`: which part of a long family (drawn when
        None, shifted by how far this example has walked: the same on every replay)."""
        items = self._items(kind)
        if not items:
            return
        size, parts = self._part_size(items), self._parts(items)
        if part is None:
            part = (ch.integer(0, parts - 1, "part") + len(self.session.engine.steps)) % parts
        item: Any  # one instance: its type is the family's
        for item in items[part * size:(part + 1) * size]:
            if kind == "format-quorum-flags":
                self.step(self.grammar.quorum_format(*item))
            elif kind == "every-feature-level":
                name, level = item[0], int(item[1])
                self._fresh(self.grammar.fresh_format(dynamic=name == KRAFT))
                cmd = self.grammar.feature_level_update(self.ref, name, level)
                if cmd is not None:
                    self._update(cmd)
                if self.ref.finalized_view().get(name, 0) == level:
                    # and back to 0 (deletion; kraft.version never goes down, KIP1022-UPD-03)
                    self._update(self.grammar.one_update(name, 0, "SAFE_DOWNGRADE"))
            elif kind == "snapshot-every-mv":
                self._fresh(self.grammar.restore_at(item))
                self.snapshot_reload()
            elif kind == "reregister":
                self._reregister(same_process=item)
            elif kind == "rolling":
                self._roll_old_bootstrap(upgrade=item)
            elif kind == "mv-downgrade":
                self._fresh(self.grammar.fresh_format())
                if self.can("add_metadata"):  # data only newer levels express: a downgrade then loses it
                    for payload in PAYLOADS:
                        self.step({"op": "add_metadata", "kind": payload})
                for how in ("step", "lossy-SAFE_DOWNGRADE", "lossy-UNSAFE_DOWNGRADE"):
                    cmd = self.grammar.mv_downgrade(self.ref, how)
                    if cmd is not None:
                        self._update(cmd)
                # a level no release knows, and an upgrade type no client sends: both refused
                self._update(self.grammar.one_update(MV, self.profile.mv_latest_testing + 1, "UPGRADE"))
                self._update(self.grammar.one_update(MV, self.profile.mv_latest_production, "UNKNOWN"))
                home = self.grammar.names.index(self.profile.name)
                if self.profile.behaviour["kip1155"] and self.can("register") and home:
                    # a controller registered on a release before KIP-1155: the downgrade falls back to
                    # KIP-778's rules (a lossy one refused)
                    older = self.grammar.names[home - 1]
                    self._fresh({**self.grammar.fresh_format(),
                                 "release_version": self.profile.mv_name(load_profile(older).mv_latest_production)})
                    self.step({"op": "register", "role": "controller", "node": self.ref.active_id, "software": older})
                    cmd = self.grammar.mv_downgrade(self.ref, "lossy-SAFE_DOWNGRADE")
                    if cmd is not None:
                        self._update(cmd)
                if self.profile.behaviour["kip1155"] and self.can("register"):
                    self._kip1155_capable_edge()
            elif kind == "unmet-dependencies":
                # the oldest cluster the release formats, then the level alone: its dependencies unmet
                self._fresh({**self.grammar.fresh_format(),
                             "release_version": self.profile.mv_name(self.grammar.bootstrap_levels()[0])})
                self._update(self.grammar.one_update(item[0], item[1], "UPGRADE"))
                # the same level asked of format, explicitly (--feature): its dependencies are checked too
                self._fresh({**self.grammar.fresh_format(), "features": [f"{item[0]}={item[1]}"],
                             "release_version": self.profile.mv_name(self.grammar.bootstrap_levels()[0])})
            elif kind == "feature-dependencies":
                self.step({"op": "feature_dependencies", "features": [f"{item[0]}={item[1]}"]})
            elif kind == "registration-above-range":
                self._register_above_range()
            elif kind == "edges" and item == "register-every-version":
                self._register_every_version()
            elif kind == "edges" and item == "features-tool-release":
                self._features_tool_release()
            elif kind == "edges":
                # the release's own records, one value at a version no release writes
                coordinator = item.split(":")[1]
                self.step(self.grammar.coordinator_load(coordinator, self.profile.name, 5, unknown_value_version=True)[0])
            elif kind == "standby-rollback":
                self._standby_rollback()
            else:
                self._fresh(self.grammar.fresh_format(dynamic=True))
                self.step({"op": "register", "role": "broker", "node": self.grammar.broker_ids[0],
                           "software": self.profile.name})
                self.step({"op": "api_versions", "node": self.grammar.broker_ids[0]})
        self._format(ch)

    @precondition(lambda self: self._may_walk("format-quorum-flags"))
    @rule(data=st.data())
    def directed_format_quorum_flags(self, data: st.DataObject) -> None:
        self._directed("format-quorum-flags", data)

    @precondition(lambda self: self._may_walk("every-feature-level"))
    @rule(data=st.data())
    def directed_every_feature_level(self, data: st.DataObject) -> None:
        self._directed("every-feature-level", data)

    @precondition(lambda self: self._may_walk("reregister"))
    @rule(data=st.data())
    def directed_reregister(self, data: st.DataObject) -> None:
        self._directed("reregister", data)

    @precondition(lambda self: self._may_walk("rolling"))
    @rule(data=st.data())
    def directed_rolling(self, data: st.DataObject) -> None:
        self._directed("rolling", data)

    @precondition(lambda self: self._may_walk("mv-downgrade"))
    @rule(data=st.data())
    def directed_mv_downgrade(self, data: st.DataObject) -> None:
        self._directed("mv-downgrade", data)

    @precondition(lambda self: self._may_walk("unmet-dependencies"))
    @rule(data=st.data())
    def directed_unmet_dependencies(self, data: st.DataObject) -> None:
        self._directed("unmet-dependencies", data)

    @precondition(lambda self: self._may_walk("standby-rollback"))
    @rule(data=st.data())
    def directed_standby_rollback(self, data: st.DataObject) -> None:
        self._directed("standby-rollback", data)

    @precondition(lambda self: self._may_walk("registration-above-range"))
    @rule(data=st.data())
    def directed_registration_above_range(self, data: st.DataObject) -> None:
        self._directed("registration-above-range", data)

    @precondition(lambda self: self._may_walk("feature-dependencies"))
    @rule(data=st.data())
    def directed_feature_dependencies(self, data: st.DataObject) -> None:
        self._directed("feature-dependencies", data)

    @precondition(lambda self: self._may_walk("snapshot-every-mv"))
    @rule(data=st.data())
    def directed_snapshot_every_mv(self, data: st.DataObject) -> None:
        self._directed("snapshot-every-mv", data)

    @precondition(lambda self: self._may_walk("kraft1-read-broker"))
    @rule(data=st.data())
    def directed_kraft1_read_broker(self, data: st.DataObject) -> None:
        self._directed("kraft1-read-broker", data)

    @precondition(lambda self: self._may_walk("edges"))
    @rule(data=st.data())
    def directed_edges(self, data: st.DataObject) -> None:
        self._directed("edges", data)

    def _register_every_version(self) -> None:
        """A broker registers with each BrokerRegistration version the controller accepts (v3 leaves
        min-0 ranges out: a finalized feature it no longer mentions), then a third-party broker whose
        features omit metadata.version."""
        self._fresh(self.grammar.fresh_format())
        b1, b2 = self.grammar.broker_ids[:2]
        for version in range(self.profile.behaviour["broker_registration_max_version"] + 1):
            self.step({"op": "register", "role": "broker", "node": b1, "software": self.profile.name,
                       "version": version})
        ranges = {k: list(v) for k, v in self.profile.supported("broker").items() if k not in (MV, KRAFT)}
        self.step({"op": "register", "role": "broker", "node": b2, "ranges": ranges})
        self.observe()

    def _features_tool_release(self) -> None:
        """kafka-features upgrade --release-version from the oldest cluster the release formats to its
        latest production level, and downgrade --release-version back."""
        oldest = self.profile.mv_name(self.grammar.bootstrap_levels()[0])
        self._fresh({**self.grammar.fresh_format(), "release_version": oldest})
        self.step({"op": "features_tool", "action": "upgrade",
                   "release_version": self.profile.mv_name(self.profile.mv_latest_production)})
        self.observe()
        self.step({"op": "features_tool", "action": "downgrade", "release_version": oldest})
        self.observe()

    def _register_above_range(self) -> None:
        """A third-party broker whose metadata.version range starts above the finalized level: refused
        (a finalized level outside a broker's range, either end)."""
        self._fresh({**self.grammar.fresh_format(),
                     "release_version": self.profile.mv_name(self.grammar.bootstrap_levels()[0])})
        fin = self.ref.finalized_view().get(MV, 0)
        ranges = {k: list(v) for k, v in self.profile.supported("broker").items() if k != KRAFT}
        if MV in ranges and fin + 1 <= ranges[MV][1]:
            ranges[MV] = [fin + 1, ranges[MV][1]]
            self.step({"op": "register", "role": "broker", "node": self.grammar.broker_ids[0], "ranges": ranges})
            self.observe()
        # and one whose range ends at the finalized level: registered (fenced until it heartbeats), it
        # still holds metadata.version where it is (fenced brokers count, KIP584-UPD-04)
        if MV in ranges and self.can("update_features") and fin + 1 in self.profile.mv_levels:
            ranges[MV] = [min(ranges[MV][0], fin), fin]
            self.step({"op": "register", "role": "broker", "node": self.grammar.broker_ids[1], "ranges": ranges})
            self._update(self.grammar.one_update(MV, fin + 1, "UPGRADE"))

    def _kip1155_capable_edge(self) -> None:
        """KIP-1155: a downgrade needs every node to support the downgrade-capable metadata.version.  A
        broker whose range ends one below it, then one whose range ends at it, each asked to step down."""
        capable = self.profile.behaviour["kip1155_downgrade_capable_level"]
        floor = self.profile.behaviour["kip1155_minimum_downgrade_level"]
        levels = [v for v in self.grammar.bootstrap_levels(production=False) if floor < v < capable]
        below = [v for v in self.profile.mv_levels if floor <= v < (levels[-1] if levels else 0)]
        if not levels or not below:
            return
        for top in (capable - 1, capable):
            self._fresh({**self.grammar.fresh_format(), "release_version": self.profile.mv_name(levels[-1])})
            ranges = {k: list(v) for k, v in self.profile.supported("broker").items() if k != KRAFT}
            ranges[MV] = [min(ranges[MV][0], levels[-1]), top]
            self.step({"op": "register", "role": "broker", "node": self.grammar.broker_ids[0], "ranges": ranges})
            self._update(self.grammar.one_update(MV, below[-1], "SAFE_DOWNGRADE"))

    def _standby_rollback(self) -> None:
        """Two controllers registered, the standby restarted on the release before, then metadata.version
        raised to the latest production level: the standby's registration must hold it back; then the
        standby rolled forward again, and the upgrade goes through."""
        names, home = self.grammar.names, self.grammar.names.index(self.profile.name)
        if not home:
            return
        p = self.profile
        # the oldest level at which controllers register (3.7-IV0, KIP-919)
        level = next((v for v in self.grammar.bootstrap_levels() if v >= 15), p.mv_latest_production)
        self._fresh({**self.grammar.fresh_format(), "controllers": [{"id": 3000}, {"id": 3001}],
                     "release_version": p.mv_name(level)})
        for node in (3000, 3001):
            self.step({"op": "register", "role": "controller", "node": node, "software": p.name})
        self.step({"op": "register", "role": "controller", "node": 3001, "software": names[home - 1]})
        self._update(self.grammar.one_update(MV, p.mv_latest_production, "UPGRADE"))
        # rolled forward again (a controller's rolling upgrade): the upgrade goes through
        self.step({"op": "register", "role": "controller", "node": 3001, "software": p.name})
        self._update(self.grammar.one_update(MV, p.mv_latest_production, "UPGRADE"))

    def _roll_old_bootstrap(self, *, upgrade: bool) -> None:
        """A cluster bootstrapped at the oldest metadata.version it can be, a broker of the release
        before (or this one) joins, then restarts on the next release (a rolling upgrade), or the
        other way round (a rollback)."""
        names, home = self.grammar.names, self.grammar.names.index(self.profile.name)
        old, new = (names[home - 1], names[home]) if home else (names[0], names[1])
        if not upgrade:
            old, new = new, old
        cmd = {**self.grammar.fresh_format(),
               "release_version": self.profile.mv_name(self.grammar.bootstrap_levels()[0])}
        self._fresh(cmd)
        node = self.grammar.broker_ids[0]
        for software in (old, new):
            if self.step({"op": "register", "role": "broker", "node": node, "software": software})["error"] != "NONE":
                break
        self.observe()

    def _reregister(self, *, same_process: bool) -> None:
        """A broker registers, the log moves on (another broker registers), then the first registers
        again from the same process (its incarnation) or a new one."""
        b1, b2 = self.grammar.broker_ids[:2]
        self._fresh(self.grammar.fresh_format())
        first = {"op": "register", "role": "broker", "node": b1, "software": self.profile.name}
        if self.step(first)["error"] != "NONE":
            return
        self.step({**first, "node": b2})
        again = dict(first)
        if same_process:
            again["incarnation"] = self.ref.image.brokers[b1]["incarnation"]
        self.step(again)
        self.observe()

    # -- read-only probes -------------------------------------------------------------------------
    @precondition(lambda self: self.can("api_versions"))
    @rule(data=st.data())
    def api_versions(self, data: st.DataObject) -> None:
        cmd = self.grammar.api_versions(DrawChooser(data), self.ref)
        out = self.step(cmd)
        version = cmd.get("version", 4)
        node = self.ref.node(cmd.get("node"))
        omits = node is not None and node.profile.behaviour["min0_ranges_below_v4"] == "omit"  # 3.9.0+ (KAFKA-17492)
        if omits and out["error"] == "NONE" and version < 4 and out.get("supported") \
                and any(r[0] == 0 for r in out["supported"].values()):
            raise MIN0_API_VERSIONS.violated(f"ApiVersions v{version} carried a min-0 range: {out['supported']}")

    @precondition(lambda self: self.can("version_mapping") and self.can("feature_dependencies"))
    @rule(data=st.data())
    def tools(self, data: st.DataObject) -> None:
        ch = DrawChooser(data)
        self.step(self.grammar.version_mapping(ch))
        self.step(self.grammar.feature_dependencies(ch))

    # -- KIP-915 ------------------------------------------------------------------------------------
    @precondition(lambda self: self.can("load_coordinator"))
    @rule(data=st.data())
    def load_coordinator(self, data: st.DataObject) -> None:
        from reference_impl.coordinator import load, project

        cmd, writer, raw = self.grammar.load_coordinator(DrawChooser(data), self.ref)
        out = self.step(cmd)
        if out["error"] != "NONE":
            return
        # Invariant 10: what the older software knows equals the newer software's view, projected.
        newer = load(writer, cmd["coordinator"], raw)
        node = self.ref.node(cmd["node"]) if cmd.get("node") is not None else None
        reader = node.profile.name if node is not None else self.ref.active_profile.name
        if newer.ok and _newer_or_same(writer, reader):
            projected = project(newer.state, cmd["coordinator"], reader)
            if out["state"] != projected:
                raise PROJECTION.violated("older loader state != projection of newer state")


@contextlib.contextmanager
def _collector_ignoring_what_lives_now() -> Iterator[None]:
    """gc.freeze for the run: what is alive when it starts (modules, the test session's objects)
    outlives it, so the cyclic collector need not walk it again every few thousand allocations;
    unfrozen after, so nothing stays uncollectable."""
    if gc.get_freeze_count():  # someone else froze: leave their arrangement alone
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _newer_or_same(writer: str, reader: str) -> bool:
    names = list(profile_names())
    return names.index(writer) >= names.index(reader)


def reached_in_ci(profile: str) -> dict[str, int]:
    """The state families (conformance.families) the ci run reaches on the reference of `profile`."""
    from .targets import make_target

    target = make_target(f"reference:{profile}")
    run = Run(target, profile, frozenset(target.hello()["capabilities"]))
    try:
        run.execute(hypothesis_profiles.DEFAULT)
    finally:
        target.close()
    return dict(run.coverage.states)
