"""The suite's one reach into Hypothesis internals is guarded: if Hypothesis moves them, this fails
(instead of kfc-ci runs silently changing with what the process imported)."""

from __future__ import annotations

from typing import Any

import pytest
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


def test_a_state_kafkas_controller_cannot_replay_is_skipped_only_where_the_target_replays_it() -> None:
    # QuorumFeaturesTest.testLocalSupportedFeature gives the controller ranges without metadata.version;
    # Kafka's FeatureControlManager.replay refuses to apply a metadata.version outside them (the
    # kafka-jvm harness answers UNKNOWN_SERVER_ERROR "Tried to apply FeatureLevelRecord …").
    from conformance.suite._support import needs_replayable_state

    def trace(ranges: dict[str, list[int]] | None, mv: int) -> dict[str, Any]:
        ctl = {"id": 0, **({"ranges": ranges} if ranges is not None else {})}
        return {"profile": "kafka-4.1", "steps": [{"command": {"op": "restore_state", "metadata_version": mv,
                                                               "controllers": [ctl], "voters": [0]}}]}

    odd = trace({"foo": [0, 3]}, 27)
    needs_replayable_state(odd, False)  # the reference restores any state: runs
    with pytest.raises(pytest.skip.Exception, match=r"leave out metadata\.version=27"):
        needs_replayable_state(odd, True)
    needs_replayable_state(trace({"metadata.version": [7, 27]}, 27), True)  # inside its ranges: runs
    needs_replayable_state(trace(None, 27), True)  # the profile's own controller ranges: runs
    needs_replayable_state(trace({"foo": [0, 3]}, 999), True)  # an unknown level: both sides refuse it, runs
