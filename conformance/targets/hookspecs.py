"""The suite's hook specifications (pluggy).  Each built-in target kind is a plugin."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .base import Target

hookspec = pluggy.HookspecMarker("kfc")
hookimpl = pluggy.HookimplMarker("kfc")


@hookspec(firstresult=True)
def kfc_make_target(spec: str) -> Target | None:
    """Return the target for `spec` (e.g. "reference:kafka-4.2"), or None if not yours."""
    raise NotImplementedError


@hookspec
def kfc_target_kinds() -> list[str]:
    """Spec prefixes this plugin understands (for --help and error messages)."""
    raise NotImplementedError
