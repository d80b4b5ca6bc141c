"""Record the conformance suite's example tables from the project's own tests.

Every reference cluster a test in tests/ drives becomes one example: its commands, the outcomes
the reference gave, and the rule ids of the test's markers plus the rules the outcomes name.
Run: python scripts/record_examples.py [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "examples" / "examples.jsonl"


def _trace(rec: dict) -> dict:
    steps = rec["steps"]
    rules = {m[0] for m in rec["marks"]}
    for s in steps:
        out = s["expected"]
        if out.get("rule"):
            rules.add(out["rule"])
        for r in (out.get("results") or {}).values():
            if isinstance(r, dict) and r.get("rule"):
                rules.add(r["rule"])
    body = json.dumps([rec["profile"], [s["command"] for s in steps]], sort_keys=True)
    return {"format": "kfc-trace", "version": 1, "id": hashlib.sha256(body.encode()).hexdigest()[:16],
            "profile": rec["profile"], "source": rec["source"], "rules": sorted(rules), "steps": steps}


def coordinator_examples() -> list[dict]:
    """KIP-915 examples: records written by the newest software, loaded by each profile's loader."""
    sys.path.insert(0, str(ROOT))
    from reference_impl import Cluster, profile_names
    from reference_impl.coordinator import NewerWriter

    offsets = [{"key_type": 1, "key": {"group": "g", "topic": "t", "partition": p}, "version": v,
                "value": {"offset": 5 + p, "leaderEpoch": -1, "metadata": "", "commitTimestamp": 7}}
               for p, v in ((0, 3), (1, 4))]
    txns = [{"key_type": 0, "key": {"transactionalId": f"tx{v}"}, "version": v,
             "value": {"producerId": 1, "producerEpoch": 0, "transactionTimeoutMs": 60000, "transactionStatus": 0,
                       "transactionPartitions": None, "transactionLastUpdateTimestampMs": 1,
                       "transactionStartTimestampMs": 1}} for v in (0, 1)]
    out = []
    for reader in profile_names():
        for coordinator, logical in (("group", offsets), ("transaction", txns)):
            w = NewerWriter(profile_names()[-1], 7)
            variants = {
                "plain": w.write(coordinator, logical),
                "unknown tags and key types": w.write(coordinator, logical, unknown_tags=2, future_keys=1),
            }
            future = list(w.write(coordinator, logical))
            k, v = future[-1]
            assert v is not None
            future[-1] = (k, (9).to_bytes(2, "big") + v[2:])  # a value version no release knows
            variants["future value version"] = future
            variants["empty value buffer"] = [(future[0][0], b"")]
            for name, raw in variants.items():
                recs = [{"key": k.hex(), "value": None if v is None else v.hex()} for k, v in raw]
                c = Cluster(reader)
                cmds: list[dict] = [{"op": "format"},
                                    {"op": "load_coordinator", "coordinator": coordinator, "records": recs}]
                steps = [{"command": x, "expected": json.loads(json.dumps(c.apply(x)))} for x in cmds]
                rules = {"KIP915-LOAD-01", "KIP915-LOAD-02"} if name == "unknown tags and key types" else set()
                out.append({"source": f"kip915:{coordinator}:{name}:{reader}", "profile": reader,
                            "marks": [[r, "pass"] for r in sorted(rules)], "steps": steps})
    return out


def record() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.jsonl"
        env = {**os.environ, "KFC_RECORD_EXAMPLES": str(raw)}
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
               "tests/test_controller.py", "tests/test_kip1155.py", "tests/test_tools.py"]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-2000:])
            raise SystemExit("error: the project tests failed while recording; fix them first")
        seen: dict[str, dict] = {}
        lines = [json.loads(line) for line in raw.read_text().splitlines()] + coordinator_examples()
        for rec in lines:
            if not all(isinstance(s["command"], dict) and isinstance(s["command"].get("op"), str)
                       for s in rec["steps"]):
                continue  # not expressible in the wire contract (a command is an object with an "op")
            t = _trace(rec)
            if t["id"] in seen:  # the same command sequence from another test: merge the labels
                seen[t["id"]]["rules"] = sorted(set(seen[t["id"]]["rules"]) | set(t["rules"]))
            else:
                seen[t["id"]] = t
    return "".join(json.dumps(t, sort_keys=True) + "\n" for t in sorted(seen.values(), key=lambda t: t["id"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="fail if the committed examples are stale")
    args = ap.parse_args(argv)
    text = record()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"error: {OUT.relative_to(ROOT)} is stale; run python scripts/record_examples.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"{OUT.relative_to(ROOT)}: {text.count(chr(10))} examples")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
