"""`mutant:NAME[@PROFILE]`: the reference with one seeded bug, in process."""

from __future__ import annotations

from typing import Any

from ..mutants import MUTANTS, parse_spec
from .base import Target
from .hookspecs import hookimpl


class MutantTarget(Target):
    """The reference with one seeded bug, in process."""

    def __init__(self, name: str, profile: str | None = None):
        from reference_impl import load_profile

        self.mutant = MUTANTS[name]
        self.profile = load_profile(profile or self.mutant.profile).name
        self.name = f"mutant:{name}@{self.profile}"
        self.reset()

    def hello(self) -> dict[str, Any]:
        return {**super().hello(), "mutant": self.mutant.name, "rule": self.mutant.rule}

    def reset(self, profile: str | None = None) -> None:
        if profile:
            self.profile = profile
        self.cluster = self.mutant.cluster(self.profile)

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        return self.cluster.apply(command)


@hookimpl
def kfc_make_target(spec: str) -> Target | None:
    kind, _, arg = spec.partition(":")
    if kind != "mutant":
        return None
    m, profile = parse_spec(arg)
    return MutantTarget(m.name, profile)


@hookimpl
def kfc_target_kinds() -> list[str]:
    return ["mutant:NAME[@PROFILE]"]
