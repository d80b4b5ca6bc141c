"""Replay throughput: one corpus, three ways, one run (a benchmark, not a timed test).

    python -m benchmarks.replay --traces 20000            # generate a Parquet corpus, then replay it
    python -m benchmarks.replay --traces N --reuse C.parquet
    python -m benchmarks.replay --traces N --reuse C.parquet --only spark   # one or two phases only

Prints traces/s for a single-process loop, multiprocessing.Pool(2) and Spark local[2] (replay only,
and with Spark's start-up), their ratios to the loop, the generation rate, and the driver's peak
memory: the Python driver's max RSS (getrusage; measured right after the Spark phase, which runs
first) and the driver JVM's VmHWM.  Goals at N = 1,000,000: Spark >= 1.6x the loop, driver < 1 GiB.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

TARGET = "reference"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _jvm_hwm_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _slices(corpus: Path, size: int = 1024) -> list[tuple[int, int, int]]:
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(str(corpus)).metadata
    out = []
    for rg in range(meta.num_row_groups):
        n = meta.row_group(rg).num_rows
        out += [(rg, a, min(n, a + size)) for a in range(0, n, size)]
    return out


def _replay_slice(args: tuple[str, int, int, int]) -> Counter[str]:
    """Pool worker: one target per slice (as one per Spark partition), rows read from the Parquet row group."""
    import pyarrow.parquet as pq

    from conformance.replay import replay_rows

    path, rg, a, b = args
    table = pq.ParquetFile(path).read_row_group(rg, columns=["trace_id", "body"]).slice(a, b - a)
    rows = zip(table.column("trace_id").to_pylist(), table.column("body").to_pylist(), strict=True)
    return Counter(r["status"] for r in replay_rows(TARGET, rows))


def run_loop(corpus: Path) -> tuple[float, Counter[str]]:
    from conformance.corpus import iter_bodies
    from conformance.replay import replay_rows

    t0 = time.perf_counter()
    counts = Counter(r["status"] for r in replay_rows(TARGET, iter_bodies(corpus)))
    return time.perf_counter() - t0, counts


def run_pool(corpus: Path, procs: int = 2) -> tuple[float, Counter[str]]:
    t0 = time.perf_counter()
    counts: Counter[str] = Counter()
    with multiprocessing.get_context("fork").Pool(procs) as pool:
        for c in pool.imap_unordered(_replay_slice, [(str(corpus), *s) for s in _slices(corpus)]):
            counts.update(c)
    return time.perf_counter() - t0, counts


def run_spark(corpus: Path, master: str) -> dict[str, Any]:
    from spark_checks.replay_job import replay
    from spark_checks.session import SparkRun

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kfc-bench-") as out, SparkRun(master, app_name="kfc bench") as run:
        s = replay(corpus, TARGET, out, spark=run, progress=sys.stderr.isatty(), k_allure=0)
        jvm = _jvm_hwm_mb(run.jvm_pid())
        start = run.start_seconds
    return {"replay_s": s["seconds"]["replay"], "total_s": time.perf_counter() - t0, "start_s": start,
            "counts": s["by_status"], "partitions": s["partitions"], "jvm_hwm_mb": jvm, "py_rss_mb": _rss_mb()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.replay", description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, required=True, help="Corpus size N.")
    ap.add_argument("--reuse", type=Path, default=None,
                    help="Parquet corpus to reuse; generated there (and kept) if it does not exist yet.")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--spark-generate", action="store_true", help="Generate with Spark (2 cores) instead of one process.")
    ap.add_argument("--json", type=Path, default=None, help="Also write the figures as JSON here.")
    ap.add_argument("--only", default="spark,pool,loop",
                    help="Comma-separated phases to run (spark, pool, loop); default all three.")
    a = ap.parse_args(argv)
    phases = {p.strip() for p in a.only.split(",") if p.strip()}
    if not phases or phases - {"spark", "pool", "loop"}:
        ap.error("--only takes spark, pool and/or loop")

    from conformance.corpus import count_rows

    gen: dict[str, Any] = {}
    tmp = None
    if a.reuse and a.reuse.exists():
        corpus = a.reuse
        n = count_rows(corpus)
        if n != a.traces:
            print(f"note: {corpus} holds {n} traces (not {a.traces}); using {n}", file=sys.stderr)
    else:
        if a.reuse:
            corpus = a.reuse
        else:
            tmp = tempfile.TemporaryDirectory(prefix="kfc-bench-corpus-")
            corpus = Path(tmp.name) / f"corpus-{a.traces}.parquet"
        if a.spark_generate:
            from spark_checks.generate_job import generate_with_spark

            gen = generate_with_spark(a.traces, a.seed, corpus, "parquet", None, a.master)
            gen["how"] = f"Spark {a.master}"
        else:
            from conformance.generate import generate_to

            gen = generate_to(corpus, a.traces, a.seed, "parquet")
            gen["how"] = "one process"
        n = a.traces
        print(f"generated {n:,} traces ({gen['how']}) in {gen['seconds']:.1f} s: {gen['traces_per_s']:,.0f} traces/s, "
              f"{gen['bytes'] / 2**20:.1f} MiB", flush=True)
    sp: dict[str, Any] = {}
    pool_s = loop_s = None
    counts: dict[str, Counter[str]] = {}
    try:
        if "spark" in phases:
            sp = run_spark(corpus, a.master)  # first: the driver's peak RSS below is the Spark phase's
            counts["spark"] = Counter(sp["counts"])
            print(f"spark {a.master}: {sp['replay_s']:.1f} s", flush=True)
        if "pool" in phases:
            pool_s, counts["pool"] = run_pool(corpus)
            print(f"pool(2): {pool_s:.1f} s", flush=True)
        if "loop" in phases:
            loop_s, counts["loop"] = run_loop(corpus)
            print(f"loop: {loop_s:.1f} s", flush=True)
    finally:
        if tmp is not None:
            tmp.cleanup()
    first, *others = counts
    for name in others:
        if +counts[name] != +counts[first]:
            print(f"warning: {name} statuses {dict(counts[name])} differ from the {first}'s {dict(counts[first])}",
                  file=sys.stderr)
    rows = [("single-process loop", loop_s), ("multiprocessing.Pool(2)", pool_s),
            (f"Spark {a.master} (replay)", sp.get("replay_s")), (f"Spark {a.master} (with start-up)", sp.get("total_s"))]
    print(f"\nreplay of {n:,} traces against {TARGET} ({dict(+counts[first])})")
    print(f"{'how':<34}{'seconds':>10}{'traces/s':>12}{'x loop':>8}")
    for name, secs in rows:
        if secs is not None:
            ratio = f"{loop_s / secs:>8.2f}" if loop_s else f"{'-':>8}"
            print(f"{name:<34}{secs:>10.1f}{n / secs:>12,.0f}{ratio}")
    if sp:
        jvm = sp["jvm_hwm_mb"]
        print(f"Spark: {sp['partitions']} tasks, session start {sp['start_s']:.1f} s; driver peak RSS: Python "
              f"{sp['py_rss_mb']:.0f} MiB, JVM {jvm:.0f} MiB" if jvm else "")
    if gen:
        print(f"generation: {gen['traces_per_s']:,.0f} traces/s ({gen['how']})")
    if a.json:
        a.json.write_text(json.dumps({"traces": n, "loop_s": loop_s, "pool_s": pool_s, "spark": sp,
                                      "generation": gen}, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
