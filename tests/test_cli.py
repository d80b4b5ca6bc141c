"""The `kfc` command line: output of the tool commands, one-line errors, the profile list.

Most cases use click's CliRunner (fast); a few run the installed `kfc` script as a real subprocess.
Expected texts come from docs/research/tools-notes.md and the catalogue dumps, not from running kfc.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kfc.cli import main
from reference_impl import load_profile

ROOT = Path(__file__).resolve().parents[1]
KFC = Path(sys.executable).parent / "kfc"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def out_lines(result) -> list[str]:
    return result.stdout.splitlines()


def err_lines(result) -> list[str]:
    return [ln for ln in result.stderr.splitlines() if ln.strip()]


def assert_one_line_error(result, fragment: str | None = None) -> str:
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    lines = err_lines(result)
    assert len(lines) == 1, lines
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if fragment is not None:
        assert fragment in lines[0], lines
    return lines[0]


# -- version-mapping ---------------------------------------------------------------------------------

@pytest.mark.rule("KIP1022-MAP-01", "pass")
def test_version_mapping_39_release_36_iv1() -> None:
    r = run("version-mapping", "--release-version", "3.6-IV1", "--profile", "kafka-3.9")
    assert r.exit_code == 0, r.stderr
    # 3.9's production features: kraft.version, transaction.version; both default to 0 at 3.6-IV1
    assert out_lines(r) == ["metadata.version=13 (3.6-IV1)", "kraft.version=0", "transaction.version=0"]


@pytest.mark.rule("KIP1022-MAP-01", "pass")
def test_version_mapping_44_default_profile_no_argument() -> None:
    r = run("version-mapping")
    assert r.exit_code == 0, r.stderr
    assert out_lines(r) == ["metadata.version=33 (4.4-IV2)", "kraft.version=1", "transaction.version=2",
                            "group.version=1", "eligible.leader.replicas.version=1", "share.version=2",
                            "streams.version=1"]


# -- feature-dependencies ----------------------------------------------------------------------------

@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_feature_dependencies_kraft_40() -> None:
    r = run("feature-dependencies", "--feature", "kraft.version=1", "--profile", "kafka-4.0")
    assert r.exit_code == 0, r.stderr
    assert out_lines(r) == ["kraft.version=1 requires:", "    metadata.version=21 (3.9-IV0)"]


@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_feature_dependencies_kraft_42() -> None:
    r = run("feature-dependencies", "--feature", "kraft.version=1", "--profile", "kafka-4.2")
    assert r.exit_code == 0, r.stderr
    assert out_lines(r) == ["kraft.version=1 has no dependencies."]


# -- format --------------------------------------------------------------------------------------------

@pytest.mark.rule("KIP1022-FMT-05", "fail")
def test_format_39_kraft_dependency_failure() -> None:
    r = run("format", "--release-version", "3.8-IV0", "--feature", "kraft.version=1", "--standalone",
            "--profile", "kafka-3.9")
    assert_one_line_error(r, "kraft.version could not be set to 1 because it depends on metadata.version level 21")


@pytest.mark.rule("KIP1022-FMT-10", "pass")
def test_format_40_group_version_at_37_iv4() -> None:
    r = run("format", "--release-version", "3.7-IV4", "--feature", "group.version=1", "--profile", "kafka-4.0")
    assert r.exit_code == 0, r.stderr
    lines = out_lines(r)
    assert "metadata.version=19 (3.7-IV4)" in lines
    assert "group.version=1" in lines
    assert r.stderr == ""


# -- bad input: one line on stderr, exit 1, no traceback ---------------------------------------------------

@pytest.mark.parametrize("args,fragment", [
    (["version-mapping", "--release-version", "2.9-IV9"], "Unknown metadata.version '2.9-IV9'"),
    (["version-mapping", "--release-version", "2.9-IV9", "--profile", "kafka-4.0"],
     "Unknown release version '2.9-IV9'. Supported versions are: 3.3-IV3 to 4.0-IV3"),
    (["format", "--release-version", "2.9-IV9"], "Unknown metadata.version '2.9-IV9'"),
    (["format", "--release-version", "2.9-IV9", "--profile", "kafka-3.9"], "Version 2.9-IV9 is not a valid version"),
    (["format", "--feature", "nope=1"], "Unsupported feature: nope. Supported features are: "),
    (["feature-dependencies", "--feature", "nope=1"], "Unknown feature: nope"),
    (["version-mapping", "--profile", "nope"], "nope"),
    (["format", "--profile", "nope"], "nope"),
    (["feature-dependencies", "--feature", "kraft.version=1", "--profile", "nope"], "nope"),
    (["format", "--feature", "kraft.version=abc"],
     "Can't parse feature=level string kraft.version=abc: unable to parse abc as a short."),
    (["feature-dependencies", "--feature", "kraft.version=abc"], "Invalid version format: abc for feature kraft.version"),
])
def test_bad_input_one_line_exit_1(args: list[str], fragment: str) -> None:
    assert_one_line_error(run(*args), fragment)



@pytest.mark.parametrize("args", [["feature-dependencies"], ["feature-dependencies", "--profile", "kafka-4.0"]])
def test_missing_feature_option_one_line_exit_1(args: list[str]) -> None:
    assert_one_line_error(run(*args), "--feature")


# -- profiles --------------------------------------------------------------------------------------------

# profile -> (metadata.version range min..latest testing, latest production) from the dumps / overlays
PROFILES = {
    "kafka-3.7": (1, 20, 19, "3.7-IV4"),
    "kafka-3.8": (1, 21, 20, "3.8-IV0"),
    "kafka-3.9": (1, 23, 21, "3.9-IV0"),
    "kafka-3.9.1": (1, 23, 21, "3.9-IV0"),
    "kafka-3.9.2": (1, 23, 21, "3.9-IV0"),
    "kafka-4.0": (7, 26, 25, "4.0-IV3"),
    "kafka-4.0.2": (7, 26, 25, "4.0-IV3"),
    "kafka-4.1": (7, 29, 27, "4.1-IV1"),
    "kafka-4.1.0": (7, 29, 27, "4.1-IV1"),
    "kafka-4.1.1": (7, 29, 27, "4.1-IV1"),
    "kafka-4.2": (7, 30, 29, "4.2-IV1"),
    "kafka-4.3": (7, 31, 30, "4.3-IV0"),
    "kafka-4.4": (7, 34, 33, "4.4-IV2"),
    "kip-1155": (7, 35, 35, "4.5-IV1"),
}


def test_profiles_lists_all_with_range_latest_production_and_default() -> None:
    r = run("profiles")
    assert r.exit_code == 0, r.stderr
    lines = out_lines(r)
    for name, (lo, hi, lp, lp_name) in PROFILES.items():
        rows = [ln for ln in lines if re.match(rf"^{re.escape(name)}\s", ln)]
        assert len(rows) == 1, (name, lines)
        row = rows[0]
        assert re.search(rf"\b{lo}\s*(-|\.\.|to|–)\s*{hi}\b", row), row
        assert lp_name in row and re.search(rf"\b{lp}\b", row), row
        assert ("default" in row) is (name == "kafka-4.4"), row


def test_profiles_json() -> None:
    import json

    r = run("profiles", "--json")
    assert r.exit_code == 0
    rows = {row["profile"]: row for row in json.loads(r.stdout)}
    assert set(rows) == set(PROFILES)
    for name, (lo, hi, lp, lp_name) in PROFILES.items():
        assert rows[name]["metadata_version"] == [lo, hi]
        assert str(lp) in rows[name]["latest_production"] and lp_name in rows[name]["latest_production"]
        assert rows[name]["default"] is (name == "kafka-4.4")
        assert rows[name]["releases"] == list(load_profile(name).releases)
        assert all(v in rows[name]["release"] for v in rows[name]["releases"])


# -- real subprocesses ---------------------------------------------------------------------------------------

def _kfc(*args: str) -> subprocess.CompletedProcess[str]:
    assert KFC.exists(), f"{KFC} not installed (run ./go test once to set up the venv)"
    return subprocess.run([str(KFC), *args], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.rule("KIP1022-DEP-01", "pass")
def test_subprocess_feature_dependencies() -> None:
    p = _kfc("feature-dependencies", "--feature", "kraft.version=1", "--profile", "kafka-4.0")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["kraft.version=1 requires:", "    metadata.version=21 (3.9-IV0)"]


@pytest.mark.rule("KIP1022-FMT-02", "fail")
def test_subprocess_bad_release_version() -> None:
    p = _kfc("format", "--release-version", "2.9-IV9")
    assert p.returncode == 1
    assert len([ln for ln in p.stderr.splitlines() if ln.strip()]) == 1, p.stderr
    assert "Traceback" not in p.stdout + p.stderr
    assert "Unknown metadata.version '2.9-IV9'" in p.stderr


def test_subprocess_missing_feature_option() -> None:
    p = _kfc("feature-dependencies")
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert len([ln for ln in p.stderr.splitlines() if ln.strip()]) == 1, p.stderr
    assert "Traceback" not in p.stdout + p.stderr
