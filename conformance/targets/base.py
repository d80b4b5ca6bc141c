"""The target contract: one small abstract method over plain data.

A target takes a command of the reference's wire contract (a JSON-able dict with "op") and returns
an outcome (a JSON-able dict with "error", "error_code", "message", …).  Its hello says who it is,
which profile it runs and its capabilities: the ops it can run, and nothing else.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any

from .errors import TargetError

if TYPE_CHECKING:
    from ..live.protocol import LiveTarget

__all__ = ["PROTOCOL_VERSION", "Target", "TargetError", "all_ops", "capabilities_of"]

PROTOCOL_VERSION = 1


def all_ops() -> frozenset[str]:
    from reference_impl import OPS

    return frozenset(OPS)


class Target(abc.ABC):
    """Implement `apply`; set `capabilities` (default: every op of the contract) and `profile`."""

    name = "target"
    profile: str | None = None
    capabilities: frozenset[str] | None = None  # None: every op of the contract
    # Profiles whose code the target can run on any node (a harness of one release's code); None: any.
    active_software: frozenset[str] | None = None
    # Profiles whose nodes the target answers for as their own code does (a node of another release
    # is emulated from its ranges by the target's builders); None: any.
    node_software: frozenset[str] | None = None
    # restore_state replays the levels into Kafka's own controller, which refuses a level outside its
    # ranges (FeatureControlManager.replay): traces restoring such a state are skipped for it.
    replays_restored_levels: bool = False
    # Every node it answers for has caught up with the metadata log (no FeaturesPublisher of its own):
    # traces restoring a controller with caught_up false (KIP584-API-05) are skipped for it.
    all_nodes_caught_up: bool = False
    unreported: frozenset[str] = frozenset()  # outcome fields it cannot report: not compared for it
    # Making one starts a process (a JVM: seconds): a corpus replay makes one per core, not per slice.
    starts_a_process = False
    # The release it runs can be named before the hello (a live cluster: `kfc check --profile` sets
    # `profile` first, and inference from what it advertises is skipped); others report their own.
    accepts_profile = False

    def hello(self) -> dict[str, Any]:
        caps = self.capabilities if self.capabilities is not None else all_ops()
        extra = {"unreported": sorted(self.unreported)} if self.unreported else {}
        return {"name": self.name, "profile": self.profile, "capabilities": sorted(caps),
                "protocol_version": PROTOCOL_VERSION, **extra}

    @abc.abstractmethod
    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        """Apply one command and return its outcome."""

    def reset(self, profile: str | None = None) -> None:
        """Start a fresh cluster (a new test); targets without state may ignore it."""

    def live(self) -> LiveTarget | None:
        """The running cluster the live tiers observe and probe, or None (not a running cluster)."""
        return None

    def observed_state(self) -> dict[str, Any] | None:
        """After reset: None when the target is now a fresh cluster; a live target that cannot be
        reset (a running cluster over `kafka://`) returns the restore_state command stating where it
        is, and the reference starts from that state."""
        return None

    def close(self) -> None:
        """Release processes, sockets, files."""


def capabilities_of(hello: dict[str, Any]) -> frozenset[str]:
    """The ops a target can run, from its hello (the one meaning of "capabilities")."""
    return frozenset(hello.get("capabilities") or ())
