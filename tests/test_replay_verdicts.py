"""`kfc replay` says one verdict, consistent with its exit code, and gives every divergence a
shrunk trace with a one-line repro that `kfc replay-trace` confirms."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.engine import Lockstep
from conformance.trace import make_trace
from conformance.verdicts import replay_verdict
from reference_impl import Cluster


def _summary(**counts: int) -> dict[str, object]:
    return {"by_status": counts, "complete": True}


@pytest.mark.parametrize(("counts", "verdict"), [
    ({"pass": 3}, "PASS"),
    ({"pass": 3, "diverged": 1}, "DIVERGED"),
    ({"pass": 3, "target-error": 1, "input-error": 2}, "DIVERGED"),
    ({"pass": 3, "input-error": 2}, "INPUT ERRORS"),
    ({"input-error": 2}, "INPUT ERRORS"),
    ({}, "NOTHING CHECKED"),
])
def test_replay_verdict(counts: dict[str, int], verdict: str) -> None:
    assert replay_verdict(_summary(**counts)) == verdict
    assert replay_verdict({"by_status": {"pass": 1}, "complete": False}) == "DIVERGED"  # rows lost


def test_replay_shrinks_a_divergence_to_a_repro(tmp_path: Path) -> None:
    commands = [{"op": "format", "release_version": "3.9-IV0"}, {"op": "describe"},
                {"op": "register", "role": "broker", "node": 1},
                {"op": "update_features", "updates": [{"feature": "metadata.version", "level": -1}]},
                {"op": "describe"}]
    recorder = Lockstep(None, reference=Cluster("kafka-4.2"))
    trace = make_trace("kafka-4.2", [recorder.step(c).record() for c in commands], source="test")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps(trace) + "\n" + "{not json\n")
    target = "mutant:negative-level-off-by-one"
    run = subprocess.run([sys.executable, "-m", "kfc", "replay", str(corpus), "--target", target, "--out",
                          str(tmp_path / "out"), "--master", "local[1]", "--quiet"],
                         capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert [x.split()[0] for x in lines if x.startswith(("PASS", "DIVERGED", "INPUT ERRORS"))] == ["DIVERGED"]
    repros = [x.split("repro: ", 1)[1] for x in lines if "repro: kfc replay-trace" in x]
    assert len(repros) == 1, run.stdout
    shrunk = re.search(r"replay-trace (\S+) --target", repros[0])
    assert shrunk is not None
    small = json.loads(Path(shrunk.group(1)).read_text())
    assert [s["command"]["op"] for s in small["steps"]] == ["format", "update_features"]
    again = subprocess.run([sys.executable, "-m", "kfc", "replay-trace", shrunk.group(1), "--target", target],
                           capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 1 and "DIVERGED at step 1" in again.stdout


def test_a_trace_a_one_release_target_cannot_run_is_skipped_with_its_reason() -> None:
    """A harness of one release's code (active_software) cannot run another release's controller, and
    answers for a node of another release only where its builders put the same on the wire
    (node_software): a trace asking or registering any other node is not run."""
    from conformance.replay import foreign_software

    runs = frozenset({"kafka-4.1", "kafka-4.1.1"})
    fmt = {"op": "format", "controllers": [{"id": 3000}], "software": "kafka-4.1"}
    reg = {"op": "register", "role": "broker", "node": 2, "software": "kafka-4.4"}
    steps = [{"command": c} for c in (fmt, reg)]
    assert foreign_software({"steps": steps}, runs) is None  # any node emulated from its ranges
    assert foreign_software({"steps": steps}, runs, runs | {"kafka-4.4"}) is None
    asked = [*steps, {"command": {"op": "api_versions", "node": 2}}]
    assert foreign_software({"steps": asked}, runs, runs | {"kafka-4.4"}) is None
    assert foreign_software({"steps": asked}, runs, runs) == (
        "target cannot answer as node 2 on kafka-4.4 (its builders answer as kafka-4.1, kafka-4.1.1)")
    assert foreign_software({"steps": steps}, runs, runs) is not None  # its registration is its code too
    explicit = [{"command": fmt}, {"command": {**reg, "ranges": {"metadata.version": [0, 27]}}}]
    assert foreign_software({"steps": explicit}, runs, runs) is not None  # its software encodes its ranges
    assert foreign_software({"steps": [{"command": {**fmt, "software": "kafka-4.4",
                                                    "controllers": [{"id": 3000, "ranges": {}}]}}]}, runs) is None
    active = [{"command": {**fmt, "software": "kafka-4.2"}}]
    assert "its active controller on kafka-4.2" in (foreign_software({"steps": active}, runs) or "")
    assert foreign_software({"steps": asked}, None) is None  # the reference runs every release
