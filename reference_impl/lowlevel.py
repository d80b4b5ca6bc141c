"""The reference's internals that a seeded mutant may replace, and a Cluster built with replacements.

Everything else outside reference_impl uses its public surface (Cluster, apply, profiles, rules,
coordinator).  Seeded mutants (conformance.mutants) are the one exception: to show that the suite
notices a broken target, each one swaps one piece of the spec for a copy with one bug.  This module
is the only way for code outside reference_impl to reach those pieces: import-linter forbids
conformance, kfc and spark_checks from importing the private modules (pyproject.toml).  That way
the list of things a mutant may touch is written down in one place, and adding a seam means
changing this file.

REPLACEABLE, by the module that defines each piece:
  controller   UpdateContext (UpdateFeatures validation: check, check_support, check_metadata_version,
               check_feature_level, check_kraft_raft), update_features, kip1155_downgrade,
               register_broker, sent_ranges, register_controller
  tools        format_levels, bootstrap_records, version_mapping, feature_dependencies
  features     features_tool (kafka-features upgrade / downgrade / disable)
  coordinator  Reader (record codec), load, load_coordinator (KIP-915 loaders)
Any attribute of Cluster (a method, a property) can also be overridden, through `methods`.

    Buggy = cluster_class("Buggy", kip1155_downgrade=my_kip1155_downgrade)
    Buggy("kip-1155").apply({"op": "format"})

A replacement reaches the module-level functions that call it.  The module that defines it, and
each module that imports it, get a private copy of their globals, and their functions are rebound
to that copy (same code, new globals).  The subclass's ops then call those copies.  Methods keep
their module's globals, so to change a method, replace its class.  Nothing global is patched, so
any number of such classes can run next to the reference in one process.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

from . import _controller, _features_tool, _tools, api
from ._controller import (
    UpdateContext,
    kip1155_downgrade,
    register_broker,
    register_controller,
    sent_ranges,
    update_features,
)
from ._features_tool import features_tool
from ._tools import bootstrap_records, feature_dependencies, format_levels, version_mapping
from .api import Cluster
from .coordinator import _codec, _loader
from .coordinator._codec import Reader
from .coordinator._loader import load, load_coordinator

REPLACEABLE: dict[str, Any] = {obj.__name__: obj for obj in (
    UpdateContext, update_features, kip1155_downgrade, register_broker, sent_ranges, register_controller,
    format_levels, bootstrap_records, version_mapping, feature_dependencies,
    features_tool,
    Reader, load, load_coordinator,
)}
_MODULES = (_controller, _tools, _features_tool, _codec, _loader)  # where a replacement can be called from


def cluster_class(name: str, methods: Mapping[str, Any] | None = None, **replace: Any) -> type[Cluster]:
    """A Cluster subclass called `name`.  `replace` maps names in REPLACEABLE to their replacements;
    `methods` overrides Cluster attributes directly."""
    unknown = sorted(set(replace) - set(REPLACEABLE))
    if unknown:
        raise TypeError(f"cannot replace {', '.join(unknown)}; replaceable: {', '.join(REPLACEABLE)}")
    swap = {id(REPLACEABLE[k]): v for k, v in replace.items()}
    copies = {m: _copy(m, swap) for m in _MODULES if any(id(v) in swap for v in vars(m).values())}
    attrs: dict[str, Any] = {}
    ctl, tools = copies.get(_controller), copies.get(_tools)
    if ctl is not None or tools is not None:
        # Cluster's ops call `ctl.<fn>` and `tools.<fn>`: rebound to globals where those are the copies.
        g = {**vars(api), "ctl": _view(ctl, _controller), "tools": _view(tools, _tools)}
        attrs.update({k: _rebind(f, g) for k, f in vars(Cluster).items() if isinstance(f, types.FunctionType)})
    if ctl is not None:
        attrs["update_context_cls"] = ctl["UpdateContext"]
    if (ft := copies.get(_features_tool)) is not None:
        run_tool = ft["features_tool"]
        # These two ops import lazily (`from ._features_tool import ...`), which rebinding cannot redirect.
        attrs["_op_features_tool"] = lambda self, cmd: run_tool(self, cmd)
    if (ld := copies.get(_loader)) is not None:
        run_load = ld["load_coordinator"]

        def _op_load_coordinator(self: Cluster, cmd: dict[str, Any]) -> dict[str, Any]:
            node = self.node(cmd.get("node")) if cmd.get("node") is not None else None
            profile = node.profile.name if node is not None else self.active_profile.name
            return run_load(profile, cmd)

        attrs["_op_load_coordinator"] = _op_load_coordinator
    attrs.update(methods or {})
    return type(name, (Cluster,), attrs)


def _copy(module: types.ModuleType, swap: dict[int, Any]) -> dict[str, Any]:
    """`module`'s globals with the replacements swapped in, its own functions rebound to the copy."""
    g = vars(module)
    ns = {k: swap.get(id(v), v) for k, v in g.items()}
    for k, v in g.items():
        if id(v) not in swap and isinstance(v, types.FunctionType) and v.__globals__ is g:
            ns[k] = _rebind(v, ns)
    return ns


def _view(ns: dict[str, Any] | None, module: types.ModuleType) -> Any:
    return module if ns is None else types.SimpleNamespace(**ns)


def _rebind(fn: types.FunctionType, g: dict[str, Any]) -> types.FunctionType:
    """`fn` with the same code and defaults, reading its globals from `g`."""
    new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__, new.__qualname__, new.__doc__ = fn.__kwdefaults__, fn.__qualname__, fn.__doc__
    return new


__all__ = [
    "REPLACEABLE",
    "Cluster",
    "Reader",
    "UpdateContext",
    "bootstrap_records",
    "cluster_class",
    "feature_dependencies",
    "features_tool",
    "format_levels",
    "kip1155_downgrade",
    "load",
    "load_coordinator",
    "register_broker",
    "register_controller",
    "sent_ranges",
    "update_features",
    "version_mapping",
]
