"""The conformance suite end to end: kfc check, replay-trace, expectations, xdist, subprocess target."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.runner import load_summary, run_suite
from conformance.trace import read_trace, validate

KFC = [sys.executable, "-m", "kfc"]


def kfc(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*KFC, *args], capture_output=True, text=True, cwd=cwd, timeout=600, check=False)


def _stable(summary: dict) -> dict:
    return {"counts": summary["counts"], "coverage": summary["coverage"],
            "tests": [(t["nodeid"], t["status"]) for t in summary["tests"]]}


def test_check_reference_conforms_and_is_deterministic(tmp_path: Path) -> None:
    runs = []
    for n in (1, 2):
        out = tmp_path / f"r{n}"
        assert run_suite("reference", "kafka-4.2", "ci", out) == 0, (out / "pytest.log").read_text()[-2000:]
        runs.append(load_summary(out))
    s = runs[0]
    assert s["counts"].get("failed", 0) == 0 and s["counts"]["passed"] > 150
    # same seed, same report (durations aside)
    assert _stable(runs[0]) == _stable(runs[1])
    assert {"format", "update_features", "register", "load_coordinator", "snapshot"} <= set(s["coverage"]["ops"])
    assert any((tmp_path / "r1" / "allure-results").glob("*-result.json"))


@pytest.mark.parametrize("mutant", ["negative-level-off-by-one", "value-version-read-as-highest"])
def test_check_kills_a_mutant_with_a_shrunk_trace_and_repro(tmp_path: Path, mutant: str) -> None:
    proc = kfc("check", "--target", f"mutant:{mutant}", "-x", "--report", str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "DOES NOT CONFORM" in proc.stdout
    repro = next(line for line in proc.stdout.splitlines() if "repro:" in line)
    args = shlex.split(repro.split("repro:", 1)[1])
    assert args[:2] == ["kfc", "replay-trace"] and args[3:] == ["--target", f"mutant:{mutant}"]
    trace = read_trace(args[2])
    assert not validate(trace) and trace["steps"][-1].get("diff")
    assert len(trace["steps"]) <= 12  # shrunk (examples are short; the stateful machine shrinks)
    again = kfc("replay-trace", args[2], "--target", f"mutant:{mutant}")
    assert again.returncode == 1 and "DIVERGED at step" in again.stdout
    ok = kfc("replay-trace", args[2], "--target", "reference")
    assert ok.returncode == 0 and ": PASS" in ok.stdout


def test_check_over_the_json_lines_protocol(tmp_path: Path) -> None:
    spec = f"subprocess:{sys.executable} -m kfc target serve --target reference"
    proc = kfc("check", "--target", spec, "--profile", "kafka-4.2", "--report", str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    s = load_summary(tmp_path)
    assert s["counts"].get("failed", 0) == 0 and s["counts"]["passed"] > 150
    # the Spark stage ran and kept Spark's shell banner out of the user's terminal
    assert "spark replay of the bundled corpus" in proc.stdout, proc.stdout[-2000:]
    assert "Setting default log level" not in proc.stderr and "Setting Spark log level" not in proc.stderr


def test_expectations_turn_known_failures_into_xfail_and_flag_unexpected_passes(tmp_path: Path) -> None:
    exp = tmp_path / "exp.toml"
    exp.write_text('[[fail]]\nrule = "KIP584-UPD-02"\nreason = "negative levels are off by one"\n'
                   '[[fail]]\nrule = "KIP919-CREG-01"\nreason = "wrongly listed: this one passes"\n')
    out = tmp_path / "r"
    code = run_suite("mutant:negative-level-off-by-one", "kafka-4.2", "ci", out, expectations=str(exp),
                     extra=["-k", "test_example"])
    s = load_summary(out)
    statuses = {t["status"] for t in s["tests"]}
    assert "xfailed" in statuses  # the mutant's known failures
    assert "unexpectedly-passed" in statuses  # the CREG-01 examples pass: reported, and the run fails
    assert code != 0


def test_check_runs_under_xdist(tmp_path: Path) -> None:
    assert run_suite("reference", "kafka-4.0", "ci", tmp_path, workers="2") == 0, \
        (tmp_path / "pytest.log").read_text()[-2000:]
    s = load_summary(tmp_path)
    assert s["counts"].get("failed", 0) == 0
    assert s["coverage"]["ops"], "worker coverage files were merged"


@pytest.mark.parametrize("args,fragment", [
    (["check", "--target", "nope:1"], "unknown target 'nope:1'"),
    (["check", "--profile", "kafka-9.9"], "Unknown profile 'kafka-9.9'"),
    (["check", "--target", "mutant:no-such-mutant"], "no-such-mutant"),
    (["replay-trace", "/nonexistent/trace.json"], "cannot read"),
    (["mutants", "--only", "nope"], "unknown mutant"),
])
def test_bad_input_is_one_line_and_exit_1(args: list[str], fragment: str) -> None:
    proc = kfc(*args)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in proc.stderr, proc.stderr


def test_corrupt_trace_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "kfc-trace", "version": 1, "id": "x", "profile": "kafka-4.2", "steps": [{"command": {}}]}')
    proc = kfc("replay-trace", str(bad))
    assert proc.returncode == 1 and str(bad) in proc.stderr and "Traceback" not in proc.stderr
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    proc = kfc("replay-trace", str(broken))
    assert proc.returncode == 1 and "not valid JSON" in proc.stderr


def test_every_mutant_is_killed_with_a_trace(tmp_path: Path) -> None:
    from conformance.mutants import MUTANTS
    from conformance.runner import run_mutants

    rows = run_mutants(list(MUTANTS), tmp_path, jobs=2, hypothesis_profile="ci")
    survivors = [r["mutant"] for r in rows if not r["killed"]]
    assert not survivors, f"mutants not killed: {survivors}"
    for r in rows:
        assert r["repro"] and "kfc replay-trace" in r["repro"], r
        trace_file = shlex.split(r["repro"])[2]
        assert Path(trace_file).exists(), r
    (tmp_path / "table.json").write_text(json.dumps(rows, indent=1))
