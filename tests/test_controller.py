"""The active KRaft controller, release by release: UpdateFeatures, kraft.version, metadata.version
changes, ApiVersions/describe, the finalized epoch, broker and controller registration, and
mixed-version clusters.

Expectations come from docs/research/controller-notes.md (which overrides the facts file where
they differ), /work/shared/kafka-feature-facts.md §3, §4, §6, §7, §10, §11 and the KIP-584 texts.
They were written from those documents, not from the reference's output.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import ok, refused

from reference_impl import Cluster

RELEASES = ["kafka-3.7", "kafka-3.8", "kafka-3.9", "kafka-4.0", "kafka-4.1", "kafka-4.2", "kafka-4.3"]
THREE_X = ["kafka-3.7", "kafka-3.8", "kafka-3.9"]
FOUR_X = ["kafka-4.0", "kafka-4.1", "kafka-4.2", "kafka-4.3"]
RAFT_KRAFT = ["kafka-4.1", "kafka-4.2", "kafka-4.3"]  # 4.1+: kraft.version goes through the raft client

MV = "metadata.version"
KRAFT = "kraft.version"
GV = "group.version"
TV = "transaction.version"
ELR = "eligible.leader.replicas.version"
SHARE = "share.version"
STREAMS = "streams.version"
IUV = "INVALID_UPDATE_VERSION"
FAIL_ALL = "The update failed for all features since the following feature had an error: "

# Local supported metadata.version range of each release's controller (controller-notes §1.3).
LOCAL_MV = {"kafka-3.7": (1, 19), "kafka-3.8": (1, 20), "kafka-3.9": (1, 21), "kafka-4.0": (7, 25),
            "kafka-4.1": (7, 27), "kafka-4.2": (7, 29), "kafka-4.3": (7, 30)}
CID = 3000  # the default active controller


def is3(profile: str) -> bool:
    return profile in THREE_X


def U(feature: str, level: int, upgrade_type: Any = None) -> dict[str, Any]:
    u: dict[str, Any] = {"feature": feature, "level": level}
    if upgrade_type is not None:
        u["upgrade_type"] = upgrade_type
    return u


def update(c: Cluster, *updates: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return c.apply({"op": "update_features", "updates": list(updates), **kw})


def fmt(profile: str, **kw: Any) -> Cluster:
    c = Cluster(profile)
    ok(c.apply({"op": "format", **kw}))
    return c


def invalid(n: int, f: str, reason: str) -> str:
    return f"Invalid update version {n} for feature {f}. {reason}"


def feature_refused(profile: str, out: dict[str, Any], feature: str, message: str, rule: str) -> None:
    """One feature of an UpdateFeatures request failed: 3.x reports it in its per-feature Result and
    leaves the top level NONE; 4.x fails the whole request with the fail-all prefix and no Results."""
    if is3(profile):
        assert out["error"] == "NONE" and out["error_code"] == 0 and out["message"] is None, out
        r = out["results"][feature]
        assert r["error"] == IUV, out
        assert r["message"] == message, out
        assert r.get("rule") == rule, out
    else:
        assert out["error"] == IUV and out["error_code"] == 95, out
        assert out["message"] == FAIL_ALL + message, out
        assert out["rule"] == rule, out
        assert not out.get("results"), out
        assert out["records"] == [], out


def feature_ok(profile: str, out: dict[str, Any]) -> None:
    ok(out)
    for r in (out.get("results") or {}).values():
        assert r["error"] == "NONE", out


def fin(c: Cluster) -> dict[str, int]:
    return ok(c.apply({"op": "state"}))["finalized"]


def reg_broker(c: Cluster, node: int, **kw: Any) -> dict[str, Any]:
    return c.apply({"op": "register", "role": "broker", "node": node, **kw})


def reg_controller(c: Cluster, node: int, **kw: Any) -> dict[str, Any]:
    return c.apply({"op": "register", "role": "controller", "node": node, **kw})


# =============================================================================================
# 1. UpdateFeatures: per-feature check order (controller-notes §1.2)
# =============================================================================================

@pytest.mark.rule("KIP584-UPD-01", "fail")
@pytest.mark.parametrize("utype", [0, 4, -1, "UNKNOWN"])
@pytest.mark.parametrize("profile", RELEASES)
def test_unknown_upgrade_type_is_rejected(profile, utype):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 19, utype), version=1)
    feature_refused(profile, out, MV, invalid(19, MV, "The controller does not support the given upgrade type."),
                    "KIP584-UPD-01")
    assert out["epoch"] == out["epoch_before"]


@pytest.mark.rule("KIP584-UPD-01", "pass")
@pytest.mark.parametrize("utype", ["UPGRADE", "SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE", 1, 2, 3])
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-4.2"])
def test_known_upgrade_types_accepted_for_a_no_op(profile, utype):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 19, utype), version=1)
    feature_ok(profile, out)
    assert [(r["type"], r["name"], r["level"]) for r in out["records"]] == [("FeatureLevelRecord", MV, 19)]


@pytest.mark.rule("KIP584-UPD-01", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.2"])
def test_upgrade_type_is_checked_before_the_level(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, -1, 4), version=1)
    feature_refused(profile, out, MV, invalid(-1, MV, "The controller does not support the given upgrade type."),
                    "KIP584-UPD-01")


@pytest.mark.rule("KIP584-UPD-02", "fail")
@pytest.mark.parametrize("feature", [MV, GV, "unknown.feature"])
@pytest.mark.parametrize("profile", RELEASES)
def test_negative_level_is_rejected_before_the_range_check(profile, feature):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(feature, -1))
    feature_refused(profile, out, feature, invalid(-1, feature, "A feature version cannot be less than 0."),
                    "KIP584-UPD-02")


@pytest.mark.rule("KIP584-UPD-02", "pass")
@pytest.mark.rule("KIP584-UPD-03", "pass")
@pytest.mark.parametrize("profile", RELEASES)
def test_upgrade_within_the_local_range(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 19 + 1))  # 3.8-IV0 is production in every release after 3.7 ...
    if profile == "kafka-3.7":  # ... and outside 3.7's production range
        feature_refused(profile, out, MV, invalid(20, MV, f"Local controller {CID} only supports versions 1-19"),
                        "KIP584-UPD-03")
        return
    feature_ok(profile, out)
    assert fin(c)[MV] == 20


@pytest.mark.rule("KIP584-UPD-03", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_level_above_the_local_range(profile):
    lo, hi = LOCAL_MV[profile]
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, hi + 1))
    # "only supports versions a-b", no trailing period.
    feature_refused(profile, out, MV, invalid(hi + 1, MV, f"Local controller {CID} only supports versions {lo}-{hi}"),
                    "KIP584-UPD-03")


@pytest.mark.rule("KIP584-UPD-03", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_metadata_version_0_fails_the_local_range(profile):
    lo, hi = LOCAL_MV[profile]
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 0, "SAFE_DOWNGRADE"))
    feature_refused(profile, out, MV, invalid(0, MV, f"Local controller {CID} only supports versions {lo}-{hi}"),
                    "KIP584-UPD-03")


@pytest.mark.rule("KIP584-UPD-03", "fail")
@pytest.mark.parametrize("profile", FOUR_X)
def test_known_feature_above_its_local_range(profile):
    c = fmt(profile)
    out = update(c, U(TV, 3))
    feature_refused(profile, out, TV, invalid(3, TV, f"Local controller {CID} only supports versions 0-2"),
                    "KIP584-UPD-03")


@pytest.mark.rule("KIP584-UPD-13", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_unknown_feature_does_not_support_this_feature(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U("foo.version", 1))
    feature_refused(profile, out, "foo.version",
                    invalid(1, "foo.version", f"Local controller {CID} does not support this feature."),
                    "KIP584-UPD-13")


@pytest.mark.rule("KIP584-UPD-13", "pass")
@pytest.mark.rule("KIP584-UPD-07", "pass")
@pytest.mark.parametrize("profile", THREE_X)
def test_3x_level_0_of_an_unknown_feature_succeeds_and_writes_a_record(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U("foo.version", 0, "SAFE_DOWNGRADE"))
    feature_ok(profile, out)
    assert out["results"] == {"foo.version": {"error": "NONE", "message": None}}
    assert [(r["type"], r["name"], r["level"]) for r in out["records"]] == [("FeatureLevelRecord", "foo.version", 0)]
    assert "foo.version" not in fin(c)


@pytest.mark.rule("KIP584-UPD-13", "fail")
@pytest.mark.parametrize("utype", ["UPGRADE", "SAFE_DOWNGRADE"])
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_level_0_of_an_unknown_feature_is_not_found(profile, utype):
    c = fmt(profile)
    out = update(c, U("foo.version", 0, utype))
    assert out["error"] == IUV, out
    assert out["message"] == FAIL_ALL + invalid(0, "foo.version", "Feature foo.version not found."), out
    assert out["records"] == []


@pytest.mark.rule("KIP584-UPD-05", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_downgrade_without_a_downgrade_type(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 18))
    feature_refused(profile, out, MV, invalid(18, MV, "Can't downgrade the version of this feature without setting "
                                                       "the upgrade type to either safe or unsafe downgrade."),
                    "KIP584-UPD-05")


@pytest.mark.rule("KIP584-UPD-05", "fail")
@pytest.mark.parametrize("profile", FOUR_X)
def test_disable_without_a_downgrade_type(profile):
    c = fmt(profile)  # group.version=1 by default at every 4.x latest production
    out = update(c, U(GV, 0))
    feature_refused(profile, out, GV, invalid(0, GV, "Can't downgrade the version of this feature without setting "
                                                      "the upgrade type to either safe or unsafe downgrade."),
                    "KIP584-UPD-05")


@pytest.mark.rule("KIP584-UPD-05", "pass")
@pytest.mark.rule("KIP584-UPD-07", "pass")
@pytest.mark.parametrize("utype", ["SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"])
@pytest.mark.parametrize("profile", FOUR_X)
def test_disable_with_a_downgrade_type_removes_the_feature(profile, utype):
    c = fmt(profile)
    out = update(c, U(GV, 0, utype))
    feature_ok(profile, out)
    assert [(r["type"], r["name"], r["level"]) for r in out["records"]] == [("FeatureLevelRecord", GV, 0)]
    assert GV not in fin(c)


@pytest.mark.rule("KIP584-UPD-06", "fail")
@pytest.mark.parametrize("utype", ["SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"])
@pytest.mark.parametrize("profile", ["kafka-3.8", "kafka-3.9", "kafka-4.0", "kafka-4.1", "kafka-4.2", "kafka-4.3"])
def test_downgrade_type_cannot_raise_a_level(profile, utype):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 20, utype))
    feature_refused(profile, out, MV, invalid(20, MV, "Can't downgrade to a newer version."), "KIP584-UPD-06")


@pytest.mark.rule("KIP584-UPD-06", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.2"])
def test_downgrade_type_at_the_same_level_is_allowed(profile):
    c = fmt(profile, release_version="3.7-IV4")
    feature_ok(profile, update(c, U(MV, 19, "UNSAFE_DOWNGRADE")))


@pytest.mark.rule("KIP584-UPD-03", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_support_check_comes_before_the_direction_check(profile):
    lo, hi = LOCAL_MV[profile]
    c = fmt(profile, release_version="3.7-IV4")
    # Level 0 with UPGRADE is both unsupported and a downgrade without a type: the range wins.
    out = update(c, U(MV, 0))
    feature_refused(profile, out, MV, invalid(0, MV, f"Local controller {CID} only supports versions {lo}-{hi}"),
                    "KIP584-UPD-03")


# -- brokers ----------------------------------------------------------------------------------

@pytest.mark.rule("KIP584-UPD-04", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_registered_broker_range_is_checked(profile):
    c = fmt(profile, release_version="3.7-IV4")
    lo = LOCAL_MV[profile][0]
    # The broker never heartbeats, so it stays fenced; fenced brokers are included.
    ok(reg_broker(c, 1, ranges={MV: [lo, 19]}))
    out = update(c, U(MV, 20))
    if profile == "kafka-3.7":  # the local range (1-19) fails first
        feature_refused(profile, out, MV, invalid(20, MV, f"Local controller {CID} only supports versions 1-19"),
                        "KIP584-UPD-03")
        return
    feature_refused(profile, out, MV, invalid(20, MV, f"Broker 1 only supports versions {lo}-19"), "KIP584-UPD-04")


@pytest.mark.rule("KIP584-UPD-04", "pass")
@pytest.mark.parametrize("profile", RELEASES[1:])
def test_upgrade_passes_when_every_broker_supports_it(profile):
    c = fmt(profile, release_version="3.7-IV4")
    ok(reg_broker(c, 1))
    ok(reg_broker(c, 2))
    feature_ok(profile, update(c, U(MV, 20)))


@pytest.mark.rule("KIP584-UPD-04", "fail")
def test_broker_without_the_feature_does_not_support_this_feature():
    # Mixed versions: a 3.9 broker in a 4.0 cluster at 3.9-IV0 does not know group.version.
    c = fmt("kafka-4.0", release_version="3.9-IV0")
    ok(reg_broker(c, 1, software="kafka-3.9"))
    out = update(c, U(GV, 1))
    feature_refused("kafka-4.0", out, GV, invalid(1, GV, "Broker 1 does not support this feature."), "KIP584-UPD-04")


@pytest.mark.rule("KIP584-UPD-04", "fail")
def test_broker_single_version_range_prints_one_number():
    # VersionRange.toString prints "<v>" when min == max.
    c = fmt("kafka-4.2")
    ok(reg_broker(c, 1, ranges={MV: [7, 29], GV: [1, 1], TV: [0, 2], ELR: [0, 1], SHARE: [0, 1],
                                STREAMS: [0, 1], KRAFT: [0, 1]}))
    out = update(c, U(GV, 0, "SAFE_DOWNGRADE"))
    feature_refused("kafka-4.2", out, GV, invalid(0, GV, "Broker 1 only supports versions 1"), "KIP584-UPD-04")


@pytest.mark.rule("KIP584-UPD-04", "fail")
def test_broker_open_ended_range_prints_a_plus():
    # VersionRange.toString prints "<min>+" when max == 32767.
    c = fmt("kafka-4.2")
    ok(reg_broker(c, 1, ranges={MV: [26, 32767], GV: [0, 1], TV: [0, 2], ELR: [0, 1], SHARE: [0, 1],
                                STREAMS: [0, 1], KRAFT: [0, 1]}))
    out = update(c, U(MV, 25, "SAFE_DOWNGRADE"))  # 29 -> 25 crosses no metadata change
    feature_refused("kafka-4.2", out, MV, invalid(25, MV, "Broker 1 only supports versions 26+"), "KIP584-UPD-04")


@pytest.mark.rule("KIP584-UPD-03", "fail")
def test_local_range_is_checked_before_brokers():
    c = fmt("kafka-4.2", release_version="4.2-IV0")
    ok(reg_broker(c, 1, ranges={MV: [7, 28], GV: [0, 1], TV: [0, 2], ELR: [0, 1], SHARE: [0, 1],
                                STREAMS: [0, 1], KRAFT: [0, 1]}))
    out = update(c, U(MV, 30))
    feature_refused("kafka-4.2", out, MV, invalid(30, MV, f"Local controller {CID} only supports versions 7-29"),
                    "KIP584-UPD-03")


# -- controllers (KIP-919) ----------------------------------------------------------------------

TWO_CONTROLLERS = [{"id": 3000}, {"id": 3001}]


@pytest.mark.rule("KIP919-UPD-02", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_unregistered_static_voter_blocks_updates_from_3_7_iv0(profile):
    c = fmt(profile, release_version="3.7-IV4", controllers=TWO_CONTROLLERS)
    out = update(c, U(MV, 19))
    feature_refused(profile, out, MV,
                    invalid(19, MV, "controller 3001 has not registered, and may not support this feature"),
                    "KIP919-UPD-02")


@pytest.mark.rule("KIP919-UPD-02", "pass")
@pytest.mark.rule("KIP919-CREG-01", "pass")
@pytest.mark.parametrize("profile", RELEASES)
def test_registered_voter_lets_updates_through(profile):
    c = fmt(profile, release_version="3.7-IV4", controllers=TWO_CONTROLLERS)
    out = ok(reg_controller(c, 3001))
    assert [r["type"] for r in out["records"]] == ["RegisterControllerRecord"]
    feature_ok(profile, update(c, U(MV, 19)))


@pytest.mark.rule("KIP919-UPD-02", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-4.0", "kafka-4.2"])
def test_controllers_are_not_checked_below_3_7_iv0(profile):
    c = fmt(profile, release_version="3.6-IV2", controllers=TWO_CONTROLLERS)
    # MV 14: other controllers are skipped entirely (only a log note).
    out = update(c, U(MV, 15))
    feature_ok(profile, out)
    # Now MV is 3.7-IV0, so the next update does check the static voters.
    out = update(c, U(MV, 15))
    feature_refused(profile, out, MV,
                    invalid(15, MV, "controller 3001 has not registered, and may not support this feature"),
                    "KIP919-UPD-02")


@pytest.mark.rule("KIP919-UPD-02", "pass")
@pytest.mark.parametrize("profile", ["kafka-4.1", "kafka-4.2"])
def test_dynamic_quorum_has_no_static_voter_check(profile):
    c = fmt(profile, standalone=True, controllers=TWO_CONTROLLERS)
    feature_ok(profile, update(c, U(GV, 1)))


@pytest.mark.rule("KIP919-UPD-01", "fail")
def test_registered_controller_range_is_checked():
    c = fmt("kafka-4.2", release_version="4.1-IV1",
            controllers=[{"id": 3000}, {"id": 3001, "software": "kafka-4.1"}])
    ok(reg_controller(c, 3001))
    out = update(c, U(MV, 29))
    feature_refused("kafka-4.2", out, MV, invalid(29, MV, "Controller 3001 only supports versions 7-27"),
                    "KIP919-UPD-01")
    out = update(c, U(STREAMS, 1))  # a 4.1 controller (production) has no streams.version
    feature_refused("kafka-4.2", out, STREAMS, invalid(1, STREAMS, "Controller 3001 does not support this feature."),
                    "KIP919-UPD-01")


@pytest.mark.rule("KIP919-UPD-01", "pass")
def test_registered_controller_supporting_the_level_passes():
    c = fmt("kafka-4.2", release_version="4.1-IV1", controllers=[{"id": 3000}, {"id": 3001}])
    ok(reg_controller(c, 3001))
    feature_ok("kafka-4.2", update(c, U(MV, 29)))


@pytest.mark.rule("KIP919-CREG-01", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_controller_registration_needs_3_7_iv0(profile):
    c = fmt(profile, release_version="3.6-IV2", controllers=TWO_CONTROLLERS)
    out = reg_controller(c, 3001)
    assert out["error"] == "UNSUPPORTED_VERSION" and out["error_code"] == 35, out
    assert out["rule"] == "KIP919-CREG-01", out
    # The exception text, or the wire text of ControllerRegistrationRequest.getErrorResponse.
    assert out["message"] in ("The current MetadataVersion is too old to support controller registrations.",
                              "The version of API is not supported."), out
    assert "3001" not in ok(c.apply({"op": "state"}))["controllers"]


# =============================================================================================
# 2. Whole-request semantics (controller-notes §1.4)
# =============================================================================================

@pytest.mark.rule("KIP584-UPD-10", "pass")
@pytest.mark.rule("KIP584-UPD-13", "fail")
@pytest.mark.parametrize("profile", THREE_X)
def test_3x_results_per_feature_sorted_and_partial_apply(profile):
    c = fmt(profile, release_version="3.7-IV4")
    before = c.apply({"op": "state"})["epoch"]
    out = update(c, U("zeta.feature", 0, "SAFE_DOWNGRADE"), U("alpha.feature", 1), U(MV, 18, "SAFE_DOWNGRADE"),
                 version=1)
    # Top level never carries an error in 3.x.
    assert out["error"] == "NONE" and out["error_code"] == 0 and out["message"] is None, out
    assert list(out["results"]) == ["alpha.feature", MV, "zeta.feature"]
    assert out["results"]["alpha.feature"]["error"] == IUV
    assert out["results"]["alpha.feature"]["message"] == invalid(
        1, "alpha.feature", f"Local controller {CID} does not support this feature.")
    assert out["results"]["alpha.feature"]["rule"] == "KIP584-UPD-13"
    for name in (MV, "zeta.feature"):
        assert out["results"][name]["error"] == "NONE"
        assert out["results"][name]["message"] is None  # ApiError.NONE.message()
    # The passing features were written.
    written = sorted((r["name"], r["level"]) for r in out["records"])
    assert written == [(MV, 18), ("zeta.feature", 0)]
    assert fin(c)[MV] == 18
    assert out["epoch"] == before + 2


@pytest.mark.rule("KIP584-UPD-03", "fail")
@pytest.mark.parametrize("profile", THREE_X)
def test_3x_every_failing_feature_gets_its_own_result(profile):
    lo, hi = LOCAL_MV[profile]
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 99), U("b.feature", -1), U("a.feature", 3, 7))
    assert out["error"] == "NONE", out
    assert out["records"] == []
    assert out["results"] == {
        "a.feature": {"error": IUV, "message": invalid(3, "a.feature", "The controller does not support the given "
                                                                       "upgrade type."), "rule": "KIP584-UPD-01"},
        "b.feature": {"error": IUV, "message": invalid(-1, "b.feature", "A feature version cannot be less than 0."),
                      "rule": "KIP584-UPD-02"},
        MV: {"error": IUV, "message": invalid(99, MV, f"Local controller {CID} only supports versions {lo}-{hi}"),
             "rule": "KIP584-UPD-03"},
    }


@pytest.mark.rule("KIP1022-UPD-02", "pass")
@pytest.mark.rule("KIP584-UPD-10", "pass")
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_success_results_in_request_order_with_message_NONE(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(TV, 2), U(MV, 20), U(GV, 1), version=1)
    ok(out)
    assert list(out["results"]) == [TV, MV, GV]
    assert all(r == {"error": "NONE", "message": "NONE"} for r in out["results"].values()), out
    assert fin(c)[TV] == 2 and fin(c)[GV] == 1 and fin(c)[MV] == 20


@pytest.mark.rule("KIP1022-UPD-02", "pass")
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_v2_success_has_no_results(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = ok(update(c, U(GV, 1), version=2))
    assert not out.get("results")


@pytest.mark.rule("KIP584-UPD-03", "fail")
@pytest.mark.parametrize("version", [0, 1, 2])
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_fail_fast_is_atomic(profile, version):
    c = fmt(profile, release_version="3.7-IV4")
    before = fin(c)
    out = update(c, U(GV, 1), U(TV, 3), version=version)
    feature_refused(profile, out, TV, invalid(3, TV, f"Local controller {CID} only supports versions 0-2"),
                    "KIP584-UPD-03")
    assert fin(c) == before  # group.version=1 passed but was not written
    assert out["epoch"] == out["epoch_before"]


@pytest.mark.parametrize("order", [(TV, GV), (GV, TV)])
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_first_error_in_hashmap_order(profile, order):
    # group.version (bucket 0) is visited before transaction.version (bucket 10), whatever the request order.
    c = fmt(profile)
    levels = {GV: 5, TV: 5}
    out = update(c, *(U(f, levels[f]) for f in order))
    assert out["message"] == FAIL_ALL + invalid(5, GV, f"Local controller {CID} only supports versions 0-1"), out


@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_kraft_version_bucket_comes_before_metadata_version(profile):
    c = fmt(profile)
    out = update(c, U(MV, 99), U(KRAFT, 5))
    assert out["message"] == FAIL_ALL + invalid(5, KRAFT, f"Local controller {CID} only supports versions 0-1"), out


@pytest.mark.parametrize("first", [MV, SHARE])
@pytest.mark.parametrize("profile", ["kafka-4.1", "kafka-4.2", "kafka-4.3"])
def test_4x_metadata_version_and_share_version_share_a_bucket(profile, first):
    lo, hi = LOCAL_MV[profile]
    c = fmt(profile)
    reqs = {MV: U(MV, 99), SHARE: U(SHARE, 5)}
    second = SHARE if first == MV else MV
    out = update(c, reqs[first], reqs[second])
    expected = (invalid(99, MV, f"Local controller {CID} only supports versions {lo}-{hi}") if first == MV
                else invalid(5, SHARE, f"Local controller {CID} only supports versions 0-1"))
    assert out["message"] == FAIL_ALL + expected, out


@pytest.mark.parametrize("profile", ["kafka-4.2", "kafka-4.3"])
def test_4x_streams_before_transaction_before_elr(profile):
    c = fmt(profile)
    out = update(c, U(ELR, 5), U(TV, 5), U(STREAMS, 5))
    assert out["message"] == FAIL_ALL + invalid(5, STREAMS, f"Local controller {CID} only supports versions 0-1")
    out = update(c, U(ELR, 5), U(TV, 5))
    assert out["message"] == FAIL_ALL + invalid(5, TV, f"Local controller {CID} only supports versions 0-2")


@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.2"])
def test_duplicate_feature_names_last_entry_wins(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 99), U(MV, 20))
    feature_ok(profile, out)
    assert fin(c)[MV] == 20


@pytest.mark.rule("KIP584-UPD-11", "fail")
@pytest.mark.parametrize("profile,version", [("kafka-3.7", 2), ("kafka-3.9", 2), ("kafka-4.0", 3), ("kafka-4.2", 3)])
def test_unsupported_request_version(profile, version):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 19), version=version)
    refused(out, "UNSUPPORTED_VERSION", "KIP584-UPD-11")
    assert out["epoch"] == out["epoch_before"]


@pytest.mark.rule("KIP584-UPD-11", "pass")
@pytest.mark.parametrize("profile,version", [("kafka-3.7", 0), ("kafka-3.9", 1), ("kafka-4.0", 2), ("kafka-4.2", 2)])
def test_supported_request_version(profile, version):
    c = fmt(profile, release_version="3.7-IV4")
    ok(update(c, U(MV, 19), version=version))


@pytest.mark.rule("KIP584-UPD-12", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.2"])
def test_update_sent_to_an_inactive_controller(profile):
    c = fmt(profile, release_version="3.7-IV4", controllers=TWO_CONTROLLERS)
    out = update(c, U(MV, 19), node=3001)
    refused(out, "NOT_CONTROLLER", "KIP584-UPD-12")
    assert out["error_code"] == 41


@pytest.mark.rule("KIP584-UPD-11", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.4"])
def test_a_standby_controller_refuses_an_unsupported_version_first(profile):
    # The network layer refuses a version the node does not support before ControllerApis sees the
    # request (a live kafka:// run with two controllers: UNSUPPORTED_VERSION on the wire).
    c = fmt(profile, release_version="3.7-IV4", controllers=TWO_CONTROLLERS)
    refused(update(c, U(MV, 19), node=3001, version=3), "UNSUPPORTED_VERSION", "KIP584-UPD-11")


@pytest.mark.rule("KIP584-UPD-12", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.2"])
def test_update_sent_to_the_active_controller(profile):
    c = fmt(profile, release_version="3.7-IV4", controllers=TWO_CONTROLLERS)
    ok(reg_controller(c, 3001))
    feature_ok(profile, update(c, U(MV, 19), node=3000))


# -- v0 AllowDowngrade -------------------------------------------------------------------------

@pytest.mark.rule("KIP584-UPD-05", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_v0_allow_downgrade_is_ignored(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, {"feature": MV, "level": 18, "allow_downgrade": True, "upgrade_type": "SAFE_DOWNGRADE"},
                 version=0)
    feature_refused(profile, out, MV, invalid(18, MV, "Can't downgrade the version of this feature without setting "
                                                       "the upgrade type to either safe or unsafe downgrade."),
                    "KIP584-UPD-05")


@pytest.mark.rule("KIP584-UPD-05", "fail")
@pytest.mark.parametrize("profile", FOUR_X)
def test_v0_disable_fails(profile):
    c = fmt(profile)
    out = update(c, {"feature": GV, "level": 0, "allow_downgrade": True, "upgrade_type": "UNSAFE_DOWNGRADE"},
                 version=0)
    feature_refused(profile, out, GV, invalid(0, GV, "Can't downgrade the version of this feature without setting "
                                                      "the upgrade type to either safe or unsafe downgrade."),
                    "KIP584-UPD-05")


@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-4.2"])
def test_v0_has_no_validate_only(profile):
    # ValidateOnly exists from v1 on: a v0 request is always applied.
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 19), version=0, validate_only=True)
    feature_ok(profile, out)
    assert len(out["records"]) == 1


# -- no-op and validate_only -------------------------------------------------------------------

@pytest.mark.rule("KIP584-UPD-08", "pass")
@pytest.mark.rule("KIP584-EPOCH-01", "pass")
@pytest.mark.parametrize("profile", RELEASES)
def test_no_op_update_writes_a_record(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 19))
    feature_ok(profile, out)
    assert [(r["type"], r["name"], r["level"]) for r in out["records"]] == [("FeatureLevelRecord", MV, 19)]
    assert out["epoch"] == out["epoch_before"] + 1 == out["records"][-1]["offset"]


@pytest.mark.rule("KIP584-UPD-08", "pass")
@pytest.mark.parametrize("utype", ["UPGRADE", "SAFE_DOWNGRADE"])
@pytest.mark.parametrize("profile", FOUR_X)
def test_no_op_of_a_non_mv_feature_writes_a_record(profile, utype):
    c = fmt(profile)
    out = update(c, U(GV, 1, utype))
    feature_ok(profile, out)
    assert [(r["type"], r["name"], r["level"]) for r in out["records"]] == [("FeatureLevelRecord", GV, 1)]


@pytest.mark.rule("KIP584-UPD-09", "pass")
@pytest.mark.parametrize("profile", RELEASES)
def test_validate_only_writes_nothing(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 18, "SAFE_DOWNGRADE"), version=1, validate_only=True)
    feature_ok(profile, out)
    assert out["records"] == []
    assert out["epoch"] == out["epoch_before"]
    assert fin(c)[MV] == 19


@pytest.mark.rule("KIP584-UPD-09", "pass")
@pytest.mark.rule("KIP584-UPD-05", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_validate_only_still_runs_every_check(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 18), version=1, validate_only=True)
    feature_refused(profile, out, MV, invalid(18, MV, "Can't downgrade the version of this feature without setting "
                                                       "the upgrade type to either safe or unsafe downgrade."),
                    "KIP584-UPD-05")
    assert out["records"] == []


@pytest.mark.parametrize("profile", THREE_X)
def test_3x_validate_only_keeps_real_results(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 18, "SAFE_DOWNGRADE"), U("x.feature", 1), version=1, validate_only=True)
    assert out["error"] == "NONE"
    assert out["results"][MV] == {"error": "NONE", "message": None}
    assert out["results"]["x.feature"]["error"] == IUV
    assert out["records"] == []


# =============================================================================================
# 3. Dependencies (controller-notes §7)
# =============================================================================================

@pytest.mark.rule("KIP1022-UPD-01", "pass")
def test_3_9_does_not_check_kraft_version_dependency():
    c = fmt("kafka-3.9", release_version="3.7-IV4")
    out = update(c, U(KRAFT, 1))
    feature_ok("kafka-3.9", out)
    assert [(r["type"], r["name"], r["level"]) for r in out["records"]] == [("FeatureLevelRecord", KRAFT, 1)]


@pytest.mark.rule("KIP1022-UPD-01", "fail")
def test_4_0_checks_kraft_version_dependency():
    c = fmt("kafka-4.0", release_version="3.7-IV4")
    out = update(c, U(KRAFT, 1))
    assert out["error"] == IUV, out
    assert out["message"] == ("The update failed for all features since the following feature had an error: "
                              "Invalid update version 1 for feature kraft.version. kraft.version could not be set "
                              "to 1 because it depends on metadata.version level 21"), out
    assert out["rule"] == "KIP1022-UPD-01"
    assert out["records"] == []


@pytest.mark.rule("KIP1022-UPD-01", "pass")
def test_4_0_kraft_version_dependency_sees_the_whole_batch():
    c = fmt("kafka-4.0", release_version="3.7-IV4")
    ok(update(c, U(KRAFT, 1), U(MV, 21)))
    assert fin(c)[MV] == 21


@pytest.mark.rule("KIP1022-UPD-01", "pass")
@pytest.mark.parametrize("profile", RAFT_KRAFT)
def test_4_1_plus_kraft_version_has_no_dependency_check(profile):
    c = fmt(profile, release_version="3.7-IV4")
    out = ok(update(c, U(KRAFT, 1)))
    assert [r["type"] for r in out["records"]] == ["NoOpRecord"]


@pytest.mark.rule("KIP1022-UPD-01", "fail")
@pytest.mark.parametrize("profile", FOUR_X)
def test_elr_needs_metadata_version_23(profile):
    c = fmt(profile, release_version="4.0-IV0")
    out = update(c, U(ELR, 1))
    assert out["error"] == IUV, out
    assert out["message"] == FAIL_ALL + invalid(1, ELR, f"{ELR} could not be set to 1 because it depends on "
                                                         "metadata.version level 23"), out
    assert out["rule"] == "KIP1022-UPD-01"


@pytest.mark.rule("KIP1022-UPD-01", "pass")
@pytest.mark.parametrize("profile", FOUR_X)
def test_elr_with_metadata_version_23_in_the_same_request(profile):
    c = fmt(profile, release_version="4.0-IV0")
    out = ok(update(c, U(ELR, 1), U(MV, 23)))
    # 4.x prepends the ELR safety ConfigRecords to the batch.
    assert out["records"][0]["type"] == "ConfigRecord", out
    flr = [(r["name"], r["level"]) for r in out["records"] if r["type"] == "FeatureLevelRecord"]
    assert sorted(flr) == [(ELR, 1), (MV, 23)]
    assert fin(c)[ELR] == 1


@pytest.mark.rule("KIP1022-UPD-01", "fail")
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_minimum_metadata_version_dependency_in_the_same_request(profile):
    # group.version (bucket 0) is checked before metadata.version (bucket 7), against the proposed MV 6.
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, 6, "SAFE_DOWNGRADE"), U(GV, 1))
    assert out["message"] == FAIL_ALL + invalid(1, GV, "group.version could not be set to 1 because it depends on "
                                                       "metadata.version=7 (3.3-IV3)"), out
    assert out["rule"] == "KIP1022-UPD-01"


def test_3_9_controller_uses_raft_kraft_version_for_registration():
    # The FeatureLevelRecord says kraft.version=1, but the 3.9 controller puts raft's kraft.version (0) in the
    # finalized map it checks registrations against, so a broker that does not mention kraft.version registers.
    c = fmt("kafka-3.9")
    ok(update(c, U(KRAFT, 1)))
    ok(reg_broker(c, 1, ranges={MV: [1, 21]}))


@pytest.mark.rule("KIP1022-UPD-01", "pass")
def test_3_9_has_no_dependency_checks_for_other_features():
    # 3.9 with an unstable controller: transaction.version has no dependencies anyway; kraft.version shown above.
    c = fmt("kafka-3.9", release_version="3.7-IV4", controllers=[{"id": 3000, "unstable": True}])
    feature_ok("kafka-3.9", update(c, U(TV, 2)))


# =============================================================================================
# 4. metadata.version changes (controller-notes §3)
# =============================================================================================

# (profile, release string to format at, current level, lossless target, lossy target)
MV_DOWNGRADES = [
    ("kafka-3.7", "3.7-IV4", 19, 17, 16),
    ("kafka-3.8", "3.8-IV0", 20, 17, 16),
    ("kafka-3.9", "3.9-IV0", 21, 17, 16),
    ("kafka-4.0", "4.0-IV3", 25, 23, 22),
    ("kafka-4.1", "4.1-IV1", 27, 23, 22),
    ("kafka-4.2", "4.2-IV1", 29, 23, 22),
    ("kafka-4.3", "4.2-IV1", 29, 23, 22),
]


def lossy_message(profile: str, cur: int, n: int, unsafe: bool) -> str:
    text = ("Unsafe metadata downgrade is not supported in this version." if unsafe else
            "Refusing to perform the requested downgrade because it might delete metadata information.")
    if profile in ("kafka-4.2", "kafka-4.3"):
        return f"Unsupported metadata.version downgrade from {cur} to {n}. {text}"
    return f"Invalid metadata.version {n}. {text}"


@pytest.mark.rule("KIP778-MV-03", "pass")
@pytest.mark.parametrize("utype", ["SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"])
@pytest.mark.parametrize("profile,rv,cur,lossless,lossy", MV_DOWNGRADES)
def test_lossless_metadata_version_downgrade_is_allowed(profile, rv, cur, lossless, lossy, utype):
    c = fmt(profile, release_version=rv)
    out = update(c, U(MV, lossless, utype))
    feature_ok(profile, out)
    assert [(r["name"], r["level"]) for r in out["records"]] == [(MV, lossless)]
    assert fin(c)[MV] == lossless


@pytest.mark.rule("KIP778-MV-04", "fail")
@pytest.mark.parametrize("profile,rv,cur,lossless,lossy", MV_DOWNGRADES)
def test_lossy_safe_downgrade_is_refused(profile, rv, cur, lossless, lossy):
    c = fmt(profile, release_version=rv)
    out = update(c, U(MV, lossy, "SAFE_DOWNGRADE"))
    feature_refused(profile, out, MV, lossy_message(profile, cur, lossy, False), "KIP778-MV-04")
    assert fin(c)[MV] == cur


@pytest.mark.rule("KIP778-MV-05", "fail")
@pytest.mark.parametrize("profile,rv,cur,lossless,lossy", MV_DOWNGRADES)
def test_lossy_unsafe_downgrade_is_refused(profile, rv, cur, lossless, lossy):
    c = fmt(profile, release_version=rv)
    out = update(c, U(MV, lossy, "UNSAFE_DOWNGRADE"))
    feature_refused(profile, out, MV, lossy_message(profile, cur, lossy, True), "KIP778-MV-05")
    assert fin(c)[MV] == cur


def test_4_2_lossy_downgrade_message_uses_levels():
    c = fmt("kafka-4.2")
    out = update(c, U(MV, 22, "SAFE_DOWNGRADE"))
    assert out["message"] == ("The update failed for all features since the following feature had an error: "
                              "Unsupported metadata.version downgrade from 29 to 22. Refusing to perform the "
                              "requested downgrade because it might delete metadata information."), out


@pytest.mark.rule("KIP778-MV-04", "pass")
@pytest.mark.rule("KIP778-MV-05", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-4.0", "kafka-4.2"])
def test_downgrade_whose_low_end_changed_metadata_is_lossless(profile):
    # checkIfMetadataChanged ignores the flag of the low end: 3.7-IV2 (17) changed metadata, 18 and 19 did not.
    for utype in ("SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"):
        c = fmt(profile, release_version="3.7-IV4")
        feature_ok(profile, update(c, U(MV, 17, utype)))


@pytest.mark.rule("KIP778-MV-02", "fail")
@pytest.mark.parametrize("utype", ["SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"])
@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("profile", THREE_X)
def test_3x_metadata_version_below_3_3_iv0(profile, level, utype):
    c = fmt(profile, release_version="3.7-IV4")
    out = update(c, U(MV, level, utype))
    # No final period; no "Invalid update version" prefix.
    feature_refused(profile, out, MV, f"Invalid metadata.version {level}. Unable to set a metadata.version less "
                                      "than 3.3-IV0", "KIP778-MV-02")


@pytest.mark.rule("KIP778-MV-02", "pass")
@pytest.mark.parametrize("profile", THREE_X)
def test_3x_metadata_version_at_3_3_iv0(profile):
    c = fmt(profile, release_version="3.3-IV0")
    feature_ok(profile, update(c, U(MV, 4, "SAFE_DOWNGRADE")))
    feature_ok(profile, update(c, U(MV, 5)))


@pytest.mark.rule("KIP584-UPD-03", "fail")
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_metadata_version_below_3_3_iv3_fails_the_local_range(profile):
    hi = LOCAL_MV[profile][1]
    c = fmt(profile, release_version="3.3-IV3")
    out = update(c, U(MV, 6, "SAFE_DOWNGRADE"))
    feature_refused(profile, out, MV, invalid(6, MV, f"Local controller {CID} only supports versions 7-{hi}"),
                    "KIP584-UPD-03")


@pytest.mark.rule("KIP778-MV-01", "fail")
@pytest.mark.parametrize("profile,text", [
    ("kafka-3.9", "Invalid metadata.version 40. Unknown metadata.version."),
    ("kafka-4.0", "Invalid metadata.version 40. Valid versions are from 7 to 26."),
    ("kafka-4.2", "Invalid metadata.version 40. Valid versions are from 7 to 30."),
])
def test_unknown_metadata_version_level(profile, text):
    # Only reachable when the local range goes beyond the enum (a test-only controller).
    lo = LOCAL_MV[profile][0]
    c = fmt(profile, release_version="3.7-IV4", controllers=[{"id": 3000, "ranges": {MV: [lo, 50], KRAFT: [0, 1]}}])
    out = update(c, U(MV, 40))
    feature_refused(profile, out, MV, text, "KIP778-MV-01")


@pytest.mark.rule("KIP778-MV-01", "pass")
@pytest.mark.parametrize("profile", RELEASES[1:])
def test_known_metadata_version_level(profile):
    c = fmt(profile, release_version="3.7-IV4")
    feature_ok(profile, update(c, U(MV, 20)))


# =============================================================================================
# 5. kraft.version (controller-notes §2)
# =============================================================================================

@pytest.mark.rule("KIP584-UPD-13", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8"])
def test_3_7_3_8_kraft_version_is_unknown(profile):
    c = fmt(profile)
    out = update(c, U(KRAFT, 1))
    feature_refused(profile, out, KRAFT, invalid(1, KRAFT, f"Local controller {CID} does not support this feature."),
                    "KIP584-UPD-13")


@pytest.mark.rule("KIP584-UPD-13", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8"])
def test_3_7_3_8_kraft_version_0_writes_a_record(profile):
    c = fmt(profile)
    out = update(c, U(KRAFT, 0))
    feature_ok(profile, out)
    assert [(r["type"], r["name"], r["level"]) for r in out["records"]] == [("FeatureLevelRecord", KRAFT, 0)]


def test_3_9_kraft_version_is_an_ordinary_feature():
    c = fmt("kafka-3.9")
    out = update(c, U(KRAFT, 1))
    feature_ok("kafka-3.9", out)
    assert [(r["type"], r["name"], r["level"]) for r in out["records"]] == [("FeatureLevelRecord", KRAFT, 1)]
    # A no-op at the stored level writes the record again.
    out = update(c, U(KRAFT, 1))
    feature_ok("kafka-3.9", out)
    assert [(r["name"], r["level"]) for r in out["records"]] == [(KRAFT, 1)]
    # Downgrade 1 -> 0 with a downgrade type is allowed and writes level 0.
    out = update(c, U(KRAFT, 0, "SAFE_DOWNGRADE"))
    feature_ok("kafka-3.9", out)
    assert [(r["name"], r["level"]) for r in out["records"]] == [(KRAFT, 0)]


@pytest.mark.rule("KIP584-UPD-05", "fail")
def test_3_9_kraft_version_downgrade_needs_a_type():
    c = fmt("kafka-3.9")
    ok(update(c, U(KRAFT, 1)))
    out = update(c, U(KRAFT, 0))
    feature_refused("kafka-3.9", out, KRAFT, invalid(0, KRAFT, "Can't downgrade the version of this feature without "
                                                               "setting the upgrade type to either safe or unsafe "
                                                               "downgrade."), "KIP584-UPD-05")


@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-3.9.1"])
def test_3_9_brokers_report_kraft_version_from_raft(profile):
    # KRaftMetadataCache.features() overwrites the FeatureLevelRecord's value with raft's kraftVersion() (0 here),
    # and level 0 is never listed; so does a 3.9.1 controller (KAFKA-18920).
    c = fmt(profile)
    ok(reg_broker(c, 1))
    ok(update(c, U(KRAFT, 1)))
    assert KRAFT not in ok(c.apply({"op": "api_versions", "node": 1, "version": 4}))["finalized"]
    controller = ok(c.apply({"op": "api_versions", "version": 4}))["finalized"]
    # A 3.9.0 controller reports its image's features as they are: FeaturesDelta.replay keeps the
    # kraft.version FeatureLevelRecord (FeaturesDelta.java:67-76@3.9.0-rc3) and ControllerServer hands
    # featuresPublisher.features() to its ApiVersionManager without the raft's kraftVersion (added in
    # 3.9.1: ControllerServer.startup's provider calls KafkaRaftClient.kraftVersion in the 3.9.1 jar only);
    # kafka-jvm:3.9.0 answers so.
    assert controller.get(KRAFT) == (1 if profile == "kafka-3.9" else None), controller


def test_4_0_kraft_version_update_is_a_silent_no_op():
    c = fmt("kafka-4.0")
    out = ok(update(c, U(KRAFT, 1)))
    assert [(r["type"], r["name"], r["level"]) for r in out["records"]] == [("FeatureLevelRecord", KRAFT, 1)]
    # Replay ignores it: nothing reports kraft.version, and the current level still reads 0.
    assert KRAFT not in fin(c)
    assert KRAFT not in ok(c.apply({"op": "api_versions", "version": 4}))["finalized"]
    assert ok(c.apply({"op": "state"}))["kraft_version"] == 0
    out = ok(update(c, U(KRAFT, 1)))
    assert len(out["records"]) == 1
    # A downgrade type at 0 equals the "current" 0: NONE and a record.
    out = ok(update(c, U(KRAFT, 0, "SAFE_DOWNGRADE")))
    assert [(r["type"], r["name"], r["level"]) for r in out["records"]] == [("FeatureLevelRecord", KRAFT, 0)]


@pytest.mark.rule("KIP1022-UPD-03", "pass")
@pytest.mark.parametrize("profile", RAFT_KRAFT)
def test_4_1_plus_kraft_version_upgrade_writes_a_noop_record(profile):
    c = fmt(profile)
    out = ok(update(c, U(KRAFT, 1)))
    assert [r["type"] for r in out["records"]] == ["NoOpRecord"]
    # No features delta: the controller's FinalizedFeaturesEpoch stays (FeaturesPublisher), the log moves.
    assert out["epoch"] == out["epoch_before"] == out["records"][0]["offset"] - 1
    assert ok(c.apply({"op": "api_versions", "version": 4}))["finalized"][KRAFT] == 1
    # The same level with UPGRADE: raft does nothing, still a NoOpRecord.
    out = ok(update(c, U(KRAFT, 1)))
    assert [r["type"] for r in out["records"]] == ["NoOpRecord"]


@pytest.mark.rule("KIP1022-UPD-03", "fail")
@pytest.mark.parametrize("utype", ["SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"])
@pytest.mark.parametrize("profile", RAFT_KRAFT)
def test_4_1_plus_kraft_version_cannot_be_downgraded(profile, utype):
    c = fmt(profile, standalone=True)  # kraft.version=1
    out = update(c, U(KRAFT, 0, utype))
    assert out["error"] == IUV, out
    assert out["message"] == FAIL_ALL + invalid(0, KRAFT, "Can't downgrade the version of this feature."), out
    assert out["rule"] == "KIP1022-UPD-03"
    assert out["epoch"] == out["epoch_before"]


@pytest.mark.rule("KIP1022-UPD-03", "pass")
@pytest.mark.parametrize("level", [0, 1])
@pytest.mark.parametrize("profile", RAFT_KRAFT)
def test_4_1_plus_kraft_version_downgrade_type_at_same_level_writes_nothing(profile, level):
    c = fmt(profile, standalone=bool(level))
    out = ok(update(c, U(KRAFT, level, "SAFE_DOWNGRADE")))
    assert out["records"] == []
    assert out["epoch"] == out["epoch_before"]


@pytest.mark.parametrize("profile", RAFT_KRAFT)
def test_4_1_plus_kraft_version_downgrade_without_type(profile):
    c = fmt(profile, standalone=True)
    out = update(c, U(KRAFT, 0))
    assert out["message"] == FAIL_ALL + invalid(0, KRAFT, "Can't downgrade the version of this feature without "
                                                          "setting the upgrade type to either safe or unsafe "
                                                          "downgrade."), out


# =============================================================================================
# 6. Epoch, level 0, ApiVersions and describe (controller-notes §6; facts §3.4, §6)
# =============================================================================================

@pytest.mark.rule("KIP584-EPOCH-01", "pass")
@pytest.mark.parametrize("profile", RELEASES)
def test_epoch_is_the_offset_of_the_last_applied_record(profile):
    c = Cluster(profile)
    f = ok(c.apply({"op": "format", "release_version": "3.7-IV4"}))
    e0 = len(f["records"]) - 1
    assert ok(c.apply({"op": "describe"}))["epoch"] == e0
    r = ok(reg_broker(c, 1))
    assert r["records"][-1]["offset"] == e0 + 1
    # A broker's epoch is its image's highest offset: any metadata record moves it (KRaftMetadataCache);
    # a controller's moves only with a batch that changes the finalized features (FeaturesPublisher).
    assert ok(c.apply({"op": "describe", "node": 1}))["epoch"] == e0 + 1
    assert ok(c.apply({"op": "describe"}))["epoch"] == e0
    out = update(c, U(MV, 18))  # refused: no record, no epoch change
    assert out["epoch"] == out["epoch_before"] == e0
    out = update(c, U(MV, 18, "SAFE_DOWNGRADE"))
    feature_ok(profile, out)
    assert out["epoch"] == e0 + 2
    assert ok(c.apply({"op": "describe"}))["epoch"] == ok(c.apply({"op": "describe", "node": 1}))["epoch"] == e0 + 2


@pytest.mark.rule("KIP584-API-02", "pass")
@pytest.mark.rule("KIP584-UPD-07", "pass")
@pytest.mark.parametrize("profile", FOUR_X)
def test_finalized_level_0_is_never_listed(profile):
    c = fmt(profile)
    ok(update(c, U(GV, 0, "SAFE_DOWNGRADE")))
    av = ok(c.apply({"op": "api_versions", "version": 4}))
    assert GV not in av["finalized"]
    assert all(v != 0 for v in av["finalized"].values())
    d = ok(c.apply({"op": "describe", "version": 4}))
    line = [x for x in d["lines"] if x.startswith(f"Feature: {GV}")]
    if profile == "kafka-4.3":  # KAFKA-19941's padded columns (FeatureCommand.java:251@4.3.0)
        assert line == [(f"Feature: {GV}{' ' * (40 - len(GV))}  SupportedMinVersion: 0{' ' * 14}  SupportedMaxVersion: 1"
                         f"{' ' * 14}  FinalizedVersionLevel: 0{' ' * 14}  Epoch: {d['epoch']}")]
    else:
        assert line == [(f"Feature: {GV}\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t"
                        f"Epoch: {d['epoch']}")]


@pytest.mark.rule("KIP584-API-02", "pass")
@pytest.mark.parametrize("profile", ["kafka-4.0", "kafka-4.2"])
def test_features_at_0_after_format_are_absent(profile):
    c = fmt(profile, release_version="3.7-IV4")  # every non-MV default is 0 at 3.7-IV4
    assert fin(c) == {MV: 19}
    assert ok(c.apply({"op": "api_versions", "version": 4}))["finalized"] == {MV: 19}


@pytest.mark.rule("KIP584-API-01", "pass")
@pytest.mark.parametrize("version", [0, 1, 2])
@pytest.mark.parametrize("profile", RELEASES)
def test_api_versions_below_v3_has_no_features(profile, version):
    c = fmt(profile)
    out = ok(c.apply({"op": "api_versions", "version": version}))
    assert out["supported"] is None and out["finalized"] is None


@pytest.mark.rule("KIP584-API-03", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8"])
def test_3_7_3_8_api_versions_max_version_is_3(profile):
    c = fmt(profile)
    refused(c.apply({"op": "api_versions", "version": 4}), "UNSUPPORTED_VERSION", "KIP584-API-03")


@pytest.mark.rule("KIP584-API-03", "pass")
@pytest.mark.parametrize("profile", RELEASES)
def test_api_versions_default_is_the_node_maximum(profile):
    c = fmt(profile)
    out = ok(c.apply({"op": "api_versions"}))
    assert out["version"] == (3 if profile in ("kafka-3.7", "kafka-3.8") else 4)


@pytest.mark.rule("KIP584-API-03", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.2"])
def test_api_versions_above_4_is_unsupported(profile):
    c = fmt(profile)
    refused(c.apply({"op": "api_versions", "version": 5}), "UNSUPPORTED_VERSION", "KIP584-API-03")


@pytest.mark.rule("KIP1022-API-01", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.9", *FOUR_X])
def test_api_versions_v3_omits_min_0_ranges_and_v4_shows_them(profile):
    c = fmt(profile)
    lo, hi = LOCAL_MV[profile]
    v3 = ok(c.apply({"op": "api_versions", "version": 3}))
    assert v3["supported"] == {MV: [lo, hi]}
    v4 = ok(c.apply({"op": "api_versions", "version": 4}))
    assert v4["supported"][MV] == [lo, hi]
    assert v4["supported"][KRAFT] == [0, 1]
    if profile != "kafka-3.9":
        assert v4["supported"][GV] == [0, 1] and v4["supported"][TV] == [0, 2]
    # FinalizedFeatures are not filtered by version.
    assert v3["finalized"] == v4["finalized"]


@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8"])
def test_3_7_3_8_api_versions_v3_lists_metadata_version(profile):
    c = fmt(profile)
    out = ok(c.apply({"op": "api_versions", "version": 3}))
    assert out["supported"] == {MV: list(LOCAL_MV[profile])}
    assert out["finalized"] == {MV: LOCAL_MV[profile][1]}


@pytest.mark.rule("KIP584-API-04", "fail")
def test_api_versions_to_a_node_outside_the_cluster():
    c = fmt("kafka-4.2")
    out = c.apply({"op": "api_versions", "node": 77})
    assert out["error"] != "NONE"
    assert out["rule"] == "KIP584-API-04", out


@pytest.mark.rule("KIP584-API-04", "pass")
def test_api_versions_to_a_registered_broker():
    c = fmt("kafka-4.2", release_version="4.1-IV1")
    ok(reg_broker(c, 1, software="kafka-4.1"))
    out = ok(c.apply({"op": "api_versions", "node": 1, "version": 4}))
    assert out["supported"][MV] == [7, 27]  # the node's own software


# =============================================================================================
# 7. Broker registration (controller-notes §4)
# =============================================================================================

@pytest.mark.rule("KIP584-REG-01", "pass")
@pytest.mark.parametrize("profile", RELEASES)
def test_broker_of_the_same_release_registers(profile):
    c = fmt(profile)
    out = ok(reg_broker(c, 1))
    assert [r["type"] for r in out["records"]] == ["RegisterBrokerRecord"]
    assert "1" in ok(c.apply({"op": "state"}))["brokers"]


@pytest.mark.rule("KIP584-REG-03", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_registration_with_another_cluster_id(profile):
    c = fmt(profile)
    out = reg_broker(c, 1, cluster_id="other-cluster")
    refused(out, "INCONSISTENT_CLUSTER_ID", "KIP584-REG-03")
    assert out["error_code"] == 104
    assert out["message"] == f"Expected cluster ID {c.cluster_id}, but got cluster ID other-cluster"


@pytest.mark.rule("KIP584-REG-03", "pass")
def test_registration_with_the_cluster_id():
    c = fmt("kafka-4.2")
    ok(reg_broker(c, 1, cluster_id=c.cluster_id))


DUP = "Another broker is registered with that broker id."
DUP_HINT = (" If the broker was recently restarted this should self-resolve once the heartbeat manager expires the "
            "broker's session.")


@pytest.mark.rule("KIP584-REG-04", "fail")
@pytest.mark.parametrize("profile", RELEASES)
def test_duplicate_registration_message_per_release(profile):
    # An unfenced broker with a live session (3.x counts only unfenced ones, see below).
    c = Cluster(profile)
    ok(c.apply({"op": "restore_state", "metadata_version": 15,  # 3.7-IV0
                "brokers": [{"id": 1, "fenced": False}]}))
    out = reg_broker(c, 1, incarnation="inc-b", previous_session_alive=True)
    refused(out, "DUPLICATE_BROKER_REGISTRATION", "KIP584-REG-04")
    assert out["error_code"] == 101
    assert out["message"] == DUP + (DUP_HINT if profile in RAFT_KRAFT else "")


@pytest.mark.rule("KIP584-REG-04", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8", "kafka-3.9", "kafka-3.9.2"])
def test_3x_a_fenced_broker_has_no_live_session(profile):
    """3.7.0-3.9.2: BrokerHeartbeatManager.hasValidSession(BrokerHeartbeatState) is false for a fenced broker,
    so ClusterControlManager.registerBroker lets a new incarnation replace a registration that was never
    unfenced (kafka-jvm:3.9.2 answers so); 4.x asks BrokerHeartbeatTracker for a recent contact only."""
    c = fmt(profile)
    first = ok(reg_broker(c, 1, incarnation="inc-a"))
    new = ok(reg_broker(c, 1, incarnation="inc-b", previous_session_alive=True))
    assert new["broker_epoch"] > first["broker_epoch"]
    restored = Cluster(profile)
    ok(restored.apply({"op": "restore_state", "metadata_version": 15,  # 3.7-IV0
                       "brokers": [{"id": 1, "fenced": True}]}))
    ok(reg_broker(restored, 1, incarnation="inc-b", previous_session_alive=True))


@pytest.mark.rule("KIP584-REG-04", "fail")
def test_4x_a_fenced_broker_with_a_recent_contact_is_live():
    c = fmt("kafka-4.0")
    ok(reg_broker(c, 1, incarnation="inc-a"))
    refused(reg_broker(c, 1, incarnation="inc-b", previous_session_alive=True), "DUPLICATE_BROKER_REGISTRATION",
            "KIP584-REG-04")


@pytest.mark.rule("KIP584-REG-04", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-4.2"])
def test_new_incarnation_after_the_session_expired_and_same_incarnation(profile):
    c = fmt(profile)
    first = ok(reg_broker(c, 1, incarnation="inc-a"))
    ok(reg_broker(c, 1, incarnation="inc-a", previous_session_alive=True))  # amend
    new = ok(reg_broker(c, 1, incarnation="inc-b", previous_session_alive=False))
    assert new["broker_epoch"] > first["broker_epoch"]  # a new incarnation gets a new epoch


@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8"])
def test_3_7_3_8_amend_gets_a_new_epoch(profile):
    c = fmt(profile)
    first = ok(reg_broker(c, 1, incarnation="inc-a"))
    again = ok(reg_broker(c, 1, incarnation="inc-a", previous_session_alive=True))
    assert again["broker_epoch"] > first["broker_epoch"]


@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.0", "kafka-4.2"])
def test_3_9_plus_amend_keeps_the_broker_epoch(profile):
    c = fmt(profile)
    first = ok(reg_broker(c, 1, incarnation="inc-a"))
    again = ok(reg_broker(c, 1, incarnation="inc-a", previous_session_alive=True))
    assert again["broker_epoch"] == first["broker_epoch"]


@pytest.mark.rule("KIP584-REG-05", "fail")
@pytest.mark.rule("KIP584-REG-05", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-4.2"])
def test_unregister(profile):
    c = fmt(profile)
    out = c.apply({"op": "unregister", "node": 7})
    refused(out, "BROKER_ID_NOT_REGISTERED", "KIP584-REG-05")
    assert out["error_code"] == 102
    ok(reg_broker(c, 7))
    out = ok(c.apply({"op": "unregister", "node": 7}))
    assert [r["type"] for r in out["records"]] == ["UnregisterBrokerRecord"]
    assert "7" not in ok(c.apply({"op": "state"}))["brokers"]


@pytest.mark.rule("KIP584-REG-05", "fail")
@pytest.mark.parametrize(("profile", "message"), [
    # ControllerApis.handleUnregisterBroker sets the error code only (3.7.2-4.0.2 jars) ...
    ("kafka-3.7", None), ("kafka-3.9", None), ("kafka-4.0", None),
    # ... from 4.1 UnregisterBrokerRequest.getErrorResponse also sets the exception's message.
    ("kafka-4.1.0", "Broker ID 7 is not currently registered"), ("kafka-4.2", "Broker ID 7 is not currently registered"),
])
def test_unregister_message_is_on_the_wire_from_41(profile, message):
    out = fmt(profile).apply({"op": "unregister", "node": 7})
    refused(out, "BROKER_ID_NOT_REGISTERED", "KIP584-REG-05")
    assert out["message"] == message


@pytest.mark.rule("KIP584-REG-06", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8"])
def test_broker_registration_v4_is_unknown_to_3_7_3_8(profile):
    c = fmt(profile)
    refused(reg_broker(c, 1, version=4), "UNSUPPORTED_VERSION", "KIP584-REG-06")


@pytest.mark.rule("KIP584-REG-06", "pass")
@pytest.mark.parametrize("profile,version", [("kafka-3.7", 3), ("kafka-3.9", 4), ("kafka-4.2", 4)])
def test_broker_registration_at_the_controller_maximum(profile, version):
    c = fmt(profile)
    ok(reg_broker(c, 1, version=version))


@pytest.mark.rule("KIP584-REG-01", "fail")
@pytest.mark.parametrize("profile,text", [
    ("kafka-3.7", ("Unable to register because the broker does not support version 19 of metadata.version. "
                  "It wants a version between 1 and 18, inclusive.")),
    ("kafka-3.8", ("Unable to register because the broker does not support version 19 of metadata.version. "
                  "It wants a version between 1 and 18, inclusive.")),
    ("kafka-3.9", ("Unable to register because the broker does not support finalized version 19 of metadata.version. "
                  "The broker wants a version between 1 and 18, inclusive.")),
    ("kafka-4.0", ("Unable to register because the broker does not support finalized version 19 of metadata.version. "
                  "The broker wants a version between 7 and 18, inclusive.")),
    ("kafka-4.2", ("Unable to register because the broker does not support finalized version 19 of metadata.version. "
                  "The broker wants a version between 7 and 18, inclusive.")),
])
def test_broker_not_supporting_the_finalized_metadata_version(profile, text):
    c = fmt(profile, release_version="3.7-IV4")
    lo = LOCAL_MV[profile][0]
    out = reg_broker(c, 1, ranges={MV: [lo, 18]})
    refused(out, "UNSUPPORTED_VERSION", "KIP584-REG-01")
    assert out["error_code"] == 35
    assert out["message"] == text
    assert "1" not in ok(c.apply({"op": "state"}))["brokers"]


@pytest.mark.rule("KIP584-REG-01", "pass")
def test_3_7_skips_features_that_are_not_finalized():
    c = fmt("kafka-3.7")
    ok(reg_broker(c, 1, ranges={MV: [1, 19], "foo.version": [1, 1]}))


@pytest.mark.rule("KIP584-REG-01", "fail")
@pytest.mark.parametrize("profile,text", [
    ("kafka-3.8", ("Unable to register because the broker does not support version 0 of foo.version. "
                  "It wants a version between 1 and 1, inclusive.")),
    ("kafka-3.9", ("Unable to register because the broker does not support finalized version 0 of foo.version. "
                  "The broker wants a version between 1 and 1, inclusive.")),
    ("kafka-4.1", ("Unable to register because the broker does not support finalized version 0 of foo.version. "
                  "The broker wants a version between 1 and 1, inclusive.")),
])
def test_3_8_plus_counts_an_unfinalized_feature_as_0(profile, text):
    c = fmt(profile, release_version="3.7-IV4")
    lo = LOCAL_MV[profile][0]
    out = reg_broker(c, 1, ranges={MV: [lo, 19], "foo.version": [1, 1]})
    refused(out, "UNSUPPORTED_VERSION", "KIP584-REG-01", text)


@pytest.mark.rule("KIP584-REG-02", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.7", "kafka-3.8"])
def test_3_7_3_8_do_not_check_unmentioned_features(profile):
    c = Cluster(profile)
    ok(c.apply({"op": "restore_state", "metadata_version": 19, "finalized": {"foo.version": 1}, "epoch": 5}))
    ok(reg_broker(c, 1, ranges={MV: [1, 19]}))


@pytest.mark.rule("KIP584-REG-02", "fail")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.2"])
def test_3_9_plus_checks_unmentioned_finalized_features(profile):
    c = Cluster(profile)
    ok(c.apply({"op": "restore_state", "metadata_version": 19, "finalized": {"foo.version": 1}, "epoch": 5}))
    lo = LOCAL_MV[profile][0]
    out = reg_broker(c, 1, ranges={MV: [lo, 19]})
    refused(out, "UNSUPPORTED_VERSION", "KIP584-REG-02",
            "Unable to register because the broker does not support finalized version 1 of foo.version. "
            "The broker wants a version between 0 and 0, inclusive.")


@pytest.mark.rule("KIP584-REG-02", "fail")
def test_3_9_dynamic_quorum_needs_brokers_that_mention_kraft_version():
    # The 3.9 controller adds raft's kraft.version (1 with --standalone) to the finalized map.
    c = fmt("kafka-3.9", standalone=True)
    out = reg_broker(c, 1, ranges={MV: [1, 21]})
    refused(out, "UNSUPPORTED_VERSION", "KIP584-REG-02",
            "Unable to register because the broker does not support finalized version 1 of kraft.version. "
            "The broker wants a version between 0 and 0, inclusive.")


@pytest.mark.rule("KIP1022-REG-01", "pass")
@pytest.mark.rule("KIP584-REG-02", "fail")
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_broker_at_v3_drops_min_0_features(profile):
    c = fmt(profile, release_version="4.0-IV0")  # only group.version=1 is finalized besides MV
    assert fin(c) == {MV: 22, GV: 1}
    out = reg_broker(c, 1, version=3)
    refused(out, "UNSUPPORTED_VERSION", "KIP584-REG-02",
            "Unable to register because the broker does not support finalized version 1 of group.version. "
            "The broker wants a version between 0 and 0, inclusive.")
    assert list(out.get("sent_features", {MV: None})) == [MV]


@pytest.mark.rule("KIP1022-REG-01", "pass")
@pytest.mark.rule("KIP584-REG-02", "pass")
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_broker_at_v4_sends_min_0_features(profile):
    c = fmt(profile, release_version="4.0-IV0")
    out = ok(reg_broker(c, 1, version=4))
    assert out["sent_features"][GV] == [0, 1]


@pytest.mark.rule("KIP584-REG-02", "fail")
@pytest.mark.parametrize("profile", ["kafka-4.2", "kafka-4.3"])
def test_4x_unmentioned_features_are_checked_in_hashmap_order(profile):
    # Finalized: elr, group, share, streams, transaction (+ MV). HashMap order visits group.version (bucket 0) first.
    c = fmt(profile)
    out = reg_broker(c, 1, version=3)
    refused(out, "UNSUPPORTED_VERSION", "KIP584-REG-02",
            "Unable to register because the broker does not support finalized version 1 of group.version. "
            "The broker wants a version between 0 and 0, inclusive.")


@pytest.mark.rule("KIP1022-REG-02", "fail")
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_registration_without_metadata_version(profile):
    c = fmt(profile)
    out = reg_broker(c, 1, ranges={GV: [0, 1], TV: [0, 2]})
    refused(out, "INVALID_REGISTRATION", "KIP1022-REG-02", "Request features do not contain 'metadata.version'")
    assert out["error_code"] == 119
    assert out["message"] == "Request features do not contain 'metadata.version'"


@pytest.mark.rule("KIP584-REG-01", "fail")
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_unsupported_listed_feature_is_reported_before_missing_metadata_version(profile):
    c = fmt(profile)
    out = reg_broker(c, 1, ranges={GV: [2, 3]})
    refused(out, "UNSUPPORTED_VERSION", "KIP584-REG-01",
            "Unable to register because the broker does not support finalized version 1 of group.version. "
            "The broker wants a version between 2 and 3, inclusive.")


@pytest.mark.rule("KIP1022-REG-02", "pass")
@pytest.mark.parametrize("profile", FOUR_X)
def test_4x_registration_with_metadata_version(profile):
    c = fmt(profile, release_version="3.7-IV4")
    ok(reg_broker(c, 1, ranges={MV: [7, 19]}))


@pytest.mark.rule("KIP584-REG-07", "fail")
@pytest.mark.parametrize("profile,text", [
    ("kafka-3.7", ("Unable to register because the broker does not support version 19 of metadata.version. "
                  "It wants a version between 1 and 1, inclusive.")),
    ("kafka-3.8", ("Unable to register because the broker does not support version 19 of metadata.version. "
                  "It wants a version between 1 and 1, inclusive.")),
    ("kafka-3.9", ("Unable to register because the broker does not support finalized version 19 of "
                  "metadata.version. The broker wants a version between 1 and 1, inclusive.")),
])
def test_3x_registration_without_metadata_version_assumes_1_1(profile, text):
    c = fmt(profile, release_version="3.7-IV4")
    out = reg_broker(c, 1, ranges={"foo.version": [0, 1]}, version=3)
    refused(out, "UNSUPPORTED_VERSION", "KIP584-REG-07", text)


@pytest.mark.rule("KIP584-REG-07", "pass")
@pytest.mark.parametrize("profile", THREE_X)
def test_3x_registration_without_metadata_version_at_3_0_iv1(profile):
    # format refuses 3.0-IV1 (BootstrapMetadata, below 3.3-IV0): a cluster formatted by 3.0-3.2 is stated.
    c = Cluster(profile)
    ok(c.apply({"op": "restore_state", "metadata_version": 1}))
    ok(reg_broker(c, 1, ranges={"foo.version": [0, 1]}, version=3))


# =============================================================================================
# 8. Rolling upgrades and downgrades, mixed versions, restore_state
# =============================================================================================

@pytest.mark.rule("KIP584-UPD-04", "fail")
@pytest.mark.rule("KIP584-UPD-04", "pass")
def test_rolling_upgrade_4_1_to_4_2():
    c = fmt("kafka-4.1", release_version="4.1-IV1")
    for b in (1, 2):
        ok(reg_broker(c, b, incarnation=f"old-{b}"))
    out = update(c, U(MV, 29))
    assert out["message"] == FAIL_ALL + invalid(29, MV, f"Local controller {CID} only supports versions 7-27"), out
    # The controller is upgraded first (it re-registers with the new software) ...
    ok(reg_controller(c, CID, software="kafka-4.2"))
    out = update(c, U(MV, 29))
    # Both old brokers fail; the controller meets broker 2 first: its registrations live in a
    # TimelineHashMap, which iterates {1, 2} as 2, 1 (FeatureControlManager.reasonNotSupported,
    # FeatureControlManager.java:321-374@4.1.1; BaseHashTable.findSlot, SnapshottableHashTable.java:172).
    assert out["message"] == FAIL_ALL + invalid(29, MV, "Broker 2 only supports versions 7-27"), out
    # ... then the brokers, one at a time.
    ok(reg_broker(c, 2, software="kafka-4.2", incarnation="new-2"))
    out = update(c, U(MV, 29))
    assert out["message"] == FAIL_ALL + invalid(29, MV, "Broker 1 only supports versions 7-27"), out
    ok(reg_broker(c, 1, software="kafka-4.2", incarnation="new-1"))
    ok(update(c, U(MV, 29), U(STREAMS, 1)))
    assert fin(c)[MV] == 29 and fin(c)[STREAMS] == 1


@pytest.mark.rule("KIP584-REG-01", "fail")
def test_rolling_downgrade_of_the_binary_is_refused_while_a_level_is_out_of_range():
    c = fmt("kafka-4.2")  # MV 29, streams.version=1
    ok(reg_broker(c, 1, incarnation="a"))
    out = reg_broker(c, 1, software="kafka-4.1", incarnation="b")
    refused(out, "UNSUPPORTED_VERSION", "KIP584-REG-01",
            "Unable to register because the broker does not support finalized version 29 of metadata.version. "
            "The broker wants a version between 7 and 27, inclusive.")
    # Lower MV (29 -> 27 changes no metadata); streams.version is still unknown to a 4.1 broker.
    ok(update(c, U(MV, 27, "SAFE_DOWNGRADE")))
    out = reg_broker(c, 1, software="kafka-4.1", incarnation="b")
    refused(out, "UNSUPPORTED_VERSION", "KIP584-REG-02",
            "Unable to register because the broker does not support finalized version 1 of streams.version. "
            "The broker wants a version between 0 and 0, inclusive.")
    ok(update(c, U(STREAMS, 0, "SAFE_DOWNGRADE")))
    ok(reg_broker(c, 1, software="kafka-4.1", incarnation="b"))


@pytest.mark.rule("KIP778-MV-04", "fail")
def test_4_3_iv0_changed_metadata_so_any_downgrade_from_it_is_lossy():
    c = fmt("kafka-4.3", release_version="4.3-IV0")
    out = update(c, U(MV, 29, "SAFE_DOWNGRADE"))
    assert out["error"] == "INVALID_UPDATE_VERSION" and out["rule"] == "KIP778-MV-04", out


@pytest.mark.rule("KIP584-REPLAY-01", "pass")
def test_rolling_upgrade_of_a_controller_binary_replays_the_log():
    c = fmt("kafka-4.1", controllers=TWO_CONTROLLERS, release_version="4.1-IV1")
    ok(reg_controller(c, 3001))
    ok(reg_controller(c, 3001, software="kafka-4.2"))
    assert ok(c.apply({"op": "state"}))["controllers"]["3001"][MV] == [7, 29]


@pytest.mark.rule("KIP584-REPLAY-01", "fail")
def test_rolling_downgrade_of_a_controller_binary_is_refused_while_a_level_is_out_of_range():
    c = fmt("kafka-4.2", controllers=TWO_CONTROLLERS)
    ok(reg_controller(c, 3001))
    # A 4.1 controller cannot replay metadata.version 29.
    out = reg_controller(c, 3001, software="kafka-4.1")
    assert out["error"] == "UNKNOWN_SERVER_ERROR" and out["rule"] == "KIP584-REPLAY-01", out
    state = ok(c.apply({"op": "state"}))
    assert state["controllers"]["3001"][MV] == [7, 29]


def test_mixed_3_9_controller_and_4_0_broker():
    c = fmt("kafka-3.9")
    out = ok(reg_broker(c, 1, software="kafka-4.0"))
    assert out["sent_features"][GV] == [0, 1]  # v4 to a 3.9 controller
    out = update(c, U(GV, 1))
    feature_refused("kafka-3.9", out, GV, invalid(1, GV, f"Local controller {CID} does not support this feature."),
                    "KIP584-UPD-13")


def test_mixed_3_7_controller_and_3_9_broker_registers_at_v3():
    c = fmt("kafka-3.7")
    out = ok(reg_broker(c, 1, software="kafka-3.9"))
    assert out["version"] == 3
    assert KRAFT not in out["sent_features"]  # min-0 ranges are omitted below v4


def test_restore_state_from_stated_levels():
    c = Cluster("kafka-4.2")
    ok(c.apply({"op": "restore_state", "metadata_version": 27, "finalized": {GV: 1, SHARE: 0, TV: 2},
                "kraft_version": 0, "epoch": 100, "controllers": [{"id": 3000, "software": "kafka-4.2"}]}))
    st = ok(c.apply({"op": "state"}))
    assert st["metadata_version"] == 27
    assert st["finalized"] == {MV: 27, GV: 1, TV: 2}
    assert st["epoch"] == 100
    assert ok(c.apply({"op": "describe"}))["epoch"] == 100
    out = ok(update(c, U(MV, 29)))
    assert out["epoch"] == 101


# =============================================================================================
# 9. Commands the reference cannot interpret
# =============================================================================================

@pytest.mark.rule("CMD-01", "fail")
@pytest.mark.parametrize("command", [{"op": "no_such_op"}, {"op": "update_features", "updates": [{"feature": 1}]},
                                     "not-a-dict"])
def test_uninterpretable_command(command):
    c = fmt("kafka-4.2")
    out = c.apply(command)
    refused(out, "INVALID_COMMAND", "CMD-01")


@pytest.mark.rule("CMD-01", "pass")
def test_well_formed_command_is_interpreted():
    c = fmt("kafka-4.2")
    ok(c.apply({"op": "state"}))


@pytest.mark.rule("KIP584-REG-08", "fail")
@pytest.mark.rule("KIP584-REG-08", "pass")
@pytest.mark.parametrize("profile", RELEASES)
def test_registration_without_log_dirs_is_refused_from_3_7_iv2(profile):
    # ClusterControlManager.registerBroker (3.7.0-4.4.0 jars): if metadata.version isDirectoryAssignmentSupported
    # (3.7-IV2+) and the request has no LogDirs (a v2+ field), "No directories specified in request"; seen
    # on a real 4.1.1 cluster for BrokerRegistration v0.
    c = Cluster(profile)
    ok(c.apply({"op": "format", "release_version": "3.7-IV2"}))
    out = c.apply({"op": "register", "role": "broker", "node": 1, "version": 1})
    assert (out["error"], out["message"], out["rule"]) == (
        "INVALID_REGISTRATION", "No directories specified in request", "KIP584-REG-08")
    ok(c.apply({"op": "register", "role": "broker", "node": 1, "version": 2}))
    old = Cluster(profile)
    ok(old.apply({"op": "format", "release_version": "3.7-IV1"}))
    ok(old.apply({"op": "register", "role": "broker", "node": 1, "version": 1}))
