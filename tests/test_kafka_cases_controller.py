"""Cases of Kafka's own controller unit tests, transcribed into commands of the reference, release by release.

Sources (metadata/src/test/java/org/apache/kafka/controller/):
  FeatureControlManagerTest, QuorumFeaturesTest, and the feature-related registration cases of
  ClusterControlManagerTest.  Tags 3.7.0 / 3.8.0 / 3.9.0-rc3 are read in apache/kafka, 4.0.0 / 4.1.0 /
  4.1.1 / 4.2.0-rc1 in aiven/inkless (which carries the upstream tags).  Each tag is driven with the
  profile of its release (3.9.0-rc3 with kafka-3.9 = 3.9.0 final; 4.2.0-rc1 with kafka-4.2).

Naming: ``test_<KafkaClass>_<method>__<release>`` (release 3_7, 3_8, 3_9, 4_0, 4_1_0, 4_1_1, 4_2); each
generated test's docstring gives the Kafka source as path:line@tag (line of the method declaration).
A case whose body is the same at several tags is written once and emitted once per tag by
``transcribe``; its rule markers are written out literally (rule id and case as string literals) in the
list handed to it, so the static scan of tests/test_rule_coverage.py reads them.

How the Kafka harness maps onto commands:
- ``new QuorumFeatures(0, ranges, ...)`` / ``features(...)`` (= defaultFeatureMap(true) plus the test's
  ranges) is the active controller 0 of a ``restore_state`` with explicit ``ranges`` and the tag's
  ``software``; the voters are [0] (the Kafka test has no other controller).
- ``setMetadataVersion(mv)`` / ``replay(FeatureLevelRecord metadata.version)`` is restore_state's
  ``metadata_version``; a builder without one runs at MetadataVersion.latestProduction() (3.x).
- ``createFakeClusterFeatureSupportDescriber([(id, ranges)], [])`` is a restored broker with those
  explicit ranges (no metadata.version range, as in the Kafka test).
- ``updateFeatures(updates, upgradeTypes, validateOnly)`` is ``update_features`` at the release's maximum
  request version.  3.x answers one ApiError per feature (``results``); 4.x one ApiError for the
  request, which the reference reports with the wire's fail-all prefix: Kafka's message must end the
  outcome's message.  A missing upgrade type is UPGRADE.
- ``result.records()`` are compared as the FeatureLevelRecords of the outcome (4.x ConfigurationControl
  Manager adds an ELR ConfigRecord around FeatureControlManager's records; see testUpgradeElrFeatureLevel).
- ``clusterControl.registerBroker(request, ...)`` is ``register`` with explicit ``ranges`` (the request's
  feature collection; ``{}`` for a request without features).
Cases that need what commands cannot state (ZK migration, @Disabled, internal predicates, test-only
builder knobs) are listed in docs/kafka-cases-controller.md, not forced here.  A Kafka assertion that
fails against the reference stays, marked ``xfail(strict=True, reason="reference differs: ...")``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import ok, refused

from reference_impl import Cluster

MV = "metadata.version"
KRAFT = "kraft.version"
TV = "transaction.version"
GV = "group.version"
ELR = "eligible.leader.replicas.version"
SHARE = "share.version"
STREAMS = "streams.version"
TFV = "test.feature.version"
IUV = "INVALID_UPDATE_VERSION"
UV = "UNSUPPORTED_VERSION"
CLUSTER_ID = "fPZv1VBsRFmnlRvmGcOW9w"  # ClusterControlManagerTest's cluster id

T37, T38, T39 = "3.7.0", "3.8.0", "3.9.0-rc3"
T40, T410, T411, T42 = "4.0.0", "4.1.0", "4.1.1", "4.2.0-rc1"
# 4.3.0 / 4.3.1 / 4.4.0 run in tests/test_kafka_cases_4_3_4_4.py (one parametrised test per group); their
# release data sits in the tables below so the bodies here serve both files.
T430, T431, T440 = "4.3.0", "4.3.1", "4.4.0"
THREE_X = (T37, T38, T39)
FOUR_X = (T40, T410, T411, T42)
ALL_TAGS = THREE_X + FOUR_X

# tag -> (profile, test-name suffix)
TAGS = {T37: ("kafka-3.7", "3_7"), T38: ("kafka-3.8", "3_8"), T39: ("kafka-3.9", "3_9"), T40: ("kafka-4.0", "4_0"),
        T410: ("kafka-4.1.0", "4_1_0"), T411: ("kafka-4.1.1", "4_1_1"), T42: ("kafka-4.2", "4_2")}

PATHS = {
    "FeatureControlManagerTest": "metadata/src/test/java/org/apache/kafka/controller/FeatureControlManagerTest.java",
    "QuorumFeaturesTest": "metadata/src/test/java/org/apache/kafka/controller/QuorumFeaturesTest.java",
    "ClusterControlManagerTest": "metadata/src/test/java/org/apache/kafka/controller/ClusterControlManagerTest.java",
}

# Line of each method's declaration, per tag (git show TAG:PATH).
LINES: dict[str, dict[str, dict[str, int]]] = {
    "FeatureControlManagerTest": {
        "testUpdateFeatures": {T37: 95, T38: 95, T39: 96, T40: 99, T410: 96, T411: 96, T42: 96},
        "testReplay": {T37: 127, T38: 127, T39: 128, T40: 136, T410: 133, T411: 133, T42: 133},
        "testReplayKraftVersionFeatureLevel": {T40: 157, T410: 154, T411: 154, T42: 154},
        "testUpdateFeaturesErrorCases": {T37: 164, T38: 164, T39: 165, T40: 197, T410: 194, T411: 194, T42: 194},
        "testReplayRecords": {T37: 215, T38: 215, T39: 216, T40: 246, T410: 245, T411: 245, T42: 245},
        "testApplyMetadataVersionChangeRecord": {T37: 242, T38: 242, T39: 243, T40: 273, T410: 275, T411: 275,
                                                 T42: 274},
        "testCannotDowngradeToVersionBeforeMinimumSupportedKraftVersion": {T37: 251, T38: 251, T39: 252},
        "testCannotDowngradeToHigherVersion": {T37: 264, T38: 264, T39: 265, T40: 283, T410: 285, T411: 285,
                                               T42: 284},
        "testCannotUnsafeDowngradeToHigherVersion": {T37: 277, T38: 277, T39: 278, T40: 295, T410: 298, T411: 298,
                                                     T42: 297},
        "testCannotUpgradeToLowerVersion": {T37: 290, T38: 290, T39: 291, T40: 307, T410: 311, T411: 311, T42: 310},
        "testCanUpgradeToHigherVersion": {T37: 304, T38: 304, T39: 305, T40: 323, T410: 329, T411: 329, T42: 328},
        "testCannotUseSafeDowngradeIfMetadataChanged": {T37: 315, T38: 315, T39: 316, T40: 333, T410: 340,
                                                        T411: 340, T42: 339},
        "testUnsafeDowngradeIsTemporarilyDisabled": {T37: 328, T38: 328, T39: 329, T40: 345, T410: 353, T411: 353,
                                                     T42: 352},
        "testCanUseSafeDowngradeIfMetadataDidNotChange": {T37: 352, T38: 352, T39: 353, T40: 367, T410: 377,
                                                          T411: 377, T42: 376},
        "testCannotDowngradeBefore3_3_IV0": {T37: 368, T38: 368, T39: 369},
        "testCannotDowngradeBeforeMinimumKraftVersion": {T40: 381, T410: 392, T411: 392, T42: 391},
        "testCreateFeatureLevelRecords": {T37: 384, T38: 384, T39: 385, T40: 396, T410: 420, T411: 420, T42: 419},
        "testUpgradeElrFeatureLevel": {T40: 429, T410: 456, T411: 456, T42: 455},
    },
    "QuorumFeaturesTest": {
        "testDefaultFeatureMap": {T37: 53, T38: 54, T39: 58, T40: 54, T410: 49, T411: 49, T42: 49},
        "testDefaultFeatureMapWithUnstable": {T37: 62, T38: 69, T39: 76, T40: 72, T410: 67, T411: 67, T42: 67},
        "ensureDefaultSupportedFeaturesRangeMaxNotZero": {T39: 95, T40: 91, T410: 86, T411: 86, T42: 86},
        "testLocalSupportedFeature": {T37: 71, T38: 84, T39: 103, T40: 99, T410: 94, T411: 94, T42: 94},
        "testReasonNotSupported": {T37: 79, T38: 92, T39: 111, T40: 107, T410: 102, T411: 102, T42: 102},
    },
    "ClusterControlManagerTest": {
        "testRegistrationWithIncorrectClusterId": {T37: 251, T38: 254, T39: 260, T40: 247, T410: 247, T411: 247,
                                                   T42: 247},
        "testRegistrationWithUnsupportedFeature": {T39: 540, T40: 532, T410: 536, T411: 536, T42: 536},
        "testRegistrationWithUnsupportedKraftVersion": {T39: 588, T40: 581, T410: 587, T411: 587, T42: 587},
        "testRegistrationWithUnsupportedMetadataVersion": {T37: 528, T38: 536, T39: 669, T40: 665, T410: 673,
                                                           T411: 673, T42: 673},
        "testRegisterControlWithOlderMetadataVersion": {T37: 580, T38: 589, T39: 720},
        "testRegisterControlWithUnsupportedMetadataVersion": {T40: 723, T410: 733, T411: 733, T42: 733},
    },
}

# MetadataVersion per tag (server-common/.../MetadataVersion.java@tag).
LATEST_PRODUCTION = {T37: 19, T38: 20, T39: 21, T40: 25, T410: 27, T411: 27, T42: 29, T430: 30, T431: 30, T440: 33}
LATEST_TESTING = {T37: 20, T38: 21, T39: 23, T40: 26, T410: 29, T411: 29, T42: 30, T430: 31, T431: 31, T440: 34}
MINIMUM = {T37: 1, T38: 1, T39: 1, T40: 7, T410: 7, T411: 7, T42: 7, T430: 7, T431: 7, T440: 7}  # MINIMUM_KRAFT_VERSION (3.x), MINIMUM_VERSION (4.x)

# The other production features' maximum in QuorumFeatures.defaultFeatureMap(false / true), as
# QuorumFeaturesTest computes it from Features/Feature@tag (a feature whose maximum is 0 is left out
# from 3.9 on; 3.8's PRODUCTION_FEATURES is empty, 3.7 has no Features class).
_F40 = {KRAFT: [0, 1], TV: [0, 2], GV: [0, 1], ELR: [0, 1]}
_F42 = {**_F40, SHARE: [0, 1], STREAMS: [0, 1]}
_F44 = {**_F40, SHARE: [0, 2], STREAMS: [0, 1]}  # share.version 2 (ShareVersion.SV_2, bootstrap 4.4-IV0)
PRODUCTION_FEATURES: dict[str, dict[str, list[int]]] = {
    T37: {}, T38: {}, T39: {KRAFT: [0, 1]}, T40: _F40, T410: {**_F40, SHARE: [0, 1]},
    T411: {**_F40, SHARE: [0, 1]}, T42: _F42, T430: _F42, T431: _F42, T440: _F44,
}
UNSTABLE_FEATURES: dict[str, dict[str, list[int]]] = {
    T37: {}, T38: {}, T39: {KRAFT: [0, 1], TV: [0, 2]}, T40: _F40, T410: _F42,
    T411: _F42, T42: _F42, T430: _F42, T431: _F42, T440: _F44,
}


def default_feature_map(tag: str, unstable: bool) -> dict[str, list[int]]:
    """QuorumFeatures.defaultFeatureMap(unstable) (defaultSupportedFeatureMap in 4.1+) at tag."""
    top = LATEST_TESTING[tag] if unstable else LATEST_PRODUCTION[tag]
    return {MV: [MINIMUM[tag], top], **(UNSTABLE_FEATURES if unstable else PRODUCTION_FEATURES)[tag]}


def features(tag: str, overrides: dict[str, list[int]]) -> dict[str, list[int]]:
    """FeatureControlManagerTest.features(...): defaultFeatureMap(true) with the test's ranges put over it."""
    return {**default_feature_map(tag, True), **overrides}


# -- emitting one pytest test per tag ----------------------------------------------------------------

def transcribe(cls: str, method: str, tags: tuple[str, ...], marks: list[Any],
               xfail: dict[str, str] | None = None) -> Callable[[Callable[[str, str], None]], Callable[[str, str], None]]:
    """Emit test_<cls>_<method>__<release> for each tag, running body(tag, profile)."""

    def deco(body: Callable[[str, str], None]) -> Callable[[str, str], None]:
        for tag in tags:
            profile, suffix = TAGS[tag]
            name = f"test_{cls}_{method}__{suffix}"

            def make(tag: str = tag, profile: str = profile) -> Callable[[], None]:
                def run() -> None:
                    body(tag, profile)
                return run

            test = make()
            test.__name__ = test.__qualname__ = name
            test.__doc__ = (f"{cls}.{method}, {PATHS[cls]}:{LINES[cls][method][tag]}@{tag} "
                            f"(profile {profile}).\n\n{body.__doc__ or ''}")
            for m in marks:
                test = m(test)
            if xfail and tag in xfail:
                test = pytest.mark.xfail(strict=True, reason=xfail[tag])(test)
            assert name not in globals(), name
            globals()[name] = test
        return body

    return deco


# -- helpers --------------------------------------------------------------------------------------------

def is3(tag: str) -> bool:
    return tag in THREE_X


def restore(profile: str, mv: int, local: dict[str, list[int]], *, brokers: dict[int, dict[str, list[int]]] | None = None,
            finalized: dict[str, int] | None = None, epoch: int | None = None, kraft_version: int | None = None,
            cluster_id: str | None = None, controller: int = 0) -> Cluster:
    """FeatureControlManager.Builder: local controller 0 with these supported ranges, at this metadata.version."""
    c = Cluster(profile)
    cmd: dict[str, Any] = {"op": "restore_state", "metadata_version": mv,
                           "controllers": [{"id": controller, "software": profile, "ranges": local}],
                           "voters": [controller], "active_controller": controller}
    if brokers:
        cmd["brokers"] = [{"id": b, "software": profile, "ranges": r} for b, r in brokers.items()]
    if finalized:
        cmd["finalized"] = finalized
    if epoch is not None:
        cmd["epoch"] = epoch
    if kraft_version is not None:
        cmd["kraft_version"] = kraft_version
    if cluster_id is not None:
        cmd["cluster_id"] = cluster_id
    ok(c.apply(cmd))
    return c


def update(c: Cluster, *updates: tuple[str, int, str | None], validate_only: bool = False) -> dict[str, Any]:
    """manager.updateFeatures(updateMap, upgradeTypes, validateOnly): (feature, level, upgrade type or None)."""
    ups = []
    for name, level, utype in updates:
        u: dict[str, Any] = {"feature": name, "level": level}
        if utype is not None:
            u["upgrade_type"] = utype
        ups.append(u)
    return c.apply({"op": "update_features", "updates": ups, "validate_only": validate_only})


Err = tuple[str, str, str]  # (error name, reference rule, Kafka's ApiError message)


def expect_3x(out: dict[str, Any], per_feature: dict[str, Err | None]) -> None:
    """3.x: Map<String, ApiError> -- one result per requested feature, the request itself NONE."""
    ok(out)
    results = out["results"]
    assert set(results) == set(per_feature), out
    for name, err in per_feature.items():
        r = results[name]
        if err is None:
            assert r["error"] == "NONE", out
        else:
            error, rule, message = err
            assert (r["error"], r["message"], r.get("rule")) == (error, message, rule), out


def expect_4x(out: dict[str, Any], err: Err | None) -> None:
    """4.x: one ApiError for the whole request."""
    if err is None:
        ok(out)
        return
    error, rule, message = err
    refused(out, error, rule, message)
    assert out["message"].endswith(message), out


def expect(tag: str, out: dict[str, Any], per_feature: dict[str, Err | None]) -> None:
    """The same Kafka assertion in either shape: 4.x reports the (single) failing feature, if any."""
    if is3(tag):
        expect_3x(out, per_feature)
    else:
        failed = [e for e in per_feature.values() if e is not None]
        assert len(failed) <= 1
        expect_4x(out, failed[0] if failed else None)


def feature_records(out: dict[str, Any]) -> list[tuple[str, int]]:
    return [(r["name"], r["level"]) for r in out.get("records") or [] if r["type"] == "FeatureLevelRecord"]


def finalized(c: Cluster) -> dict[str, int]:
    return ok(c.apply({"op": "state"}))["finalized"]


def metadata_version(c: Cluster) -> int:
    return ok(c.apply({"op": "state"}))["metadata_version"]


def register_broker(c: Cluster, ranges: dict[str, list[int]], profile: str, **kw: Any) -> dict[str, Any]:
    return c.apply({"op": "register", "role": "broker", "node": 0, "ranges": ranges, "software": profile,
                    "cluster_id": CLUSTER_ID, **kw})


def invalid_version(level: int, name: str, reason: str) -> str:
    return f"Invalid update version {level} for feature {name}. {reason}"


NO_DOWNGRADE_TYPE = ("Can't downgrade the version of this feature without setting the upgrade type to either "
                     "safe or unsafe downgrade.")


# =================================================================================================
# FeatureControlManagerTest
# =================================================================================================
FCM = "FeatureControlManagerTest"


@transcribe(FCM, "testUpdateFeatures", THREE_X,
            [pytest.mark.rule("KIP584-UPD-03", "fail"), pytest.mark.rule("KIP584-UPD-13", "fail"),
             pytest.mark.rule("KIP584-UPD-10", "pass")])
def _fcm_update_features_3x(tag: str, profile: str) -> None:
    """Local controller 0 = features("foo", 1, 2) at 3.3-IV0: foo=3 is out of its range; {foo=2, bar=1}
    applies foo and fails bar (not supported: 0-0), each feature answered on its own."""
    c = restore(profile, 4, features(tag, {"foo": [1, 2]}))
    assert finalized(c) == {MV: 4}
    out = update(c, ("foo", 3, "SAFE_DOWNGRADE"))
    expect_3x(out, {"foo": (IUV, "KIP584-UPD-03", invalid_version(3, "foo", "Local controller 0 only supports versions 1-2"))})
    assert feature_records(out) == []
    out = update(c, ("foo", 2, None), ("bar", 1, None))
    expect_3x(out, {"foo": None,
                    "bar": (IUV, "KIP584-UPD-13", invalid_version(1, "bar", "Local controller 0 does not support this feature."))})
    assert feature_records(out) == [("foo", 2)]


@transcribe(FCM, "testUpdateFeatures", FOUR_X,
            [pytest.mark.rule("KIP584-UPD-03", "fail"), pytest.mark.rule("KIP584-UPD-13", "fail"),
             pytest.mark.rule("KIP1022-UPD-02", "fail"), pytest.mark.rule("KIP1022-UPD-01", "pass")])
def _fcm_update_features_4x(tag: str, profile: str) -> None:
    """Local controller 0 = features(test.feature.version, 0, 2) at MINIMUM_VERSION: level 3 is out of range;
    {test.feature.version=1, bar=1} fails as a whole on bar; test.feature.version=1 alone writes its record."""
    c = restore(profile, 7, features(tag, {TFV: [0, 2]}))
    assert finalized(c) == {MV: 7}
    out = update(c, (TFV, 3, "SAFE_DOWNGRADE"))
    expect_4x(out, (IUV, "KIP584-UPD-03", invalid_version(3, TFV, "Local controller 0 only supports versions 0-2")))
    assert feature_records(out) == []
    out = update(c, (TFV, 1, None), ("bar", 1, None))
    expect_4x(out, (IUV, "KIP584-UPD-13", invalid_version(1, "bar", "Local controller 0 does not support this feature.")))
    assert feature_records(out) == []
    out = update(c, (TFV, 1, None))
    expect_4x(out, None)
    assert feature_records(out) == [(TFV, 1)]


@transcribe(FCM, "testReplay", ALL_TAGS, [pytest.mark.rule("KIP584-EPOCH-01", "pass")])
def _fcm_replay(tag: str, profile: str) -> None:
    """Replaying FeatureLevelRecord foo=2 finalizes foo 2 next to metadata.version; the finalized
    features read at offset 123 carry epoch 123 (restore_state replays the records and pads the log
    to offset 123)."""
    mv = 4 if is3(tag) else 7  # IBP_3_3_IV0 (3.x), MINIMUM_VERSION (4.x)
    c = restore(profile, mv, features(tag, {"foo": [1, 2]}), finalized={"foo": 2}, epoch=123)
    av = ok(c.apply({"op": "api_versions", "node": 0}))
    assert av["finalized"] == {MV: mv, "foo": 2}, av
    assert av["epoch"] == 123, av


@transcribe(FCM, "testReplayKraftVersionFeatureLevel", FOUR_X, [pytest.mark.rule("KIP584-API-02", "pass")])
def _fcm_replay_kraft_version_feature_level(tag: str, profile: str) -> None:
    """A FeatureLevelRecord for kraft.version (level LATEST_PRODUCTION = 1) does not finalize it: the
    finalized features stay {metadata.version: MINIMUM_VERSION} (kraft.version comes from the raft layer,
    here 0, and level 0 is never listed)."""
    c = restore(profile, 7, features(tag, {"foo": [1, 2]}), finalized={KRAFT: 1}, epoch=123)
    assert finalized(c) == {MV: 7}
    av = ok(c.apply({"op": "api_versions", "node": 0}))
    assert av["finalized"] == {MV: 7}, av


@transcribe(FCM, "testUpdateFeaturesErrorCases", ALL_TAGS,
            [pytest.mark.rule("KIP584-UPD-04", "fail"), pytest.mark.rule("KIP584-UPD-05", "fail"),
             pytest.mark.rule("KIP584-UPD-05", "pass")])
def _fcm_update_features_error_cases(tag: str, profile: str) -> None:
    """Broker 5 supports only bar (3.x) / transaction.version 0-2 (4.x): foo=3 is refused by broker 5
    (does not support this feature); bar/TV is raised, then lowered without a downgrade type (refused)
    and with SAFE_DOWNGRADE (one FeatureLevelRecord).  3.x runs at latestProduction (builder default),
    4.x at MINIMUM_VERSION."""
    if is3(tag):
        f, local_f, broker_f, mv = "bar", [0, 3], [0, 3], LATEST_PRODUCTION[tag]
        hi, lo = 3, 2
    else:
        f, local_f, broker_f, mv = TV, [0, 3], [0, 2], 7
        hi, lo = 2, 1
    c = restore(profile, mv, features(tag, {"foo": [1, 5], f: local_f}), brokers={5: {f: broker_f}})
    out = update(c, ("foo", 3, "SAFE_DOWNGRADE"))
    expect(tag, out, {"foo": (IUV, "KIP584-UPD-04", invalid_version(3, "foo", "Broker 5 does not support this feature."))})
    assert feature_records(out) == []
    out = update(c, (f, hi, None))
    expect(tag, out, {f: None})
    assert feature_records(out) == [(f, hi)]
    out = update(c, (f, lo, None))
    expect(tag, out, {f: (IUV, "KIP584-UPD-05", invalid_version(lo, f, NO_DOWNGRADE_TYPE))})
    assert feature_records(out) == []
    out = update(c, (f, lo, "SAFE_DOWNGRADE"))
    expect(tag, out, {f: None})
    assert feature_records(out) == [(f, lo)]


@transcribe(FCM, "testReplayRecords", ALL_TAGS, [pytest.mark.rule("KIP584-UPD-03", "pass")])
def _fcm_replay_records(tag: str, profile: str) -> None:
    """Raising two features at once and replaying the records: metadata.version unchanged, both
    features finalized, and nothing else (3.x foo=5, bar=1 at 3.3-IV0; 4.x test.feature.version=1,
    transaction.version=2 at MINIMUM_VERSION)."""
    if is3(tag):
        mv, local, ups = 4, {"foo": [1, 5], "bar": [1, 2]}, {"foo": 5, "bar": 1}
    else:
        mv, local, ups = 7, {TFV: [0, 5], TV: [0, 2]}, {TFV: 1, TV: 2}
    c = restore(profile, mv, features(tag, local))
    out = update(c, *[(n, lv, None) for n, lv in ups.items()])
    expect(tag, out, dict.fromkeys(ups))
    assert metadata_version(c) == mv
    assert finalized(c) == {MV: mv, **ups}


# The metadata.version manager: TEST_MANAGER_BUILDER1 (3.x: local 3.3-IV0..3.3-IV3, at 3.3-IV2) and
# createTestManager() (4.x: local MINIMUM_VERSION..3.6-IV0, at 3.4-IV0).
def mv_manager(tag: str, profile: str, mv: int | None = None) -> Cluster:
    if is3(tag):
        return restore(profile, 6 if mv is None else mv, features(tag, {MV: [4, 7]}))
    return restore(profile, 8 if mv is None else mv, features(tag, {MV: [7, 12]}))


@transcribe(FCM, "testApplyMetadataVersionChangeRecord", ALL_TAGS, [pytest.mark.rule("KIP778-MV-01", "pass")])
def _fcm_apply_mv_change_record(tag: str, profile: str) -> None:
    """ADAPTED: Kafka replays a FeatureLevelRecord raising metadata.version by one (3.3-IV2 -> 3.3-IV3;
    4.x 3.4-IV0 -> 3.5-IV0); the reference has no bare replay, so the record is written by an
    UpdateFeatures (UPGRADE) and replayed; metadata.version is then the new level."""
    c = mv_manager(tag, profile)
    target = 7 if is3(tag) else 9
    out = update(c, (MV, target, "UPGRADE"))
    expect(tag, out, {MV: None})
    assert feature_records(out) == [(MV, target)]
    assert metadata_version(c) == target


@transcribe(FCM, "testCannotDowngradeToVersionBeforeMinimumSupportedKraftVersion", THREE_X,
            [pytest.mark.rule("KIP584-UPD-03", "fail"), pytest.mark.rule("KIP584-UPD-09", "fail")])
def _fcm_cannot_downgrade_before_min_supported(tag: str, profile: str) -> None:
    """UNSAFE_DOWNGRADE to 3.2-IV0 (3), validate only: outside the local controller's 4-7."""
    c = mv_manager(tag, profile)
    out = update(c, (MV, 3, "UNSAFE_DOWNGRADE"), validate_only=True)
    expect_3x(out, {MV: (IUV, "KIP584-UPD-03", invalid_version(3, MV, "Local controller 0 only supports versions 4-7"))})
    assert feature_records(out) == []


@transcribe(FCM, "testCannotDowngradeToHigherVersion", ALL_TAGS, [pytest.mark.rule("KIP584-UPD-06", "fail")])
def _fcm_cannot_downgrade_to_higher(tag: str, profile: str) -> None:
    """SAFE_DOWNGRADE to a higher metadata.version (3.x 7 from 6; 4.x 9 from 8), validate only."""
    c = mv_manager(tag, profile)
    target = 7 if is3(tag) else 9
    out = update(c, (MV, target, "SAFE_DOWNGRADE"), validate_only=True)
    expect(tag, out, {MV: (IUV, "KIP584-UPD-06", invalid_version(target, MV, "Can't downgrade to a newer version."))})
    assert feature_records(out) == []


@transcribe(FCM, "testCannotUnsafeDowngradeToHigherVersion", ALL_TAGS, [pytest.mark.rule("KIP584-UPD-06", "fail")])
def _fcm_cannot_unsafe_downgrade_to_higher(tag: str, profile: str) -> None:
    """UNSAFE_DOWNGRADE to a higher metadata.version (3.x 7 from 6; 4.x 9 from 8), validate only."""
    c = mv_manager(tag, profile)
    target = 7 if is3(tag) else 9
    out = update(c, (MV, target, "UNSAFE_DOWNGRADE"), validate_only=True)
    expect(tag, out, {MV: (IUV, "KIP584-UPD-06", invalid_version(target, MV, "Can't downgrade to a newer version."))})
    assert feature_records(out) == []


@transcribe(FCM, "testCannotUpgradeToLowerVersion", ALL_TAGS, [pytest.mark.rule("KIP584-UPD-05", "fail")])
def _fcm_cannot_upgrade_to_lower(tag: str, profile: str) -> None:
    """UPGRADE to a lower metadata.version (3.x 4 from 3.3-IV2; 4.x 3.5-IV0 from 3.5-IV1), validate only."""
    if is3(tag):
        c, target = mv_manager(tag, profile), 4
    else:
        c, target = mv_manager(tag, profile, mv=10), 9
    out = update(c, (MV, target, "UPGRADE"), validate_only=True)
    expect(tag, out, {MV: (IUV, "KIP584-UPD-05", invalid_version(target, MV, NO_DOWNGRADE_TYPE))})
    assert feature_records(out) == []


@transcribe(FCM, "testCanUpgradeToHigherVersion", ALL_TAGS,
            [pytest.mark.rule("KIP584-UPD-09", "pass"), pytest.mark.rule("KIP584-UPD-03", "pass")])
def _fcm_can_upgrade_to_higher(tag: str, profile: str) -> None:
    """UPGRADE metadata.version (3.x to 3.3-IV3; 4.x to 3.5-IV0), validate only: NONE and no records."""
    c = mv_manager(tag, profile)
    before = metadata_version(c)
    target = 7 if is3(tag) else 9
    out = update(c, (MV, target, "UPGRADE"), validate_only=True)
    expect(tag, out, {MV: None})
    assert out["records"] == []
    assert metadata_version(c) == before


MV_DOWNGRADE_REFUSED = "Refusing to perform the requested downgrade because it might delete metadata information."
MV_UNSAFE_DISABLED = "Unsafe metadata downgrade is not supported in this version."


def mv_downgrade_message(tag: str, target: int, current: int, text: str) -> str:
    if tag in (T42, T430, T431, T440):  # "Unsupported metadata.version downgrade from 8 to 7. ..." (:342@4.2.0-rc1..4.4)
        return f"Unsupported metadata.version downgrade from {current} to {target}. {text}"
    return f"Invalid metadata.version {target}. {text}"


@transcribe(FCM, "testCannotUseSafeDowngradeIfMetadataChanged", ALL_TAGS, [pytest.mark.rule("KIP778-MV-04", "fail")])
def _fcm_cannot_safe_downgrade_if_metadata_changed(tag: str, profile: str) -> None:
    """SAFE_DOWNGRADE across a metadata change (3.x 3.3-IV2 -> 3.3-IV0; 4.x 3.4-IV0 -> 3.3-IV3), validate only.
    4.2.0-rc1 words it "Unsupported metadata.version downgrade from 8 to 7. ..."."""
    c = mv_manager(tag, profile)
    current, target = (6, 4) if is3(tag) else (8, 7)
    out = update(c, (MV, target, "SAFE_DOWNGRADE"), validate_only=True)
    expect(tag, out, {MV: (IUV, "KIP778-MV-04", mv_downgrade_message(tag, target, current, MV_DOWNGRADE_REFUSED))})


@transcribe(FCM, "testUnsafeDowngradeIsTemporarilyDisabled", ALL_TAGS, [pytest.mark.rule("KIP778-MV-05", "fail")])
def _fcm_unsafe_downgrade_disabled(tag: str, profile: str) -> None:
    """UNSAFE_DOWNGRADE across a metadata change (3.x 3.3-IV2 -> 3.3-IV0; 4.x 3.4-IV0 -> 3.3-IV3), validate only."""
    c = mv_manager(tag, profile)
    current, target = (6, 4) if is3(tag) else (8, 7)
    out = update(c, (MV, target, "UNSAFE_DOWNGRADE"), validate_only=True)
    expect(tag, out, {MV: (IUV, "KIP778-MV-05", mv_downgrade_message(tag, target, current, MV_UNSAFE_DISABLED))})


@transcribe(FCM, "testCanUseSafeDowngradeIfMetadataDidNotChange", FOUR_X, [pytest.mark.rule("KIP778-MV-03", "pass")])
def _fcm_can_safe_downgrade_if_metadata_did_not_change(tag: str, profile: str) -> None:
    """4.x: local MINIMUM_VERSION..3.6-IV0 at 3.5-IV0; SAFE_DOWNGRADE to 3.4-IV0 (3.5-IV0 changed no
    metadata), validate only: NONE.  (The 3.x version needs setMinimumBootstrapVersion(3.0-IV0): listed.)"""
    c = mv_manager(tag, profile, mv=9)
    out = update(c, (MV, 8, "SAFE_DOWNGRADE"), validate_only=True)
    expect_4x(out, None)
    assert out["records"] == []


@transcribe(FCM, "testCannotDowngradeBefore3_3_IV0", THREE_X, [pytest.mark.rule("KIP778-MV-02", "fail")])
def _fcm_cannot_downgrade_before_3_3_iv0(tag: str, profile: str) -> None:
    """Local 3.0-IV0..3.3-IV3 at 3.3-IV0; UNSAFE_DOWNGRADE to 3.2-IV0, validate only: below the minimum
    bootstrap version.  ADAPTED: Kafka's local range starts at IBP_3_0_IV0.featureLevel() = -1, which a
    range cannot state here; it starts at 1 (3.0-IV1) -- level 3 lies inside either way."""
    c = restore(profile, 4, features(tag, {MV: [1, 7]}))
    out = update(c, (MV, 3, "UNSAFE_DOWNGRADE"), validate_only=True)
    expect_3x(out, {MV: (IUV, "KIP778-MV-02", "Invalid metadata.version 3. Unable to set a metadata.version less than 3.3-IV0")})


@transcribe(FCM, "testCannotDowngradeBeforeMinimumKraftVersion", FOUR_X, [pytest.mark.rule("KIP584-UPD-03", "fail")])
def _fcm_cannot_downgrade_before_min_kraft(tag: str, profile: str) -> None:
    """Local MINIMUM_VERSION..latestTesting at MINIMUM_VERSION; UNSAFE_DOWNGRADE to 3.3-IV2 (6), validate
    only: outside the local range (4.0.0 hard-codes "7-26", 4.1+ formats MINIMUM_VERSION-latestTesting)."""
    lt = LATEST_TESTING[tag]
    c = restore(profile, 7, features(tag, {MV: [7, lt]}))
    out = update(c, (MV, 6, "UNSAFE_DOWNGRADE"), validate_only=True)
    expect_4x(out, (IUV, "KIP584-UPD-03", invalid_version(6, MV, f"Local controller 0 only supports versions 7-{lt}")))


@transcribe(FCM, "testCreateFeatureLevelRecords", ALL_TAGS,
            [pytest.mark.rule("KIP584-UPD-07", "pass"), pytest.mark.rule("KIP584-UPD-04", "pass")])
def _fcm_create_feature_level_records(tag: str, profile: str) -> None:
    """Local {metadata.version: MIN..latestTesting, F: 0-2} (no defaults), broker 1 {F: 0-3}; F = foo (3.x)
    or test.feature.version (4.x).  F=1 writes F 1 and finalizes it; F=0 UNSAFE_DOWNGRADE writes F 0 and
    F is no longer finalized.  3.x runs at latestProduction (builder default), 4.x at MINIMUM_VERSION."""
    f = "foo" if is3(tag) else TFV
    mv = LATEST_PRODUCTION[tag] if is3(tag) else 7
    local = {MV: [MINIMUM[tag], LATEST_TESTING[tag]], f: [0, 2]}
    c = restore(profile, mv, local, brokers={1: {f: [0, 3]}})
    out = update(c, (f, 1, "UPGRADE"))
    expect(tag, out, {f: None})
    assert feature_records(out) == [(f, 1)]
    assert finalized(c).get(f) == 1
    out = update(c, (f, 0, "UNSAFE_DOWNGRADE"))
    expect(tag, out, {f: None})
    assert feature_records(out) == [(f, 0)]
    assert f not in finalized(c)


@transcribe(FCM, "testUpgradeElrFeatureLevel", FOUR_X, [pytest.mark.rule("KIP1022-UPD-01", "pass")])
def _fcm_upgrade_elr(tag: str, profile: str) -> None:
    """Local {metadata.version: 4.0-IV1..latestTesting, ELR: 0-1}, broker 1 {ELR: 0-1}, at 4.0-IV1:
    eligible.leader.replicas.version=1 succeeds with one FeatureLevelRecord and is finalized.  The records
    compared are the FeatureLevelRecords: the min.insync.replicas ConfigRecord the outcome may also carry
    is ConfigurationControlManager.updateFeatures' (ConfigurationControlManager.java:672@4.1.1), outside
    the FeatureControlManager under test."""
    c = restore(profile, 23, {MV: [23, LATEST_TESTING[tag]], ELR: [0, 1]}, brokers={1: {ELR: [0, 1]}})
    out = update(c, (ELR, 1, "UPGRADE"))
    expect_4x(out, None)
    assert feature_records(out) == [(ELR, 1)]
    assert finalized(c).get(ELR) == 1


# =================================================================================================
# QuorumFeaturesTest
# =================================================================================================
QF = "QuorumFeaturesTest"


def controller_supported(tag: str, profile: str, unstable: bool) -> dict[str, list[int]]:
    """What controller 0 of this release advertises (ApiVersions at its maximum version, which lists
    min-0 ranges): QuorumFeatures.defaultFeatureMap(unstable), the controller's local supported features."""
    c = Cluster(profile)
    ok(c.apply({"op": "restore_state", "metadata_version": LATEST_PRODUCTION[tag],
                "controllers": [{"id": 0, "software": profile, "unstable": unstable}]}))
    av = ok(c.apply({"op": "api_versions", "node": 0}))
    return av["supported"]  # type: ignore[no-any-return]


@transcribe(QF, "testDefaultFeatureMap", ALL_TAGS, [pytest.mark.rule("KIP1022-OBS-01", "pass")])
def _qf_default_feature_map(tag: str, profile: str) -> None:
    """defaultFeatureMap(false): metadata.version MINIMUM..LATEST_PRODUCTION plus each production feature
    (3.8: [0, latestProduction]; 3.9+: [minimumProduction, max] when max > 0)."""
    assert controller_supported(tag, profile, False) == default_feature_map(tag, False)


@transcribe(QF, "testDefaultFeatureMapWithUnstable", ALL_TAGS, [pytest.mark.rule("KIP1022-OBS-01", "pass")])
def _qf_default_feature_map_unstable(tag: str, profile: str) -> None:
    """defaultFeatureMap(true): metadata.version MINIMUM..latestTesting plus each production feature at its
    level for latestTesting (when > 0)."""
    assert controller_supported(tag, profile, True) == default_feature_map(tag, True)


@transcribe(QF, "ensureDefaultSupportedFeaturesRangeMaxNotZero", (T39, *FOUR_X), [pytest.mark.rule("KIP1022-OBS-01", "pass")])
def _qf_range_max_not_zero(tag: str, profile: str) -> None:
    """@ValueSource(booleans = {true, false}): no default supported range has maximum 0."""
    for unstable in (True, False):
        supported = controller_supported(tag, profile, unstable)
        assert supported and all(hi != 0 for _, hi in supported.values()), (unstable, supported)


QF_LOCAL = {"foo": [0, 3], "bar": [0, 4], "baz": [2, 2]}


@transcribe(QF, "testLocalSupportedFeature", ALL_TAGS, [pytest.mark.rule("KIP584-UPD-13", "fail")])
def _qf_local_supported_feature(tag: str, profile: str) -> None:
    """QuorumFeatures(0, {foo: 0-3, bar: 0-4, baz: 2-2}, [0, 1, 2]): localSupportedFeature gives those
    ranges and 0-0 for quux.  Read as what controller 0 advertises, and (quux = 0-0) as the reason an
    update of quux to 1 fails.  The voters are [0]: voters 1 and 2 would add KIP-919 checks
    (testIsControllerId, listed) that localSupportedFeature does not make."""
    c = restore(profile, LATEST_PRODUCTION[tag], QF_LOCAL)
    av = ok(c.apply({"op": "api_versions", "node": 0}))
    assert av["supported"] == QF_LOCAL, av
    out = update(c, ("quux", 1, None))
    expect(tag, out, {"quux": (IUV, "KIP584-UPD-13", invalid_version(1, "quux", "Local controller 0 does not support this feature."))})


@transcribe(QF, "testReasonNotSupported", ALL_TAGS,
            [pytest.mark.rule("KIP584-UPD-03", "fail"), pytest.mark.rule("KIP584-UPD-03", "pass")])
def _qf_reason_not_supported(tag: str, profile: str) -> None:
    """reasonNotSupported(10, "Local controller 0", 0-3) is "Local controller 0 only supports versions 0-3";
    level 3 has no reason.  Read through UpdateFeatures on controller 0 supporting foo 0-3: foo=10 fails
    with that reason; foo=3 passes the range check -- in 3.x it succeeds, in 4.x it then fails the next
    check, FeatureControlManager's Feature.featureFromName (FeatureControlManager.java:309@4.1.1):
    "Feature foo not found." (foo is no Feature), which is not a range reason."""
    c = restore(profile, LATEST_PRODUCTION[tag], {**default_feature_map(tag, True), "foo": [0, 3]})
    out = update(c, ("foo", 10, None), validate_only=True)
    expect(tag, out, {"foo": (IUV, "KIP584-UPD-03", invalid_version(10, "foo", "Local controller 0 only supports versions 0-3"))})
    out = update(c, ("foo", 3, None), validate_only=True)
    if is3(tag):
        expect_3x(out, {"foo": None})
    else:
        expect_4x(out, (IUV, "KIP584-UPD-13", invalid_version(3, "foo", "Feature foo not found.")))
        assert "only supports" not in out["message"]


# =================================================================================================
# ClusterControlManagerTest (feature-related registration cases)
# =================================================================================================
CCM = "ClusterControlManagerTest"
# ClusterControlManagerTest registers broker 0 next to QuorumFeatures node 0; a broker here cannot carry a
# controller's id (INVALID_COMMAND "node 0 is a controller"), and no assertion names the controller, so
# the controller is 3000 (ADAPTED).
CCM_CONTROLLER = 3000


def unable(tag: str, name: str, level: int, lo: int, hi: int) -> str:
    if tag in (T37, T38):
        return (f"Unable to register because the broker does not support version {level} of {name}. "
                f"It wants a version between {lo} and {hi}, inclusive.")
    return (f"Unable to register because the broker does not support finalized version {level} of {name}. "
            f"The broker wants a version between {lo} and {hi}, inclusive.")


@transcribe(CCM, "testRegistrationWithIncorrectClusterId", ALL_TAGS, [pytest.mark.rule("KIP584-REG-03", "fail")])
def _ccm_incorrect_cluster_id(tag: str, profile: str) -> None:
    """A BrokerRegistration with cluster id WIjw3grwRZmR2uOpdpVXbg on cluster fPZv1VBsRFmnlRvmGcOW9w throws
    InconsistentClusterIdException (only the type is asserted).  Controller 0: defaultFeatureMap(true)."""
    c = restore(profile, LATEST_PRODUCTION[tag], default_feature_map(tag, True), cluster_id=CLUSTER_ID, controller=CCM_CONTROLLER)
    out = c.apply({"op": "register", "role": "broker", "node": 0, "software": profile,
                   "cluster_id": "WIjw3grwRZmR2uOpdpVXbg"})
    refused(out, "INCONSISTENT_CLUSTER_ID", "KIP584-REG-03")


@transcribe(CCM, "testRegistrationWithUnsupportedFeature", (T39, *FOUR_X), [pytest.mark.rule("KIP584-REG-02", "fail")])
def _ccm_unsupported_feature(tag: str, profile: str) -> None:
    """Finalized test.feature.version=1 at 3.7-IV0; a broker whose request lists only metadata.version
    (3.1-IV0..3.7-IV0 in 3.9, MINIMUM_VERSION..3.7-IV0 in 4.x) is refused: it is taken to support 0-0."""
    lo = 2 if is3(tag) else 7
    c = restore(profile, 15, {MV: [lo, 15], TFV: [0, 1]}, finalized={TFV: 1}, cluster_id=CLUSTER_ID, controller=CCM_CONTROLLER)
    out = register_broker(c, {MV: [lo, 15]}, profile)
    refused(out, UV, "KIP584-REG-02")
    assert out["message"] == unable(tag, TFV, 1, 0, 0), out


@transcribe(CCM, "testRegistrationWithUnsupportedKraftVersion", (T39, *FOUR_X),
            [pytest.mark.rule("KIP584-REG-02", "fail"), pytest.mark.rule("KIP584-REG-01", "fail"),
             pytest.mark.rule("KIP584-REG-01", "pass")])
def _ccm_unsupported_kraft_version(tag: str, profile: str) -> None:
    """At 3.9-IV0 with kraft.version 1 (the quorum controller adds the raft layer's kraft.version to the
    finalized features): a broker listing only metadata.version 3.9-IV0 is refused; one listing
    kraft.version 0-0 too is refused with the same message; one listing kraft.version 1-1 registers."""
    lo = 2 if is3(tag) else 7
    c = restore(profile, 21, {MV: [lo, 21], KRAFT: [1, 1]}, kraft_version=1, cluster_id=CLUSTER_ID, controller=CCM_CONTROLLER)
    msg = unable(tag, KRAFT, 1, 0, 0)
    out = register_broker(c, {MV: [21, 21]}, profile)
    refused(out, UV, "KIP584-REG-02")
    assert out["message"] == msg, out
    out = register_broker(c, {MV: [21, 21], KRAFT: [0, 0]}, profile, version=4)
    refused(out, UV, "KIP584-REG-01")
    assert out["message"] == msg, out
    ok(register_broker(c, {MV: [21, 21], KRAFT: [1, 1]}, profile))


@transcribe(CCM, "testRegistrationWithUnsupportedMetadataVersion", ALL_TAGS,
            [pytest.mark.rule("KIP584-REG-07", "fail"), pytest.mark.rule("KIP584-REG-01", "fail")])
def _ccm_unsupported_metadata_version(tag: str, profile: str) -> None:
    """3.x: local 3.1-IV0..3.3-IV0 at 3.3-IV0; a request without features is taken to support
    metadata.version 1-1 only, one with 3.3-IV3 (7-7) is out too.  4.x: local 3.5-IV0..3.6-IV0 at 3.5-IV0;
    requests with 7-7 and with 8-8 are refused.  3.7/3.8 register with request version 1 (the Kafka
    test passes (short) 1)."""
    kw = {"version": 1} if tag in (T37, T38) else {}
    if is3(tag):
        c = restore(profile, 4, {MV: [2, 4]}, cluster_id=CLUSTER_ID, controller=CCM_CONTROLLER)
        out = register_broker(c, {}, profile, **kw)
        refused(out, UV, "KIP584-REG-07")
        assert out["message"] == unable(tag, MV, 4, 1, 1), out
        out = register_broker(c, {MV: [7, 7]}, profile, **kw)
        refused(out, UV, "KIP584-REG-01")
        assert out["message"] == unable(tag, MV, 4, 7, 7), out
    else:
        c = restore(profile, 9, {MV: [9, 12]}, cluster_id=CLUSTER_ID, controller=CCM_CONTROLLER)
        for v in (7, 8):
            out = register_broker(c, {MV: [v, v]}, profile)
            refused(out, UV, "KIP584-REG-01")
            assert out["message"] == unable(tag, MV, 9, v, v), out


CONTROLLER_MV_TOO_OLD = "The current MetadataVersion is too old to support controller registrations."


@transcribe(CCM, "testRegisterControlWithOlderMetadataVersion", THREE_X, [pytest.mark.rule("KIP919-CREG-01", "fail")])
def _ccm_register_controller_old_mv_3x(tag: str, profile: str) -> None:
    """At 3.3-IV0, controller 1's registration is refused."""
    c = restore(profile, 4, default_feature_map(tag, False), controller=CCM_CONTROLLER)
    out = c.apply({"op": "register", "role": "controller", "node": 1, "software": profile})
    refused(out, UV, "KIP919-CREG-01")
    assert out["message"] == CONTROLLER_MV_TOO_OLD, out


@transcribe(CCM, "testRegisterControlWithUnsupportedMetadataVersion", FOUR_X, [pytest.mark.rule("KIP919-CREG-01", "fail")])
def _ccm_register_controller_old_mv_4x(tag: str, profile: str) -> None:
    """At 3.6-IV2 (the last level before 3.7-IV0), controller 1's registration is refused."""
    c = restore(profile, 14, default_feature_map(tag, False), controller=CCM_CONTROLLER)
    out = c.apply({"op": "register", "role": "controller", "node": 1, "software": profile})
    refused(out, UV, "KIP919-CREG-01")
    assert out["message"] == CONTROLLER_MV_TOO_OLD, out
