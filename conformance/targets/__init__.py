"""Targets: the contract (`base`) and the built-in kinds, each a pluggy plugin registered by name.

Built-in kinds are imported by module name when the plugin manager is first asked for a target (as
pytest's `default_plugins`), so this package imports none of them at import time and no module of
theirs imports back into a half-initialised package.
"""

from __future__ import annotations

import functools
import importlib

import pluggy

from . import hookspecs
from .base import PROTOCOL_VERSION, Target, TargetError, all_ops, capabilities_of

BUILTIN_KINDS = (
    "conformance.targets.reference",   # reference[:PROFILE]
    "conformance.targets.jsonlines",   # subprocess:COMMAND LINE
    "conformance.targets.mutant",      # mutant:NAME[@PROFILE]
    "conformance.realkafka.target",   # kafka-jvm:VERSION (Kafka's own classes)
    "conformance.live.plugin",        # kafka://HOST:PORT[?…]
)


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager("kfc")
    pm.add_hookspecs(hookspecs)
    for name in BUILTIN_KINDS:
        pm.register(importlib.import_module(name), name)
    pm.load_setuptools_entrypoints("kfc.targets")
    return pm


def make_target(spec: str) -> Target:
    """Resolve a target spec through the plugins; a clear error names the spec otherwise."""
    target = plugin_manager().hook.kfc_make_target(spec=spec)
    if target is None:
        kinds = [k for ks in plugin_manager().hook.kfc_target_kinds() for k in ks]
        raise ValueError(f"unknown target '{spec}'; known kinds: {', '.join(sorted(kinds))}")
    return target


__all__ = ["BUILTIN_KINDS", "PROTOCOL_VERSION", "Target", "TargetError", "all_ops", "capabilities_of",
           "make_target", "plugin_manager"]
