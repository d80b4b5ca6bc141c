"""Behaviour profiles (fixtures/catalogs/*.json): schema, agreement with the primary dumps, and
internal consistency.

The dumps in fixtures/release-dumps are made by scripts/dump_release.py, which runs each release's own
classes (tests/test_release_dumps.py runs it); a profile derived from a dump must restate it exactly.
kafka-4.1 follows 4.1.1.  kip-1155 has no release: it is the 4.4.0 dump plus the edits listed in
scripts/catalog_overlays.toml, and is marked unverified.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reference_impl import InputError, _catalog, load_profile, profile_names
from tests.conftest import SHARED

ROOT = Path(__file__).resolve().parents[1]
DUMPS = ROOT / "fixtures" / "release-dumps"
MV = "metadata.version"

ALL_PROFILES = ["kafka-3.7", "kafka-3.8", "kafka-3.9", "kafka-3.9.1", "kafka-3.9.2", "kafka-4.0", "kafka-4.0.2", "kafka-4.1",
                "kafka-4.1.0", "kafka-4.1.1", "kafka-4.2", "kafka-4.3", "kafka-4.4", "kip-1155"]
DUMP_OF = {
    "kafka-3.7": "kafka-3.7.0.json",
    "kafka-3.8": "kafka-3.8.0.json",
    "kafka-3.9": "kafka-3.9.0.json",
    "kafka-3.9.1": "kafka-3.9.0.json",  # 3.9.1 changed no table (docs/research/patch-notes.md)
    "kafka-3.9.2": "kafka-3.9.2.json",
    "kafka-4.0": "kafka-4.0.0.json",
    "kafka-4.0.2": "kafka-4.0.2.json",
    "kafka-4.1": "kafka-4.1.1.json",  # the minor profile follows its newest patch
    "kafka-4.1.0": "kafka-4.1.0.json",
    "kafka-4.1.1": "kafka-4.1.1.json",
    "kafka-4.2": "kafka-4.2.0.json",
    "kafka-4.3": "kafka-4.3.0.json",  # 4.3.1 dumps alike
    "kafka-4.4": "kafka-4.4.0.json",
}
UNVERIFIED = {"kip-1155"}
# Every patch release on Maven Central, 3.7.0 to 4.4.0, and the profile it behaves as.
RELEASE_PROFILE = {
    "3.7.0": "kafka-3.7", "3.7.1": "kafka-3.7", "3.7.2": "kafka-3.7", "3.8.0": "kafka-3.8", "3.8.1": "kafka-3.8",
    "3.9.0": "kafka-3.9", "3.9.1": "kafka-3.9.1", "3.9.2": "kafka-3.9.2", "4.0.0": "kafka-4.0", "4.0.1": "kafka-4.0",
    "4.0.2": "kafka-4.0.2", "4.1.0": "kafka-4.1.0", "4.1.1": "kafka-4.1.1", "4.1.2": "kafka-4.1.1",
    "4.2.0": "kafka-4.2", "4.2.1": "kafka-4.2", "4.2.2": "kafka-4.2", "4.3.0": "kafka-4.3", "4.3.1": "kafka-4.3",
    "4.4.0": "kafka-4.4",
}


def _dump(name: str) -> dict[str, Any]:
    if not DUMPS.is_dir():
        pytest.fail(f"primary catalogue dumps not found at {DUMPS}", pytrace=False)
    path = DUMPS / name
    if not path.is_file():
        pytest.fail(f"primary catalogue dump {path} is missing", pytrace=False)
    return json.loads(path.read_text())


def test_release_dumps_agree_with_the_shared_ones() -> None:
    """The dumps made outside the project (where they are beside the clone) equal the project's own."""
    shared = SHARED / "kafka-catalogs"
    if not shared.is_dir():
        pytest.skip(f"{shared} is not beside this clone; nothing to compare the dumps with")
    names = sorted(p.name for p in shared.glob("*.json"))
    assert names and set(names) <= {p.name for p in DUMPS.glob("*.json")}
    assert all((shared / n).read_bytes() == (DUMPS / n).read_bytes() for n in names)


@pytest.fixture(scope="module")
def dumps() -> dict[str, dict[str, Any]]:
    return {profile: _dump(file) for profile, file in DUMP_OF.items()}


def _raw(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "fixtures" / "catalogs" / f"{name}.json").read_text())


# -- loading and schema ---------------------------------------------------------------------------

def test_all_profiles_present() -> None:
    assert list(profile_names()) == ALL_PROFILES


@pytest.mark.parametrize("name", ALL_PROFILES)
def test_profile_loads_and_validates(name: str) -> None:
    import jsonschema

    schema = json.loads((ROOT / "fixtures" / "schema" / "profile.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(_raw(name))
    p = load_profile(name)
    assert p.name == name


def test_default_profile_is_the_newest_verified_release() -> None:
    releases = [n for n in ALL_PROFILES if n not in UNVERIFIED]
    assert load_profile(None).name == "kafka-4.4" == max(releases, key=lambda n: tuple(map(int, n[6:].split("."))))


def test_releases_behind_each_profile() -> None:
    """Every patch release is listed under the profile it behaves as (patch profiles: their patches)."""
    listed: dict[str, list[str]] = {}
    for name in ALL_PROFILES:
        for v in load_profile(name).releases:
            listed.setdefault(v, []).append(name)
    also = {"4.1.1": "kafka-4.1", "4.1.2": "kafka-4.1"}  # kafka-4.1 follows its newest patch profile
    assert {v: sorted(ns) for v, ns in listed.items()} == \
        {v: sorted({p, also.get(v, p)}) for v, p in RELEASE_PROFILE.items()}
    assert load_profile("kip-1155").releases == ()


def test_unknown_profile_is_input_error() -> None:
    with pytest.raises(InputError, match="Unknown profile 'nope'"):
        load_profile("nope")


def test_derive_catalogs_check_passes() -> None:
    if not DUMPS.is_dir():
        pytest.fail(f"primary catalogue dumps not found at {DUMPS}", pytrace=False)
    r = subprocess.run([sys.executable, "scripts/derive_catalogs.py", "--check"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr


# -- agreement with the dumps -----------------------------------------------------------------------

@pytest.mark.parametrize("name", list(DUMP_OF))
def test_metadata_version_table_matches_dump(name: str, dumps: dict[str, dict[str, Any]]) -> None:
    d = dumps[name]["metadata_version"]
    p = load_profile(name)
    kraft = [v for v in d["versions"] if v["feature_level"] >= 1]
    pre = [v["version"] for v in d["versions"] if v["feature_level"] < 1]
    assert [(v.level, v.name, v.release, v.did_metadata_change, v.production) for v in
            (p.versions[lv] for lv in p.mv_levels)] == \
        [(v["feature_level"], v["version"], v["release"], v["did_metadata_change"], v["is_production"]) for v in kraft]
    assert list(p.pre_kraft) == pre
    minimum = d.get("MINIMUM_VERSION", d["MINIMUM_KRAFT_VERSION"])
    assert p.mv_minimum == minimum["feature_level"]
    assert p.mv_minimum_bootstrap == d["MINIMUM_BOOTSTRAP_VERSION"]["feature_level"]
    assert p.mv_latest_production == d["LATEST_PRODUCTION"]["feature_level"]
    assert p.mv_name(p.mv_latest_production) == d["LATEST_PRODUCTION"]["version"]
    assert p.mv_latest_testing == d["latest_testing"]["feature_level"]
    assert p.mv_name(p.mv_latest_testing) == d["latest_testing"]["version"]


@pytest.mark.parametrize("name", list(DUMP_OF))
def test_features_match_dump(name: str, dumps: dict[str, dict[str, Any]]) -> None:
    dump = dumps[name]
    p = load_profile(name)
    assert list(p.features) == [f["name"] for f in dump["features"]]
    assert list(p.production_feature_order) == dump["PRODUCTION_FEATURE_NAMES"]
    for f in dump["features"]:
        feat = p.features[f["name"]]
        assert feat.production == f["in_production_features"], f["name"]
        assert feat.latest_production == f["latest_production"], f["name"]
        assert feat.latest_testing == f["latest_testing"], f["name"]
        assert sorted(feat.levels) == [lv["level"] for lv in f["levels"]], f["name"]
        for lv in f["levels"]:
            mine = feat.levels[lv["level"]]
            assert mine.bootstrap_metadata_version == lv["bootstrap_metadata_version"]["feature_level"], \
                (f["name"], lv["level"])
            assert mine.dependencies == lv["dependencies"], (f["name"], lv["level"])


@pytest.mark.parametrize("name", list(DUMP_OF))
def test_default_level_matches_dump_for_every_metadata_version(name: str,
                                                              dumps: dict[str, dict[str, Any]]) -> None:
    dump = dumps[name]
    p = load_profile(name)
    level_of = {v["version"]: v["feature_level"] for v in dump["metadata_version"]["versions"]}
    checked = 0
    for f in dump["features"]:
        feat = p.features[f["name"]]
        for mv_name, expected in f["default_level_by_metadata_version"].items():
            assert feat.default_level(level_of[mv_name]) == expected, (f["name"], mv_name)
            checked += 1
    if dump["features"]:
        assert checked > 0


@pytest.mark.parametrize("name", list(DUMP_OF))
def test_default_supported_features_match_dump(name: str, dumps: dict[str, dict[str, Any]]) -> None:
    d = dumps[name]["default_supported_features"]
    p = load_profile(name)
    for role in ("controller", "broker"):
        for kind, unstable in (("production", False), ("unstable", True)):
            assert p.supported(role, unstable) == {k: tuple(v) for k, v in d[f"{role}_{kind}"].items()}, (role, kind)


def _without(raw: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in raw.items() if k not in keys}


def test_kip1155_is_the_44_dump_plus_listed_edits() -> None:
    """kip-1155 = the 4.4.0 tables + the overlay edits: a hypothetical 4.5-IV1 (35), production, so 4.5-IV0
    (34, unstable in 4.4.0) is production too."""
    base, mine = _raw("kafka-4.4"), _raw("kip-1155")
    assert mine["features"] == base["features"]
    assert mine["production_feature_order"] == base["production_feature_order"]
    mvb, mvm = base["metadata_version"], mine["metadata_version"]
    assert mvm["latest_production"] == 35 and mvm["latest_testing"] == 35
    by_level = {v["level"]: v for v in mvm["versions"]}
    for v in mvb["versions"]:
        assert by_level[v["level"]] == {**v, "production": True}
    assert by_level[35] == {"level": 35, "name": "4.5-IV1", "release": "4.5", "did_metadata_change": False,
                            "production": True}
    assert sorted(by_level) == list(range(7, 36))
    for role in ("controller", "broker"):
        for kind in ("production", "unstable"):
            ranges = dict(base["supported"][role][kind])
            ranges[MV] = [7, 35]
            assert mine["supported"][role][kind] == ranges, (role, kind)


# -- internal consistency --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL_PROFILES)
def test_metadata_version_levels_dense_and_flags_consistent(name: str) -> None:
    p = load_profile(name)
    levels = p.mv_levels
    assert levels == list(range(levels[0], levels[-1] + 1)), "metadata.version levels must be dense"
    assert levels[0] == p.mv_minimum
    assert levels[-1] == p.mv_latest_testing
    assert p.mv_minimum <= p.mv_minimum_bootstrap <= p.mv_latest_production <= p.mv_latest_testing
    for lv in levels:
        assert p.versions[lv].production == (lv <= p.mv_latest_production), lv
        assert p.versions[lv].name.startswith(p.versions[lv].release + "-IV"), lv
    assert len({v.name for v in p.versions.values()}) == len(levels)


@pytest.mark.parametrize("name", ALL_PROFILES)
def test_dependencies_point_at_real_features_and_levels(name: str) -> None:
    p = load_profile(name)
    for f in p.features.values():
        for lv in f.levels.values():
            assert lv.bootstrap_metadata_version in p.versions, (f.name, lv.level)
            for dep, dl in lv.dependencies.items():
                if dep == MV:
                    assert dl in p.versions, (f.name, lv.level, dep, dl)
                else:
                    assert dep in p.features and dl in p.features[dep].levels, (f.name, lv.level, dep, dl)


@pytest.mark.parametrize("name", ALL_PROFILES)
def test_production_features_consistent(name: str) -> None:
    """The KAFKA-18052 static checks, for the production features (the unit.test.* enums of 4.x are
    deliberately inconsistent test fixtures and are not held to them)."""
    p = load_profile(name)
    assert set(p.production_feature_order) == {f.name for f in p.features.values() if f.production}
    lp_mv = p.mv_latest_production
    for fname in p.production_feature_order:
        f = p.features[fname]
        assert f.latest_production in f.levels and f.latest_testing in f.levels, fname
        assert f.latest_production <= f.latest_testing, fname
        assert f.latest_production >= f.default_level(lp_mv), fname
        for dep, dl in f.levels[f.latest_production].dependencies.items():
            if dep == MV:
                assert dl <= lp_mv, (fname, dep, dl)
            else:
                assert dl <= p.features[dep].latest_production, (fname, dep, dl)
        # default values' dependencies are met by the other defaults at each production MV
        for mv in range(p.mv_minimum, lp_mv + 1):
            d = f.default_level(mv)
            for dep, dl in f.levels[d].dependencies.items():
                have = mv if dep == MV else p.features[dep].default_level(mv)
                assert have >= dl, (fname, mv, dep, dl)


@pytest.mark.parametrize("name", ALL_PROFILES)
def test_supported_ranges_consistent_with_latest_levels(name: str) -> None:
    """Default supported ranges: metadata.version [minimum, LP] / [minimum, latest testing]; a production
    feature [its lowest level, LP] / [lowest, latest testing], left out when the top would be 0."""
    p = load_profile(name)
    for role in ("controller", "broker"):
        for unstable in (False, True):
            ranges = p.supported(role, unstable)
            assert ranges[MV] == (p.mv_minimum, p.mv_latest_testing if unstable else p.mv_latest_production)
            expect = {MV: ranges[MV]}
            for fname in p.production_feature_order:
                f = p.features[fname]
                top = f.latest_testing if unstable else f.latest_production
                if top > 0:
                    expect[fname] = (min(f.levels), top)
            assert ranges == expect, (role, unstable)


@pytest.mark.parametrize("name", ALL_PROFILES)
def test_verified_flag(name: str) -> None:
    p = load_profile(name)
    assert p.verified is (name not in UNVERIFIED)
    if name in UNVERIFIED:
        assert "unverified" in p.release or "not shipped" in p.release or p.note


def test_kip1155_downgrade_capable_level_collides_with_no_shipped_level() -> None:
    p = load_profile("kip-1155")
    assert p.behaviour["kip1155"] is True
    capable = p.behaviour["kip1155_downgrade_capable_level"]
    assert capable == 35 == p.mv_latest_production
    v = p.mv(capable)
    assert v is not None and v.production and "hypothetical" in p.release
    # KIP-1155 rule 2: never below 3.7-IV0
    assert p.mv_name(p.behaviour["kip1155_minimum_downgrade_level"]) == "3.7-IV0"
    shipped = set()
    for other in ALL_PROFILES:
        if other != "kip-1155":
            q = load_profile(other)
            assert q.behaviour["kip1155"] is False
            shipped |= set(q.versions)
    assert capable not in shipped and max(shipped) == capable - 1  # 4.4.0 gives out 7..34


def test_kafka_43_facts_from_the_jars() -> None:
    """4.3.0/4.3.1: 4.3-IV0 (30, metadata changed) is the latest production level, 4.4-IV0 (31) the
    latest testing one (the old unverified profile had 30 for both)."""
    p = load_profile("kafka-4.3")
    assert p.verified and p.releases == ("4.3.0", "4.3.1")
    v30, v31 = p.mv(30), p.mv(31)
    assert v30 is not None and v31 is not None
    assert (p.mv_latest_production, p.mv_latest_testing) == (30, 31)
    assert (v30.name, v30.did_metadata_change, v30.production) == ("4.3-IV0", True, True)
    assert (v31.name, v31.production) == ("4.4-IV0", False)
    assert p.supported("controller", True)[MV] == (7, 31) and p.supported("broker", False)[MV] == (7, 30)
    test = p.features["test.feature.version"]  # pinned to the latest testing level
    assert test.levels[2].bootstrap_metadata_version == 31 and test.levels[2].dependencies == {MV: 31}
    v30_in_42 = load_profile("kafka-4.2").mv(30)
    assert v30_in_42 is not None and v30_in_42.did_metadata_change is False  # tools-notes Differences 12


def test_kafka_44_facts_from_the_jar() -> None:
    p = load_profile("kafka-4.4")
    assert p.verified and p.releases == ("4.4.0",)
    assert (p.mv_latest_production, p.mv_name(33), p.mv_latest_testing, p.mv_name(34)) == (33, "4.4-IV2", 34, "4.5-IV0")
    assert [(p.versions[lv].name, p.versions[lv].did_metadata_change) for lv in (31, 32, 33)] == \
        [("4.4-IV0", False), ("4.4-IV1", True), ("4.4-IV2", True)]
    share = p.features["share.version"]
    assert share.latest_production == 2 and share.levels[2].bootstrap_metadata_version == 31
    assert share.levels[2].dependencies == {} and share.default_level(33) == 2 and share.default_level(30) == 1
    assert p.supported("broker", False)["share.version"] == (0, 2)


@pytest.mark.parametrize(("name", "deps"), [("kafka-3.9", {MV: 21}), ("kafka-3.9.1", {MV: 21}), ("kafka-3.9.2", {}),
                                            ("kafka-4.0", {MV: 21}), ("kafka-4.0.2", {}), ("kafka-4.1.0", {MV: 21}),
                                            ("kafka-4.1.1", {}), ("kafka-4.3", {})])
def test_kraft_version_1_dependency_dropped_in_3_9_2_4_0_2_4_1_1(name: str, deps: dict[str, int]) -> None:
    assert load_profile(name).features["kraft.version"].levels[1].dependencies == deps


# -- corrupted profile files -------------------------------------------------------------------------

@pytest.fixture
def catalog_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A private catalogue directory for the loader; caches are cleared before and after."""
    monkeypatch.setattr(_catalog, "_catalog_dir", lambda: tmp_path)
    _catalog.profile_names.cache_clear()
    _catalog.load_profile.cache_clear()
    yield tmp_path
    _catalog.profile_names.cache_clear()
    _catalog.load_profile.cache_clear()


def test_corrupted_profile_names_file_and_path(catalog_dir: Path) -> None:
    raw = _raw("kafka-4.2")
    raw["metadata_version"]["versions"][3]["level"] = "eleven"
    (catalog_dir / "kafka-4.2.json").write_text(json.dumps(raw))
    with pytest.raises(InputError) as e:
        load_profile("kafka-4.2")
    msg = str(e.value)
    assert "kafka-4.2.json" in msg
    assert "metadata_version/versions/3/level" in msg


def test_profile_missing_required_key(catalog_dir: Path) -> None:
    raw = _raw("kafka-4.0")
    del raw["features"][1]["latest_production"]
    (catalog_dir / "kafka-4.0.json").write_text(json.dumps(raw))
    with pytest.raises(InputError) as e:
        load_profile("kafka-4.0")
    assert "kafka-4.0.json" in str(e.value)
    assert "features/1" in str(e.value)
    assert "latest_production" in str(e.value)


def test_profile_not_json(catalog_dir: Path) -> None:
    shutil.copy(ROOT / "fixtures" / "catalogs" / "kafka-3.9.json", catalog_dir / "kafka-3.9.json")
    (catalog_dir / "kafka-3.9.json").write_text('{"name": "kafka-3.9",')
    with pytest.raises(InputError) as e:
        load_profile("kafka-3.9")
    assert "kafka-3.9.json" in str(e.value)


def test_schema_validator_rejects_bad_behaviour_value() -> None:
    raw = _raw("kafka-3.8")
    raw["behaviour"]["format_style"] = "5.0"
    errors = list(_catalog._validator().iter_errors(raw))
    assert errors and [list(e.path) for e in errors] == [["behaviour", "format_style"]]
