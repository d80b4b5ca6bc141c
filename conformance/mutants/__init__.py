"""Seeded mutants: targets that are the reference with exactly one bug each.

A mutant is how the suite proves it can see a broken target: each one violates one rule of
reference_impl.rules (its `rule`) on its default profile, and each carries a *witness*, a short
command sequence on which its outcome differs from the reference's.

The mutants are data (fixtures/mutants/catalogue.json, read by _catalogue): per mutant the seam it
replaces in reference_impl.lowlevel and the edit of that seam's source (or a named variant).
_build turns one into a Cluster subclass.

Specs: `mutant:NAME` (the mutant's default profile) or `mutant:NAME@PROFILE`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from reference_impl import Cluster
from reference_impl.rules import RULES

from . import _build, _catalogue


@dataclass(frozen=True)
class Mutant:
    name: str
    rule: str
    profile: str
    description: str
    seam: str  # what the bug replaces: a name in reference_impl.lowlevel, or Class.attribute
    edit: tuple[str, str] | None  # (old, new) source fragment of the seam, or
    variant: str | None  # a hand-written replacement (_build.VARIANTS)
    wire_unreachable: str | None  # None: a client of the served mutant can see the bug (kafka://); else why not
    wire_serve: tuple[str, ...]  # serve-broker options that start the cluster where a client sees the bug
    witness: tuple[dict[str, Any], ...]  # commands on which the mutant's outcome differs from the reference's
    # "rule": on the first diverging step the reference's outcome carries `rule` (a refusal the mutant
    # misses or misattributes).  Otherwise the outcome field the rule is about, which must differ there.
    diverges_on: str = "rule"

    @property
    def wire_reachable(self) -> bool:
        return self.wire_unreachable is None

    @property
    def kip(self) -> str:
        return RULES[self.rule].kip

    def cluster(self, profile: str | None = None) -> Cluster:
        cls = _build.cluster_class(self.name, self.seam, self.edit, self.variant)
        return cls(profile or self.profile)


_DOC = _catalogue.read()
MUTANTS: dict[str, Mutant] = {e["name"]: Mutant(**e) for e in _catalogue.entries(_DOC)}


def witness(name: str) -> list[dict[str, Any]]:
    """The mutant's witness commands (a fresh copy)."""
    return copy.deepcopy(list(MUTANTS[name].witness))


def neutral_scenario(profile: str) -> list[dict[str, Any]]:
    """Formatting, a broker, a plain upgrade and describe: touches none of the mutants' rules."""
    return copy.deepcopy(_catalogue.neutral_commands(_DOC, profile))


def parse_spec(arg: str) -> tuple[Mutant, str]:
    name, _, profile = arg.partition("@")
    if name not in MUTANTS:
        raise ValueError(f"unknown mutant '{name}'; known: {', '.join(sorted(MUTANTS))}")
    m = MUTANTS[name]
    return m, profile or m.profile


def mutant_rows() -> list[dict[str, str]]:
    return [{"name": m.name, "rule": m.rule, "kip": m.kip, "profile": m.profile, "description": m.description,
             "wire": (f"unreachable: {m.wire_unreachable}" if m.wire_unreachable is not None else
                      f"reachable with serve-broker {' '.join(m.wire_serve)}" if m.wire_serve else
                      "reachable")}
            for m in MUTANTS.values()]


__all__ = [
    "MUTANTS",
    "Mutant",
    "mutant_rows",
    "neutral_scenario",
    "parse_spec",
    "witness",
]
