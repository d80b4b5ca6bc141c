"""Cases of Kafka's own unit tests, transcribed into commands of the reference, release by release.

Each test is named ``test_<KafkaClass>_<method>__<tag>`` and its docstring gives the Kafka source as
path:line@tag.  Tags 3.7.0 / 3.8.0 / 3.9.0-rc3 are read in apache/kafka, 4.0.0 / 4.1.0 / 4.1.1 /
4.2.0-rc1 in aiven/inkless (which carries the upstream tags).  The profile is the release of the tag;
3.9.0-rc3 is driven with kafka-3.9 (= 3.9.0 final), which only matters for `kafka-storage format
--feature` (KAFKA-17868, docs/research/tools-notes.md), not for the Formatter unit tests transcribed here.

How the Kafka harness maps onto commands:
- FormatterTest builds a Formatter with node id, cluster id and log directories, and by default
  no dynamic quorum (controller.quorum.voters set): ``{"op": "format"}``.
  ``setInitialControllers(..) + setHasDynamicQuorum(true)`` is ``initial_controllers`` without static
  voters; ``setHasDynamicQuorum(true)`` alone is ``no_initial_controllers`` without static voters.
- FeatureCommandTest's @ClusterTest(types = KRAFT) runs one broker (0) and one controller (3000), with
  unstable feature versions enabled; the cluster is formatted at the test's metadataVersion.
  Its console output is compared after trimming, as ToolsTestUtils.captureStandardOut does.
- Only what the reference can express is asserted; the rest of each Kafka test (log directories,
  meta.properties, directory ids, SCRAM records, test-only features, MockAdminClient messages) is
  listed in docs/kafka-cases-tools.md as not expressible.
- Where a Kafka assertion fails against the reference, the test is kept and marked
  ``xfail(strict=True, reason="reference differs: ...")``.  One such difference runs through every
  FormatterTest case that compares printed output: kafka-storage format prints
  ``Formatting <type> <dir> with metadata.version <mv>.`` per directory (Formatter.java:435@4.1.1),
  while the reference's format ``lines`` are ``metadata.version=N (name)`` and ``feature=level``.  Those
  printed-output assertions are split into ``..__printed`` tests so the rest of each case still runs.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import ok, refused

from reference_impl import Cluster

MV = "metadata.version"
ELR = "eligible.leader.replicas.version"

FORMATTER = "metadata/src/test/java/org/apache/kafka/metadata/storage/FormatterTest.java"
STORAGE = "core/src/test/scala/unit/kafka/tools/StorageToolTest.scala"
FEATCMD = "tools/src/test/java/org/apache/kafka/tools/FeatureCommandTest.java"
MVTEST = "server-common/src/test/java/org/apache/kafka/server/common/MetadataVersionTest.java"

# Formatter harness -> format command fields
STATIC: dict[str, Any] = {}
DYN_INITIAL = {"initial_controllers": True, "static_voters": False}
DYN_NO_INITIAL = {"no_initial_controllers": True, "static_voters": False}

PRINTED_DIFFERS = ("reference differs: kafka-storage format prints 'Formatting <type> <dir> with metadata.version "
                   "<mv>.' per directory (Formatter.java:435@4.1.1, :423@3.9.0-rc3); the reference's format lines "
                   "are 'metadata.version=N (name)' and 'feature=level'")


# -- helpers ---------------------------------------------------------------------------------------

def fmt(profile: str, **kw: Any) -> dict[str, Any]:
    return Cluster(profile).apply({"op": "format", **kw})


def tool_error(out: dict[str, Any], message: str, rule: str | None = None) -> dict[str, Any]:
    assert out["error"] == "TOOL_ERROR", out
    if rule is not None:
        assert out["rule"] == rule, out
    assert out["message"] == message, out
    return out


def kraft_cluster(profile: str, release_version: str) -> Cluster:
    """@ClusterTest(types = KRAFT, metadataVersion = ...): controller 3000 and broker 0, unstable enabled."""
    c = Cluster(profile)
    ok(c.apply({"op": "format", "release_version": release_version, "unstable": True,
                "controllers": [{"id": 3000, "unstable": True}]}))
    ok(c.apply({"op": "register", "node": 0, "unstable": True}))
    return c


def features_tool(c: Cluster, action: str, **kw: Any) -> dict[str, Any]:
    return c.apply({"op": "features_tool", "action": action, **kw})


def stdout(out: dict[str, Any]) -> str:
    """captureStandardOut: what the tool printed, trimmed."""
    return "\n".join(out.get("lines") or []).strip()


def without_epoch(line: str) -> str:
    pos = line.find("Epoch: ")
    return line[:pos] if pos > 0 else line


def printed_format_line(out: dict[str, Any], kind: str, mv_name: str) -> None:
    pattern = re.compile(rf"^Formatting {re.escape(kind)} \S+ with metadata\.version {re.escape(mv_name)}\.$")
    assert any(pattern.match(line) for line in out.get("lines") or []), out.get("lines")


# =================================================================================================
# FormatterTest @ 4.1.1 (profile kafka-4.1.1)
# =================================================================================================

P411 = "kafka-4.1.1"


@pytest.mark.rule("KIP1022-FMT-10", "pass")
@pytest.mark.parametrize("num_dirs", [1, 2, 3])
def test_FormatterTest_testDirectories__4_1_1(num_dirs: int) -> None:
    """FormatterTest.testDirectories, metadata/.../FormatterTest.java:140@4.1.1: the bootstrap
    metadata.version is latestProduction (the directory and meta.properties checks are not expressible)."""
    out = ok(fmt(P411))
    assert out["metadata_version"] == {"level": 27, "name": "4.1-IV1"}, out
    assert out["records"][0] == {**out["records"][0], "name": MV, "level": 27}


@pytest.mark.rule("KIP1022-FMT-02", "pass")
def test_FormatterTest_testFormatWithOlderReleaseVersion__4_1_1() -> None:
    """FormatterTest.testFormatWithOlderReleaseVersion, FormatterTest.java:256@4.1.1: release version
    3.5-IV0 bootstraps metadata.version 3.5-IV0 and exactly one record."""
    out = ok(fmt(P411, release_version="3.5-IV0"))
    assert out["metadata_version"]["name"] == "3.5-IV0", out
    assert len(out["records"]) == 1, out
    assert (out["records"][0]["name"], out["records"][0]["level"]) == (MV, 9), out


@pytest.mark.rule("KIP1022-FMT-07", "fail")
def test_FormatterTest_testFormatWithUnstableReleaseVersionFailsWithoutEnableUnstable__4_1_1() -> None:
    """FormatterTest.testFormatWithUnstableReleaseVersionFailsWithoutEnableUnstable,
    FormatterTest.java:272@4.1.1: latestTesting (4.2-IV1) without unstable versions is not yet stable."""
    tool_error(fmt(P411, release_version="4.2-IV1"), "metadata.version 4.2-IV1 is not yet stable.", "KIP1022-FMT-07")


@pytest.mark.rule("KIP1022-FMT-07", "pass")
def test_FormatterTest_testFormatWithUnstableReleaseVersion__4_1_1() -> None:
    """FormatterTest.testFormatWithUnstableReleaseVersion, FormatterTest.java:282@4.1.1."""
    out = ok(fmt(P411, release_version="4.2-IV1", unstable=True))
    assert out["metadata_version"]["name"] == "4.2-IV1", out


@pytest.mark.rule("KIP1022-FMT-03", "fail")
def test_FormatterTest_testInvalidFeatureFlag__4_1_1() -> None:
    """FormatterTest.testInvalidFeatureFlag, FormatterTest.java:402@4.1.1.  ADAPTED: Kafka's test sets the
    supported features to TEST_AND_PRODUCTION_FEATURES, so its list also names test.feature.version;
    kafka-storage passes PRODUCTION_FEATURES, whose list is asserted here."""
    tool_error(fmt(P411, features=["nonexistent.feature=1"]),
               "Unsupported feature: nonexistent.feature. Supported features are: eligible.leader.replicas.version, "
               "group.version, kraft.version, share.version, streams.version, transaction.version", "KIP1022-FMT-03")


@pytest.mark.rule("KIP1022-FMT-09", "pass")
@pytest.mark.parametrize("specify_kraft_version", [False, True])
def test_FormatterTest_testFormatWithInitialVoters__4_1_1(specify_kraft_version: bool) -> None:
    """FormatterTest.testFormatWithInitialVoters, FormatterTest.java:418@4.1.1: kraft.version is 1 and
    the bootstrap metadata.version is latestTesting (unstable enabled)."""
    feats = ["kraft.version=1"] if specify_kraft_version else []
    out = ok(fmt(P411, unstable=True, features=feats, **DYN_INITIAL))
    assert out["levels"]["kraft.version"] == 1, out
    assert out["metadata_version"]["name"] == "4.2-IV1", out
    assert out["dynamic_quorum"] is True, out


@pytest.mark.rule("KIP1022-FMT-08", "fail")
def test_FormatterTest_testFormatWithInitialVotersFailsWithOlderKraftVersion__4_1_1() -> None:
    """FormatterTest.testFormatWithInitialVotersFailsWithOlderKraftVersion, FormatterTest.java:453@4.1.1."""
    tool_error(fmt(P411, unstable=True, features=["kraft.version=0"], **DYN_INITIAL),
               "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags --standalone, "
               "--initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try "
               "removing the --feature flag for kraft.version.", "KIP1022-FMT-08")


@pytest.mark.rule("KIP1022-FMT-09", "fail")
def test_FormatterTest_testFormatWithStaticQuorumFailsWithNewerKraftVersion__4_1_1() -> None:
    """FormatterTest.testFormatWithStaticQuorumFailsWithNewerKraftVersion, FormatterTest.java:472@4.1.1."""
    tool_error(fmt(P411, unstable=True, features=["kraft.version=1"], **STATIC),
               "Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the flags "
               "--standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic controllers "
               "support, try using one of --standalone, --initial-controllers, or --no-initial-controllers and "
               "removing controller.quorum.voters.", "KIP1022-FMT-09")


@pytest.mark.rule("KIP1022-FMT-05", "pass")
def test_FormatterTest_testFormatWithInitialVotersWithOlderMetadataVersion__4_1_1() -> None:
    """FormatterTest.testFormatWithInitialVotersWithOlderMetadataVersion, FormatterTest.java:489@4.1.1:
    from 4.1.1 kraft.version=1 no longer depends on metadata.version 3.9-IV0."""
    out = ok(fmt(P411, release_version="3.8-IV0", features=["kraft.version=1"], unstable=True, **DYN_INITIAL))
    assert out["levels"]["kraft.version"] == 1, out


@pytest.mark.rule("KIP1022-FMT-10", "pass")
@pytest.mark.parametrize("has_dynamic_quorum", [False, True])
def test_FormatterTest_testFormatWithNoInitialControllersWithOlderMetadataVersion__4_1_1(
        has_dynamic_quorum: bool) -> None:
    """FormatterTest.testFormatWithNoInitialControllersWithOlderMetadataVersion, FormatterTest.java:505@4.1.1."""
    out = ok(fmt(P411, release_version="3.8-IV0", **(DYN_NO_INITIAL if has_dynamic_quorum else STATIC)))
    assert out["levels"]["kraft.version"] == (1 if has_dynamic_quorum else 0), out


@pytest.mark.rule("KIP1022-FMT-05", "fail")
@pytest.mark.parametrize("release_version", ["3.9-IV0", "4.0-IV0", "4.0-IV1"])
def test_FormatterTest_testFormatElrEnabledWithMetadataVersions__4_1_1(release_version: str) -> None:
    """FormatterTest.testFormatElrEnabledWithMetadataVersions, FormatterTest.java:529@4.1.1: ELR 1 needs
    metadata.version 4.0-IV1 (level 23)."""
    out = fmt(P411, release_version=release_version, features=[f"{ELR}=1"], **DYN_INITIAL)
    if release_version == "4.0-IV1":
        assert ok(out)["levels"][ELR] == 1, out
    else:
        tool_error(out, "eligible.leader.replicas.version could not be set to 1 because it depends on "
                        "metadata.version level 23", "KIP1022-FMT-05")


@pytest.mark.rule("KIP1022-FMT-10", "pass")
def test_FormatterTest_testFormatWithNoInitialControllers__4_1_1() -> None:
    """FormatterTest.testFormatWithNoInitialControllers, FormatterTest.java:549@4.1.1: static quorum,
    unstable enabled: kraft.version 0 and metadata.version latestTesting."""
    out = ok(fmt(P411, unstable=True, **STATIC))
    assert out["levels"]["kraft.version"] == 0, out
    assert out["dynamic_quorum"] is False, out
    assert out["metadata_version"]["name"] == "4.2-IV1", out


# The printed-output halves of the same cases (see the module docstring).
_PRINTED_411 = [
    # (Kafka method, line, format args, expected line kind, metadata.version printed)
    ("testIgnoreFormatted", 180, {}, "metadata directory", "4.1-IV1"),
    ("testStandaloneWithIgnoreFormatted", 197, DYN_INITIAL, "dynamic metadata voter directory", "4.1-IV1"),
    ("testFormatWithOlderReleaseVersion", 256, {"release_version": "3.5-IV0"}, "metadata directory", "3.5-IV0"),
    ("testFormatWithUnstableReleaseVersion", 282, {"release_version": "4.2-IV1", "unstable": True},
     "metadata directory", "4.2-IV1"),
    ("testFormatWithInitialVoters", 418, {"unstable": True, **DYN_INITIAL}, "dynamic metadata voter directory",
     "4.2-IV1"),
    ("testFormatWithNoInitialControllers", 549, {"unstable": True}, "metadata directory", "4.2-IV1"),
]


@pytest.mark.rule("KIP1022-FMT-11", "pass")
@pytest.mark.parametrize(("method", "line", "args", "kind", "mv_name"), [
    pytest.param(*case, id=case[0], marks=pytest.mark.xfail(strict=True, reason=PRINTED_DIFFERS))
    for case in _PRINTED_411])
def test_FormatterTest_printed__4_1_1(method: str, line: int, args: dict[str, Any], kind: str, mv_name: str) -> None:
    """FormatterTest.<method> printed output, FormatterTest.java:<line>@4.1.1: format prints
    'Formatting <kind> <dir> with metadata.version <mv>.'."""
    printed_format_line(ok(fmt(P411, **args)), kind, mv_name)


# =================================================================================================
# FormatterTest @ 3.9.0-rc3 (profile kafka-3.9)
# =================================================================================================

P39 = "kafka-3.9"


@pytest.mark.rule("KIP1022-FMT-10", "pass")
@pytest.mark.parametrize("num_dirs", [1, 2, 3])
def test_FormatterTest_testDirectories__3_9_0_rc3(num_dirs: int) -> None:
    """FormatterTest.testDirectories, FormatterTest.java:134@3.9.0-rc3: latestProduction is bootstrapped."""
    out = ok(fmt(P39))
    assert out["metadata_version"]["name"] == "3.9-IV0", out


@pytest.mark.rule("KIP1022-FMT-02", "pass")
def test_FormatterTest_testFormatWithOlderReleaseVersion__3_9_0_rc3() -> None:
    """FormatterTest.testFormatWithOlderReleaseVersion, FormatterTest.java:216@3.9.0-rc3."""
    out = ok(fmt(P39, release_version="3.5-IV0"))
    assert out["metadata_version"]["name"] == "3.5-IV0", out
    assert len(out["records"]) == 1, out


@pytest.mark.rule("KIP1022-FMT-07", "fail")
def test_FormatterTest_testFormatWithUnstableReleaseVersionFailsWithoutEnableUnstable__3_9_0_rc3() -> None:
    """FormatterTest.testFormatWithUnstableReleaseVersionFailsWithoutEnableUnstable,
    FormatterTest.java:232@3.9.0-rc3: latestTesting is 4.0-IV1."""
    tool_error(fmt(P39, release_version="4.0-IV1"), "metadata.version 4.0-IV1 is not yet stable.", "KIP1022-FMT-07")


@pytest.mark.rule("KIP1022-FMT-07", "pass")
def test_FormatterTest_testFormatWithUnstableReleaseVersion__3_9_0_rc3() -> None:
    """FormatterTest.testFormatWithUnstableReleaseVersion, FormatterTest.java:242@3.9.0-rc3."""
    out = ok(fmt(P39, release_version="4.0-IV1", unstable=True))
    assert out["metadata_version"]["name"] == "4.0-IV1", out


@pytest.mark.rule("KIP1022-FMT-03", "fail")
def test_FormatterTest_testInvalidFeatureFlag__3_9_0_rc3() -> None:
    """FormatterTest.testInvalidFeatureFlag, FormatterTest.java:353@3.9.0-rc3.  ADAPTED: Kafka's list
    (Features.values()) also names test.feature.version; PRODUCTION_FEATURES' list is asserted."""
    tool_error(fmt(P39, features=["nonexistent.feature=1"]),
               "Unsupported feature: nonexistent.feature. Supported features are: kraft.version, transaction.version",
               "KIP1022-FMT-03")


@pytest.mark.rule("KIP1022-FMT-09", "pass")
@pytest.mark.parametrize("specify_kraft_version", [False, True])
def test_FormatterTest_testFormatWithInitialVoters__3_9_0_rc3(specify_kraft_version: bool) -> None:
    """FormatterTest.testFormatWithInitialVoters, FormatterTest.java:368@3.9.0-rc3: latestTesting (4.0-IV1)
    is bootstrapped with initial controllers (3.9 has no hasDynamicQuorum: the initial controllers are the
    KIP-853 configuration)."""
    feats = ["kraft.version=1"] if specify_kraft_version else []
    out = ok(fmt(P39, unstable=True, features=feats, initial_controllers=True))
    assert out["metadata_version"]["name"] == "4.0-IV1", out
    assert out["levels"]["kraft.version"] == 1, out


@pytest.mark.rule("KIP1022-FMT-08", "fail")
def test_FormatterTest_testFormatWithInitialVotersFailsWithOlderKraftVersion__3_9_0_rc3() -> None:
    """FormatterTest.testFormatWithInitialVotersFailsWithOlderKraftVersion, FormatterTest.java:401@3.9.0-rc3."""
    tool_error(fmt(P39, unstable=True, features=["kraft.version=0"], initial_controllers=True),
               "Cannot set kraft.version to 0 if KIP-853 configuration is present. Try removing the --feature flag "
               "for kraft.version.", "KIP1022-FMT-08")


@pytest.mark.rule("KIP1022-FMT-09", "fail")
def test_FormatterTest_testFormatWithoutInitialVotersFailsWithNewerKraftVersion__3_9_0_rc3() -> None:
    """FormatterTest.testFormatWithoutInitialVotersFailsWithNewerKraftVersion, FormatterTest.java:417@3.9.0-rc3."""
    tool_error(fmt(P39, unstable=True, features=["kraft.version=1"]),
               "Cannot set kraft.version to 1 unless KIP-853 configuration is present. Try removing the --feature "
               "flag for kraft.version.", "KIP1022-FMT-09")


@pytest.mark.rule("KIP1022-FMT-05", "fail")
def test_FormatterTest_testFormatWithInitialVotersFailsWithOlderMetadataVersion__3_9_0_rc3() -> None:
    """FormatterTest.testFormatWithInitialVotersFailsWithOlderMetadataVersion, FormatterTest.java:431@3.9.0-rc3:
    before 4.1.1 kraft.version=1 depends on metadata.version 3.9-IV0 (level 21)."""
    tool_error(fmt(P39, release_version="3.8-IV0", features=["kraft.version=1"], unstable=True,
                   initial_controllers=True),
               "kraft.version could not be set to 1 because it depends on metadata.version level 21", "KIP1022-FMT-05")


_PRINTED_39 = [
    ("testIgnoreFormatted", 174, {}, "metadata directory", "3.9-IV0"),
    ("testFormatWithOlderReleaseVersion", 216, {"release_version": "3.5-IV0"}, "metadata directory", "3.5-IV0"),
    ("testFormatWithUnstableReleaseVersion", 242, {"release_version": "4.0-IV1", "unstable": True},
     "metadata directory", "4.0-IV1"),
    ("testFormatWithInitialVoters", 368, {"unstable": True, "initial_controllers": True},
     "dynamic metadata voter directory", "4.0-IV1"),
]


@pytest.mark.rule("KIP1022-FMT-11", "pass")
@pytest.mark.parametrize(("method", "line", "args", "kind", "mv_name"), [
    pytest.param(*case, id=case[0], marks=pytest.mark.xfail(strict=True, reason=PRINTED_DIFFERS))
    for case in _PRINTED_39])
def test_FormatterTest_printed__3_9_0_rc3(method: str, line: int, args: dict[str, Any], kind: str,
                                          mv_name: str) -> None:
    """FormatterTest.<method> printed output, FormatterTest.java:<line>@3.9.0-rc3."""
    printed_format_line(ok(fmt(P39, **args)), kind, mv_name)


# =================================================================================================
# StorageToolTest @ 4.1.1 (profile kafka-4.1.1): format, version-mapping, feature-dependencies
# =================================================================================================
# defaultStaticQuorumProperties (StorageToolTest.scala:172@4.1.1): controller.quorum.voters set -> STATIC.
# defaultDynamicQuorumProperties (:178): controller.quorum.bootstrap.servers, unstable feature versions on.
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
def test_StorageToolTest_format_release_version__4_1_1(method: str, line: int, args: dict[str, Any], shown: str) -> None:
    """StorageToolTest.<method>, core/.../StorageToolTest.scala:<line>@4.1.1: exit 0 and the output
    contains the release version."""
    out = ok(fmt(P411, **args))
    assert out["metadata_version"]["name"] == shown, out
    assert shown in "\n".join(out["lines"]), out


@pytest.mark.rule("KIP1022-FMT-03", "fail")
def test_StorageToolTest_testFormatWithInvalidFeature__4_1_1() -> None:
    """StorageToolTest.testFormatWithInvalidFeature, StorageToolTest.scala:322@4.1.1."""
    tool_error(fmt(P411, features=["non.existent.feature=20"]),
               "Unsupported feature: non.existent.feature. Supported features are: eligible.leader.replicas.version, "
               "group.version, kraft.version, share.version, streams.version, transaction.version", "KIP1022-FMT-03")


@pytest.mark.rule("KIP1022-FMT-04", "fail")
def test_StorageToolTest_testFormatWithInvalidKRaftVersionLevel__4_1_1() -> None:
    """StorageToolTest.testFormatWithInvalidKRaftVersionLevel, StorageToolTest.scala:335@4.1.1."""
    tool_error(fmt(P411, features=["kraft.version=999"], standalone=True, **DYN_PROPS),
               "No feature:kraft.version with feature level 999", "KIP1022-FMT-04")


@pytest.mark.rule("KIP1022-FMT-09", "pass")
@pytest.mark.parametrize("flag", ["standalone", "initial_controllers"])
@pytest.mark.parametrize("set_kraft_version_feature", [False, True])
def test_StorageToolTest_testFormatWithStandaloneFlag_and_InitialControllersFlag__4_1_1(
        flag: str, set_kraft_version_feature: bool) -> None:
    """StorageToolTest.testFormatWithStandaloneFlag (StorageToolTest.scala:392@4.1.1) and
    testFormatWithInitialControllersFlag (:422): exit 0, a dynamic quorum at kraft.version 1."""
    feats = ["kraft.version=1"] if set_kraft_version_feature else []
    out = ok(fmt(P411, release_version="3.9-IV0", features=feats, **{flag: True}, **DYN_PROPS))
    assert out["dynamic_quorum"] is True and out["levels"]["kraft.version"] == 1, out


@pytest.mark.rule("KIP1022-FMT-13", "fail")
def test_StorageToolTest_testFormatWithStandaloneFlagAndInitialControllersFlagFails__4_1_1() -> None:
    """StorageToolTest.testFormatWithStandaloneFlagAndInitialControllersFlagFails, StorageToolTest.scala:410@4.1.1:
    an ArgumentParserException (its message is not asserted)."""
    refused(fmt(P411, release_version="3.9-IV0", standalone=True, initial_controllers=True), "TOOL_ERROR",
            "KIP1022-FMT-13", "not allowed with argument")


@pytest.mark.rule("KIP1022-FMT-13", "fail")
@pytest.mark.parametrize("process_roles", ["controller", "broker,controller"])
def test_StorageToolTest_testFormatWithoutStaticQuorumFailsWithoutInitialControllersOnController__4_1_1(
        process_roles: str) -> None:
    """StorageToolTest.testFormatWithoutStaticQuorumFailsWithoutInitialControllersOnController,
    StorageToolTest.scala:446@4.1.1."""
    tool_error(fmt(P411, release_version="3.9-IV0", **DYN_PROPS),
               "Because controller.quorum.voters is not set on this controller, you must specify one of the following: "
               "--standalone, --initial-controllers, or --no-initial-controllers.", "KIP1022-FMT-13")


@pytest.mark.rule("KIP1022-FMT-10", "pass")
def test_StorageToolTest_testFormatWithNoInitialControllersSucceedsOnController__4_1_1() -> None:
    """StorageToolTest.testFormatWithNoInitialControllersSucceedsOnController, StorageToolTest.scala:465@4.1.1:
    exit 0 (the printed directory line is in the __printed test)."""
    out = ok(fmt(P411, release_version="3.9-IV0", no_initial_controllers=True, **DYN_PROPS))
    assert out["dynamic_quorum"] is True, out


ARGPARSE_DIFFERS = ("reference differs: argparse4j names both options with their short forms, the later argument "
                    "first ('argument --standalone/-s: not allowed with argument --no-initial-controllers/-N'); the "
                    "reference prints the long names only, in its own fixed order")


@pytest.mark.rule("KIP1022-FMT-13", "fail")
@pytest.mark.parametrize(("method", "line", "flags", "message"), [
    pytest.param("testFormatWithNoInitialControllersFlagAndStandaloneFlagFails", 479,
                 {"no_initial_controllers": True, "standalone": True},
                 "argument --standalone/-s: not allowed with argument --no-initial-controllers/-N",
                 id="NoInitialControllersAndStandalone",
                 marks=pytest.mark.xfail(strict=True, reason=ARGPARSE_DIFFERS)),
    pytest.param("testFormatWithNoInitialControllersFlagAndInitialControllersFlagFails", 489,
                 {"no_initial_controllers": True, "initial_controllers": True},
                 "argument --initial-controllers/-I: not allowed with argument --no-initial-controllers/-N",
                 id="NoInitialControllersAndInitialControllers",
                 marks=pytest.mark.xfail(strict=True, reason=ARGPARSE_DIFFERS)),
])
def test_StorageToolTest_mutually_exclusive_quorum_flags__4_1_1(method: str, line: int, flags: dict[str, Any],
                                                                message: str) -> None:
    """StorageToolTest.<method>, StorageToolTest.scala:<line>@4.1.1: the ArgumentParserException's message."""
    tool_error(fmt(P411, release_version="3.9-IV0", **flags), message, "KIP1022-FMT-13")


_STORAGE_PRINTED_411 = [
    ("testFormatWithStandaloneFlag", 392, {"release_version": "3.9-IV0", "standalone": True, **DYN_PROPS},
     "dynamic metadata voter directory", "3.9-IV0"),
    ("testFormatWithInitialControllersFlag", 422, {"release_version": "3.9-IV0", "initial_controllers": True,
                                                   **DYN_PROPS}, "dynamic metadata voter directory", "3.9-IV0"),
    ("testFormatWithNoInitialControllersSucceedsOnController", 465,
     {"release_version": "3.9-IV0", "no_initial_controllers": True, **DYN_PROPS}, "metadata directory", "3.9-IV0"),
]


@pytest.mark.rule("KIP1022-FMT-11", "pass")
@pytest.mark.parametrize(("method", "line", "args", "kind", "mv_name"), [
    pytest.param(*case, id=case[0], marks=pytest.mark.xfail(strict=True, reason=PRINTED_DIFFERS))
    for case in _STORAGE_PRINTED_411])
def test_StorageToolTest_printed__4_1_1(method: str, line: int, args: dict[str, Any], kind: str, mv_name: str) -> None:
    """StorageToolTest.<method> printed output, StorageToolTest.scala:<line>@4.1.1: the output contains
    'Formatting <kind> <dir>'."""
    printed_format_line(ok(fmt(P411, **args)), kind, mv_name)


@pytest.mark.rule("KIP1022-FMT-12", "fail")
@pytest.mark.parametrize(("method", "line", "flag", "message"), [
    ("testParseNameAndLevelWithNoEquals", 747, "kraft.version5",
     "Can't parse feature=level string kraft.version5: equals sign not found."),
    ("testParseNameAndLevelWithNoNumber", 755, "kraft.version=foo",
     "Can't parse feature=level string kraft.version=foo: unable to parse foo as a short."),
])
def test_StorageToolTest_parseNameAndLevel_errors__4_1_1(method: str, line: int, flag: str, message: str) -> None:
    """StorageToolTest.<method>, StorageToolTest.scala:<line>@4.1.1: parseNameAndLevel as format --feature runs it."""
    tool_error(fmt(P411, features=[flag]), message, "KIP1022-FMT-12")


@pytest.mark.rule("KIP1022-FMT-03", "fail")
def test_StorageToolTest_testParseNameAndLevel__4_1_1() -> None:
    """StorageToolTest.testParseNameAndLevel, StorageToolTest.scala:742@4.1.1: 'foo.bar=56' parses to
    (foo.bar, 56).  ADAPTED: through format, the parsed name reaches the supported-feature check."""
    refused(fmt(P411, features=["foo.bar=56"]), "TOOL_ERROR", "KIP1022-FMT-03", "Unsupported feature: foo.bar.")


def _mapping_contains(out: dict[str, Any], profile: str, level: int, shown: str) -> None:
    from reference_impl._catalog import load_profile

    text = "\n".join(out["lines"])
    assert f"{MV}={level} ({shown})" in text, out
    for name, default in load_profile(profile).default_levels(level).items():
        assert f"{name}={default}" in text, (name, out)


@pytest.mark.rule("KIP1022-MAP-01", "pass")
def test_StorageToolTest_testVersionMappingWithValidReleaseVersion__4_1_1() -> None:
    """StorageToolTest.testVersionMappingWithValidReleaseVersion, StorageToolTest.scala:535@4.1.1 (MINIMUM_VERSION
    3.3-IV3; PRODUCTION_FEATURES' defaults)."""
    out = ok(Cluster(P411).apply({"op": "version_mapping", "release_version": "3.3-IV3"}))
    _mapping_contains(out, P411, 7, "3.3-IV3")
    assert out["levels"] == {"kraft.version": 0, "transaction.version": 0, "group.version": 0, ELR: 0,
                             "share.version": 0, "streams.version": 0}, out


@pytest.mark.rule("KIP1022-MAP-01", "pass")
def test_StorageToolTest_testVersionMappingWithNoReleaseVersion__4_1_1() -> None:
    """StorageToolTest.testVersionMappingWithNoReleaseVersion, StorageToolTest.scala:556@4.1.1 (latestProduction)."""
    out = ok(Cluster(P411).apply({"op": "version_mapping"}))
    _mapping_contains(out, P411, 27, "4.1-IV1")


@pytest.mark.rule("KIP1022-MAP-02", "fail")
@pytest.mark.parametrize("rv", ["2.9-IV2", "invalid"])
def test_StorageToolTest_testVersionMappingWithInvalidReleaseVersion__4_1_1(rv: str) -> None:
    """StorageToolTest.testVersionMappingWithInvalidReleaseVersion, StorageToolTest.scala:579@4.1.1."""
    tool_error(Cluster(P411).apply({"op": "version_mapping", "release_version": rv}),
               f"Unknown release version '{rv}'. Supported versions are: 3.3-IV3 to 4.1-IV1", "KIP1022-MAP-02")


@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_StorageToolTest_testMultipleFeatureDependencies__4_1_1() -> None:
    """StorageToolTest.testMultipleFeatureDependencies, StorageToolTest.scala:638@4.1.1."""
    out = ok(Cluster(P411).apply({"op": "feature_dependencies", "features": ["transaction.version=2", "group.version=1"]}))
    assert stdout(out) == "transaction.version=2 has no dependencies.\ngroup.version=1 has no dependencies.", out


@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_StorageToolTest_testHandleFeatureDependenciesForFeatureWithNoDependencies__4_1_1() -> None:
    """StorageToolTest.testHandleFeatureDependenciesForFeatureWithNoDependencies, StorageToolTest.scala:656@4.1.1."""
    out = ok(Cluster(P411).apply({"op": "feature_dependencies", "features": [f"{MV}=17"]}))
    assert stdout(out) == "metadata.version=17 (3.7-IV2) has no dependencies.", out


@pytest.mark.rule("KIP1022-DEP-02", "fail")
@pytest.mark.parametrize(("method", "line", "flag", "message"), [
    ("testHandleFeatureDependenciesForUnknownFeature", 666, "unknown.feature.version=1",
     "Unknown feature: unknown.feature.version"),
    ("testHandleFeatureDependenciesForFeatureWithUnknownFeatureVersion", 676, "transaction.version=1000",
     "Feature level 1000 is not supported for feature transaction.version"),
    ("testHandleFeatureDependenciesForInvalidVersionFormat", 686, f"{MV}=invalid",
     "Invalid version format: invalid for feature metadata.version"),
])
def test_StorageToolTest_feature_dependencies_errors__4_1_1(method: str, line: int, flag: str, message: str) -> None:
    """StorageToolTest.<method>, StorageToolTest.scala:<line>@4.1.1 (kafka-storage feature-dependencies)."""
    tool_error(Cluster(P411).apply({"op": "feature_dependencies", "features": [flag]}), message, "KIP1022-DEP-02")


# =================================================================================================
# FeatureCommandTest @ 4.1.1 (profile kafka-4.1.1)
# =================================================================================================

DESCRIBE_411 = [
    "Feature: eligible.leader.replicas.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t",
    "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t",
    "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t",
    "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.2-IV1\tFinalizedVersionLevel: {fin}\t",
    "Feature: share.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t",
    "Feature: streams.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t",
    "Feature: transaction.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 2\tFinalizedVersionLevel: 0\t",
]


def described(out: dict[str, Any]) -> list[str]:
    assert out["exit_code"] == 0, out
    return [without_epoch(x) for x in sorted(stdout(ok(out)).split("\n"))]


@pytest.mark.rule("KIP1022-OBS-01", "pass")
def test_FeatureCommandTest_testDescribeWithKRaft__4_1_1() -> None:
    """FeatureCommandTest.testDescribeWithKRaft, tools/.../FeatureCommandTest.java:52@4.1.1: describe through
    --bootstrap-server (the broker) at metadata.version 3.3-IV3."""
    c = kraft_cluster(P411, "3.3-IV3")
    assert described(features_tool(c, "describe", node=0)) == [x.format(fin="3.3-IV3") for x in DESCRIBE_411]


@pytest.mark.rule("KIP1022-OBS-01", "pass")
def test_FeatureCommandTest_testDescribeWithKRaftAndBootstrapControllers__4_1_1() -> None:
    """FeatureCommandTest.testDescribeWithKRaftAndBootstrapControllers, FeatureCommandTest.java:78@4.1.1:
    describe through --bootstrap-controller at 3.7-IV0."""
    c = kraft_cluster(P411, "3.7-IV0")
    assert described(features_tool(c, "describe", node=3000)) == [x.format(fin="3.7-IV0") for x in DESCRIBE_411]


@pytest.mark.rule("KIP584-UPD-08", "pass")
def test_FeatureCommandTest_testUpgradeMetadataVersionWithKraft__4_1_1() -> None:
    """FeatureCommandTest.testUpgradeMetadataVersionWithKraft, FeatureCommandTest.java:103@4.1.1."""
    c = kraft_cluster(P411, "3.3-IV3")
    out = ok(features_tool(c, "upgrade", features=[f"{MV}=7"]))
    assert (out["exit_code"], stdout(out)) == (0, "metadata.version was upgraded to 7."), out
    out = ok(features_tool(c, "upgrade", metadata="3.4-IV0"))
    assert out["exit_code"] == 0, out
    assert stdout(out) == ("`metadata` flag is deprecated and may be removed in a future release.\n"
                           "metadata.version was upgraded to 8."), out


@pytest.mark.rule("KIP584-UPD-03", "fail")
@pytest.mark.rule("KIP778-MV-04", "fail")
@pytest.mark.rule("KIP778-MV-05", "fail")
def test_FeatureCommandTest_testDowngradeMetadataVersionWithKRaft__4_1_1() -> None:
    """FeatureCommandTest.testDowngradeMetadataVersionWithKRaft, FeatureCommandTest.java:118@4.1.1 (versions
    MINIMUM_VERSION 7 to latestTesting 29)."""
    c = kraft_cluster(P411, "3.4-IV0")
    out = refused(features_tool(c, "disable", features=[MV]), "INVALID_UPDATE_VERSION", "KIP584-UPD-03")
    assert out["exit_code"] == 1
    assert stdout(out) == ("Could not disable metadata.version. The update failed for all features since the "
                           "following feature had an error: Invalid update version 0 for feature metadata.version. "
                           "Local controller 3000 only supports versions 7-29"), out
    out = refused(features_tool(c, "downgrade", metadata="3.3-IV3"), "INVALID_UPDATE_VERSION", "KIP778-MV-04")
    assert stdout(out) == ("`metadata` flag is deprecated and may be removed in a future release.\nCould not downgrade "
                           "metadata.version to 7. The update failed for all features since the following feature had "
                           "an error: Invalid metadata.version 7. Refusing to perform the requested downgrade because "
                           "it might delete metadata information."), out
    out = refused(features_tool(c, "downgrade", metadata="3.3-IV3", unsafe=True), "INVALID_UPDATE_VERSION",
                  "KIP778-MV-05")
    assert stdout(out) == ("`metadata` flag is deprecated and may be removed in a future release.\nCould not downgrade "
                           "metadata.version to 7. The update failed for all features since the following feature had "
                           "an error: Invalid metadata.version 7. Unsafe metadata downgrade is not supported in this "
                           "version."), out


@pytest.mark.rule("KIP584-UPD-05", "fail")
@pytest.mark.rule("KIP1022-TOOL-04", "pass")
def test_FeatureCommandTest_testUpgradeWithReleaseVersion__4_1_1() -> None:
    """FeatureCommandTest.testUpgradeWithReleaseVersion, FeatureCommandTest.java:155@4.1.1 (cluster at 3.8-IV0)."""
    c = kraft_cluster(P411, "3.8-IV0")
    out = refused(features_tool(c, "upgrade", release_version="3.7-IV3"), "INVALID_UPDATE_VERSION", "KIP584-UPD-05")
    assert out["exit_code"] == 1
    assert stdout(out) == ("Could not upgrade metadata.version to 18. The update failed for all features since the "
                           "following feature had an error: Invalid update version 18 for feature metadata.version. "
                           "Can't downgrade the version of this feature without setting the upgrade type to either "
                           "safe or unsafe downgrade."), out
    out = ok(features_tool(c, "upgrade", release_version="3.9-IV0"))
    assert (out["exit_code"], stdout(out)) == (0, "kraft.version was upgraded to 1.\nmetadata.version was upgraded to 21.")


@pytest.mark.rule("KIP584-UPD-06", "fail")
def downgrade_to_3_9_failed(out: dict[str, Any]) -> None:
    """testDowngradeWithReleaseVersion's first half: at 3.8-IV0, downgrade --release-version 3.9-IV0 fails
    as a whole because kraft.version 1 is newer, and the tool names every feature it could not downgrade."""
    text = stdout(out)
    assert out["exit_code"] == 1
    assert ("The update failed for all features since the following feature had an error: Invalid update version 1 "
            "for feature kraft.version. Can't downgrade to a newer version.") in text, out
    for piece in ("Could not downgrade group.version to 0.", "Could not downgrade transaction.version to 0.",
                  "Could not downgrade kraft.version to 1.", "Could not downgrade metadata.version to 21."):
        assert piece in text, (piece, out)


@pytest.mark.rule("KIP1022-TOOL-04", "pass")
def test_FeatureCommandTest_testDowngradeWithReleaseVersion__4_1_1() -> None:
    """FeatureCommandTest.testDowngradeWithReleaseVersion, FeatureCommandTest.java:174@4.1.1 (cluster at 3.8-IV0)."""
    c = kraft_cluster(P411, "3.8-IV0")
    out = refused(features_tool(c, "downgrade", release_version="3.9-IV0"), "INVALID_UPDATE_VERSION", "KIP584-UPD-06")
    downgrade_to_3_9_failed(out)
    out = ok(features_tool(c, "downgrade", release_version="3.7-IV3"))
    assert out["exit_code"] == 0, out
    assert stdout(out) == ("eligible.leader.replicas.version was downgraded to 0.\n"
                           "group.version was downgraded to 0.\n"
                           "kraft.version was downgraded to 0.\n"
                           "metadata.version was downgraded to 18.\n"
                           "share.version was downgraded to 0.\n"
                           "streams.version was downgraded to 0.\n"
                           "transaction.version was downgraded to 0."), out


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
def test_FeatureCommandTest_testMetadataVersionsToString__4_1_1() -> None:
    """FeatureCommandTest.testMetadataVersionsToString, FeatureCommandTest.java:218@4.1.1.  ADAPTED: the helper
    renders the 'Supported metadata.version are ...' list of an unknown --metadata; that list holds the run
    '3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0'."""
    c = kraft_cluster(P411, "3.4-IV0")
    refused(features_tool(c, "upgrade", metadata="9.9-IV9"), "TOOL_ERROR", "KIP1022-TOOL-03",
            "3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0")


@pytest.mark.rule("KIP584-UPD-05", "pass")
def test_FeatureCommandTest_testDowngradeType__4_1_1() -> None:
    """FeatureCommandTest.testDowngradeType, FeatureCommandTest.java:224@4.1.1: --unsafe false / true / absent
    gives SAFE_DOWNGRADE / UNSAFE_DOWNGRADE / SAFE_DOWNGRADE in the request sent."""
    for kw, expected in (({"unsafe": False}, "SAFE_DOWNGRADE"), ({"unsafe": True}, "UNSAFE_DOWNGRADE"),
                         ({}, "SAFE_DOWNGRADE")):
        c = kraft_cluster(P411, "3.8-IV0")
        out = ok(features_tool(c, "downgrade", features=["group.version=0"], **kw))
        assert [u["upgrade_type"] for u in out["request"]["updates"]] == [expected], out


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
def test_FeatureCommandTest_testParseNameAndLevel__4_1_1() -> None:
    """FeatureCommandTest.testParseNameAndLevel, FeatureCommandTest.java:233@4.1.1: 'foo.bar=5' and 'quux=0'
    parse (as the request's updates); 'baaz' and 'w=tf' are refused with parseNameAndLevel's messages."""
    c = kraft_cluster(P411, "3.8-IV0")
    out = features_tool(c, "downgrade", features=["foo.bar=5", "quux=0"])
    assert [(u["feature"], u["level"]) for u in out["request"]["updates"]] == [("foo.bar", 5), ("quux", 0)], out
    refused(features_tool(c, "upgrade", features=["baaz"]), "TOOL_ERROR", "KIP1022-TOOL-03",
            "Can't parse feature=level string baaz: equals sign not found.")
    refused(features_tool(c, "upgrade", features=["w=tf"]), "TOOL_ERROR", "KIP1022-TOOL-03",
            "Can't parse feature=level string w=tf: unable to parse tf as a short.")


def _mock_admin_cluster(profile: str, min_mv: int, fin_mv: int, max_mv: int) -> Cluster:
    """buildAdminClient(): metadata.version min/finalized/max and foo.bar 0-10 finalized at 5, epoch 123."""
    c = Cluster(profile)
    ok(c.apply({"op": "restore_state", "metadata_version": fin_mv, "epoch": 123, "finalized": {"foo.bar": 5},
                "controllers": [{"id": 3000, "ranges": {MV: [min_mv, max_mv], "foo.bar": [0, 10]}}]}))
    return c


@pytest.mark.rule("KIP584-API-02", "pass")
def test_FeatureCommandTest_testHandleDescribe__4_1_1() -> None:
    """FeatureCommandTest.testHandleDescribe, FeatureCommandTest.java:262@4.1.1 (MockAdminClient ranges and levels
    as a restored cluster state)."""
    c = _mock_admin_cluster(P411, 7, 8, 9)
    out = ok(features_tool(c, "describe"))
    assert stdout(out) == ("Feature: foo.bar\tSupportedMinVersion: 0\tSupportedMaxVersion: 10\tFinalizedVersionLevel: 5\t"
                           "Epoch: 123\nFeature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: "
                           "3.5-IV0\tFinalizedVersionLevel: 3.4-IV0\tEpoch: 123"), out


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
def test_FeatureCommandTest_testHandleUpgradeToUnsupportedMetadataVersion__4_1_1() -> None:
    """FeatureCommandTest.testHandleUpgradeToUnsupportedMetadataVersion, FeatureCommandTest.java:275@4.1.1."""
    c = _mock_admin_cluster(P411, 7, 8, 9)
    refused(features_tool(c, "upgrade", metadata="3.3-IV1", features=["foo.bar=6"]), "TOOL_ERROR", "KIP1022-TOOL-03",
            "Unknown metadata.version 3.3-IV1")


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
def test_FeatureCommandTest_testInvalidReleaseVersion__4_1_1() -> None:
    """FeatureCommandTest.testInvalidReleaseVersion, FeatureCommandTest.java:373@4.1.1."""
    c = _mock_admin_cluster(P411, 7, 8, 9)
    refused(features_tool(c, "upgrade", release_version="foo"), "TOOL_ERROR", "KIP1022-TOOL-03",
            "Unknown metadata.version foo.")


@pytest.mark.rule("KIP1022-TOOL-02", "fail")
def test_FeatureCommandTest_testIncompatibleUpgradeFlags__4_1_1() -> None:
    """FeatureCommandTest.testIncompatibleUpgradeFlags, FeatureCommandTest.java:383@4.1.1."""
    c = _mock_admin_cluster(P411, 7, 8, 9)
    feats = ["foo.bar", "metadata.version", "quux"]
    refused(features_tool(c, "upgrade", release_version="3.3-IV3", features=feats), "TOOL_ERROR", "KIP1022-TOOL-02",
            "Can not specify `release-version` with other feature flags.")
    refused(features_tool(c, "upgrade", release_version="3.3-IV3", features=feats, metadata="3.3-IV3"), "TOOL_ERROR",
            "KIP1022-TOOL-02", "Can not specify `release-version` with other feature flags.")


def _features_tool_cmd(profile: str, op: str, **kw: Any) -> dict[str, Any]:
    return Cluster(profile).apply({"op": op, "tool": "kafka-features", **kw})


@pytest.mark.rule("KIP1022-MAP-01", "pass")
@pytest.mark.parametrize(("method", "line", "rv", "level", "shown"), [
    ("testHandleVersionMappingWithValidReleaseVersion", 402, "3.3-IV3", 7, "3.3-IV3"),
    ("testHandleVersionMappingWithNoReleaseVersion", 427, None, 27, "4.1-IV1"),
])
def test_FeatureCommandTest_version_mapping__4_1_1(method: str, line: int, rv: str | None, level: int,
                                                   shown: str) -> None:
    """FeatureCommandTest.<method>, FeatureCommandTest.java:<line>@4.1.1.  The Kafka test also expects the
    test-only features of Feature.FEATURES in the output; only the production features are asserted."""
    kw = {"release_version": rv} if rv is not None else {}
    _mapping_contains(ok(_features_tool_cmd(P411, "version_mapping", **kw)), P411, level, shown)


@pytest.mark.rule("KIP1022-MAP-02", "fail")
@pytest.mark.parametrize("rv", ["2.9-IV2", "invalid"])
def test_FeatureCommandTest_testHandleVersionMappingWithInvalidReleaseVersion__4_1_1(rv: str) -> None:
    """FeatureCommandTest.testHandleVersionMappingWithInvalidReleaseVersion, FeatureCommandTest.java:451@4.1.1."""
    tool_error(_features_tool_cmd(P411, "version_mapping", release_version=rv),
               f"Unknown release version '{rv}'. Supported versions are: 3.3-IV3 to 4.1-IV1", "KIP1022-MAP-02")


@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_FeatureCommandTest_testHandleFeatureDependenciesForFeatureWithNoDependencies__4_1_1() -> None:
    """FeatureCommandTest.testHandleFeatureDependenciesForFeatureWithNoDependencies, FeatureCommandTest.java:497@4.1.1."""
    out = ok(_features_tool_cmd(P411, "feature_dependencies", features=[f"{MV}=17"]))
    assert stdout(out) == "metadata.version=17 (3.7-IV2) has no dependencies.", out


@pytest.mark.rule("KIP1022-DEP-02", "fail")
@pytest.mark.parametrize(("method", "line", "flag", "message"), [
    ("testHandleFeatureDependenciesForUnknownFeature", 513, "unknown.feature=1", "Unknown feature: unknown.feature"),
    ("testHandleFeatureDependenciesForFeatureWithUnknownFeatureVersion", 526, "transaction.version=1000",
     "No feature:transaction.version with feature level 1000"),
    # Fixed in the reference after this transcription found it: kafka-features parses with
    # FeatureCommand.parseNameAndLevel (FeatureCommand.java:266-280, called at :387@4.1.1).
    ("testHandleFeatureDependenciesForInvalidVersionFormat", 539, f"{MV}=invalid",
     "Can't parse feature=level string metadata.version=invalid: unable to parse invalid as a short."),
])
def test_FeatureCommandTest_feature_dependencies_errors__4_1_1(method: str, line: int, flag: str,
                                                               message: str) -> None:
    """FeatureCommandTest.<method>, FeatureCommandTest.java:<line>@4.1.1 (kafka-features feature-dependencies)."""
    tool_error(_features_tool_cmd(P411, "feature_dependencies", features=[flag]), message, "KIP1022-DEP-02")


# =================================================================================================
# FeatureCommandTest @ 3.9.0-rc3 (profile kafka-3.9)
# =================================================================================================

DESCRIBE_39 = [
    "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t",
    "Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: 4.0-IV1\tFinalizedVersionLevel: {fin}\t",
    "Feature: transaction.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 2\tFinalizedVersionLevel: 0\t",
]


@pytest.mark.rule("KIP1022-OBS-01", "pass")
def test_FeatureCommandTest_testDescribeWithKRaft__3_9_0_rc3() -> None:
    """FeatureCommandTest.testDescribeWithKRaft, FeatureCommandTest.java:60@3.9.0-rc3 (broker, 3.3-IV1)."""
    c = kraft_cluster(P39, "3.3-IV1")
    assert described(features_tool(c, "describe", node=0)) == [x.format(fin="3.3-IV1") for x in DESCRIBE_39]


@pytest.mark.rule("KIP1022-OBS-01", "pass")
def test_FeatureCommandTest_testDescribeWithKRaftAndBootstrapControllers__3_9_0_rc3() -> None:
    """FeatureCommandTest.testDescribeWithKRaftAndBootstrapControllers, FeatureCommandTest.java:78@3.9.0-rc3."""
    c = kraft_cluster(P39, "3.7-IV0")
    assert described(features_tool(c, "describe", node=3000)) == [x.format(fin="3.7-IV0") for x in DESCRIBE_39]


@pytest.mark.rule("KIP584-UPD-08", "pass")
def test_FeatureCommandTest_testUpgradeMetadataVersionWithKraft__3_9_0_rc3() -> None:
    """FeatureCommandTest.testUpgradeMetadataVersionWithKraft, FeatureCommandTest.java:105@3.9.0-rc3 (3.9's tool
    prints no deprecation line for --metadata)."""
    c = kraft_cluster(P39, "3.3-IV1")
    out = ok(features_tool(c, "upgrade", features=[f"{MV}=5"]))
    assert (out["exit_code"], stdout(out)) == (0, "metadata.version was upgraded to 5."), out
    out = ok(features_tool(c, "upgrade", metadata="3.3-IV2"))
    assert (out["exit_code"], stdout(out)) == (0, "metadata.version was upgraded to 6."), out


@pytest.mark.rule("KIP1022-TOOL-06", "fail")
def test_FeatureCommandTest_testDowngradeMetadataVersionWithKRaft__3_9_0_rc3() -> None:
    """FeatureCommandTest.testDowngradeMetadataVersionWithKRaft, FeatureCommandTest.java:143@3.9.0-rc3
    (UpdateFeatures v1: per-feature errors)."""
    c = kraft_cluster(P39, "3.3-IV1")
    out = refused(features_tool(c, "disable", features=[MV]), "INVALID_UPDATE_VERSION", "KIP1022-TOOL-06")
    assert out["exit_code"] == 1
    assert stdout(out) == ("Could not disable metadata.version. Invalid update version 0 for feature metadata.version. "
                           "Local controller 3000 only supports versions 1-23"), out
    out = refused(features_tool(c, "downgrade", metadata="3.3-IV0"), "INVALID_UPDATE_VERSION", "KIP1022-TOOL-06")
    assert stdout(out) == ("Could not downgrade metadata.version to 4. Invalid metadata.version 4. Refusing to perform "
                           "the requested downgrade because it might delete metadata information."), out
    out = refused(features_tool(c, "downgrade", metadata="3.3-IV0", unsafe=True), "INVALID_UPDATE_VERSION",
                  "KIP1022-TOOL-06")
    assert stdout(out) == ("Could not downgrade metadata.version to 4. Invalid metadata.version 4. Unsafe metadata "
                           "downgrade is not supported in this version."), out


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
def test_FeatureCommandTest_testMetadataVersionsToString__3_9_0_rc3() -> None:
    """FeatureCommandTest.testMetadataVersionsToString, FeatureCommandTest.java:186@3.9.0-rc3.  ADAPTED as at
    4.1.1: the unknown --metadata listing holds '3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3'."""
    c = kraft_cluster(P39, "3.4-IV0")
    refused(features_tool(c, "upgrade", metadata="9.9-IV9"), "TOOL_ERROR", "KIP1022-TOOL-03",
            "3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3")


@pytest.mark.rule("KIP584-UPD-05", "pass")
def test_FeatureCommandTest_testDowngradeType__3_9_0_rc3() -> None:
    """FeatureCommandTest.testDowngradeType, FeatureCommandTest.java:192@3.9.0-rc3."""
    for kw, expected in (({"unsafe": False}, "SAFE_DOWNGRADE"), ({"unsafe": True}, "UNSAFE_DOWNGRADE"),
                         ({}, "SAFE_DOWNGRADE")):
        c = kraft_cluster(P39, "3.8-IV0")
        out = ok(features_tool(c, "downgrade", features=[f"{MV}=20"], **kw))
        assert [u["upgrade_type"] for u in out["request"]["updates"]] == [expected], out


@pytest.mark.rule("KIP1022-TOOL-03", "fail")
def test_FeatureCommandTest_testParseNameAndLevel__3_9_0_rc3() -> None:
    """FeatureCommandTest.testParseNameAndLevel, FeatureCommandTest.java:201@3.9.0-rc3."""
    c = kraft_cluster(P39, "3.8-IV0")
    out = features_tool(c, "downgrade", features=["foo.bar=5", "quux=0"])
    assert [(u["feature"], u["level"]) for u in out["request"]["updates"]] == [("foo.bar", 5), ("quux", 0)], out
    refused(features_tool(c, "upgrade", features=["baaz"]), "TOOL_ERROR", "KIP1022-TOOL-03",
            "Can't parse feature=level string baaz: equals sign not found.")
    refused(features_tool(c, "upgrade", features=["w=tf"]), "TOOL_ERROR", "KIP1022-TOOL-03",
            "Can't parse feature=level string w=tf: unable to parse tf as a short.")


@pytest.mark.rule("KIP584-API-02", "pass")
def test_FeatureCommandTest_testHandleDescribe__3_9_0_rc3() -> None:
    """FeatureCommandTest.testHandleDescribe, FeatureCommandTest.java:230@3.9.0-rc3 (metadata.version 3.3-IV0 to
    3.3-IV3, finalized 3.3-IV2; foo.bar 0-10 at 5; epoch 123)."""
    c = _mock_admin_cluster(P39, 4, 6, 7)
    out = ok(features_tool(c, "describe"))
    assert stdout(out) == ("Feature: foo.bar\tSupportedMinVersion: 0\tSupportedMaxVersion: 10\tFinalizedVersionLevel: 5\t"
                           "Epoch: 123\nFeature: metadata.version\tSupportedMinVersion: 3.3-IV0\tSupportedMaxVersion: "
                           "3.3-IV3\tFinalizedVersionLevel: 3.3-IV2\tEpoch: 123"), out


# =================================================================================================
# MetadataVersionTest @ 4.1.1 (profile kafka-4.1.1), through the tools and the controller
# =================================================================================================

MVS_411 = ["3.3-IV3", "3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0",
           "3.7-IV1", "3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2",
           "4.0-IV3", "4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1"]
LEVEL_411 = {name: 7 + i for i, name in enumerate(MVS_411)}  # MINIMUM_VERSION 3.3-IV3 is level 7


@pytest.mark.rule("KIP1022-MAP-01", "pass")
def test_MetadataVersionTest_testFeatureLevels__4_1_1() -> None:
    """MetadataVersionTest.testFeatureLevels, server-common/.../MetadataVersionTest.java:34@4.1.1: levels are
    contiguous from MINIMUM_VERSION's (7), as version-mapping reports them."""
    c = Cluster(P411)
    for name, level in LEVEL_411.items():
        out = ok(c.apply({"op": "version_mapping", "release_version": name}))
        assert out["metadata_version"] == level and out["lines"][0] == f"{MV}={level} ({name})", out


@pytest.mark.rule("KIP1022-MAP-01", "pass")
def test_MetadataVersionTest_testFromVersionString__4_1_1() -> None:
    """MetadataVersionTest.testFromVersionString, MetadataVersionTest.java:43@4.1.1: a bare X.Y is the latest
    production IV of that line (version-mapping --release-version parses with fromVersionString)."""
    bare = {"3.3": "3.3-IV3", "3.4": "3.4-IV0", "3.5": "3.5-IV2", "3.6": "3.6-IV2", "3.7": "3.7-IV4", "3.8": "3.8-IV0",
            "3.9": "3.9-IV0", "4.0": "4.0-IV3", "4.1": "4.1-IV1"}
    exact = [n for n in MVS_411 if n < "4.2"]
    c = Cluster(P411)
    for s, name in [*bare.items(), *((n, n) for n in exact)]:
        out = ok(c.apply({"op": "version_mapping", "release_version": s}))
        assert out["metadata_version"] == LEVEL_411[name], (s, out)


@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_MetadataVersionTest_testVersion__4_1_1() -> None:
    """MetadataVersionTest.testVersion, MetadataVersionTest.java:118@4.1.1: each level's version string, as
    feature-dependencies prints it."""
    c = Cluster(P411)
    for name in MVS_411[:MVS_411.index("4.1-IV0") + 1]:
        out = ok(c.apply({"op": "feature_dependencies", "features": [f"{MV}={LEVEL_411[name]}"]}))
        assert stdout(out) == f"{MV}={LEVEL_411[name]} ({name}) has no dependencies.", out


@pytest.mark.rule("KIP778-MV-03", "pass")
@pytest.mark.rule("KIP778-MV-04", "fail")
@pytest.mark.parametrize(("high", "low", "changed"), [
    ("3.4-IV0", "3.3-IV3", True), ("3.5-IV0", "3.4-IV0", False), ("3.5-IV1", "3.5-IV0", False),
    ("3.6-IV0", "3.5-IV1", True), ("3.6-IV1", "3.6-IV0", True)])
def test_MetadataVersionTest_testMetadataChanged__4_1_1(high: str, low: str, changed: bool) -> None:
    """MetadataVersionTest.testMetadataChanged, MetadataVersionTest.java:151@4.1.1: checkIfMetadataChanged
    (either argument order) decides whether a SAFE_DOWNGRADE high -> low is refused."""
    c = Cluster(P411)
    ok(c.apply({"op": "restore_state", "metadata_version": LEVEL_411[high]}))
    out = c.apply({"op": "update_features", "updates": [
        {"feature": MV, "level": LEVEL_411[low], "upgrade_type": "SAFE_DOWNGRADE"}]})
    if changed:
        refused(out, "INVALID_UPDATE_VERSION", "KIP778-MV-04", "might delete metadata information")
    else:
        ok(out)


@pytest.mark.rule("KIP778-PAY-01", "pass")
@pytest.mark.rule("KIP778-PAY-01", "fail")
@pytest.mark.parametrize(("method", "line", "kind", "first"), [
    ("testIsDelegationTokenSupported", 167, "delegation_token", "3.6-IV2"),
    ("testDirectoryAssignmentSupported", 174, "directory_assignment", "3.7-IV2"),
    ("testIsElrSupported", 180, "elr_partition_state", "4.0-IV1"),
])
def test_MetadataVersionTest_is_supported__4_1_1(method: str, line: int, kind: str, first: str) -> None:
    """MetadataVersionTest.<method>, MetadataVersionTest.java:<line>@4.1.1 (@EnumSource over every
    MetadataVersion): the record is accepted exactly from <first> on."""
    for level in LEVEL_411.values():
        c = Cluster(P411)
        ok(c.apply({"op": "restore_state", "metadata_version": level}))
        out = c.apply({"op": "add_metadata", "kind": kind})
        if level >= LEVEL_411[first]:
            ok(out)
        else:
            refused(out, "UNSUPPORTED_VERSION", "KIP778-PAY-01")


@pytest.mark.rule("KIP1022-FMT-07", "pass")
def test_MetadataVersionTest_assertLatestProductionIsLessThanLatest__4_1_1() -> None:
    """MetadataVersionTest.assertLatestProductionIsLessThanLatest, MetadataVersionTest.java:229@4.1.1."""
    production = ok(fmt(P411))["metadata_version"]["level"]
    testing = ok(fmt(P411, unstable=True))["metadata_version"]["level"]
    assert (production, testing) == (27, 29) and production < testing


@pytest.mark.rule("KIP1022-FMT-07", "pass")
def test_MetadataVersionTest_assertLatestProductionIsProduction__4_1_1() -> None:
    """MetadataVersionTest.assertLatestProductionIsProduction, MetadataVersionTest.java:248@4.1.1: LATEST_PRODUCTION
    (4.1-IV1) formats without unstable versions."""
    assert ok(fmt(P411, release_version="4.1-IV1"))["metadata_version"]["name"] == "4.1-IV1"


@pytest.mark.rule("KIP1022-FMT-07", "fail")
def test_MetadataVersionTest_assertLatestIsNotProduction__4_1_1() -> None:
    """MetadataVersionTest.assertLatestIsNotProduction, MetadataVersionTest.java:253@4.1.1."""
    tool_error(fmt(P411, release_version="4.2-IV1"), "metadata.version 4.2-IV1 is not yet stable.", "KIP1022-FMT-07")


# =================================================================================================
# KRaftVersionTest / FeatureTest @ 4.1.1 (server-common)
# =================================================================================================

@pytest.mark.rule("KIP1022-MAP-01", "pass")
def test_KRaftVersionTest_testBootstrapMetadataVersion__4_1_1() -> None:
    """KRaftVersionTest.testBootstrapMetadataVersion, server-common/.../KRaftVersionTest.java:52@4.1.1: KRAFT_VERSION_0
    bootstraps from MINIMUM_VERSION, KRAFT_VERSION_1 from 3.9-IV0 (version-mapping's defaults)."""
    c = Cluster(P411)
    for rv, level in (("3.3-IV3", 0), ("3.8-IV0", 0), ("3.9-IV0", 1), ("4.1-IV1", 1)):
        assert ok(c.apply({"op": "version_mapping", "release_version": rv}))["levels"]["kraft.version"] == level, rv


@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_KRaftVersionTest_testFromFeatureLevel__4_1_1() -> None:
    """KRaftVersionTest.testFromFeatureLevel, KRaftVersionTest.java:45@4.1.1: levels 0 and 1 are kraft.version
    levels (kafka-features feature-dependencies runs Feature.fromFeatureLevel)."""
    out = ok(_features_tool_cmd(P411, "feature_dependencies", features=["kraft.version=0", "kraft.version=1"]))
    assert stdout(out) == "kraft.version=0 has no dependencies.\nkraft.version=1 has no dependencies.", out


@pytest.mark.rule("KIP1022-FMT-05", "fail")
@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_FeatureTest_testValidateEligibleLeaderReplicasVersion__4_1_1() -> None:
    """FeatureTest.testValidateEligibleLeaderReplicasVersion, server-common/.../FeatureTest.java:297@4.1.1: ELRV_1
    is invalid with metadata.version 4.0-IV0 and valid with 4.0-IV1 (format validates the same way)."""
    out = ok(Cluster(P411).apply({"op": "feature_dependencies", "features": [f"{ELR}=1"]}))
    assert stdout(out) == f"{ELR}=1 requires:\n    metadata.version=23 (4.0-IV1)", out
    refused(fmt(P411, release_version="4.0-IV0", features=[f"{ELR}=1"]), "TOOL_ERROR", "KIP1022-FMT-05")
    assert ok(fmt(P411, release_version="4.0-IV1", features=[f"{ELR}=1"]))["levels"][ELR] == 1
