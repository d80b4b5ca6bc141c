"""The seam the observation reads a running cluster through: where its nodes are, and one client per
node address.  The `kafka://` target is one; a test may hand over any other."""

from __future__ import annotations

from typing import Protocol

from .client import NodeClient


class Transport(Protocol):
    name: str
    bootstrap: list[tuple[str, int]]  # the addresses the user gave
    controller_addr: tuple[str, int] | None  # the controller listener the user gave, if any
    labels: dict[tuple[str, int], str]  # address -> "broker 1" / "controller 3000", filled by observe

    def client(self, addr: tuple[str, int], label: str | None = None) -> NodeClient:
        """The one client of that address (its budget, its anomalies)."""
        ...

    def keys_of(self, addr: tuple[str, int]) -> dict[int, tuple[int, int]]:
        """The address's advertised API keys and version ranges (ApiVersions v0)."""
        ...
