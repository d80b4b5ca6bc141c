"""The target contract: one small abstract method over plain data.

A target is anything that can take a command of the reference's wire contract (a JSON-able dict
with "op") and return an outcome (a JSON-able dict with "error", "error_code", "message", …).
"""

from __future__ import annotations

import abc
import functools
from typing import Any

import pluggy

from . import hookspecs

PROTOCOL_VERSION = 1


class TargetError(Exception):
    """The target failed (crashed, hung, answered garbage): not a conformance verdict."""


class Target(abc.ABC):
    """Implement `apply`; override `hello` to declare a profile and capabilities."""

    name = "target"
    profile: str | None = None
    capabilities: frozenset[str] | None = None  # None: every op of the contract

    def hello(self) -> dict[str, Any]:
        from reference_impl import OPS

        caps = sorted(self.capabilities) if self.capabilities is not None else list(OPS)
        return {"name": self.name, "profile": self.profile, "capabilities": caps,
                "protocol_version": PROTOCOL_VERSION}

    @abc.abstractmethod
    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        """Apply one command and return its outcome."""

    def reset(self, profile: str | None = None) -> None:
        """Start a fresh cluster (a new test); targets without state may ignore it."""

    def close(self) -> None:
        """Release processes, sockets, files."""


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


class _BuiltinTargets:
    @hookspecs.hookimpl
    def kfc_make_target(self, spec: str) -> Target | None:
        kind, _, arg = spec.partition(":")
        if kind == "reference":
            return ReferenceTarget(arg or None)
        return None

    @hookspecs.hookimpl
    def kfc_target_kinds(self) -> list[str]:
        return ["reference[:PROFILE]"]


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager("kfc")
    pm.add_hookspecs(hookspecs)
    pm.register(_BuiltinTargets(), "kfc-builtin")
    from ._kafka_target import KAFKA_PLUGIN
    from ._subprocess import SUBPROCESS_PLUGIN
    from .mutants import MUTANT_PLUGIN

    pm.register(SUBPROCESS_PLUGIN, "kfc-subprocess")
    pm.register(MUTANT_PLUGIN, "kfc-mutants")
    pm.register(KAFKA_PLUGIN, "kfc-kafka")
    pm.load_setuptools_entrypoints("kfc.targets")
    return pm


def make_target(spec: str) -> Target:
    """Resolve a target spec through the plugins; a clear error names the spec otherwise."""
    target = plugin_manager().hook.kfc_make_target(spec=spec)
    if target is None:
        kinds = [k for ks in plugin_manager().hook.kfc_target_kinds() for k in ks]
        raise ValueError(f"unknown target '{spec}'; known kinds: {', '.join(sorted(kinds))}")
    return target
