"""Putting a live cluster's starting levels back after the mutate tier, and knowing beforehand that
it can be done.

One feature per UpdateFeatures request, in an order that keeps dependencies valid: upgrades of
metadata.version first, then the other features (downgrades before upgrades), then downgrades of
metadata.version.  A downgrade tries SAFE_DOWNGRADE, then UNSAFE_DOWNGRADE.  What still differs is
reported precisely (feature, wanted, now, the cluster's answer).

The mutate tier only makes changes the reference can undo (`reversible`): a lossy metadata.version
step, for one, cannot be taken back on a release profile, so it is sent as a probe instead.  A
change that then cannot be undone on the cluster is the cluster's finding, not the suite's."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from reference_impl import KRAFT, MV

Apply = Callable[[dict[str, Any]], dict[str, Any]]


def plan(start: dict[str, int], now: dict[str, int]) -> list[tuple[str, int, list[str]]]:
    """(feature, level, upgrade types to try) taking `now` back to `start` (kraft.version aside)."""
    names = sorted((set(start) | set(now)) - {KRAFT})  # kraft.version never goes back (4.1+)
    want = {n: start.get(n, 0) for n in names}
    order = ([n for n in names if n == MV and want[n] > now.get(n, 0)]
             + [n for n in names if n != MV and want[n] < now.get(n, 0)]
             + [n for n in names if n != MV and want[n] > now.get(n, 0)]
             + [n for n in names if n == MV and want[n] < now.get(n, 0)])
    return [(n, want[n], ["UPGRADE"] if want[n] > now.get(n, 0) else ["SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE"])
            for n in order]


def undo(apply: Apply, start: dict[str, int], now: dict[str, int]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Send the plan through `apply`; (requests sent, feature -> why it failed)."""
    sent: list[dict[str, Any]] = []
    why: dict[str, str] = {}
    for name, level, kinds in plan(start, now):
        for kind in kinds:
            out = apply({"op": "update_features",
                         "updates": [{"feature": name, "level": level, "upgrade_type": kind}]})
            sent.append({"feature": name, "level": level, "upgrade_type": kind, "error": out.get("error"),
                         "message": out.get("message")})
            results = out.get("results") or {}
            if out.get("error") == "NONE" and all(r.get("error") == "NONE" for r in results.values()):
                why.pop(name, None)
                break
            why[name] = str((results.get(name) or {}).get("message") or out.get("message") or out.get("error"))
    return sent, why


def _levels(cluster: Any) -> dict[str, int]:
    return {k: v for k, v in cluster.finalized_view().items() if k != KRAFT}


def reversible(cluster: Any, command: dict[str, Any], start: dict[str, int], keep: set[int]) -> bool:
    """Whether, on a copy of the reference, `command`, unregistering the brokers not in `keep` (the
    suite's synthetic ones) and then the restore plan end at `start`."""
    trial = copy.deepcopy(cluster)
    trial.apply(command)
    for node in sorted(set(trial.image.brokers) - keep):
        trial.apply({"op": "unregister", "node": node})
    undo(trial.apply, start, trial.finalized_view())
    return _levels(trial) == {k: v for k, v in start.items() if k != KRAFT and v}


def _now(target: Any) -> dict[str, int]:
    target.dirty = True
    return dict(target.observe().finalized)


def restore_levels(target: Any, start: dict[str, int], profile: str) -> dict[str, Any]:
    sent, why = undo(target.apply, start, _now(target))
    after = _now(target)
    names = sorted((set(start) | set(after)) - {KRAFT})
    not_restored = [{"feature": n, "wanted": start.get(n, 0), "now": after.get(n, 0), "why": why.get(n, "")}
                    for n in names if after.get(n, 0) != start.get(n, 0)]
    if start.get(KRAFT, 0) != after.get(KRAFT, 0):
        not_restored.append({"feature": KRAFT, "wanted": start.get(KRAFT, 0), "now": after.get(KRAFT, 0),
                             "why": "kraft.version is never lowered by the suite (a downgrade is refused from 4.1)"})
    return {"start": dict(sorted(start.items())), "after": dict(sorted(after.items())), "requests": sent,
            "not_restored": not_restored}
