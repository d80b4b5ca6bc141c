"""KIP-1155 (metadata.version downgrade), profile kip-1155, from the KIP text
(/work/shared/seeds/kip-1155-metadata-version-downgrade.txt) and facts §7:

* a downgrade is allowed only if every registered broker and controller supports the
  downgrade-capable metadata.version (35 in this profile, a level no release has given out), else INVALID_UPDATE_VERSION naming the node;
* never below 3.7-IV0 (controller registrations are needed to check controllers);
* the requested metadata.version must be compatible with the other enabled features;
* records for the other features (and cleanup) first, the metadata.version record last;
* a snapshot is written at the new metadata.version, and loading it gives the same state;
* SAFE_DOWNGRADE aborts when something would be lost at the lower version; UNSAFE_DOWNGRADE drops it.

Release profiles never implemented KIP-1155 and still refuse lossy downgrades.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import ok, refused

from reference_impl import Cluster

P = "kip-1155"
MV = "metadata.version"
ELR = "eligible.leader.replicas.version"
GV = "group.version"
SHARE = "share.version"
STREAMS = "streams.version"
IUV = "INVALID_UPDATE_VERSION"
FAIL_ALL = "The update failed for all features since the following feature had an error: "
CAPABLE = 35  # the downgrade-capable metadata.version of the profile (hypothetical 4.5-IV1, on kafka-4.4)


def U(feature: str, level: int, upgrade_type: str | None = None) -> dict[str, Any]:
    u: dict[str, Any] = {"feature": feature, "level": level}
    if upgrade_type:
        u["upgrade_type"] = upgrade_type
    return u


def update(c: Cluster, *updates: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return c.apply({"op": "update_features", "updates": list(updates), **kw})


def fmt(profile: str = P, **kw: Any) -> Cluster:
    c = Cluster(profile)
    ok(c.apply({"op": "format", **kw}))
    return c


def state(c: Cluster) -> dict[str, Any]:
    return ok(c.apply({"op": "state"}))


def cluster(**kw: Any) -> Cluster:
    """kip-1155 cluster at the capable level with two registered kip-1155 controllers and two kip-1155 brokers."""
    c = fmt(controllers=[{"id": 3000}, {"id": 3001}], **kw)
    ok(c.apply({"op": "register", "role": "controller", "node": 3001}))
    for b in (1, 2):
        ok(c.apply({"op": "register", "role": "broker", "node": b}))
    return c


def flr(records: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(r["name"], r["level"]) for r in records if r["type"] == "FeatureLevelRecord"]


def finalized_view(c: Cluster) -> tuple[dict[str, int], int]:
    d = ok(c.apply({"op": "describe", "version": 4}))
    return d["finalized"], d["epoch"]


# -- who must support the downgrade ---------------------------------------------------------------

@pytest.mark.rule("KIP1155-DG-01", "pass")
@pytest.mark.parametrize("utype", ["SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"])
def test_downgrade_across_a_metadata_change_when_every_node_supports_the_capable_level(utype):
    c = cluster()
    assert state(c)["metadata_version"] == CAPABLE
    # 35 -> 29 crosses 4.3-IV0, 4.4-IV1, 4.4-IV2 (didMetadataChange=true): a release refuses it, KIP-1155 checks the data instead.
    out = ok(update(c, U(MV, 29, utype)))
    assert flr(out["records"]) == [(MV, 29)]
    assert state(c)["metadata_version"] == 29
    assert not out.get("lost")


@pytest.mark.rule("KIP1155-DG-01", "fail")
def test_downgrade_refused_when_a_broker_does_not_support_the_capable_level():
    c = fmt(release_version="4.3-IV0")
    ok(c.apply({"op": "register", "role": "broker", "node": 1}))
    ok(c.apply({"op": "register", "role": "broker", "node": 2, "software": "kafka-4.3"}))
    out = update(c, U(MV, 29, "SAFE_DOWNGRADE"))
    refused(out, IUV, "KIP1155-DG-01", "Broker 2")
    assert out["records"] == []
    assert out["epoch"] == out["epoch_before"]
    assert state(c)["metadata_version"] == 30
    assert not out.get("snapshot")


@pytest.mark.rule("KIP1155-DG-01", "fail")
def test_downgrade_refused_when_a_controller_does_not_support_the_capable_level():
    c = fmt(release_version="4.3-IV0", controllers=[{"id": 3000}, {"id": 3001, "software": "kafka-4.3"}])
    ok(c.apply({"op": "register", "role": "controller", "node": 3001}))
    out = update(c, U(MV, 29, "UNSAFE_DOWNGRADE"))
    refused(out, IUV, "KIP1155-DG-01", "Controller 3001")
    assert state(c)["metadata_version"] == 30


@pytest.mark.rule("KIP919-UPD-02", "fail")
def test_downgrade_refused_while_a_static_voter_has_not_registered():
    c = fmt(controllers=[{"id": 3000}, {"id": 3001}])
    out = update(c, U(MV, 29, "SAFE_DOWNGRADE"))
    refused(out, IUV, "KIP919-UPD-02", "controller 3001 has not registered, and may not support this feature")


@pytest.mark.rule("KIP1155-DG-01", "pass")
def test_only_registered_nodes_count():
    c = fmt(release_version="4.3-IV0")
    ok(c.apply({"op": "register", "role": "broker", "node": 2, "software": "kafka-4.3"}))
    refused(update(c, U(MV, 29, "SAFE_DOWNGRADE")), IUV, "KIP1155-DG-01", "Broker 2")
    ok(c.apply({"op": "unregister", "node": 2}))
    ok(update(c, U(MV, 29, "SAFE_DOWNGRADE")))


# -- floor and other features -----------------------------------------------------------------------

@pytest.mark.rule("KIP1155-DG-02", "fail")
@pytest.mark.parametrize("level", [14, 7])
def test_never_below_3_7_iv0(level):
    c = cluster()
    out = update(c, U(ELR, 0, "SAFE_DOWNGRADE"), U(MV, level, "UNSAFE_DOWNGRADE"))
    refused(out, IUV, "KIP1155-DG-02")
    assert out["records"] == []
    assert state(c)["metadata_version"] == CAPABLE


@pytest.mark.rule("KIP1155-DG-02", "pass")
@pytest.mark.rule("KIP1155-DG-03", "pass")
def test_down_to_3_7_iv0():
    c = cluster()
    out = ok(update(c, U(ELR, 0, "SAFE_DOWNGRADE"), U(MV, 15, "SAFE_DOWNGRADE")))
    assert flr(out["records"])[-1] == (MV, 15)
    assert state(c)["metadata_version"] == 15


@pytest.mark.rule("KIP1155-DG-03", "fail")
def test_other_features_must_stay_valid():
    c = cluster()
    assert state(c)["finalized"][ELR] == 1  # ELR=1 depends on metadata.version 23
    out = update(c, U(MV, 22, "SAFE_DOWNGRADE"))
    refused(out, IUV, "KIP1155-DG-03", ELR)
    assert out["records"] == []
    assert state(c)["metadata_version"] == CAPABLE


# -- record order ------------------------------------------------------------------------------------

@pytest.mark.rule("KIP1155-DG-04", "pass")
def test_metadata_version_record_is_last():
    c = cluster()
    # HashMap order would visit metadata.version (bucket 7) before streams.version (8) and ELR (12);
    # the downgrade record must still come last.
    out = ok(update(c, U(MV, 22, "SAFE_DOWNGRADE"), U(STREAMS, 0, "SAFE_DOWNGRADE"), U(ELR, 0, "SAFE_DOWNGRADE"),
                    U(SHARE, 0, "SAFE_DOWNGRADE")))
    written = flr(out["records"])
    assert written[-1] == (MV, 22)
    assert sorted(written[:-1]) == [(ELR, 0), (SHARE, 0), (STREAMS, 0)]
    assert out["records"][-1]["type"] == "FeatureLevelRecord" and out["records"][-1]["name"] == MV
    fin = state(c)["finalized"]
    assert fin[MV] == 22 and ELR not in fin and STREAMS not in fin and SHARE not in fin


@pytest.mark.rule("KIP1155-DG-04", "pass")
@pytest.mark.rule("KIP1155-DG-07", "pass")
def test_unsafe_downgrade_drops_what_the_target_cannot_express():
    c = cluster()
    ok(c.apply({"op": "add_metadata", "kind": "scram_credential"}))  # needs 3.5-IV2 (11)
    ok(c.apply({"op": "add_metadata", "kind": "cordoned_log_dir"}))  # needs 4.3-IV0 (30)
    out = ok(update(c, U(MV, 29, "UNSAFE_DOWNGRADE")))
    assert [x["kind"] for x in out["lost"]] == ["cordoned_log_dir"]
    # Cleanup records first, the metadata.version record last.
    assert out["records"][-1]["type"] == "FeatureLevelRecord" and out["records"][-1]["name"] == MV
    assert out["records"][-1]["level"] == 29
    assert len(out["records"]) >= 2
    kinds = [p["kind"] for p in state(c)["payload"]]
    assert kinds == ["scram_credential"]
    snap_kinds = [r.get("kind") for r in out["snapshot"]["records"] if r["type"] == "PayloadRecord"]
    assert snap_kinds == ["scram_credential"]


# -- lossy SAFE downgrade ------------------------------------------------------------------------------

@pytest.mark.rule("KIP1155-DG-06", "fail")
@pytest.mark.parametrize("kind,target", [("cordoned_log_dir", 29), ("elr_partition_state", 22),
                                         ("directory_assignment", 16), ("cordoned_log_dir", 15)])
def test_safe_downgrade_refused_when_data_would_be_lost(kind, target):
    c = cluster()
    ok(c.apply({"op": "add_metadata", "kind": kind}))
    before = state(c)
    out = update(c, U(ELR, 0, "SAFE_DOWNGRADE"), U(MV, target, "SAFE_DOWNGRADE"))
    refused(out, IUV, "KIP1155-DG-06")
    assert out["records"] == []
    after = state(c)
    assert after["metadata_version"] == CAPABLE and after["payload"] == before["payload"]
    assert after["finalized"] == before["finalized"]  # all or nothing: ELR=0 was not written either
    assert not out.get("snapshot")


@pytest.mark.rule("KIP1155-DG-06", "pass")
def test_safe_downgrade_keeps_data_the_target_can_express():
    c = cluster()
    ok(c.apply({"op": "add_metadata", "kind": "scram_credential"}))
    ok(c.apply({"op": "add_metadata", "kind": "directory_assignment"}))
    out = ok(update(c, U(MV, 29, "SAFE_DOWNGRADE")))
    assert not out.get("lost")
    assert sorted(p["kind"] for p in state(c)["payload"]) == ["directory_assignment", "scram_credential"]


@pytest.mark.rule("KIP584-UPD-09", "pass")
def test_validate_only_downgrade_writes_nothing():
    c = cluster()
    ok(c.apply({"op": "add_metadata", "kind": "cordoned_log_dir"}))
    before = state(c)
    out = ok(update(c, U(MV, 29, "UNSAFE_DOWNGRADE"), validate_only=True))
    assert out["records"] == []
    assert not out.get("snapshot")
    assert state(c)["payload"] == before["payload"] and state(c)["metadata_version"] == CAPABLE
    refused(update(c, U(MV, 29, "SAFE_DOWNGRADE"), validate_only=True), IUV, "KIP1155-DG-06")


@pytest.mark.rule("KIP584-UPD-05", "fail")
def test_downgrade_still_needs_a_downgrade_type():
    c = cluster()
    out = update(c, U(MV, 29))
    refused(out, IUV, "KIP584-UPD-05")
    assert out["message"] == FAIL_ALL + ("Invalid update version 29 for feature metadata.version. Can't downgrade the "
                                         "version of this feature without setting the upgrade type to either safe or "
                                         "unsafe downgrade.")


# -- the snapshot at the new metadata.version -------------------------------------------------------------

@pytest.mark.rule("KIP1155-DG-05", "pass")
@pytest.mark.rule("SNAP-02", "pass")
@pytest.mark.parametrize("reload_profile", [P, "kafka-4.2"])
def test_snapshot_at_the_new_version_reloads_to_the_same_describe(reload_profile):
    c = cluster()
    ok(c.apply({"op": "add_metadata", "kind": "scram_credential"}))
    out = ok(update(c, U(MV, 29, "SAFE_DOWNGRADE")))
    snap = out["snapshot"]
    assert snap["metadata_version"] == 29
    mv_recs = [r for r in snap["records"] if r["type"] == "FeatureLevelRecord" and r["name"] == MV]
    assert [r["level"] for r in mv_recs] == [29]
    want = finalized_view(c)
    # Older software (4.2 supports up to 29) can load it.
    fresh = Cluster(reload_profile)
    ok(fresh.apply({"op": "load_snapshot", "snapshot": snap}))
    assert finalized_view(fresh) == want
    assert state(fresh)["payload"] == state(c)["payload"]


def test_no_snapshot_on_upgrade():
    c = cluster()
    ok(update(c, U(MV, 29, "SAFE_DOWNGRADE")))
    out = ok(update(c, U(MV, CAPABLE)))
    assert not out.get("snapshot")
    assert state(c)["metadata_version"] == CAPABLE


@pytest.mark.rule("SNAP-01", "fail")
@pytest.mark.rule("SNAP-01", "pass")
def test_snapshot_op_at_a_version_that_cannot_express_the_image():
    c = cluster()
    ok(c.apply({"op": "add_metadata", "kind": "cordoned_log_dir"}))
    refused(c.apply({"op": "snapshot", "metadata_version": 29}), IUV, "SNAP-01")
    out = ok(c.apply({"op": "snapshot", "metadata_version": 29, "allow_loss": True}))
    assert [x["kind"] for x in out["lost"]] == ["cordoned_log_dir"]
    assert ok(c.apply({"op": "snapshot"}))["snapshot"]["metadata_version"] == CAPABLE
    # Taking a snapshot does not change the cluster.
    assert [p["kind"] for p in state(c)["payload"]] == ["cordoned_log_dir"]


@pytest.mark.rule("SNAP-02", "pass")
@pytest.mark.parametrize("profile", ["kafka-3.9", "kafka-4.2", P])
def test_plain_snapshot_reloads_to_the_same_describe(profile):
    c = fmt(profile)
    ok(c.apply({"op": "register", "role": "broker", "node": 1}))
    snap = ok(c.apply({"op": "snapshot"}))["snapshot"]
    fresh = Cluster(profile)
    ok(fresh.apply({"op": "load_snapshot", "snapshot": snap}))
    assert finalized_view(fresh)[0] == finalized_view(c)[0]
    # Loading publishes the whole image (FeaturesPublisher): the epoch is the snapshot's end.
    assert finalized_view(fresh)[1] == snap["end_offset"] > finalized_view(c)[1]


# -- payload records need their metadata.version -----------------------------------------------------------

@pytest.mark.rule("KIP778-PAY-01", "fail")
@pytest.mark.rule("KIP778-PAY-01", "pass")
def test_payload_needs_the_metadata_version_that_introduced_it():
    c = cluster()
    ok(update(c, U(MV, 29, "SAFE_DOWNGRADE")))
    out = c.apply({"op": "add_metadata", "kind": "cordoned_log_dir"})
    assert out["error"] != "NONE" and out["rule"] == "KIP778-PAY-01", out
    ok(c.apply({"op": "add_metadata", "kind": "elr_partition_state"}))
    ok(update(c, U(MV, CAPABLE)))
    ok(c.apply({"op": "add_metadata", "kind": "cordoned_log_dir"}))


@pytest.mark.rule("KIP778-PAY-01", "fail")
@pytest.mark.parametrize("profile,rv,kind", [("kafka-3.7", "3.6-IV2", "directory_assignment"),
                                             ("kafka-4.2", "4.0-IV0", "elr_partition_state"),
                                             ("kafka-4.2", "3.5-IV1", "scram_credential")])
def test_release_payload_needs_its_metadata_version(profile, rv, kind):
    c = fmt(profile, release_version=rv)
    out = c.apply({"op": "add_metadata", "kind": kind})
    assert out["error"] != "NONE" and out["rule"] == "KIP778-PAY-01", out


# -- release profiles keep refusing lossy downgrades ------------------------------------------------------

@pytest.mark.rule("KIP778-MV-04", "fail")
@pytest.mark.rule("KIP778-MV-05", "fail")
@pytest.mark.parametrize("profile,rv,cur,target", [("kafka-4.3", "4.3-IV0", 30, 29), ("kafka-4.2", "4.2-IV1", 29, 22)])
def test_release_profiles_still_refuse_lossy_downgrades(profile, rv, cur, target):
    c = fmt(profile, release_version=rv)
    out = update(c, U(MV, target, "SAFE_DOWNGRADE"))
    refused(out, IUV, "KIP778-MV-04")
    assert out["message"] == FAIL_ALL + (f"Unsupported metadata.version downgrade from {cur} to {target}. Refusing "
                                         "to perform the requested downgrade because it might delete metadata "
                                         "information.")
    out = update(c, U(MV, target, "UNSAFE_DOWNGRADE"))
    refused(out, IUV, "KIP778-MV-05")
    assert out["message"] == FAIL_ALL + (f"Unsupported metadata.version downgrade from {cur} to {target}. Unsafe "
                                         "metadata downgrade is not supported in this version.")
    assert state(c)["metadata_version"] == cur


@pytest.mark.rule("KIP778-MV-03", "pass")
def test_release_profile_lossless_downgrade_takes_no_snapshot():
    c = fmt("kafka-4.2")
    out = ok(update(c, U(MV, 27, "SAFE_DOWNGRADE")))
    assert not out.get("snapshot")
    assert flr(out["records"]) == [(MV, 27)]
