"""Public surface of the reference: a Cluster that applies plain-data commands and returns
plain-data outcomes (the wire contract of the suite)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _controller as ctl
from . import _tools as tools
from ._catalog import DEFAULT_PROFILE, KRAFT, MV, Profile, load_profile
from ._cluster import Image, Node, image_records, node_from_spec, parse_ranges, replay, tree_copy
from ._command_schema import command_problem
from ._errors import ERROR_CODES, INVALID_COMMAND, InputError, KafkaError, ToolError
from ._features_tool import describe_lines

OPS = (
    "format", "restore_state", "version_mapping", "feature_dependencies", "register", "unregister",
    "update_features", "describe", "api_versions", "features_tool", "add_metadata", "snapshot",
    "load_snapshot", "load_coordinator", "state",
)

_OP_METHODS = {op: f"_op_{op}" for op in OPS}  # op -> handler method (looked up per call: subclasses, patches)
DEFAULT_CONTROLLER_ID = 3000
_REGISTRATION_RECORDS = {"RegisterBrokerRecord", "UnregisterBrokerRecord", "RegisterControllerRecord",
                         "UnregisterControllerRecord"}


class Cluster:
    """A KRaft cluster: controller quorum (static voters), brokers, metadata log and image.

    Subclasses may replace `update_context_cls` or override `register_broker` /
    `register_controller` (seeded mutants do, to break exactly one rule)."""

    update_context_cls = ctl.UpdateContext

    def __init__(self, profile: str | None = None, cluster_id: str = "kfc-cluster-0000000000"):
        self.default_software = load_profile(profile).name
        self.cluster_id = cluster_id
        self.controllers: dict[int, Node] = {
            DEFAULT_CONTROLLER_ID: Node(DEFAULT_CONTROLLER_ID, "controller", self.default_software)}
        self.voters: list[int] = [DEFAULT_CONTROLLER_ID]
        self.static_quorum = True  # controller.quorum.voters set; a dynamic quorum has no static voter list
        self.active_id = DEFAULT_CONTROLLER_ID
        self.nodes: dict[int, Node] = {}  # brokers that have run (registered at least once)
        self.log: list[dict[str, Any]] = []
        self.log_start = 0  # offset of log[0]: a state restored at a live cluster's offset starts there
        # A controller's ApiVersions epoch: the last offset of the last batch that changed the finalized
        # features (Kafka's FeaturesPublisher publishes only on a features delta); brokers report the
        # image's highest offset (KRaftMetadataCache.features), which `epoch` is.
        self.features_offset = -1
        self.image = Image()
        self.formatted = False
        self.latest_snapshot: dict[str, Any] | None = None
        self._registrations = 0
        self._support_key: tuple[Any, ...] | None = None
        self._support: dict[str, tuple[int, int] | None] = {}

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def active_profile(self) -> Profile:
        return self.controllers[self.active_id].profile

    @property
    def epoch(self) -> int:
        return self.log_start + len(self.log) - 1

    def append(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Append one batch (committed atomically, published to the nodes' images together)."""
        out = []
        features = False
        for r in records:
            r = {**r, "offset": self.log_start + len(self.log)}
            replay(self.image, r)
            self.log.append(r)
            out.append(r)
            if r["type"] in _REGISTRATION_RECORDS:
                self._registrations += 1
            features = features or r["type"] == "FeatureLevelRecord"
        if features:
            self.features_offset = self.epoch
        # A committed batch means the active controller knows its high watermark: its MetadataLoader
        # publishes the whole image, features included (KIP584-API-05).
        self.controllers[self.active_id].caught_up = True
        return out

    def node_epoch(self, node: Node) -> int:
        """The FinalizedFeaturesEpoch `node` answers ApiVersions with."""
        return self.features_offset if node.role == "controller" else self.epoch

    def support_bounds(self, name: str) -> tuple[int, int] | None:
        """Intersection of every range UpdateFeatures checks for `name` (None: the slow path must
        run, e.g. a static voter has not registered).  Memoised until registrations change."""
        img = self.image
        key = (self._registrations, img.metadata_version >= 15, self.active_id, self.static_quorum)
        if key != self._support_key:
            self._support_key, self._support = key, {}
        if name in self._support:
            return self._support[name]
        ranges = [self.controllers[self.active_id].ranges()] + [b["features"] for b in img.brokers.values()]
        if key[1]:
            ranges += [c["features"] for cid, c in img.controllers.items() if cid != self.active_id]
            if self.static_quorum and any(v != self.active_id and v not in img.controllers for v in self.voters):
                self._support[name] = None
                return None
        lo, hi = 0, 32767
        for r in ranges:
            a, b = r.get(name, (0, 0))
            lo, hi = max(lo, a), min(hi, b)
        self._support[name] = bounds = (lo, hi) if lo <= hi else None
        return bounds

    def ok(self, out: dict[str, Any]) -> dict[str, Any]:
        out.update(error="NONE", error_code=0, message=None, rule=None)
        return out

    def err(self, out: dict[str, Any], error: str, message: str | None, rule: str) -> dict[str, Any]:
        out.update(error=error, error_code=ERROR_CODES.get(error), message=message, rule=rule)
        return out

    def invalid(self, out: dict[str, Any], message: str) -> dict[str, Any]:
        return self.err(out, INVALID_COMMAND, message, "CMD-01")

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        """Apply one command.  Bad input is an outcome: an unknown op or a malformed command
        (fixtures/schema/command.schema.json) is INVALID_COMMAND, and so is an InputError (a
        well-formed command naming what cannot be, e.g. an unknown profile).  Any other exception is
        a bug of the reference and propagates: it must never become an expected outcome."""
        op = command.get("op") if isinstance(command, dict) else None
        method = _OP_METHODS.get(op) if isinstance(op, str) else None
        if method is None:
            return self.invalid({"op": op}, f"unknown op {op!r}; known ops: {', '.join(OPS)}")
        problem = command_problem(command["op"], command)  # op is a str here: it named a handler
        if problem is not None:
            return self.invalid({"op": op}, problem)
        handler: Callable[[dict[str, Any]], dict[str, Any]] = getattr(self, method)  # a subclass may override it
        try:
            return handler(command)
        except ToolError as e:
            # A tool prints its stdout lines, then the error on stderr (the message of what it threw).
            out = self.err({"op": op}, e.error, e.message, e.rule)
            if e.lines:
                out["lines"] = list(e.lines)
            out["stderr"] = [e.message]
            return out
        except KafkaError as e:
            return self.err({"op": op}, e.error, e.message, e.rule)
        except InputError as e:
            return self.invalid({"op": op}, str(e))

    def tool_profile(self, cmd: dict[str, Any]) -> Profile:
        return load_profile(cmd["profile"]) if cmd.get("profile") else self.active_profile

    def node(self, node_id: Any) -> Node | None:
        if node_id in self.controllers:
            return self.controllers[node_id]
        return self.nodes.get(node_id)

    # -- ops --------------------------------------------------------------------------------
    def _op_format(self, cmd: dict[str, Any]) -> dict[str, Any]:
        specs = cmd.get("controllers") or [{"id": DEFAULT_CONTROLLER_ID}]
        # kafka-storage reads unstable.feature.versions.enable from the node's own configuration, so the
        # formatted controllers run with it (StorageTool.scala:125@4.1.1); a spec may say otherwise.
        unstable = bool(cmd.get("unstable", False))
        controllers = [node_from_spec({"unstable": unstable, **s}, "controller", cmd.get("software", self.default_software))
                       for s in specs]
        p = load_profile(cmd["profile"]) if cmd.get("profile") else controllers[0].profile
        out: dict[str, Any] = {"op": "format", "profile": p.name}
        mv, levels, dynamic = tools.format_levels(p, cmd)
        records = tools.bootstrap_records(mv, levels)
        self.controllers = {n.id: n for n in controllers}
        self.voters = [n.id for n in controllers]
        self.static_quorum = not dynamic
        self.active_id = controllers[0].id
        self.nodes = {}
        self.log, self.log_start = [], 0
        self.image = Image()
        self._registrations += 1
        self.image.kraft_version = levels.get(KRAFT, 0)
        self.formatted = True
        out["records"] = self.append(records)
        out["metadata_version"] = {"level": mv.level, "name": mv.name}
        out["levels"] = dict(sorted(levels.items()))
        out["dynamic_quorum"] = dynamic
        out["lines"] = [f"{MV}={mv.level} ({mv.name})"] + [f"{n}={lv}" for n, lv in levels.items()]
        return self.ok(out)

    def _op_restore_state(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Start from a stated state -- one captured from a running cluster -- without tool or
        registration checks: a real cluster can be where no command sequence leads (an old or fenced
        broker whose range misses a finalized level, a node that omits a feature, static voters at
        kraft.version 1 after an upgrade).  Records: metadata.version, the other finalized levels,
        then the registered controllers and brokers; `epoch` pads the log with NoOpRecords up to that
        offset, `end_offset` instead places the records so the last one sits at that offset."""
        specs = cmd.get("controllers") or [{"id": DEFAULT_CONTROLLER_ID}]
        controllers = [node_from_spec(s, "controller", self.default_software) for s in specs]
        ids = [n.id for n in controllers]
        if len(set(ids)) != len(ids):
            raise InputError(f"restore_state: controller ids repeat: {ids}")
        active = cmd.get("active_controller", ids[0])
        if active not in ids:
            raise InputError(f"restore_state: active_controller {active} is not among the controllers {ids}")
        by_id = {n.id: n for n in controllers}
        mv = int(cmd["metadata_version"])
        # 0: the cluster finalizes no metadata.version (an implementation without it); it stays unlisted.
        if mv != 0 and by_id[active].profile.mv(mv) is None:
            raise InputError(f"restore_state: metadata.version {mv} is unknown to {by_id[active].profile.name}")
        voters = list(cmd.get("voters", ids))
        strangers = sorted(set(voters) - set(ids))
        if strangers:
            raise InputError(f"restore_state: voter(s) {strangers} are not among the controllers {ids}")
        brokers = [node_from_spec(s, "broker", self.default_software) for s in cmd.get("brokers") or []]
        clash = sorted({b.id for b in brokers} & set(ids))
        if clash or len({b.id for b in brokers}) != len(brokers):
            raise InputError(f"restore_state: broker ids repeat or name a controller: {[b.id for b in brokers]}")
        if "epoch" in cmd and "end_offset" in cmd:
            raise InputError("restore_state: give epoch (pad with NoOpRecords) or end_offset, not both")
        late = [s["id"] for s in cmd.get("brokers") or [] if s.get("caught_up") is False]
        if late:
            # BrokerServer enables request processing only after its initial catch-up
            # (BrokerServer.scala:602,638@4.4): a broker that has not caught up answers nothing.
            raise InputError(f"restore_state: broker(s) {late} cannot be restored as not caught up: a broker "
                             "serves no request before it has caught up with the metadata log")
        kraft = int(cmd.get("kraft_version", 0))
        self.controllers, self.voters, self.active_id = by_id, voters, active
        self.nodes = {b.id: b for b in brokers}
        self.log, self.log_start, self.image, self.formatted = [], 0, Image(), True
        self._registrations += 1
        self.image.kraft_version = kraft
        # A static quorum (controller.quorum.voters) may run kraft.version 1 after an upgrade (4.1+).
        self.static_quorum = not cmd.get("dynamic_quorum", bool(kraft))
        if cmd.get("cluster_id") is not None:
            self.cluster_id = str(cmd["cluster_id"])
        finalized = {str(k): int(v) for k, v in (cmd.get("finalized") or {}).items()}
        recs: list[dict[str, Any]] = [{"type": "FeatureLevelRecord", "name": MV, "level": mv}] if mv else []
        recs += [{"type": "FeatureLevelRecord", "name": n, "level": lv} for n, lv in sorted(finalized.items()) if lv]
        for spec, n in zip(specs, controllers, strict=True):
            if spec.get("registered", False):
                recs.append({"type": "RegisterControllerRecord", "controller_id": n.id, "incarnation": f"restored-c{n.id}",
                             "features": {k: list(v) for k, v in sorted(n.ranges().items())}})
        for b in brokers:
            recs.append({"type": "RegisterBrokerRecord", "broker_id": b.id, "incarnation": f"restored-{b.id}",
                         "features": {k: list(v) for k, v in sorted(b.ranges().items())}})
        recs += [{"type": "ConfigRecord", "resource": "cluster", "name": str(n)}
                 for n in sorted(cmd.get("cluster_configs") or [])]
        if "end_offset" in cmd:
            start = int(cmd["end_offset"]) - len(recs) + 1
            if start < 0:
                raise InputError(f"restore_state: end_offset {cmd['end_offset']} is below the {len(recs)} "
                                 f"record(s) this state needs")
            self.log_start = start
        else:
            pad = int(cmd.get("epoch", 0)) - len(recs) + 1
            recs += [{"type": "NoOpRecord"}] * max(0, pad)  # reach the captured epoch
        out = {"op": "restore_state", "records": self.append(recs)}
        for spec, n in zip(specs, controllers, strict=True):  # after the append: it is the state, not a new commit
            n.caught_up = spec.get("caught_up", True)
        for spec in cmd.get("brokers") or []:  # a restored broker runs unfenced unless its spec says fenced
            self.image.brokers[int(spec["id"])]["fenced"] = bool(spec.get("fenced", False))
        if cmd.get("features_offset") is not None:
            # A live cluster's controllers report where the finalized features last changed, which
            # NoOpRecords and registrations since have left behind.
            at = int(cmd["features_offset"])
            if not 0 <= at <= self.epoch:
                raise InputError(f"restore_state: features_offset {at} is not within the log (0-{self.epoch})")
            self.features_offset = at
        return self.ok(out)

    def _op_version_mapping(self, cmd: dict[str, Any]) -> dict[str, Any]:
        return self.ok({"op": "version_mapping", **tools.version_mapping(self.tool_profile(cmd), cmd)})

    def _op_feature_dependencies(self, cmd: dict[str, Any]) -> dict[str, Any]:
        return self.ok({"op": "feature_dependencies", **tools.feature_dependencies(self.tool_profile(cmd), cmd)})

    def _op_register(self, cmd: dict[str, Any]) -> dict[str, Any]:
        role = cmd.get("role", "broker")
        if role not in ("broker", "controller"):
            raise InputError(f"register: role must be broker or controller, not {role!r}")
        if not self.formatted:
            raise InputError("register: the cluster is not formatted yet (send format or restore_state first)")
        node_id = cmd.get("node")
        spec: dict[str, Any] = {"id": node_id}
        if cmd.get("ranges") is not None:
            spec["ranges"] = cmd["ranges"]
            if cmd.get("software"):
                spec["software"] = cmd["software"]  # explicit ranges; the rest of its behaviour is its release's
        else:
            prev = self.node(node_id)
            default = prev.software if prev is not None and prev.role == role else self.default_software
            spec["software"] = cmd.get("software") or default
            spec["unstable"] = cmd.get("unstable", False)
        if role == "broker" and node_id in self.controllers:
            raise InputError(f"register: node {node_id} is a controller")
        node = node_from_spec(spec, role, self.default_software)
        if role == "broker":
            return self.register_broker(cmd, node)
        return self.register_controller(cmd, node)

    def register_broker(self, cmd: dict[str, Any], node: Node) -> dict[str, Any]:
        return ctl.register_broker(self, cmd, node)

    def register_controller(self, cmd: dict[str, Any], node: Node) -> dict[str, Any]:
        return ctl.register_controller(self, cmd, node)

    def _op_unregister(self, cmd: dict[str, Any]) -> dict[str, Any]:
        node_id = cmd.get("node")
        if cmd.get("role", "broker") == "controller":
            if not self.formatted:
                raise InputError("unregister: the cluster is not formatted yet (send format or restore_state first)")
            return ctl.unregister_controller(self, cmd["node"])  # required and an integer (the schema)
        out: dict[str, Any] = {"op": "unregister", "node": node_id}
        if node_id not in self.image.brokers:
            # Before 4.1 ControllerApis.handleUnregisterBroker answers with the error code only; from
            # 4.1 UnregisterBrokerRequest.getErrorResponse carries the exception's message.
            text = (f"Broker ID {node_id} is not currently registered"
                    if self.active_profile.behaviour["unregister_error_message"] else None)
            return self.err(out, "BROKER_ID_NOT_REGISTERED", text, "KIP584-REG-05")
        out["records"] = self.append([{"type": "UnregisterBrokerRecord", "broker_id": node_id}])
        return self.ok(out)

    def _op_update_features(self, cmd: dict[str, Any]) -> dict[str, Any]:
        if not self.formatted:
            raise InputError("update_features: the cluster is not formatted yet")
        before, mv_before = self.features_offset, self.image.metadata_version
        out = ctl.update_features(self, cmd)
        # As the controller it went to reports it: moved only by a batch that changed features.
        out["epoch"] = self.features_offset
        out["epoch_before"] = before
        if self.active_profile.behaviour["kip1155"] and self.image.metadata_version < mv_before:
            # KIP-1155: replaying the downgrade record triggers a snapshot at the new version; what
            # that version cannot express is already gone (an unsafe downgrade removed it), so the
            # writer is told loss is allowed, as Kafka's image writer is after a downgrade.
            out["snapshot"] = self.latest_snapshot = self._op_snapshot({"allow_loss": True})["snapshot"]
        return out

    def finalized_view(self, p: Profile | None = None) -> dict[str, int]:
        """Finalized levels as nodes report them: MV plus non-zero levels (and the raft kraft.version)."""
        # A formatted cluster at metadata.version 0 was restored from one that finalizes none: unlisted.
        fin = {MV: self.image.metadata_version} if self.image.metadata_version or not self.formatted else {}
        fin.update({k: v for k, v in self.image.finalized.items() if v and k != KRAFT})
        if self.image.kraft_version:
            # Brokers report kraft.version from the raft layer, whatever FeatureLevelRecords say.
            fin[KRAFT] = self.image.kraft_version
        return dict(sorted(fin.items()))

    def _op_api_versions(self, cmd: dict[str, Any]) -> dict[str, Any]:
        node_id = cmd.get("node", self.active_id)
        out: dict[str, Any] = {"op": "api_versions", "node": node_id}
        node = self.node(node_id)
        if node is None or (node.role == "broker" and node_id not in self.image.brokers):
            return self.err(out, "NETWORK_EXCEPTION", f"Node {node_id} is not running in this cluster",
                            "KIP584-API-04")
        p = node.profile
        vmax = p.behaviour["api_versions_max_version"]
        version = cmd.get("version", vmax)
        out["version"] = version
        if not isinstance(version, int) or not 0 <= version <= vmax:
            return self.err(out, "UNSUPPORTED_VERSION", f"ApiVersions version {version} is not supported by node "
                            f"{node_id} ({p.name}: 0-{vmax})", "KIP584-API-03")
        if (version >= 5 and node.role == "broker" and cmd.get("cluster_id") is not None
                and (cmd["cluster_id"] != self.cluster_id or cmd.get("node_id", -1) != node_id)):
            # KIP-1242: KafkaApis.clusterIdOrNodeIdIsInvalid (the node id counts only beside a cluster id)
            return self.err(out, "REBOOTSTRAP_REQUIRED", "Client metadata is stale. The client should "
                            "rebootstrap to obtain new metadata.", "KIP1242-API-01")
        if version < 3:
            out.update(supported=None, finalized=None, epoch=None)  # features are v3+ tagged fields
            return self.ok(out)
        ranges = node.ranges()
        if version < 4 and p.behaviour["min0_ranges_below_v4"] == "omit":  # the node's release (KAFKA-17492, 3.9.0+)
            ranges = {k: v for k, v in ranges.items() if v[0] != 0}
        out["supported"] = {k: list(v) for k, v in sorted(ranges.items())}
        out["finalized"] = self.finalized_view(self.active_profile)
        if node.role == "controller" and not p.behaviour.get("controller_reports_kraft_version", True):
            # Before KAFKA-18920 (3.9.1, 4.0.0) a controller's ApiVersions carries its metadata image's features
            # as FeaturesPublisher publishes them, without the raft layer's kraft.version: only a kraft.version
            # FeatureLevelRecord's level (FeaturesDelta.replay keeps it, FeaturesDelta.java:67-76@3.9.0-rc3).
            out["finalized"].pop(KRAFT, None)
            if self.image.finalized.get(KRAFT):
                out["finalized"] = dict(sorted({**out["finalized"], KRAFT: self.image.finalized[KRAFT]}.items()))
        out["epoch"] = self.node_epoch(node)
        if not node.caught_up:
            out["finalized"], out["epoch"] = self.features_before_catch_up(node), -1
        return self.ok(out)

    def features_before_catch_up(self, node: Node) -> dict[str, int]:
        """A controller's finalized features while its metadata high watermark is unknown (FeaturesPublisher
        has published nothing; its epoch is -1).  4.4+ (KAFKA-19964): FinalizedFeatures.unknown(), none
        (FeaturesPublisher.java:33@4.4; ControllerServer.scala:162-173@4.4 adds no kraft.version to it).
        Before: FinalizedFeatures.fromKRaftVersion(MINIMUM_VERSION) -- 3.3-IV3 (7) in 4.x, MINIMUM_KRAFT_VERSION
        3.0-IV1 (1) in 3.x (FeaturesPublisher.java:36@4.3) -- plus the raft layer's kraft.version where the
        controller reports it (ControllerServer.scala:161-165@4.3, KAFKA-18920)."""
        p = node.profile
        if p.behaviour["features_before_catch_up"] == "unknown":
            return {}
        fin = {MV: p.mv_minimum}
        if p.behaviour.get("controller_reports_kraft_version", True) and self.image.kraft_version:
            fin[KRAFT] = self.image.kraft_version  # setFinalizedLevel: level 0 leaves it out
        return dict(sorted(fin.items()))

    def direct_to_controller_refusal(self, node_id: int) -> tuple[str, str] | None:
        """Why controller `node_id` refuses DescribeCluster (ControllerApis.handleDescribeCluster, the one
        controller RPC that checks metadata.version outside the QuorumController): UNSUPPORTED_VERSION with
        (message, rule), or None.  It reads the features its ApiVersions carries (KIP919-DESC-01)."""
        from ._cluster import CONTROLLER_REGISTRATION_MV

        node = self.controllers[node_id]
        mv = (self.features_before_catch_up(node) if not node.caught_up else self.finalized_view()).get(MV)
        if mv is None and not node.caught_up:
            # FinalizedFeatures.isUnknown (ControllerApis.scala:1089-1091@4.4, KAFKA-19964)
            text = "There is no finalized MetadataVersion, so direct-to-controller communication is not supported."
            return text, "KIP919-DESC-01"
        if mv is not None and mv < CONTROLLER_REGISTRATION_MV:
            return ("Direct-to-controller communication is not supported with the current MetadataVersion.",
                    "KIP919-DESC-01")
        return None

    def _op_describe(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Admin.describeFeatures / kafka-features describe, through ApiVersions to one node."""
        av = self._op_api_versions({**cmd, "op": "api_versions"})
        out = {**av, "op": "describe"}
        if av["error"] != "NONE" or av["supported"] is None:
            return out
        out["lines"] = describe_lines(self.active_profile, av["supported"], av["finalized"], av["epoch"])
        return out

    def _op_features_tool(self, cmd: dict[str, Any]) -> dict[str, Any]:
        from ._features_tool import features_tool

        return features_tool(self, cmd)

    def _op_add_metadata(self, cmd: dict[str, Any]) -> dict[str, Any]:
        return ctl.add_metadata(self, cmd)

    def _op_snapshot(self, cmd: dict[str, Any]) -> dict[str, Any]:
        p = self.active_profile
        level = int(cmd.get("metadata_version", self.image.metadata_version))
        out: dict[str, Any] = {"op": "snapshot", "metadata_version": level}
        if p.mv(level) is None:
            return self.invalid(out, f"snapshot: metadata.version {level} is unknown to {p.name}")
        from ._cluster import PAYLOAD_KINDS

        img = self.image
        lost = [pl for pl in img.payload if PAYLOAD_KINDS[pl["kind"]][1] > level]
        if lost and not cmd.get("allow_loss", False):
            return self.err(out, "INVALID_UPDATE_VERSION", f"A snapshot at {p.mv_name(level)} cannot express "
                            f"{len(lost)} record(s) of {', '.join(sorted({x['kind'] for x in lost}))}.", "SNAP-01")
        # The image as the snapshot writes it: image_records only reads it and copies what it takes,
        # so the live image's parts serve; what is lost is handed out as copies.
        image = Image(level, img.finalized, img.kraft_version, img.brokers, img.controllers,
                      [pl for pl in img.payload if pl not in lost], cluster_configs=img.cluster_configs)
        out["snapshot"] = {"metadata_version": level, "end_offset": self.epoch, "records": image_records(image),
                           "cluster_id": self.cluster_id}
        out["lost"] = tree_copy(lost)
        return self.ok(out)

    def _op_load_snapshot(self, cmd: dict[str, Any]) -> dict[str, Any]:
        snap = cmd["snapshot"]
        image = Image()
        for r in snap["records"]:
            replay(image, r)
        end = int(snap["end_offset"])
        self.image = image
        self._registrations += 1
        # Offsets before the snapshot are compacted away; keep the epoch where the snapshot ends.
        self.log = [{"type": "SnapshotMarker", "offset": i} for i in range(end + 1)]
        self.features_offset = end  # loading a snapshot publishes its whole image, features included
        self.formatted = True
        return self.ok({"op": "load_snapshot", "epoch": self.epoch})

    def _op_load_coordinator(self, cmd: dict[str, Any]) -> dict[str, Any]:
        from .coordinator import load_coordinator

        node = self.node(cmd.get("node")) if cmd.get("node") is not None else None
        profile = node.profile.name if node is not None else self.active_profile.name
        return load_coordinator(profile, cmd)

    def _op_state(self, cmd: dict[str, Any]) -> dict[str, Any]:
        img = self.image
        return self.ok({
            "op": "state", "profile": self.active_profile.name, "formatted": self.formatted,
            "metadata_version": img.metadata_version, "finalized": self.finalized_view(self.active_profile),
            "kraft_version": img.kraft_version, "epoch": self.epoch, "voters": list(self.voters),
            "active_controller": self.active_id,
            "brokers": {str(b): {k: list(v) for k, v in sorted(r["features"].items())}
                        for b, r in sorted(img.brokers.items())},
            "controllers": {str(c): {k: list(v) for k, v in sorted(r["features"].items())}
                            for c, r in sorted(img.controllers.items())},
            "payload": tree_copy(img.payload),
        })


def apply(cluster: Cluster, command: dict[str, Any]) -> dict[str, Any]:
    return cluster.apply(command)


__all__ = ["DEFAULT_PROFILE", "OPS", "Cluster", "apply", "describe_lines", "parse_ranges"]
