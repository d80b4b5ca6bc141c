"""conformance.verdicts: the suite's verdict from its counts (a run that checked nothing is never a pass),
the overall verdict with the Spark replay, and findings grouped by cause."""

from __future__ import annotations

import pytest

from conformance.verdicts import (
    CONFORMS,
    DOES_NOT_CONFORM,
    INPUT_ERRORS,
    NOTHING_CHECKED,
    group_findings,
    overall_verdict,
    repro_command,
    suite_verdict,
)


@pytest.mark.parametrize(("counts", "exit_status", "verdict"), [
    ({"passed": 3}, 0, CONFORMS),
    ({"passed": 3, "skipped": 9}, 0, CONFORMS),
    ({"passed": 3, "failed": 1}, 1, DOES_NOT_CONFORM),
    ({"passed": 3, "unexpectedly-passed": 1}, 1, DOES_NOT_CONFORM),
    ({"passed": 3}, 3, DOES_NOT_CONFORM),          # pytest broke after the tests (internal error)
    ({"skipped": 5, "xfailed": 2}, 0, NOTHING_CHECKED),  # an expected failure checks nothing
    ({}, 0, NOTHING_CHECKED),
])
def test_suite_verdict(counts: dict[str, int], exit_status: int, verdict: str) -> None:
    assert suite_verdict(counts, exit_status) == verdict


def test_overall_verdict_adds_the_spark_replay() -> None:
    suite = {"verdict": CONFORMS, "exit_status": 0}
    clean = {"by_status": {"pass": 4}, "rows_in": 4, "rows_out": 4}
    assert overall_verdict(suite, None) == CONFORMS
    assert overall_verdict(suite, clean) == CONFORMS
    assert overall_verdict(suite, {**clean, "by_status": {"pass": 3, "diverged": 1}}) == DOES_NOT_CONFORM
    assert overall_verdict(suite, {**clean, "rows_out": 3}) == DOES_NOT_CONFORM  # rows lost
    assert overall_verdict(suite, {**clean, "by_status": {"pass": 3, "input-error": 1}}) == INPUT_ERRORS
    assert overall_verdict({"verdict": NOTHING_CHECKED, "exit_status": 5}, clean) == NOTHING_CHECKED


def test_findings_group_by_cause_most_tests_first() -> None:
    def failed(rule: str, diffs: list[dict[str, str]] | None = None, failure: str | None = None) -> dict:
        return {"status": "failed", "divergence": {"rule": rule, "diffs": diffs or [{"field": "error"}],
                                                   "failure": failure, "op": "update_features"}}

    tests = [failed("KIP584-UPD-01"), failed("KIP584-UPD-02"), failed("KIP584-UPD-02"),
             failed("KIP584-UPD-03", [{"field": "epoch"}]),  # only the epoch differs: the epoch rule
             failed("KIP584-UPD-01", failure="broker 2 (127.0.0.1:9093) closed the connection")]
    groups = [(cause, len(members)) for cause, members in group_findings(tests)]
    assert groups == [("KIP584-UPD-02", 2), ("KIP584-EPOCH-01", 1), ("KIP584-UPD-01", 1),
                      ("target error at broker 2 (127.0.0.1:9093)", 1)]


def test_repro_command_is_one_quoted_line() -> None:
    line = repro_command("/tmp/a b/t.json", "kafka://127.0.0.1:9092?tiers=observe,probe")
    assert line == "kfc replay-trace '/tmp/a b/t.json' --target 'kafka://127.0.0.1:9092?tiers=observe,probe'"
