"""`kfc tour`: replay the tour files under fixtures/tour on each profile and check every step."""

from __future__ import annotations

import json
from typing import Any

from .api import Cluster
from .data import fixtures


def _subst(obj: Any, profile: str) -> Any:
    if obj == "$profile":
        return profile
    if isinstance(obj, dict):
        return {k: _subst(v, profile) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_subst(v, profile) for v in obj]
    return obj


def effective(out: dict[str, Any]) -> dict[str, Any]:
    """3.x UpdateFeatures answers per feature with a top-level NONE: lift the first failure."""
    if out.get("error") == "NONE" and out.get("results"):
        for r in out["results"].values():
            if r["error"] != "NONE":
                return {**out, "error": r["error"], "message": r["message"], "rule": r.get("rule")}
    return out


def _mismatch(expect: dict[str, Any], out: dict[str, Any], profile: str) -> list[str]:
    bad = []
    out = effective(out)
    for key, want in expect.items():
        if isinstance(want, dict) and "*" in want:
            want = want.get(profile, want["*"])
        if key == "message_contains":
            if want not in (out.get("message") or ""):
                bad.append(f"message lacks {want!r}: {out.get('message')!r}")
        elif key == "finalized":
            got = {k: out.get("finalized", {}).get(k) for k in want}
            if got != want:
                bad.append(f"finalized {got} != {want}")
        elif out.get(key) != want:
            bad.append(f"{key}={out.get(key)!r}, expected {want!r}")
    return bad


def run_tour(echo: Any) -> int:
    """Print one line per step and profile; return the number of mismatches."""
    failures = 0
    tour_dir = fixtures() / "tour"
    for path in sorted(tour_dir.iterdir(), key=lambda p: p.name):
        if not path.name.endswith(".json"):
            continue
        tour = json.loads(path.read_text())
        echo(f"== {path.name}: {tour['about']}")
        for profile in tour["profiles"]:
            cluster = Cluster(profile)
            results = []
            for n, step in enumerate(tour["steps"], 1):
                out = cluster.apply(_subst(step["command"], profile))
                bad = _mismatch(step["expect"], out, profile)
                results.append((n, step, out, bad))
            ok = sum(1 for r in results if not r[3])
            echo(f"  {profile:<10} {ok}/{len(results)} steps as expected, epoch {cluster.epoch}")
            for n, step, out, bad in results:
                if bad:
                    failures += 1
                    echo(f"    step {n} ({step.get('say', step['command']['op'])}): " + "; ".join(bad))
        first = tour["profiles"][-1]
        echo(f"  walk-through on {first}:")
        cluster = Cluster(first)
        for step in tour["steps"]:
            out = cluster.apply(_subst(step["command"], first))
            if "say" in step:
                msg = f" - {out['message']}" if out.get("message") else ""
                echo(f"    {step['say']}: {out['error']}{msg}")
    return failures
