"""KIP-1312 (Kafka 4.4.0): UnregisterController (API key 94, v0) removes a controller's registration, so
a controller that left the quorum no longer holds feature upgrades back.  Facts from the 4.4.0 jars:
ApiKeys.UNREGISTER_CONTROLLER (94, versions 0-0, listeners broker and controller), Errors
CONTROLLER_ID_NOT_REGISTERED (136), MetadataVersion.isControllerUnregistrationSupported (IBP_4_4_IV2,
level 33); the checks in their order: QuorumController.unregisterController ("Controller cannot
unregister itself while it is active.", InvalidRequestException), then
ClusterControlManager.unregisterController (the metadata.version, then the registration), which
writes one UnregisterControllerRecord (metadata record 29)."""

from __future__ import annotations

from typing import Any

import pytest

from reference_impl import Cluster, load_profile

# A controller that left the quorum, registered with share.version up to 1 only.
STALE = {"metadata.version": [7, 33], "share.version": [0, 1], "kraft.version": [0, 1], "group.version": [0, 1],
         "transaction.version": [0, 2], "eligible.leader.replicas.version": [0, 1], "streams.version": [0, 1]}
SHARE_2 = {"op": "update_features", "updates": [{"feature": "share.version", "level": 2}]}


def cluster(release_version: str = "4.4-IV2", profile: str = "kafka-4.4") -> Cluster:
    c = Cluster(profile)
    fmt: dict[str, Any] = {"op": "format", "release_version": release_version, "standalone": True}
    if profile == "kafka-4.4":
        fmt["features"] = {"share.version": 1}
    out = c.apply(fmt)
    assert out["error"] == "NONE", out
    return c


def unregister(c: Cluster, node: int) -> dict[str, Any]:
    return c.apply({"op": "unregister", "role": "controller", "node": node})


@pytest.mark.rule("KIP1312-UNREG-04", "pass")
def test_a_stale_registration_blocks_an_upgrade_until_it_is_unregistered() -> None:
    c = cluster()
    assert c.apply({"op": "register", "role": "controller", "node": 3007, "ranges": STALE})["error"] == "NONE"
    blocked = c.apply(SHARE_2)
    assert (blocked["error"], blocked["rule"]) == ("INVALID_UPDATE_VERSION", "KIP919-UPD-01"), blocked
    assert "Controller 3007 only supports versions 0-1" in blocked["message"]
    out = unregister(c, 3007)
    assert (out["error"], out["error_code"], out["role"]) == ("NONE", 0, "controller"), out
    assert [(r["type"], r["controller_id"]) for r in out["records"]] == [("UnregisterControllerRecord", 3007)]
    assert c.apply({"op": "state"})["controllers"] == {}
    assert c.apply(SHARE_2)["error"] == "NONE"
    # Only the registration went: the node still answers, and may register again.
    assert c.apply({"op": "api_versions", "node": 3007})["error"] == "NONE"
    assert c.apply({"op": "register", "role": "controller", "node": 3007})["error"] == "NONE"
    assert set(c.apply({"op": "state"})["controllers"]) == {"3007"}


@pytest.mark.rule("KIP1312-UNREG-04", "fail")
def test_a_controller_that_is_not_registered() -> None:
    c = cluster()
    out = unregister(c, 3008)
    assert (out["error"], out["error_code"], out["rule"]) == ("CONTROLLER_ID_NOT_REGISTERED", 136, "KIP1312-UNREG-04")
    assert out["message"] == "Controller ID 3008 is not currently registered."
    assert c.apply({"op": "register", "node": 1})["error"] == "NONE"
    assert unregister(c, 1)["error"] == "CONTROLLER_ID_NOT_REGISTERED"  # a broker's id is not a controller's


@pytest.mark.rule("KIP1312-UNREG-02", "fail")
def test_the_active_controller_cannot_unregister_itself_checked_first() -> None:
    c = cluster("4.4-IV1")  # below the metadata.version too: the active-controller check comes first
    assert c.apply({"op": "register", "role": "controller", "node": 3000})["error"] == "NONE"
    out = unregister(c, 3000)
    assert (out["error"], out["error_code"], out["rule"]) == ("INVALID_REQUEST", 42, "KIP1312-UNREG-02")
    assert out["message"] == "Controller cannot unregister itself while it is active."


@pytest.mark.rule("KIP1312-UNREG-02", "pass")
@pytest.mark.rule("KIP1312-UNREG-03", "fail")
def test_it_needs_metadata_version_4_4_iv2() -> None:
    c = cluster("4.4-IV1")
    assert c.apply({"op": "register", "role": "controller", "node": 3007, "ranges": STALE})["error"] == "NONE"
    out = unregister(c, 3007)
    assert (out["error"], out["error_code"], out["rule"]) == ("UNSUPPORTED_VERSION", 35, "KIP1312-UNREG-03")
    assert out["message"] == "The current MetadataVersion is too old to support controller unregistration."
    assert "records" not in out and set(c.apply({"op": "state"})["controllers"]) == {"3007"}


@pytest.mark.rule("KIP1312-UNREG-03", "pass")
def test_4_4_iv2_is_enough() -> None:
    c = cluster("4.4-IV2")
    c.apply({"op": "register", "role": "controller", "node": 3007})
    assert unregister(c, 3007)["error"] == "NONE"


@pytest.mark.rule("KIP1312-UNREG-01", "fail")
def test_releases_before_4_4_have_no_unregister_controller() -> None:
    c = cluster("4.3-IV0", "kafka-4.3")
    c.apply({"op": "register", "role": "controller", "node": 3007})
    out = unregister(c, 3007)
    assert (out["error"], out["rule"]) == ("UNSUPPORTED_VERSION", "KIP1312-UNREG-01"), out
    assert out["message"] == "UnregisterController (API key 94) is not supported by kafka-4.3"


@pytest.mark.rule("KIP1312-UNREG-01", "pass")
def test_the_profiles_that_have_it() -> None:
    have = {n: load_profile(n).behaviour.get("unregister_controller_metadata_version")
            for n in ("kafka-4.2", "kafka-4.3", "kafka-4.4", "kip-1155")}
    assert have == {"kafka-4.2": None, "kafka-4.3": None, "kafka-4.4": 33, "kip-1155": 33}
    assert load_profile("kafka-4.4").mv_name(33) == "4.4-IV2"


def test_a_broker_unregister_is_unchanged_and_the_role_is_checked() -> None:
    c = cluster()
    assert c.apply({"op": "register", "node": 1})["error"] == "NONE"
    out = c.apply({"op": "unregister", "role": "broker", "node": 1})
    assert out["error"] == "NONE" and [r["type"] for r in out["records"]] == ["UnregisterBrokerRecord"]
    assert c.apply({"op": "unregister", "role": "voter", "node": 1})["error"] == "INVALID_COMMAND"
    assert Cluster("kafka-4.4").apply({"op": "unregister", "role": "controller", "node": 1})["error"] == "INVALID_COMMAND"


def test_a_snapshot_after_unregistering_has_no_registration() -> None:
    c = cluster()
    c.apply({"op": "register", "role": "controller", "node": 3007})
    unregister(c, 3007)
    snap = c.apply({"op": "snapshot"})["snapshot"]
    assert not [r for r in snap["records"] if r["type"] == "RegisterControllerRecord"]
