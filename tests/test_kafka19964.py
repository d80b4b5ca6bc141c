"""A controller whose metadata.version is not yet known (KAFKA-19964, commit 075401e2e1 on
confluentinc/kafka's 4.4 branch; in the 4.4.0 jars, in no 4.3.x or earlier release).

Before its metadata high watermark is known, a controller's FeaturesPublisher has published nothing
and still holds its initial value, which ControllerServer's ApiVersionManager hands out:
- 4.4: FinalizedFeatures.unknown() (FeaturesPublisher.java:33@4.4), so no finalized features and
  epoch -1 (FinalizedFeatures.java:39@4.4, SimpleApiVersionManager.apiVersionResponse), and no
  kraft.version added to it (ControllerServer.scala:162-173@4.4: `if (!features.isUnknown)`);
- 4.0-4.3: FinalizedFeatures.fromKRaftVersion(MINIMUM_VERSION), 3.3-IV3 (7) at epoch -1
  (FeaturesPublisher.java:36@4.3, FinalizedFeatures.java:28-30@4.3), plus the raft's kraft.version
  (ControllerServer.scala:163@4.3, setFinalizedLevel);
- 3.x: fromKRaftVersion(MINIMUM_KRAFT_VERSION), 3.0-IV1 (1) (MetadataVersion.java:231@3.9); 3.7,
  3.8 and 3.9.0 hand the publisher's features over as they are, 3.9.1+ add the raft's kraft.version.
ControllerApis.handleDescribeCluster is the one controller RPC that reads those features: 4.4 refuses
it "There is no finalized MetadataVersion, …" (ControllerApis.scala:1089-1091@4.4); before, level 7 / 1
is below 3.7-IV0, so "Direct-to-controller communication is not supported with the current
MetadataVersion." (ControllerApis.scala:1064@4.3), both UNSUPPORTED_VERSION (35).
The live tier names such a node instead of finding it at odds with the cluster."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.live import checks as c
from conformance.live.infer import infer_software
from conformance.live.observe import FeatureView, NodeView, Observation, restore_command
from conformance.wire import codec
from reference_impl import Cluster, load_profile

MV, KRAFT = "metadata.version", "kraft.version"


def _restored(profile: str, *, active_caught_up: bool = True, kraft: int = 1) -> Cluster:
    cl = Cluster(profile)
    p = cl.active_profile
    out = cl.apply({"op": "restore_state", "metadata_version": p.mv_latest_production, "kraft_version": kraft,
                    "controllers": [{"id": 1, "caught_up": active_caught_up}, {"id": 2, "caught_up": False}],
                    "brokers": [{"id": 5}], "end_offset": 100, "features_offset": 40})
    assert out["error"] == "NONE", out
    return cl


@pytest.mark.rule("KIP584-API-05", "pass")
def test_4_4_a_controller_not_caught_up_answers_no_finalized_features_and_epoch_minus_1() -> None:
    cl = _restored("kafka-4.4")
    for version in (3, 4, 5):
        out = cl.apply({"op": "api_versions", "node": 2, "version": version})
        assert out["error"] == "NONE" and out["finalized"] == {} and out["epoch"] == -1, out
        assert out["supported"][MV] == list(load_profile("kafka-4.4").supported("controller")[MV])  # ranges as ever
    assert cl.apply({"op": "api_versions", "node": 2, "version": 2})["finalized"] is None  # no features below v3
    # The caught-up nodes are not affected: the active controller and the broker know the levels.
    active, broker = cl.apply({"op": "api_versions", "node": 1}), cl.apply({"op": "api_versions", "node": 5})
    assert active["finalized"][MV] == 33 and active["finalized"][KRAFT] == 1 and active["epoch"] == 40
    assert broker["finalized"] == active["finalized"] and broker["epoch"] == 100


@pytest.mark.rule("KIP584-API-05", "pass")
@pytest.mark.parametrize(("profile", "want"), [
    ("kafka-4.3", {MV: 7, KRAFT: 1}), ("kafka-4.2", {MV: 7, KRAFT: 1}), ("kafka-4.0", {MV: 7, KRAFT: 1}),
    ("kafka-3.9.1", {MV: 1, KRAFT: 1}),  # KAFKA-18920: the raft's kraft.version is added (3.9.1+)
    ("kafka-3.9", {MV: 1}), ("kafka-3.8", {MV: 1}), ("kafka-3.7", {MV: 1}),  # the publisher's features as they are
])
def test_before_4_4_a_controller_not_caught_up_claims_the_minimum_metadata_version(profile: str,
                                                                                   want: dict[str, int]) -> None:
    cl = _restored(profile)
    out = cl.apply({"op": "api_versions", "node": 2})
    assert out["finalized"] == want and out["epoch"] == -1, out
    assert load_profile(profile).mv_minimum == want[MV]  # MINIMUM_VERSION (4.x) / MINIMUM_KRAFT_VERSION (3.x)


def test_without_kraft_version_1_a_4_3_controller_not_caught_up_lists_only_metadata_version() -> None:
    # setFinalizedLevel(kraft.version, 0) removes the feature (FinalizedFeatures.java@4.3)
    assert _restored("kafka-4.3", kraft=0).apply({"op": "api_versions", "node": 2})["finalized"] == {MV: 7}


def test_describe_of_a_controller_not_caught_up_prints_no_epoch() -> None:
    # KafkaAdminClient.createFeatureMetadata: a negative epoch is Optional.empty(), printed "-"
    # (KafkaAdminClient.java:4673-4677@4.4, FeatureCommand.java:256@4.4); level 0 of metadata.version
    # is "UNKNOWN 0" (FeatureCommand.levelToString).
    # 4.3+ pad their columns (KAFKA-19941): compared field by field.
    lines = [" ".join(x.split()) for x in _restored("kafka-4.4").apply({"op": "describe", "node": 2})["lines"]]
    mv = next(line for line in lines if line.startswith(f"Feature: {MV} "))
    assert mv.endswith("FinalizedVersionLevel: UNKNOWN 0 Epoch: -") and all(x.endswith("Epoch: -") for x in lines)
    old = next(" ".join(x.split()) for x in _restored("kafka-4.3").apply({"op": "describe", "node": 2})["lines"]
               if f"{MV} " in x)
    assert old.endswith("FinalizedVersionLevel: 3.3-IV3 Epoch: -")


def test_catching_up_ends_with_a_commit_or_a_registration() -> None:
    cl = _restored("kafka-4.4", active_caught_up=False)
    assert cl.apply({"op": "api_versions", "node": 1})["finalized"] == {}
    # UpdateFeatures goes to the QuorumController, not the publisher: it works, and the commit is published.
    up = cl.apply({"op": "update_features", "updates": [{"feature": "group.version", "level": 0,
                                                         "upgrade_type": "SAFE_DOWNGRADE"}]})
    assert up["error"] == "NONE", up
    after = cl.apply({"op": "api_versions", "node": 1})
    assert after["finalized"][MV] == 33 and after["epoch"] == up["epoch"] >= 0
    assert cl.apply({"op": "api_versions", "node": 2})["finalized"] == {}  # a standby still behind
    # A controller registers once it knows the metadata.version (ControllerRegistrationManager).
    assert cl.apply({"op": "register", "role": "controller", "node": 2})["error"] == "NONE"
    assert cl.apply({"op": "api_versions", "node": 2})["finalized"][MV] == 33


def test_a_broker_cannot_be_restored_as_not_caught_up() -> None:
    # BrokerServer enables request processing after its initial catch-up (BrokerServer.scala:602,638@4.4).
    out = Cluster("kafka-4.4").apply({"op": "restore_state", "metadata_version": 33,
                                      "brokers": [{"id": 5, "caught_up": False}]})
    assert out["error"] == "INVALID_COMMAND" and "broker(s) [5]" in out["message"], out


@pytest.mark.rule("KIP919-DESC-01", "fail")
@pytest.mark.parametrize(("profile", "message"), [
    ("kafka-4.4", "There is no finalized MetadataVersion, so direct-to-controller communication is not supported."),
    ("kafka-4.3", "Direct-to-controller communication is not supported with the current MetadataVersion."),
    ("kafka-3.7", "Direct-to-controller communication is not supported with the current MetadataVersion."),
])
def test_describe_cluster_to_a_controller_not_caught_up_is_refused(profile: str, message: str) -> None:
    assert _restored(profile).direct_to_controller_refusal(2) == (message, "KIP919-DESC-01")


@pytest.mark.rule("KIP919-DESC-01", "fail")
def test_describe_cluster_to_a_controller_below_3_7_iv0_is_refused() -> None:
    cl = Cluster("kafka-4.4")
    assert cl.apply({"op": "restore_state", "metadata_version": 14})["error"] == "NONE"
    assert cl.direct_to_controller_refusal(3000) == (
        "Direct-to-controller communication is not supported with the current MetadataVersion.", "KIP919-DESC-01")


@pytest.mark.rule("KIP919-DESC-01", "pass")
def test_describe_cluster_to_a_caught_up_controller_at_3_7_iv0_or_later_is_answered() -> None:
    cl = _restored("kafka-4.4")
    assert cl.direct_to_controller_refusal(1) is None
    cl.apply({"op": "restore_state", "metadata_version": 15})
    assert cl.direct_to_controller_refusal(3000) is None


# -- the live tier: such a node is named, not held to the cluster's levels -------------------------

FIN = {MV: (33, 33), "group.version": (1, 1), "transaction.version": (2, 2), KRAFT: (1, 1)}


def _node(node_id: int, role: str, finalized: dict[str, tuple[int, int]], epoch: int,
          release: str = "kafka-4.4") -> NodeView:
    p = load_profile(release)
    b = p.behaviour
    keys = {codec.API_VERSIONS: (0, b["api_versions_max_version"]),
            codec.UPDATE_FEATURES: (0, b["update_features_max_version"])}
    if role == "controller":
        keys[codec.BROKER_REGISTRATION] = (0, b["broker_registration_max_version"])
    sup = dict(p.supported(role, False))
    n = NodeView(node_id, role, ("127.0.0.1", 9000 + node_id), keys)
    n.features[4] = FeatureView(4, sup, dict(finalized), epoch)
    n.features[3] = FeatureView(3, {k: r for k, r in sup.items() if r[0] != 0}, dict(finalized), epoch)
    n.software, n.evidence, n.nearest = infer_software(n)
    return n


def _by_id(checks: list[c.Check]) -> dict[str, c.Check]:
    return {x.id: x for x in checks}


def _run(check: c.Check) -> list[str] | str:
    return check.skip if check.skip else check.run()


@pytest.mark.rule("KIP584-API-05", "pass")
def test_a_controller_not_caught_up_is_named_and_no_finding() -> None:
    late = _node(8, "controller", {}, -1)
    obs = Observation("cid", [_node(7, "controller", FIN, 40), late, _node(0, "broker", FIN, 90)], 7)
    assert late.catching_up and obs.source is not None and obs.source.id == 7 and obs.finalized[MV] == 33
    checks = _by_id(c.checks(obs, "kafka-4.4", None))
    assert "not yet known" in str(_run(checks["KIP584-OBS-04-agree-controller8"]))  # skipped, with the reason
    assert _run(checks["KIP584-API-05-not-yet-known-controller8"]) == []
    assert _run(checks["KIP778-OBS-01-metadata-version"]) == []
    assert _run(checks["KIP584-OBS-01-in-range-controller8"]) == []
    state = restore_command(obs, "kafka-4.4")
    assert state is not None
    assert next(s for s in state["controllers"] if s["id"] == 8)["caught_up"] is False
    assert state["features_offset"] == 40 and state["metadata_version"] == 33
    # The reference started from that state answers the node as the cluster did: lockstep agrees.
    ref = Cluster("kafka-4.4")
    assert ref.apply(state)["error"] == "NONE"
    out = ref.apply({"op": "api_versions", "node": 8})
    assert (out["finalized"], out["epoch"]) == ({}, -1)


@pytest.mark.rule("KIP584-API-05", "pass")
def test_a_4_3_controller_not_caught_up_claims_3_3_iv3_and_is_not_at_odds_with_the_cluster() -> None:
    fin = {MV: (30, 30), KRAFT: (1, 1)}
    late = _node(8, "controller", {MV: (7, 7), KRAFT: (1, 1)}, -1, "kafka-4.3")
    obs = Observation("cid", [_node(7, "controller", fin, 40, "kafka-4.3"), late], 7)
    assert late.catching_up
    checks = _by_id(c.checks(obs, "kafka-4.3", None))
    assert _run(checks["KIP584-API-05-not-yet-known-controller8"]) == []
    assert isinstance(_run(checks["KIP584-OBS-04-agree-controller8"]), str)


@pytest.mark.rule("KIP584-API-05", "fail")
def test_a_4_4_controller_claiming_3_3_iv3_before_it_caught_up_is_a_finding() -> None:
    # The pre-KAFKA-19964 answer from a node that advertises 4.4's features and APIs.
    late = _node(8, "controller", {MV: (7, 7)}, -1)
    obs = Observation("cid", [_node(7, "controller", FIN, 40), late], 7)
    problems = _run(_by_id(c.checks(obs, "kafka-4.4", None))["KIP584-API-05-not-yet-known-controller8"])
    want = ("controller 8 answers at epoch -1 (not caught up) with finalized {'metadata.version': 7}; "
            "kafka-4.4 answers no finalized features then")
    assert problems == [want]


def test_a_whole_cluster_not_caught_up_says_why_nothing_needing_a_metadata_version_runs() -> None:
    obs = Observation("cid", [_node(7, "controller", {}, -1), _node(8, "controller", {}, -1)], None)
    assert obs.none_knows and obs.source is None and obs.finalized == {}
    checks = _by_id(c.checks(obs, "kafka-4.4", None))
    why = _run(checks["KIP778-OBS-01-metadata-version"])
    assert isinstance(why, str) and "no node knows the metadata.version yet" in why
    assert isinstance(_run(checks["KIP584-OBS-04-agree-controller7"]), str)
    assert restore_command(obs, "kafka-4.4") is None


def test_levels_arriving_on_a_node_that_was_catching_up_are_not_a_change(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.live import observe

    late = _node(8, "controller", {}, -1)
    monkeypatch.setattr(observe, "read_features", lambda target, addr, keys: {4: FeatureView(4, {}, FIN, 41)})
    assert c.epoch_never_goes_back(None, late) == []
    known = _node(7, "controller", FIN, 40)
    monkeypatch.setattr(observe, "read_features",
                        lambda target, addr, keys: {4: FeatureView(4, {}, {MV: (33, 33)}, 41)})
    assert c.epoch_never_goes_back(None, known) != []  # a caught-up node's levels changing still is


# -- over the wire: serve-broker holding a controller that has not caught up, observed by kfc check ----

def test_live_observe_run_names_a_controller_not_caught_up_and_conforms(tmp_path: Path) -> None:
    from conformance.live.observe import send_request
    from conformance.serving.process import ServeBroker
    from conformance.targets import make_target

    with ServeBroker("--profile", "kafka-4.4") as sb:
        t = make_target(sb.spec("control=1"))
        try:
            reply = t.control({"op": "restore_state", "command": {  # type: ignore[attr-defined]
                "metadata_version": 33, "finalized": {"group.version": 1}, "kraft_version": 1,
                "controllers": [{"id": 3000}, {"id": 3001, "caught_up": False}],
                "brokers": [{"id": 1}, {"id": 2}], "end_offset": 57, "features_offset": 12}})
            assert reply["outcome"]["error"] == "NONE", reply
            late = ("127.0.0.1", int(reply["controllers"]["3001"]))
            # DescribeCluster to it: ControllerApis.handleDescribeCluster's 4.4 refusal (KIP919-DESC-01).
            dc = send_request(t, late, codec.DESCRIBE_CLUSTER, 1, endpoint_type=2,  # type: ignore[arg-type]
                              include_cluster_authorized_operations=False)
            assert (codec.error_name(dc.error_code), dc.error_message) == (
                "UNSUPPORTED_VERSION",
                "There is no finalized MetadataVersion, so direct-to-controller communication is not supported.")
        finally:
            t.close()
        spec = f"kafka://{reply['bootstrap']}?controller={reply['controller']}&tiers=observe"
        run = subprocess.run([sys.executable, "-m", "kfc", "check", "--no-spark", "--target", spec, "--report",
                              str(tmp_path / "r")], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0 and "CONFORMS" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    assert "controller 3001" in run.stdout and "metadata.version not yet known" in run.stdout
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    status = {t["nodeid"].split("[", 1)[1].rstrip("]"): t for t in summary["tests"]
              if t["nodeid"].startswith("test_live.py::")}
    assert status["KIP584-API-05-not-yet-known-controller3001"]["status"] == "passed"
    assert status["KIP584-OBS-04-agree-controller3001"]["status"] == "skipped"
    assert status["KIP584-OBS-04-agree-controller3000"]["status"] == "passed"
    # Its ApiVersions in lockstep with the reference started from the observed state (caught_up false).
    assert all(status[f"controller3001-v{v}"]["status"] == "passed" for v in range(6))
    assert not [t for t in summary["tests"] if t["status"] in ("failed", "error")]
    cluster = json.loads((tmp_path / "r" / "cluster.json").read_text())
    late_node = next(n for n in cluster["nodes"] if n["id"] == 3001)
    assert late_node["catching_up"] and late_node["api_versions"]["5"]["finalized"] == {}
    assert late_node["api_versions"]["5"]["epoch"] == -1
    assert next(c for c in cluster["state"]["controllers"] if c["id"] == 3001)["caught_up"] is False


@pytest.mark.rule("KIP584-API-05", "fail")
def test_a_broker_without_feature_versioning_is_not_catching_up() -> None:
    """A broker of an implementation without feature versioning (tansu: epoch -1, nothing finalized,
    no metadata.version range) is not a node catching up: the cluster's missing metadata.version stays
    the KIP778-OBS-01 finding.  Only a controller answers before it has caught up (BrokerServer@4.4)."""
    bare = NodeView(111, "broker", ("127.0.0.1", 9111), {codec.API_VERSIONS: (0, 3)})
    bare.features[3] = FeatureView(3, {}, {}, -1)
    late_broker = _node(1, "broker", {}, -1)
    obs = Observation("tansu", [bare], None)
    assert not bare.catching_up and not late_broker.catching_up and not obs.none_knows
    found = _run(_by_id(c.checks(obs, "kafka-4.4", None))["KIP778-OBS-01-metadata-version"])
    assert isinstance(found, list) and found, found
