"""The one place the suite reaches into Hypothesis internals, guarded (imported lazily: Hypothesis
loads only where it is used).

1. Draws straight to the test case's ConjectureData (`direct_draw`): the same recorded choices as
   `data.draw`, without its per-draw random-state check and note, except when Hypothesis reports a
   failing example and wants the notes.
2. Local constants:
Hypothesis mixes literals from every local module imported so far into its draws, so a
derandomized run would change with what the process imported (an in-process target, a plugin).
The kfc-ci run draws without them: same command, same sequences.  If Hypothesis moves these
internals, `available()` says so and tests/test_suite_seams.py fails, instead of runs silently
losing their determinism.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def _internals() -> tuple[Any, Any, Any] | None:
    try:
        from hypothesis.internal.conjecture import providers

        original, cache = providers._get_local_constants, providers.CONSTANTS_CACHE
        constants = providers._local_constants
        empty = type(constants)(integers=type(constants.integers)(), floats=type(constants.floats)(),
                                bytes=type(constants.bytes)(), strings=type(constants.strings)())
    except (ImportError, AttributeError, TypeError):
        return None
    return providers, original, (cache, empty)


def available() -> bool:
    return _internals() is not None and _should_note() is not None


def _should_note() -> Any:
    try:
        from hypothesis.control import should_note
    except ImportError:
        return None
    return should_note


def direct_draw(data: Any) -> Any:
    """`strategy -> value` straight on `data`'s test case, or None (then use data.draw)."""
    should_note = _should_note()
    try:
        direct = should_note is not None and not should_note()
    except Exception:  # noqa: BLE001 - not inside a test case: plain draws
        direct = False
    return getattr(getattr(data, "conjecture_data", None), "draw", None) if direct else None


@contextlib.contextmanager
def without_local_constants(active: bool = True) -> Iterator[None]:
    found = _internals() if active else None
    if found is None:
        yield
        return
    providers, original, (cache, empty) = found
    providers._get_local_constants = lambda: empty
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()
