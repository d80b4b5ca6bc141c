"""The Spark replay job in local[2]: generate, replay against the reference and a mutant, corrupt rows,
a target that crashes inside a task.  One SparkSession for the module (its start-up is ~10-20 s)."""

from __future__ import annotations

import filecmp
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conformance.corpus import corpus_files, read_traces, write_corpus
from conformance.generate import generate_to
from kfc.commands.generate import generate_command
from kfc.commands.replay import replay_command
from spark_checks import generate_job, replay_job
from spark_checks.session import SparkRun

N_TRACES = 500
SEED = 11

# A subprocess target: the reference behind the JSON-lines protocol, except that the process dies
# (exit 3, mid-request) on CRASH_OP -- a crash inside a Spark task.
CRASHING_TARGET = """\
import json, os, sys
from conformance.serving.jsonlines import handle
from conformance.targets import make_target
target = make_target("reference")
for line in sys.stdin:
    req = json.loads(line)
    if req.get("type") == "apply" and req.get("command", {}).get("op") == sys.argv[1]:
        os._exit(3)
    sys.stdout.write(json.dumps(handle(target, line)) + "\\n")
    sys.stdout.flush()
"""
CRASH_OP = "state"


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkRun]:
    run = SparkRun("local[2]", app_name="kfc tests")
    run.start()
    try:
        yield run
    finally:
        run.stop()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`kfc generate` of a 500-trace Parquet corpus (the other half's command, as a user runs it)."""
    path = tmp_path_factory.mktemp("corpus") / "c.parquet"
    res = CliRunner().invoke(generate_command, ["--count", str(N_TRACES), "--seed", str(SEED), "--out", str(path)])
    assert res.exit_code == 0, res.output
    return path


def _results(out: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(out / "results").to_pylist()


def test_generate_with_spark_is_byte_identical(spark: SparkRun, tmp_path: Path) -> None:
    for suffix in ("parquet", "jsonl"):
        single, split = tmp_path / f"a.{suffix}", tmp_path / f"b.{suffix}"
        generate_to(single, 150, 5, row_group_size=64)
        info = generate_job.generate_with_spark(150, 5, split, row_group_size=64, spark=spark)
        assert info["count"] == 150 and info["tasks"] >= 2
        assert filecmp.cmp(single, split, shallow=False), suffix
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # staging removed


def test_replay_reference_no_divergence(spark: SparkRun, corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    s = replay_job.replay(corpus, "reference", out, spark=spark, progress=False)
    assert s["by_status"] == {"pass": N_TRACES, "diverged": 0, "target-error": 0, "input-error": 0}
    assert s["rows_in"] == s["rows_out"] == N_TRACES and s["complete"]
    assert s["partitions"] >= 2  # a small Parquet corpus still spreads over both cores
    assert s["divergence_rate"] == 0.0 and s["traces_per_s"] > 0
    assert sum(s["by_profile"][p]["pass"] for p in s["by_profile"]) == N_TRACES
    assert s["by_op"]["format"] >= N_TRACES and "NONE" in s["by_error_code"]
    assert json.loads((out / "summary.json").read_text())["traces"] == N_TRACES
    cov = json.loads((out / "coverage.json").read_text())
    assert cov == s["coverage"] and "update_features" in cov
    rows = _results(out)
    assert len(rows) == N_TRACES and len({r["trace_id"] for r in rows}) == N_TRACES
    assert all(r["trace"] is None for r in rows)  # bodies are kept only for findings
    assert not (out / "allure-results").exists()


def test_replay_mutant_lists_divergences(spark: SparkRun, corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    s = replay_job.replay(corpus, "mutant:broker-support-skips-fenced", out, spark=spark, k_allure=5, progress=False)
    diverged = s["by_status"]["diverged"]
    assert diverged > 0 and s["rows_out"] == N_TRACES
    ids = [d["trace_id"] for d in s["first_divergences"]]
    assert ids and ids == sorted(ids) and all(i.startswith(f"g{SEED}-") for i in ids)
    rows = [r for r in _results(out) if r["status"] == "diverged"]
    assert len(rows) == diverged
    assert all(r["first_divergent_step"] is not None and r["diff"] and r["trace"] for r in rows)
    results = sorted((out / "allure-results").glob("*-result.json"))
    assert len(results) == 5 == s["allure_results"]
    first = json.loads(results[0].read_text())
    labels = {lab["name"] for lab in first["labels"]}
    assert {"epic", "feature", "story", "suite"} <= labels and first["status"] == "failed"
    for att in first["attachments"]:
        assert (out / "allure-results" / att["source"]).is_file()
    from reference_impl.rules import RULES

    for result in map(json.loads, (r.read_text() for r in results)):
        by_name: dict[str, list[str]] = {}
        for lab in result["labels"]:
            by_name.setdefault(lab["name"], []).append(lab["value"])
        stories = [rid for rid in by_name["story"] if rid in RULES]
        assert stories, result["labels"]  # the mutant breaks a rule: its id is the story
        assert {RULES[rid].kip for rid in stories} <= set(by_name["epic"])
        assert {RULES[rid].area for rid in stories} <= set(by_name["feature"])
        assert result["name"].startswith("replay g") and {"trace", "expected vs actual"} == {
            a["name"] for a in result["attachments"]}
    env = _properties(out / "allure-results" / "environment.properties")
    assert env["target"] == "mutant:broker-support-skips-fenced" and env["master"] == "local[2]"
    assert set(env["profiles"].split(", ")) == set(s["by_profile"]) and env["spark"].startswith("4.")
    assert env["java"] and env["python"] and env["kafka-feature-conformance"]
    # A second run into the same directory replaces our files and keeps anyone else's; its environment
    # joins a suite's as replay.* keys.
    (out / "allure-results" / "suite-result.json").write_text("{}")
    (out / "allure-results" / "environment.properties").write_text("target=reference\nprofile=kafka-4.2\n")
    replay_job.replay(corpus, "mutant:broker-support-skips-fenced", out, spark=spark, k_allure=2, progress=False)
    assert len(list((out / "allure-results").glob("kfc-replay-*-result.json"))) == 2
    assert (out / "allure-results" / "suite-result.json").exists()
    env = _properties(out / "allure-results" / "environment.properties")
    assert env["target"] == "reference" and env["profile"] == "kafka-4.2"
    assert env["replay.target"] == "mutant:broker-support-skips-fenced" and env["replay.master"] == "local[2]"


def _properties(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if not line.startswith("#"))


def test_corrupt_rows_are_input_errors(spark: SparkRun, corpus: Path, tmp_path: Path) -> None:
    traces = list(read_traces(corpus))[:60]
    lines = [json.dumps(t, sort_keys=True) for t in traces]
    lines[10] = lines[10][: len(lines[10]) // 2]  # truncated: not JSON, no id
    bad = dict(traces[20], steps="nope")  # JSON with an id, fails the schema
    lines[20] = json.dumps(bad)
    lines.insert(30, "")  # blank lines are not rows
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\xfe not utf-8\n")
    s = replay_job.replay(jsonl, "reference", tmp_path / "out", spark=spark, progress=False)
    assert s["rows_in"] == s["rows_out"] == 61
    assert s["by_status"] == {"pass": 58, "diverged": 0, "target-error": 0, "input-error": 3}
    errors = {r["trace_id"]: r for r in _results(tmp_path / "out") if r["status"] == "input-error"}
    assert traces[20]["id"] in errors  # reported by its id
    assert "c.jsonl line 11" in errors  # no id: by its line
    assert "c.jsonl line 62" in errors
    # Parquet: a row whose body is garbage keeps its trace_id column.
    pq_path = tmp_path / "c.parquet"
    write_corpus(traces[:20], pq_path)
    import pyarrow.parquet as pq

    table = pq.read_table(pq_path).to_pylist()
    table[7]["body"] = "{garbage"
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(table), pq_path)
    s = replay_job.replay(pq_path, "reference", tmp_path / "out2", spark=spark, progress=False)
    assert s["rows_out"] == 20 and s["by_status"]["input-error"] == 1 and s["by_status"]["pass"] == 19
    assert [r["trace_id"] for r in _results(tmp_path / "out2") if r["status"] == "input-error"] == [traces[7]["id"]]


def test_target_crash_inside_a_task_is_per_trace(spark: SparkRun, corpus: Path, tmp_path: Path) -> None:
    script = tmp_path / "crashing_target.py"
    script.write_text(CRASHING_TARGET)
    small = tmp_path / "small.jsonl"
    traces = list(read_traces(corpus))[:80]
    write_corpus(traces, small)
    crashing = {t["id"] for t in traces if any(s["command"]["op"] == CRASH_OP for s in t["steps"])}
    assert 0 < len(crashing) < len(traces)
    s = replay_job.replay(small, f"subprocess:{sys.executable} {script} {CRASH_OP}", tmp_path / "out", spark=spark,
                   progress=False)
    assert s["rows_out"] == 80
    assert s["by_status"]["target-error"] == len(crashing)
    assert s["by_status"]["pass"] == 80 - len(crashing)
    rows = _results(tmp_path / "out")
    assert {r["trace_id"] for r in rows if r["status"] == "target-error"} == crashing
    assert all(r["op"] == CRASH_OP for r in rows if r["status"] == "target-error")


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    cases = [
        ([str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")], "no such corpus"),
        ([str(corpus_files_dummy(tmp_path)), "--target", "bogus", "--out", str(tmp_path / "o")], "unknown target"),
        ([str(corpus_files_dummy(tmp_path)), "--master", "spark://127.0.0.1:1", "--out", str(tmp_path / "o")],
         "cannot reach the Spark master"),
    ]
    # A damaged Parquet corpus (its footer cut off) is named before Spark even starts.
    good = tmp_path / "good.parquet"
    generate_to(good, 20, 3)
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    cases.append(([str(damaged), "--out", str(tmp_path / "o")], f"{damaged}: not a readable Parquet file"))
    for args, fragment in cases:
        res = runner.invoke(replay_command, args)
        assert res.exit_code == 1 and isinstance(res.exception, SystemExit), res.output
        assert fragment in res.output and "Traceback" not in res.output
        assert len(res.output.strip().splitlines()) == 1, res.output


def test_generate_cli_spark_honours_row_group_size(spark: SparkRun, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow.parquet as pq

    real = generate_job.generate_with_spark

    def on_shared_session(*args: Any, **kw: Any) -> dict[str, Any]:
        kw["spark"] = spark
        return real(*args, **kw)

    monkeypatch.setattr(generate_job, "generate_with_spark", on_shared_session)
    out = tmp_path / "c.parquet"
    res = CliRunner().invoke(generate_command, ["--count", "230", "--seed", "4", "--out", str(out), "--spark",
                                                "--row-group-size", "50"])
    assert res.exit_code == 0, res.output
    meta = pq.ParquetFile(out).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [50, 50, 50, 50, 30]


def corpus_files_dummy(tmp_path: Path) -> Path:
    p = tmp_path / "one.jsonl"
    if not p.exists():
        generate_to(p, 1, 1)
    assert corpus_files(p) == [p]
    return p


def test_cli_exit_code_follows_the_verdict(spark: SparkRun, corpus: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    real = replay_job.replay

    def on_shared_session(*args: Any, **kw: Any) -> dict[str, Any]:
        kw.pop("master", None)
        kw["spark"] = spark
        return real(*args, **kw)

    monkeypatch.setattr(replay_job, "replay", on_shared_session)
    ok = CliRunner().invoke(replay_command, [str(corpus), "--out", str(tmp_path / "a"), "--quiet"])
    assert ok.exit_code == 0, ok.output
    assert "PASS" in ok.output and "500" in ok.output
    bad = CliRunner().invoke(replay_command, [str(corpus), "--target", "mutant:broker-support-skips-fenced",
                                              "--out", str(tmp_path / "b"), "--quiet"])
    assert bad.exit_code == 1 and "DIVERGED" in bad.output and f"g{SEED}-" in bad.output
