"""One engine, one verdict: `kfc replay-trace`, `kfc replay` (Spark) and the suite's lockstep
session judge the same traces alike -- same status, same first divergent step -- for a pass, a
divergence, a target that crashes and a target that answers a malformed outcome."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from conformance.engine import Lockstep, run_steps, shrink
from conformance.replay import replay_trace
from conformance.session import Divergence, Session
from conformance.targets import Target, make_target
from conformance.trace import make_trace, write_trace
from reference_impl import Cluster

PROFILE = "kafka-4.2"
FAULTY = f"subprocess:{sys.executable} {Path(__file__).parent / 'targets' / 'faulty_target.py'}"
MV = "metadata.version"

SCENARIOS: dict[str, tuple[list[dict[str, Any]], str, int | None]] = {
    # name: (commands, status, first failing step)
    "pass": ([{"op": "format", "release_version": "3.9-IV0"}, {"op": "register", "role": "broker", "node": 1},
              {"op": "update_features", "updates": [{"feature": MV, "level": 24}]}, {"op": "describe"}],
             "pass", None),
    "diverged": ([{"op": "format", "release_version": "3.9-IV0"}, {"op": "describe"},
                  {"op": "update_features", "updates": [{"feature": MV, "level": -1}]}, {"op": "describe"}],
                 "diverged", 2),
    "crash": ([{"op": "format", "release_version": "3.9-IV0"}, {"op": "register", "role": "broker", "node": 1},
               {"op": "state"}, {"op": "describe"}], "target-error", 2),
    "malformed": ([{"op": "format", "release_version": "3.9-IV0"}, {"op": "version_mapping", "release_version": "3.9"},
                   {"op": "describe"}], "target-error", 1),
}


def _trace(name: str) -> dict[str, Any]:
    commands = SCENARIOS[name][0]
    recorder = Lockstep(None, reference=Cluster(PROFILE))
    steps = [recorder.step(c).record() for c in commands]
    trace = make_trace(PROFILE, steps, source=f"test_engine {name}")
    return {**trace, "id": name}


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("traces")
    return {name: write_trace(_trace(name), d) for name in SCENARIOS}


def _replay_trace_cli(path: Path) -> tuple[str, int | None]:
    run = subprocess.run([sys.executable, "-m", "kfc", "replay-trace", str(path), "--target", FAULTY],
                         capture_output=True, text=True, timeout=120, check=False)
    assert "Traceback" not in run.stderr, run.stderr
    last = run.stdout.strip().splitlines()[-1]
    if run.returncode == 0:
        assert ": PASS" in last
        return "pass", None
    m = re.search(r": (DIVERGED|TARGET-ERROR) at step (\d+)", last)
    assert m, run.stdout + run.stderr
    return m.group(1).lower(), int(m.group(2))


def _suite(trace: dict[str, Any]) -> tuple[str, int | None]:
    target = make_target(FAULTY)
    try:
        session = Session(target, trace["profile"], allure_steps=False)
        try:
            for step in trace["steps"]:
                session.step(step["command"])
        except Divergence as d:
            return ("target-error" if d.result.failure else "diverged"), d.result.index
        return "pass", None
    finally:
        target.close()


def test_replay_trace_replay_and_suite_agree(traces: dict[str, Path], tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(json.loads(p.read_text()), sort_keys=True) + "\n" for p in traces.values()))
    run = subprocess.run([sys.executable, "-m", "kfc", "replay", str(corpus), "--target", FAULTY, "--master",
                          "local[1]", "--out", str(tmp_path / "out"), "--quiet"],
                         capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 1, run.stdout + run.stderr  # a divergence and two target errors
    rows = {r["trace_id"]: r for f in sorted((tmp_path / "out" / "results").glob("*.parquet"))
            for r in pq.read_table(f).to_pylist()}
    for name, (_, status, step) in SCENARIOS.items():
        spark = (rows[name]["status"], rows[name]["first_divergent_step"])
        cli = _replay_trace_cli(traces[name])
        suite = _suite(json.loads(traces[name].read_text()))
        assert spark == cli == suite == (status, step), f"{name}: spark {spark}, replay-trace {cli}, suite {suite}"


class _Malformed(Target):
    """In process, an outcome without error_code/message (the engine's own schema check catches it)."""

    def __init__(self) -> None:
        self.inner = make_target("reference")

    def reset(self, profile: str | None = None) -> None:
        self.inner.reset(profile)

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        return {"error": "NONE"} if command["op"] == "version_mapping" else self.inner.apply(command)


def test_in_process_malformed_outcome_is_the_same_target_error_everywhere() -> None:
    trace = _trace("malformed")
    verdict = run_steps(trace, _Malformed())
    row = replay_trace(_Malformed(), trace)
    assert (verdict.status, verdict.first.index if verdict.first else None) == ("target-error", 1)
    assert (row["status"], row["first_divergent_step"]) == ("target-error", 1)
    assert "must contain" in (row["diff"] or "")
    session = Session(_Malformed(), PROFILE, allure_steps=False)
    session.step(trace["steps"][0]["command"])
    with pytest.raises(Divergence) as e:
        session.step(trace["steps"][1]["command"])
    assert e.value.result.failure and e.value.result.index == 1


def test_a_bug_in_the_reference_is_not_an_outcome() -> None:
    class Broken:
        def apply(self, command: dict[str, Any]) -> dict[str, Any]:
            raise KeyError("bug")

    engine = Lockstep(make_target("reference"), reference=Broken())
    with pytest.raises(KeyError):
        engine.step({"op": "describe"})


def test_shrink_keeps_the_failure_and_drops_the_rest() -> None:
    commands = [{"op": "format", "release_version": "3.9-IV0"}, {"op": "describe"},
                {"op": "register", "role": "broker", "node": 1}, {"op": "describe"},
                {"op": "update_features", "updates": [{"feature": MV, "level": -1}]}, {"op": "describe"}]
    recorder = Lockstep(None, reference=Cluster(PROFILE))
    trace = make_trace(PROFILE, [recorder.step(c).record() for c in commands], source="t")
    target = make_target("mutant:negative-level-off-by-one")
    small = shrink(trace, target)
    # format stays: an unformatted cluster refuses the update on both sides
    assert small is not None and [s["command"]["op"] for s in small["steps"]] == ["format", "update_features"]
    assert small["rules"] == ["KIP584-UPD-02"] and small["steps"][-1]["diff"]
    assert run_steps(small, target).status == "diverged"
    assert shrink(trace, make_target("reference")) is None
