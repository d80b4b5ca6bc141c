"""What the live tiers need of a running cluster: the seam between them and the `kafka://` target.
A target offers it through `Target.live()` (None: not a running cluster), so no caller asks which
kind of target it holds."""

from __future__ import annotations

from typing import Any, Protocol

from ..wire.transport import Transport
from .view import Observation


class LiveTarget(Transport, Protocol):
    tiers: tuple[str, ...]  # the tiers the user enabled
    observation: Observation | None  # the cluster as last observed
    evidence: list[str]  # why the profile is what it is
    unclear: str | None  # why the release could not be told (the profile is then assumed)
    blocked: dict[str, str]  # tier -> why it can do nothing on this cluster
    dirty: bool  # a write happened since the last observation: observe afresh

    @property
    def requests_sent(self) -> int:  # so far, to every node: the summary counts them per test and tier
        ...

    def observe(self) -> Observation:
        ...

    def observed_state(self) -> dict[str, Any] | None:
        ...
