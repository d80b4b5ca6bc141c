"""Give every rule an example on every profile where the reference applies it.

A rule applies to a profile when the profile's generated corpus (seed 20261122, the bundled one's)
reaches it.  Where fixtures/examples/examples.jsonl (recorded from the project's tests) has no
example of that profile labelled with the rule, the first generated trace reaching it is cut after
that step and shrunk (earlier steps dropped while the last step still yields the rule), its
expected outcomes recomputed by the reference, and written to fixtures/examples/generated.jsonl,
labelled with the rule and the trace it came from.  Deterministic: same code, same file.

Run: python scripts/fill_examples.py [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance.generate import generate_one
from conformance.model import outcome_rules
from reference_impl import Cluster, profile_names

SEED, SCAN = 20261122, 400
RECORDED = ROOT / "fixtures" / "examples" / "examples.jsonl"
OUT = ROOT / "fixtures" / "examples" / "generated.jsonl"


def labelled(path: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                t = json.loads(line)
                out[t["profile"]] |= set(t.get("rules", []))
    return out


def replay(profile: str, commands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    c = Cluster(profile)
    return [{"command": cmd, "expected": c.apply(cmd)} for cmd in commands]


def shrink(profile: str, commands: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    i = len(commands) - 2
    while i >= 0:
        candidate = commands[:i] + commands[i + 1:]
        if rule in outcome_rules(replay(profile, candidate)[-1]["expected"]):
            commands = candidate
        i -= 1
    return commands


def examples() -> list[dict[str, Any]]:
    have = labelled(RECORDED)
    out = []
    for profile in profile_names():
        todo: dict[str, tuple[int, int]] = {}
        for index in range(SCAN):
            trace = generate_one(SEED, index, profile)
            for n, step in enumerate(trace["steps"]):
                for rule in sorted(outcome_rules(step["expected"]) - have[profile] - set(todo)):
                    todo[rule] = (index, n)
        for rule, (index, n) in sorted(todo.items()):
            trace = generate_one(SEED, index, profile)
            commands = shrink(profile, [s["command"] for s in trace["steps"][: n + 1]], rule)
            steps = replay(profile, commands)
            body = json.dumps(steps, sort_keys=True)
            out.append({"id": hashlib.sha256(f"{profile}:{rule}:{body}".encode()).hexdigest()[:16],
                        "profile": profile, "rules": [rule], "steps": steps,
                        "source": f"generated: seed {SEED} trace {index} step {n}, shrunk to {len(steps)} step(s)"})
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="fail if the file is not what this script writes")
    args = ap.parse_args()
    text = "".join(json.dumps(e, sort_keys=True) + "\n" for e in examples())
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run python scripts/fill_examples.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"{OUT.relative_to(ROOT)}: {text.count(chr(10))} examples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
