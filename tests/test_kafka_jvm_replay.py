"""Corpus replay against Kafka's own classes (kafka-jvm) and the pieces that make it fast.

The JVM tests replay a slice of the bundled kafka-4.1 corpus on kafka-jvm:4.1.1 (one JVM, a few
seconds): traces the harness can express are run and compared (a planted wrong expectation is
found), the others are skipped with the ops it lacks, and a whole trace per `apply_batch` round
trip gives the same verdicts as one `apply` per command.  The others need no JVM."""

from __future__ import annotations

import copy
import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conformance.corpus import read_corpus, write_corpus
from conformance.replay import Prefetched, missing_ops, replay_trace, summarize
from conformance.targets import TargetError, make_target
from kfc.commands.replay import replay_verdict

ROOT = Path(__file__).resolve().parents[1]
VERSION = "4.1.1"
CORPUS = ROOT / "fixtures" / "corpus" / "bundled-kafka-4.1.parquet"
HARNESS_OPS = frozenset({"format", "restore_state", "version_mapping", "feature_dependencies", "register",  # a subset
                         "update_features", "api_versions", "describe", "state"})

needs_jvm = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("mvn") is None,
                               reason="needs a JDK and Maven (the harness is compiled against Kafka's jars)")


def _slice(expressible: int, other: int, caps: frozenset[str] = HARNESS_OPS
           ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The first traces of the bundled corpus a target with `caps` can run, and the first it cannot (an
    op it lacks); traces with a node on another release (replay skips them on kafka-jvm) are neither."""
    from conformance.realkafka.target import node_wire
    from conformance.replay import foreign_software
    from reference_impl import load_profile, profile_names

    runs = frozenset({"kafka-4.1", "kafka-4.1.1"})  # what kafka-jvm:4.1.1 runs (4.1.0 is another release)
    own = node_wire(load_profile("kafka-4.1.1").behaviour)  # and whose nodes its builders answer for
    nodes = frozenset(n for n in profile_names() if node_wire(load_profile(n).behaviour) == own)
    can, cannot = [], []
    for row in read_corpus(CORPUS):
        assert row.trace is not None
        if missing_ops(row.trace, caps):
            cannot.append(row.trace)
        elif foreign_software(row.trace, runs, nodes) is None:
            can.append(row.trace)
        if len(can) >= expressible and len(cannot) >= other:
            break
    return can[:expressible], cannot[:other]


# -- without a JVM ---------------------------------------------------------------------------------

def test_a_trace_using_an_op_the_target_lacks_is_skipped_counted_and_never_passed() -> None:
    can, cannot = _slice(3, 2)
    target = make_target("reference:kafka-4.1")
    target.capabilities = HARNESS_OPS  # as the harness declares them
    rows = [replay_trace(target, t) for t in can + cannot]
    assert [r["status"] for r in rows[:3]] == ["pass"] * 3
    for r, t in zip(rows[3:], cannot, strict=True):
        assert r["status"] == "skipped"
        assert r["diff"] == "the target lacks op(s) " + ", ".join(missing_ops(t, HARNESS_OPS))
    s = summarize(rows)
    assert s["by_status"]["skipped"] == 2 and s["by_status"]["pass"] == 3
    assert s["steps"] == sum(len(t["steps"]) for t in can)  # skipped steps are not counted as replayed
    assert s["skipped_ops"] == dict(Counter(op for t in cannot for op in missing_ops(t, HARNESS_OPS)))
    assert not s["first_divergences"]
    assert replay_verdict(summarize(rows[3:])) == "NOTHING CHECKED"  # all skipped: nothing was checked
    assert replay_verdict(s) == "PASS"


class _Batching:
    """A target that offers apply_batch but fails it, answering one command at a time instead."""

    unreported: frozenset[str] = frozenset()
    batching = True

    def __init__(self, reference: Any, fail_at: int | None):
        self.reference, self.fail_at, self.applied, self.resets, self.batches = reference, fail_at, 0, 0, 0

    def reset(self, profile: str | None = None) -> None:
        self.resets += 1
        self.applied = 0
        self.reference.reset(profile)

    def observed_state(self) -> dict[str, Any] | None:
        return None

    def apply_batch(self, commands: Any) -> list[dict[str, Any]]:
        self.batches += 1
        raise TargetError("the batch failed somewhere")

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        if self.applied == self.fail_at:
            raise TargetError("crashed here")
        self.applied += 1
        return self.reference.apply(command)


def test_a_failed_batch_is_replayed_one_command_at_a_time_to_find_the_failing_step() -> None:
    (trace,), _ = _slice(1, 0)
    n_initial = len(trace.get("initial", ()))
    fake = _Batching(make_target("reference:kafka-4.1"), fail_at=n_initial + 2)
    row = replay_trace(fake, trace)
    assert fake.batches == 1 and fake.resets == 2  # the batch, then a fresh start for the step-by-step replay
    assert row["status"] == "target-error" and row["first_divergent_step"] == 2 and "crashed here" in row["diff"]
    ok = _Batching(make_target("reference:kafka-4.1"), fail_at=None)
    assert replay_trace(ok, trace)["status"] == "pass"


def test_prefetched_hands_out_the_batch_outcomes_in_order() -> None:
    reference = make_target("reference:kafka-4.1")
    commands = [{"op": "format", "release_version": "3.9"}, {"op": "register", "node": 1}, {"op": "state"}]

    class Recorder(_Batching):
        def apply_batch(self, cmds: Any) -> list[dict[str, Any]]:
            self.batches += 1
            return [self.reference.apply(c) for c in cmds]

    rec = Recorder(reference, fail_at=None)
    p = Prefetched(rec, commands)
    p.reset("kafka-4.1")
    outs = [p.apply(c) for c in commands]
    assert [o["op"] for o in outs] == ["format", "register", "state"] and rec.applied == 0 and rec.batches == 1
    with pytest.raises(RuntimeError, match="out of step"):
        p.apply(commands[0])  # past the end: the engine never does this


# -- against Kafka's own classes -------------------------------------------------------------------

@pytest.fixture(scope="module")
def jvm() -> Iterator[Any]:
    from conformance.realkafka.target import KafkaJvmTarget

    t = KafkaJvmTarget(VERSION)
    try:
        yield t
    finally:
        t.close()
    assert t.pid is None


@needs_jvm
def test_the_harness_starts_from_its_class_data_archive(jvm: Any) -> None:
    """Built with a CDS archive of a training run; the JVM could use it (else it warns on stderr)."""
    jsa = next(a.split("=", 1)[1] for a in jvm.argv if a.startswith("-XX:SharedArchiveFile="))
    assert Path(jsa).is_file() and Path(jsa).parent.name == jvm.harness.classes.parent.name
    jvm.reset("kafka-4.1")
    assert not [line for line in jvm.stderr_tail() if "archive" in line.lower()], jvm.stderr_tail()


@needs_jvm
def test_the_harness_offers_apply_batch_and_answers_it_as_single_applies(jvm: Any) -> None:
    from conformance.model import hello_problem

    hello = jvm.hello()
    assert hello["extensions"] == ["apply_batch"] and hello_problem(hello) is None
    commands = [{"op": "format", "release_version": "3.9"},
                {"op": "register", "node": 1, "software": "kafka-3.9"},
                {"op": "register", "node": "one"},  # malformed: answered here, never sent
                {"op": "register", "node": 2},
                {"op": "update_features", "updates": [{"feature": "metadata.version", "level": 26}]},
                {"op": "describe", "node": 1}]
    jvm.reset("kafka-4.1")
    batched = jvm.apply_batch(commands)
    jvm.reset("kafka-4.1")
    single = [jvm.apply(c) for c in commands]
    assert batched == single
    assert batched[2]["error"] == "INVALID_COMMAND" and batched[4]["error"] == "INVALID_UPDATE_VERSION"
    assert "Broker 1 only supports versions" in batched[4]["message"]  # the kafka-3.9 broker's range, from Kafka


@needs_jvm
def test_a_corpus_slice_replays_on_kafkas_classes_and_is_compared(jvm: Any) -> None:
    can, cannot = _slice(8, 3, jvm.capabilities)
    wrong = copy.deepcopy(can[0])
    step = next(i for i, s in enumerate(wrong["steps"]) if s["expected"]["error"] == "NONE")
    wrong["steps"][step]["expected"]["error"] = "INVALID_UPDATE_VERSION"  # an expectation Kafka cannot meet
    traces = [*can, wrong, *cannot]
    verdicts = {}
    for batch in (True, False):
        jvm.batch = batch
        try:
            verdicts[batch] = [replay_trace(jvm, t) for t in traces]
        finally:
            jvm.batch = True
    rows = verdicts[True]
    assert [(r["status"], r["first_divergent_step"]) for r in rows] == \
        [(r["status"], r["first_divergent_step"]) for r in verdicts[False]]  # batching changes no verdict
    ran = rows[:len(can)]
    assert all(r["status"] in ("pass", "diverged") for r in ran) and sum(r["status"] == "pass" for r in ran) >= 5
    planted = rows[len(can)]
    assert planted["status"] == "diverged" and planted["first_divergent_step"] == step
    assert "error: expected 'INVALID_UPDATE_VERSION', got 'NONE'" in planted["diff"]
    assert [r["status"] for r in rows[len(can) + 1:]] == ["skipped"] * len(cannot)


@needs_jvm
def test_kfc_replay_against_kafka_jvm_runs_compares_and_counts_skips(jvm: Any, tmp_path: Path) -> None:
    """`kfc replay` (Spark local[1]: one task, one harness JVM) on a small JSON Lines corpus."""
    pytest.importorskip("pyspark")
    from kfc.commands.replay import replay_command

    can, cannot = _slice(8, 2, jvm.capabilities)
    passing = [t for t in can if replay_trace(jvm, t)["status"] == "pass"][:4]
    assert len(passing) == 4
    corpus = tmp_path / "slice.jsonl"
    write_corpus([*passing, *cannot], corpus)
    res = CliRunner().invoke(replay_command, [str(corpus), "--target", f"kafka-jvm:{VERSION}", "--master",
                                              "local[1]", "--out", str(tmp_path / "out"), "--quiet"])
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["by_status"] == {"pass": 4, "diverged": 0, "target-error": 0, "input-error": 0, "skipped": 2}
    assert summary["partitions"] == 1  # one harness JVM for the whole task
    assert summary["steps"] == sum(len(t["steps"]) for t in passing)  # skipped traces' steps are not counted
    assert "skipped 2 traces (not run, not passed): the target lacks" in res.output and "PASS" in res.output
    assert res.exit_code == 0, res.output


@needs_jvm
def test_kfc_replay_no_spark_against_kafka_jvm_has_the_same_outputs(jvm: Any, tmp_path: Path) -> None:
    """`kfc replay --no-spark`: one harness JVM in this process, the same summary and results."""
    import pyarrow.parquet as pq

    from kfc.commands.replay import replay_command

    can, cannot = _slice(8, 2, jvm.capabilities)
    passing = [t for t in can if replay_trace(jvm, t)["status"] == "pass"][:3]
    wrong = copy.deepcopy(passing[0])
    wrong["id"] = "planted"
    wrong["steps"][0]["expected"]["error"] = "UNKNOWN_SERVER_ERROR"
    corpus = tmp_path / "slice.jsonl"
    write_corpus([*passing, wrong, *cannot], corpus)
    out = tmp_path / "out"
    res = CliRunner().invoke(replay_command, [str(corpus), "--target", f"kafka-jvm:{VERSION}", "--no-spark",
                                              "--out", str(out), "--quiet", "--k-allure", "0"])
    assert res.exit_code == 1, res.output  # the planted divergence
    summary = json.loads((out / "summary.json").read_text())
    assert summary["by_status"] == {"pass": 3, "diverged": 1, "target-error": 0, "input-error": 0, "skipped": 2}
    assert summary["complete"] and summary["partitions"] == 1
    rows = {r["trace_id"]: r for r in pq.read_table(out / "results").to_pylist()}
    assert rows["planted"]["first_divergent_step"] == 0 and rows["planted"]["trace"]  # kept for triage
    assert "DIVERGED" in res.output and "planted" in res.output
    bad = CliRunner().invoke(replay_command, [str(corpus), "--target", "kafka-jvm:0.0.1", "--no-spark",
                                              "--out", str(tmp_path / "o2")])
    assert bad.exit_code == 1 and "kafka-jvm:0.0.1" in bad.output and "Traceback" not in bad.output
