"""The generator: determinism, seed-range slicing, op and error coverage, replay verdicts."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conformance.corpus import read_corpus, write_corpus
from conformance.generate import (
    MAX_STEPS,
    MIN_STEPS,
    generate,
    generate_range,
    generate_to,
)
from conformance.replay import replay_rows, replay_trace, summarize
from conformance.targets import TargetError
from conformance.targets.reference import ReferenceTarget
from kfc.commands.generate import generate_command
from reference_impl import OPS, profile_names

N = 2000


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gen") / "corpus.parquet"
    info = generate_to(path, N, 42)
    print(f"generated {N} traces at {info['traces_per_s']} traces/s, {info['bytes']} bytes")
    return path


@pytest.fixture(scope="module")
def traces(corpus: Path) -> list[dict[str, Any]]:
    return [r.trace for r in read_corpus(corpus)]  # type: ignore[misc]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_same_arguments_same_bytes(tmp_path: Path, fmt: str) -> None:
    a, b = tmp_path / f"a.{fmt}", tmp_path / f"b.{fmt}"
    generate_to(a, 40, 7, fmt)
    generate_to(b, 40, 7, fmt)
    assert a.read_bytes() == b.read_bytes()
    generate_to(b, 40, 8, fmt)
    assert a.read_bytes() != b.read_bytes()


def test_bytes_do_not_depend_on_the_process(tmp_path: Path) -> None:
    """Another interpreter with another PYTHONHASHSEED writes the same file."""
    here = tmp_path / "here.parquet"
    generate_to(here, 30, 3)
    there = tmp_path / "there.parquet"
    code = f"from conformance.generate import generate_to; generate_to({str(there)!r}, 30, 3)"
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONHASHSEED": "12345"},
                   cwd=Path(__file__).resolve().parents[1])
    assert here.read_bytes() == there.read_bytes()


def test_ranges_concatenate_to_the_corpus() -> None:
    whole = list(generate(30, 5))
    parts = list(generate_range(5, 0, 7)) + list(generate_range(5, 7, 19)) + list(generate_range(5, 19, 30))
    assert parts == whole
    assert list(generate_range(5, 12, 13)) == [whole[12]]
    assert [t["id"] for t in whole] == [f"g5-{i:09d}" for i in range(30)]


def test_profiles_cycle_unless_given() -> None:
    names = list(profile_names())
    assert [t["profile"] for t in generate(len(names) * 2, 1)] == names * 2
    assert {t["profile"] for t in generate(5, 1, "kip-1155")} == {"kip-1155"}
    assert [t["profile"] for t in generate(4, 1, ["kafka-3.9", "kafka-4.0"])] == ["kafka-3.9", "kafka-4.0"] * 2


def test_every_op_and_many_error_codes(traces: list[dict[str, Any]]) -> None:
    assert len(traces) == N
    ops: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    lengths = set()
    for t in traces:
        lengths.add(len(t["steps"]))
        for s in t["steps"]:
            ops[s["command"]["op"]] += 1
            codes[s["expected"]["error"]] += 1
    print("ops:", dict(ops))
    print("outcome error codes reached:", dict(codes))
    assert set(OPS) <= set(ops), f"ops never generated: {sorted(set(OPS) - set(ops))}"
    assert min(lengths) >= MIN_STEPS and max(lengths) <= MAX_STEPS
    assert len(set(codes) - {"NONE"}) >= 8, sorted(codes)
    # downgrades of the binary, rolling restarts and newer-software coordinator records are in there
    softwares = {s["command"].get("software") for t in traces for s in t["steps"] if s["command"]["op"] == "register"}
    assert set(profile_names()) <= softwares
    kip1155 = [s for t in traces if t["profile"] == "kip-1155" for s in t["steps"]
               if s["command"]["op"] == "update_features" and "snapshot" in s["expected"]]
    assert kip1155, "no KIP-1155 downgrade succeeded"


def test_replay_against_the_reference_passes(corpus: Path) -> None:
    summary = summarize(replay_rows("reference", read_corpus(corpus)))
    assert summary["traces"] == N
    assert summary["by_status"]["pass"] == N, summary["first_divergences"]
    assert summary["divergence_rate"] == 0.0
    assert len(summary["coverage"]) >= len(OPS) - 1
    assert set(summary["by_profile"]) == set(profile_names())


def test_replay_against_a_mutant_diverges_with_trace_ids(traces: list[dict[str, Any]]) -> None:
    rows = list(replay_rows("mutant:broker-support-skips-fenced", iter(_rows(traces[:600]))))
    diverged = [r for r in rows if r["status"] == "diverged"]
    assert diverged, "the mutant was not caught"
    ids = {t["id"] for t in traces}
    for r in diverged:
        assert r["trace_id"] in ids and r["first_divergent_step"] is not None and r["diff"]
    summary = summarize(rows)
    assert summary["by_status"]["diverged"] == len(diverged) and summary["divergence_rate"] > 0


def _rows(traces: list[dict[str, Any]]) -> list[Any]:
    from conformance.corpus import CorpusRow

    return [CorpusRow(t["id"], t, None) for t in traces]


class Crashing(ReferenceTarget):
    """Raises on every snapshot; breaks for good (reset fails once) on load_coordinator."""

    def __init__(self) -> None:
        self.broken = False
        super().__init__()

    def reset(self, profile: str | None = None) -> None:
        if self.broken:
            self.broken = False
            raise TargetError("reset after a crash failed")
        super().reset(profile)

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        if command["op"] == "snapshot":
            raise RuntimeError("boom")
        if command["op"] == "load_coordinator":
            self.broken = True
            raise TargetError("the target process died")
        return super().apply(command)


def test_a_crashing_target_gives_target_error_rows(traces: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:
    from conformance import targets

    made = []

    def make(spec: str) -> Crashing:
        made.append(spec)
        return Crashing()

    monkeypatch.setattr(targets, "make_target", make)
    sample = traces[:120]
    rows = list(replay_rows("crashing", _rows(sample)))
    assert len(rows) == len(sample)  # rows in = rows out
    by = Counter(r["status"] for r in rows)
    assert by["target-error"] > 0 and by["pass"] > 0 and not by["diverged"]
    for r, t in zip(rows, sample, strict=True):
        assert r["trace_id"] == t["id"]
        ops = [s["command"]["op"] for s in t["steps"]]
        crashing = "snapshot" in ops or "load_coordinator" in ops
        assert (r["status"] == "target-error") == crashing, (r, ops)
        if crashing:
            assert r["op"] in ("snapshot", "load_coordinator") and r["diff"]
    assert len(made) > 1  # a target that could not reset was made again


def test_replay_trace_reports_the_first_divergence(traces: list[dict[str, Any]]) -> None:
    t = traces[3]
    bad = {**t, "steps": [dict(s) for s in t["steps"]]}
    bad["steps"][2] = {**bad["steps"][2], "expected": {**bad["steps"][2]["expected"], "error": "MADE_UP"}}
    r = replay_trace(ReferenceTarget(), bad)
    assert r["status"] == "diverged" and r["first_divergent_step"] == 2
    assert r["op"] == t["steps"][2]["command"]["op"] and "MADE_UP" in r["diff"] and "MADE_UP" in r["expected"]
    assert r["n_steps"] == len(t["steps"]) and r["ops"] == [s["command"]["op"] for s in t["steps"]]


def test_input_errors_pass_through(tmp_path: Path, traces: list[dict[str, Any]]) -> None:
    path = tmp_path / "c.jsonl"
    write_corpus(traces[:3], path)
    with path.open("a") as f:
        f.write("{broken\n")
    rows = list(replay_rows("reference", read_corpus(path)))
    assert [r["status"] for r in rows] == ["pass", "pass", "pass", "input-error"]
    assert rows[3]["trace_id"] == "c.jsonl line 4" and "not valid JSON" in rows[3]["diff"]
    s = summarize(rows)
    assert s["by_status"]["input-error"] == 1 and s["divergence_rate"] == 0.0


def test_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "c.jsonl"
    res = runner.invoke(generate_command, ["--count", "12", "--seed", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "generated 12 traces (jsonl" in res.output and "traces/s" in res.output
    assert len(out.read_text().splitlines()) == 12
    res = runner.invoke(generate_command, ["--count", "3", "--seed", "1", "--out", str(tmp_path / "c.parquet"),
                                           "--profile", "kafka-3.9"])
    assert res.exit_code == 0, res.output
    for args, text in [
        (["--count", "-1", "--seed", "1", "--out", str(out)], "--count must be >= 0"),
        (["--count", "1", "--seed", "1", "--out", str(out), "--profile", "kafka-9.9"], "Unknown profile 'kafka-9.9'"),
        (["--count", "1", "--seed", "1", "--out", "/proc/kfc-nope/c.jsonl"], "cannot write"),
        (["--count", "1", "--seed", "x", "--out", str(out)], "is not a valid integer"),
        (["--count", "1", "--seed", "1", "--out", str(out), "--format", "csv"], "'csv' is not one of"),
        (["--count", "1", "--seed", "1", "--out", str(tmp_path / "x.csv")], "'.csv' is not a corpus suffix"),
    ]:
        res = runner.invoke(generate_command, args)
        assert res.exit_code != 0 and text in res.output, (args, res.output)
        assert "Traceback" not in res.output
    assert not (tmp_path / "x.csv").exists()  # no Parquet file under a .csv name
