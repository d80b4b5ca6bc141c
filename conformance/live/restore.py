"""Putting a live cluster's starting levels back after the mutate tier.

One feature per UpdateFeatures request, in an order that keeps dependencies valid: upgrades of
metadata.version first, then the other features (downgrades before upgrades), then downgrades of
metadata.version.  A downgrade tries SAFE_DOWNGRADE, then UNSAFE_DOWNGRADE.  What still differs is
reported precisely (feature, wanted, now, the cluster's answer)."""

from __future__ import annotations

from typing import Any

MV = "metadata.version"
KRAFT = "kraft.version"


def _now(target: Any) -> dict[str, int]:
    target.dirty = True
    obs = target.observe()
    return dict(obs.finalized)


def restore_levels(target: Any, start: dict[str, int], profile: str) -> dict[str, Any]:
    now = _now(target)
    names = sorted((set(start) | set(now)) - {KRAFT})  # kraft.version cannot go back down (4.1+)
    wanted = {n: start.get(n, 0) for n in names}
    order = ([n for n in names if n == MV and wanted[n] > now.get(n, 0)]
             + [n for n in names if n != MV and wanted[n] < now.get(n, 0)]
             + [n for n in names if n != MV and wanted[n] > now.get(n, 0)]
             + [n for n in names if n == MV and wanted[n] < now.get(n, 0)])
    sent: list[dict[str, Any]] = []
    why: dict[str, Any] = {}
    for name in order:
        cur = now.get(name, 0)
        kinds = ["UPGRADE"] if wanted[name] > cur else ["SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"]
        for kind in kinds:
            cmd = {"op": "update_features", "updates": [{"feature": name, "level": wanted[name], "upgrade_type": kind}]}
            out = target.apply(cmd)
            sent.append({"feature": name, "level": wanted[name], "upgrade_type": kind, "error": out.get("error"),
                         "message": out.get("message")})
            if out.get("error") == "NONE" and not any(
                    r.get("error") != "NONE" for r in (out.get("results") or {}).values()):
                why.pop(name, None)
                break
            results = out.get("results") or {}
            why[name] = (results.get(name) or {}).get("message") or out.get("message") or out.get("error")
    after = _now(target)
    not_restored = [{"feature": n, "wanted": wanted[n], "now": after.get(n, 0), "why": why.get(n, "")}
                    for n in names if after.get(n, 0) != wanted[n]]
    if start.get(KRAFT, 0) != after.get(KRAFT, 0):
        not_restored.append({"feature": KRAFT, "wanted": start.get(KRAFT, 0), "now": after.get(KRAFT, 0),
                             "why": "kraft.version is never lowered by the suite (a downgrade is refused from 4.1)"})
    return {"start": dict(sorted(start.items())), "after": dict(sorted(after.items())), "requests": sent,
            "not_restored": not_restored}
