"""The `kafka://` target kind, registered by name; the target and kio load only for a kafka:// spec."""

from __future__ import annotations

from ..targets.base import Target
from ..targets.hookspecs import hookimpl


@hookimpl
def kfc_make_target(spec: str) -> Target | None:
    if not spec.startswith("kafka://"):
        return None
    from .target import KafkaTarget

    return KafkaTarget(spec)


@hookimpl
def kfc_target_kinds() -> list[str]:
    from .spec import usage

    return [usage()]

