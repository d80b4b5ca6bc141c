"""The observe tier's invariants (conformance.live.checks) on stated observations: each rule holds on
what a conforming cluster says and fails, with a message naming the node and the value, on what a
broken one says.  Also the release inference and the restore_state command built from an observation."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.live import checks as c
from conformance.live.infer import infer_profile, infer_software
from conformance.live.observe import FeatureView, NodeView, Observation, restore_command
from conformance.live.probes import probes
from conformance.wire import codec
from conformance.wire.client import Anomaly
from reference_impl import Cluster, load_profile

P = "kafka-4.2"
FIN = {"metadata.version": (27, 27), "group.version": (1, 1), "transaction.version": (2, 2)}


def _node(node_id: int, role: str = "broker", *, release: str = P, finalized: dict[str, tuple[int, int]] | None = None,
          epoch: int = 40, supported: dict[str, tuple[int, int]] | None = None, v3: dict[str, tuple[int, int]] | None = None,
          api_max: int | None = None, uf_max: int | None = None) -> NodeView:
    p = load_profile(release)
    b = p.behaviour
    sup = supported if supported is not None else dict(p.supported(role, False))
    fin = dict(FIN if finalized is None else finalized)
    keys = {codec.API_VERSIONS: (0, b["api_versions_max_version"] if api_max is None else api_max),
            codec.UPDATE_FEATURES: (0, b["update_features_max_version"] if uf_max is None else uf_max)}
    if role == "controller":
        keys[codec.BROKER_REGISTRATION] = (0, b["broker_registration_max_version"])
    n = NodeView(node_id, role, ("127.0.0.1", 9000 + node_id), keys)
    n.features[4] = FeatureView(4, sup, fin, epoch)
    n.features[3] = FeatureView(3, v3 if v3 is not None else {k: r for k, r in sup.items() if r[0] != 0}, fin, epoch)
    n.software, n.evidence, n.nearest = infer_software(n)
    return n


def _obs(*nodes: NodeView, active: int | None = 7) -> Observation:
    return Observation("cid", list(nodes), active)


def _cluster(**broker: Any) -> Observation:
    return _obs(_node(7, "controller"), _node(0, **broker), _node(5))


@pytest.mark.rule("KIP584-OBS-01", "pass")
def test_finalized_levels_inside_every_range() -> None:
    obs = _cluster()
    assert all(c.finalized_in_range(obs, n) == [] for n in obs.nodes)


@pytest.mark.rule("KIP584-OBS-01", "fail")
def test_a_node_whose_range_misses_a_finalized_level_is_named() -> None:
    obs = _cluster(supported={**load_profile(P).supported("broker"), "metadata.version": (7, 21)})
    assert c.finalized_in_range(obs, obs.node(0)) == [  # type: ignore[arg-type]
        "finalized metadata.version=27 lies outside node 0's supported range 7-21"]


@pytest.mark.rule("KIP584-OBS-02", "pass")
def test_finalized_sent_as_min_equals_max() -> None:
    assert c.finalized_min_equals_max(_node(0)) == []


@pytest.mark.rule("KIP584-OBS-02", "fail")
def test_finalized_min_level_other_than_the_level_is_a_finding() -> None:
    problems = c.finalized_min_equals_max(_node(0, finalized={**FIN, "group.version": (0, 1)}))
    assert problems and "group.version with min_version_level 0 and max_version_level 1" in problems[0]


class _Reader:
    """A target whose next ApiVersions read answers with the given view."""

    def __init__(self, view: FeatureView):
        self.view = view


@pytest.mark.rule("KIP584-OBS-03", "pass")
@pytest.mark.rule("KIP584-OBS-03", "fail")
@pytest.mark.parametrize(("epoch", "levels", "ok"), [(40, FIN, True), (55, FIN, True), (39, FIN, False),
                                                     (41, {**FIN, "group.version": (0, 0)}, False)])
def test_epoch_never_goes_back_and_levels_hold(monkeypatch: pytest.MonkeyPatch, epoch: int,
                                                levels: dict[str, tuple[int, int]], ok: bool) -> None:
    from conformance.live import observe

    node = _node(0)
    again = {v: FeatureView(v, f.supported, dict(levels), epoch) for v, f in node.features.items()}
    monkeypatch.setattr(observe, "read_features", lambda target, addr, keys: again)
    problems = c.epoch_never_goes_back(object(), node)
    assert (problems == []) is ok, problems


@pytest.mark.rule("KIP584-OBS-04", "pass")
def test_nodes_agree_on_the_finalized_levels() -> None:
    obs = _cluster()
    assert all(c.nodes_agree(obs, n) == [] for n in obs.nodes)


@pytest.mark.rule("KIP584-OBS-04", "fail")
def test_a_node_with_other_levels_is_named() -> None:
    obs = _cluster(finalized={**FIN, "group.version": (0, 0)} | {"metadata.version": (26, 26)})
    assert "node 0 reports finalized" in c.nodes_agree(obs, obs.node(0))[0]  # type: ignore[arg-type]


@pytest.mark.rule("KIP584-OBS-05", "pass")
def test_api_maxima_of_the_release() -> None:
    obs = _cluster()
    assert all(c.release_api_versions(obs, n, P) == [] for n in obs.nodes)


@pytest.mark.rule("KIP584-OBS-05", "fail")
def test_missing_or_lower_api_maxima_are_findings() -> None:
    obs = _cluster(uf_max=1)
    assert c.release_api_versions(obs, obs.node(0), P) == [  # type: ignore[arg-type]
        "broker 0 advertises UpdateFeatures up to v1; kafka-4.2 serves up to v2"]
    bare = NodeView(3, "broker", ("127.0.0.1", 1), {codec.API_VERSIONS: (0, 4)})
    assert "does not advertise UpdateFeatures (57)" in c.release_api_versions(_obs(bare, active=None), bare, P)[0]


@pytest.mark.rule("KIP778-OBS-01", "pass")
def test_metadata_version_finalized_and_advertised() -> None:
    assert c.metadata_version_finalized(_cluster()) == []


@pytest.mark.rule("KIP778-OBS-01", "fail")
def test_a_cluster_without_metadata_version_is_one_finding() -> None:
    n = _node(0, finalized={}, supported={})
    assert c.metadata_version_finalized(_obs(n, active=None)) == [
        "no node reports a finalized metadata.version (broker 0 finalizes nothing)",
        "broker 0 advertises no metadata.version range"]


@pytest.mark.rule("KIP1022-OBS-01", "pass")
def test_features_of_the_release() -> None:
    assert all(c.release_features(n, P) == [] for n in _cluster().nodes)


@pytest.mark.rule("KIP1022-OBS-01", "fail")
def test_a_missing_feature_is_named() -> None:
    sup = dict(load_profile(P).supported("broker"))
    del sup["share.version"]
    n = _node(0, supported=sup)
    assert n.software is None  # no release advertises this set: checked against the run's profile
    assert c.release_features(n, P) == ["broker 0 does not advertise share.version (kafka-4.2 does)"]


@pytest.mark.rule("KIP1022-API-01", "pass")
def test_min0_ranges_left_out_below_v4() -> None:
    assert c.min0_omitted_below_v4(_node(0), P) == []


@pytest.mark.rule("KIP1022-API-01", "fail")
def test_min0_ranges_below_v4_are_findings() -> None:
    n = _node(0, v3=dict(load_profile(P).supported("broker")))
    assert any("ApiVersions v3 carries group.version 0-1" in p for p in c.min0_omitted_below_v4(n, P))


@pytest.mark.rule("KIP584-API-02", "fail")
def test_level_zero_listed_is_a_finding() -> None:
    assert c.level_zero_never_listed(_node(0, finalized={**FIN, "share.version": (0, 0)})) == [
        "ApiVersions v3: finalized share.version listed at level 0",
        "ApiVersions v4: finalized share.version listed at level 0"]


# -- release inference, the stated state, the probe catalogue ---------------------------------------

def test_release_inference_prefers_stable_ranges_and_assumes_the_nearest_when_unclear() -> None:
    assert _node(0, release="kafka-4.2").software == "kafka-4.2"  # kafka-4.1 matches only with unstable versions
    assert _node(0, release="kafka-4.1").software == "kafka-4.1"
    decided = infer_profile(_cluster(), None)
    assert decided.profile == P and decided.evidence[0] == "the active controller 7 runs kafka-4.2"
    assert decided.unclear is None
    # No release advertises nothing at ApiVersions v4: an assumption (stated), and a finding -- never an error.
    bare = _node(0, supported={}, finalized={})
    assert bare.software is None and bare.nearest == "kafka-3.9"
    unclear = infer_profile(_obs(bare, active=None), None)
    assert unclear.profile == "kafka-3.9" and unclear.evidence[0].startswith("assumed kafka-3.9")
    assert unclear.unclear and "no release matches" in unclear.unclear
    assert c.checks(_obs(bare, active=None), unclear.profile, None, unclear.unclear)[1].rule == "KIP584-OBS-06"
    # One feature range off kafka-4.2: kafka-4.2 is still the nearest.
    off = _node(7, "controller", supported={**load_profile(P).supported("controller"), "group.version": (0, 9)})
    assert off.software is None and off.nearest == P
    assert infer_profile(_obs(off), None).profile == P
    assert infer_profile(_obs(off), "kafka-4.1").unclear is None  # named: nothing to infer


def test_the_observed_state_restores_with_real_ids_and_the_observed_epoch() -> None:
    obs = _obs(_node(7, "controller", epoch=9_876_543), _node(0, release="kafka-4.1", epoch=9_876_543),
               _node(5, epoch=9_876_543))
    cmd = restore_command(obs, P)
    assert cmd is not None
    ref = Cluster(P)
    assert ref.apply(cmd)["error"] == "NONE"
    assert (ref.epoch, ref.active_id, sorted(ref.image.brokers)) == (9_876_543, 7, [0, 5])
    assert ref.finalized_view() == {"group.version": 1, "metadata.version": 27, "transaction.version": 2}
    # A cluster that finalizes nothing is still a state the reference starts from (metadata.version unlisted).
    bare = restore_command(_obs(_node(0, finalized={}, supported={}), active=None), P)
    assert bare is not None and bare["metadata_version"] == 0
    ref = Cluster(P)
    assert ref.apply(bare)["error"] == "NONE" and ref.finalized_view() == {}
    no_features = _node(0)
    no_features.features = {}
    assert restore_command(_obs(no_features, active=None), P) is None


def test_probes_cover_the_check_order_and_change_nothing() -> None:
    ref = Cluster(P)
    ref.apply(restore_command(_cluster(), P))  # type: ignore[arg-type]
    catalogue = probes(ref, [1, 2])
    kinds = {p.kind for p in catalogue}
    for kind in ("negative", "too-high", "downgrade-no-type", "unknown-type", "mismatched-type-up", "unknown-feature",
                 "empty-name", "duplicate", "batch-valid-then-invalid", "mv-safe-down-to-26"):
        assert kind in kinds, kind
    assert all(p.command["validate_only"] and p.command["version"] >= 1 for p in catalogue)
    before = (ref.finalized_view(), ref.epoch)
    rules = {ref.apply(p.command).get("rule") for p in catalogue}
    assert (ref.finalized_view(), ref.epoch) == before
    assert {"KIP584-UPD-01", "KIP584-UPD-02", "KIP584-UPD-03", "KIP584-UPD-05", "KIP584-UPD-06"} <= rules


def _ctx_39() -> Any:
    from types import SimpleNamespace

    fin = {"metadata.version": (21, 21)}
    obs = _obs(_node(0, "controller", release="kafka-3.9", finalized=fin),
               _node(0, release="kafka-3.9", finalized=fin), active=0)  # one combined node
    return SimpleNamespace(tiers=("observe", "probe", "mutate", "register"), observation=obs, profile="kafka-3.9")


CAPS = frozenset({"api_versions", "describe", "update_features", "register", "unregister"})


@pytest.mark.parametrize(("steps", "why"), [
    # 3.9 writes kraft.version as an ordinary FeatureLevelRecord, and it never goes back.
    ([{"op": "update_features", "updates": [{"feature": "kraft.version", "level": 1}]}], "writes kraft.version"),
    ([{"op": "update_features", "version": 0, "updates": [{"feature": "kraft.version", "level": 1}]}],
     "writes kraft.version"),
    # There is no UnregisterController: a synthetic controller would stay in every feature check.
    ([{"op": "register", "role": "controller", "node": 3000, "software": "kafka-4.1"}], "registers a controller"),
    # A synthetic broker never heartbeats: Kafka never sees its session alive.
    ([{"op": "register", "node": 1, "incarnation": "a"},
      {"op": "register", "node": 1, "incarnation": "b", "previous_session_alive": True}], "live broker session"),
])
def test_an_example_never_leaves_what_a_running_cluster_keeps(steps: list[dict[str, Any]], why: str) -> None:
    example = {"profile": "kafka-3.9", "steps": [{"command": {"op": "format"}}] + [{"command": s} for s in steps]}
    first, failed = c.example_precondition(example, _ctx_39(), CAPS)
    assert (first, failed is not None) == (0, True) and why in str(failed), failed


def test_an_example_that_only_probes_kraft_version_runs() -> None:
    example = {"profile": "kafka-3.9", "steps": [{"command": {"op": "format"}}, {"command": {
        "op": "update_features", "validate_only": True, "updates": [{"feature": "kraft.version", "level": 1}]}}]}
    assert c.example_precondition(example, _ctx_39(), CAPS) == (1, None)


# -- what the wire showed: malformed answers, trailing bytes, ApiVersions versions, node roles ----------

def _anomalous(*anomalies: Anomaly) -> NodeView:
    n = _node(0)
    n.anomalies = list(anomalies)
    return n


@pytest.mark.rule("KIP482-WIRE-01", "pass")
@pytest.mark.rule("KIP511-API-01", "pass")
@pytest.mark.rule("KIP919-OBS-01", "pass")
@pytest.mark.rule("KIP584-OBS-06", "pass")
def test_a_clean_wire_and_agreeing_roles_pass() -> None:
    obs = _cluster()
    assert all(c.answers_well_formed(n) == [] and c.api_versions_in_version_asked(n) == [] for n in obs.nodes)
    assert c.roles_agree(obs) == []
    assert not [k for k in c.checks(obs, P, None) if k.rule == "KIP584-OBS-06"]  # decided: no such check


@pytest.mark.rule("KIP482-WIRE-01", "fail")
@pytest.mark.rule("KIP511-API-01", "fail")
def test_wire_anomalies_are_findings_of_their_node() -> None:
    n = _anomalous(Anomaly(3, 12, "trailing", "Metadata v12: 1 trailing byte(s) at byte 100 after the response"),
                   Anomaly(18, 0, "version", "ApiVersions v0: ApiVersions v0 answered with a flexible (v3+) body"),
                   Anomaly(57, 1, "malformed", "malformed UpdateFeatures v1 response: at byte 9: …"))
    assert c.answers_well_formed(n) == ["broker 0: Metadata v12: 1 trailing byte(s) at byte 100 after the response",
                                        "broker 0: malformed UpdateFeatures v1 response: at byte 9: …"]
    assert c.api_versions_in_version_asked(n) == [("broker 0: ApiVersions v0: ApiVersions v0 answered with a "
                                                  "flexible (v3+) body")]


@pytest.mark.rule("KIP919-OBS-01", "fail")
@pytest.mark.rule("KIP584-OBS-06", "fail")
def test_a_role_conflict_and_an_unknown_release_are_their_own_findings() -> None:
    obs = _cluster()
    obs.controllers_asked = True
    obs.role_conflicts = [("DescribeCluster endpoint type 2 on 127.0.0.1:9007 lists node 0 at 127.0.0.1:9000, "
                          "which Metadata lists as a broker there")]
    found = {k.rule: k.run() for k in c.checks(obs, P, None, "cannot tell which release")
             if k.rule in ("KIP919-OBS-01", "KIP584-OBS-06")}
    assert found["KIP919-OBS-01"] == obs.role_conflicts
    assert found["KIP584-OBS-06"] == ["cannot tell which release"]


def test_per_feature_results_on_v0_v1_are_compared_beside_a_top_level_none() -> None:
    """UpdateFeatures v0/v1 carry per-feature results: an error there beside a top-level NONE is no acceptance."""
    from conformance.compare import compare

    ref = Cluster(P)
    ref.apply(restore_command(_cluster(), P))  # type: ignore[arg-type]
    want = ref.apply({"op": "update_features", "version": 1, "validate_only": True,
                      "updates": [{"feature": "group.version", "level": 1, "upgrade_type": "UPGRADE"}]})
    assert want["error"] == "NONE" and want["results"]["group.version"]["error"] == "NONE"
    got = {**want, "results": {"group.version": {"error": "INVALID_UPDATE_VERSION", "message": "no"}}}
    assert compare(want, got) == ["results[group.version].error: expected 'NONE', got 'INVALID_UPDATE_VERSION'"]
    assert compare(want, {k: v for k, v in want.items() if k != "results"})  # results left out: a difference too
