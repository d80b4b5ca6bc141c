"""The smaller running items of the adopters' issue: `-k` matching nothing, an empty corpus, a bad
corpus line's message, a diverging step's status in the HTML report, the report folder's mode, and
a quiet `./go test` (kafka-python's DeprecationWarnings filtered, expected failures not listed)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from conformance.report import fresh_sibling
from kfc.commands.replay import divergence_line

ROOT = Path(__file__).resolve().parent.parent
KFC = [sys.executable, "-m", "kfc"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_k_matching_no_test_says_so(tmp_path: Path) -> None:
    run = subprocess.run([*KFC, "check", "--no-spark", "--report", "r", "-k", "no_such_test_anywhere"],
                         capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=300, check=False)
    assert run.returncode == 1
    assert run.stderr == "error: no test matched -k 'no_such_test_anywhere'\n", run.stderr
    assert "warning" not in run.stdout.lower() and "pytest exit" not in run.stdout + run.stderr, run.stdout


def test_an_empty_corpus_is_nothing_checked_at_once(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n\n")
    start = time.monotonic()
    run = subprocess.run([*KFC, "replay", "empty.jsonl", "--out", "o", "--master", "local[1]"], capture_output=True,
                         text=True, cwd=tmp_path, env=_env(), timeout=300, check=False)
    took = time.monotonic() - start
    assert run.returncode == 1
    assert run.stderr == "error: empty.jsonl: the corpus holds no traces: NOTHING CHECKED\n", run.stderr
    assert took < 8, f"{took:.1f} s: Spark was started for nothing"


def test_a_bad_corpus_line_is_named_once_without_none() -> None:
    row = {"status": "input-error", "trace_id": "c.jsonl line 4", "profile": None, "first_divergent_step": None,
           "op": None, "diff": "c.jsonl line 4: not valid JSON (column 2): Expecting property name"}
    line = divergence_line(row)
    assert line == "c.jsonl line 4: not valid JSON (column 2): Expecting property name"
    diverged = {"status": "diverged", "trace_id": "t-1", "profile": "kafka-4.2", "first_divergent_step": 3,
                "op": "describe", "diff": "error: expected NONE, got X"}
    assert divergence_line(diverged) == "t-1 [kafka-4.2] step 3 describe: error: expected NONE, got X"
    out = io.StringIO()
    from kfc.commands.replay import print_summary

    summary = {"by_status": {"input-error": 1}, "seconds": {"replay": 0.1, "spark_start": 1.0}, "corpus": "c.jsonl",
               "target": "reference", "master": "local[1]", "partitions": 1, "traces": 1, "steps": 0,
               "traces_per_s": 1.0, "by_profile": {}, "coverage": {}, "divergence_rate": 0.0,
               "first_divergences": [row]}
    print_summary(Console(file=out, width=200, highlight=False), summary, Path("o"))
    text = out.getvalue()
    assert "[None]" not in text and text.count("c.jsonl line 4") == 1, text


DIVERGING_TEST = '''
from conformance.session import Divergence, Session
from conformance.targets import make_target


class Off:
    """The reference, but describe answers with another finalized epoch."""

    def __init__(self):
        self.inner = make_target("reference")

    def hello(self):
        return self.inner.hello()

    def reset(self, profile=None):
        self.inner.reset(profile)

    def apply(self, command):
        out = self.inner.apply(command)
        if command["op"] == "describe":
            out = {**out, "epoch": (out.get("epoch") or 0) + 7}
        return out

    def close(self):
        self.inner.close()


def test_diverges():
    s = Session(Off(), "kafka-4.2")
    s.step({"op": "format", "release_version": "3.9-IV0"})
    s.step({"op": "describe"})
'''


def test_a_diverging_step_is_failed_in_the_report(tmp_path: Path) -> None:
    (tmp_path / "test_div.py").write_text(DIVERGING_TEST)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:kfc",
                          "--rootdir", str(tmp_path), "--alluredir", "res", "test_div.py"],
                         capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=300, check=False)
    assert run.returncode == 1, run.stdout[-3000:]
    (result,) = [json.loads(p.read_text()) for p in (tmp_path / "res").glob("*-result.json")]
    steps = {s["name"]: s["status"] for s in result["steps"]}
    assert result["status"] == "failed"
    diverging = [name for name in steps if name.endswith("(DIVERGES)")]
    assert diverging == ["describe -> NONE (DIVERGES)"], steps
    assert steps[diverging[0]] == "failed" and all(v == "passed" for k, v in steps.items() if k not in diverging)


def test_the_report_folder_follows_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        made = fresh_sibling(tmp_path / "html")
    finally:
        os.umask(old)
    assert made.parent == tmp_path and (made.stat().st_mode & 0o777) == 0o755


QUIET_TEST = '''
import pytest


def test_kafka_python_loads_its_schemas():
    import kafka.protocol.admin  # noqa: F401  (read_text -> open_text: DeprecationWarnings)
    from kafka.protocol.schemas.load_json import load_json

    load_json("ApiVersionsRequest")


@pytest.mark.xfail(reason="an expected failure with a long reason " + "x" * 200, strict=True)
def test_expected_to_fail():
    assert False
'''


def test_go_test_output_is_quiet(tmp_path: Path) -> None:
    test = tmp_path / "test_quiet.py"
    test.write_text(QUIET_TEST)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
                          str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(test)],
                         capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=300, check=False)
    assert run.returncode == 0, run.stdout[-3000:]
    assert "1 passed, 1 xfailed" in run.stdout, run.stdout
    assert "DeprecationWarning" not in run.stdout and "XFAIL" not in run.stdout, run.stdout


def _run_on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run `kfc ARGS` with stdout and stderr on a pseudo-terminal; (exit code, everything it wrote)."""
    import pty
    import select

    leader, follower = pty.openpty()
    env = {**_env(), "COLUMNS": "200", "LINES": "40", "TERM": "xterm"}
    proc = subprocess.Popen([*KFC, *args], stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, cwd=cwd, env=env)
    os.close(follower)
    chunks = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the child closed its side
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(leader)
    return proc.wait(timeout=60), b"".join(chunks).decode(errors="replace")


PROGRESS = re.compile(r"\d+/\d+ tests, regressions, \d+ s")


def test_progress_on_a_terminal_only(tmp_path: Path) -> None:
    args = ["check", "--no-spark", "--profile", "kafka-4.2", "--report", "r", "-k", "test_regressions"]
    code, shown = _run_on_a_terminal(args, tmp_path)
    assert code == 0, shown[-3000:]
    assert PROGRESS.search(shown), shown[-3000:]
    piped = subprocess.run([*KFC, *args], capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=300,
                           check=False)
    assert piped.returncode == 0, piped.stdout[-3000:]
    assert not PROGRESS.search(piped.stdout + piped.stderr) and "\x1b" not in piped.stdout, piped.stdout


def test_the_summary_lists_rules_not_covered_and_skips_by_reason() -> None:
    from conformance.verdicts import skipped_lines, uncovered_lines
    from reference_impl.rules import RULES

    kip584 = sorted(r for r, rule in RULES.items() if rule.kip == "KIP-584")
    ran, skipped, absent = kip584[0], kip584[1], kip584[2:]
    tests = [{"status": "passed", "rules": [ran]},
             {"status": "skipped", "rules": [skipped], "summary": "Skipped: target lacks op(s) register"},
             {"status": "skipped", "rules": [], "summary": "Skipped: target lacks op(s) register"},
             {"status": "skipped", "rules": [], "summary": "Skipped: not in this profile"}]
    lines = uncovered_lines(tests, {ran}, {"KIP-584"})
    assert lines[0] == f"rules not covered: {len(kip584) - 1} of {len(kip584)}"
    assert f"  skipped: target lacks op(s) register: {skipped}" in lines
    listed = {r for line in lines[1:] for r in line.split(": ")[-1].split(", ")}
    assert listed == {skipped, *absent}
    assert skipped_lines(tests) == ["skipped: 3 test(s), by reason", "      2  target lacks op(s) register",
                                    "      1  not in this profile"]


def test_check_without_pyspark_says_how_to_get_it(tmp_path: Path) -> None:
    # pyspark blocked as if absent (the core install of the wheel: tests/test_wheel.py checks it for real)
    code = ("import sys; sys.modules['pyspark'] = None; sys.argv = ['kfc', 'check', '--report', 'r']; "
            "from kfc.cli import main; main()")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=_env(),
                         timeout=120, check=False)
    assert run.returncode == 1 and run.stdout == "", run.stdout
    assert run.stderr == ("error: the Spark replay that ends kfc check needs pyspark: "
                          "pip install 'kafka-feature-conformance[spark]', or pass --no-spark\n"), run.stderr
    assert not (tmp_path / "r").exists()
