"""Reference vs Kafka's own classes (the kafka-jvm harness) on the same bundled corpus, one run.

    python -m benchmarks.kafka_jvm [--version 4.1.1] [--profile kafka-4.1] [--limit 2000] [--rounds 2]

Three ways over the same traces (those of the first LIMIT whose ops the harness can all run), each
replayed with the one trace engine (conformance.replay.replay_trace), one after the other:

    reference            the embedded reference of the profile, in this process (one core)
    kafka-jvm apply      the harness, one `apply` round trip per command (protocol v1 as is)
    kafka-jvm batch      the harness, one `apply_batch` round trip per trace (the extension)

Both harness ways share one JVM, started once (its start is reported alone); rounds alternate the
two so that a warmer JIT favours neither.  Steps/s is given by wall time and by CPU time (this
process's plus the JVM's, from /proc): the CPU figure is the one to compare on a shared machine.
Ratios are reference / harness, measured in this run.  Last, the whole bundled corpus (LIMIT
traces) is replayed end to end against `kafka-jvm:VERSION` as `kfc replay` does in one task (JVM
start and close included; traces with ops the harness lacks are skipped and counted).
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.corpus import read_corpus
from conformance.replay import missing_ops, replay_rows, replay_trace

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of a process (utime, stime of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


@dataclass
class Run:
    wall: float = 0.0
    cpu: float = 0.0
    traces: int = 0
    steps: int = 0
    statuses: Counter[str] = field(default_factory=Counter)


def _replay(target: Any, traces: list[dict[str, Any]], run: Run, jvm_cpu: Callable[[], float]) -> None:
    w0, p0, j0 = time.perf_counter(), time.process_time(), jvm_cpu()
    for trace in traces:
        result = replay_trace(target, trace)
        run.statuses[result["status"]] += 1
        run.steps += int(result["n_steps"])
    run.wall += time.perf_counter() - w0
    run.cpu += time.process_time() - p0 + jvm_cpu() - j0
    run.traces += len(traces)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.kafka_jvm", description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", default="4.1.1")
    ap.add_argument("--profile", default="kafka-4.1")
    ap.add_argument("--limit", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=2, help="Rounds of each harness way (alternated).")
    args = ap.parse_args(argv)
    from conformance.realkafka.harness import build
    from conformance.realkafka.target import KafkaJvmTarget
    from conformance.targets import make_target

    t0 = time.perf_counter()
    harness = build(args.version)
    build_s = harness.build_seconds or time.perf_counter() - t0
    corpus = CORPUS / f"bundled-{args.profile}.parquet"
    rows = [r for _, r in zip(range(args.limit), read_corpus(corpus), strict=False)]

    t0 = time.perf_counter()
    jvm = KafkaJvmTarget(args.version)
    try:
        jvm.reset(args.profile)
        start_s = time.perf_counter() - t0
        pid = jvm.pid
        assert pid is not None
        start_cpu = _cpu_of(pid)
        caps = frozenset(jvm.capabilities or ())
        traces = [r.trace for r in rows if r.trace is not None and not missing_ops(r.trace, caps)]
        print(f"corpus {corpus.name}: {len(traces)} of the first {len(rows)} traces use only the harness's ops; "
              f"harness build {build_s:.1f} s{' (cached)' if harness.build_seconds == 0 else ''}; JVM start + "
              f"handshake + reset {start_s:.2f} s wall, {start_cpu:.2f} s JVM CPU")
        ref = Run()
        reference = make_target(f"reference:{args.profile}")
        _replay(reference, traces, ref, lambda: 0.0)
        ways = {"apply": Run(), "batch": Run()}
        for i in range(args.rounds):
            for way in (("apply", "batch") if i % 2 == 0 else ("batch", "apply")):
                jvm.batch = way == "batch"
                _replay(jvm, traces, ways[way], lambda: _cpu_of(pid))
    finally:
        jvm.close()

    print(f"\n{'how':<28} {'traces':>7} {'steps':>7} {'wall s':>8} {'CPU s':>7} {'steps/s wall':>13} "
          f"{'steps/s CPU':>12} {'ref/x CPU':>10}  statuses")
    for name, run in (("reference (in process)", ref), ("kafka-jvm apply (v1)", ways["apply"]),
                      ("kafka-jvm batch", ways["batch"])):
        ratio = (ref.steps / ref.cpu) / (run.steps / run.cpu) if run.cpu and ref.cpu else float("nan")
        print(f"{name:<28} {run.traces:>7} {run.steps:>7} {run.wall:>8.2f} {run.cpu:>7.2f} "
              f"{run.steps / run.wall:>13,.0f} {run.steps / run.cpu:>12,.0f} {ratio:>10.1f}  {dict(run.statuses)}")
    a, b = ways["apply"], ways["batch"]
    print(f"batch vs apply: {a.wall / b.wall:.2f}x wall, {a.cpu / b.cpu:.2f}x CPU")

    t0 = time.perf_counter()
    statuses: Counter[str] = Counter()
    for result in replay_rows(f"kafka-jvm:{args.version}", rows):
        statuses[result["status"]] += 1
    whole = time.perf_counter() - t0
    print(f"\nwhole corpus ({len(rows)} traces) on kafka-jvm:{args.version}, one process, JVM start and close "
          f"included: {whole:.1f} s wall  {dict(statuses)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
