"""Invariants of feature versioning over plain data, one home.  Each is a function returning the
problems it found (an empty list: it holds) and an `Invariant` record naming it: its number in the
stateful model's list (conformance.stateful) and its rule id.  The stateful model checks them after
its steps; the observe tier (conformance.live.checks) on what a running cluster says."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Invariant:
    number: int  # as listed in conformance.stateful's docstring
    rule: str
    statement: str

    def message(self, problems: list[str]) -> str:
        """What a failing check of the model says: the invariant, its rule, the problems."""
        return f"invariant {self.number} ({self.rule}): " + "; ".join(problems)


IN_RANGE = Invariant(1, "KIP584-OBS-01", "every finalized level lies in the supported range of every registered node")
EPOCH = Invariant(3, "KIP584-OBS-03", "the finalized epoch never goes back")
LEVEL_ZERO = Invariant(7, "KIP584-API-02", "a finalized level 0 is the same as absent: never listed")


def levels_outside(finalized: Mapping[str, int], supported: Mapping[str, tuple[int, int]] | Mapping[str, list[int]],
                   who: str, *, skip: Collection[str] = ()) -> list[str]:
    """Invariant 1 for one node: each finalized level within the node's supported range (a feature the
    node does not list is supported 0-0)."""
    out = []
    for name, level in finalized.items():
        if name in skip:
            continue
        lo, hi = supported.get(name, (0, 0))
        if not lo <= level <= hi:
            out.append(f"finalized {name}={level} lies outside {who}'s supported range "
                       + (f"{lo}-{hi}" if name in supported else "(not supported: 0-0)"))
    return out


def epoch_went_back(before: int, after: int) -> list[str]:
    """Invariant 3: the epoch is an offset of the metadata log; a later read never shows a smaller one."""
    return [f"the finalized epoch went back from {before} to {after}"] if after < before else []


def zero_levels(finalized: Mapping[str, int]) -> list[str]:
    """Invariant 7: no feature is listed as finalized at level 0."""
    return [f"finalized {name} listed at level 0" for name, level in sorted(finalized.items()) if level == 0]
