"""Live-cluster benchmark (not a timed test): validate_only probes per second against
`kfc serve-broker --no-control` on loopback, and the wall time of the default live run.

    python -m benchmarks.live [--rounds 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from conformance.live.context import build
from conformance.live.target import KafkaTarget
from conformance.serving.process import ServeBroker
from conformance.session import Session
from conformance.targets import make_target

NODES = ("--no-control", "--broker", "0", "--broker", "4", "--controller", "7")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with ServeBroker(*NODES) as sb:
        spec = f"kafka://{sb.bootstrap}?controller={sb.info['controller']}"
        target = make_target(spec)
        hello = target.hello()
        ctx = build(target, hello["profile"])
        probes = list(ctx.probes.values())
        best = 0.0
        for _ in range(args.rounds):
            start = time.perf_counter()
            for p in probes:
                Session(target, ctx.profile, allure_steps=False).step(p.command)
            rate = len(probes) / (time.perf_counter() - start)
            best = max(best, rate)
        spent = target.budget.spent if isinstance(target, KafkaTarget) else 0
        target.close()
        print(f"probes: {len(probes)} per round, best of {args.rounds}: {best:,.0f} probes/s "
              f"({spent} requests in all)")
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "kfc", "check", "--no-spark", "--target", spec, "--report",
                              "reports/bench-live"], capture_output=True, text=True, check=False)
        print(f"default live run (observe, probe): {time.perf_counter() - start:.1f} s wall, exit {run.returncode}")


if __name__ == "__main__":
    main()
