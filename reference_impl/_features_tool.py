"""kafka-features upgrade / downgrade / disable / describe: how the tool turns flags into an
UpdateFeatures request and prints what the controller answered."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._catalog import MV, Profile
from ._errors import ToolError
from ._tools import parse_short, split_feature_flag

if TYPE_CHECKING:
    from .api import Cluster

ACTIONS = ("upgrade", "downgrade", "disable", "describe")

# FeatureCommand.handleDescribe's printf, by the profile's `describe_layout`: tab-separated up to 4.2
# (FeatureCommand.java:244 on confluentinc/kafka's 4.2 branch; the same string in the 3.7.0-4.2.2 jars);
# from 4.3.0 (KAFKA-19941, commit 33df6535ed) left-aligned columns padded to 40 / 15 / 15 / 15, two
# spaces apart, never cut (FeatureCommand.java:251 on the 4.3 branch; the 4.3.0, 4.3.1, 4.4.0 jars).
# Java's %-Ns is Python's {:<N}.
DESCRIBE_FORMATS = {
    "tabs": "Feature: {}\tSupportedMinVersion: {}\tSupportedMaxVersion: {}\tFinalizedVersionLevel: {}\tEpoch: {}",
    "padded": "Feature: {:<40}  SupportedMinVersion: {:<15}  SupportedMaxVersion: {:<15}  "
              "FinalizedVersionLevel: {:<15}  Epoch: {}",
}


def _mv_from_string(p: Any, s: str) -> int:
    """--metadata / --release-version parsing and each release's error text."""
    from ._tools import parse_release_version

    style = p.behaviour["features_tool_style"]
    try:
        mv = parse_release_version(p, s, style == "4.2", "KIP1022-TOOL-03")
        if mv.level > 0:
            return mv.level
    except ToolError:
        pass
    if style == "4.2":
        raise ToolError(f"Unknown metadata.version '{s}'. Supported metadata.version are: "
                        f"{_listing(p, p.mv_minimum, p.mv_latest_testing)}", "KIP1022-TOOL-03")
    if style == "4.0":
        raise ToolError(f"Unknown metadata.version {s}. Supported metadata.version are "
                        f"{_listing(p, p.mv_minimum, p.mv_latest_production)}", "KIP1022-TOOL-03")
    listing = _listing(p, p.mv_minimum_bootstrap, p.mv_latest_production)
    if style == "3.7":
        raise ToolError(f"Unsupported metadata version {s}. Supported metadata versions are {listing}",
                        "KIP1022-TOOL-03")
    raise ToolError(f"Unsupported metadata.version {s}. Supported metadata.version are {listing}", "KIP1022-TOOL-03")


def _listing(p: Any, lo: int, hi: int) -> str:
    return ", ".join(p.mv_name(lv) for lv in p.mv_levels if lo <= lv <= hi)


def features_tool(c: Cluster, cmd: dict[str, Any]) -> dict[str, Any]:
    action = cmd.get("action")
    out: dict[str, Any] = {"op": "features_tool", "action": action}
    if action not in ACTIONS:
        return c.invalid(out, f"features_tool: action must be one of {', '.join(ACTIONS)}, not {action!r}")
    if action == "describe":
        node = cmd.get("node", c.active_id)
        if isinstance(node, int) and node < 0 and c.tool_profile(cmd).behaviour["features_tool_style"] == "4.2":
            # --node-id (KAFKA-18786, 4.2.0+) is checked before any request (FeatureCommand.java:240-246@4.3.0).
            raise ToolError(f"Invalid node id {node}: must be non-negative.", "KIP584-API-04")
        d = c.apply({"op": "describe", "node": node})
        # Printed by the tool's release: its layout and its metadata.version names.
        printed = describe_lines(c.tool_profile(cmd), d["supported"], d["finalized"], d["epoch"]) if "lines" in d else []
        out.update(lines=printed, exit_code=0 if d["error"] == "NONE" else 1)
        return c.ok(out) if d["error"] == "NONE" else c.err(out, d["error"], d["message"], d["rule"])
    p = c.tool_profile(cmd)
    style = p.behaviour["features_tool_style"]
    rv, flags, metadata = cmd.get("release_version"), cmd.get("features") or [], cmd.get("metadata")
    if isinstance(flags, str):
        flags = [flags]
    lines: list[str] = []
    if rv is not None and style in ("3.7", "3.8", "3.9"):
        raise ToolError("unrecognized arguments: '--release-version'", "KIP1022-TOOL-02")
    if rv is not None and (flags or metadata is not None):
        raise ToolError("Can not specify `release-version` with other feature flags.", "KIP1022-TOOL-02")
    updates: dict[str, int] = {}
    if rv is not None:
        level = _mv_from_string(p, str(rv))
        updates[MV] = level
        for name, default in p.default_levels(level).items():
            if action == "upgrade" and default == 0:
                continue  # upgrade skips features whose default is 0; downgrade sends them all
            updates[name] = default
    if metadata is not None:
        if style in ("4.0", "4.2"):
            lines.append(" `metadata` flag is deprecated and may be removed in a future release.")
        updates[MV] = _mv_from_string(p, str(metadata))
    for item in flags:
        if action == "disable":
            name, level = str(item), 0  # disable takes bare names
        else:
            name, raw = split_feature_flag(str(item), "KIP1022-TOOL-03")
            level = parse_short(str(item), raw, "KIP1022-TOOL-03")
        if name in updates:
            raise ToolError(f"Feature {name} was specified more than once.", "KIP1022-TOOL-03")
        updates[name] = level
    if not updates:
        raise ToolError(f"You must specify at least one feature to {action}", "KIP1022-TOOL-05")
    for name, level in updates.items():
        # Admin FeatureUpdate constructor checks, raised inside the tool.
        if level < 0:
            raise ToolError("Cannot specify a negative version level.", "KIP1022-TOOL-03")
        if level == 0 and action == "upgrade":
            if style in ("3.7", "3.8"):
                raise ToolError("The downgradeType flag should be set to SAFE or UNSAFE when the provided "
                                "maxVersionLevel:0 is < 1.", "KIP1022-TOOL-03")
            raise ToolError("The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the "
                            "provided maxVersionLevel:0 is < 1.", "KIP1022-TOOL-03")
    utype = "UPGRADE" if action == "upgrade" else ("UNSAFE_DOWNGRADE" if cmd.get("unsafe") else "SAFE_DOWNGRADE")
    dry = bool(cmd.get("dry_run", False))
    version = c.active_profile.behaviour["update_features_max_version"]  # the admin client's newest shared version
    request = {"op": "update_features", "version": version, "validate_only": dry,
               "updates": [{"feature": n, "level": lv, "upgrade_type": utype} for n, lv in updates.items()]}
    out["request"] = request
    resp = c.apply(request)
    failed = 0
    for name in sorted(updates):
        level = updates[name]
        err, msg = resp["error"], resp["message"]
        if "results" in resp and resp["error"] == "NONE":
            r = resp["results"].get(name, {"error": "NONE", "message": None})
            err, msg = r["error"], r["message"]
        if err == "NONE":
            lines.append(_success_line(action, name, level, dry))
        else:
            failed += 1
            lines.append(_failure_line(action, name, level, dry, msg or err))
    out["response"] = resp
    out["records"] = resp.get("records", [])
    out.update(lines=lines, exit_code=1 if failed else 0)
    if failed:
        # The per-feature lines go to stdout; the summary is thrown (TerseException) and main prints
        # its message to stderr (FeatureCommand.java:318 and :58-71@3.7.0, :464 and :61-74@4.0.0/4.1.1).
        summary = f"{failed} out of {len(updates)} operation(s) failed."
        out["stderr"] = [summary]
        return c.err(out, resp["error"] if resp["error"] != "NONE" else "INVALID_UPDATE_VERSION", summary,
                     resp.get("rule") or "KIP1022-TOOL-06")
    return c.ok(out)


def describe_lines(p: Profile, supported: dict[str, Any], finalized: dict[str, int], epoch: int) -> list[str]:
    """kafka-features describe: one line per supported feature (sorted), a level of 0 when not finalized,
    metadata.version by release name ("UNKNOWN n" for a level the release does not know), and "-" for
    the epoch when ApiVersions carries none (FinalizedFeaturesEpoch < 0: KafkaAdminClient.java:4547-4552@4.3,
    FeatureCommand.java:256@4.3, the same from 3.7.0)."""
    fmt = DESCRIBE_FORMATS[p.behaviour["describe_layout"]]
    lines = []
    for name, (lo, hi) in sorted(supported.items()):
        fin = finalized.get(name, 0)
        if name == MV:
            lo_s, hi_s, fin_s = p.mv_name(lo), p.mv_name(hi), p.mv_name(fin)
        else:
            lo_s, hi_s, fin_s = str(lo), str(hi), str(fin)
        lines.append(fmt.format(name, lo_s, hi_s, fin_s, epoch if epoch >= 0 else "-"))
    return lines


def _success_line(action: str, name: str, level: int, dry: bool) -> str:
    if action == "disable":
        return f"{name} can be disabled." if dry else f"{name} was disabled."
    verb = "upgraded" if action == "upgrade" else "downgraded"
    return f"{name} can be {verb} to {level}." if dry else f"{name} was {verb} to {level}."


def _failure_line(action: str, name: str, level: int, dry: bool, message: str) -> str:
    lead = "Can not" if dry else "Could not"
    if action == "disable":
        return f"{lead} disable {name}. {message}"
    return f"{lead} {action} {name} to {level}. {message}"
