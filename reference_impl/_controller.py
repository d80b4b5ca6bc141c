"""The active controller's side: UpdateFeatures, broker/controller registration, payload records.

Everything here follows the *active controller's* profile; node-side behaviour (what a broker
sends, what ApiVersions shows) follows the node's own software.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._catalog import KRAFT, MV, UPGRADE_TYPES, Profile
from ._cluster import CONTROLLER_REGISTRATION_MV, PAYLOAD_KINDS, Node, Ranges
from ._javaorder import java_hashmap_order

if TYPE_CHECKING:
    from .api import Cluster

ELR = "eligible.leader.replicas.version"
FAIL_ALL_PREFIX = "The update failed for all features since the following feature had an error: "


class FeatureRejected(Exception):
    def __init__(self, message: str, rule: str, error: str = "INVALID_UPDATE_VERSION"):
        super().__init__(message)
        self.message = message
        self.rule = rule
        self.error = error


def supports(r: tuple[int, int] | None, level: int) -> bool:
    """A missing range is 0-0 (QuorumFeatures.DISABLED)."""
    return r[0] <= level <= r[1] if r is not None else level == 0


def range_reason(who: str, r: tuple[int, int] | None, level: int) -> str | None:
    """QuorumFeatures.reasonNotSupported: None when level lies in r (a missing range is 0-0)."""
    lo, hi = r if r is not None else (0, 0)
    if lo <= level <= hi:
        return None
    if hi == 0:
        return f"{who} does not support this feature."
    return f"{who} only supports versions {version_range(lo, hi)}"


def version_range(lo: int, hi: int) -> str:
    """VersionRange.toString: "3" for a single version, "26+" for an open-ended range."""
    if lo == hi:
        return str(lo)
    if hi == 32767:
        return f"{lo}+"
    return f"{lo}-{hi}"


class UpdateContext:
    """One UpdateFeatures request being validated against a fixed view of the cluster."""

    def __init__(self, cluster: Cluster, levels: dict[str, int], types: dict[str, int]):
        self.cluster = cluster
        self.profile: Profile = cluster.active_profile
        self.levels = levels
        self.types = types
        img = cluster.image
        # Every dependency check sees the whole batch (proposed = current + all requested).
        self.proposed: dict[str, int] = dict(img.finalized)
        self.proposed[MV] = img.metadata_version
        if self.profile.behaviour["kraft_version_update"] == "raft":
            self.proposed[KRAFT] = img.kraft_version
        self.proposed.update(levels)
        self.elr_config = False

    def current(self, name: str) -> int:
        img = self.cluster.image
        if name == MV:
            return img.metadata_version
        if name == KRAFT and self.profile.behaviour["kraft_version_update"] == "raft":
            return img.kraft_version
        return img.finalized.get(name, 0)

    def fail(self, name: str, level: int, reason: str, rule: str) -> FeatureRejected:
        return FeatureRejected(f"Invalid update version {level} for feature {name}. {reason}", rule)

    # The check order of FeatureControlManager.updateFeature.
    def check(self, name: str, level: int) -> list[dict[str, Any]]:
        utype = self.types.get(name, 1)
        if utype not in (1, 2, 3):
            raise self.fail(name, level, "The controller does not support the given upgrade type.", "KIP584-UPD-01")
        current = self.current(name)
        if level < 0:
            raise self.fail(name, level, "A feature version cannot be less than 0.", "KIP584-UPD-02")
        self.check_support(name, level)
        if level < current and utype == 1:
            raise self.fail(name, level, "Can't downgrade the version of this feature without setting the upgrade "
                            "type to either safe or unsafe downgrade.", "KIP584-UPD-05")
        if level > current and utype != 1:
            raise self.fail(name, level, "Can't downgrade to a newer version.", "KIP584-UPD-06")
        if name == MV:
            return self.check_metadata_version(level, current, utype)
        if name == KRAFT and self.profile.behaviour["kraft_version_update"] == "raft":
            return self.check_kraft_raft(level, current, utype)
        self.check_feature_level(name, level)
        rec: dict[str, Any] = {"type": "FeatureLevelRecord", "name": name, "level": level}
        if name == KRAFT and self.profile.behaviour["kraft_version_update"] == "ignored":
            rec["ignored_on_replay"] = True  # 4.0 writes it, and replay skips it (KAFKA-18979)
        return [rec]

    def check_kraft_raft(self, level: int, current: int, utype: int) -> list[dict[str, Any]]:
        """4.1+: kraft.version lives in the raft log; the controller only writes a NoOpRecord."""
        if utype != 1:
            if level != current:
                raise self.fail(KRAFT, level, "Can't downgrade the version of this feature.", "KIP1022-UPD-03")
            return []
        if level > current:
            for vid in self.cluster.voters:
                node = self.cluster.controllers.get(vid)
                if node is None:
                    continue
                lo, hi = node.ranges().get(KRAFT, (0, 0))
                if not lo <= level <= hi:
                    # An ApiException from the raft layer is returned as is, without the usual prefix.
                    raise FeatureRejected(f"Invalid upgrade of kraft.version to {level} because not all of the "
                                          "voters support it", "KIP584-UPD-03")
        return [{"type": "NoOpRecord", "kraft_version": max(level, current)}]

    def check_support(self, name: str, level: int) -> None:
        """QuorumFeatures.reasonNotSupported over the local controller, brokers, controllers, voters."""
        c = self.cluster
        bounds = c.support_bounds(name)
        if bounds is not None and bounds[0] <= level <= bounds[1]:
            return  # fast path: inside every node's range and every voter registered
        local = c.controllers[c.active_id].ranges()
        if not supports(local.get(name), level):
            reason = range_reason(f"Local controller {c.active_id}", local.get(name), level)
            raise self.fail(name, level, str(reason), "KIP584-UPD-03" if name in local else "KIP584-UPD-13")
        brokers = c.image.brokers
        for bid in c.image.broker_order:  # fenced brokers count too; the registrations' TimelineHashMap order
            r = brokers[bid]["features"].get(name)
            if not supports(r, level):
                raise self.fail(name, level, str(range_reason(f"Broker {bid}", r, level)), "KIP584-UPD-04")
        if c.image.metadata_version < CONTROLLER_REGISTRATION_MV:
            return  # below 3.7-IV0 other controllers cannot be verified
        controllers = c.image.controllers
        for cid in c.image.controller_order:
            if cid != c.active_id:
                r = controllers[cid]["features"].get(name)
                if not supports(r, level):
                    raise self.fail(name, level, str(range_reason(f"Controller {cid}", r, level)), "KIP919-UPD-01")
        if c.static_quorum:  # a dynamic quorum has no static voter list to check
            for vid in c.voters:
                if vid != c.active_id and vid not in controllers:
                    raise self.fail(name, level, f"controller {vid} has not registered, and may not support this "
                                    "feature", "KIP919-UPD-02")

    def check_feature_level(self, name: str, level: int) -> None:
        """4.x: Feature.featureFromName, fromFeatureLevel(n, true), validateVersion. 3.x checks none."""
        p = self.profile
        if not p.behaviour["update_checks_dependencies"]:
            return
        feat = p.features.get(name)
        if feat is None:
            raise self.fail(name, level, f"Feature {name} not found.", "KIP584-UPD-13")
        if level not in feat.levels:
            raise self.fail(name, level, f"No feature:{name} with feature level {level}", "KIP584-UPD-03")
        reason = dependency_reason(p, name, level, self.proposed)
        if reason:
            raise self.fail(name, level, reason, "KIP1022-UPD-01")

    def check_metadata_version(self, level: int, current: int, utype: int) -> list[dict[str, Any]]:
        p = self.profile
        three = p.behaviour["mv_messages"] == "3x"
        if p.mv(level) is None:
            if three:
                raise self.fail_mv(level, "Unknown metadata.version.", "KIP778-MV-01")
            raise self.fail_mv(level, f"Valid versions are from {p.mv_minimum} to {p.mv_latest_testing}.",
                               "KIP778-MV-01")
        if three and level < p.mv_minimum_bootstrap:
            raise self.fail_mv(level, f"Unable to set a metadata.version less than {p.mv_name(p.mv_minimum_bootstrap)}",
                               "KIP778-MV-02")
        if level < current:
            if p.behaviour["kip1155"]:
                return []  # KIP-1155 downgrades are validated as a whole by the caller
            if p.metadata_changed(level, current):
                unsafe = utype == 3
                text = ("Unsafe metadata downgrade is not supported in this version." if unsafe else
                        "Refusing to perform the requested downgrade because it might delete metadata information.")
                raise self.fail_mv_downgrade(level, current, text, "KIP778-MV-05" if unsafe else "KIP778-MV-04")
        return [{"type": "FeatureLevelRecord", "name": MV, "level": level}]

    def fail_mv(self, level: int, text: str, rule: str) -> FeatureRejected:
        return FeatureRejected(f"Invalid metadata.version {level}. {text}", rule)

    def fail_mv_downgrade(self, level: int, current: int, text: str, rule: str) -> FeatureRejected:
        if self.profile.behaviour["mv_downgrade_message"] == "unsupported":
            return FeatureRejected(f"Unsupported metadata.version downgrade from {current} to {level}. {text}", rule)
        return self.fail_mv(level, text, rule)


def dependency_reason(p: Profile, name: str, level: int, proposed: dict[str, int]) -> str | None:
    """Features.validateVersion: every non-MV level >= 1 needs a minimum metadata.version, then its
    declared dependencies must hold in the proposed levels."""
    if level >= 1:
        mv = proposed.get(MV, 0)
        floor = p.min_mv_for_features()
        if mv < floor:
            return f"{name} could not be set to {level} because it depends on metadata.version={floor} ({p.mv_name(floor)})"
    feat = p.features.get(name)
    deps = feat.levels[level].dependencies if feat and level in feat.levels else {}
    for dep, need in deps.items():
        if proposed.get(dep, 0) < need:
            return f"{name} could not be set to {level} because it depends on {dep} level {need}"
    return None


def order_features(p: Profile, names: list[str]) -> list[str]:
    if p.behaviour["update_error_order"] == "sorted":
        return sorted(names)
    return java_hashmap_order(names)


def kip1155_downgrade(ctx: UpdateContext, level: int, utype: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """KIP-1155 checks for a metadata.version downgrade; returns (cleanup records, lost data)."""
    c, p = ctx.cluster, ctx.profile
    capable = p.behaviour["kip1155_downgrade_capable_level"]
    cap_name = p.mv_name(capable)
    floor = p.behaviour["kip1155_minimum_downgrade_level"]
    if level < floor:
        raise ctx.fail(MV, level, f"Unable to downgrade metadata.version below {p.mv_name(floor)}.", "KIP1155-DG-02")
    who: list[tuple[str, Ranges]] = [(f"Local controller {c.active_id}", c.controllers[c.active_id].ranges())]
    who += [(f"Controller {cid}", c.image.controllers[cid]["features"]) for cid in sorted(c.image.controllers)
            if cid != c.active_id]
    who += [(f"Broker {bid}", c.image.brokers[bid]["features"]) for bid in sorted(c.image.brokers)]
    for label, ranges in who:
        r = ranges.get(MV)
        if r is None or r[1] < capable:
            raise ctx.fail(MV, level, f"{label} does not support metadata.version downgrade: it does not support "
                           f"metadata.version {capable} ({cap_name}).", "KIP1155-DG-01")
    proposed = dict(ctx.proposed)
    proposed[MV] = level
    for name in sorted(proposed):
        if name == MV or proposed[name] == 0:
            continue
        reason = dependency_reason(p, name, proposed[name], proposed)
        if reason:
            raise ctx.fail(MV, level, f"The downgrade would leave an invalid feature level: {reason}", "KIP1155-DG-03")
    lost = [pl for pl in c.image.payload if PAYLOAD_KINDS[pl["kind"]][1] > level]
    if lost and utype == 2:
        kinds = sorted({pl["kind"] for pl in lost})
        raise ctx.fail(MV, level, "Refusing to perform the requested downgrade because it would lose metadata: "
                       f"{len(lost)} record(s) of {', '.join(kinds)} cannot be expressed at {p.mv_name(level)}.",
                       "KIP1155-DG-06")
    cleanup = [{"type": "RemovePayloadRecord", "id": pl["id"], "kind": pl["kind"]} for pl in lost]
    return cleanup, [dict(pl) for pl in lost]


def update_features(c: Cluster, cmd: dict[str, Any]) -> dict[str, Any]:
    p = c.active_profile
    version = cmd.get("version", p.behaviour["update_features_max_version"])
    out: dict[str, Any] = {"op": "update_features", "version": version}
    node = cmd.get("node")
    standby = isinstance(node, int) and node in c.controllers and node != c.active_id
    # The receiving node's network layer refuses a version it does not support before any handler
    # looks at the request, so a standby controller answers an unsupported version so too.
    q = c.controllers[node].profile if standby and isinstance(node, int) else p
    if not isinstance(version, int) or not 0 <= version <= q.behaviour["update_features_max_version"]:
        return c.err(out, "UNSUPPORTED_VERSION",
                     f"UpdateFeatures version {version} is not supported by {q.name} "
                     f"(0-{q.behaviour['update_features_max_version']})", "KIP584-UPD-11")
    if standby:
        return c.err(out, "NOT_CONTROLLER", "This is not the correct controller for this cluster.", "KIP584-UPD-12")
    levels: dict[str, int] = {}
    types: dict[str, int] = {}
    for u in cmd.get("updates", []):
        name = u["feature"]
        levels[name] = u["level"]
        if version == 0:
            # v0 carries AllowDowngrade only; the KRaft controller reads the raw UpgradeType field,
            # which defaults to UPGRADE (facts §3.1).
            types[name] = 1
        else:
            t = u.get("upgrade_type", "UPGRADE")
            types[name] = UPGRADE_TYPES.get(t, 0) if isinstance(t, str) else int(t)
    validate_only = bool(cmd.get("validate_only", False)) and version >= 1
    out["validate_only"] = validate_only
    ctx = c.update_context_cls(c, levels, types)
    per_feature: dict[str, tuple[str, str | None, str | None]] = {}
    emitted: dict[str, list[dict[str, Any]]] = {}
    cleanup: list[dict[str, Any]] = []
    first_error: FeatureRejected | None = None
    for name in order_features(p, list(levels)):
        try:
            recs = ctx.check(name, levels[name])
            if name == MV and p.behaviour["kip1155"] and levels[name] < ctx.current(MV):
                cleanup, out["lost"] = kip1155_downgrade(ctx, levels[name], types[name])
                recs = [{"type": "FeatureLevelRecord", "name": MV, "level": levels[name]}]
            emitted[name] = recs
            per_feature[name] = ("NONE", None, None)
        except FeatureRejected as e:
            per_feature[name] = (e.error, e.message, e.rule)
            first_error = first_error or e
            if p.behaviour["update_atomic"]:
                break
    if first_error is not None and p.behaviour["update_atomic"]:
        out["records"] = []
        return c.err(out, first_error.error, FAIL_ALL_PREFIX + first_error.message, first_error.rule)
    # 3.x writes the features that passed even when another failed (controller-notes §1.4).
    records = cleanup + [r for n, recs in emitted.items() if not (n == MV and p.behaviour["kip1155"]) for r in recs]
    if p.behaviour["kip1155"]:
        records += emitted.get(MV, [])  # KIP-1155: the metadata.version record goes last
    if (records and p.behaviour["elr_config_records"] and levels.get(ELR, 0) > 0
            and "min.insync.replicas" not in c.image.cluster_configs):
        # 4.x ConfigurationControlManager.maybeGenerateElrSafetyRecords prepends the cluster-level
        # min.insync.replicas record unless the cluster config already has it (clusterConfig().containsKey).
        records.insert(0, {"type": "ConfigRecord", "resource": "cluster", "name": "min.insync.replicas"})
    out["records"] = c.append([] if validate_only else records)
    if version <= 1:
        if p.behaviour["update_success_message"] == "null":  # 3.x: every feature, by name, null on success
            out["results"] = {n: {"error": r[0], "message": r[1], **({"rule": r[2]} if r[2] else {})}
                              for n, r in sorted(per_feature.items())}
        else:  # 4.x: success only, request order, message "NONE"
            out["results"] = {n: {"error": "NONE", "message": "NONE"} for n in levels}
    if first_error is not None and version >= 2:
        return c.err(out, first_error.error, FAIL_ALL_PREFIX + first_error.message, first_error.rule)
    return c.ok(out)


# -- registration ------------------------------------------------------------------------------

def sent_ranges(node: Node, version: int) -> Ranges:
    """What the node's software puts in a BrokerRegistration request of this version."""
    ranges = node.ranges()
    # KAFKA-17492 (3.9.0+): below v4 a broker leaves out ranges with min 0; 3.7/3.8 send every one
    # (BrokerRegistrationRequest.build, 3.7.0:47-49 vs 3.9.0:47-57).  Explicit ranges follow the
    # node's software too.
    omit = node.profile.behaviour["min0_ranges_below_v4"] == "omit"
    if version < 4 and omit:
        ranges = {k: v for k, v in ranges.items() if v[0] != 0}
    return ranges


def register_broker(c: Cluster, cmd: dict[str, Any], node: Node) -> dict[str, Any]:
    """ClusterControlManager.registerBroker, in its release's check order (controller-notes §4)."""
    p = c.active_profile
    out: dict[str, Any] = {"op": "register", "role": "broker", "node": node.id}
    vmax = min(p.behaviour["broker_registration_max_version"], node.profile.behaviour["broker_registration_max_version"])
    version = cmd.get("version", vmax)
    out["version"] = version
    if not isinstance(version, int) or not 0 <= version <= p.behaviour["broker_registration_max_version"]:
        return c.err(out, "UNSUPPORTED_VERSION", f"BrokerRegistration version {version} is not supported by "
                     f"{p.name} (0-{p.behaviour['broker_registration_max_version']})", "KIP584-REG-06")
    cluster_id = cmd.get("cluster_id", c.cluster_id)
    if cluster_id != c.cluster_id:
        return c.err(out, "INCONSISTENT_CLUSTER_ID",
                     f"Expected cluster ID {c.cluster_id}, but got cluster ID {cluster_id}", "KIP584-REG-03")
    incarnation = str(cmd.get("incarnation") or f"{node.id}-{len(c.log)}")
    existing = c.image.brokers.get(node.id)
    # 3.x: a fenced broker has no valid session (BrokerHeartbeatManager.hasValidSession, 3.7.0-3.9.2); 4.x
    # asks only for a recent contact (BrokerHeartbeatTracker.hasValidSession).
    alive = cmd.get("previous_session_alive") and (p.behaviour["fenced_broker_has_session"]
                                                   or not (existing or {}).get("fenced", True))
    if existing and alive and existing["incarnation"] != incarnation:
        text = "Another broker is registered with that broker id."
        if p.behaviour["duplicate_registration_hint"]:
            text += (" If the broker was recently restarted this should self-resolve once the heartbeat manager "
                     "expires the broker's session.")
        return c.err(out, "DUPLICATE_BROKER_REGISTRATION", text, "KIP584-REG-04")
    jbod = p.mv_by_name("3.7-IV2")
    if version < 2 and jbod is not None and c.image.metadata_version >= jbod.level:
        # LogDirs is a v2+ field: ClusterControlManager checks directories before features (3.7.0+).
        return c.err(out, "INVALID_REGISTRATION", "No directories specified in request", "KIP584-REG-08")
    sent = sent_ranges(node, version)
    out["sent_features"] = {k: list(v) for k, v in sorted(sent.items())}
    style = p.behaviour["registration_feature_check"]
    finalized = dict(c.image.finalized)
    finalized[MV] = c.image.metadata_version
    if style in ("3.9", "4x"):
        # The controller adds the raft layer's kraft.version (3.9 overwrites a FeatureLevelRecord's value).
        finalized.pop(KRAFT, None)
        if c.image.kraft_version or style == "3.9":
            finalized[KRAFT] = c.image.kraft_version
    for name, (lo, hi) in sorted(sent.items()):
        if name not in finalized and style == "3.7":
            continue  # 3.7 only logs a warning for a feature the controller has not finalized
        level = finalized.get(name, 0)
        if not lo <= level <= hi:
            return c.err(out, "UNSUPPORTED_VERSION", unable_to_register(style, name, level, lo, hi), "KIP584-REG-01")
    if MV not in sent:
        if p.behaviour["registration_requires_metadata_version"]:
            return c.err(out, "INVALID_REGISTRATION", "Request features do not contain 'metadata.version'",
                         "KIP1022-REG-02")
        if finalized[MV] != 1:  # 3.x assumes the broker supports MINIMUM_KRAFT_VERSION only
            return c.err(out, "UNSUPPORTED_VERSION", unable_to_register(style, MV, finalized[MV], 1, 1),
                         "KIP584-REG-07")
    if style in ("3.9", "4x"):
        for name in java_hashmap_order(list(finalized)):  # the controller walks its HashMap
            level = finalized[name]
            if name not in sent and name != MV and level != 0:
                return c.err(out, "UNSUPPORTED_VERSION", unable_to_register(style, name, level, 0, 0),
                             "KIP584-REG-02")
    stored = dict(sent)
    if MV not in stored:
        stored[MV] = (1, 1)
    # 3.9+ keeps the broker epoch when the same incarnation registers again (an amend).
    keep_epoch = existing is not None and existing["incarnation"] == incarnation and style in ("3.9", "4x")
    rec = {"type": "RegisterBrokerRecord", "broker_id": node.id, "incarnation": incarnation,
           "features": {k: list(v) for k, v in sorted(stored.items())}}
    c.nodes[node.id] = node
    if keep_epoch and existing is not None:
        rec["epoch"] = existing["epoch"]
    appended = c.append([rec])
    out["records"] = appended
    out["broker_epoch"] = c.image.brokers[node.id]["epoch"]
    return c.ok(out)


def unable_to_register(style: str, name: str, level: int, lo: int, hi: int) -> str:
    if style in ("3.7", "3.8"):
        return (f"Unable to register because the broker does not support version {level} of {name}. "
                f"It wants a version between {lo} and {hi}, inclusive.")
    return (f"Unable to register because the broker does not support finalized version {level} of {name}. "
            f"The broker wants a version between {lo} and {hi}, inclusive.")


def register_controller(c: Cluster, cmd: dict[str, Any], node: Node) -> dict[str, Any]:
    out: dict[str, Any] = {"op": "register", "role": "controller", "node": node.id}
    if c.image.metadata_version < CONTROLLER_REGISTRATION_MV:
        return c.err(out, "UNSUPPORTED_VERSION",
                     "The current MetadataVersion is too old to support controller registrations.", "KIP919-CREG-01")
    # A restarted controller must be able to replay the log (FeatureControlManager.replay throws).
    ranges = node.ranges()
    for name, level in [(MV, c.image.metadata_version), *c.image.finalized.items()]:
        if not supports(ranges.get(name), level):
            # FeatureControlManager.replay's own words (FeatureControlManager.java:434-437@4.1.1; the same in
            # 3.7-4.2), as the kafka-jvm harness answers; a missing range is QuorumFeatures.DISABLED (0).
            lo, hi = ranges.get(name, (0, 0))
            return c.err(out, "UNKNOWN_SERVER_ERROR", f"Tried to apply FeatureLevelRecord FeatureLevelRecord(name="
                         f"'{name}', featureLevel={level}), but this controller only supports versions "
                         f"{version_range(lo, hi)}", "KIP584-REPLAY-01")
    incarnation = cmd.get("incarnation") or f"c{node.id}-{len(c.log)}"
    rec = {"type": "RegisterControllerRecord", "controller_id": node.id, "incarnation": incarnation,
           "features": {k: list(v) for k, v in sorted(ranges.items())}}
    c.controllers[node.id] = node
    out["records"] = c.append([rec])
    return c.ok(out)


def unregister_controller(c: Cluster, node_id: int) -> dict[str, Any]:
    """UnregisterController (KIP-1312, API key 94, 4.4+): QuorumController.unregisterController, then
    ClusterControlManager.unregisterController (4.4.0), in their order of checks."""
    out: dict[str, Any] = {"op": "unregister", "role": "controller", "node": node_id}
    p = c.active_profile
    need = p.behaviour.get("unregister_controller_metadata_version")
    if need is None:
        return c.err(out, "UNSUPPORTED_VERSION", f"UnregisterController (API key 94) is not supported by {p.name}",
                     "KIP1312-UNREG-01")
    if node_id == c.active_id:
        return c.err(out, "INVALID_REQUEST", "Controller cannot unregister itself while it is active.", "KIP1312-UNREG-02")
    if c.image.metadata_version < need:
        return c.err(out, "UNSUPPORTED_VERSION",
                     "The current MetadataVersion is too old to support controller unregistration.", "KIP1312-UNREG-03")
    if node_id not in c.image.controllers:
        return c.err(out, "CONTROLLER_ID_NOT_REGISTERED", f"Controller ID {node_id} is not currently registered.",
                     "KIP1312-UNREG-04")
    # Only the registration goes: the node keeps running (and a static voter that has not registered
    # holds updates back again, KIP919-UPD-02).
    out["records"] = c.append([{"type": "UnregisterControllerRecord", "controller_id": node_id}])
    return c.ok(out)


def add_metadata(c: Cluster, cmd: dict[str, Any]) -> dict[str, Any]:
    kind = cmd.get("kind")
    out: dict[str, Any] = {"op": "add_metadata", "kind": kind}
    if kind not in PAYLOAD_KINDS:
        return c.invalid(out, f"unknown payload kind {kind!r}; known: {', '.join(PAYLOAD_KINDS)}")
    _, need, label = PAYLOAD_KINDS[kind]
    p = c.active_profile
    if c.image.metadata_version < need:
        return c.err(out, "UNSUPPORTED_VERSION", f"{label} are only supported in metadata.version {p.mv_name(need)} "
                     f"or later.", "KIP778-PAY-01")
    rec = {"type": "PayloadRecord", "kind": kind, "id": f"{kind}-{len(c.log)}"}
    out["records"] = c.append([rec])
    return c.ok(out)

