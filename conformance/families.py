"""State families: kinds of cluster history a release can go through (issue 11, item 9), recognised
step by step from the command, the reference's outcome and the reference cluster around it.  The
stateful model's coverage records which it reached, so the ci run can be held to reaching, on every
profile, each family that exists there (`exists`), and docs/state-families.md shows the matrix."""

from __future__ import annotations

from typing import Any

from reference_impl import KRAFT, MV

FAMILIES: dict[str, str] = {
    "static-quorum": "a cluster formatted with static voters (controller.quorum.voters)",
    "dynamic-quorum": "a cluster formatted with a dynamic quorum (--standalone / --initial-controllers, KIP-853)",
    "kraft1-read-controller": "kraft.version 1 read back from a controller's ApiVersions",
    "kraft1-read-broker": "kraft.version 1 read back from a broker's ApiVersions",
    "broker-rolling-upgrade": "a registered broker restarts on newer software",
    "broker-rollback": "a registered broker restarts on older software",
    "controller-rolling-upgrade": "a controller re-registers on newer software",
    "controller-rollback": "a controller re-registers on older software",
    "standby-below-finalized": "a standby controller rolled back below the finalized metadata.version is refused",
    "old-bootstrap-rolled": "a cluster bootstrapped below the latest production metadata.version gets a node on newer software",
    "mv-upgrade": "metadata.version upgraded",
    "lossless-downgrade": "metadata.version lowered (no metadata change in between, or KIP-1155)",
    "lossy-downgrade": "a metadata.version downgrade across a metadata change (refused, or KIP-1155 lossy)",
    "type-UPGRADE": "an update with upgrade type UPGRADE",
    "type-SAFE_DOWNGRADE": "an update with upgrade type SAFE_DOWNGRADE",
    "type-UNSAFE_DOWNGRADE": "an update with upgrade type UNSAFE_DOWNGRADE",
    "type-UNKNOWN": "an update with an unknown upgrade type",
    # Families of several instances, each reached on its own (`instances`); the directed scenarios
    # of the stateful model (FeatureMachine.directed) walk them, since random draws rarely do.
    "format-quorum-flags": "every format quorum-flag combination: static voters (absent / true / false) × "
                           "--standalone / --initial-controllers / --no-initial-controllers, valid and invalid",
    "every-feature-level": "every feature other than metadata.version finalized at each of its production levels",
    "reregister-same-process": "a registered broker registers again from the same process (same incarnation)",
    "reregister-new-process": "a registered broker registers again from a new process (new incarnation)",
    "snapshot-every-mv": "a snapshot taken and loaded at every metadata.version the release knows",
    "snapshot-below-bootstrap": "a snapshot taken and loaded below the bootstrap minimum (a cluster formatted by an "
                                "old release, reached from restore_state)",
    "register-every-version": "a broker registers with each BrokerRegistration version the controller accepts",
    "register-without-mv": "a broker's registration omits metadata.version from its features",
    "features-tool-release": "kafka-features upgrade and downgrade --release-version",
    "coordinator-unknown-value-version": "each coordinator loads a record whose value version it does not know "
                                         "(KIP-915)",
}

QUORUM_FLAGS = ("standalone", "initial_controllers", "no_initial_controllers")
COORDINATORS = ("group", "transaction")
RELEASE_FLAG_STYLES = ("4.0", "4.2")  # kafka-features styles with upgrade/downgrade --release-version
UNKNOWN_VALUE_VERSION = 9  # a coordinator record value version no release writes (the grammar writes it)
# static voters absent / true / false, each with no flag or one flag; and the flag pairs
QUORUM_COMBOS: tuple[tuple[bool | None, tuple[str, ...]], ...] = (
    *((static, flags) for static in (None, True, False) for flags in ((), *((f,) for f in QUORUM_FLAGS))),
    *((None, pair) for pair in (QUORUM_FLAGS[:2], QUORUM_FLAGS[::2], QUORUM_FLAGS[1:])),
)


def quorum_combo(command: dict[str, Any]) -> str:
    """The instance name of a format's quorum flags, e.g. `static=true+standalone`."""
    static = command.get("static_voters")
    parts = [] if static is None else [f"static={'true' if static else 'false'}"]
    parts += [f for f in QUORUM_FLAGS if command.get(f)]
    return "+".join(parts) or "none"


def instances(family: str, profile: Any) -> list[str] | None:
    """The instances a family of several is made of on a release (None: a family of one)."""
    if family == "format-quorum-flags":
        return [quorum_combo({"static_voters": s, **{f: True for f in flags}}) for s, flags in QUORUM_COMBOS]
    if family == "every-feature-level":
        return [f"{name}={lv}" for name in profile.production_features
                for lv in range(1, profile.features[name].latest_production + 1) if lv in profile.features[name].levels]
    if family == "snapshot-every-mv":
        return [str(lv) for lv in profile.mv_levels]
    if family == "snapshot-below-bootstrap":
        return [str(lv) for lv in profile.mv_levels if lv < profile.mv_minimum_bootstrap]
    if family == "register-every-version":
        return [str(v) for v in range(profile.behaviour["broker_registration_max_version"] + 1)]
    if family == "features-tool-release":
        return ["upgrade", "downgrade"]
    if family == "coordinator-unknown-value-version":
        return list(COORDINATORS)
    return None


def reached(family: str, profile: Any, states: dict[str, int]) -> int:
    """How often the ci run reached a family: for a family of several, the fewest times any one
    instance was (0 when one never was)."""
    parts = instances(family, profile)
    if parts is None:
        return int(states.get(family, 0))
    return min((int(states.get(f"{family}:{i}", 0)) for i in parts), default=0)


def missing(family: str, profile: Any, states: dict[str, int]) -> list[str]:
    """The instances of a family not reached (the family itself for a family of one)."""
    parts = instances(family, profile)
    if parts is None:
        return [] if states.get(family) else [family]
    return [f"{family}:{i}" for i in parts if not states.get(f"{family}:{i}")]


def exists(family: str, profile: Any) -> bool:
    """Whether a release can go through this family at all."""
    if family in ("dynamic-quorum", "kraft1-read-controller", "kraft1-read-broker"):
        if family == "kraft1-read-controller" and not profile.behaviour.get("controller_reports_kraft_version", True):
            return False  # 3.9.0 controllers never report kraft.version (KAFKA-18920 came in 3.9.1)
        return KRAFT in profile.features  # KIP-853 quorums and kraft.version arrive with 3.9
    if family == "standby-below-finalized":
        return _index(profile.name) > 0  # needs an older release to roll back to
    if family == "format-quorum-flags":
        return profile.behaviour["format_style"] not in ("3.7", "3.8")  # the flags came with 3.9 (KIP-853)
    if family in ("every-feature-level", "snapshot-below-bootstrap"):
        return bool(instances(family, profile))
    if family == "features-tool-release":
        return profile.behaviour["features_tool_style"] in RELEASE_FLAG_STYLES  # --release-version came with 4.0
    return True


def _index(name: str | None) -> int:
    from reference_impl import profile_names

    names = list(profile_names())
    return names.index(name) if name in names else -1


def observe(command: dict[str, Any], outcome: dict[str, Any], cluster: Any, before: dict[str, Any]) -> set[str]:
    """The families one step shows.  `before`: what `snapshot` said just before the step."""
    op, ok = command.get("op"), outcome.get("error") == "NONE"
    found: set[str] = set()
    if op == "format":
        found.add(f"format-quorum-flags:{quorum_combo(command)}")
        if ok:
            found.add("dynamic-quorum" if outcome.get("dynamic_quorum") else "static-quorum")
    elif op in ("api_versions", "describe") and ok and (outcome.get("finalized") or {}).get(KRAFT) == 1:
        node = cluster.node(command.get("node", cluster.active_id))
        if node is not None:
            found.add("kraft1-read-controller" if node.role == "controller" else "kraft1-read-broker")
    elif op == "register":
        role = command.get("role", "broker")
        old, new = before.get("software"), command.get("software")
        if outcome.get("rule") == "KIP584-REPLAY-01":
            found.add("standby-below-finalized")
        if ok and old and new and old != new:
            newer = _index(new) > _index(old)
            found.add(f"{role}-rolling-upgrade" if newer else f"{role}-rollback")
        # newer software than the cluster's release, or than the node's own
        if ok and new and before.get("old_bootstrap") and any(
                _index(new) > _index(base) for base in (cluster.active_profile.name, old) if base):
            found.add("old-bootstrap-rolled")
        if ok and role == "broker" and before.get("incarnation") is not None:
            same = command.get("incarnation") == before["incarnation"]
            found.add("reregister-same-process" if same else "reregister-new-process")
        if role == "broker" and isinstance(outcome.get("version"), int) and outcome.get("rule") != "KIP584-REG-06":
            # the controller judged a registration at this version (whatever it decided)
            found.add(f"register-every-version:{outcome['version']}")
        if role == "broker" and "sent_features" in outcome and MV not in outcome["sent_features"]:
            found.add("register-without-mv")
    elif op == "features_tool" and command.get("release_version") and command.get("action") in ("upgrade", "downgrade"):
        found.add(f"features-tool-release:{command['action']}")
    elif op == "load_coordinator" and any((r.get("value") or "")[:4] == f"{UNKNOWN_VALUE_VERSION:04x}"
                                          for r in command.get("records") or []):
        found.add(f"coordinator-unknown-value-version:{command.get('coordinator')}")
    elif op in ("snapshot", "load_snapshot") and ok:
        mv = cluster.image.metadata_version
        if op == "load_snapshot" and before.get("snapshot_mv") == mv:  # taken and loaded at one level
            found.add(f"snapshot-every-mv:{mv}")
            if mv < cluster.active_profile.mv_minimum_bootstrap:
                found.add(f"snapshot-below-bootstrap:{mv}")
    elif op == "update_features":
        for u in command.get("updates") or []:
            t = u.get("upgrade_type", "UPGRADE") if command.get("version", 1) != 0 else "UPGRADE"
            found.add(f"type-{t}" if t in ("UPGRADE", "SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE") else "type-UNKNOWN")
        mv_before, mv_after = before.get("mv", 0), cluster.image.metadata_version
        if ok and not command.get("validate_only") and mv_after > mv_before:
            found.add("mv-upgrade")
        if ok and not command.get("validate_only") and mv_after < mv_before:
            found.add("lossy-downgrade" if outcome.get("lost") else "lossless-downgrade")
        rules = {outcome.get("rule")} | {r.get("rule") for r in (outcome.get("results") or {}).values()}
        if rules & {"KIP778-MV-04", "KIP778-MV-05", "KIP1155-DG-06"}:
            found.add("lossy-downgrade")
    if ok and op in ("format", "update_features", "restore_state", "load_snapshot"):
        p = cluster.active_profile
        for name, level in cluster.finalized_view().items():
            if name in p.production_features and level >= 1:
                found.add(f"every-feature-level:{name}={level}")
    return found


def snapshot(command: dict[str, Any], cluster: Any) -> dict[str, Any]:
    """What `observe` needs from before the step: the node's software, metadata.version, and
    whether the cluster was bootstrapped below its release's latest production level."""
    op = command.get("op")
    node = cluster.node(command.get("node")) if op == "register" else None
    registration = cluster.image.brokers.get(command.get("node")) if op == "register" else None
    p = cluster.active_profile
    log = cluster.log
    first = log[0] if log and not cluster.log_start else {}
    boot = first.get("level") if first.get("type") == "FeatureLevelRecord" and first.get("name") == MV else None
    return {"software": node.software if node is not None and node.explicit_ranges is None else None,
            "mv": cluster.image.metadata_version,
            "old_bootstrap": boot is not None and boot < p.mv_latest_production,
            "incarnation": registration.get("incarnation") if registration else None,
            "snapshot_mv": (command.get("snapshot") or {}).get("metadata_version") if op == "load_snapshot" else None}

