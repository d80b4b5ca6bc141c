"""The command-line tools: kafka-storage format / version-mapping / feature-dependencies, as each
release computes them (docs/research/tools-notes.md).  Failures raise ToolError with the tool's text."""

from __future__ import annotations

import re
from typing import Any

from ._catalog import KRAFT, MV, MetadataVersion, Profile
from ._controller import dependency_reason
from ._errors import ToolError

_IV = re.compile(r"^(\d+\.\d+)-IV(\d+)$")


def _version_key(p: Profile, s: str) -> str:
    parts = s.split(".")
    n = 3 if s.startswith("0.") and p.behaviour["mv_parse_style"] in ("3.7", "3x") else 2
    return ".".join(parts[:n])


def _mv_list(p: Profile, top: int) -> str:
    return ", ".join(p.mv_name(lv) for lv in p.mv_levels if p.mv_minimum <= lv <= top)


def parse_release_version(p: Profile, s: str, unstable: bool, rule: str) -> MetadataVersion:
    """MetadataVersion.fromVersionString.  A pre-KRaft IBP (3.x only) comes back with level -1."""
    key = _version_key(p, s)
    style = p.behaviour["mv_parse_style"]
    hit = _lookup(p, key)
    if style == "4.2":
        if hit is None or (not hit.production and not unstable):
            top = p.mv_latest_testing if unstable else p.mv_latest_production
            raise ToolError(f"Unknown metadata.version '{s}'. Supported metadata.version are: {_mv_list(p, top)}", rule)
        return hit
    if hit is None:
        if style == "4.0":
            raise ToolError(f"Version {s} is not a valid version. The minimum version is {p.mv_name(p.mv_minimum)} "
                            f"and the maximum version is {p.mv_name(p.mv_latest_testing)}", rule)
        raise ToolError(f"Version {s} is not a valid version", rule)
    return hit


def _lookup(p: Profile, key: str) -> MetadataVersion | None:
    if _IV.match(key) or key.startswith("0."):
        hit = p.mv_by_name(key)
        if hit is None and key in p.pre_kraft:
            return MetadataVersion(-1, key, key.split("-")[0], True, True)
        return hit
    # Bare "X.Y" is the newest production IV of that release.
    same = [v for v in p.versions.values() if v.release == key and v.production]
    if same:
        return max(same, key=lambda v: v.level)
    old = [x for x in p.pre_kraft if x.split("-")[0] == key]
    return MetadataVersion(-1, old[-1], key, True, True) if old else None


def mv_from_feature_level(p: Profile, level: int, rule: str) -> MetadataVersion:
    """MetadataVersion.fromFeatureLevel, with each release's wording."""
    hit = p.mv(level)
    if hit is not None:
        return hit
    style = p.behaviour["mv_parse_style"]
    if level == -1 and p.pre_kraft:
        return MetadataVersion(-1, p.pre_kraft[0], p.pre_kraft[0], True, True)  # 3.x returns IBP_0_8_0
    if style == "3.7":
        raise ToolError(f"No MetadataVersion with metadata version {level}", rule)
    if style == "3x":
        raise ToolError(f"No MetadataVersion with feature level {level}", rule)
    raise ToolError(f"No MetadataVersion with feature level {level}. Valid feature levels are from {p.mv_minimum} "
                    f"to {p.mv_latest_testing}.", rule)


def split_feature_flag(item: str, rule: str) -> tuple[str, str]:
    if "=" not in item:
        raise ToolError(f"Can't parse feature=level string {item}: equals sign not found.", rule)
    name, _, raw = item.partition("=")
    return name.strip(), raw.strip()


def parse_short(item: str, raw: str, rule: str) -> int:
    try:
        level = int(raw)
        if not -32768 <= level <= 32767:
            raise ValueError
    except ValueError:
        raise ToolError(f"Can't parse feature=level string {item}: unable to parse {raw} as a short.", rule) from None
    return level


def _flag_items(flags: list[str] | dict[str, Any]) -> list[str]:
    if isinstance(flags, dict):
        return [f"{k}={v}" for k, v in flags.items()]
    if isinstance(flags, str):
        return [flags]
    return [str(x) for x in flags]


def parse_storage_features(flags: list[str] | dict[str, Any]) -> dict[str, int]:
    """kafka-storage --feature: duplicates silently take the last value."""
    out: dict[str, int] = {}
    for item in _flag_items(flags):
        name, raw = split_feature_flag(item, "KIP1022-FMT-12")
        out[name] = parse_short(item, raw, "KIP1022-FMT-12")
    return out


def feature_level_defined(p: Profile, name: str, level: int, unstable: bool) -> bool:
    feat = p.features[name]
    top = feat.latest_testing if unstable else feat.latest_production
    return level in feat.levels and level <= top


# -- kafka-storage format ----------------------------------------------------------------------

def _quorum(cmd: dict[str, Any]) -> tuple[list[str], bool]:
    """The quorum flags given, and whether controller.quorum.voters is set (static quorum)."""
    flags = [f for f in ("standalone", "initial_controllers", "no_initial_controllers") if cmd.get(f)]
    if cmd.get("quorum") and cmd["quorum"] != "static" and cmd["quorum"] not in flags:
        flags.append(cmd["quorum"])
    voters = cmd.get("static_voters")
    return flags, (not flags) if voters is None else bool(voters)


_QUORUM_SHORT = {"standalone": "-s", "no_initial_controllers": "-N", "initial_controllers": "-I"}


def format_levels(p: Profile, cmd: dict[str, Any]) -> tuple[MetadataVersion, dict[str, int], bool]:
    """Formatter: metadata.version, every feature level and whether the quorum is dynamic."""
    style = p.behaviour["format_style"]
    unstable = bool(cmd.get("unstable", False))
    flags = cmd.get("features") or []
    qflags, static_voters = _quorum(cmd)
    rv = cmd.get("release_version")
    if style in ("3.7", "3.8"):
        # argparse4j names the first unknown option of the command line, which puts --release-version,
        # then --feature, then the quorum flags (the harness's argv, kafka-jvm 3.7.2).
        if flags and style == "3.7":
            raise ToolError("unrecognized arguments: '--feature'", "KIP1022-FMT-14")
        if qflags:
            raise ToolError(f"unrecognized arguments: '--{qflags[0].replace('_', '-')}'", "KIP1022-FMT-14")
        if not static_voters:
            # StorageTool.main builds the KafkaConfig right after parsing, before any format check
            # (3.7.2/3.8.1; 3.9 first accepts controller.quorum.bootstrap.servers for this).
            raise ToolError("If using process.roles, controller.quorum.voters must contain a parseable set of voters.",
                            "KIP1022-FMT-15")
    if len(qflags) > 1:
        # argparse4j names each option with its short form (StorageTool.scala:330-340@4.1.1: -s, -N, -I).
        a, b = (f"--{x.replace('_', '-')}/{_QUORUM_SHORT[x]}" for x in qflags[:2])
        raise ToolError(f"argument {b}: not allowed with argument {a}", "KIP1022-FMT-13")
    if style == "3.8" and rv is not None and flags:
        raise ToolError("Both --release-version and --feature were set. Only one of the two flags can be set.",
                        "KIP1022-FMT-01")
    mv_rv = parse_release_version(p, str(rv), unstable, "KIP1022-FMT-02") if rv is not None else None
    requested = parse_storage_features(flags) if style != "3.7" else {}
    if style == "3.7" or style == "3.8":
        return _format_3x(p, style, mv_rv, requested, unstable)
    dynamic_flag = any(f in qflags for f in ("standalone", "initial_controllers"))
    if p.behaviour["kraft_format_rule"] == "voters" and static_voters and dynamic_flag:
        raise ToolError("You cannot specify controller.quorum.voters and format the node with "
                        "--initial-controllers or --standalone. If you want to use dynamic quorum, please remove "
                        "controller.quorum.voters and specify controller.quorum.bootstrap.servers instead.",
                        "KIP1022-FMT-13")
    if not static_voters and not qflags:
        raise ToolError("Because controller.quorum.voters is not set on this controller, you must specify one of "
                        "the following: --standalone, --initial-controllers, or --no-initial-controllers.",
                        "KIP1022-FMT-13")
    # Formatter.calculateEffectiveReleaseVersion
    if MV in requested:
        if rv is not None:
            raise ToolError("Use --release-version instead of --feature metadata.version=X to avoid ambiguity.",
                            "KIP1022-FMT-01")
        mv = mv_from_feature_level(p, requested[MV], "KIP1022-FMT-02")
    elif mv_rv is not None:
        mv = mv_rv
    else:
        mv = p.versions[p.mv_latest_testing if unstable else p.mv_latest_production]
    if style == "3.9" and mv.level <= 0:
        raise ToolError(f"metadata.version {mv.name} is too old to be supported.", "KIP1022-FMT-06")
    if not mv.production and not unstable:
        raise ToolError(f"metadata.version {mv.name} is not yet stable.", "KIP1022-FMT-07")
    # Formatter.calculateEffectiveFeatureLevels
    known = p.production_features
    for name in sorted(requested):
        if name != MV and name not in known:
            raise ToolError(f"Unsupported feature: {name}. Supported features are: {', '.join(sorted(known))}",
                            "KIP1022-FMT-03")
    dynamic = _dynamic(p, qflags, static_voters)
    levels: dict[str, int] = {}
    for name in known:
        if name == KRAFT:
            levels[name] = _kraft_level(p, requested.get(KRAFT), dynamic)
        else:
            levels[name] = requested.get(name, p.features[name].default_level(mv.level))
    proposed = {MV: mv.level, **levels}
    for name in sorted(levels):
        if not feature_level_defined(p, name, levels[name], unstable):
            raise ToolError(f"No feature:{name} with feature level {levels[name]}", "KIP1022-FMT-04")
        reason = dependency_reason(p, name, levels[name], proposed)
        if reason:
            raise ToolError(reason, "KIP1022-FMT-05")
    _bootstrap_minimum(p, style, mv)
    return mv, levels, dynamic


def _bootstrap_minimum(p: Profile, style: str, mv: MetadataVersion) -> None:
    """3.x: the BootstrapMetadata constructor refuses a metadata.version below 3.3-IV0, after the
    tool's own checks (BootstrapMetadata.java:82-85@3.7.0/3.8.0, :115-118@3.9.0; an uncaught
    RuntimeException, so a stack trace and exit 1).  4.x parses nothing below 3.3-IV3."""
    if style in ("3.7", "3.8", "3.9") and mv.level < p.mv_minimum_bootstrap:
        what = "metadata versions" if style == "3.7" else "metadata.version"
        raise ToolError(f"Bootstrap {what} before {p.mv_name(p.mv_minimum_bootstrap)} are not supported. "
                        "Can't load metadata from format command", "KIP1022-FMT-06")


def _format_3x(p: Profile, style: str, mv_rv: MetadataVersion | None, requested: dict[str, int],
               unstable: bool) -> tuple[MetadataVersion, dict[str, int], bool]:
    if mv_rv is not None:
        mv = mv_rv
    elif MV in requested:
        mv = mv_from_feature_level(p, requested[MV], "KIP1022-FMT-02")
    else:
        mv = p.versions[p.mv_latest_production]
    if mv.level <= 0:
        text = ("Must specify a valid KRaft metadata version of at least 3.0." if style == "3.7" else
                "Must specify a valid KRaft metadata.version of at least 3.0-IV0.")
        raise ToolError(text, "KIP1022-FMT-06")
    if not mv.production and not unstable:
        text = (f"Metadata version {mv.name} is not ready for production use yet." if style == "3.7" else
                f"The metadata.version {mv.name} is not ready for production use yet.")
        raise ToolError(text, "KIP1022-FMT-07")
    _bootstrap_minimum(p, style, mv)
    # 3.8's PRODUCTION_FEATURES is empty: any other --feature is silently ignored.
    return mv, {}, False


def _dynamic(p: Profile, qflags: list[str], static_voters: bool) -> bool:
    rule = p.behaviour["kraft_format_rule"]
    if rule == "voters":
        return not static_voters
    if rule == "flags-3.9":
        return any(f in qflags for f in ("standalone", "initial_controllers"))
    return bool(qflags)


def _kraft_level(p: Profile, given: int | None, dynamic: bool) -> int:
    """Formatter.effectiveKRaftFeatureLevel; runs before the level itself is validated."""
    if given is None:
        return 1 if dynamic else 0
    rule = p.behaviour["kraft_format_rule"]
    if given == 0 and dynamic:
        if rule == "voters":
            raise ToolError("Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags "
                            "--standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic "
                            "controllers support, try removing the --feature flag for kraft.version.", "KIP1022-FMT-08")
        if rule == "flags-4.1.0":
            raise ToolError("Cannot set kraft.version to 0 if one of the flags --standalone, --initial-controllers, or "
                            "--no-initial-controllers is used. For dynamic controllers support, try removing the "
                            "--feature flag for kraft.version.", "KIP1022-FMT-08")
        raise ToolError("Cannot set kraft.version to 0 if KIP-853 configuration is present. Try removing the "
                        "--feature flag for kraft.version.", "KIP1022-FMT-08")
    if given != 0 and not dynamic:
        if rule == "voters":
            raise ToolError(f"Cannot set kraft.version to {given} unless controller.quorum.voters is empty and one of "
                            "the flags --standalone, --initial-controllers, or --no-initial-controllers is used. For "
                            "dynamic controllers support, try using one of --standalone, --initial-controllers, or "
                            "--no-initial-controllers and removing controller.quorum.voters.", "KIP1022-FMT-09")
        if rule == "flags-4.1.0":
            raise ToolError(f"Cannot set kraft.version to {given} unless one of the flags --standalone, "
                            "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers "
                            "support, try using one of --standalone, --initial-controllers, or "
                            "--no-initial-controllers.", "KIP1022-FMT-09")
        raise ToolError(f"Cannot set kraft.version to {given} unless KIP-853 configuration is present. Try removing "
                        "the --feature flag for kraft.version.", "KIP1022-FMT-09")
    return given


def bootstrap_records(mv: MetadataVersion, levels: dict[str, int]) -> list[dict[str, Any]]:
    """BootstrapMetadata: MV first, then non-zero features sorted by name, never kraft.version."""
    recs = [{"type": "FeatureLevelRecord", "name": MV, "level": mv.level}]
    recs += [{"type": "FeatureLevelRecord", "name": n, "level": lv}
             for n, lv in sorted(levels.items()) if lv > 0 and n != KRAFT]
    return recs


# -- version-mapping / feature-dependencies -----------------------------------------------------

def version_mapping(p: Profile, cmd: dict[str, Any]) -> dict[str, Any]:
    """kafka-storage version-mapping (4.0+; for older releases computed from the same catalogue)."""
    rv = cmd.get("release_version")
    if rv is None:
        mv = p.versions[p.mv_latest_production]
        shown = mv.name
    else:
        shown = str(rv)
        found: MetadataVersion | None = None
        try:
            found = parse_release_version(p, shown, True, "KIP1022-MAP-02")
        except ToolError:
            if p.behaviour["mv_parse_style"] == "4.2":
                raise
        if found is None or found.level < p.mv_minimum:
            lo = p.mv_name(p.mv_minimum_bootstrap)
            raise ToolError(f"Unknown release version '{shown}'. Supported versions are: {lo} to "
                            f"{p.mv_name(p.mv_latest_production)}", "KIP1022-MAP-02") from None
        mv = found
    levels = p.default_levels(mv.level)
    lines = [f"metadata.version={mv.level} ({shown})"] + [f"{n}={lv}" for n, lv in levels.items()]
    out = {"metadata_version": mv.level, "levels": levels, "lines": lines}
    if not p.behaviour["tools_have_mapping_commands"]:
        out["note"] = f"{p.release} has no version-mapping command; computed from its catalogue (defaultValue)"
    return out


# scala.MatchError's message for a String[] (`[Ljava.lang.String;@1b6d3586 (of class [Ljava.lang.String;)`),
# the identity hash written "@…" (the kafka-jvm harness writes Kafka's that way too).
MATCH_ERROR_STRING_ARRAY = "[Ljava.lang.String;@… (of class [Ljava.lang.String;)"


def _java_split(text: str, sep: str) -> list[str]:
    """String.split(regex) without a limit: trailing empty strings are removed."""
    parts = text.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def feature_dependencies(p: Profile, cmd: dict[str, Any]) -> dict[str, Any]:
    """feature-dependencies of kafka-storage (default) or kafka-features (`tool`, 4.0+): lines are
    printed in argument order, so a failure leaves the earlier features' lines on stdout
    (StorageTool.scala:200-252@4.1.1, FeatureCommand.java:390-420@4.0.0)."""
    lines: list[str] = []
    try:
        items = _flag_items(cmd.get("features") or [])
        if not items:
            raise ToolError("argument --feature/-f is required", "KIP1022-DEP-02")
        deps_out: dict[str, dict[str, int]] = {}
        trims = p.behaviour["mv_parse_style"] == "4.2"  # 4.2 splits with a limit and trims; 4.0/4.1 do neither
        for item in items:
            if cmd.get("tool") == "kafka-features":
                # FeatureCommand.parseNameAndLevel (FeatureCommand.java:266-280@4.1.1): first '=', trimmed.
                if "=" not in item:
                    raise ToolError(f"Can't parse feature=level string {item}: equals sign not found.", "KIP1022-DEP-02")
                name, _, raw = (x.strip() for x in item.partition("="))
                try:
                    if not raw or not raw.lstrip("+-").isdigit() or raw[1:].startswith(("+", "-")):
                        raise ValueError  # Short.parseShort: an optional sign, then decimal digits
                    level = int(raw)
                    if not -32768 <= level <= 32767:
                        raise ValueError
                except ValueError:
                    raise ToolError(f"Can't parse feature=level string {item}: unable to parse {raw} as a short.",
                                    "KIP1022-DEP-02") from None
                item = f"{name}={level}"
            if not trims and len(_java_split(item, "=")) != 2:
                # 4.0/4.1: `val Array(featureName, versionStr) = featureArg.split("=")` (StorageTool.scala:209@4.1.1)
                # throws scala.MatchError on the String[]: its message, with the array's identity hash as "@…".
                raise ToolError(MATCH_ERROR_STRING_ARRAY, "KIP1022-DEP-02")
            if trims and "=" not in item:
                raise ToolError(f"Invalid feature format: {item}. Expected format: 'feature=version' "
                                "(e.g. 'group.version=1')", "KIP1022-DEP-02")
            name, _, raw = item.partition("=")
            if trims:
                name, raw = name.strip(), raw.strip()
            try:
                if raw != raw.strip() or not raw:
                    raise ValueError  # Scala's toShort rejects surrounding blanks
                level = int(raw)
                if not -32768 <= level <= 32767:
                    raise ValueError
            except ValueError:
                raise ToolError(f"Invalid version format: {raw} for feature {name}", "KIP1022-DEP-02") from None
            key = f"{name}={level}"
            if name == MV:
                mv = p.mv(level)
                if mv is None:
                    raise ToolError(f"Unknown metadata.version {level}", "KIP1022-DEP-02")
                lines.append(f"{MV}={level} ({mv.name}) has no dependencies.")
                deps_out[key] = {}
                continue
            feat = p.features.get(name)
            if feat is None or not feat.production or name not in p.production_feature_order:
                raise ToolError(f"Unknown feature: {name}", "KIP1022-DEP-02")
            if level not in feat.levels:
                if cmd.get("tool") == "kafka-features":  # Feature.fromFeatureLevel (Feature.java:148@4.0.0)
                    raise ToolError(f"No feature:{name} with feature level {level}", "KIP1022-DEP-02")
                raise ToolError(f"Feature level {level} is not supported for feature {name}", "KIP1022-DEP-02")
            deps = feat.levels[level].dependencies
            deps_out[key] = dict(deps)
            if not deps:
                lines.append(f"{key} has no dependencies.")
                continue
            lines.append(f"{key} requires:")
            for dep, dl in deps.items():
                suffix = f" ({p.mv_name(dl)})" if dep == MV else ""
                lines.append(f"    {dep}={dl}{suffix}")
        out: dict[str, Any] = {"dependencies": deps_out, "lines": lines}
        if not p.behaviour["tools_have_mapping_commands"]:
            out["note"] = f"{p.release} has no feature-dependencies command; computed from its catalogue"
        return out
    except ToolError as e:
        e.lines = list(lines)
        raise
