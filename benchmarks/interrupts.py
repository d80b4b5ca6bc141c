"""Ctrl-C at random moments: every interrupt of `kfc check` (with and without Spark) and `kfc replay`
must end the run within 2 s with one line ("interrupted"), exit code 130 and no process left.

    python -m benchmarks.interrupts --runs 200                 # 200 per command
    python -m benchmarks.interrupts --runs 20 --only check     # one command: check, check-spark, replay
    python -m benchmarks.interrupts --runs 20 --json out.json

Each command is run once to the end first (its duration D); then each run starts it in a session of
its own, waits a random moment in [0, D) and sends SIGINT to its process group, as a terminal's
Ctrl-C does.  A run that ended before the signal is counted apart.  Per command: runs interrupted,
runs with one line + 130, the slowest exit (signal to exit), runs leaving a process (the Spark JVM
included) or a scratch file behind, and the first few bad outputs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.peers.sessions import kill_session, session

ROOT = Path(__file__).resolve().parent.parent
JVM_WARNING = "WARNING: Using incubator modules: jdk.incubator.vector"  # the JVM's start-up line, not kfc's
STOP_SECONDS = 2.0


def commands(work: Path) -> dict[str, list[str]]:
    corpus = work / "corpus.parquet"
    if not corpus.exists():
        from conformance.generate import generate_to

        generate_to(corpus, 2000, 7)
    return {
        "check": ["check", "--no-spark", "--report", str(work / "r")],
        "check-spark": ["check", "--report", str(work / "r")],
        "replay": ["replay", str(corpus), "--master", "local[2]", "--out", str(work / "o"), "--quiet"],
    }


def one(args: list[str], work: Path, delay: float | None) -> dict[str, Any]:
    """Run `kfc ARGS`; with a delay, SIGINT its process group that long after the start."""
    tmp = Path(tempfile.mkdtemp(prefix="tmp-", dir=work))
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT), "KFC_HYPOTHESIS_DB": str(work / "db")}
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "kfc", *args], cwd=work, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    sent = None
    try:
        if delay is not None:
            try:
                proc.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGINT)
                sent = time.monotonic()
        try:
            out, err = proc.communicate(timeout=600 if sent is None else 30)
        except subprocess.TimeoutExpired:
            out, err = "", "(no exit within 30 s of the signal)"
        end = time.monotonic()
        left = session(proc.pid)
    finally:
        kill_session(proc.pid)
        proc.wait()
    scratch = sorted(p.name for p in tmp.iterdir())
    lines = [line for line in err.splitlines() if line != JVM_WARNING]
    # The last stdout lines tell a lost interrupt from one that came as the run was already exiting
    # (its verdict printed: CPython runs no handler once finalization has begun).
    return {"delay": delay, "signalled": sent is not None, "code": proc.returncode, "lines": lines,
            "stdout_tail": out.splitlines()[-2:],
            "seconds": end - start, "stop_seconds": (end - sent) if sent is not None else None,
            "left": [cmd[:120] for _, cmd in left], "scratch": scratch}


def bench(name: str, args: list[str], runs: int, work: Path, rng: random.Random) -> dict[str, Any]:
    full = one(args, work, None)
    if full["code"] not in (0, 1):
        raise SystemExit(f"{name}: the uninterrupted run failed ({full['code']}): {full['lines'][-5:]}")
    duration = full["seconds"]
    rows = []
    for i in range(runs):
        row = one(args, work, rng.uniform(0.0, duration))
        rows.append(row)
        ok = row["code"] == 130 and row["lines"] == ["interrupted"]
        left = (f"  LEFT {row['left'][:2]}" if row["left"] else "") + \
            (f"  SCRATCH {row['scratch'][:3]}" if row["scratch"] else "")
        print(f"  {name} {i + 1}/{runs}: at {row['delay']:.2f} s -> "
              + (f"exit {row['code']} in {row['stop_seconds']:.2f} s" if row["signalled"] else "ended before")
              + ("" if ok or not row["signalled"] else f"  BAD {row['lines'][-3:]}") + left, file=sys.stderr)
    hit = [r for r in rows if r["signalled"]]
    good = [r for r in hit if r["code"] == 130 and r["lines"] == ["interrupted"]]
    slowest = max((r["stop_seconds"] for r in hit), default=0.0)
    return {"command": name, "full_run_s": round(duration, 1), "runs": len(rows), "interrupted": len(hit),
            "one_line_130": len(good), "slowest_exit_s": round(slowest, 2),
            "over_2s": sum(r["stop_seconds"] > STOP_SECONDS for r in hit),
            "leftovers": sum(bool(r["left"] or r["scratch"]) for r in rows),
            "bad": [{k: r[k] for k in ("delay", "code", "lines", "stdout_tail", "left", "scratch")}
                    for r in hit if r not in good or r["left"] or r["scratch"]][:5]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200, help="interrupted runs per command")
    ap.add_argument("--only", action="append", choices=["check", "check-spark", "replay"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory(prefix="kfc-interrupts-") as d:
        work = Path(d)
        table = [bench(name, args, a.runs, work, rng) for name, args in commands(work).items()
                 if not a.only or name in a.only]
    cols = ["command", "full_run_s", "runs", "interrupted", "one_line_130", "slowest_exit_s", "over_2s", "leftovers"]
    print(" | ".join(cols))
    for row in table:
        print(" | ".join(str(row[c]) for c in cols))
    for row in table:
        for bad in row["bad"]:
            print(f"{row['command']}: {json.dumps(bad)}")
    if a.json:
        a.json.write_text(json.dumps(table, indent=1) + "\n")
    ok = all(r["one_line_130"] == r["interrupted"] and not r["over_2s"] and not r["leftovers"] for r in table)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
