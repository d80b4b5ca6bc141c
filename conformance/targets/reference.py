"""`reference[:PROFILE]`: the embedded reference, in process."""

from __future__ import annotations

from typing import Any

from .base import Target
from .hookspecs import hookimpl


class ReferenceTarget(Target):
    """The embedded reference, in process."""

    def __init__(self, profile: str | None = None):
        from reference_impl import DEFAULT_PROFILE, load_profile

        self.profile = load_profile(profile or DEFAULT_PROFILE).name
        self.name = f"reference:{self.profile}"
        self.reset()

    def reset(self, profile: str | None = None) -> None:
        from reference_impl import Cluster

        self.cluster = Cluster(profile or self.profile)  # raises on a bad profile before anything changes
        self.profile = self.cluster.default_software

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        return self.cluster.apply(command)


@hookimpl
def kfc_make_target(spec: str) -> Target | None:
    kind, _, arg = spec.partition(":")
    if kind == "reference":
        return ReferenceTarget(arg or None)
    return None


@hookimpl
def kfc_target_kinds() -> list[str]:
    return ["reference[:PROFILE]"]
