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

    def message(self, *problems: str) -> str:
        """What a failing check says: the invariant, its rule, the problems."""
        return f"invariant {self.number} ({self.rule}): " + "; ".join(problems)

    def violated(self, *problems: str) -> Violated:
        """The exception to raise where it does not hold (`if not ...: raise X.violated(...)`)."""
        return Violated(self, problems)


class Violated(AssertionError):
    """An invariant does not hold: its record and the problems (an AssertionError, so Hypothesis
    shrinks it as any failed check; the suite reports its rule id)."""

    def __init__(self, invariant: Invariant, problems: tuple[str, ...]):
        super().__init__(invariant.message(*problems))
        self.invariant, self.problems = invariant, problems


IN_RANGE = Invariant(1, "KIP584-OBS-01", "every finalized level lies in the supported range of every registered node")
UNCHANGED = Invariant(2, "KIP584-UPD-09", "a failed or validate-only update changes nothing (levels and epoch)")
EPOCH = Invariant(3, "KIP584-OBS-03", "the finalized epoch never goes back")
EPOCH_AT_WRITE = Invariant(3, "KIP584-EPOCH-01", "a write that changed the finalized features moves the epoch to the "
                           "end of its batch; any other leaves it")
DEPENDENCIES = Invariant(4, "KIP1022-UPD-01", "feature dependencies hold in the finalized state")
MV_MINIMUM = Invariant(5, "KIP778-MV-02", "metadata.version never below the release's minimum")
MV_FLOOR_1155 = Invariant(5, "KIP1155-DG-02", "metadata.version never below 3.7-IV0 after a KIP-1155 downgrade")
DOWNGRADE_TYPE = Invariant(6, "KIP584-UPD-05", "no level goes down without a downgrade type")
LEVEL_ZERO = Invariant(7, "KIP584-API-02", "a finalized level 0 is the same as absent: never listed")
MIN0_API_VERSIONS = Invariant(8, "KIP1022-API-01", "ApiVersions below v4 carries no range with min 0 (3.9.0+)")
MIN0_REGISTRATION = Invariant(8, "KIP1022-REG-01", "BrokerRegistration below v4 carries no range with min 0 (3.9.0+)")
SNAPSHOT = Invariant(9, "SNAP-02", "reloading a snapshot keeps describe's levels and ranges; the epoch becomes its end")
PROJECTION = Invariant(10, "KIP915-LOAD-01", "an older loader's state is the newer loader's projected to what it knows")


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
