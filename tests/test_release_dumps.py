"""The dump program (conformance/realkafka/dump/DumpRelease.java) run on real release jars, and
derive_catalogs.py --check --fresh's report of differences.

The JVM tests fetch their release into the per-user cache through Maven on first use (~30 s, needs
Maven Central); later runs take ~10 s each (javac once, then one JVM)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from conformance.realkafka import dump as dump_mod
from conformance.realkafka.releases import FetchError, Release, fetch
from scripts import derive_catalogs

ROOT = Path(__file__).resolve().parents[1]
DUMPS = ROOT / "fixtures" / "release-dumps"


def _fetch(version: str) -> Release:
    try:
        return fetch(version, progress=lambda _line: None)
    except FetchError as e:
        pytest.fail(f"Kafka {version} jars are needed for this test: {e}", pytrace=False)


def test_fresh_dump_of_4_4_0_reproduces_the_committed_dump() -> None:
    fresh = dump_mod.dump(_fetch("4.4.0"))
    assert fresh == (DUMPS / "kafka-4.4.0.json").read_text()
    assert json.loads(fresh)["metadata_version"]["LATEST_PRODUCTION"]["version"] == "4.4-IV2"


def test_kafka_43_profile_derives_from_a_fresh_4_3_1_dump() -> None:
    """4.3.1 has no committed dump: the kafka-4.3 profile (from 4.3.0's) must follow from its jars too."""
    overlay = tomllib.loads(derive_catalogs.OVERLAYS.read_text())
    spec = overlay["profile"]["kafka-4.3"]
    assert "4.3.1" in spec["releases"]
    fresh = json.loads(dump_mod.dump(_fetch("4.3.1")))
    derived = derive_catalogs.derive("kafka-4.3", copy.deepcopy(spec), overlay["defaults"]["behaviour"], fresh)
    committed = json.loads((ROOT / "fixtures" / "catalogs" / "kafka-4.3.json").read_text())
    assert derive_catalogs._differences(committed, derived) == []
    assert derived["metadata_version"]["latest_testing"] == 31


def test_check_fresh_names_each_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    """A release whose jars disagree with a committed dump / profile is reported by file, release and path."""
    real = {p.name.removeprefix("kafka-").removesuffix(".json"): json.loads(p.read_text())
            for p in DUMPS.glob("kafka-*.json")}

    def fake(versions: list[str]) -> dict[str, dict[str, Any]]:
        out = {}
        for v in versions:  # patches without a committed dump: as the dump of their profile
            base = real.get(v) or real[{"3.7": "3.7.0", "3.8": "3.8.0", "3.9": "3.9.0", "4.0": "4.0.0", "4.1": "4.1.1",
                                        "4.2": "4.2.0", "4.3": "4.3.0"}[v.rsplit(".", 1)[0]]]
            out[v] = copy.deepcopy(base)
        out["4.3.1"]["metadata_version"]["latest_testing"]["feature_level"] = 30  # the old profile's mistake
        return out

    monkeypatch.setattr(derive_catalogs, "_fresh_dumps", fake)
    overlay = tomllib.loads(derive_catalogs.OVERLAYS.read_text())
    problems = derive_catalogs.check_fresh(overlay, overlay["defaults"]["behaviour"])
    assert problems == ["kafka-4.3.json vs Kafka 4.3.1: /metadata_version/latest_testing: committed 31, fresh 30"]


def test_differences_paths() -> None:
    d = derive_catalogs._differences
    assert d({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == ["/a/1/b: committed 2, fresh 3"]
    assert d({"a": 1}, {"c": 1}) == ["/a: only in the committed file", "/c: only in the fresh one (1)"]
    assert d([1], [1, 2]) == ["/: committed [1], fresh [1, 2]"]


def test_dump_of_a_release_without_jars_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "libs").mkdir()
    with pytest.raises(dump_mod.DumpError, match=r"^Kafka 9\.9\.9: no jars in .*libs$"):
        dump_mod.dump(Release("9.9.9", tmp_path))


@pytest.mark.parametrize(("arg", "why"), [("2.8.0", "only KRaft releases 3.7.0 and later"),
                                          ("four", "'four' is not a Kafka release version")])
def test_dump_release_script_bad_version(arg: str, why: str) -> None:
    r = subprocess.run([sys.executable, "scripts/dump_release.py", arg], cwd=ROOT, capture_output=True, text=True,
                       timeout=60, check=False)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ") and why in r.stderr, r.stderr


def test_derive_fresh_needs_check() -> None:
    r = subprocess.run([sys.executable, "scripts/derive_catalogs.py", "--fresh"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60, check=False)
    assert r.returncode == 2 and "--fresh needs --check" in r.stderr and "Traceback" not in r.stderr
