"""Kafka's tool / feature-version unit tests at the tags not covered by test_kafka_cases_tools.py.

Same conventions as tests/test_kafka_cases_tools.py (whose helpers are reused): tests are named
``test_<Class>_<method>__<tag>``, each docstring gives path:line@tag, the profile is the tag's release.
Tags 3.7.0 / 3.8.0 are read in apache/kafka, 4.0.0 / 4.1.0 / 4.2.0-rc1 in aiven/inkless.  4.2.0-rc1 runs
against ``kafka-4.2`` (4.2.0-rc1 code).  Only expressible assertions are made; docs/kafka-cases-tools.md
("Other tags") lists the rest.  A Kafka assertion the reference does not meet is kept as
``xfail(strict=True, reason="reference differs: ...")``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import ok, refused
from test_kafka_cases_tools import (
    ARGPARSE_DIFFERS,
    DYN_INITIAL,
    DYN_NO_INITIAL,
    ELR,
    MV,
    PRINTED_DIFFERS,
    STATIC,
    _features_tool_cmd,
    _mapping_contains,
    _mock_admin_cluster,
    described,
    features_tool,
    fmt,
    kraft_cluster,
    printed_format_line,
    stdout,
    tool_error,
)

from reference_impl import Cluster

P37, P38, P40, P410, P42 = "kafka-3.7", "kafka-3.8", "kafka-4.0", "kafka-4.1.0", "kafka-4.2"

# levels: MINIMUM_VERSION 3.3-IV3 is 7 (4.x); 3.3-IV0 is 4 and 3.0-IV1 is 1 (3.x)
MVS = ["3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0",
       "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2",
       "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1", "4.3-IV0"]
LEVEL = {name: 7 + i for i, name in enumerate(MVS)}


def _records(out: dict[str, Any]) -> list[tuple[str, int]]:
    return [(r["name"], r["level"]) for r in out["records"]]


# =================================================================================================
# FeatureCommandTest @ 3.7.0 (kafka-3.7) and 3.8.0 (kafka-3.8): describe shows metadata.version only
# =================================================================================================

_FC3 = {  # tag -> (profile, line numbers, bootstrap-controller MV, SupportedMaxVersion, controller max level)
    "3_7_0": (P37, {"describe": 64, "describe_ctrl": 74, "upgrade": 94, "downgrade": 132, "mvs": 173,
                    "dtype": 179, "parse": 188, "hdescribe": 217}, "3.7-IV4", "3.8-IV0", 20),
    "3_8_0": (P38, {"describe": 56, "describe_ctrl": 66, "upgrade": 86, "downgrade": 124, "mvs": 168,
                    "dtype": 174, "parse": 183, "hdescribe": 212}, "3.8-IV0", "3.9-IV0", 21),
}
TAGS3 = list(_FC3)


@pytest.mark.rule("KIP1022-OBS-01", "pass")
@pytest.mark.parametrize("tag", TAGS3)
def test_FeatureCommandTest_testDescribeWithKRaft__3_x(tag: str) -> None:
    """FeatureCommandTest.testDescribeWithKRaft, tools/.../FeatureCommandTest.java:64@3.7.0 and :56@3.8.0:
    through the broker at 3.3-IV1 the only line is metadata.version, SupportedMaxVersion latestTesting."""
    profile, _, _, top, _ = _FC3[tag]
    c = kraft_cluster(profile, "3.3-IV1")
    assert described(features_tool(c, "describe", node=0)) == [
        (f"Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: {top}\t"
        "FinalizedVersionLevel: 3.3-IV1\t")]


@pytest.mark.rule("KIP1022-OBS-01", "pass")
@pytest.mark.parametrize("tag", TAGS3)
def test_FeatureCommandTest_testDescribeWithKRaftAndBootstrapControllers__3_x(tag: str) -> None:
    """FeatureCommandTest.testDescribeWithKRaftAndBootstrapControllers, FeatureCommandTest.java:74@3.7.0 (at
    3.7-IV4) and :66@3.8.0 (at 3.8-IV0)."""
    profile, _, fin, top, _ = _FC3[tag]
    c = kraft_cluster(profile, fin)
    assert described(features_tool(c, "describe", node=3000)) == [
        (f"Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: {top}\t"
        f"FinalizedVersionLevel: {fin}\t")]


@pytest.mark.rule("KIP584-UPD-08", "pass")
@pytest.mark.parametrize("tag", TAGS3)
def test_FeatureCommandTest_testUpgradeMetadataVersionWithKraft__3_x(tag: str) -> None:
    """FeatureCommandTest.testUpgradeMetadataVersionWithKraft, FeatureCommandTest.java:94@3.7.0, :86@3.8.0."""
    c = kraft_cluster(_FC3[tag][0], "3.3-IV1")
    out = ok(features_tool(c, "upgrade", features=[f"{MV}=5"]))
    assert (out["exit_code"], stdout(out)) == (0, "metadata.version was upgraded to 5."), out
    out = ok(features_tool(c, "upgrade", metadata="3.3-IV2"))
    assert (out["exit_code"], stdout(out)) == (0, "metadata.version was upgraded to 6."), out


@pytest.mark.rule("KIP1022-TOOL-06", "fail")
@pytest.mark.parametrize("tag", TAGS3)
def test_FeatureCommandTest_testDowngradeMetadataVersionWithKRaft__3_x(tag: str) -> None:
    """FeatureCommandTest.testDowngradeMetadataVersionWithKRaft, FeatureCommandTest.java:132@3.7.0 ('versions
    1-20'), :124@3.8.0 ('versions 1-21')."""
    profile, _, _, _, top = _FC3[tag]
    c = kraft_cluster(profile, "3.3-IV1")
    out = refused(features_tool(c, "disable", features=[MV]), "INVALID_UPDATE_VERSION", "KIP1022-TOOL-06")
    assert out["exit_code"] == 1
    assert stdout(out) == ("Could not disable metadata.version. Invalid update version 0 for feature metadata.version. "
                           f"Local controller 3000 only supports versions 1-{top}"), out
    out = refused(features_tool(c, "downgrade", metadata="3.3-IV0"), "INVALID_UPDATE_VERSION", "KIP1022-TOOL-06")
    assert stdout(out) == ("Could not downgrade metadata.version to 4. Invalid metadata.version 4. Refusing to perform "
                           "the requested downgrade because it might delete metadata information."), out
    out = refused(features_tool(c, "downgrade", metadata="3.3-IV0", unsafe=True), "INVALID_UPDATE_VERSION",
                  "KIP1022-TOOL-06")
    assert stdout(out) == ("Could not downgrade metadata.version to 4. Invalid metadata.version 4. Unsafe metadata "
                           "downgrade is not supported in this version."), out


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
@pytest.mark.parametrize("tag", TAGS3)
def test_FeatureCommandTest_testMetadataVersionsToString__3_x(tag: str) -> None:
    """FeatureCommandTest.testMetadataVersionsToString, FeatureCommandTest.java:173@3.7.0, :168@3.8.0.  ADAPTED
    (as at 3.9.0-rc3): the unknown --metadata listing holds '3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3'."""
    c = kraft_cluster(_FC3[tag][0], "3.4-IV0")
    refused(features_tool(c, "upgrade", metadata="9.9-IV9"), "TOOL_ERROR", "KIP1022-TOOL-03",
            "3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3")


@pytest.mark.rule("KIP584-UPD-05", "pass")
@pytest.mark.parametrize("tag", TAGS3)
def test_FeatureCommandTest_testDowngradeType__3_x(tag: str) -> None:
    """FeatureCommandTest.testdowngradeType, FeatureCommandTest.java:179@3.7.0 (lower-case d);
    testDowngradeType :174@3.8.0: the upgrade type of the request sent (metadata.version 18 from 3.7-IV4 / 3.8-IV0)."""
    profile, _, fin, _, _ = _FC3[tag]
    for kw, expected in (({"unsafe": False}, "SAFE_DOWNGRADE"), ({"unsafe": True}, "UNSAFE_DOWNGRADE"),
                         ({}, "SAFE_DOWNGRADE")):
        c = kraft_cluster(profile, fin)
        out = features_tool(c, "downgrade", features=[f"{MV}=18"], **kw)
        assert [u["upgrade_type"] for u in out["request"]["updates"]] == [expected], out


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
@pytest.mark.parametrize("tag", TAGS3)
def test_FeatureCommandTest_testParseNameAndLevel__3_x(tag: str) -> None:
    """FeatureCommandTest.testParseNameAndLevel, FeatureCommandTest.java:188@3.7.0, :183@3.8.0."""
    c = kraft_cluster(_FC3[tag][0], "3.3-IV1")
    out = features_tool(c, "downgrade", features=["foo.bar=5", "quux=0"])
    assert [(u["feature"], u["level"]) for u in out["request"]["updates"]] == [("foo.bar", 5), ("quux", 0)], out
    refused(features_tool(c, "upgrade", features=["baaz"]), "TOOL_ERROR", "KIP1022-TOOL-03",
            "Can't parse feature=level string baaz: equals sign not found.")
    refused(features_tool(c, "upgrade", features=["w=tf"]), "TOOL_ERROR", "KIP1022-TOOL-03",
            "Can't parse feature=level string w=tf: unable to parse tf as a short.")


@pytest.mark.rule("KIP584-API-02", "pass")
@pytest.mark.parametrize("tag", TAGS3)
def test_FeatureCommandTest_testHandleDescribe__3_x(tag: str) -> None:
    """FeatureCommandTest.testHandleDescribe, FeatureCommandTest.java:217@3.7.0, :212@3.8.0 (3.3-IV0..3.3-IV3,
    finalized 3.3-IV2; foo.bar 0-10 at 5; epoch 123)."""
    c = _mock_admin_cluster(_FC3[tag][0], 4, 6, 7)
    assert stdout(ok(features_tool(c, "describe"))) == (
        "Feature: foo.bar\tSupportedMinVersion: 0\tSupportedMaxVersion: 10\tFinalizedVersionLevel: 5\tEpoch: 123\n"
        "Feature: metadata.version\tSupportedMinVersion: 3.3-IV0\tSupportedMaxVersion: 3.3-IV3\t"
        "FinalizedVersionLevel: 3.3-IV2\tEpoch: 123")


# =================================================================================================
# FeatureCommandTest @ 4.0.0 (kafka-4.0) and 4.2.0-rc1 (kafka-4.2)
# =================================================================================================

def _describe_lines(fin: str, top: str, share_streams: bool) -> list[str]:
    lines = [
        "Feature: eligible.leader.replicas.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t",
        "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t",
        "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t",
        f"Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: {top}\tFinalizedVersionLevel: {fin}\t",
    ]
    if share_streams:
        lines += ["Feature: share.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t",
                  "Feature: streams.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t"]
    return lines + [
        "Feature: transaction.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 2\tFinalizedVersionLevel: 0\t"]


_FC4 = {  # tag -> (profile, SupportedMaxVersion with unstable, share/streams present, lines)
    "4_0_0": (P40, "4.1-IV0", False, {"describe": 52, "describe_ctrl": 74, "upgrade": 95, "downgrade": 110,
                                      "up_rv": 139, "down_rv": 158, "dtype": 206, "parse": 215, "hdescribe": 244}),
    "4_2_0_rc1": (P42, "4.3-IV0", True, {"describe": 49, "describe_ctrl": 75, "upgrade": 232, "downgrade": 247,
                                          "up_rv": 284, "down_rv": 303, "dtype": 347, "parse": 356, "hdescribe": 385}),
}
TAGS4 = list(_FC4)


@pytest.mark.rule("KIP1022-OBS-01", "pass")
@pytest.mark.parametrize("tag", TAGS4)
def test_FeatureCommandTest_testDescribeWithKRaft__4_x(tag: str) -> None:
    """FeatureCommandTest.testDescribeWithKRaft, FeatureCommandTest.java:52@4.0.0 (5 features, max 4.1-IV0),
    :49@4.2.0-rc1 (7 features, max 4.3-IV0); broker at 3.3-IV3."""
    profile, top, ss, _ = _FC4[tag]
    c = kraft_cluster(profile, "3.3-IV3")
    assert described(features_tool(c, "describe", node=0)) == _describe_lines("3.3-IV3", top, ss)


@pytest.mark.rule("KIP1022-OBS-01", "pass")
@pytest.mark.parametrize("tag", TAGS4)
def test_FeatureCommandTest_testDescribeWithKRaftAndBootstrapControllers__4_x(tag: str) -> None:
    """FeatureCommandTest.testDescribeWithKRaftAndBootstrapControllers, FeatureCommandTest.java:74@4.0.0,
    :75@4.2.0-rc1 (controller, 3.7-IV0)."""
    profile, top, ss, _ = _FC4[tag]
    c = kraft_cluster(profile, "3.7-IV0")
    assert described(features_tool(c, "describe", node=3000)) == _describe_lines("3.7-IV0", top, ss)


@pytest.mark.rule("KIP1022-OBS-01", "pass")
def test_FeatureCommandTest_testDescribeWithUnstableApiVersions__4_2_0_rc1() -> None:
    """FeatureCommandTest.testDescribeWithUnstableApiVersions, FeatureCommandTest.java:116@4.2.0-rc1: controllers
    3000 (unstable.api.versions.enable=true) and 3001 (false), at 3.7-IV0; describe --node-id 3000 shows
    metadata.version up to 4.3-IV0, --node-id 3001 up to 4.2-IV1.  (Kafka's last-but-one assertion for 3001
    reads featuresWithUnstable.get(5), the same streams.version line.)"""
    c = Cluster(P42)
    ok(c.apply({"op": "format", "release_version": "3.7-IV0", "unstable": True,
                "controllers": [{"id": 3000, "unstable": True}, {"id": 3001, "unstable": False}]}))
    ok(c.apply({"op": "register", "node": 0, "unstable": True}))
    assert described(features_tool(c, "describe", node=3000)) == _describe_lines("3.7-IV0", "4.3-IV0", True)
    assert described(features_tool(c, "describe", node=3001)) == _describe_lines("3.7-IV0", "4.2-IV1", True)


@pytest.mark.rule("KIP1022-OBS-01", "pass")
def test_FeatureCommandTest_testDescribeWithUnstableFeatureVersions__4_2_0_rc1() -> None:
    """FeatureCommandTest.testDescribeWithUnstableFeatureVersions, FeatureCommandTest.java:182@4.2.0-rc1: brokers
    0 (unstable.feature.versions.enable=true) and 1 (false), at 3.7-IV0; --node-id 0 shows metadata.version up
    to 4.3-IV0, --node-id 1 up to 4.2-IV1."""
    c = Cluster(P42)
    ok(c.apply({"op": "format", "release_version": "3.7-IV0", "unstable": True,
                "controllers": [{"id": 3000, "unstable": True}]}))
    ok(c.apply({"op": "register", "node": 0, "unstable": True}))
    ok(c.apply({"op": "register", "node": 1, "unstable": False}))
    assert described(features_tool(c, "describe", node=0)) == _describe_lines("3.7-IV0", "4.3-IV0", True)
    assert described(features_tool(c, "describe", node=1)) == _describe_lines("3.7-IV0", "4.2-IV1", True)


@pytest.mark.rule("KIP584-UPD-08", "pass")
@pytest.mark.parametrize("tag", TAGS4)
def test_FeatureCommandTest_testUpgradeMetadataVersionWithKraft__4_x(tag: str) -> None:
    """FeatureCommandTest.testUpgradeMetadataVersionWithKraft, FeatureCommandTest.java:95@4.0.0, :232@4.2.0-rc1."""
    c = kraft_cluster(_FC4[tag][0], "3.3-IV3")
    out = ok(features_tool(c, "upgrade", features=[f"{MV}=7"]))
    assert (out["exit_code"], stdout(out)) == (0, "metadata.version was upgraded to 7."), out
    out = ok(features_tool(c, "upgrade", metadata="3.4-IV0"))
    assert stdout(out) == ("`metadata` flag is deprecated and may be removed in a future release.\n"
                           "metadata.version was upgraded to 8."), out


_DOWN_40 = ("Invalid metadata.version 7.", "Invalid metadata.version 7.")
_DOWN_42 = ("Unsupported metadata.version downgrade from 8 to 7.", "Unsupported metadata.version downgrade from 8 to 7.")


@pytest.mark.rule("KIP584-UPD-03", "fail")
@pytest.mark.rule("KIP778-MV-04", "fail")
@pytest.mark.rule("KIP778-MV-05", "fail")
@pytest.mark.parametrize(("tag", "top", "why"), [
    ("4_0_0", 26, _DOWN_40),
    ("4_2_0_rc1", 30, _DOWN_42),
])
def test_FeatureCommandTest_testDowngradeMetadataVersionWithKRaft__4_x(tag: str, top: int,
                                                                       why: tuple[str, str]) -> None:
    """FeatureCommandTest.testDowngradeMetadataVersionWithKRaft, FeatureCommandTest.java:110@4.0.0 ('versions
    7-26', 'Invalid metadata.version 7.'), :247@4.2.0-rc1 (MINIMUM_VERSION-latestTesting = 7-30, 'Unsupported
    metadata.version downgrade from 8 to 7.'); cluster at 3.4-IV0."""
    c = kraft_cluster(_FC4[tag][0], "3.4-IV0")
    lead = "The update failed for all features since the following feature had an error: "
    out = features_tool(c, "disable", features=[MV])
    assert out["exit_code"] == 1, out
    assert stdout(out) == (f"Could not disable metadata.version. {lead}Invalid update version 0 for feature "
                           f"metadata.version. Local controller 3000 only supports versions 7-{top}"), out
    out = features_tool(c, "downgrade", metadata="3.3-IV3")
    assert out["exit_code"] == 1, out
    assert stdout(out) == ("`metadata` flag is deprecated and may be removed in a future release.\nCould not downgrade "
                           f"metadata.version to 7. {lead}{why[0]} Refusing to perform the requested downgrade because "
                           "it might delete metadata information."), out
    out = features_tool(c, "downgrade", metadata="3.3-IV3", unsafe=True)
    assert out["exit_code"] == 1, out
    assert stdout(out) == ("`metadata` flag is deprecated and may be removed in a future release.\nCould not downgrade "
                           f"metadata.version to 7. {lead}{why[1]} Unsafe metadata downgrade is not supported in this "
                           "version."), out


@pytest.mark.rule("KIP584-UPD-05", "fail")
@pytest.mark.rule("KIP1022-TOOL-04", "pass")
@pytest.mark.parametrize("tag", TAGS4)
def test_FeatureCommandTest_testUpgradeWithReleaseVersion__4_x(tag: str) -> None:
    """FeatureCommandTest.testUpgradeWithReleaseVersion, FeatureCommandTest.java:139@4.0.0, :284@4.2.0-rc1."""
    c = kraft_cluster(_FC4[tag][0], "3.8-IV0")
    out = features_tool(c, "upgrade", release_version="3.7-IV3")
    assert out["exit_code"] == 1
    assert stdout(out) == ("Could not upgrade metadata.version to 18. The update failed for all features since the "
                           "following feature had an error: Invalid update version 18 for feature metadata.version. "
                           "Can't downgrade the version of this feature without setting the upgrade type to either "
                           "safe or unsafe downgrade."), out
    out = ok(features_tool(c, "upgrade", release_version="3.9-IV0"))
    assert (out["exit_code"], stdout(out)) == (0, "kraft.version was upgraded to 1.\nmetadata.version was upgraded to 21.")


@pytest.mark.rule("KIP584-UPD-06", "fail")
@pytest.mark.rule("KIP1022-TOOL-04", "pass")
@pytest.mark.parametrize("tag", TAGS4)
def test_FeatureCommandTest_testDowngradeWithReleaseVersion__4_x(tag: str) -> None:
    """FeatureCommandTest.testDowngradeWithReleaseVersion, FeatureCommandTest.java:158@4.0.0 (five features
    downgraded), :303@4.2.0-rc1 (seven, with share.version and streams.version)."""
    profile, _, ss, _ = _FC4[tag]
    c = kraft_cluster(profile, "3.8-IV0")
    out = features_tool(c, "downgrade", release_version="3.9-IV0")
    text = stdout(out)
    assert out["exit_code"] == 1
    assert ("The update failed for all features since the following feature had an error: Invalid update version 1 "
            "for feature kraft.version. Can't downgrade to a newer version.") in text, out
    for piece in ("Could not downgrade group.version to 0.", "Could not downgrade transaction.version to 0.",
                  "Could not downgrade kraft.version to 1.", "Could not downgrade metadata.version to 21."):
        assert piece in text, (piece, out)
    out = ok(features_tool(c, "downgrade", release_version="3.7-IV3"))
    expected = ["eligible.leader.replicas.version was downgraded to 0.", "group.version was downgraded to 0.",
                "kraft.version was downgraded to 0.", "metadata.version was downgraded to 18."]
    if ss:
        expected += ["share.version was downgraded to 0.", "streams.version was downgraded to 0."]
    expected += ["transaction.version was downgraded to 0."]
    assert stdout(out) == "\n".join(expected), out


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
def test_FeatureCommandTest_testMetadataVersionsToString__4_0_0() -> None:
    """FeatureCommandTest.testMetadataVersionsToString, FeatureCommandTest.java:200@4.0.0.  ADAPTED (as at 4.1.1):
    the unknown --metadata listing holds '3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0'."""
    c = kraft_cluster(P40, "3.4-IV0")
    refused(features_tool(c, "upgrade", metadata="9.9-IV9"), "TOOL_ERROR", "KIP1022-TOOL-03",
            "3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0")


@pytest.mark.rule("KIP584-UPD-05", "pass")
@pytest.mark.parametrize("tag", TAGS4)
def test_FeatureCommandTest_testDowngradeType__4_x(tag: str) -> None:
    """FeatureCommandTest.testDowngradeType, FeatureCommandTest.java:206@4.0.0, :347@4.2.0-rc1."""
    for kw, expected in (({"unsafe": False}, "SAFE_DOWNGRADE"), ({"unsafe": True}, "UNSAFE_DOWNGRADE"),
                         ({}, "SAFE_DOWNGRADE")):
        c = kraft_cluster(_FC4[tag][0], "3.8-IV0")
        out = features_tool(c, "downgrade", features=["group.version=0"], **kw)
        assert [u["upgrade_type"] for u in out["request"]["updates"]] == [expected], out


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
@pytest.mark.parametrize("tag", TAGS4)
def test_FeatureCommandTest_testParseNameAndLevel__4_x(tag: str) -> None:
    """FeatureCommandTest.testParseNameAndLevel, FeatureCommandTest.java:215@4.0.0, :356@4.2.0-rc1."""
    c = kraft_cluster(_FC4[tag][0], "3.8-IV0")
    out = features_tool(c, "downgrade", features=["foo.bar=5", "quux=0"])
    assert [(u["feature"], u["level"]) for u in out["request"]["updates"]] == [("foo.bar", 5), ("quux", 0)], out
    refused(features_tool(c, "upgrade", features=["baaz"]), "TOOL_ERROR", "KIP1022-TOOL-03",
            "Can't parse feature=level string baaz: equals sign not found.")
    refused(features_tool(c, "upgrade", features=["w=tf"]), "TOOL_ERROR", "KIP1022-TOOL-03",
            "Can't parse feature=level string w=tf: unable to parse tf as a short.")


@pytest.mark.rule("KIP584-API-02", "pass")
@pytest.mark.parametrize("tag", TAGS4)
def test_FeatureCommandTest_testHandleDescribe__4_x(tag: str) -> None:
    """FeatureCommandTest.testHandleDescribe, FeatureCommandTest.java:244@4.0.0, :385@4.2.0-rc1 (3.3-IV3..3.5-IV0,
    finalized 3.4-IV0)."""
    c = _mock_admin_cluster(_FC4[tag][0], 7, 8, 9)
    assert stdout(ok(features_tool(c, "describe"))) == (
        "Feature: foo.bar\tSupportedMinVersion: 0\tSupportedMaxVersion: 10\tFinalizedVersionLevel: 5\tEpoch: 123\n"
        "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 3.5-IV0\t"
        "FinalizedVersionLevel: 3.4-IV0\tEpoch: 123")


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
@pytest.mark.parametrize(("tag", "fragment"), [
    ("4_0_0", "Unknown metadata.version 3.3-IV1"),        # :257@4.0.0
    ("4_2_0_rc1", "Unknown metadata.version '3.3-IV1'"),  # :405@4.2.0-rc1
])
def test_FeatureCommandTest_testHandleUpgradeToUnsupportedMetadataVersion__4_x(tag: str, fragment: str) -> None:
    """FeatureCommandTest.testHandleUpgradeToUnsupportedMetadataVersion, FeatureCommandTest.java:257@4.0.0,
    :405@4.2.0-rc1 (4.2 quotes the version)."""
    c = _mock_admin_cluster(_FC4[tag][0], 7, 8, 9)
    refused(features_tool(c, "upgrade", metadata="3.3-IV1", features=["foo.bar=6"]), "TOOL_ERROR", "KIP1022-TOOL-03",
            fragment)


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
@pytest.mark.parametrize(("tag", "fragment"), [
    ("4_0_0", "Unknown metadata.version foo."),          # :355@4.0.0
    ("4_2_0_rc1", "Unknown metadata.version 'foo'."),    # :503@4.2.0-rc1
])
def test_FeatureCommandTest_testInvalidReleaseVersion__4_x(tag: str, fragment: str) -> None:
    """FeatureCommandTest.testInvalidReleaseVersion, FeatureCommandTest.java:355@4.0.0, :503@4.2.0-rc1."""
    c = _mock_admin_cluster(_FC4[tag][0], 7, 8, 9)
    refused(features_tool(c, "upgrade", release_version="foo"), "TOOL_ERROR", "KIP1022-TOOL-03", fragment)


@pytest.mark.rule("KIP1022-TOOL-02", "fail")
@pytest.mark.parametrize("tag", TAGS4)
def test_FeatureCommandTest_testIncompatibleUpgradeFlags__4_x(tag: str) -> None:
    """FeatureCommandTest.testIncompatibleUpgradeFlags, FeatureCommandTest.java:365@4.0.0, :513@4.2.0-rc1."""
    c = _mock_admin_cluster(_FC4[tag][0], 7, 8, 9)
    feats = ["foo.bar", "metadata.version", "quux"]
    refused(features_tool(c, "upgrade", release_version="3.3-IV3", features=feats), "TOOL_ERROR", "KIP1022-TOOL-02",
            "Can not specify `release-version` with other feature flags.")
    refused(features_tool(c, "upgrade", release_version="3.3-IV3", features=feats, metadata="3.3-IV3"), "TOOL_ERROR",
            "KIP1022-TOOL-02", "Can not specify `release-version` with other feature flags.")


@pytest.mark.rule("KIP1022-MAP-01", "pass")
@pytest.mark.parametrize(("tag", "method", "rv", "level", "shown"), [
    ("4_0_0", "testHandleVersionMappingWithValidReleaseVersion", "3.3-IV3", 7, "3.3-IV3"),     # :384
    ("4_0_0", "testHandleVersionMappingWithNoReleaseVersion", None, 25, "4.0-IV3"),           # :409
    ("4_2_0_rc1", "testHandleVersionMappingWithValidReleaseVersion", "3.3-IV3", 7, "3.3-IV3"),  # :532
    ("4_2_0_rc1", "testHandleVersionMappingWithNoReleaseVersion", None, 29, "4.2-IV1"),        # :557
])
def test_FeatureCommandTest_version_mapping__4_x(tag: str, method: str, rv: str | None, level: int,
                                                 shown: str) -> None:
    """FeatureCommandTest.<method>, FeatureCommandTest.java:384/409@4.0.0, :532/557@4.2.0-rc1 (production
    features only; Feature.FEATURES' test features are not expressible)."""
    profile = _FC4[tag][0]
    kw = {"release_version": rv} if rv is not None else {}
    _mapping_contains(ok(_features_tool_cmd(profile, "version_mapping", **kw)), profile, level, shown)


_LIST_42_TESTING = ", ".join(MVS)  # MINIMUM_VERSION .. latestTesting (4.3-IV0)


@pytest.mark.rule("KIP1022-MAP-02", "fail")
@pytest.mark.parametrize(("tag", "rv", "message"), [
    ("4_0_0", "2.9-IV2", "Unknown release version '2.9-IV2'. Supported versions are: 3.3-IV3 to 4.0-IV3"),
    ("4_0_0", "invalid", "Unknown release version 'invalid'. Supported versions are: 3.3-IV3 to 4.0-IV3"),
    ("4_2_0_rc1", "2.9-IV2", f"Unknown metadata.version '2.9-IV2'. Supported metadata.version are: {_LIST_42_TESTING}"),
    ("4_2_0_rc1", "invalid", f"Unknown metadata.version 'invalid'. Supported metadata.version are: {_LIST_42_TESTING}"),
])
def test_FeatureCommandTest_testHandleVersionMappingWithInvalidReleaseVersion__4_x(tag: str, rv: str,
                                                                                   message: str) -> None:
    """FeatureCommandTest.testHandleVersionMappingWithInvalidReleaseVersion, FeatureCommandTest.java:433@4.0.0,
    :581@4.2.0-rc1 (4.2: MetadataVersion.fromVersionString's text, listing MINIMUM_VERSION to latestTesting)."""
    tool_error(_features_tool_cmd(_FC4[tag][0], "version_mapping", release_version=rv), message, "KIP1022-MAP-02")


@pytest.mark.rule("KIP1022-DEP-01", "pass")
@pytest.mark.parametrize("tag", TAGS4)
def test_FeatureCommandTest_testHandleFeatureDependenciesForFeatureWithNoDependencies__4_x(tag: str) -> None:
    """FeatureCommandTest.testHandleFeatureDependenciesForFeatureWithNoDependencies, FeatureCommandTest.java:479@4.0.0,
    :625@4.2.0-rc1."""
    out = ok(_features_tool_cmd(_FC4[tag][0], "feature_dependencies", features=[f"{MV}=17"]))
    assert stdout(out) == "metadata.version=17 (3.7-IV2) has no dependencies.", out


@pytest.mark.rule("KIP1022-DEP-02", "fail")
@pytest.mark.parametrize("tag", TAGS4)
@pytest.mark.parametrize(("method", "flag", "message"), [
    ("testHandleFeatureDependenciesForUnknownFeature", "unknown.feature=1", "Unknown feature: unknown.feature"),
    ("testHandleFeatureDependenciesForFeatureWithUnknownFeatureVersion", "transaction.version=1000",
     "No feature:transaction.version with feature level 1000"),
    ("testHandleFeatureDependenciesForInvalidVersionFormat", f"{MV}=invalid",
     "Can't parse feature=level string metadata.version=invalid: unable to parse invalid as a short."),
])
def test_FeatureCommandTest_feature_dependencies_errors__4_x(tag: str, method: str, flag: str, message: str) -> None:
    """FeatureCommandTest.<method>, FeatureCommandTest.java:495/508/521@4.0.0, :641/654/667@4.2.0-rc1."""
    tool_error(_features_tool_cmd(_FC4[tag][0], "feature_dependencies", features=[flag]), message, "KIP1022-DEP-02")


# =================================================================================================
# FeatureCommandTest @ 4.3.0 (kafka-4.3) and the 4.4 branch (kafka-4.4): KAFKA-19941's padded describe
# =================================================================================================
# 4.3.0 is confluentinc/kafka a9ce322153 ("Bump version to 4.3.0"; 4.3.1 = 26b251a451 has the same lines), 4.4
# its 4.4 branch at 8d3916cfe1 (no 4.4.0 tag there; FeatureCommand.java is the 4.4.0 jar's).  Kafka compares each
# describe line, cut before "Epoch: ", with assertFeatureOutput's regex (FeatureCommandTest.java:823-838@4.3.0,
# :820-835@4.4); the exact widths are checked in tests/test_tools.py (test_describe_lines_43_padded).

P43, P44 = "kafka-4.3", "kafka-4.4"


def _feature_output_regex(name: str, lo: str, hi: str, fin: str) -> re.Pattern[str]:
    """assertFeatureOutput's pattern (String.matches: the whole line)."""
    q = re.escape
    return re.compile(rf"Feature:\s+{q(name)}\s+SupportedMinVersion:\s+{q(lo)}\s+SupportedMaxVersion:\s+{q(hi)}"
                      rf"\s+FinalizedVersionLevel:\s+{q(fin)}\s*")


def _assert_padded_describe(lines: list[str], expected: list[tuple[str, str, str, str]]) -> None:
    assert len(lines) == len(expected), lines
    for line, want in zip(lines, expected, strict=True):
        assert _feature_output_regex(*want).fullmatch(line), (line, want)
        assert "\t" not in line, line  # 4.2's tabs are gone (a tab would match \s+ too)


def _expected_43(fin: str, top: str, share_top: str = "1") -> list[tuple[str, str, str, str]]:
    return [(ELR, "0", "1", "0"), ("group.version", "0", "1", "0"), ("kraft.version", "0", "1", "0"),
            (MV, "3.3-IV3", top, fin), ("share.version", "0", share_top, "0"), ("streams.version", "0", "1", "0"),
            ("transaction.version", "0", "2", "0")]


# tag -> (profile, latestTesting, latestProduction and its level, share.version max)
_FC43 = {
    "4_3_0": (P43, "4.4-IV0", ("4.3-IV0", 30), "1"),
    "4_4": (P44, "4.5-IV0", ("4.4-IV2", 33), "2"),
}
TAGS43 = list(_FC43)


@pytest.mark.rule("KIP1022-OBS-01", "pass")
@pytest.mark.parametrize("tag", TAGS43)
def test_FeatureCommandTest_testDescribeWithKRaft__4_3(tag: str) -> None:
    """FeatureCommandTest.testDescribeWithKRaft, FeatureCommandTest.java:50@4.3.0 (max "4.4-IV0"), :50@4.4 (max
    MetadataVersion.latestTesting(), share.version 0-2); broker at 3.3-IV3."""
    profile, testing, _, share = _FC43[tag]
    c = kraft_cluster(profile, "3.3-IV3")
    _assert_padded_describe(described(features_tool(c, "describe", node=0)), _expected_43("3.3-IV3", testing, share))


@pytest.mark.rule("KIP1022-OBS-01", "pass")
@pytest.mark.parametrize("tag", TAGS43)
def test_FeatureCommandTest_testDescribeWithKRaftAndBootstrapControllers__4_3(tag: str) -> None:
    """FeatureCommandTest.testDescribeWithKRaftAndBootstrapControllers, FeatureCommandTest.java:89@4.3.0, :89@4.4
    (controller, 3.7-IV0)."""
    profile, testing, _, share = _FC43[tag]
    c = kraft_cluster(profile, "3.7-IV0")
    _assert_padded_describe(described(features_tool(c, "describe", node=3000)), _expected_43("3.7-IV0", testing, share))


@pytest.mark.rule("KIP1022-OBS-01", "pass")
@pytest.mark.parametrize("tag", TAGS43)
def test_FeatureCommandTest_testDescribeWithUnstableApiVersions__4_3(tag: str) -> None:
    """FeatureCommandTest.testDescribeWithUnstableApiVersions, FeatureCommandTest.java:144@4.3.0, :143@4.4:
    --node-id 3000 (unstable.api.versions.enable=true) shows latestTesting, --node-id 3001 latestProduction."""
    profile, testing, (production, _), share = _FC43[tag]
    c = Cluster(profile)
    ok(c.apply({"op": "format", "release_version": "3.7-IV0", "unstable": True,
                "controllers": [{"id": 3000, "unstable": True}, {"id": 3001, "unstable": False}]}))
    ok(c.apply({"op": "register", "node": 0, "unstable": True}))
    _assert_padded_describe(described(features_tool(c, "describe", node=3000)), _expected_43("3.7-IV0", testing, share))
    _assert_padded_describe(described(features_tool(c, "describe", node=3001)),
                            _expected_43("3.7-IV0", production, share))


@pytest.mark.rule("KIP1022-OBS-01", "pass")
@pytest.mark.parametrize("tag", TAGS43)
def test_FeatureCommandTest_testDescribeWithUnstableFeatureVersions__4_3(tag: str) -> None:
    """FeatureCommandTest.testDescribeWithUnstableFeatureVersions, FeatureCommandTest.java:238@4.3.0, :236@4.4:
    brokers 0 (unstable.feature.versions.enable=true) and 1 (false)."""
    profile, testing, (production, _), share = _FC43[tag]
    c = Cluster(profile)
    ok(c.apply({"op": "format", "release_version": "3.7-IV0", "unstable": True,
                "controllers": [{"id": 3000, "unstable": True}]}))
    ok(c.apply({"op": "register", "node": 0, "unstable": True}))
    ok(c.apply({"op": "register", "node": 1, "unstable": False}))
    _assert_padded_describe(described(features_tool(c, "describe", node=0)), _expected_43("3.7-IV0", testing, share))
    _assert_padded_describe(described(features_tool(c, "describe", node=1)), _expected_43("3.7-IV0", production, share))


@pytest.mark.rule("KIP584-API-02", "pass")
@pytest.mark.parametrize("tag", TAGS43)
def test_FeatureCommandTest_testHandleDescribe__4_3(tag: str) -> None:
    """FeatureCommandTest.testHandleDescribe, FeatureCommandTest.java:469@4.3.0, :466@4.4 (MockAdminClient:
    metadata.version 3.3-IV3..3.5-IV0 finalized 3.4-IV0, foo.bar 0-10 finalized 5); the lines sorted, each
    cut before "Epoch: " and matched with assertFeatureOutput."""
    c = _mock_admin_cluster(_FC43[tag][0], 7, 8, 9)
    lines = sorted(stdout(ok(features_tool(c, "describe"))).split("\n"))
    assert all(x.endswith("  Epoch: 123") for x in lines), lines
    _assert_padded_describe([x[:x.find("Epoch: ")] for x in lines],
                            [("foo.bar", "0", "10", "5"), (MV, "3.3-IV3", "3.5-IV0", "3.4-IV0")])


@pytest.mark.rule("KIP584-API-04", "fail")
@pytest.mark.parametrize("profile", [P42, P43, P44])
def test_FeatureCommandTest_testHandleDescribeWithNegativeNodeId__4_3(profile: str) -> None:
    """FeatureCommandTest.testHandleDescribeWithNegativeNodeId, FeatureCommandTest.java:398@4.2.0-rc1 (--node-id is
    new in 4.2, KAFKA-18786), :490@4.3.0, :487@4.4: IllegalArgumentException "Invalid node id -1: must be
    non-negative." (FeatureCommand.java:240-246@4.3.0) before any request is sent."""
    c = _mock_admin_cluster(profile, 7, 8, 9)
    out = tool_error(features_tool(c, "describe", node=-1), "Invalid node id -1: must be non-negative.", "KIP584-API-04")
    assert not out.get("lines"), out


@pytest.mark.rule("KIP1022-MAP-01", "pass")
@pytest.mark.parametrize("tag", TAGS43)
def test_FeatureCommandTest_testHandleVersionMappingWithoutBootstrap__4_3(tag: str) -> None:
    """FeatureCommandTest.testHandleVersionMappingWithoutBootstrap, FeatureCommandTest.java:695@4.3.0, :692@4.4 (KAFKA-19749:
    version-mapping runs before the bootstrap check, FeatureCommand.java:98-104@4.3.0): nothing on stderr and
    metadata.version=<latestProduction level> (<name>).  The reference has no bootstrap flags to leave out."""
    profile, _, (production, level), _ = _FC43[tag]
    out = ok(_features_tool_cmd(profile, "version_mapping"))
    assert not out.get("stderr"), out
    _mapping_contains(out, profile, level, production)


# =================================================================================================
# FormatterTest @ 4.0.0 (kafka-4.0), 4.1.0 (kafka-4.1.0), 4.2.0-rc1 (kafka-4.2)
# =================================================================================================

_FT = {  # tag -> profile, latestProduction, latestTesting, production feature list
    "4_0_0": (P40, "4.0-IV3", "4.1-IV0",
              "eligible.leader.replicas.version, group.version, kraft.version, transaction.version"),
    "4_1_0": (P410, "4.1-IV1", "4.2-IV1", ("eligible.leader.replicas.version, group.version, kraft.version, "
              "share.version, streams.version, transaction.version")),
    "4_2_0_rc1": (P42, "4.2-IV1", "4.3-IV0", ("eligible.leader.replicas.version, group.version, kraft.version, "
                  "share.version, streams.version, transaction.version")),
}
TAGSF = list(_FT)
# Kafka line numbers per tag
_FTL = {
    "testDirectories": (141, 139, 142), "testFormatWithOlderReleaseVersion": (223, 254, 260),
    "testFormatWithUnstableReleaseVersionFailsWithoutEnableUnstable": (239, 270, 277),
    "testFormatWithUnstableReleaseVersion": (249, 280, 287), "testFeatureFlag": (337, 368, 377),
    "testInvalidFeatureFlag": (366, 400, 415), "testFormatWithInitialVoters": (382, 416, 431),
    "testFormatElrEnabledWithMetadataVersions": (471, 509, 543),
}


@pytest.mark.rule("KIP1022-FMT-10", "pass")
@pytest.mark.parametrize("tag", TAGSF)
def test_FormatterTest_testDirectories__4_x(tag: str) -> None:
    """FormatterTest.testDirectories, metadata/.../FormatterTest.java:141@4.0.0, :139@4.1.0, :142@4.2.0-rc1:
    latestProduction is bootstrapped (directories and meta.properties not expressible)."""
    profile, prod, _, _ = _FT[tag]
    assert ok(fmt(profile))["metadata_version"]["name"] == prod


@pytest.mark.rule("KIP1022-FMT-02", "pass")
@pytest.mark.parametrize("tag", TAGSF)
def test_FormatterTest_testFormatWithOlderReleaseVersion__4_x(tag: str) -> None:
    """FormatterTest.testFormatWithOlderReleaseVersion, FormatterTest.java:223@4.0.0, :254@4.1.0, :260@4.2.0-rc1."""
    out = ok(fmt(_FT[tag][0], release_version="3.5-IV0"))
    assert out["metadata_version"]["name"] == "3.5-IV0", out
    assert _records(out) == [(MV, 9)], out


@pytest.mark.rule("KIP1022-FMT-07", "fail")
@pytest.mark.parametrize("tag", TAGSF)
def test_FormatterTest_testFormatWithUnstableReleaseVersionFailsWithoutEnableUnstable__4_x(tag: str) -> None:
    """FormatterTest.testFormatWithUnstableReleaseVersionFailsWithoutEnableUnstable, FormatterTest.java:239@4.0.0,
    :270@4.1.0, :277@4.2.0-rc1 (the Formatter is handed latestTesting as a MetadataVersion)."""
    profile, _, testing, _ = _FT[tag]
    out = fmt(profile, release_version=testing)
    if tag == "4_2_0_rc1":
        # 4.2's kafka-storage parses --release-version with fromVersionString(s, unstable): the string path fails
        # earlier, with the parse error; the Formatter's own check is not reachable through the tool.
        refused(out, "TOOL_ERROR", "KIP1022-FMT-02", f"Unknown metadata.version '{testing}'")
    else:
        tool_error(out, f"metadata.version {testing} is not yet stable.", "KIP1022-FMT-07")


@pytest.mark.rule("KIP1022-FMT-07", "pass")
@pytest.mark.parametrize("tag", TAGSF)
def test_FormatterTest_testFormatWithUnstableReleaseVersion__4_x(tag: str) -> None:
    """FormatterTest.testFormatWithUnstableReleaseVersion, FormatterTest.java:249@4.0.0, :280@4.1.0, :287@4.2.0-rc1."""
    profile, _, testing, _ = _FT[tag]
    assert ok(fmt(profile, release_version=testing, unstable=True))["metadata_version"]["name"] == testing


@pytest.mark.rule("KIP1022-FMT-11", "pass")
@pytest.mark.parametrize(("tag", "expected"), [
    ("4_0_0", [(MV, 25), ("group.version", 1), ("transaction.version", 2)]),
    ("4_1_0", [(MV, 27), (ELR, 1), ("group.version", 1), ("transaction.version", 2)]),
    ("4_2_0_rc1", [(MV, 29), (ELR, 1), ("group.version", 1), ("share.version", 1), ("streams.version", 1),
                   ("transaction.version", 2)]),
])
def test_FormatterTest_testFeatureFlag__4_x(tag: str, expected: list[tuple[str, int]]) -> None:
    """FormatterTest.testFeatureFlag[version=0], FormatterTest.java:337@4.0.0, :368@4.1.0, :377@4.2.0-rc1: the
    bootstrap records at latestProduction (4.1.0 adds ELR 1, 4.2.0-rc1 share.version 1 and streams.version 1).
    ADAPTED: test.feature.version=0 writes no record, so the case is a plain format; [version=1] is not
    expressible (test-only feature)."""
    assert _records(ok(fmt(_FT[tag][0]))) == expected


@pytest.mark.rule("KIP1022-FMT-03", "fail")
@pytest.mark.parametrize("tag", TAGSF)
def test_FormatterTest_testInvalidFeatureFlag__4_x(tag: str) -> None:
    """FormatterTest.testInvalidFeatureFlag, FormatterTest.java:366@4.0.0, :400@4.1.0, :415@4.2.0-rc1.  ADAPTED:
    PRODUCTION_FEATURES' list (Kafka's also names test.feature.version)."""
    profile, _, _, names = _FT[tag]
    tool_error(fmt(profile, features=["nonexistent.feature=1"]),
               f"Unsupported feature: nonexistent.feature. Supported features are: {names}", "KIP1022-FMT-03")


@pytest.mark.rule("KIP1022-FMT-09", "pass")
@pytest.mark.parametrize("tag", TAGSF)
@pytest.mark.parametrize("specify_kraft_version", [False, True])
def test_FormatterTest_testFormatWithInitialVoters__4_x(tag: str, specify_kraft_version: bool) -> None:
    """FormatterTest.testFormatWithInitialVoters, FormatterTest.java:382@4.0.0, :416@4.1.0, :431@4.2.0-rc1:
    kraft.version 1 at latestTesting (4.2.0-rc1, like 4.1.1, also sets hasDynamicQuorum)."""
    profile, _, testing, _ = _FT[tag]
    feats = ["kraft.version=1"] if specify_kraft_version else []
    extra = DYN_INITIAL if tag == "4_2_0_rc1" else {"initial_controllers": True}
    out = ok(fmt(profile, unstable=True, features=feats, **extra))
    assert out["levels"]["kraft.version"] == 1 and out["metadata_version"]["name"] == testing, out


_K0_KIP853 = ("Cannot set kraft.version to 0 if KIP-853 configuration is present. Try removing the --feature flag "
              "for kraft.version.")
_K1_KIP853 = ("Cannot set kraft.version to 1 unless KIP-853 configuration is present. Try removing the --feature "
              "flag for kraft.version.")
_K0_FLAGS = ("Cannot set kraft.version to 0 if one of the flags --standalone, --initial-controllers, or "
             "--no-initial-controllers is used. For dynamic controllers support, try removing the --feature flag "
             "for kraft.version.")
_K1_FLAGS = ("Cannot set kraft.version to 1 unless one of the flags --standalone, --initial-controllers, or "
             "--no-initial-controllers is used. For dynamic controllers support, try using one of --standalone, "
             "--initial-controllers, or --no-initial-controllers.")
_K0_VOTERS = ("Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags --standalone, "
              "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try "
              "removing the --feature flag for kraft.version.")
_K1_VOTERS = ("Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the flags "
              "--standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic controllers "
              "support, try using one of --standalone, --initial-controllers, or --no-initial-controllers and "
              "removing controller.quorum.voters.")


@pytest.mark.rule("KIP1022-FMT-08", "fail")
@pytest.mark.parametrize(("tag", "line", "args", "message"), [
    ("4_0_0", 416, {"initial_controllers": True}, _K0_KIP853),
    ("4_1_0", 450, {"initial_controllers": True}, _K0_FLAGS),
    ("4_2_0_rc1", 467, DYN_INITIAL, _K0_VOTERS),
])
def test_FormatterTest_testFormatWithInitialVotersFailsWithOlderKraftVersion__4_x(tag: str, line: int,
                                                                                  args: dict[str, Any],
                                                                                  message: str) -> None:
    """FormatterTest.testFormatWithInitialVotersFailsWithOlderKraftVersion, FormatterTest.java:416@4.0.0,
    :450@4.1.0, :467@4.2.0-rc1: the message changes at each tag."""
    tool_error(fmt(_FT[tag][0], unstable=True, features=["kraft.version=0"], **args), message, "KIP1022-FMT-08")


@pytest.mark.rule("KIP1022-FMT-09", "fail")
@pytest.mark.parametrize(("tag", "method", "line", "args", "message"), [
    ("4_0_0", "testFormatWithoutInitialVotersFailsWithNewerKraftVersion", 432, {}, _K1_KIP853),
    ("4_0_0", "testFormatWithoutNoInitialControllersFailsWithNewerKraftVersion", 524, {}, _K1_KIP853),
    ("4_1_0", "testFormatWithoutInitialVotersFailsWithNewerKraftVersion", 468, {}, _K1_FLAGS),
    ("4_1_0", "testFormatWithoutNoInitialControllersFailsWithNewerKraftVersion", 562, {}, _K1_FLAGS),
    ("4_2_0_rc1", "testFormatWithStaticQuorumFailsWithNewerKraftVersion", 486, STATIC, _K1_VOTERS),
])
def test_FormatterTest_newer_kraft_version_without_dynamic_quorum__4_x(tag: str, method: str, line: int,
                                                                      args: dict[str, Any], message: str) -> None:
    """FormatterTest.<method>, FormatterTest.java:<line>@<tag>: kraft.version=1 without a dynamic quorum."""
    tool_error(fmt(_FT[tag][0], unstable=True, features=["kraft.version=1"], **args), message, "KIP1022-FMT-09")


@pytest.mark.rule("KIP1022-FMT-08", "fail")
@pytest.mark.parametrize(("tag", "line", "message"), [("4_0_0", 539, _K0_KIP853), ("4_1_0", 579, _K0_FLAGS)])
def test_FormatterTest_testFormatWithNoInitialControllersFailsWithOlderKraftVersion__4_x(tag: str, line: int,
                                                                                         message: str) -> None:
    """FormatterTest.testFormatWithNoInitialControllersFailsWithOlderKraftVersion, FormatterTest.java:539@4.0.0,
    :579@4.1.0 (removed at 4.1.1)."""
    tool_error(fmt(_FT[tag][0], unstable=True, features=["kraft.version=0"], no_initial_controllers=True), message,
               "KIP1022-FMT-08")


@pytest.mark.rule("KIP1022-FMT-05", "fail")
@pytest.mark.parametrize(("tag", "line"), [("4_0_0", 446), ("4_1_0", 484)])
def test_FormatterTest_testFormatWithInitialVotersFailsWithOlderMetadataVersion__4_x(tag: str, line: int) -> None:
    """FormatterTest.testFormatWithInitialVotersFailsWithOlderMetadataVersion, FormatterTest.java:446@4.0.0,
    :484@4.1.0: kraft.version 1 depends on metadata.version 3.9-IV0 (level 21) until 4.1.1."""
    tool_error(fmt(_FT[tag][0], release_version="3.8-IV0", features=["kraft.version=1"], unstable=True,
                   initial_controllers=True),
               "kraft.version could not be set to 1 because it depends on metadata.version level 21", "KIP1022-FMT-05")


@pytest.mark.rule("KIP1022-FMT-05", "pass")
def test_FormatterTest_testFormatWithInitialVotersWithOlderMetadataVersion__4_2_0_rc1() -> None:
    """FormatterTest.testFormatWithInitialVotersWithOlderMetadataVersion, FormatterTest.java:503@4.2.0-rc1."""
    out = ok(fmt(P42, release_version="3.8-IV0", features=["kraft.version=1"], unstable=True, **DYN_INITIAL))
    assert out["levels"]["kraft.version"] == 1, out


@pytest.mark.rule("KIP1022-FMT-10", "pass")
@pytest.mark.parametrize("has_dynamic_quorum", [False, True])
def test_FormatterTest_testFormatWithNoInitialControllersWithOlderMetadataVersion__4_2_0_rc1(
        has_dynamic_quorum: bool) -> None:
    """FormatterTest.testFormatWithNoInitialControllersWithOlderMetadataVersion, FormatterTest.java:519@4.2.0-rc1."""
    out = ok(fmt(P42, release_version="3.8-IV0", **(DYN_NO_INITIAL if has_dynamic_quorum else STATIC)))
    assert out["levels"]["kraft.version"] == (1 if has_dynamic_quorum else 0), out


@pytest.mark.rule("KIP1022-FMT-05", "fail")
@pytest.mark.parametrize("tag", TAGSF)
@pytest.mark.parametrize("release_version", ["3.9-IV0", "4.0-IV0", "4.0-IV1"])
def test_FormatterTest_testFormatElrEnabledWithMetadataVersions__4_x(tag: str, release_version: str) -> None:
    """FormatterTest.testFormatElrEnabledWithMetadataVersions, FormatterTest.java:471@4.0.0, :509@4.1.0,
    :543@4.2.0-rc1 (no unstable versions)."""
    extra = DYN_INITIAL if tag == "4_2_0_rc1" else {"initial_controllers": True}
    out = fmt(_FT[tag][0], release_version=release_version, features=[f"{ELR}=1"], **extra)
    if release_version == "4.0-IV1":
        assert ok(out)["levels"][ELR] == 1, out
    else:
        tool_error(out, "eligible.leader.replicas.version could not be set to 1 because it depends on "
                        "metadata.version level 23", "KIP1022-FMT-05")


@pytest.mark.rule("KIP1022-FMT-10", "pass")
@pytest.mark.parametrize(("tag", "line"), [("4_0_0", 491), ("4_1_0", 529)])
@pytest.mark.parametrize("specify_kraft_version", [False, True])
def test_FormatterTest_testFormatWithNoInitialControllers__4_0_0_and_4_1_0(tag: str, line: int,
                                                                          specify_kraft_version: bool) -> None:
    """FormatterTest.testFormatWithNoInitialControllers(specifyKRaftVersion), FormatterTest.java:491@4.0.0,
    :529@4.1.0: --no-initial-controllers makes the quorum dynamic, kraft.version 1, latestTesting."""
    profile, _, testing, _ = _FT[tag]
    feats = ["kraft.version=1"] if specify_kraft_version else []
    out = ok(fmt(profile, unstable=True, features=feats, no_initial_controllers=True))
    assert out["levels"]["kraft.version"] == 1 and out["dynamic_quorum"] is True, out
    assert out["metadata_version"]["name"] == testing, out


@pytest.mark.rule("KIP1022-FMT-10", "pass")
def test_FormatterTest_testFormatWithNoInitialControllers__4_2_0_rc1() -> None:
    """FormatterTest.testFormatWithNoInitialControllers, FormatterTest.java:563@4.2.0-rc1: no flag, static quorum,
    kraft.version 0."""
    out = ok(fmt(P42, unstable=True, **STATIC))
    assert out["levels"]["kraft.version"] == 0 and out["dynamic_quorum"] is False, out
    assert out["metadata_version"]["name"] == "4.3-IV0", out


_PRINTED_F = [
    # (tag, Kafka method, line, format args, line kind, metadata.version printed)
    ("4_0_0", "testIgnoreFormatted", 181, {}, "metadata directory", "4.0-IV3"),
    ("4_0_0", "testFormatWithOlderReleaseVersion", 223, {"release_version": "3.5-IV0"}, "metadata directory", "3.5-IV0"),
    ("4_0_0", "testFormatWithUnstableReleaseVersion", 249, {"release_version": "4.1-IV0", "unstable": True},
     "metadata directory", "4.1-IV0"),
    ("4_0_0", "testFormatWithInitialVoters", 382, {"unstable": True, "initial_controllers": True},
     "dynamic metadata voter directory", "4.1-IV0"),
    ("4_0_0", "testFormatWithNoInitialControllers", 491, {"unstable": True, "no_initial_controllers": True},
     "metadata directory", "4.1-IV0"),
    ("4_1_0", "testIgnoreFormatted", 179, {}, "metadata directory", "4.1-IV1"),
    ("4_1_0", "testStandaloneWithIgnoreFormatted", 196, {"initial_controllers": True},
     "dynamic metadata voter directory", "4.1-IV1"),
    ("4_1_0", "testFormatWithOlderReleaseVersion", 254, {"release_version": "3.5-IV0"}, "metadata directory", "3.5-IV0"),
    ("4_1_0", "testFormatWithUnstableReleaseVersion", 280, {"release_version": "4.2-IV1", "unstable": True},
     "metadata directory", "4.2-IV1"),
    ("4_1_0", "testFormatWithInitialVoters", 416, {"unstable": True, "initial_controllers": True},
     "dynamic metadata voter directory", "4.2-IV1"),
    ("4_1_0", "testFormatWithNoInitialControllers", 529, {"unstable": True, "no_initial_controllers": True},
     "metadata directory", "4.2-IV1"),
    ("4_2_0_rc1", "testIgnoreFormatted", 182, {}, "metadata directory", "4.2-IV1"),
    ("4_2_0_rc1", "testStandaloneWithIgnoreFormatted", 199, DYN_INITIAL, "dynamic metadata voter directory", "4.2-IV1"),
    ("4_2_0_rc1", "testFormatWithOlderReleaseVersion", 260, {"release_version": "3.5-IV0"}, "metadata directory",
     "3.5-IV0"),
    ("4_2_0_rc1", "testFormatWithUnstableReleaseVersion", 287, {"release_version": "4.3-IV0", "unstable": True},
     "metadata directory", "4.3-IV0"),
    ("4_2_0_rc1", "testFormatWithInitialVoters", 431, {"unstable": True, **DYN_INITIAL},
     "dynamic metadata voter directory", "4.3-IV0"),
    ("4_2_0_rc1", "testFormatWithNoInitialControllers", 563, {"unstable": True}, "metadata directory", "4.3-IV0"),
]


@pytest.mark.rule("KIP1022-FMT-11", "pass")
@pytest.mark.parametrize(("tag", "method", "line", "args", "kind", "mv_name"), [
    pytest.param(*case, id=f"{case[0]}-{case[1]}", marks=pytest.mark.xfail(strict=True, reason=PRINTED_DIFFERS))
    for case in _PRINTED_F])
def test_FormatterTest_printed__4_x(tag: str, method: str, line: int, args: dict[str, Any], kind: str,
                                    mv_name: str) -> None:
    """FormatterTest.<method> printed output, FormatterTest.java:<line>@<tag>: 'Formatting <kind> <dir> with
    metadata.version <mv>.' (4.2.0-rc1 prints 'Bootstrap metadata: ...' first; that line is not expressible)."""
    printed_format_line(ok(fmt(_FT[tag][0], **args)), kind, mv_name)


# =================================================================================================
# MetadataVersionTest @ 4.0.0 (kafka-4.0) and 4.2.0-rc1 (kafka-4.2)
# =================================================================================================

_MVT = {  # tag -> profile, latestProduction, latestTesting, bare X.Y asserted, exact names asserted
    "4_0_0": (P40, "4.0-IV3", "4.1-IV0",
              {"3.3": "3.3-IV3", "3.4": "3.4-IV0", "3.5": "3.5-IV2", "3.6": "3.6-IV2", "3.7": "3.7-IV4",
               "3.8": "3.8-IV0", "3.9": "3.9-IV0"}, MVS[:MVS.index("4.1-IV0") + 1]),
    "4_2_0_rc1": (P42, "4.2-IV1", "4.3-IV0",
                  {"3.3": "3.3-IV3", "3.4": "3.4-IV0", "3.5": "3.5-IV2", "3.6": "3.6-IV2", "3.7": "3.7-IV4",
                   "3.8": "3.8-IV0", "3.9": "3.9-IV0", "4.0": "4.0-IV3", "4.1": "4.1-IV1", "4.2": "4.2-IV1"}, MVS),
}
TAGSM = list(_MVT)


@pytest.mark.rule("KIP1022-MAP-01", "pass")
@pytest.mark.parametrize("tag", TAGSM)
def test_MetadataVersionTest_testFeatureLevels__4_x(tag: str) -> None:
    """MetadataVersionTest.testFeatureLevels, server-common/.../MetadataVersionTest.java:34@4.0.0, :35@4.2.0-rc1:
    contiguous levels from MINIMUM_VERSION (7), through version-mapping."""
    profile, _, testing, _, _ = _MVT[tag]
    c = Cluster(profile)
    for name in MVS[:MVS.index(testing) + 1]:
        out = ok(c.apply({"op": "version_mapping", "release_version": name}))
        assert out["metadata_version"] == LEVEL[name], (name, out)


@pytest.mark.rule("KIP1022-MAP-01", "pass")
@pytest.mark.parametrize("tag", TAGSM)
def test_MetadataVersionTest_testFromVersionString__4_x(tag: str) -> None:
    """MetadataVersionTest.testFromVersionString, MetadataVersionTest.java:43@4.0.0 (ends with 4.1-IV0, unstable),
    :44@4.2.0-rc1 (fromVersionString(s, true), ends with 4.3-IV0): version-mapping parses the same way."""
    profile, _, _, bare, exact = _MVT[tag]
    c = Cluster(profile)
    for s, name in [*bare.items(), *((n, n) for n in exact)]:
        out = ok(c.apply({"op": "version_mapping", "release_version": s}))
        assert out["metadata_version"] == LEVEL[name], (s, out)


@pytest.mark.rule("KIP1022-FMT-02", "fail")
def test_MetadataVersionTest_testFromVersionString_unstable_refused__4_2_0_rc1() -> None:
    """MetadataVersionTest.testFromVersionString, MetadataVersionTest.java:101-103@4.2.0-rc1:
    fromVersionString("4.3-IV0", false) fails listing MINIMUM_VERSION..latestProduction (kafka-storage format
    --release-version without unstable versions parses the same way)."""
    tool_error(fmt(P42, release_version="4.3-IV0"),
               "Unknown metadata.version '4.3-IV0'. Supported metadata.version are: " + ", ".join(MVS[:-1]),
               "KIP1022-FMT-02")


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
def test_MetadataVersionTest_testMetadataVersionsToString__4_2_0_rc1() -> None:
    """MetadataVersionTest.testMetadataVersionsToString, MetadataVersionTest.java:107@4.2.0-rc1 (moved here from
    FeatureCommandTest).  ADAPTED: the run '3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0' in kafka-features' unknown --metadata
    listing."""
    c = kraft_cluster(P42, "3.4-IV0")
    refused(features_tool(c, "upgrade", metadata="9.9-IV9"), "TOOL_ERROR", "KIP1022-TOOL-03",
            "3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0")


@pytest.mark.rule("KIP1022-DEP-01", "pass")
@pytest.mark.parametrize(("tag", "last"), [("4_0_0", "4.1-IV0"), ("4_2_0_rc1", "4.3-IV0")])
def test_MetadataVersionTest_testVersion__4_x(tag: str, last: str) -> None:
    """MetadataVersionTest.testVersion, MetadataVersionTest.java:114@4.0.0 (to 4.1-IV0), :141@4.2.0-rc1 (to
    4.3-IV0): the version string of each level, as feature-dependencies prints it."""
    c = Cluster(_MVT[tag][0])
    for name in MVS[:MVS.index(last) + 1]:
        out = ok(c.apply({"op": "feature_dependencies", "features": [f"{MV}={LEVEL[name]}"]}))
        assert stdout(out) == f"{MV}={LEVEL[name]} ({name}) has no dependencies.", out


@pytest.mark.rule("KIP778-MV-03", "pass")
@pytest.mark.rule("KIP778-MV-04", "fail")
@pytest.mark.parametrize(("high", "low", "changed"), [
    ("3.4-IV0", "3.3-IV3", True), ("3.5-IV0", "3.4-IV0", False), ("3.5-IV1", "3.5-IV0", False),
    ("3.6-IV0", "3.5-IV1", True), ("3.6-IV1", "3.6-IV0", True)])
def test_MetadataVersionTest_testMetadataChanged__4_0_0(high: str, low: str, changed: bool) -> None:
    """MetadataVersionTest.testMetadataChanged, MetadataVersionTest.java:147@4.0.0: a SAFE_DOWNGRADE high -> low is
    refused exactly when checkIfMetadataChanged."""
    c = Cluster(P40)
    ok(c.apply({"op": "restore_state", "metadata_version": LEVEL[high]}))
    out = c.apply({"op": "update_features", "updates": [
        {"feature": MV, "level": LEVEL[low], "upgrade_type": "SAFE_DOWNGRADE"}]})
    if changed:
        refused(out, "INVALID_UPDATE_VERSION", "KIP778-MV-04", "might delete metadata information")
    else:
        ok(out)


@pytest.mark.rule("KIP778-PAY-01", "pass")
@pytest.mark.rule("KIP778-PAY-01", "fail")
@pytest.mark.parametrize(("tag", "method", "kind", "first"), [
    ("4_0_0", "testIsDelegationTokenSupported", "delegation_token", "3.6-IV2"),         # :163
    ("4_0_0", "testDirectoryAssignmentSupported", "directory_assignment", "3.7-IV2"),   # :170
    ("4_0_0", "testIsElrSupported", "elr_partition_state", "4.0-IV1"),                  # :176
    ("4_2_0_rc1", "testIsDelegationTokenSupported", "delegation_token", "3.6-IV2"),      # :194
    ("4_2_0_rc1", "testDirectoryAssignmentSupported", "directory_assignment", "3.7-IV2"),  # :201
    ("4_2_0_rc1", "testIsElrSupported", "elr_partition_state", "4.0-IV1"),               # :207
])
def test_MetadataVersionTest_is_supported__4_x(tag: str, method: str, kind: str, first: str) -> None:
    """MetadataVersionTest.<method>, MetadataVersionTest.java:163/170/176@4.0.0, :194/201/207@4.2.0-rc1
    (@EnumSource over every MetadataVersion)."""
    profile, _, testing, _, _ = _MVT[tag]
    for name in MVS[:MVS.index(testing) + 1]:
        c = Cluster(profile)
        ok(c.apply({"op": "restore_state", "metadata_version": LEVEL[name]}))
        out = c.apply({"op": "add_metadata", "kind": kind})
        if LEVEL[name] >= LEVEL[first]:
            ok(out)
        else:
            refused(out, "UNSUPPORTED_VERSION", "KIP778-PAY-01")


@pytest.mark.rule("KIP1022-FMT-07", "pass")
@pytest.mark.parametrize("tag", TAGSM)
def test_MetadataVersionTest_assertLatestProductionIsLessThanLatest__4_x(tag: str) -> None:
    """MetadataVersionTest.assertLatestProductionIsLessThanLatest, MetadataVersionTest.java:225@4.0.0,
    :256@4.2.0-rc1."""
    profile, prod, testing, _, _ = _MVT[tag]
    production = ok(fmt(profile))["metadata_version"]
    latest = ok(fmt(profile, unstable=True))["metadata_version"]
    assert (production["name"], latest["name"]) == (prod, testing)
    assert production["level"] < latest["level"]


@pytest.mark.rule("KIP1022-FMT-07", "pass")
@pytest.mark.parametrize("tag", TAGSM)
def test_MetadataVersionTest_assertLatestProductionIsProduction__4_x(tag: str) -> None:
    """MetadataVersionTest.assertLatestProductionIsProduction, MetadataVersionTest.java:244@4.0.0, :275@4.2.0-rc1."""
    profile, prod, _, _, _ = _MVT[tag]
    assert ok(fmt(profile, release_version=prod))["metadata_version"]["name"] == prod


@pytest.mark.rule("KIP1022-FMT-07", "fail")
def test_MetadataVersionTest_assertLatestIsNotProduction__4_0_0() -> None:
    """MetadataVersionTest.assertLatestIsNotProduction, MetadataVersionTest.java:249@4.0.0."""
    tool_error(fmt(P40, release_version="4.1-IV0"), "metadata.version 4.1-IV0 is not yet stable.", "KIP1022-FMT-07")


@pytest.mark.rule("KIP1022-FMT-02", "fail")
def test_MetadataVersionTest_assertLatestIsNotProduction__4_2_0_rc1() -> None:
    """MetadataVersionTest.assertLatestIsNotProduction, MetadataVersionTest.java:280@4.2.0-rc1: latestTesting
    (4.3-IV0) is not production, so without unstable versions format refuses it (4.2 refuses at parsing)."""
    refused(fmt(P42, release_version="4.3-IV0"), "TOOL_ERROR", "KIP1022-FMT-02", "Unknown metadata.version '4.3-IV0'")


# =================================================================================================
# StorageToolTest @ 4.0.0 (kafka-4.0): feature-related cases
# =================================================================================================
DYN_PROPS = {"static_voters": False, "unstable": True}


@pytest.mark.rule("KIP1022-FMT-02", "pass")
@pytest.mark.parametrize(("method", "line", "args", "shown"), [
    ("testFormatWithReleaseVersion", 298, {"release_version": "3.8-IV0"}, "3.8-IV0"),
    ("testFormatWithReleaseVersionAsFeature", 310, {"features": [f"{MV}=20"]}, "3.8-IV0"),
    ("testFormatWithReleaseVersionAndKRaftVersion", 347,
     {"release_version": "3.7-IV0", "features": ["kraft.version=0"]}, "3.7-IV0"),
    ("testFormatWithReleaseVersionDefaultAndReleaseVersion", 361,
     {"release_version": "3.6-IV0", "features": ["kraft.version=0"]}, "3.6-IV0"),
])
def test_StorageToolTest_format_release_version__4_0_0(method: str, line: int, args: dict[str, Any], shown: str) -> None:
    """StorageToolTest.<method>, core/.../StorageToolTest.scala:<line>@4.0.0: exit 0, output contains the version."""
    out = ok(fmt(P40, **args))
    assert out["metadata_version"]["name"] == shown and shown in "\n".join(out["lines"]), out


@pytest.mark.rule("KIP1022-FMT-03", "fail")
def test_StorageToolTest_testFormatWithInvalidFeature__4_0_0() -> None:
    """StorageToolTest.testFormatWithInvalidFeature, StorageToolTest.scala:322@4.0.0 (four production features)."""
    tool_error(fmt(P40, features=["non.existent.feature=20"]),
               "Unsupported feature: non.existent.feature. Supported features are: eligible.leader.replicas.version, "
               "group.version, kraft.version, transaction.version", "KIP1022-FMT-03")


@pytest.mark.rule("KIP1022-FMT-04", "fail")
def test_StorageToolTest_testFormatWithInvalidKRaftVersionLevel__4_0_0() -> None:
    """StorageToolTest.testFormatWithInvalidKRaftVersionLevel, StorageToolTest.scala:335@4.0.0."""
    tool_error(fmt(P40, features=["kraft.version=999"], standalone=True, **DYN_PROPS),
               "No feature:kraft.version with feature level 999", "KIP1022-FMT-04")


@pytest.mark.rule("KIP1022-FMT-09", "pass")
@pytest.mark.parametrize(("flag", "line"), [("standalone", 389), ("initial_controllers", 419),
                                            ("no_initial_controllers", 463)])
@pytest.mark.parametrize("set_kraft_version_feature", [False, True])
def test_StorageToolTest_dynamic_quorum_flags__4_0_0(flag: str, line: int, set_kraft_version_feature: bool) -> None:
    """StorageToolTest.testFormatWithStandaloneFlag (StorageToolTest.scala:389@4.0.0),
    testFormatWithInitialControllersFlag (:419) and testFormatWithNoInitialControllersSucceedsOnController (:463,
    parametrized with kraft.version=1 only at 4.0.0): exit 0, a dynamic quorum at kraft.version 1."""
    feats = ["kraft.version=1"] if set_kraft_version_feature else []
    out = ok(fmt(P40, release_version="3.9-IV0", features=feats, **{flag: True}, **DYN_PROPS))
    assert out["dynamic_quorum"] is True and out["levels"]["kraft.version"] == 1, out


@pytest.mark.rule("KIP1022-FMT-13", "fail")
def test_StorageToolTest_testFormatWithStandaloneFlagAndInitialControllersFlagFails__4_0_0() -> None:
    """StorageToolTest.testFormatWithStandaloneFlagAndInitialControllersFlagFails, StorageToolTest.scala:407@4.0.0."""
    refused(fmt(P40, release_version="3.9-IV0", standalone=True, initial_controllers=True), "TOOL_ERROR",
            "KIP1022-FMT-13", "not allowed with argument")


@pytest.mark.rule("KIP1022-FMT-13", "fail")
@pytest.mark.parametrize("process_roles", ["controller", "broker,controller"])
def test_StorageToolTest_testFormatWithoutStaticQuorumFailsWithoutInitialControllersOnController__4_0_0(
        process_roles: str) -> None:
    """StorageToolTest.testFormatWithoutStaticQuorumFailsWithoutInitialControllersOnController,
    StorageToolTest.scala:443@4.0.0."""
    tool_error(fmt(P40, release_version="3.9-IV0", **DYN_PROPS),
               "Because controller.quorum.voters is not set on this controller, you must specify one of the following: "
               "--standalone, --initial-controllers, or --no-initial-controllers.", "KIP1022-FMT-13")


@pytest.mark.rule("KIP1022-FMT-13", "fail")
@pytest.mark.parametrize(("method", "line", "flags", "message"), [
    pytest.param("testFormatWithNoInitialControllersFlagAndStandaloneFlagFails", 481,
                 {"no_initial_controllers": True, "standalone": True},
                 "argument --standalone/-s: not allowed with argument --no-initial-controllers/-N",
                 id="NoInitialControllersAndStandalone",
                 marks=pytest.mark.xfail(strict=True, reason=ARGPARSE_DIFFERS)),
    pytest.param("testFormatWithNoInitialControllersFlagAndInitialControllersFlagFails", 491,
                 {"no_initial_controllers": True, "initial_controllers": True},
                 "argument --initial-controllers/-I: not allowed with argument --no-initial-controllers/-N",
                 id="NoInitialControllersAndInitialControllers",
                 marks=pytest.mark.xfail(strict=True, reason=ARGPARSE_DIFFERS)),
])
def test_StorageToolTest_mutually_exclusive_quorum_flags__4_0_0(method: str, line: int, flags: dict[str, Any],
                                                                message: str) -> None:
    """StorageToolTest.<method>, StorageToolTest.scala:<line>@4.0.0: the ArgumentParserException's message."""
    tool_error(fmt(P40, release_version="3.9-IV0", **flags), message, "KIP1022-FMT-13")


@pytest.mark.rule("KIP1022-FMT-11", "pass")
@pytest.mark.parametrize(("method", "line", "args", "kind"), [
    pytest.param(m, ln, a, k, id=m, marks=pytest.mark.xfail(strict=True, reason=PRINTED_DIFFERS)) for m, ln, a, k in [
        ("testFormatWithStandaloneFlag", 389, {"standalone": True}, "dynamic metadata voter directory"),
        ("testFormatWithInitialControllersFlag", 419, {"initial_controllers": True}, "dynamic metadata voter directory"),
        ("testFormatWithNoInitialControllersSucceedsOnController", 463, {"no_initial_controllers": True},
         "metadata directory"),
    ]])
def test_StorageToolTest_printed__4_0_0(method: str, line: int, args: dict[str, Any], kind: str) -> None:
    """StorageToolTest.<method> printed output, StorageToolTest.scala:<line>@4.0.0: 'Formatting <kind> <dir>'."""
    printed_format_line(ok(fmt(P40, release_version="3.9-IV0", **args, **DYN_PROPS)), kind, "3.9-IV0")


@pytest.mark.rule("KIP1022-MAP-01", "pass")
@pytest.mark.parametrize(("method", "line", "rv", "level", "shown"), [
    ("testVersionMappingWithValidReleaseVersion", 537, "3.3-IV3", 7, "3.3-IV3"),
    ("testVersionMappingWithNoReleaseVersion", 558, None, 25, "4.0-IV3"),
])
def test_StorageToolTest_version_mapping__4_0_0(method: str, line: int, rv: str | None, level: int, shown: str) -> None:
    """StorageToolTest.<method>, StorageToolTest.scala:<line>@4.0.0 (PRODUCTION_FEATURES' defaults)."""
    kw = {"release_version": rv} if rv is not None else {}
    _mapping_contains(ok(Cluster(P40).apply({"op": "version_mapping", **kw})), P40, level, shown)


@pytest.mark.rule("KIP1022-MAP-02", "fail")
@pytest.mark.parametrize("rv", ["2.9-IV2", "invalid"])
def test_StorageToolTest_testVersionMappingWithInvalidReleaseVersion__4_0_0(rv: str) -> None:
    """StorageToolTest.testVersionMappingWithInvalidReleaseVersion, StorageToolTest.scala:581@4.0.0."""
    tool_error(Cluster(P40).apply({"op": "version_mapping", "release_version": rv}),
               f"Unknown release version '{rv}'. Supported versions are: 3.3-IV3 to 4.0-IV3", "KIP1022-MAP-02")


@pytest.mark.rule("KIP1022-DEP-01", "pass")
@pytest.mark.parametrize(("method", "line", "flags", "expected"), [
    ("testMultipleFeatureDependencies", 640, ["transaction.version=2", "group.version=1"],
     "transaction.version=2 has no dependencies.\ngroup.version=1 has no dependencies."),
    ("testHandleFeatureDependenciesForFeatureWithNoDependencies", 658, [f"{MV}=17"],
     "metadata.version=17 (3.7-IV2) has no dependencies."),
])
def test_StorageToolTest_feature_dependencies__4_0_0(method: str, line: int, flags: list[str], expected: str) -> None:
    """StorageToolTest.<method>, StorageToolTest.scala:<line>@4.0.0 (kafka-storage feature-dependencies)."""
    assert stdout(ok(Cluster(P40).apply({"op": "feature_dependencies", "features": flags}))) == expected


@pytest.mark.rule("KIP1022-DEP-02", "fail")
@pytest.mark.parametrize(("method", "line", "flag", "message"), [
    ("testHandleFeatureDependenciesForUnknownFeature", 668, "unknown.feature.version=1",
     "Unknown feature: unknown.feature.version"),
    ("testHandleFeatureDependenciesForFeatureWithUnknownFeatureVersion", 678, "transaction.version=1000",
     "Feature level 1000 is not supported for feature transaction.version"),
    ("testHandleFeatureDependenciesForInvalidVersionFormat", 688, f"{MV}=invalid",
     "Invalid version format: invalid for feature metadata.version"),
])
def test_StorageToolTest_feature_dependencies_errors__4_0_0(method: str, line: int, flag: str, message: str) -> None:
    """StorageToolTest.<method>, StorageToolTest.scala:<line>@4.0.0."""
    tool_error(Cluster(P40).apply({"op": "feature_dependencies", "features": [flag]}), message, "KIP1022-DEP-02")


@pytest.mark.rule("KIP1022-FMT-03", "fail")
def test_StorageToolTest_testParseNameAndLevel__4_0_0() -> None:
    """StorageToolTest.testParseNameAndLevel, StorageToolTest.scala:744@4.0.0.  ADAPTED (as at 4.1.1): through
    format, 'foo.bar=56' parses and reaches the supported-feature check."""
    refused(fmt(P40, features=["foo.bar=56"]), "TOOL_ERROR", "KIP1022-FMT-03", "Unsupported feature: foo.bar.")


@pytest.mark.rule("KIP1022-FMT-12", "fail")
@pytest.mark.parametrize(("method", "line", "flag", "message"), [
    ("testParseNameAndLevelWithNoEquals", 749, "kraft.version5",
     "Can't parse feature=level string kraft.version5: equals sign not found."),
    ("testParseNameAndLevelWithNoNumber", 757, "kraft.version=foo",
     "Can't parse feature=level string kraft.version=foo: unable to parse foo as a short."),
])
def test_StorageToolTest_parseNameAndLevel_errors__4_0_0(method: str, line: int, flag: str, message: str) -> None:
    """StorageToolTest.<method>, StorageToolTest.scala:<line>@4.0.0."""
    tool_error(fmt(P40, features=[flag]), message, "KIP1022-FMT-12")
