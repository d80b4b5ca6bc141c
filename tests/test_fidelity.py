"""Fidelity to Apache Kafka's code, release by release and patch by patch (issue 11, items 1-7).

Each test names the Kafka source it follows as path:line@tag.  Tags 3.7.0 / 3.8.0 / 3.9.0-rc3 are
read in apache/kafka, 3.9.1 / 4.0.0 / 4.1.0 / 4.1.1 / 4.2.0-rc1 in aiven/inkless (which carries the
upstream release tags); docs/research/patch-notes.md has the longer quotes.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import ok, refused

from reference_impl import Cluster
from reference_impl._javaorder import java_hashmap_order
from reference_impl._timeline import timeline_order

MV = "metadata.version"
FAIL_ALL = "The update failed for all features since the following feature had an error: "


def _fmt(profile: str, **kw: Any) -> Cluster:
    c = Cluster(profile)
    cmd = {"op": "format", **kw}
    if profile >= "kafka-4.1.1" and profile.startswith("kafka-4") and "standalone" not in kw:
        cmd.setdefault("standalone", True)
    ok(c.apply(cmd))
    return c


def _reg(c: Cluster, node: int, **kw: Any) -> dict[str, Any]:
    return c.apply({"op": "register", "role": "broker", "node": node, **kw})


# -- 1. min-0 ranges: 3.7/3.8 send and advertise every feature; KAFKA-17492 omits them from 3.9.0 ----

@pytest.mark.rule("KIP1022-REG-01", "pass")
@pytest.mark.parametrize(("software", "sent"), [
    # BrokerRegistrationRequest.build sends the data unchanged (BrokerRegistrationRequest.java:47-49@3.7.0, @3.8.0)
    ("kafka-3.7", {MV: [0, 19], "x.version": [0, 1]}),
    ("kafka-3.8", {MV: [0, 19], "x.version": [0, 1]}),
    # ... and from 3.9.0 drops min-0 features below v4 (BrokerRegistrationRequest.java:47-57@3.9.0-rc3, :52)
    ("kafka-3.9", {}),
])
def test_min0_ranges_in_a_registration_below_v4_follow_the_brokers_release(software: str, sent: dict[str, Any]) -> None:
    c = Cluster("kafka-3.7")
    ok(c.apply({"op": "restore_state", "metadata_version": 19}))
    out = _reg(c, 1, software=software, ranges={MV: [0, 19], "x.version": [0, 1]}, version=3)
    assert out["sent_features"] == sent, out
    if sent:
        ok(out)  # Kafka 3.7/3.8 accept it: the metadata.version range covers 19
    else:
        # Without a metadata.version range a 3.x controller takes 1-1 (KIP584-REG-07): refused at 19.
        refused(out, "UNSUPPORTED_VERSION", "KIP584-REG-07")


@pytest.mark.rule("KIP1022-API-01", "pass")
@pytest.mark.parametrize(("software", "omitted"), [("kafka-3.8", False), ("kafka-3.9", True), ("kafka-4.2", True)])
def test_api_versions_v3_lists_min0_ranges_only_before_3_9(software: str, omitted: bool) -> None:
    """ApiVersionsResponse.createSupportedFeatureKeys copies everything at 3.7.0:280-293; from 3.9.0
    maybeFilterSupportedFeatureKeys skips min-0 ranges when the request version is below 4
    (ApiVersionsResponse.java:292@3.9.0-rc3, :278@4.1.1)."""
    c = Cluster("kafka-3.8")
    ok(c.apply({"op": "restore_state", "metadata_version": 19,
                "brokers": [{"id": 5, "software": software, "ranges": {MV: [1, 30], "x.version": [0, 2]}}]}))
    v3 = ok(c.apply({"op": "api_versions", "node": 5, "version": 3}))
    assert ("x.version" not in v3["supported"]) is omitted, v3


# -- 2. 3.x writes one request's records in java.util.HashMap order ---------------------------------

@pytest.mark.rule("KIP584-UPD-07", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8", "kafka-3.9"])
def test_3x_records_of_one_request_come_in_hashmap_order(profile: str) -> None:
    """QuorumController.updateFeatures builds a java.util.HashMap (QuorumController.java:2229-2236@3.7.0,
    :2306-2313@3.9.0-rc3) and FeatureControlManager.updateFeatures walks its entrySet
    (FeatureControlManager.java:171-189@3.7.0); 3.x writes level 0 of an unknown feature (:243-246@3.7.0)."""
    c = _fmt(profile, release_version="3.6-IV2")
    names = ["zeta.version", "alpha.version", "eligible.leader.replicas.version", MV]
    ups = [{"feature": n, "level": 0, "upgrade_type": "SAFE_DOWNGRADE"} for n in names[:3]]
    ups.append({"feature": MV, "level": 14, "upgrade_type": "UPGRADE"})
    out = ok(c.apply({"op": "update_features", "version": 1, "updates": ups}))
    written = [r["name"] for r in out["records"]]
    assert written == java_hashmap_order(names) != sorted(names), written


# -- 3. 3.x format refuses a bootstrap metadata.version below 3.3-IV0: tests/test_tools.py -------------
#    (test_3x_format_refuses_bootstrap_versions_below_3_3_iv0, BootstrapMetadata.java:82-85@3.7.0)

# -- 4. which node an error names: the controller's TimelineHashMap order over registrations -----------

def test_timeline_order_is_kaffkas() -> None:
    """BaseHashTable.findSlot (top bits of key * 0x9E3779B97F4A7C15), doubling at 0.75 load, slots in
    order, newest first within one (SnapshottableHashTable.java:172); worked orders checked against the
    compiled 3.7.0 and 4.1.1 classes (docs/research/patch-notes.md)."""
    assert timeline_order([1, 2, 3]) == [2, 1, 3]
    assert timeline_order([1, 2, 3, 4]) == [2, 4, 1, 3]
    assert timeline_order([0, 1, 2]) == [2, 0, 1]
    assert timeline_order([3000, 3001, 3002]) == [3000, 3002, 3001]


@pytest.mark.rule("KIP584-UPD-04", "fail")
@pytest.mark.parametrize(("profile", "brokers", "named"), [
    ("kafka-3.9", [1, 2, 3], 2), ("kafka-4.0", [1, 2, 3, 4], 2), ("kafka-4.2", [0, 1, 2], 2),
    ("kafka-4.2", [1, 3], 3),  # one slot: the newest first
    ("kafka-4.2", [3, 1], 1),
])
def test_the_first_failing_broker_in_the_controllers_order_is_named(profile: str, brokers: list[int], named: int) -> None:
    """FeatureControlManager.reasonNotSupported: local controller, then clusterControl.brokerRegistrations()
    (a TimelineHashMap, ClusterControlManager.java:237@3.9.0-rc3), then other controllers
    (FeatureControlManager.java:251-303@3.7.0, :321-374@4.1.1)."""
    c = _fmt(profile)
    old = {"kafka-3.9": "kafka-3.8", "kafka-4.0": "kafka-3.9", "kafka-4.2": "kafka-4.1"}[profile]
    target_mv = {"kafka-3.9": 21, "kafka-4.0": 25, "kafka-4.2": 29}[profile]
    c2 = Cluster(profile)
    ok(c2.apply({"op": "format", "release_version": {"kafka-3.9": "3.8-IV0", "kafka-4.0": "3.9-IV0",
                                                     "kafka-4.2": "4.1-IV1"}[profile],
                 **({"standalone": True} if profile == "kafka-4.2" else {})}))
    for b in brokers:
        ok(_reg(c2, b, software=old))
    out = c2.apply({"op": "update_features", "updates": [{"feature": MV, "level": target_mv, "upgrade_type": "UPGRADE"}]})
    if profile == "kafka-3.9":  # 3.x answers per feature
        out = out["results"][MV]
    assert out["rule"] == "KIP584-UPD-04" and f"Broker {named} only supports" in out["message"], out
    assert named == timeline_order(brokers)[0]
    del c


# -- 5. patch releases: 4.1.0 is not 4.1.1 ---------------------------------------------------------------

@pytest.mark.rule("KIP1022-DEP-01", "pass")
@pytest.mark.parametrize(("profile", "lines"), [
    # KRaftVersion.java:74-81@4.1.0: kraft.version 1 depends on metadata.version 21 (3.9-IV0) ...
    ("kafka-4.1.0", ["kraft.version=1 requires:", "    metadata.version=21 (3.9-IV0)"]),
    # ... and has no dependency from 4.1.1 (KRaftVersion.java:74-76@4.1.1); kafka-4.1 is the newest patch
    ("kafka-4.1.1", ["kraft.version=1 has no dependencies."]),
    ("kafka-4.1", ["kraft.version=1 has no dependencies."]),
])
def test_kraft_version_dependency_per_patch(profile: str, lines: list[str]) -> None:
    assert ok(Cluster(profile).apply({"op": "feature_dependencies", "features": ["kraft.version=1"]}))["lines"] == lines


@pytest.mark.rule("KIP1022-FMT-09", "fail")
@pytest.mark.parametrize(("profile", "text"), [
    ("kafka-4.1.0", ("Cannot set kraft.version to 1 unless one of the flags --standalone, --initial-controllers, or "
                    "--no-initial-controllers is used.")),  # Formatter.java:359-364@4.1.0
    ("kafka-4.1.1", ("Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the flags "
                    "--standalone, --initial-controllers, or --no-initial-controllers is used.")),  # :358-363@4.1.1
])
def test_kraft_version_flag_error_per_patch(profile: str, text: str) -> None:
    out = Cluster(profile).apply({"op": "format", "features": ["kraft.version=1"], "static_voters": True})
    refused(out, "TOOL_ERROR", "KIP1022-FMT-09")
    assert out["message"].startswith(text), out["message"]


@pytest.mark.rule("KIP1022-FMT-05", "fail")
def test_4_1_0_format_refuses_kraft_version_1_below_3_9_iv0() -> None:
    out = Cluster("kafka-4.1.0").apply({"op": "format", "release_version": "3.8-IV0", "standalone": True})
    refused(out, "TOOL_ERROR", "KIP1022-FMT-05", "kraft.version could not be set to 1 because it depends on "
            "metadata.version level 21")
    ok(Cluster("kafka-4.1.1").apply({"op": "format", "release_version": "3.8-IV0", "standalone": True}))


# -- 6. tool output on error paths: stdout lines printed before the failure, stderr separately ------------

@pytest.mark.rule("KIP1022-DEP-02", "fail")
@pytest.mark.parametrize(("tool", "error"), [
    ("kafka-storage", "Feature level 9 is not supported for feature transaction.version"),  # StorageTool.scala:233@4.1.1
    ("kafka-features", "No feature:transaction.version with feature level 9"),  # Feature.java:148@4.0.0
])
def test_feature_dependencies_prints_earlier_features_then_fails(tool: str, error: str) -> None:
    out = Cluster("kafka-4.1").apply({"op": "feature_dependencies", "tool": tool,
                                      "features": ["group.version=1", "transaction.version=9", "kraft.version=1"]})
    refused(out, "TOOL_ERROR", "KIP1022-DEP-02")
    assert out["lines"] == ["group.version=1 has no dependencies."]  # printed as it went; kraft never reached
    assert out["stderr"] == [error] == [out["message"]]


@pytest.mark.rule("KIP1022-MAP-02", "fail")
@pytest.mark.parametrize("tool", ["kafka-storage", "kafka-features"])
def test_version_mapping_unknown_release_is_the_same_in_both_tools(tool: str) -> None:
    """StorageTool.scala:195@4.1.1 and FeatureCommand.java:375-377@4.1.1 word it the same."""
    out = Cluster("kafka-4.1").apply({"op": "version_mapping", "tool": tool, "release_version": "9.9-IV9"})
    refused(out, "TOOL_ERROR", "KIP1022-MAP-02")
    assert out["stderr"] == ["Unknown release version '9.9-IV9'. Supported versions are: 3.3-IV3 to 4.1-IV1"]
    assert "lines" not in out


@pytest.mark.rule("KIP1022-TOOL-06", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-4.1"])
def test_features_tool_summary_goes_to_stderr(profile: str) -> None:
    """update() prints the per-feature lines and throws TerseException("N out of M operation(s) failed."),
    which main prints on stderr (FeatureCommand.java:318, :58-71@3.7.0; :464, :61-74@4.1.1)."""
    c = _fmt(profile)
    out = c.apply({"op": "features_tool", "action": "upgrade", "features": [f"{MV}=99"]})
    assert out["exit_code"] == 1 and len(out["lines"]) == 1 and out["lines"][0].startswith("Could not upgrade")
    assert out["stderr"] == ["1 out of 1 operation(s) failed."]


# -- 7. KIP-915: an empty value of a record type the loader keeps as opaque bytes ------------------------

@pytest.mark.rule("KIP915-CODEC-01", "fail")
@pytest.mark.parametrize(("profile", "key_type"), [("kafka-4.1", 5), ("kafka-4.1", 16), ("kafka-4.0", 3)])
def test_empty_value_of_an_opaque_record_type_fails_the_java_loader(profile: str, key_type: int) -> None:
    """CoordinatorRecordSerde.deserialize reads the value's version for every known type
    (coordinator-common/.../CoordinatorRecordSerde.java:93-99@4.0.0, :92-98@4.1.1); a 0-byte value is not
    null (Utils.readBytes), so the load fails."""
    key = f"{key_type:04x}0000"
    out = Cluster(profile).apply({"op": "load_coordinator", "coordinator": "group",
                                  "records": [{"key": key, "value": ""}]})
    refused(out, "UNKNOWN_SERVER_ERROR", "KIP915-CODEC-01", "Could not read version from value's buffer.")
    tomb = Cluster(profile).apply({"op": "load_coordinator", "coordinator": "group",
                                   "records": [{"key": key, "value": None}]})
    ok(tomb)  # a null value is a tombstone, not an empty buffer


# -- 5b. 3.9.0 vs 3.9.1 ---------------------------------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-10", "pass")
@pytest.mark.parametrize(("profile", "kraft", "dynamic"), [("kafka-3.9", 0, False), ("kafka-3.9.1", 1, True)])
def test_no_initial_controllers_is_a_dynamic_quorum_from_3_9_1(profile: str, kraft: int, dynamic: bool) -> None:
    """KAFKA-18028: 3.9.1 counts --no-initial-controllers as a dynamic quorum, so kraft.version defaults to 1
    (Formatter.java:349-358@3.9.1 vs :344-353@3.9.0-rc3)."""
    out = ok(Cluster(profile).apply({"op": "format", "no_initial_controllers": True}))
    assert (out["levels"]["kraft.version"], out["dynamic_quorum"]) == (kraft, dynamic)


@pytest.mark.rule("KIP584-API-02", "pass")
@pytest.mark.parametrize(("profile", "listed"), [("kafka-3.9", False), ("kafka-3.9.1", True), ("kafka-4.0", True)])
def test_controllers_report_kraft_version_from_3_9_1(profile: str, listed: bool) -> None:
    """KAFKA-18920 (3.9.1, 4.0.0: ControllerServer.scala:155-157@4.0.0 sets the raft kraft.version on the
    controller's ApiVersions); 3.9.0 controllers never list it.  Brokers always do."""
    c = Cluster(profile)
    ok(c.apply({"op": "format", "standalone": True, "release_version": "3.9-IV0"}))
    ok(c.apply({"op": "register", "role": "broker", "node": 1}))
    controller = ok(c.apply({"op": "api_versions", "node": 3000}))
    assert ("kraft.version" in controller["finalized"]) is listed, controller
    assert ok(c.apply({"op": "api_versions", "node": 1}))["finalized"]["kraft.version"] == 1


# -- found by the kafka-jvm harness (Kafka 4.1.1's own classes; tests/test_kafka_jvm.py) ---------------

@pytest.mark.rule("KIP1022-FMT-10", "pass")
def test_controllers_formatted_with_unstable_run_with_unstable_ranges() -> None:
    # kafka-storage takes --unstable from the node's unstable.feature.versions.enable
    # (StorageTool.scala:125@4.1.1: config.unstableFeatureVersionsEnabled), the same setting the controller
    # then runs with: QuorumFeatures.defaultSupportedFeatureMap(true) reaches latestTesting (4.2-IV1 = 29 in
    # 4.1.1).  The harness answered [7, 29]; a stable controller could not even replay 4.2-IV0.
    c = Cluster("kafka-4.1")
    ok(c.apply({"op": "format", "release_version": "4.2-IV0", "unstable": True}))
    out = ok(c.apply({"op": "describe", "node": 3000}))
    assert out["supported"][MV] == [7, 29], out
    c = Cluster("kafka-4.1")
    ok(c.apply({"op": "format", "controllers": [{"id": 3000, "unstable": False}], "release_version": "4.1-IV1",
                "unstable": True}))
    assert ok(c.apply({"op": "describe", "node": 3000}))["supported"][MV] == [7, 27]  # a spec may say otherwise


@pytest.mark.rule("KIP584-REPLAY-01", "fail")
def test_a_controller_that_cannot_replay_a_level_fails_with_feature_control_managers_words() -> None:
    # FeatureControlManager.replay (FeatureControlManager.java:434-437@4.1.1, the same text 3.7-4.2):
    # "Tried to apply FeatureLevelRecord " + record + ", but this controller only supports versions " + range.
    c = Cluster("kafka-4.2")
    ok(c.apply({"op": "format", "controllers": [{"id": 3000}, {"id": 3001}]}))
    out = c.apply({"op": "register", "role": "controller", "node": 3001, "software": "kafka-4.1"})
    assert out["error"] == "UNKNOWN_SERVER_ERROR", out
    assert out["message"] == ("Tried to apply FeatureLevelRecord FeatureLevelRecord(name='metadata.version', "
                              "featureLevel=29), but this controller only supports versions 7-27"), out


@pytest.mark.rule("KIP1022-FMT-13", "fail")
def test_exclusive_quorum_flags_are_named_with_their_short_forms() -> None:
    # argparse4j names an option by all its flags (StorageTool.scala:330-340@4.1.1: --standalone/-s,
    # --no-initial-controllers/-N, --initial-controllers/-I); Kafka 4.1.1's parser answered exactly this.
    out = refused(Cluster("kafka-4.1").apply({"op": "format", "standalone": True, "no_initial_controllers": True}),
                  "TOOL_ERROR", "KIP1022-FMT-13")
    assert out["message"] == "argument --no-initial-controllers/-N: not allowed with argument --standalone/-s", out
