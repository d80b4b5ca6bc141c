"""The command-line tools per release: kafka-storage format / version-mapping / feature-dependencies and
kafka-features upgrade / downgrade / disable.

Expectations come from docs/research/tools-notes.md (read from each release tag; it overrides
/work/shared/kafka-feature-facts.md where they differ) and from the KIP-1022 text.  Messages are
compared exactly.  Where the real tool fails with an uncaught exception (stack trace), the reference
reports a TOOL_ERROR with the exception's message; the tests compare that message.

Every KIP-1022 example is covered in the "KIP-1022 examples" sections, adapted to a real profile where
the shipped code differs from the KIP's illustration; each adaptation is noted "ADAPTED:".
"""

from __future__ import annotations

from typing import Any

import pytest

from reference_impl import Cluster
from tests.conftest import ok, refused

MV = "metadata.version"
ELR = "eligible.leader.replicas.version"

# metadata.version strings 3.3-IV3 .. 4.2-IV1 (tools-notes Q2 "Unknown --release-version output", 4.2 row)
MVS_4X = ["3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0",
          "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2",
          "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1"]
LIST_42 = ", ".join(MVS_4X)
# kafka-features 3.x lists start at 3.3-IV0 and end at LATEST_PRODUCTION (tools-notes Q4)
MVS_3X = ["3.3-IV0", "3.3-IV1", "3.3-IV2"] + MVS_4X[:MVS_4X.index("3.7-IV4") + 1]


def fmt(profile: str, **kw: Any) -> dict[str, Any]:
    return Cluster(profile).apply({"op": "format", **kw})


def fmt_ok(profile: str, **kw: Any) -> dict[str, Any]:
    return ok(fmt(profile, **kw))


def fmt_err(profile: str, message: str, rule: str, **kw: Any) -> dict[str, Any]:
    out = fmt(profile, **kw)
    refused(out, "TOOL_ERROR", rule)
    assert out["message"] == message, out
    return out


def recs(out: dict[str, Any]) -> list[tuple[str, int]]:
    return [(r["name"], r["level"]) for r in out["records"]]


def vmap(profile: str, rv: str | None = None, **kw: Any) -> dict[str, Any]:
    cmd: dict[str, Any] = {"op": "version_mapping", **kw}
    if rv is not None:
        cmd["release_version"] = rv
    return Cluster(profile).apply(cmd)


def deps(profile: str, *features: str) -> dict[str, Any]:
    return Cluster(profile).apply({"op": "feature_dependencies", "features": list(features)})


def cluster(profile: str, **fmt_args: Any) -> Cluster:
    c = Cluster(profile)
    ok(c.apply({"op": "format", **fmt_args}))
    return c


def tool(c: Cluster, action: str, **kw: Any) -> dict[str, Any]:
    return c.apply({"op": "features_tool", "action": action, **kw})


def tool_err(c: Cluster, action: str, message: str, rule: str, **kw: Any) -> dict[str, Any]:
    out = tool(c, action, **kw)
    refused(out, "TOOL_ERROR", rule)
    assert out["message"] == message, out
    return out


def updates(out: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(u["feature"], u["level"], u["upgrade_type"]) for u in out["request"]["updates"]]


# =================================================================================================
# kafka-storage format
# =================================================================================================

# -- unknown / malformed --release-version ---------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-02", "fail")
@pytest.mark.parametrize("profile,message", [
    ("kafka-3.7", "Version 9.9-IV0 is not a valid version"),
    ("kafka-3.8", "Version 9.9-IV0 is not a valid version"),
    ("kafka-3.9", "Version 9.9-IV0 is not a valid version"),
    ("kafka-4.0", ("Version 9.9-IV0 is not a valid version. The minimum version is 3.3-IV3 and the maximum version "
                  "is 4.1-IV0")),
    ("kafka-4.1", ("Version 9.9-IV0 is not a valid version. The minimum version is 3.3-IV3 and the maximum version "
                  "is 4.2-IV1")),
    ("kafka-4.2", f"Unknown metadata.version '9.9-IV0'. Supported metadata.version are: {LIST_42}"),
])
def test_format_unknown_release_version(profile: str, message: str) -> None:
    fmt_err(profile, message, "KIP1022-FMT-02", release_version="9.9-IV0")


@pytest.mark.rule("KIP1022-FMT-02", "fail")
def test_format_unknown_release_version_42_unstable_lists_up_to_latest_testing() -> None:
    fmt_err("kafka-4.2", f"Unknown metadata.version 'foo'. Supported metadata.version are: {LIST_42}, 4.3-IV0",
            "KIP1022-FMT-02", release_version="foo", unstable=True)


@pytest.mark.rule("KIP1022-FMT-02", "fail")
def test_format_42_unstable_release_string_is_unknown_not_unstable() -> None:
    # 4.2 parses --release-version with the unstable flag: "is not yet stable" is never reached this way
    fmt_err("kafka-4.2", f"Unknown metadata.version '4.3-IV0'. Supported metadata.version are: {LIST_42}",
            "KIP1022-FMT-02", release_version="4.3-IV0")


@pytest.mark.rule("KIP1022-FMT-02", "fail")
@pytest.mark.parametrize("profile,rv,message", [
    # 4.x always uses a 2-segment key and has nothing below 3.3-IV3
    ("kafka-4.0", "3.2", ("Version 3.2 is not a valid version. The minimum version is 3.3-IV3 and the maximum "
                         "version is 4.1-IV0")),
    ("kafka-4.0", "3.3-IV2", ("Version 3.3-IV2 is not a valid version. The minimum version is 3.3-IV3 and the "
                             "maximum version is 4.1-IV0")),
    # a bare X.Y with no production IV does not resolve
    ("kafka-3.9", "4.0", "Version 4.0 is not a valid version"),
    ("kafka-3.7", "3.8", "Version 3.8 is not a valid version"),
    ("kafka-4.0", "4.1", ("Version 4.1 is not a valid version. The minimum version is 3.3-IV3 and the maximum "
                         "version is 4.1-IV0")),
])
def test_format_release_strings_that_do_not_resolve(profile: str, rv: str, message: str) -> None:
    fmt_err(profile, message, "KIP1022-FMT-02", release_version=rv)


@pytest.mark.rule("KIP1022-FMT-02", "pass")
@pytest.mark.parametrize("profile,rv,level", [
    ("kafka-3.9", "3.6", 14),  # bare X.Y = newest production IV (3.6-IV2)
    ("kafka-3.9", "3.6.1", 14),  # extra segments ignored
    ("kafka-3.9", "3.6-IV1", 13),
    ("kafka-4.0", "4.0", 25),
    ("kafka-4.2", "4.2", 29),
    ("kafka-4.1", "3.3-IV3", 7),
])
def test_format_release_version_parsing(profile: str, rv: str, level: int) -> None:
    assert fmt_ok(profile, release_version=rv)["metadata_version"]["level"] == level


# -- metadata.version too old / not stable --------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-06", "fail")
@pytest.mark.parametrize("profile,kw,message", [
    ("kafka-3.7", {"release_version": "2.8-IV1"}, "Must specify a valid KRaft metadata version of at least 3.0."),
    ("kafka-3.8", {"release_version": "2.8-IV1"}, "Must specify a valid KRaft metadata.version of at least 3.0-IV0."),
    # 3.8 names 3.0-IV0 in its message, yet 3.0-IV0 itself (level -1) fails the check
    ("kafka-3.8", {"release_version": "3.0-IV0"}, "Must specify a valid KRaft metadata.version of at least 3.0-IV0."),
    ("kafka-3.9", {"release_version": "2.8-IV1"}, "metadata.version 2.8-IV1 is too old to be supported."),
    ("kafka-3.9", {"features": ["metadata.version=-1"]}, "metadata.version 0.8.0 is too old to be supported."),
])
def test_format_too_old(profile: str, kw: dict[str, Any], message: str) -> None:
    fmt_err(profile, message, "KIP1022-FMT-06", **kw)


@pytest.mark.rule("KIP1022-FMT-06", "pass")
@pytest.mark.rule("KIP1022-FMT-06", "fail")
@pytest.mark.parametrize(("profile", "word"), [("kafka-3.7", "metadata versions"), ("kafka-3.8", "metadata.version"),
                                               ("kafka-3.9", "metadata.version")])
def test_3x_format_refuses_bootstrap_versions_below_3_3_iv0(profile: str, word: str) -> None:
    """The tool's own checks pass 3.0-IV1 .. 3.2-IV0, then BootstrapMetadata's constructor throws
    (BootstrapMetadata.java:82-85@3.7.0 "versions", :82-85@3.8.0 and :115-118@3.9.0-rc3 "metadata.version";
    reached from StorageTool.scala:88@3.7.0, Formatter.java:363-365@3.9.0-rc3)."""
    for rv in ("3.0-IV1", "3.1-IV0", "3.2-IV0"):
        out = Cluster(profile).apply({"op": "format", "release_version": rv})
        assert (out["error"], out["rule"]) == ("TOOL_ERROR", "KIP1022-FMT-06"), out
        assert out["message"] == (f"Bootstrap {word} before 3.3-IV0 are not supported. Can't load metadata from "
                                  "format command")
    assert fmt_ok(profile, release_version="3.3-IV0")["metadata_version"]["level"] == 4


@pytest.mark.rule("KIP1022-FMT-02", "fail")
@pytest.mark.parametrize("profile,level,message", [
    ("kafka-3.8", 0, "No MetadataVersion with feature level 0"),
    ("kafka-3.9", 0, "No MetadataVersion with feature level 0"),
    ("kafka-3.9", 99, "No MetadataVersion with feature level 99"),
    ("kafka-4.0", 6, "No MetadataVersion with feature level 6. Valid feature levels are from 7 to 26."),
    ("kafka-4.1", 30, "No MetadataVersion with feature level 30. Valid feature levels are from 7 to 29."),
    ("kafka-4.2", 31, "No MetadataVersion with feature level 31. Valid feature levels are from 7 to 30."),
])
def test_format_unknown_metadata_version_feature_level(profile: str, level: int, message: str) -> None:
    fmt_err(profile, message, "KIP1022-FMT-02", features=[f"metadata.version={level}"])


@pytest.mark.rule("KIP1022-FMT-07", "fail")
@pytest.mark.parametrize("profile,kw,message", [
    ("kafka-3.7", {"release_version": "3.8-IV0"}, "Metadata version 3.8-IV0 is not ready for production use yet."),
    ("kafka-3.8", {"release_version": "3.9-IV0"}, "The metadata.version 3.9-IV0 is not ready for production use yet."),
    ("kafka-3.8", {"features": ["metadata.version=21"]},
     "The metadata.version 3.9-IV0 is not ready for production use yet."),
    ("kafka-3.9", {"release_version": "4.0-IV0"}, "metadata.version 4.0-IV0 is not yet stable."),
    ("kafka-3.9", {"release_version": "4.0-IV1"}, "metadata.version 4.0-IV1 is not yet stable."),
    ("kafka-4.0", {"release_version": "4.1-IV0"}, "metadata.version 4.1-IV0 is not yet stable."),
    ("kafka-4.0", {"features": ["metadata.version=26"]}, "metadata.version 4.1-IV0 is not yet stable."),
    ("kafka-4.1", {"release_version": "4.2-IV0"}, "metadata.version 4.2-IV0 is not yet stable."),
    ("kafka-4.2", {"features": ["metadata.version=30"]}, "metadata.version 4.3-IV0 is not yet stable."),
])
def test_format_not_yet_stable(profile: str, kw: dict[str, Any], message: str) -> None:
    fmt_err(profile, message, "KIP1022-FMT-07", **kw)


@pytest.mark.rule("KIP1022-FMT-07", "pass")
@pytest.mark.parametrize("profile,kw,level", [
    ("kafka-3.7", {"release_version": "3.8-IV0"}, 20),
    ("kafka-3.8", {"features": ["metadata.version=21"]}, 21),
    ("kafka-3.9", {"release_version": "4.0-IV1"}, 23),
    ("kafka-4.0", {"release_version": "4.1-IV0"}, 26),
    ("kafka-4.2", {"release_version": "4.3-IV0"}, 30),
    ("kafka-4.2", {"features": ["metadata.version=30"]}, 30),
])
def test_format_unstable_flag_allows_unstable_metadata_version(profile: str, kw: dict[str, Any], level: int) -> None:
    assert fmt_ok(profile, unstable=True, **kw)["metadata_version"]["level"] == level


@pytest.mark.parametrize("profile,level", [
    # 3.7/3.8 default to LATEST_PRODUCTION even with unstable versions enabled; 3.9+ to latestTesting
    ("kafka-3.7", 19), ("kafka-3.8", 20), ("kafka-3.9", 23), ("kafka-4.0", 26), ("kafka-4.1", 29), ("kafka-4.2", 30),
    ("kafka-4.3", 31), ("kafka-4.4", 34),
])
def test_format_default_release_version_with_unstable(profile: str, level: int) -> None:
    assert fmt_ok(profile, unstable=True)["metadata_version"]["level"] == level


@pytest.mark.parametrize("profile,level", [
    ("kafka-3.7", 19), ("kafka-3.8", 20), ("kafka-3.9", 21), ("kafka-4.0", 25), ("kafka-4.1", 27), ("kafka-4.2", 29),
    ("kafka-4.3", 30), ("kafka-4.4", 33), ("kip-1155", 35),
])
def test_format_default_release_version_is_latest_production(profile: str, level: int) -> None:
    assert fmt_ok(profile)["metadata_version"]["level"] == level


# -- --feature parsing ------------------------------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-12", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.8", "kafka-3.9", "kafka-4.0", "kafka-4.1", "kafka-4.2"])
@pytest.mark.parametrize("item,message", [
    ("kraft.version", "Can't parse feature=level string kraft.version: equals sign not found."),
    ("group.version=abc", "Can't parse feature=level string group.version=abc: unable to parse abc as a short."),
    ("group.version=40000", ("Can't parse feature=level string group.version=40000: unable to parse 40000 as a "
                            "short.")),
])
def test_format_feature_parse_errors(profile: str, item: str, message: str) -> None:
    fmt_err(profile, message, "KIP1022-FMT-12", features=[item])


@pytest.mark.rule("KIP1022-FMT-12", "pass")
def test_format_duplicate_feature_last_wins() -> None:
    out = fmt_ok("kafka-4.0", features=["group.version=0", "group.version=1"])
    assert out["levels"]["group.version"] == 1


@pytest.mark.rule("KIP1022-FMT-14", "fail")
def test_format_37_has_no_feature_flag() -> None:
    out = fmt("kafka-3.7", features=["metadata.version=19"])
    refused(out, "TOOL_ERROR", "KIP1022-FMT-14", "--feature")


@pytest.mark.rule("KIP1022-FMT-14", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8"])
@pytest.mark.parametrize("flag", ["standalone", "no_initial_controllers", "initial_controllers"])
def test_format_3738_have_no_quorum_flags(profile: str, flag: str) -> None:
    out = fmt(profile, **{flag: True})
    refused(out, "TOOL_ERROR", "KIP1022-FMT-14", "--" + flag.replace("_", "-"))


@pytest.mark.rule("KIP1022-FMT-14", "fail")
def test_format_37_names_feature_before_a_quorum_flag() -> None:
    # argparse4j names the first unknown option; the command line puts --feature before the quorum flags
    # (kafka-jvm 3.7.2: "unrecognized arguments: '--feature'").
    refused(fmt("kafka-3.7", features=["x=1"], standalone=True), "TOOL_ERROR", "KIP1022-FMT-14", "'--feature'")
    refused(fmt("kafka-3.8", features=["x=1"], standalone=True), "TOOL_ERROR", "KIP1022-FMT-14", "'--standalone'")


@pytest.mark.rule("KIP1022-FMT-15", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8"])
@pytest.mark.parametrize("extra", [{}, {"release_version": "9.9"}, {"release_version": "3.7-IV4", "features": ["x=1"]}])
def test_format_3738_need_static_voters_before_any_format_check(profile: str, extra: dict[str, object]) -> None:
    # StorageTool.main builds the KafkaConfig right after parsing (kafka-jvm 3.7.2 and 3.8.1 answer so for
    # each of these); 3.9 formats a dynamic quorum instead.
    if profile == "kafka-3.7" and "features" in extra:
        extra = {"release_version": "3.7-IV4"}
    out = fmt(profile, static_voters=False, **extra)
    refused(out, "TOOL_ERROR", "KIP1022-FMT-15", "controller.quorum.voters must contain a parseable set of voters")


@pytest.mark.rule("KIP1022-FMT-15", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8"])
def test_format_3738_with_static_voters_formats(profile: str) -> None:
    assert fmt_ok(profile, static_voters=True)["dynamic_quorum"] is False
    assert fmt_ok(profile)["dynamic_quorum"] is False  # no quorum flag: static voters by default


@pytest.mark.rule("KIP1022-FMT-14", "pass")
def test_format_38_accepts_feature_flag() -> None:
    assert fmt_ok("kafka-3.8", features=["metadata.version=19"])["metadata_version"]["level"] == 19


# -- --release-version together with --feature ------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-01", "fail")
@pytest.mark.parametrize("features", [["metadata.version=20"], ["group.version=1"], ["nope=1"], ["garbage"]])
def test_format_38_both_release_version_and_feature(features: list[str]) -> None:
    # 3.8 rejects --release-version with ANY --feature, before parsing either
    fmt_err("kafka-3.8", "Both --release-version and --feature were set. Only one of the two flags can be set.",
            "KIP1022-FMT-01", release_version="3.8-IV0", features=features)


@pytest.mark.rule("KIP1022-FMT-01", "fail")
def test_format_38_both_flags_checked_before_release_version_parse() -> None:
    fmt_err("kafka-3.8", "Both --release-version and --feature were set. Only one of the two flags can be set.",
            "KIP1022-FMT-01", release_version="bogus", features=["kraft.version=1"])


@pytest.mark.rule("KIP1022-FMT-01", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.0", "kafka-4.1", "kafka-4.2"])
def test_format_use_release_version_instead(profile: str) -> None:
    # the X is literal, not substituted
    fmt_err(profile, "Use --release-version instead of --feature metadata.version=X to avoid ambiguity.",
            "KIP1022-FMT-01", release_version="3.9-IV0", features=["metadata.version=21"])


@pytest.mark.rule("KIP1022-FMT-01", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.0", "kafka-4.2"])
def test_format_release_version_with_other_features(profile: str) -> None:
    out = fmt_ok(profile, release_version="3.9-IV0", features=["transaction.version=0"])
    assert out["metadata_version"]["level"] == 21


def test_format_check_order_release_version_parsed_before_features() -> None:
    # StorageTool parses --release-version before --feature (tools-notes Q2, 3.9+ steps 3-4)
    fmt_err("kafka-4.0", "Version bogus is not a valid version. The minimum version is 3.3-IV3 and the maximum "
            "version is 4.1-IV0", "KIP1022-FMT-02", release_version="bogus", features=["kraft.version"])
    fmt_err("kafka-3.9", "Can't parse feature=level string kraft.version: equals sign not found.",
            "KIP1022-FMT-12", release_version="3.9-IV0", features=["kraft.version"])


def test_format_check_order_ambiguity_before_unsupported_feature() -> None:
    fmt_err("kafka-4.2", "Use --release-version instead of --feature metadata.version=X to avoid ambiguity.",
            "KIP1022-FMT-01", release_version="4.0", features=["nope=1", "metadata.version=21"])


def test_format_check_order_not_stable_before_unsupported_feature() -> None:
    fmt_err("kafka-4.0", "metadata.version 4.1-IV0 is not yet stable.", "KIP1022-FMT-07",
            release_version="4.1-IV0", features=["nope=1"])


# -- 3.8: non-MV features silently ignored ------------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-03", "pass")
@pytest.mark.parametrize("features", [["group.version=1"], ["nope=1"], ["kraft.version=1"], ["transaction.version=9"]])
def test_format_38_ignores_non_mv_features(features: list[str]) -> None:
    out = fmt_ok("kafka-3.8", features=features)
    assert out["metadata_version"]["level"] == 20
    assert out["levels"] == {}
    assert recs(out) == [(MV, 20)]


def test_format_38_feature_metadata_version_sets_mv_others_ignored() -> None:
    out = fmt_ok("kafka-3.8", features=["metadata.version=15", "group.version=1"])
    assert recs(out) == [(MV, 15)]


# -- Unsupported feature ----------------------------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-03", "fail")
@pytest.mark.parametrize("profile,supported", [
    ("kafka-3.9", "kraft.version, transaction.version"),
    ("kafka-4.0", "eligible.leader.replicas.version, group.version, kraft.version, transaction.version"),
    ("kafka-4.1", ("eligible.leader.replicas.version, group.version, kraft.version, share.version, streams.version, "
                  "transaction.version")),
    ("kafka-4.2", ("eligible.leader.replicas.version, group.version, kraft.version, share.version, streams.version, "
                  "transaction.version")),
])
def test_format_unsupported_feature(profile: str, supported: str) -> None:
    fmt_err(profile, f"Unsupported feature: nope. Supported features are: {supported}", "KIP1022-FMT-03",
            features=["nope=1"])


@pytest.mark.rule("KIP1022-FMT-03", "fail")
def test_format_39_group_version_unsupported() -> None:
    # 3.9.0 has GroupVersion but does not register it in Features
    fmt_err("kafka-3.9", "Unsupported feature: group.version. Supported features are: kraft.version, "
            "transaction.version", "KIP1022-FMT-03", features=["group.version=1"])


@pytest.mark.rule("KIP1022-FMT-03", "fail")
def test_format_test_feature_version_not_accepted() -> None:
    fmt_err("kafka-4.2", "Unsupported feature: test.feature.version. Supported features are: "
            "eligible.leader.replicas.version, group.version, kraft.version, share.version, streams.version, "
            "transaction.version", "KIP1022-FMT-03", features=["test.feature.version=1"])


@pytest.mark.rule("KIP1022-FMT-03", "fail")
def test_format_unsupported_feature_first_alphabetically() -> None:
    out = fmt("kafka-4.0", features=["zzz=1", "aaa=1"])
    refused(out, "TOOL_ERROR", "KIP1022-FMT-03")
    assert out["message"].startswith("Unsupported feature: aaa. ")


# -- No feature:f with feature level n ---------------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-04", "fail")
@pytest.mark.parametrize("profile,item,message", [
    ("kafka-3.9", "transaction.version=1", "No feature:transaction.version with feature level 1"),  # LP 0 in 3.9
    ("kafka-4.0", "transaction.version=3", "No feature:transaction.version with feature level 3"),
    ("kafka-4.0", "group.version=2", "No feature:group.version with feature level 2"),
    ("kafka-4.1", "streams.version=1", "No feature:streams.version with feature level 1"),  # LP 0 in 4.1.1
    ("kafka-4.2", "share.version=2", "No feature:share.version with feature level 2"),
])
def test_format_no_feature_with_level(profile: str, item: str, message: str) -> None:
    fmt_err(profile, message, "KIP1022-FMT-04", features=[item])


@pytest.mark.rule("KIP1022-FMT-04", "pass")
@pytest.mark.parametrize("profile,item", [
    ("kafka-3.9", "transaction.version=1"),
    ("kafka-4.1", "streams.version=1"),
])
def test_format_unstable_feature_level_allowed_with_unstable(profile: str, item: str) -> None:
    name, level = item.split("=")
    assert fmt_ok(profile, unstable=True, features=[item])["levels"][name] == int(level)


@pytest.mark.rule("KIP1022-FMT-04", "fail")
def test_format_kraft_check_runs_before_level_check() -> None:
    # kraft.version=999 passes the KIP-853 check with --standalone, then fails fromFeatureLevel
    fmt_err("kafka-4.0", "No feature:kraft.version with feature level 999", "KIP1022-FMT-04",
            features=["kraft.version=999"], standalone=True)
    # without a dynamic quorum the kraft.version rule fires first, even though
    # eligible.leader.replicas.version sorts before kraft.version
    fmt_err("kafka-4.0", "Cannot set kraft.version to 999 unless KIP-853 configuration is present. Try removing the "
            "--feature flag for kraft.version.", "KIP1022-FMT-09",
            features=["eligible.leader.replicas.version=5", "kraft.version=999"])


# -- dependency failures ----------------------------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-05", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.0"])
def test_format_kraft_version_1_depends_on_21(profile: str) -> None:
    fmt_err(profile, "kraft.version could not be set to 1 because it depends on metadata.version level 21",
            "KIP1022-FMT-05", release_version="3.8-IV0", features=["kraft.version=1"], standalone=True)
    # the default (1 with a dynamic quorum) is checked the same way
    fmt_err(profile, "kraft.version could not be set to 1 because it depends on metadata.version level 21",
            "KIP1022-FMT-05", release_version="3.8-IV0", standalone=True)


@pytest.mark.rule("KIP1022-FMT-05", "pass")
@pytest.mark.parametrize("profile", ["kafka-4.1", "kafka-4.2"])
def test_format_kraft_version_1_has_no_dependency_from_411(profile: str) -> None:
    out = fmt_ok(profile, release_version="3.8-IV0", features=["kraft.version=1"], standalone=True)
    assert out["levels"]["kraft.version"] == 1
    assert recs(out) == [(MV, 20)]  # kraft.version is never a bootstrap record


@pytest.mark.rule("KIP1022-FMT-05", "fail")
@pytest.mark.parametrize("profile", ["kafka-4.0", "kafka-4.1", "kafka-4.2"])
def test_format_elr_depends_on_23(profile: str) -> None:
    fmt_err(profile, "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version "
            "level 23", "KIP1022-FMT-05", release_version="4.0-IV0", features=["eligible.leader.replicas.version=1"])


@pytest.mark.rule("KIP1022-FMT-05", "pass")
def test_format_elr_at_23() -> None:
    out = fmt_ok("kafka-4.0", release_version="4.0-IV1", features=["eligible.leader.replicas.version=1"])
    assert recs(out) == [(MV, 23), (ELR, 1), ("group.version", 1)]


@pytest.mark.rule("KIP1022-FMT-05", "fail")
def test_format_39_feature_needs_metadata_version_33_iv0() -> None:
    # 3.9 validateVersion: any level >= 1 needs metadata.version >= 4 (3.3-IV0)
    fmt_err("kafka-3.9", "kraft.version could not be set to 1 because it depends on metadata.version=4 (3.3-IV0)",
            "KIP1022-FMT-05", release_version="3.2-IV0", features=["kraft.version=1"], standalone=True)


def test_format_first_failing_feature_alphabetically() -> None:
    # both checks run for one feature before the next; eligible... < group... < transaction...
    fmt_err("kafka-4.0", "eligible.leader.replicas.version could not be set to 1 because it depends on "
            "metadata.version level 23", "KIP1022-FMT-05", release_version="3.3-IV3",
            features=["transaction.version=3", "group.version=2", "eligible.leader.replicas.version=1"])
    fmt_err("kafka-4.0", "No feature:group.version with feature level 2", "KIP1022-FMT-04",
            release_version="4.0-IV1", features=["transaction.version=3", "group.version=2"])


# -- kraft.version and the quorum flags ---------------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-10", "pass")
@pytest.mark.parametrize("profile,kw,kraft", [
    ("kafka-3.9", {"standalone": True}, 1),
    ("kafka-3.9", {"initial_controllers": True}, 1),
    ("kafka-3.9", {"no_initial_controllers": True}, 0),  # KAFKA-18028, fixed only in 3.9.1
    ("kafka-3.9", {}, 0),
    ("kafka-4.0", {"standalone": True}, 1),
    ("kafka-4.0", {"initial_controllers": True}, 1),
    ("kafka-4.0", {"no_initial_controllers": True}, 1),
    ("kafka-4.0", {}, 0),
    # 4.0: the flags decide, controller.quorum.voters does not matter
    ("kafka-4.0", {"standalone": True, "static_voters": True}, 1),
    ("kafka-4.0", {"no_initial_controllers": True, "static_voters": True}, 1),
    # 4.1.1+: "dynamic" means controller.quorum.voters is empty
    ("kafka-4.1", {"standalone": True}, 1),
    ("kafka-4.1", {"no_initial_controllers": True}, 1),
    ("kafka-4.1", {"no_initial_controllers": True, "static_voters": True}, 0),
    ("kafka-4.1", {}, 0),
    ("kafka-4.2", {"initial_controllers": True}, 1),
    ("kafka-4.2", {"no_initial_controllers": True, "static_voters": False}, 1),
    ("kafka-4.2", {"no_initial_controllers": True, "static_voters": True}, 0),
])
def test_format_kraft_version_default(profile: str, kw: dict[str, Any], kraft: int) -> None:
    out = fmt_ok(profile, **kw)
    assert out["levels"]["kraft.version"] == kraft
    assert out["dynamic_quorum"] is bool(kraft)
    assert "kraft.version" not in [n for n, _ in recs(out)]


KIP853_0 = ("Cannot set kraft.version to 0 if KIP-853 configuration is present. Try removing the --feature flag "
            "for kraft.version.")
VOTERS_0 = ("Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags --standalone, "
            "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try "
            "removing the --feature flag for kraft.version.")


def _kip853_n(n: int) -> str:
    return (f"Cannot set kraft.version to {n} unless KIP-853 configuration is present. Try removing the --feature "
            "flag for kraft.version.")


def _voters_n(n: int) -> str:
    return (f"Cannot set kraft.version to {n} unless controller.quorum.voters is empty and one of the flags "
            "--standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic controllers "
            "support, try using one of --standalone, --initial-controllers, or --no-initial-controllers and "
            "removing controller.quorum.voters.")


@pytest.mark.rule("KIP1022-FMT-08", "fail")
@pytest.mark.parametrize("profile,kw,message", [
    ("kafka-3.9", {"standalone": True}, KIP853_0),
    ("kafka-3.9", {"initial_controllers": True}, KIP853_0),
    ("kafka-4.0", {"standalone": True}, KIP853_0),
    ("kafka-4.0", {"no_initial_controllers": True}, KIP853_0),
    ("kafka-4.1", {"standalone": True}, VOTERS_0),
    ("kafka-4.1", {"no_initial_controllers": True}, VOTERS_0),
    ("kafka-4.2", {"initial_controllers": True}, VOTERS_0),
])
def test_format_kraft_version_0_with_dynamic_quorum(profile: str, kw: dict[str, Any], message: str) -> None:
    fmt_err(profile, message, "KIP1022-FMT-08", features=["kraft.version=0"], **kw)


@pytest.mark.rule("KIP1022-FMT-08", "pass")
@pytest.mark.parametrize("profile,kw", [
    ("kafka-3.9", {}), ("kafka-3.9", {"no_initial_controllers": True}), ("kafka-4.0", {}),
    ("kafka-4.1", {"no_initial_controllers": True, "static_voters": True}), ("kafka-4.2", {}),
])
def test_format_kraft_version_0_with_static_quorum(profile: str, kw: dict[str, Any]) -> None:
    assert fmt_ok(profile, features=["kraft.version=0"], **kw)["levels"]["kraft.version"] == 0


@pytest.mark.rule("KIP1022-FMT-09", "fail")
@pytest.mark.parametrize("profile,kw,n,message", [
    ("kafka-3.9", {}, 1, _kip853_n(1)),
    ("kafka-3.9", {"no_initial_controllers": True}, 1, _kip853_n(1)),  # -N is not dynamic in 3.9.0
    ("kafka-4.0", {}, 1, _kip853_n(1)),
    ("kafka-4.0", {}, 2, _kip853_n(2)),  # the message uses the actual level
    ("kafka-4.1", {}, 1, _voters_n(1)),
    ("kafka-4.1", {"no_initial_controllers": True, "static_voters": True}, 1, _voters_n(1)),
    ("kafka-4.2", {}, 3, _voters_n(3)),
])
def test_format_kraft_version_n_without_dynamic_quorum(profile: str, kw: dict[str, Any], n: int,
                                                       message: str) -> None:
    fmt_err(profile, message, "KIP1022-FMT-09", features=[f"kraft.version={n}"], **kw)


@pytest.mark.rule("KIP1022-FMT-09", "pass")
@pytest.mark.parametrize("profile,kw", [
    ("kafka-3.9", {"standalone": True}), ("kafka-4.0", {"no_initial_controllers": True}),
    ("kafka-4.1", {"no_initial_controllers": True}), ("kafka-4.2", {"standalone": True}),
])
def test_format_kraft_version_1_with_dynamic_quorum(profile: str, kw: dict[str, Any]) -> None:
    assert fmt_ok(profile, features=["kraft.version=1"], **kw)["levels"]["kraft.version"] == 1


VOTERS_AND_FLAGS = ("You cannot specify controller.quorum.voters and format the node with --initial-controllers or "
                    "--standalone. If you want to use dynamic quorum, please remove controller.quorum.voters and "
                    "specify controller.quorum.bootstrap.servers instead.")
MISSING_FLAGS = ("Because controller.quorum.voters is not set on this controller, you must specify one of the "
                 "following: --standalone, --initial-controllers, or --no-initial-controllers.")


@pytest.mark.rule("KIP1022-FMT-13", "fail")
@pytest.mark.parametrize("profile", ["kafka-4.1", "kafka-4.2"])
@pytest.mark.parametrize("flag", ["standalone", "initial_controllers"])
def test_format_voters_with_standalone_or_initial_controllers(profile: str, flag: str) -> None:
    fmt_err(profile, VOTERS_AND_FLAGS, "KIP1022-FMT-13", static_voters=True, **{flag: True})


def test_format_voters_rule_runs_before_formatter_checks() -> None:
    # StorageTool step 5 precedes Formatter.run (metadata.version resolution)
    fmt_err("kafka-4.1", VOTERS_AND_FLAGS, "KIP1022-FMT-13", static_voters=True, standalone=True,
            features=["metadata.version=999"])
    # ... but follows the release-version parse (step 3)
    fmt_err("kafka-4.1", "Version bogus is not a valid version. The minimum version is 3.3-IV3 and the maximum "
            "version is 4.2-IV1", "KIP1022-FMT-02", static_voters=True, standalone=True, release_version="bogus")


@pytest.mark.rule("KIP1022-FMT-13", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.0", "kafka-4.1", "kafka-4.2"])
def test_format_missing_quorum_flag_without_voters(profile: str) -> None:
    fmt_err(profile, MISSING_FLAGS, "KIP1022-FMT-13", static_voters=False)


@pytest.mark.rule("KIP1022-FMT-13", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.0", "kafka-4.1", "kafka-4.2"])
@pytest.mark.parametrize("pair", [("standalone", "no_initial_controllers"), ("standalone", "initial_controllers"),
                                  ("initial_controllers", "no_initial_controllers")])
def test_format_quorum_flags_mutually_exclusive(profile: str, pair: tuple[str, str]) -> None:
    out = fmt(profile, **{pair[0]: True, pair[1]: True})
    refused(out, "TOOL_ERROR", "KIP1022-FMT-13")
    # argparse4j wording not verified; it names the flags involved
    assert "--" + pair[1].replace("_", "-") in out["message"] or "--" + pair[0].replace("_", "-") in out["message"]


@pytest.mark.rule("KIP1022-FMT-13", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.0", "kafka-4.1", "kafka-4.2"])
@pytest.mark.parametrize("flag", ["standalone", "initial_controllers", "no_initial_controllers"])
def test_format_single_quorum_flag(profile: str, flag: str) -> None:
    fmt_ok(profile, **{flag: True})


# -- defaults and bootstrap records -------------------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-10", "pass")
@pytest.mark.parametrize("profile,rv,levels", [
    ("kafka-3.9", "3.9-IV0", {"kraft.version": 0, "transaction.version": 0}),
    ("kafka-4.0", "4.0-IV1", {"kraft.version": 0, "transaction.version": 0, "group.version": 1, ELR: 0}),
    ("kafka-4.0", "4.0-IV2", {"kraft.version": 0, "transaction.version": 2, "group.version": 1, ELR: 0}),
    ("kafka-4.1", "4.1-IV1", {"kraft.version": 0, "transaction.version": 2, "group.version": 1, ELR: 1,
                              "share.version": 0, "streams.version": 0}),
    ("kafka-4.2", "4.2-IV0", {"kraft.version": 0, "transaction.version": 2, "group.version": 1, ELR: 1,
                              "share.version": 1, "streams.version": 0}),
])
def test_format_defaults_at_release_version(profile: str, rv: str, levels: dict[str, int]) -> None:
    assert fmt_ok(profile, release_version=rv)["levels"] == levels


@pytest.mark.rule("KIP1022-FMT-11", "pass")
def test_bootstrap_records_order_42() -> None:
    out = fmt_ok("kafka-4.2", standalone=True)
    assert out["levels"]["kraft.version"] == 1
    assert recs(out) == [(MV, 29), (ELR, 1), ("group.version", 1), ("share.version", 1), ("streams.version", 1),
                         ("transaction.version", 2)]
    assert all(r["type"] == "FeatureLevelRecord" for r in out["records"])


@pytest.mark.rule("KIP1022-FMT-11", "pass")
@pytest.mark.parametrize("profile,kw,expected", [
    ("kafka-3.7", {}, [(MV, 19)]),
    ("kafka-3.8", {}, [(MV, 20)]),
    ("kafka-3.9", {"standalone": True}, [(MV, 21)]),  # kraft.version=1 not written, TV 0 skipped
    ("kafka-4.0", {"release_version": "3.6-IV1"}, [(MV, 13)]),  # all features 0: no records
    ("kafka-4.0", {}, [(MV, 25), ("group.version", 1), ("transaction.version", 2)]),
    ("kafka-4.1", {"features": ["streams.version=1", "group.version=0"], "unstable": True, "release_version": "4.1-IV1"},
     [(MV, 27), (ELR, 1), ("streams.version", 1), ("transaction.version", 2)]),
])
def test_bootstrap_records(profile: str, kw: dict[str, Any], expected: list[tuple[str, int]]) -> None:
    assert recs(fmt_ok(profile, **kw)) == expected


# =================================================================================================
# KIP-1022 examples: kafka-storage format
# =================================================================================================

@pytest.mark.rule("KIP1022-FMT-10", "pass")
def test_kip_example_format_no_flags_gives_latest_stable() -> None:
    # "format --cluster-id=123456 // Gives the cluster all the latest stable feature versions"
    # ADAPTED: kafka-4.0; "latest stable" = each feature's default at LATEST_PRODUCTION 4.0-IV3 (ELR default is 0
    # in 4.0 although its LATEST_PRODUCTION is 1); kraft.version 0 because the quorum is static.
    out = fmt_ok("kafka-4.0")
    assert out["metadata_version"] == {"level": 25, "name": "4.0-IV3"}
    assert out["levels"] == {"kraft.version": 0, "transaction.version": 2, "group.version": 1, ELR: 0}


@pytest.mark.rule("KIP1022-FMT-10", "pass")
def test_kip_example_format_release_version_36() -> None:
    # "format --release-version 3.6-IVI" // all the versions that map to 3.6-IV1
    # ADAPTED: the KIP's "3.6-IVI" is a typo for 3.6-IV1 (kafka-4.0 rejects "3.6-IVI").
    out = fmt_ok("kafka-4.0", release_version="3.6-IV1")
    assert out["metadata_version"] == {"level": 13, "name": "3.6-IV1"}
    assert set(out["levels"].values()) == {0}
    fmt_err("kafka-4.0", "Version 3.6-IVI is not a valid version. The minimum version is 3.3-IV3 and the maximum "
            "version is 4.1-IV0", "KIP1022-FMT-02", release_version="3.6-IVI")


@pytest.mark.rule("KIP1022-FMT-10", "pass")
def test_kip_example_format_features_mv16_tv2_gv1() -> None:
    # "format --feature metadata.version=16 --feature transaction.version=2 --feature group.version=1"
    # kafka-4.0 as in the KIP (TV2 and GV1 have no dependencies beyond metadata.version >= 3.3-IV3).
    out = fmt_ok("kafka-4.0", features=["metadata.version=16", "transaction.version=2", "group.version=1"])
    assert out["metadata_version"] == {"level": 16, "name": "3.7-IV1"}
    assert recs(out) == [(MV, 16), ("group.version", 1), ("transaction.version", 2)]


@pytest.mark.rule("KIP1022-FMT-01", "fail")
def test_kip_example_format_feature_mv_and_release_version() -> None:
    # "format --feature metadata.version=16 --feature transaction.version=2 --release-version 3.3-IV2 // error"
    # ADAPTED: 3.3-IV2 does not exist in 4.x (the tool fails earlier on the version string), so kafka-4.0 uses
    # 3.3-IV3; kafka-3.9 accepts 3.3-IV2 as in the KIP.  kafka-3.8 rejects it with its own wording.
    msg = "Use --release-version instead of --feature metadata.version=X to avoid ambiguity."
    fmt_err("kafka-4.0", msg, "KIP1022-FMT-01", release_version="3.3-IV3",
            features=["metadata.version=16", "transaction.version=2"])
    fmt_err("kafka-3.9", msg, "KIP1022-FMT-01", release_version="3.3-IV2",
            features=["metadata.version=16", "transaction.version=2"])
    fmt_err("kafka-3.8", "Both --release-version and --feature were set. Only one of the two flags can be set.",
            "KIP1022-FMT-01", release_version="3.3-IV2", features=["metadata.version=16", "transaction.version=2"])


@pytest.mark.rule("KIP1022-FMT-04", "fail")
def test_kip_example_format_unknown_feature_level() -> None:
    # "format --feature transaction.version=2 // Given TV 2 is not known by the storage tool, throws error!"
    # ADAPTED: TV 2 is known from 4.0, so kafka-4.0 uses transaction.version=3; kafka-3.9 rejects TV 2 as in the
    # KIP, because 3.9's transaction.version LATEST_PRODUCTION is 0.
    fmt_err("kafka-4.0", "No feature:transaction.version with feature level 3", "KIP1022-FMT-04",
            features=["transaction.version=3"])
    fmt_err("kafka-3.9", "No feature:transaction.version with feature level 2", "KIP1022-FMT-04",
            features=["transaction.version=2"])


@pytest.mark.rule("KIP1022-FMT-05", "fail")
def test_kip_example_format_dependency_error() -> None:
    # "format --feature group.version=2 --release-version 3.3-IV2 // Given GCV2 requires MV 3.8-IV3, throws error!"
    # ADAPTED: group.version=2 and 3.8-IV3 do not exist; the real dependency of this shape is
    # eligible.leader.replicas.version=1 -> metadata.version 23 (4.0-IV1), at 3.3-IV3 (kafka-4.0).
    fmt_err("kafka-4.0", "eligible.leader.replicas.version could not be set to 1 because it depends on "
            "metadata.version level 23", "KIP1022-FMT-05", release_version="3.3-IV3",
            features=["eligible.leader.replicas.version=1"])
    # the literal KIP command on kafka-4.0: 3.3-IV2 is not a 4.x version
    fmt_err("kafka-4.0", "Version 3.3-IV2 is not a valid version. The minimum version is 3.3-IV3 and the maximum "
            "version is 4.1-IV0", "KIP1022-FMT-02", release_version="3.3-IV2", features=["group.version=2"])


# =================================================================================================
# version-mapping
# =================================================================================================

@pytest.mark.rule("KIP1022-MAP-01", "pass")
@pytest.mark.parametrize("profile,rv,lines", [
    ("kafka-4.0", None, ["metadata.version=25 (4.0-IV3)", "kraft.version=1", "transaction.version=2",
                         "group.version=1", "eligible.leader.replicas.version=0"]),
    ("kafka-4.0", "3.6-IV1", ["metadata.version=13 (3.6-IV1)", "kraft.version=0", "transaction.version=0",
                              "group.version=0", "eligible.leader.replicas.version=0"]),
    ("kafka-4.1", None, ["metadata.version=27 (4.1-IV1)", "kraft.version=1", "transaction.version=2",
                         "group.version=1", "eligible.leader.replicas.version=1", "share.version=0",
                         "streams.version=0"]),
    ("kafka-4.2", None, ["metadata.version=29 (4.2-IV1)", "kraft.version=1", "transaction.version=2",
                         "group.version=1", "eligible.leader.replicas.version=1", "share.version=1",
                         "streams.version=1"]),
])
def test_version_mapping_lines(profile: str, rv: str | None, lines: list[str]) -> None:
    assert ok(vmap(profile, rv))["lines"] == lines


@pytest.mark.rule("KIP1022-MAP-01", "pass")
@pytest.mark.parametrize("profile,rv,first", [
    ("kafka-4.0", "4.1-IV0", "metadata.version=26 (4.1-IV0)"),  # unstable explicit IV accepted
    ("kafka-4.0", "3.6", "metadata.version=14 (3.6)"),  # string echoed as typed
    ("kafka-4.1", "4.2-IV1", "metadata.version=29 (4.2-IV1)"),
    ("kafka-4.2", "4.3-IV0", "metadata.version=30 (4.3-IV0)"),  # 4.2 parses with unstable=true
    ("kafka-4.2", "4.2", "metadata.version=29 (4.2)"),
])
def test_version_mapping_release_strings(profile: str, rv: str, first: str) -> None:
    assert ok(vmap(profile, rv))["lines"][0] == first


def test_version_mapping_40_unstable_41_iv0_elr() -> None:
    assert "eligible.leader.replicas.version=1" in ok(vmap("kafka-4.0", "4.1-IV0"))["lines"]


@pytest.mark.rule("KIP1022-MAP-01", "pass")
def test_version_mapping_39_computed_from_catalogue() -> None:
    # 3.x has no version-mapping command; the reference computes it from the catalogue and says so
    out = ok(vmap("kafka-3.9", "3.6-IV1"))
    assert out["lines"] == ["metadata.version=13 (3.6-IV1)", "kraft.version=0", "transaction.version=0"]
    assert "note" in out


@pytest.mark.rule("KIP1022-MAP-02", "fail")
@pytest.mark.parametrize("profile,rv,message", [
    ("kafka-4.0", "4.1", "Unknown release version '4.1'. Supported versions are: 3.3-IV3 to 4.0-IV3"),
    ("kafka-4.0", "2.9-IV2", "Unknown release version '2.9-IV2'. Supported versions are: 3.3-IV3 to 4.0-IV3"),
    ("kafka-4.1", "foo", "Unknown release version 'foo'. Supported versions are: 3.3-IV3 to 4.1-IV1"),
    ("kafka-4.2", "2.9-IV2", (f"Unknown metadata.version '2.9-IV2'. Supported metadata.version are: {LIST_42}, "
                             "4.3-IV0")),
    ("kafka-4.2", "4.3", f"Unknown metadata.version '4.3'. Supported metadata.version are: {LIST_42}, 4.3-IV0"),
    # 3.x: no such command in the release; the reference uses the pre-4.0 trunk text (facts §5.2)
    ("kafka-3.9", "9.9-IV0", "Unknown release version '9.9-IV0'. Supported versions are: 3.3-IV0 to 3.9-IV0"),
    ("kafka-3.7", "9.9-IV0", "Unknown release version '9.9-IV0'. Supported versions are: 3.3-IV0 to 3.7-IV4"),
])
def test_version_mapping_unknown_release(profile: str, rv: str, message: str) -> None:
    out = refused(vmap(profile, rv), "TOOL_ERROR", "KIP1022-MAP-02")
    assert out["message"] == message


# KIP-1022 examples: version-mapping

@pytest.mark.rule("KIP1022-MAP-01", "pass")
def test_kip_example_version_mapping_no_argument() -> None:
    # "version-mapping // latest stable: metadata.version=19 (3.8-IV0) transaction.version=2 group.version=1
    #  kraft.version=0"
    # ADAPTED: the KIP's numbers were illustrative (3.8-IV0 is level 20, not 19).  Real output (kafka-4.0): one
    # line per production feature in enum order, kraft.version first, ELR included; kraft.version=1 at 4.0-IV3.
    assert ok(vmap("kafka-4.0"))["lines"] == [
        "metadata.version=25 (4.0-IV3)", "kraft.version=1", "transaction.version=2", "group.version=1",
        "eligible.leader.replicas.version=0"]


@pytest.mark.rule("KIP1022-MAP-01", "pass")
def test_kip_example_version_mapping_36_iv1() -> None:
    # "version-mapping --release-version 3.6-IV1 -> metadata.version=13 (3.6-IV1) transaction.version=0
    #  group.version=0 kraft.version=0"
    # ADAPTED: same levels, but one line each in enum order, plus eligible.leader.replicas.version=0 (kafka-4.0).
    lines = ok(vmap("kafka-4.0", "3.6-IV1"))["lines"]
    assert lines[0] == "metadata.version=13 (3.6-IV1)"
    assert sorted(lines[1:]) == sorted(["transaction.version=0", "group.version=0", "kraft.version=0",
                                        "eligible.leader.replicas.version=0"])


@pytest.mark.rule("KIP1022-MAP-02", "fail")
def test_kip_example_version_mapping_29_iv2_error() -> None:
    # "version-mapping --release-version 2.9-IV2 // throws error, not a valid version" (kafka-4.0 text)
    out = refused(vmap("kafka-4.0", "2.9-IV2"), "TOOL_ERROR", "KIP1022-MAP-02")
    assert out["message"] == "Unknown release version '2.9-IV2'. Supported versions are: 3.3-IV3 to 4.0-IV3"


# =================================================================================================
# feature-dependencies
# =================================================================================================

@pytest.mark.rule("KIP1022-DEP-01", "pass")
@pytest.mark.parametrize("profile,item,lines", [
    ("kafka-4.0", "kraft.version=1", ["kraft.version=1 requires:", "    metadata.version=21 (3.9-IV0)"]),
    ("kafka-4.1", "kraft.version=1", ["kraft.version=1 has no dependencies."]),  # 4.1.1 (KAFKA-19719)
    ("kafka-4.2", "kraft.version=1", ["kraft.version=1 has no dependencies."]),
    ("kafka-4.0", "eligible.leader.replicas.version=1",
     ["eligible.leader.replicas.version=1 requires:", "    metadata.version=23 (4.0-IV1)"]),
    ("kafka-4.1", "eligible.leader.replicas.version=1",
     ["eligible.leader.replicas.version=1 requires:", "    metadata.version=23 (4.0-IV1)"]),
    ("kafka-4.2", "eligible.leader.replicas.version=1",
     ["eligible.leader.replicas.version=1 requires:", "    metadata.version=23 (4.0-IV1)"]),
    ("kafka-4.1", "share.version=1", ["share.version=1 has no dependencies."]),
    ("kafka-4.2", "share.version=1", ["share.version=1 has no dependencies."]),
    ("kafka-4.2", "streams.version=1", ["streams.version=1 has no dependencies."]),
    ("kafka-4.1", "streams.version=1", ["streams.version=1 has no dependencies."]),  # unstable levels allowed
    ("kafka-4.0", "group.version=1", ["group.version=1 has no dependencies."]),
    ("kafka-4.0", "transaction.version=1", ["transaction.version=1 has no dependencies."]),
    ("kafka-4.0", "kraft.version=0", ["kraft.version=0 has no dependencies."]),
    ("kafka-4.0", "metadata.version=17", ["metadata.version=17 (3.7-IV2) has no dependencies."]),
    ("kafka-4.2", "metadata.version=30", ["metadata.version=30 (4.3-IV0) has no dependencies."]),
])
def test_feature_dependencies(profile: str, item: str, lines: list[str]) -> None:
    assert ok(deps(profile, item))["lines"] == lines


@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_feature_dependencies_argument_order() -> None:
    assert ok(deps("kafka-4.0", "group.version=1", "kraft.version=1"))["lines"] == [
        "group.version=1 has no dependencies.", "kraft.version=1 requires:", "    metadata.version=21 (3.9-IV0)"]


@pytest.mark.rule("KIP1022-DEP-02", "fail")
@pytest.mark.parametrize("profile,item,message", [
    ("kafka-4.0", "share.version=1", "Unknown feature: share.version"),
    ("kafka-4.2", "nope=1", "Unknown feature: nope"),
    ("kafka-4.2", "test.feature.version=1", "Unknown feature: test.feature.version"),
    ("kafka-4.0", "group.version=5", "Feature level 5 is not supported for feature group.version"),
    ("kafka-4.2", "transaction.version=3", "Feature level 3 is not supported for feature transaction.version"),
    ("kafka-4.0", "metadata.version=99", "Unknown metadata.version 99"),
    ("kafka-4.0", "metadata.version=6", "Unknown metadata.version 6"),
    ("kafka-4.0", "kraft.version=abc", "Invalid version format: abc for feature kraft.version"),
    ("kafka-4.2", "kraft.version=abc", "Invalid version format: abc for feature kraft.version"),
    ("kafka-4.2", "kraft.version", ("Invalid feature format: kraft.version. Expected format: 'feature=version' "
                                   "(e.g. 'group.version=1')")),
    ("kafka-4.2", "a=1=2", "Invalid version format: 1=2 for feature a"),  # split("=", 2)
])
def test_feature_dependencies_errors(profile: str, item: str, message: str) -> None:
    out = refused(deps(profile, item), "TOOL_ERROR", "KIP1022-DEP-02")
    assert out["message"] == message


@pytest.mark.rule("KIP1022-DEP-02", "fail")
@pytest.mark.parametrize("profile", ["kafka-4.0", "kafka-4.1"])
def test_feature_dependencies_malformed_40_41(profile: str) -> None:
    # real 4.0/4.1.x: `val Array(featureName, versionStr) = featureArg.split("=")` (StorageTool.scala:209@4.1.1)
    # throws scala.MatchError; its message is the String[]'s toString, identity hash written "@…".  The kafka-jvm
    # harness (Kafka 4.1.1's StorageTool.execute) answers '[Ljava.lang.String;@4aaae508 (of class
    # [Ljava.lang.String;)' for "kraft.version"; Java's split drops trailing empty strings, so "a=" fails the same way.
    for item in ("kraft.version", "a=1=2", "a=", "="):
        out = refused(deps(profile, item), "TOOL_ERROR", "KIP1022-DEP-02")
        assert out["message"] == "[Ljava.lang.String;@… (of class [Ljava.lang.String;)", (item, out)
    out = refused(deps(profile, "=1"), "TOOL_ERROR", "KIP1022-DEP-02")  # ["", "1"]: two parts, no MatchError
    assert out["message"] == "Unknown feature: ", out


@pytest.mark.rule("KIP1022-DEP-02", "fail")
@pytest.mark.parametrize("profile", ["kafka-4.0", "kafka-4.1"])
def test_feature_dependencies_40_41_do_not_trim_level(profile: str) -> None:
    out = refused(deps(profile, "kraft.version= 1"), "TOOL_ERROR", "KIP1022-DEP-02")
    assert out["message"] == "Invalid version format:  1 for feature kraft.version"


@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_feature_dependencies_42_trims() -> None:
    assert ok(deps("kafka-4.2", " kraft.version = 1 "))["lines"] == ["kraft.version=1 has no dependencies."]


@pytest.mark.rule("KIP1022-DEP-02", "fail")
def test_feature_dependencies_requires_a_feature() -> None:
    refused(deps("kafka-4.2"), "TOOL_ERROR", "KIP1022-DEP-02")


# KIP-1022 examples: feature-dependencies

@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_kip_example_feature_dependencies_tv2() -> None:
    # "feature-dependencies --feature transaction.version=2 -> transaction.version=2 requires:
    #  metadata.version=4 (3.3-IV0)"
    # ADAPTED: the shipped TransactionVersion declares no dependencies (the minimum-metadata.version rule lives in
    # validateVersion, not in dependencies()), so kafka-4.0 and kafka-4.2 print "has no dependencies."
    for profile in ("kafka-4.0", "kafka-4.2"):
        assert ok(deps(profile, "transaction.version=2"))["lines"] == ["transaction.version=2 has no dependencies."]


@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_kip_example_feature_dependencies_mv17() -> None:
    # "feature-dependencies --feature metadata.version=17 -> metadata.version=17 (3.7-IV2) has no dependencies"
    # ADAPTED: the real line ends with a period.
    assert ok(deps("kafka-4.0", "metadata.version=17"))["lines"] == [
        "metadata.version=17 (3.7-IV2) has no dependencies."]


# =================================================================================================
# kafka-features upgrade / downgrade / disable
# =================================================================================================

DEPRECATED = " `metadata` flag is deprecated and may be removed in a future release."


@pytest.mark.rule("KIP1022-TOOL-04", "pass")
def test_upgrade_release_version_40_skips_default_zero() -> None:
    c = cluster("kafka-4.0", release_version="3.9-IV0", standalone=True)
    out = tool(c, "upgrade", release_version="4.0", dry_run=True)
    # tools-notes Q4 example: metadata.version=25, kraft.version=1, transaction.version=2, group.version=1; ELR 0
    # skipped
    assert updates(out) == [(MV, 25, "UPGRADE"), ("kraft.version", 1, "UPGRADE"),
                            ("transaction.version", 2, "UPGRADE"), ("group.version", 1, "UPGRADE")]
    assert out["request"]["validate_only"] is True


@pytest.mark.rule("KIP1022-TOOL-04", "pass")
def test_upgrade_release_version_42() -> None:
    c = cluster("kafka-4.2", release_version="3.9-IV0", standalone=True)
    out = tool(c, "upgrade", release_version="4.2-IV1", dry_run=True)
    assert updates(out) == [(MV, 29, "UPGRADE"), ("kraft.version", 1, "UPGRADE"),
                            ("transaction.version", 2, "UPGRADE"), ("group.version", 1, "UPGRADE"),
                            (ELR, 1, "UPGRADE"), ("share.version", 1, "UPGRADE"), ("streams.version", 1, "UPGRADE")]


@pytest.mark.rule("KIP1022-TOOL-04", "pass")
def test_upgrade_release_version_sends_kraft_version_1_from_39() -> None:
    # KAFKA-21426: kraft.version=1 is sent for any rv >= 3.9-IV0, even on a static quorum
    c = cluster("kafka-4.0", release_version="3.8-IV0")
    out = tool(c, "upgrade", release_version="3.9-IV0", dry_run=True)
    assert updates(out) == [(MV, 21, "UPGRADE"), ("kraft.version", 1, "UPGRADE")]


@pytest.mark.rule("KIP1022-TOOL-04", "pass")
@pytest.mark.parametrize("unsafe,utype", [(False, "SAFE_DOWNGRADE"), (True, "UNSAFE_DOWNGRADE")])
def test_downgrade_release_version_sends_every_feature(unsafe: bool, utype: str) -> None:
    c = cluster("kafka-4.0")
    out = tool(c, "downgrade", release_version="3.6-IV1", unsafe=unsafe, dry_run=True)
    assert updates(out) == [(MV, 13, utype), ("kraft.version", 0, utype), ("transaction.version", 0, utype),
                            ("group.version", 0, utype), (ELR, 0, utype)]


@pytest.mark.rule("KIP1022-TOOL-02", "fail")
@pytest.mark.parametrize("kw", [{"features": ["group.version=1"]}, {"metadata": "4.0"},
                                {"features": ["group.version=1"], "metadata": "4.0"}])
@pytest.mark.parametrize("profile", ["kafka-4.0", "kafka-4.2"])
def test_release_version_with_other_flags(profile: str, kw: dict[str, Any]) -> None:
    c = cluster(profile)
    tool_err(c, "upgrade", "Can not specify `release-version` with other feature flags.", "KIP1022-TOOL-02",
             release_version="4.0", **kw)


@pytest.mark.rule("KIP1022-TOOL-02", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8", "kafka-3.9"])
def test_3x_features_tool_has_no_release_version(profile: str) -> None:
    c = cluster(profile)
    refused(tool(c, "upgrade", release_version="3.7-IV4"), "TOOL_ERROR", "KIP1022-TOOL-02")


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
@pytest.mark.parametrize("profile,key,message", [
    ("kafka-3.7", "metadata", "Unsupported metadata version 9.9. Supported metadata versions are "
                              + ", ".join(MVS_3X)),
    ("kafka-3.8", "metadata", "Unsupported metadata.version 9.9. Supported metadata.version are "
                              + ", ".join(MVS_3X + ["3.8-IV0"])),
    ("kafka-3.9", "metadata", "Unsupported metadata.version 9.9. Supported metadata.version are "
                              + ", ".join(MVS_3X + ["3.8-IV0", "3.9-IV0"])),
    ("kafka-4.0", "release_version", "Unknown metadata.version 9.9. Supported metadata.version are "
                                     + ", ".join(MVS_4X[:MVS_4X.index("4.0-IV3") + 1])),
    ("kafka-4.0", "metadata", "Unknown metadata.version 9.9. Supported metadata.version are "
                              + ", ".join(MVS_4X[:MVS_4X.index("4.0-IV3") + 1])),
    ("kafka-4.1", "release_version", "Unknown metadata.version 9.9. Supported metadata.version are "
                                     + ", ".join(MVS_4X[:MVS_4X.index("4.1-IV1") + 1])),
    ("kafka-4.2", "release_version", (f"Unknown metadata.version '9.9'. Supported metadata.version are: {LIST_42}, "
                                     "4.3-IV0")),
])
def test_features_tool_unknown_metadata_version(profile: str, key: str, message: str) -> None:
    c = cluster(profile)
    out = tool(c, "upgrade", **{key: "9.9"})
    refused(out, "TOOL_ERROR", "KIP1022-TOOL-03")
    assert out["message"] == message


@pytest.mark.rule("KIP1022-TOOL-04", "pass")
def test_features_tool_42_release_version_accepts_unstable() -> None:
    c = cluster("kafka-4.2")
    out = tool(c, "upgrade", release_version="4.3-IV0", dry_run=True)
    assert updates(out)[0] == (MV, 30, "UPGRADE")


@pytest.mark.parametrize("profile", ["kafka-4.0", "kafka-4.1", "kafka-4.2"])
def test_metadata_flag_deprecation_line_4x(profile: str) -> None:
    c = cluster(profile, release_version="3.9-IV0")
    out = ok(tool(c, "upgrade", metadata="4.0-IV0"))
    assert out["lines"] == [DEPRECATED, "metadata.version was upgraded to 22."]
    assert out["lines"][0].startswith(" ")  # leading space, as printed


@pytest.mark.parametrize("profile,rv,target,level", [
    ("kafka-3.7", "3.6-IV2", "3.7-IV4", 19), ("kafka-3.8", "3.7-IV4", "3.8-IV0", 20),
    ("kafka-3.9", "3.8-IV0", "3.9-IV0", 21),
])
def test_metadata_flag_no_deprecation_line_3x(profile: str, rv: str, target: str, level: int) -> None:
    c = cluster(profile, release_version=rv)
    out = ok(tool(c, "upgrade", metadata=target))
    assert out["lines"] == [f"metadata.version was upgraded to {level}."]
    assert out["exit_code"] == 0


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.9", "kafka-4.0", "kafka-4.2"])
@pytest.mark.parametrize("action,features", [
    ("upgrade", ["group.version=1", "group.version=1"]),
    ("downgrade", ["group.version=0", "group.version=1"]),
    ("disable", ["group.version", "group.version"]),
])
def test_duplicate_feature(profile: str, action: str, features: list[str]) -> None:
    c = cluster(profile)
    tool_err(c, action, "Feature group.version was specified more than once.", "KIP1022-TOOL-03", features=features)


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
@pytest.mark.parametrize("profile,metadata", [("kafka-3.9", "3.9-IV0"), ("kafka-4.0", "4.0-IV3")])
def test_duplicate_metadata_version_via_metadata_and_feature(profile: str, metadata: str) -> None:
    c = cluster(profile)
    tool_err(c, "upgrade", "Feature metadata.version was specified more than once.", "KIP1022-TOOL-03",
             metadata=metadata, features=["metadata.version=21"])


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.8", "kafka-4.0", "kafka-4.2"])
@pytest.mark.parametrize("item,message", [
    ("group.version", "Can't parse feature=level string group.version: equals sign not found."),
    ("group.version=x", "Can't parse feature=level string group.version=x: unable to parse x as a short."),
])
def test_features_tool_parse_errors(profile: str, item: str, message: str) -> None:
    c = cluster(profile)
    tool_err(c, "upgrade", message, "KIP1022-TOOL-03", features=[item])


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-4.0"])
@pytest.mark.parametrize("action", ["upgrade", "downgrade"])
def test_negative_level(profile: str, action: str) -> None:
    c = cluster(profile)
    tool_err(c, action, "Cannot specify a negative version level.", "KIP1022-TOOL-03",
             features=["group.version=-1"])


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
@pytest.mark.parametrize("profile,message", [
    ("kafka-3.7", "The downgradeType flag should be set to SAFE or UNSAFE when the provided maxVersionLevel:0 is < 1."),
    ("kafka-3.8", "The downgradeType flag should be set to SAFE or UNSAFE when the provided maxVersionLevel:0 is < 1."),
    ("kafka-3.9", ("The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the provided "
                  "maxVersionLevel:0 is < 1.")),
    ("kafka-4.0", ("The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the provided "
                  "maxVersionLevel:0 is < 1.")),
    ("kafka-4.2", ("The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the provided "
                  "maxVersionLevel:0 is < 1.")),
])
def test_upgrade_to_level_0(profile: str, message: str) -> None:
    c = cluster(profile)
    tool_err(c, "upgrade", message, "KIP1022-TOOL-03", features=["group.version=0"])


@pytest.mark.rule("KIP1022-TOOL-05", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-4.0", "kafka-4.2"])
@pytest.mark.parametrize("action", ["upgrade", "downgrade", "disable"])
def test_at_least_one_feature(profile: str, action: str) -> None:
    c = cluster(profile)
    tool_err(c, action, f"You must specify at least one feature to {action}", "KIP1022-TOOL-05")


@pytest.mark.rule("KIP1022-TOOL-05", "pass")
def test_one_feature_is_enough() -> None:
    c = cluster("kafka-4.0", release_version="3.9-IV0")
    assert ok(tool(c, "upgrade", features=["group.version=1"]))["lines"] == ["group.version was upgraded to 1."]


def test_success_lines_sorted_by_name() -> None:
    c = cluster("kafka-4.0", release_version="3.5-IV2")
    out = ok(tool(c, "upgrade", features=["transaction.version=1", "metadata.version=22", "group.version=1"]))
    assert out["lines"] == ["group.version was upgraded to 1.", "metadata.version was upgraded to 22.",
                            "transaction.version was upgraded to 1."]
    assert out["exit_code"] == 0


def test_downgrade_and_disable_success_lines() -> None:
    c = cluster("kafka-4.0")
    assert ok(tool(c, "downgrade", features=["transaction.version=1"]))["lines"] == [
        "transaction.version was downgraded to 1."]
    assert ok(tool(c, "disable", features=["group.version"]))["lines"] == ["group.version was disabled."]
    state = ok(c.apply({"op": "state"}))
    assert "group.version" not in state["finalized"]
    assert state["finalized"]["transaction.version"] == 1


def test_dry_run_lines_write_nothing() -> None:
    c = cluster("kafka-4.0")
    epoch = c.apply({"op": "state"})["epoch"]
    assert ok(tool(c, "upgrade", features=["eligible.leader.replicas.version=1"], dry_run=True))["lines"] == [
        "eligible.leader.replicas.version can be upgraded to 1."]
    assert ok(tool(c, "downgrade", features=["transaction.version=1"], dry_run=True))["lines"] == [
        "transaction.version can be downgraded to 1."]
    assert ok(tool(c, "disable", features=["group.version"], dry_run=True))["lines"] == ["group.version can be disabled."]
    assert c.apply({"op": "state"})["epoch"] == epoch


@pytest.mark.rule("KIP1022-TOOL-06", "fail")
def test_3x_per_feature_results_and_partial_apply() -> None:
    # 3.9 controller (UpdateFeatures v0-1): per-feature results; the passing feature prints success and is applied
    c = cluster("kafka-3.9", release_version="3.8-IV0")
    out = tool(c, "upgrade", features=["metadata.version=21", "transaction.version=1"])
    assert out["error"] != "NONE" and out["exit_code"] == 1
    lines = out["lines"]
    assert lines[0] == "metadata.version was upgraded to 21."
    assert lines[1].startswith("Could not upgrade transaction.version to 1. ")
    assert "The update failed for all features" not in lines[1]
    # The summary is FeatureCommand's TerseException, printed by main on stderr
    # (FeatureCommand.java:318 and :58-71@3.7.0; :464 and :61-74@4.0.0): stdout has the feature lines only.
    assert out["stderr"] == ["1 out of 2 operation(s) failed."] == [out["message"]]
    assert len(lines) == 2
    assert c.apply({"op": "state"})["metadata_version"] == 21


@pytest.mark.rule("KIP1022-TOOL-06", "fail")
@pytest.mark.parametrize("profile", ["kafka-4.0", "kafka-4.2"])
def test_4x_every_feature_could_not(profile: str) -> None:
    c = cluster(profile, release_version="3.9-IV0")
    out = tool(c, "upgrade", features=["metadata.version=22", "transaction.version=3", "group.version=1"])
    assert out["exit_code"] == 1
    lines = out["lines"]
    prefix = "The update failed for all features since the following feature had an error: "
    assert lines[0].startswith("Could not upgrade group.version to 1. " + prefix)
    assert lines[1].startswith("Could not upgrade metadata.version to 22. " + prefix)
    assert lines[2].startswith("Could not upgrade transaction.version to 3. " + prefix)
    assert len({ln.split(". ", 1)[1] for ln in lines[:3]}) == 1  # the same message on every line
    assert len(lines) == 3 and out["stderr"] == ["3 out of 3 operation(s) failed."]
    assert c.apply({"op": "state"})["metadata_version"] == 21


@pytest.mark.rule("KIP1022-TOOL-06", "fail")
def test_dry_run_failure_lines() -> None:
    c = cluster("kafka-4.0", release_version="3.9-IV0")
    out = tool(c, "upgrade", features=["transaction.version=3"], dry_run=True)
    assert out["lines"][0].startswith("Can not upgrade transaction.version to 3. ")
    assert out["stderr"] == ["1 out of 1 operation(s) failed."]
    out = tool(c, "disable", features=["metadata.version"], dry_run=True)
    assert out["lines"][0].startswith("Can not disable metadata.version. ")


@pytest.mark.rule("KIP1022-TOOL-06", "fail")
def test_disable_failure_line() -> None:
    c = cluster("kafka-4.0")
    out = tool(c, "disable", features=["metadata.version"])
    assert out["lines"][0].startswith("Could not disable metadata.version. ")
    assert out["stderr"] == ["1 out of 1 operation(s) failed."] and len(out["lines"]) == 1


def test_describe_lines_40() -> None:
    # one line per supported feature, sorted; metadata.version levels as version strings; level 0 when not
    # finalized; epoch = offset of the last metadata record (3 bootstrap records: offsets 0-2)
    c = cluster("kafka-4.0")
    out = ok(tool(c, "describe"))
    assert out["lines"] == [
        ("Feature: eligible.leader.replicas.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\t"
        "FinalizedVersionLevel: 0\tEpoch: 2"),
        "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1\tEpoch: 2",
        "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\tEpoch: 2",
        ("Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.0-IV3\t"
        "FinalizedVersionLevel: 4.0-IV3\tEpoch: 2"),
        ("Feature: transaction.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 2\tFinalizedVersionLevel: 2\t"
        "Epoch: 2"),
    ]



# kafka-features describe from 4.3.0 (KAFKA-19941): FeatureCommand.java:251@4.3.0 (confluentinc/kafka a9ce322153,
# "Bump version to 4.3.0"; unchanged at 4.3.1 26b251a451 and in the 4.3.0 / 4.3.1 / 4.4.0 jars) prints
# "Feature: %-40s  SupportedMinVersion: %-15s  SupportedMaxVersion: %-15s  FinalizedVersionLevel: %-15s  Epoch: %s".
# The lines below are that format written out by hand (and what the 4.3.1 jar's handleDescribe printed for the
# same FeatureMetadata); FeatureCommandTest@4.3.0 only matches them with \s+ (assertFeatureOutput, :823-838).
def _padded(name: str, lo: str, hi: str, fin: str, epoch: str) -> str:
    return (f"Feature: {name}{' ' * (40 - len(name))}  SupportedMinVersion: {lo}{' ' * (15 - len(lo))}  "
            f"SupportedMaxVersion: {hi}{' ' * (15 - len(hi))}  FinalizedVersionLevel: {fin}{' ' * (15 - len(fin))}  "
            f"Epoch: {epoch}")


@pytest.mark.rule("KIP1022-OBS-01", "pass")
def test_describe_lines_43_padded() -> None:
    c = cluster("kafka-4.3")
    out = ok(tool(c, "describe"))
    assert out["lines"][0] == ("Feature: eligible.leader.replicas.version          SupportedMinVersion: 0"
                               "                SupportedMaxVersion: 1                FinalizedVersionLevel: 1"
                               "                Epoch: 5")
    assert out["lines"] == [
        _padded(ELR, "0", "1", "1", "5"),
        _padded("group.version", "0", "1", "1", "5"),
        _padded("kraft.version", "0", "1", "0", "5"),
        _padded(MV, "3.3-IV3", "4.3-IV0", "4.3-IV0", "5"),
        _padded("share.version", "0", "1", "1", "5"),
        _padded("streams.version", "0", "1", "1", "5"),
        _padded("transaction.version", "0", "2", "2", "5"),
    ]
    assert "\t" not in "".join(out["lines"])


@pytest.mark.rule("KIP1022-OBS-01", "pass")
@pytest.mark.parametrize(("profile", "layout"), [("kafka-3.7", "tabs"), ("kafka-4.1", "tabs"), ("kafka-4.2", "tabs"),
                                                 ("kafka-4.3", "padded"), ("kafka-4.4", "padded"),
                                                 ("kip-1155", "padded")])
def test_describe_layout_per_release(profile: str, layout: str) -> None:
    """Tabs up to 4.2 (FeatureCommand.java:244 on the 4.2 branch, the 3.7.0-4.2.2 jars), padded from 4.3.0."""
    c = cluster(profile)
    line = next(x for x in ok(tool(c, "describe"))["lines"] if x.startswith(f"Feature: {MV}"))
    mv = c.apply({"op": "state"})["metadata_version"]
    name = c.active_profile.mv_name(mv)
    lo = c.active_profile.mv_name(c.apply({"op": "api_versions"})["supported"][MV][0])
    hi = c.active_profile.mv_name(c.apply({"op": "api_versions"})["supported"][MV][1])
    epoch = str(c.apply({"op": "api_versions"})["epoch"])
    if layout == "tabs":
        assert line == (f"Feature: {MV}\tSupportedMinVersion: {lo}\tSupportedMaxVersion: {hi}\t"
                        f"FinalizedVersionLevel: {name}\tEpoch: {epoch}")
    else:
        assert line == _padded(MV, lo, hi, name, epoch)


@pytest.mark.rule("KIP1022-OBS-01", "pass")
def test_describe_layout_is_the_tools_release() -> None:
    """The printf and levelToString are the tool's (its jar's) own: a 4.3 kafka-features pads against a 4.2
    cluster, a 4.2 one prints tabs against a 4.3 cluster."""
    out = ok(tool(cluster("kafka-4.2"), "describe", profile="kafka-4.3"))
    assert out["lines"][0] == _padded(ELR, "0", "1", "1", "5"), out["lines"]
    out = ok(tool(cluster("kafka-4.3"), "describe", profile="kafka-4.2"))
    assert out["lines"][0] == ("Feature: eligible.leader.replicas.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1"
                               "\tFinalizedVersionLevel: 1\tEpoch: 5"), out["lines"]


def test_describe_lines_edges() -> None:
    """%-40s never cuts a longer name; an unknown metadata.version level is "UNKNOWN n" (levelToString,
    FeatureCommand.java:227-236@4.3.0); an absent epoch (FinalizedFeaturesEpoch < 0) is "-"
    (KafkaAdminClient.java:4547-4552 and FeatureCommand.java:256@4.3.0, the same in the 3.7.0 jar)."""
    from reference_impl._catalog import load_profile
    from reference_impl.api import describe_lines

    long_name = "x" * 45
    supported = {MV: [7, 99], long_name: [0, 3]}
    padded = describe_lines(load_profile("kafka-4.3"), supported, {MV: 99}, -1)
    assert padded == [_padded(MV, "3.3-IV3", "UNKNOWN 99", "UNKNOWN 99", "-"),
                      (f"Feature: {long_name}  SupportedMinVersion: 0{' ' * 14}  SupportedMaxVersion: 3{' ' * 14}  "
                       f"FinalizedVersionLevel: 0{' ' * 14}  Epoch: -")]
    tabs = describe_lines(load_profile("kafka-4.2"), supported, {}, -1)
    assert tabs[0] == ("Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: UNKNOWN 99\t"
                       "FinalizedVersionLevel: UNKNOWN 0\tEpoch: -")


# KIP-1022 examples: kafka-features

@pytest.mark.rule("KIP1022-TOOL-05", "fail")
def test_kip_example_upgrade_no_arguments() -> None:
    # "kafka-features.sh upgrade // Sets the cluster to all the latest stable feature versions"
    # ADAPTED: not implemented that way: with no flag the tool fails (kafka-4.0); use --release-version.
    c = cluster("kafka-4.0", release_version="3.9-IV0")
    tool_err(c, "upgrade", "You must specify at least one feature to upgrade", "KIP1022-TOOL-05")


def test_kip_example_upgrade_transaction_version_2() -> None:
    # "upgrade --feature transaction.version=2 // Sets the transaction version to 2" (kafka-4.0, from 3.9-IV0)
    c = cluster("kafka-4.0", release_version="3.9-IV0")
    assert ok(tool(c, "upgrade", features=["transaction.version=2"]))["lines"] == [
        "transaction.version was upgraded to 2."]


def test_kip_example_upgrade_mv16_tv2_gv1() -> None:
    # "upgrade --feature metadata.version=16 --feature transaction.version=2 --feature group.version=1"
    # kafka-4.0 cluster formatted at 3.5-IV2 (15 > 11); output sorted by feature name
    c = cluster("kafka-4.0", release_version="3.5-IV2")
    out = ok(tool(c, "upgrade", features=["metadata.version=16", "transaction.version=2", "group.version=1"]))
    assert out["lines"] == ["group.version was upgraded to 1.", "metadata.version was upgraded to 16.",
                            "transaction.version was upgraded to 2."]


@pytest.mark.rule("KIP1022-TOOL-04", "pass")
def test_kip_example_upgrade_release_version_36() -> None:
    # "upgrade --release-version 3.6-IVI // Upgrades all the features to versions that map to 3.6-IV1"
    # ADAPTED: "3.6-IVI" read as 3.6-IV1; every non-MV default at 3.6-IV1 is 0, so upgrade sends only
    # metadata.version (kafka-4.0, cluster at 3.5-IV2).
    c = cluster("kafka-4.0", release_version="3.5-IV2")
    out = ok(tool(c, "upgrade", release_version="3.6-IV1"))
    assert updates(out) == [(MV, 13, "UPGRADE")]
    assert out["lines"] == ["metadata.version was upgraded to 13."]


@pytest.mark.rule("KIP1022-TOOL-06", "fail")
def test_kip_example_downgrade_that_is_an_upgrade() -> None:
    # "downgrade --feature metadata.version=16 --feature transaction.version=2 // Throws error if metadata version
    #  is < 16, and this would be an upgrade"
    # kafka-4.0 cluster at 3.5-IV2 (11): the controller refuses ("Can't downgrade to a newer version"), and with the
    # v2 fail-fast response every feature prints "Could not".
    c = cluster("kafka-4.0", release_version="3.5-IV2")
    out = tool(c, "downgrade", features=["metadata.version=16", "transaction.version=2"])
    assert out["error"] == "INVALID_UPDATE_VERSION"
    assert out["lines"][0].startswith("Could not downgrade metadata.version to 16. ")
    assert out["lines"][1].startswith("Could not downgrade transaction.version to 2. ")
    assert "Can't downgrade to a newer version." in out["lines"][0]
    assert out["stderr"] == ["2 out of 2 operation(s) failed."] and len(out["lines"]) == 2


@pytest.mark.rule("KIP1022-TOOL-02", "fail")
def test_kip_example_feature_with_release_version() -> None:
    # "upgrade --feature transaction.version=2 --release-version 3.6-IVI // Throws error!" (kafka-4.0)
    c = cluster("kafka-4.0")
    tool_err(c, "upgrade", "Can not specify `release-version` with other feature flags.", "KIP1022-TOOL-02",
             features=["transaction.version=2"], release_version="3.6-IV1")


# -- passing cases of the tools' refusal rules: well-formed input goes through ------------------

@pytest.mark.rule("KIP1022-DEP-02", "pass")
@pytest.mark.parametrize("profile", ["kafka-4.0", "kafka-4.2"])
def test_feature_dependencies_accepts_known_feature_and_level(profile: str) -> None:
    out = ok(deps(profile, "group.version=1", "metadata.version=21"))
    assert out["lines"] == ["group.version=1 has no dependencies.", "metadata.version=21 (3.9-IV0) has no dependencies."]


@pytest.mark.rule("KIP1022-MAP-02", "pass")
@pytest.mark.parametrize("profile,rv,level", [("kafka-4.0", "3.9", 21), ("kafka-4.2", "4.2", 29),
                                              ("kafka-4.1", "4.0-IV1", 23)])
def test_version_mapping_accepts_release_strings(profile: str, rv: str, level: int) -> None:
    out = ok(Cluster(profile).apply({"op": "version_mapping", "release_version": rv}))
    assert out["lines"][0] == f"metadata.version={level} ({rv})"


def _tool_cluster(profile: str) -> Cluster:
    c = Cluster(profile)
    ok(c.apply({"op": "format", "release_version": "3.9-IV0"}))
    return c


@pytest.mark.rule("KIP1022-TOOL-02", "pass")
def test_features_tool_release_version_alone_is_accepted() -> None:
    c = _tool_cluster("kafka-4.2")
    out = ok(c.apply({"op": "features_tool", "action": "upgrade", "release_version": "4.0-IV3", "dry_run": True}))
    assert {u["feature"] for u in out["request"]["updates"]} == {
        "metadata.version", "kraft.version", "transaction.version", "group.version"}


@pytest.mark.rule("KIP1022-TOOL-03", "pass")
def test_features_tool_distinct_well_formed_features_are_accepted() -> None:
    c = _tool_cluster("kafka-4.2")
    out = ok(c.apply({"op": "features_tool", "action": "upgrade",
                      "features": ["group.version=1", "transaction.version=2"]}))
    assert out["lines"] == ["group.version was upgraded to 1.", "transaction.version was upgraded to 2."]
    assert out["exit_code"] == 0


@pytest.mark.rule("KIP1022-TOOL-06", "pass")
def test_features_tool_success_exits_0_without_a_failure_count() -> None:
    c = _tool_cluster("kafka-4.0")
    out = ok(c.apply({"op": "features_tool", "action": "upgrade", "features": ["group.version=1"]}))
    assert out["exit_code"] == 0 and not any("operation(s) failed" in line for line in out["lines"])
