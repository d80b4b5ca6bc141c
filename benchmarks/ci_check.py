"""The ci suite's wall time, this tree against an earlier commit, measured in one sitting:
`kfc check --no-spark` (the embedded reference, kfc-ci) run alternately from each tree.

    python -m benchmarks.ci_check --before a72f244 --runs 7

The earlier commit is checked out in a temporary git worktree and run with this venv's Python, so
both sides share the interpreter and the installed libraries; only the project's code differs.
Runs alternate (before, after, before, …) so that the machine's drift falls on both.  Prints every
run, the median and the fastest of each side, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_SECONDS = 6.0


def one(tree: Path, report: Path) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    code = subprocess.call([sys.executable, "-m", "kfc", "check", "--no-spark", "--report", str(report)],
                           cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, code


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="a commit of this repository (the 'before')")
    ap.add_argument("--runs", type=int, default=7, help="runs per side")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kfc-ci-check-") as tmp:
        before = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(before), a.before], cwd=ROOT, check=True)
        try:
            times: dict[str, list[float]] = {"before": [], "after": []}
            for i in range(a.runs):
                for side, tree in (("before", before), ("after", ROOT)):
                    seconds, code = one(tree, Path(tmp) / f"{side}-report")
                    if code != 0:
                        print(f"{side}: kfc check exited {code}: not a valid measurement", file=sys.stderr)
                        return 1
                    times[side].append(seconds)
                    print(f"run {i + 1} {side:6} {seconds:5.2f} s", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before)], cwd=ROOT, check=False)
    med = {k: statistics.median(v) for k, v in times.items()}
    for side in ("before", "after"):
        print(f"{side:6} ({a.before if side == 'before' else 'this tree'}): median {med[side]:.2f} s, "
              f"fastest {min(times[side]):.2f} s, slowest {max(times[side]):.2f} s")
    print(f"after / before = {med['after'] / med['before']:.2f} (medians); goal < {GOAL_SECONDS:.0f} s: "
          f"{'met' if med['after'] < GOAL_SECONDS else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
