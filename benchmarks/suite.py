"""Suite benchmarks (not timed tests): ci-profile wall time, stateful steps/s, mutant kill times.

    python -m benchmarks.suite [--profile kafka-4.2] [--no-mutants]

All figures come from one run on this machine; ratios are within that run.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from conformance.runner import load_summary, run_mutants, run_suite


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="kafka-4.2")
    ap.add_argument("--no-mutants", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "suite"
        start = time.perf_counter()
        code = run_suite("reference", args.profile, "ci", out)
        wall = time.perf_counter() - start
        s = load_summary(out) or {"tests": [], "coverage": {}}
        stateful = next((t for t in s["tests"] if "test_stateful_model" in t["nodeid"]), None)
        steps = sum((s.get("coverage") or {}).get("ops", {}).values())
        examples = [t for t in s["tests"] if "test_example" in t["nodeid"]]
        print(f"ci suite against reference:{args.profile}: {wall:.1f} s wall (exit {code}), "
              f"{len(s['tests'])} tests")
        if stateful:
            print(f"  stateful model: {steps} steps in {stateful['duration']:.2f} s = "
                  f"{steps / stateful['duration']:,.0f} steps/s (lockstep target + reference, invariants)")
        ex_time = sum(t["duration"] for t in examples)
        print(f"  example tables: {len(examples)} examples in {ex_time:.2f} s")
        if args.no_mutants:
            return 0
        start = time.perf_counter()
        from conformance.mutants import MUTANTS

        rows = run_mutants(list(MUTANTS), Path(tmp) / "mutants", args.jobs, "ci")
        total = time.perf_counter() - start
    print(f"\nmutant run: {len(rows)} mutants, {args.jobs} at a time, {total:.1f} s wall "
          f"(goal <= 300 s: {'met' if total <= 300 else 'NOT met'})")
    print(f"{'mutant':<38} {'rule':<17} {'killed':<7} {'s':>5}  first failing test")
    for r in sorted(rows, key=lambda r: -r["seconds"]):
        test = (r["first_failing_test"] or "-").replace("conformance/suite/", "")
        print(f"{r['mutant']:<38} {r['rule']:<17} {'yes' if r['killed'] else 'NO':<7} {r['seconds']:>5.1f}  {test[:60]}")
    killed = sum(bool(r["killed"]) for r in rows)
    print(f"kill rate {killed}/{len(rows)} = {100.0 * killed / len(rows):.0f}%")
    return 0 if killed == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
