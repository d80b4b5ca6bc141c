"""Rough edges of the command line, one block per edge: ./go from any directory, ./go check rendering
only the report of the run that just completed, ./go tox, one-line expectation errors, no warnings in
the output, the Allure environment, rule labels on every example, Ctrl-C, literal test ids and long
diffs, and one verdict consistent with the exit code.

`./go` is exercised on a copy of the script in a scratch repository whose .venv/ holds shims: the
stamps match, so set-up and npm are no-ops, `kfc check` runs the real suite, and every kfc/tox call
is logged (`kfc report` is only logged: rendering is tests/test_report.py's business).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from conformance.verdicts import SUITE_VERDICTS
from reference_impl import DEFAULT_PROFILE

ROOT = Path(__file__).resolve().parents[1]
# The kfc command of this environment (as users run it), else the module.
_SCRIPT = Path(sys.executable).parent / "kfc"
KFC = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "kfc"]
VERDICTS = SUITE_VERDICTS
MUTANT = "negative-level-off-by-one"


def kfc(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*KFC, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300,
                          check=False)


def verdict_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(VERDICTS) and "report:" in line]


# -- ./go on a scratch copy ----------------------------------------------------------------------------

def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _hash16(*files: Path) -> str:
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16]


def make_go_repo(where: Path) -> tuple[Path, Path]:
    """A scratch repository with ./go, its stamps satisfied: (go, log of the kfc/tox calls)."""
    repo, log = where / "repo", where / "calls.log"
    (repo / ".venv" / "bin").mkdir(parents=True)
    for name in ("go", "pyproject.toml"):
        shutil.copy2(ROOT / name, repo / name)
    (repo / ".venv" / ".kfc-setup").write_text(_hash16(repo / "pyproject.toml", repo / "go") + "\n")
    # (the Allure CLI is `kfc report`'s business, in the user cache: the fake kfc below answers report)
    bin_ = repo / ".venv" / "bin"
    _script(bin_ / "python", f'exec "{sys.executable}" "$@"\n')
    _script(bin_ / "kfc", f'echo "kfc $* | $PWD" >> "{log}"\n'
                          f'[ "$1" = report ] && exit 0\n'
                          f'exec {" ".join(KFC)} "$@"\n')
    _script(bin_ / "tox", f'echo "tox $* | $PWD" >> "{log}"\n')
    log.write_text("")
    return repo / "go", log


def go_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KFC_VENV", "KFC_NO_NPM")}
    return {**env, "KFC_NO_JAVA_INSTALL": "1", **extra}


@pytest.fixture(scope="module")
def go_check(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`go check --no-spark --report rel --expectations exp.toml`, called from another directory."""
    where = tmp_path_factory.mktemp("go")
    go, log = make_go_repo(where)
    caller = where / "caller"
    caller.mkdir()
    (caller / "exp.toml").write_text('[[fail]]\ntest = "no-such-test"\nreason = "matches nothing"\n')
    proc = subprocess.run([str(go), "check", "--no-spark", "--report", "rel", "--expectations", "exp.toml"],
                          capture_output=True, text=True, cwd=caller, env=go_env(), timeout=300, check=False)
    return {"proc": proc, "go": go, "log": log, "caller": caller, "repo": go.parent, "report": caller / "rel"}


def test_go_resolves_relative_paths_against_the_callers_directory(go_check: dict[str, Any]) -> None:
    proc, caller, repo = go_check["proc"], go_check["caller"], go_check["repo"]
    # --report rel, and exp.toml was found: the run completed (whether the reference conforms is
    # tests/test_suite.py's business), with one verdict consistent with the exit code
    verdict = (caller / "rel" / "verdict").read_text().strip()
    assert verdict in VERDICTS, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.returncode == (0 if verdict == "CONFORMS" else 1)
    assert [line[:len(verdict)] for line in verdict_lines(proc.stdout)] == [verdict]
    assert not (repo / "rel").exists()
    assert not (caller / ".venv").exists() and not (caller / "node_modules").exists()
    assert f"kfc check --no-spark --report rel --expectations exp.toml | {caller}" in go_check["log"].read_text()
    # ./go kfc too: the output lands beside the caller
    out = subprocess.run([str(go_check["go"]), "kfc", "generate", "--count", "2", "--seed", "1", "--out", "c.jsonl"],
                         capture_output=True, text=True, cwd=caller, env=go_env(KFC_NO_NPM="1"), timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert len((caller / "c.jsonl").read_text().splitlines()) == 2
    assert not (repo / "c.jsonl").exists()


def test_go_check_renders_only_the_report_of_the_run_that_completed(go_check: dict[str, Any],
                                                                   tmp_path: Path) -> None:
    # an older report and a bad argument: nothing is rendered (an absolute --report, so the old
    # report is found wherever ./go runs kfc)
    go, log = make_go_repo(tmp_path)
    old = tmp_path / "old"
    (old / "allure-results").mkdir(parents=True)
    (old / "allure-results" / "x-result.json").write_text("{}")
    (old / "verdict").write_text("CONFORMS\n")
    past = time.time() - 3600
    os.utime(old / "verdict", (past, past))
    proc = subprocess.run([str(go), "check", "--no-spark", "--report", str(old), "--no-such-option"],
                          capture_output=True, text=True, cwd=tmp_path, env=go_env(), timeout=120, check=False)
    assert proc.returncode == 1 and "No such option" in proc.stderr, proc.stderr
    assert "kfc report" not in log.read_text()
    # an interrupted run (Ctrl-C to ./go's process group): no report, exit 130
    p = subprocess.Popen([str(go), "check", "--no-spark", "--report", str(old), "--hypothesis-profile", "dev"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                         env=go_env(KFC_HYPOTHESIS_DB=str(tmp_path / "db")), start_new_session=True)
    try:
        # kfc check starts by clearing the report directory; interrupt once this run has results
        _wait_until(lambda: not (old / "allure-results" / "x-result.json").exists()
                    and _results(old / "allure-results") >= 1, p)
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=15)
    finally:
        _kill_session(p)
    assert p.returncode == 130, err
    assert not (old / "verdict").exists()
    assert "kfc report" not in log.read_text()
    # the completed run of the fixture: its report, from the caller's directory
    assert f"kfc report rel | {go_check['caller']}" in go_check["log"].read_text()


def test_go_tox_runs_the_projects_tox_in_the_repository(tmp_path: Path) -> None:
    go, log = make_go_repo(tmp_path)
    proc = subprocess.run([str(go), "tox", "-e", "lint", "--", "x"], capture_output=True, text=True,
                          cwd=tmp_path, env=go_env(KFC_NO_NPM="1"), timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text() == f"tox -e lint -- x | {go.parent}\n"
    readme = (ROOT / "README.md").read_text()
    two = readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    matrices = readme.split("## Matrices (tox)", 1)[1].split("\n## ", 1)[0]
    assert "./go tox" in two and "./go tox" in matrices


# -- expectations files: one line naming file, line and column or entry ----------------------------------

BAD_TOML = '[[fail]]\nrule = "KIP584-UPD-02"\nreason = oops\n'


@pytest.mark.parametrize("text,message", [
    (BAD_TOML, "{f}:3:10: not valid TOML: Invalid value"),
    ('[[fail]]\nrule = "KIP584-UPD-02"\nreason = ', "{f}:3:10: not valid TOML: Invalid value"),
    ('[[fail]]\nrule = "KIP584-UPD-02"\n\n[[fail]]\nrul = "KIP584-UPD-02"\n',
     "{f}:4: [[fail]] entry 2: unknown key(s) 'rul' (an entry has reason, rule, test)"),
    ('[[fail]]\nrule = 5\n', "{f}:1: [[fail]] entry 1: rule must be a string, not int 5"),
    ('[[fail]]\ntest = "x"\nreason = ["a"]\n', "{f}:1: [[fail]] entry 1: reason must be a string, not list ['a']"),
    ('[[fail]]\nrule = "KIP584-UPD-02"\ntest = "x"\n', "{f}:1: [[fail]] entry 1: needs exactly one of 'rule' or 'test'"),
    ('[[fail]]\nrule = "NOPE-1"\n', "{f}:1: [[fail]] entry 1: unknown rule id 'NOPE-1'"),
    ('fail = [{rule = "KIP584-UPD-02"}, 3]\n', "{f}: [[fail]] entry 2: must be a table, not int 3"),
    ('fail = "x"\n', "{f}: 'fail' must be an array of tables ([[fail]] entries), not str"),
])
def test_expectation_errors_name_the_file_and_where(tmp_path: Path, text: str, message: str) -> None:
    from conformance.expectations import ExpectationsError, load_expectations

    f = tmp_path / "exp.toml"
    f.write_text(text)
    with pytest.raises(ExpectationsError) as e:
        load_expectations(f)
    assert str(e.value) == message.format(f=f)


def test_a_bad_expectations_file_is_one_line_for_kfc_check_and_for_pytest(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(BAD_TOML)
    line = "bad.toml:3:10: not valid TOML: Invalid value"
    proc = kfc("check", "--no-spark", "--expectations", "bad.toml", "--report", "r", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", f"error: {line}\n")
    assert not (tmp_path / "r").exists()
    proc = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "conformance.suite", "-p", "no:cacheprovider",
                           "--kfc-expectations", "bad.toml", "--kfc-report", "r"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, out
    assert f"ERROR: {line}" in out.splitlines(), out
    assert "Traceback" not in out and "INTERNALERROR" not in out


# -- what kfc check prints --------------------------------------------------------------------------------

def test_check_output_has_no_warnings_or_banners(go_check: dict[str, Any]) -> None:
    proc = go_check["proc"]
    lines = (proc.stdout + proc.stderr).splitlines()
    assert not [x for x in lines if "Warning" in x or "WARNING" in x or x.startswith("[go]")], lines
    assert len(verdict_lines(proc.stdout)) == 1


def test_check_pytest_log_has_no_warnings(go_check: dict[str, Any]) -> None:
    log = (go_check["report"] / "pytest.log").read_text()
    assert "warnings summary" not in log and "Warning" not in log, log[-2000:]


def test_allure_environment_of_a_suite_run(go_check: dict[str, Any]) -> None:
    import platform

    text = (go_check["report"] / "allure-results" / "environment.properties").read_text(encoding="ascii")
    env = dict(line.split("=", 1) for line in text.splitlines())
    assert env["target"] == "reference"
    assert env["profile"] == DEFAULT_PROFILE
    assert env["hypothesis.profile"] == "kfc-ci"
    assert env["kafka-feature-conformance"] == version("kafka-feature-conformance")
    assert env["python"] == platform.python_version()
    assert env["pytest"] == pytest.__version__
    assert env["hypothesis"] == version("hypothesis")


# -- examples carry rule ids ------------------------------------------------------------------------------

def test_every_recorded_example_has_a_registered_rule_id() -> None:
    from reference_impl.rules import RULES

    examples = [json.loads(line) for f in sorted((ROOT / "fixtures" / "examples").glob("*.jsonl"))
                for line in f.read_text().splitlines() if line.strip()]
    assert len(examples) > 1000
    unlabelled = [e["id"] for e in examples if not e["rules"]]
    assert not unlabelled, f"{len(unlabelled)} examples without a rule id: {unlabelled[:10]}"
    unknown = sorted({r for e in examples for r in e["rules"]} - set(RULES))
    assert not unknown


def test_recording_labels_or_refuses_an_unlabelled_example() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import record_examples as rec
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    source = "tests/test_controller.py::test_v0_has_no_validate_only[kafka-3.7]#0"
    traces = [{"id": "a", "source": source, "rules": []}]
    rest = [{"id": t, "source": f"{t}[p]#0", "rules": []} for t in rec.BEHAVIOUR_RULES if t not in source]
    rec.label_unlabelled(traces + rest)
    assert traces[0]["rules"] == ["KIP584-UPD-09"]
    with pytest.raises(SystemExit, match="carries no rule id"):
        rec.label_unlabelled([{"id": "b", "source": "tests/test_x.py::test_nothing#0", "rules": []}])


def test_recorded_examples_are_up_to_date() -> None:
    proc = subprocess.run([sys.executable, "scripts/record_examples.py", "--check"], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]


# -- Ctrl-C -----------------------------------------------------------------------------------------------

def _results(where: Path) -> int:
    return len(list(where.glob("*-result.json"))) if where.is_dir() else 0


def _wait_until(ready: Any, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, "the run ended before it could be interrupted"
        assert time.monotonic() < end, f"not ready after {timeout} s"
        time.sleep(0.02)


def _wait_for_results(where: Path, n: int, proc: subprocess.Popen[str]) -> None:
    _wait_until(lambda: _results(where) >= n, proc)


def _wait_for_a_pause(where: Path, proc: subprocess.Popen[str], quiet: float = 0.5) -> None:
    """Until the number of results has not changed for `quiet` seconds."""
    last, since = -1, time.monotonic()

    def ready() -> bool:
        nonlocal last, since
        n = _results(where)
        if n != last:
            last, since = n, time.monotonic()
            return False
        return n > 0 and time.monotonic() - since >= quiet

    _wait_until(ready, proc)


def _session(sid: int) -> list[int]:
    """Processes (other than zombies) whose session id is sid."""
    pids = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(stat_file.parent.name))
    return pids


def _kill_session(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads sessions from /proc")
@pytest.mark.parametrize("phase", ["example tables", "stateful model"])
def test_ctrl_c_during_the_suite(tmp_path: Path, phase: str) -> None:
    report = tmp_path / "r"
    env = {**os.environ, "KFC_HYPOTHESIS_DB": str(tmp_path / "db")}
    proc = subprocess.Popen([*KFC, "check", "--no-spark", "--report", str(report), "--hypothesis-profile", "dev"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
                            start_new_session=True)
    try:
        # the example tables run first (a result every few ms), the stateful model (long in the dev
        # profile) last: it is running once the results stop coming
        results = report / "allure-results"
        _wait_for_results(results, 1, proc)
        if phase == "stateful model":
            _wait_for_a_pause(results, proc)
        assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground process group
        sent = time.monotonic()
        out, err = proc.communicate(timeout=10)
        took = time.monotonic() - sent
    finally:
        _kill_session(proc)
    assert proc.returncode == 130, (out[-2000:], err[-2000:])
    assert took < 2, f"exit took {took:.1f} s"
    assert err == "interrupted\n", err
    assert not _session(proc.pid)
    assert not (report / "verdict").exists()


# -- failures: literal test ids, long fields -------------------------------------------------------------

@pytest.fixture(scope="module")
def mutant_check(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    where = tmp_path_factory.mktemp("mutant")
    proc = kfc("check", "--no-spark", "--target", f"mutant:{MUTANT}", "--report", "r", cwd=where)
    summary = json.loads((where / "r" / "summary.json").read_text())
    return {"proc": proc, "where": where, "summary": summary}


def test_failing_test_ids_are_printed_literally(mutant_check: dict[str, Any]) -> None:
    proc, summary = mutant_check["proc"], mutant_check["summary"]
    assert proc.returncode == 1
    assert [line[:16] for line in verdict_lines(proc.stdout)] == ["DOES NOT CONFORM"]
    failed = [t["nodeid"] for t in summary["tests"] if t["status"] == "failed"]
    assert any(re.search(r"\[c0e5[0-9a-f]*-\w+\]", n) for n in failed), failed
    lines = proc.stdout.splitlines()
    for nodeid in failed:
        assert f"FAIL {nodeid}" in lines, proc.stdout
    repros = [line for line in lines if line.strip().startswith("repro: ")]
    assert len(repros) == len(failed) == len(set(repros))  # one repro line per failure


def test_long_fields_are_shown_where_they_differ() -> None:
    from conformance.compare import compare, differences

    lines = [f"Feature: feature.{i:02d}\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1"
             for i in range(40)]
    got = list(lines)
    got[33] = got[33].replace("FinalizedVersionLevel: 1", "FinalizedVersionLevel: 0")
    (text,) = compare({"lines": lines}, {"lines": got})
    assert text.startswith("lines: at [33] ") and "(40 vs 40 items)" in text, text
    assert "FinalizedVersionLevel: 0" in text and "FinalizedVersionLevel: 1" in text
    (d,) = differences({"lines": lines}, {"lines": got})
    assert (d.field, d.expected, d.actual) == ("lines", lines, got)
    # a long string: around the first differing character
    want = "x" * 500 + "expected-tail"
    (text,) = compare({"lines": [want]}, {"lines": [want.replace("expected", "actual")]})
    assert re.search(r"differs at character 50\d", text) and "expected-tail" in text and "actual-tail" in text, text
    # records: the first differing record
    recs = [{"type": "FeatureLevelRecord", "name": f"f{i}", "level": 1} for i in range(30)]
    other = [*recs[:29], {"type": "FeatureLevelRecord", "name": "f29", "level": 2}]
    (text,) = compare({"records": recs}, {"records": other})
    assert text.startswith("records: at [29] expected ") and "'level': 2}" in text, text


# -- one verdict, consistent with the exit code -----------------------------------------------------------

def test_known_failures_all_expected_is_a_pass(mutant_check: dict[str, Any], tmp_path: Path) -> None:
    failed = [t["nodeid"] for t in mutant_check["summary"]["tests"] if t["status"] == "failed"]
    exp = tmp_path / "exp.toml"
    exp.write_text("".join(f'[[fail]]\ntest = {json.dumps(n)}\nreason = "seeded bug"\n' for n in failed))
    proc = kfc("check", "--no-spark", "--target", f"mutant:{MUTANT}", "--expectations", "exp.toml", "--report", "r",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert [line.split()[0] for line in verdict_lines(proc.stdout)] == ["CONFORMS"]
    assert f"xfailed {len(failed)}" in proc.stdout
    assert "FAIL " not in proc.stdout and "diverged" not in proc.stdout
    assert (tmp_path / "r" / "verdict").read_text() == "CONFORMS\n"


EMPTY_TARGET = '''\
import json, sys
for line in sys.stdin:
    if not line.strip():
        continue
    req = json.loads(line)
    if req.get("type") == "hello":
        out = {"type": "hello", "protocol_version": 1, "name": "empty", "profile": None, "capabilities": []}
    elif req.get("type") == "reset":
        out = {"type": "reset", "profile": req.get("profile")}
    else:
        out = {"type": "error", "message": "this target runs no op"}
    print(json.dumps({"id": req.get("id"), **out}), flush=True)
'''


def test_a_run_that_checks_nothing_is_no_pass(tmp_path: Path) -> None:
    script = tmp_path / "empty_target.py"
    script.write_text(EMPTY_TARGET)
    spec = f"subprocess:{sys.executable} {script}"
    proc = kfc("check", "--no-spark", "--target", spec, "--report", "r", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert [line[:15] for line in verdict_lines(proc.stdout)] == ["NOTHING CHECKED"], proc.stdout[-3000:]
    assert (tmp_path / "r" / "verdict").read_text() == "NOTHING CHECKED\n"
    raw = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "conformance.suite", "-q", "-p",
                          "no:cacheprovider", "--kfc-target", spec, "--kfc-report", "raw"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False)
    assert raw.returncode != 0, raw.stdout[-2000:]
    assert json.loads((tmp_path / "raw" / "summary.json").read_text())["verdict"] == "NOTHING CHECKED"
