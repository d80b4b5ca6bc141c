"""kafka-jvm:VERSION: Apache Kafka's own classes behind the target protocol (conformance/realkafka/harness).

Needs a JDK and the release's jars (Maven Central on first use, then the per-user cache).  The
values asserted here come from Kafka 4.1.1's classes, not from the reference: FeatureControlManager's
INVALID_UPDATE_VERSION text with QuorumFeatures' range, StorageTool's error for an unknown release
version, BrokerRegistrationRequest's v3 filtering of min-0 ranges (KAFKA-17492); from 4.4.0's classes:
the bootstrap snapshot, ApiVersions v5 (KIP-1242) and UnregisterController (KIP-1312) through the golden
traces.  `test_kfc_check_against_kafka_conforms` runs `kfc check` against the harness of one release per
shim line (the whole suite with the ci Hypothesis profile: 1-2 minutes each)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
VERSION = "4.1.1"

pytestmark = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("mvn") is None,
                                reason="needs a JDK and Maven (the harness is compiled against Kafka's jars)")


@pytest.fixture(scope="module")
def target() -> Iterator[Any]:
    from conformance.realkafka.target import KafkaJvmTarget

    t = KafkaJvmTarget(VERSION)
    try:
        yield t
    finally:
        t.close()
    assert t._proc is None or not t._proc.alive(), "the harness JVM outlived close()"


def test_the_harness_is_built_into_the_user_cache_not_the_checkout() -> None:
    from conformance.realkafka import harness
    from conformance.report import cache_dir

    built = harness.build(VERSION)
    assert (built.classes / "org" / "apache" / "kafka" / "controller" / "KfcHarness.class").is_file()
    assert built.classes.is_relative_to(cache_dir() / "harness" / VERSION)
    assert built.classes.parent.name == harness.source_hash(VERSION)  # rebuilt when a source changes
    assert not list((ROOT / "conformance" / "realkafka" / "harness").rglob("*.class"))
    assert harness.shim_line("4.1.1") == "4.1"


def test_a_build_of_other_sources_is_pruned_only_when_unused_for_a_day(tmp_path: Path) -> None:
    # Another checkout (a branch, a worktree) may be running its own build of the same release.
    from conformance.realkafka import harness

    fresh, old, broken = (tmp_path / n for n in ("fresh", "old", "broken"))
    for d in (fresh, old, broken):
        d.mkdir()
    (fresh / harness._DONE).write_text("x")
    (old / harness._DONE).write_text("x")
    os.utime(old / harness._DONE, (0, 0))
    assert not harness._unused_for(fresh, harness.PRUNE_AFTER)
    assert harness._unused_for(old, harness.PRUNE_AFTER) and harness._unused_for(broken, harness.PRUNE_AFTER)


@pytest.mark.parametrize(("version", "line", "layers"), [
    ("3.7.1", "3.7", ["3.7-3.8", "3.7-3.9"]), ("3.8.0", "3.8", ["3.7-3.8", "3.7-3.9"]),
    ("3.9.2", "3.9", ["3.7-3.9", "3.9-"]), ("4.0.2", "4.0", ["3.9-", "4.0-"]), ("4.2.2", "4.1", ["3.9-", "4.0-", "4.1-"]),
    ("4.4.0", "4.4", ["3.9-", "4.0-", "4.1-"])])
def test_each_release_line_builds_from_the_core_its_layers_and_its_shim(version: str, line: str, layers: list[str]) -> None:
    from conformance.realkafka import harness

    assert harness.shim_line(version) == line and harness.layers(version) == layers
    names = {p.relative_to(harness.HERE).parts[0] for p in harness.sources(version)}
    assert names == {"src", "shims", "layers"}


def test_handshake_names_the_release_and_leaves_out_what_it_cannot_run(target: Any) -> None:
    hello = target.hello()
    assert hello["name"] == f"kafka-jvm:{VERSION}" and hello["profile"] == "kafka-4.1.1"
    caps = set(hello["capabilities"])
    assert {"format", "register", "update_features", "api_versions", "describe", "state", "restore_state",
            "version_mapping", "feature_dependencies"} <= caps
    assert "load_coordinator" not in caps and "features_tool" not in caps  # not expressed yet: skipped, not faked
    target.reset("kafka-4.1")
    assert target.profile == "kafka-4.1"  # a profile of its own release is named as asked
    target.reset("kafka-3.9")
    assert target.profile == "kafka-4.1.1"  # another release: it says what it really runs


def test_update_features_answers_with_kafkas_own_check(target: Any) -> None:
    target.reset("kafka-4.1")
    out = target.apply({"op": "format", "release_version": "3.9-IV0"})
    assert out["error"] == "NONE" and out["metadata_version"] == {"level": 21, "name": "3.9-IV0"}, out
    assert [r["type"] for r in out["records"]] == ["FeatureLevelRecord"]
    reg = target.apply({"op": "register", "node": 1, "version": 3})
    assert reg["error"] == "NONE", reg
    # BrokerRegistrationRequest.Builder.build(3) leaves out ranges whose min is 0 (KAFKA-17492).
    assert sorted(reg["sent_features"]) == ["metadata.version"], reg
    out = target.apply({"op": "update_features", "updates": [{"feature": "metadata.version", "level": 99}]})
    assert out["error"] == "INVALID_UPDATE_VERSION" and out["error_code"] == 95, out
    assert out["message"] == ("The update failed for all features since the following feature had an error: "
                              "Invalid update version 99 for feature metadata.version. "
                              "Local controller 3000 only supports versions 7-27"), out
    out = target.apply({"op": "update_features", "version": 1, "updates": [{"feature": "metadata.version", "level": 27}]})
    assert out["error"] == "NONE" and out["results"] == {"metadata.version": {"error": "NONE", "message": "NONE"}}, out
    state = target.apply({"op": "state"})
    assert state["finalized"] == {"metadata.version": 27} and state["epoch"] == 2, state


def test_an_amended_registration_keeps_its_broker_epoch(target: Any) -> None:
    # ClusterControlManager.registerBroker: the same incarnation again is an amend ("Broker epoch
    # remains"), the record carries the old epoch and the old fenced state; a new incarnation's epoch
    # is its own offset.
    target.reset("kafka-4.1")
    assert target.apply({"op": "format", "release_version": "4.1-IV1"})["error"] == "NONE"
    first = target.apply({"op": "register", "node": 1, "incarnation": "a"})
    assert first["error"] == "NONE" and "epoch" not in first["records"][0], first
    again = target.apply({"op": "register", "node": 1, "incarnation": "a"})
    rec = again["records"][0]
    assert rec["epoch"] == first["records"][0]["offset"] == again["broker_epoch"] != rec["offset"], again
    assert rec["fenced"] is True, again  # never heartbeated: still fenced
    other = target.apply({"op": "register", "node": 1, "incarnation": "b"})
    assert "epoch" not in other["records"][0] and other["broker_epoch"] == other["records"][0]["offset"], other


def test_the_tools_are_kafkas_storage_tool(target: Any) -> None:
    target.reset("kafka-4.1")
    out = target.apply({"op": "format", "release_version": "3.9-IV7"})
    assert out["error"] == "TOOL_ERROR" and out["error_code"] is None
    assert out["message"] == ("Version 3.9-IV7 is not a valid version. The minimum version is 3.3-IV3 and the "
                              "maximum version is 4.2-IV1"), out
    out = target.apply({"op": "feature_dependencies", "features": ["kraft.version"]})
    assert out["message"] == "[Ljava.lang.String;@… (of class [Ljava.lang.String;)", out  # scala.MatchError
    out = target.apply({"op": "version_mapping", "release_version": "4.0"})
    assert out["lines"][0] == "metadata.version=25 (4.0)" and out["levels"]["group.version"] == 1, out


def test_malformed_commands_never_reach_the_jvm(target: Any) -> None:
    out = target.apply({"op": "register", "node": "1"})
    assert out["error"] == "INVALID_COMMAND" and "node" in out["message"], out
    assert target.apply({"op": "nope"})["error"] == "INVALID_COMMAND"


def test_an_unusable_release_is_one_clear_error() -> None:
    from conformance.targets import make_target

    with pytest.raises(ValueError, match=r"^target 'kafka-jvm:bogus': 'bogus' is not a Kafka release version"):
        make_target("kafka-jvm:bogus")
    with pytest.raises(ValueError, match=r"3\.6\.2: only KRaft releases 3\.7\.0 and later are supported"):
        make_target("kafka-jvm:3.6.2")  # refused before anything is fetched


# One release per line the harness has a shim for (4.2 runs the 4.1 shim), each under the profile it
# behaves as (release_profile).  Measured: docs/real-kafka.md, "Kafka's own classes".
# Floors: about 80 % of the tests measured to pass (docs/real-kafka.md), so a run that executed
# little is never a pass.
END_TO_END = {"3.7.0": 95, "3.7.1": 95, "3.7.2": 95, "3.8.0": 100, "3.8.1": 100, "3.9.0": 120, "3.9.2": 30, "4.0.2": 25, "4.1.1": 80, "4.2.2": 180, "4.3.1": 80, "4.4.0": 30}
# In the default run (CI): the newest two releases and a sample of the older lines; every one of them
# under `tox -m kafka-jvm` (-m kafka_jvm_full).
IN_CI = {"3.9.2", "4.1.1", "4.3.1", "4.4.0"}
# What a skip may say: an op the harness does not express, a node on a release it cannot run, a state
# Kafka's controller cannot replay, a regression of another profile (docs/deviations.md §8).
ALLOWED_SKIPS = ("lacks op(s)", "cannot run its active controller", "cannot answer as node", "replays restored levels",
                 "regression recorded for")


@pytest.mark.parametrize("version", [v if v in IN_CI else pytest.param(v, marks=pytest.mark.kafka_jvm_full)
                                     for v in END_TO_END])
def test_kfc_check_against_kafka_conforms(tmp_path: Path, version: str) -> None:
    from conformance.realkafka.target import release_profile

    profile = release_profile(version)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "kfc", "check", "--no-spark", "--target", f"kafka-jvm:{version}",
                           "--profile", profile, "--report", str(tmp_path / "r")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1500, check=False)
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert proc.returncode == 0 and summary["verdict"] == "CONFORMS", proc.stdout[-3000:]
    counts = summary["counts"]
    assert counts.get("failed", 0) == 0 and counts.get("passed", 0) >= END_TO_END[version], counts
    stateful = [t["status"] for t in summary["tests"] if t["nodeid"].endswith("::test_stateful_model")]
    assert stateful == ["passed"], stateful  # the Hypothesis walk ran (its coverage gates included)
    skipped = [t["summary"] or "" for t in summary["tests"] if t["status"] == "skipped"]
    assert all(any(a in s for a in ALLOWED_SKIPS) for s in skipped), [s for s in skipped
                                                                       if not any(a in s for a in ALLOWED_SKIPS)]


# -- Kafka 4.4.0: its own shim (LogContext and the bootstrap file moved), KIP-1242 and KIP-1312 -------------
@pytest.fixture(scope="module")
def target44() -> Iterator[Any]:
    from conformance.realkafka.target import KafkaJvmTarget

    t = KafkaJvmTarget("4.4.0")
    try:
        yield t
    finally:
        t.close()
    assert t._proc is None or not t._proc.alive(), "the harness JVM outlived close()"


def test_4_3_runs_on_the_4_1_shim_and_4_4_on_its_own() -> None:
    from conformance.realkafka import harness

    assert harness.shim_line("4.3.1") == "4.1" and harness.shim_line("4.4.0") == "4.4"


@pytest.mark.parametrize("golden", ["kip1312-unregister-controller.json", "kip1242-api-versions-v5.json"])
def test_kafka_4_4_answers_the_golden_traces(target44: Any, golden: str) -> None:
    from conformance.compare import compare

    trace = json.loads((ROOT / "fixtures" / "golden" / golden).read_text())
    target44.reset(trace["profile"])
    for i, step in enumerate(trace["steps"]):
        diffs = compare(step["expected"], target44.apply(step["command"]))
        assert not diffs, f"{golden} step {i}: {diffs}"


def test_kafka_4_4_reads_its_bootstrap_snapshot_and_unregisters_controllers(target44: Any) -> None:
    target44.reset("kafka-4.4")
    out = target44.apply({"op": "format", "release_version": "4.4-IV1"})
    # The records come from the metadata log's bootstrap snapshot (4.4's Formatter writes no bootstrap.checkpoint).
    assert out["error"] == "NONE" and out["metadata_version"] == {"level": 32, "name": "4.4-IV1"}, out
    assert (out["records"][0]["type"], out["records"][0]["name"], out["records"][0]["level"]) == (
        "FeatureLevelRecord", "metadata.version", 32)
    assert target44.apply({"op": "register", "role": "controller", "node": 3007})["error"] == "NONE"
    out = target44.apply({"op": "unregister", "role": "controller", "node": 3007})
    # ClusterControlManager.unregisterController's own words (MetadataVersion.isControllerUnregistrationSupported)
    assert (out["error"], out["error_code"]) == ("UNSUPPORTED_VERSION", 35), out
    assert out["message"] == "The current MetadataVersion is too old to support controller unregistration."
    assert target44.apply({"op": "update_features", "updates": [{"feature": "metadata.version", "level": 33}]})[
        "error"] == "NONE"
    out = target44.apply({"op": "unregister", "role": "controller", "node": 3007})
    assert out["error"] == "NONE" and out["records"] == [
        {"type": "UnregisterControllerRecord", "controller_id": 3007, "offset": out["records"][0]["offset"]}], out
    assert target44.apply({"op": "state"})["controllers"] == {}


# -- 3.x: the 3.7, 3.8 and 3.9 shims ---------------------------------------------------------------------
THREE_X = {"3.7.2": "kafka-3.7", "3.8.1": "kafka-3.8", "3.9.2": "kafka-3.9.2"}


@pytest.fixture(scope="module", params=sorted(THREE_X))
def target3(request: pytest.FixtureRequest) -> Iterator[Any]:
    from conformance.realkafka.target import KafkaJvmTarget

    t = KafkaJvmTarget(request.param)
    try:
        yield t
    finally:
        t.close()
    assert t._proc is None or not t._proc.alive(), "the harness JVM outlived close()"


def test_3x_answers_with_its_own_classes(target3: Any) -> None:
    """Values from the 3.x jars: no version-mapping / feature-dependencies in kafka-storage before 4.0
    (left out of the hello, refused if sent), 3.7/3.8's parser refusing the 3.9 quorum flags
    (parseArgsOrFail's message, its System.exit trapped), FeatureControlManager.updateFeatures' per-feature
    result with no top-level error (QuorumController.updateFeatures@3.9.0), and a fenced broker without a
    live session (BrokerHeartbeatManager.hasValidSession@3.7.0-3.9.2)."""
    v = target3.version
    hello = target3.hello()
    assert hello["profile"] == THREE_X[v]
    caps = set(hello["capabilities"])
    assert {"format", "register", "update_features", "api_versions", "describe", "state", "restore_state"} <= caps
    assert not caps & {"version_mapping", "feature_dependencies"}, caps
    assert target3.apply({"op": "version_mapping"})["error"] == "INVALID_COMMAND"
    target3.reset(THREE_X[v])
    out = target3.apply({"op": "format", "standalone": True})
    if v == "3.9.2":
        assert out["error"] == "NONE" and out["dynamic_quorum"] is True and out["levels"]["kraft.version"] == 1, out
    else:
        assert out == {**out, "error": "TOOL_ERROR", "message": "unrecognized arguments: '--standalone'"}, out
    out = target3.apply({"op": "format", "release_version": "3.7-IV0"})
    assert out["error"] == "NONE" and out["metadata_version"] == {"level": 15, "name": "3.7-IV0"}, out
    first = target3.apply({"op": "register", "node": 1, "incarnation": "a"})
    again = target3.apply({"op": "register", "node": 1, "incarnation": "b", "previous_session_alive": True})
    assert first["error"] == again["error"] == "NONE" and again["broker_epoch"] > first["broker_epoch"], again
    out = target3.apply({"op": "update_features", "version": 1, "updates": [{"feature": "metadata.version", "level": 99}]})
    assert out["error"] == "NONE" and list(out["results"]) == ["metadata.version"], out
    result = out["results"]["metadata.version"]
    assert result["error"] == "INVALID_UPDATE_VERSION" and result["message"] == (
        f"Invalid update version 99 for feature metadata.version. Local controller 3000 only supports versions "
        f"1-{TOP_MV[v]}"), out


TOP_MV = {"3.7.2": 19, "3.8.1": 20, "3.9.2": 21}  # MetadataVersion.latestProduction() of each release


@pytest.mark.parametrize(("version", "padded"), [("4.2.2", False), ("4.3.1", True), ("4.4.0", True)])
def test_describe_lines_are_the_releases_own_and_the_references(version: str, padded: bool) -> None:
    """Tabs up to 4.2, KAFKA-19941's padded columns from 4.3.0 -- printed by Kafka's handleDescribe, not by a
    format string of the harness -- and the same lines as the reference's."""
    from conformance.realkafka.target import KafkaJvmTarget, release_profile
    from reference_impl import Cluster

    profile = release_profile(version)
    t = KafkaJvmTarget(version)
    try:
        t.reset(profile)
        ref = Cluster(profile)
        for cmd in ({"op": "format", "release_version": "3.7-IV0"}, {"op": "register", "node": 1}):
            assert t.apply(cmd)["error"] == "NONE" and ref.apply(cmd)["error"] == "NONE"
        for node in (None, 1):
            cmd = {"op": "describe"} if node is None else {"op": "describe", "node": node}
            got = t.apply(cmd)["lines"]
            assert got == ref.apply(cmd)["lines"], (version, node)
            mv = next(x for x in got if x.startswith("Feature: metadata.version"))
            assert ("\t" not in mv) == padded and ("Feature: metadata.version" + " " * 24 + "  SupportedMinVersion: "
                                                    in mv) == padded, mv
    finally:
        t.close()
    assert t._proc is None or not t._proc.alive(), "the harness JVM outlived close()"
