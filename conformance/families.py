"""State families: kinds of cluster history a release can go through (issue 11, item 9), recognised
step by step from the command, the reference's outcome and the reference cluster around it.  The
stateful model's coverage records which it reached, so the ci run can be held to reaching, on every
profile, each family that exists there (`exists`), and docs/state-families.md shows the matrix."""

from __future__ import annotations

from typing import Any

MV, KRAFT = "metadata.version", "kraft.version"

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
}


def exists(family: str, profile: Any) -> bool:
    """Whether a release can go through this family at all."""
    if family in ("dynamic-quorum", "kraft1-read-controller", "kraft1-read-broker"):
        if family == "kraft1-read-controller" and not profile.behaviour.get("controller_reports_kraft_version", True):
            return False  # 3.9.0 controllers never report kraft.version (KAFKA-18920 came in 3.9.1)
        return KRAFT in profile.features  # KIP-853 quorums and kraft.version arrive with 3.9
    if family == "standby-below-finalized":
        return _index(profile.name) > 0  # needs an older release to roll back to
    return True


def _index(name: str | None) -> int:
    from reference_impl import profile_names

    names = list(profile_names())
    return names.index(name) if name in names else -1


def observe(command: dict[str, Any], outcome: dict[str, Any], cluster: Any, before: dict[str, Any]) -> set[str]:
    """The families one step shows.  `before`: what `snapshot` said just before the step."""
    op, ok = command.get("op"), outcome.get("error") == "NONE"
    found: set[str] = set()
    if op == "format" and ok:
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
    return found


def snapshot(command: dict[str, Any], cluster: Any) -> dict[str, Any]:
    """What `observe` needs from before the step: the node's software, metadata.version, and
    whether the cluster was bootstrapped below its release's latest production level."""
    node = cluster.node(command.get("node")) if command.get("op") == "register" else None
    p = cluster.active_profile
    log = cluster.log
    first = log[0] if log and not cluster.log_start else {}
    boot = first.get("level") if first.get("type") == "FeatureLevelRecord" and first.get("name") == MV else None
    return {"software": node.software if node is not None and node.explicit_ranges is None else None,
            "mv": cluster.image.metadata_version,
            "old_bootstrap": boot is not None and boot < p.mv_latest_production}

