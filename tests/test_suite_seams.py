"""The suite's one reach into Hypothesis internals is guarded: if Hypothesis moves them, this fails
(instead of kfc-ci runs silently changing with what the process imported)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import _hypothesis_seam


def test_the_private_hypothesis_api_is_where_the_seam_expects_it() -> None:
    assert _hypothesis_seam.available(), "hypothesis moved the internals conformance._hypothesis_seam uses: update the seam"


def _draws() -> list[Any]:
    seen: list[Any] = []

    @settings(derandomize=True, database=None, max_examples=30)
    @given(st.integers())
    def probe(n: int) -> None:
        seen.append(n)

    probe()
    return seen


def test_without_local_constants_the_draws_do_not_depend_on_imported_literals() -> None:
    with _hypothesis_seam.without_local_constants():
        before = _draws()
    import tests.targets.faulty_target  # noqa: F401 - a local module full of new literals

    with _hypothesis_seam.without_local_constants():
        after = _draws()
    assert before == after
