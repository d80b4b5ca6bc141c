"""Reference vs Kafka's own classes (the kafka-jvm harness) on the same bundled corpus, one run.

    python -m benchmarks.kafka_jvm [--version 4.1.1] [--profile kafka-4.1] [--limit 2000]

Both replay the traces of the corpus whose ops the harness can all run with the one trace engine (conformance.replay.replay_rows), one process
each, one after the other (one core each).  Steps/s counts the steps of every trace replayed
(passing or not); the harness figure includes its JVM start, which is also reported alone, as is
the harness build (0 when it comes from the per-user cache).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

from conformance.corpus import read_corpus
from conformance.replay import replay_rows

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"


def _rows(corpus: Path, limit: int, capabilities: frozenset[str]) -> list[Any]:
    """The first `limit` traces whose ops the harness can all run (the others would only measure skips)."""
    rows = [r for _, r in zip(range(limit), read_corpus(corpus), strict=False)]
    return [r for r in rows if r.trace is not None and {s["command"]["op"] for s in r.trace["steps"]} <= capabilities]


def _replay(spec: str, rows: list[Any]) -> tuple[float, int, int, Counter[str]]:
    start = time.perf_counter()
    statuses: Counter[str] = Counter()
    steps = 0
    for result in replay_rows(spec, rows):
        statuses[result["status"]] += 1
        steps += int(result["n_steps"])
    return time.perf_counter() - start, len(rows), steps, statuses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default="4.1.1")
    ap.add_argument("--profile", default="kafka-4.1")
    ap.add_argument("--limit", type=int, default=2000)
    args = ap.parse_args()
    from conformance.realkafka.harness import build
    from conformance.realkafka.target import KafkaJvmTarget

    t0 = time.perf_counter()
    harness = build(args.version)
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    target = KafkaJvmTarget(args.version)
    target.reset(args.profile)
    start_s = time.perf_counter() - t0
    capabilities = frozenset(target.hello()["capabilities"])
    target.close()
    corpus = CORPUS / f"bundled-{args.profile}.parquet"
    rows = _rows(corpus, args.limit, capabilities)
    print(f"corpus {corpus.name}: {len(rows)} of the first {args.limit} traces use only the harness's ops; harness build {harness.build_seconds or build_s:.1f} s"
          f"{' (cached)' if harness.build_seconds == 0 else ''}; JVM start + handshake + reset {start_s:.2f} s")
    print(f"{'target':<22} {'traces':>7} {'steps':>7} {'wall s':>8} {'steps/s':>9}  statuses")
    for spec in (f"reference:{args.profile}", f"kafka-jvm:{args.version}"):
        wall, n, steps, statuses = _replay(spec, rows)
        print(f"{spec:<22} {n:>7} {steps:>7} {wall:>8.2f} {steps / wall:>9.0f}  {dict(statuses)}")


if __name__ == "__main__":
    main()
