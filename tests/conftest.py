"""Shared fixtures of the project's own tests.

Rule coverage convention: a test that exercises a rule carries `@pytest.mark.rule("ID", "pass")`
(the rule's condition holds and the operation succeeds) or `@pytest.mark.rule("ID", "fail")` (the
operation is refused and the outcome names that rule id).  test_rule_coverage.py checks that every
rule in reference_impl.rules has both.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reference_impl import Cluster

SHARED = Path(__file__).resolve().parents[2] / "shared"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rule(id, case): the test covers rule `id` with a 'pass' or 'fail' case")


@pytest.fixture
def make_cluster() -> Callable[..., Cluster]:
    """make_cluster(profile, **format_args) -> a formatted Cluster (format must succeed)."""

    def make(profile: str = "kafka-4.2", **fmt: Any) -> Cluster:
        c = Cluster(profile)
        out = c.apply({"op": "format", **fmt})
        assert out["error"] == "NONE", out
        return c

    return make


def ok(out: dict[str, Any]) -> dict[str, Any]:
    assert out["error"] == "NONE", out
    return out


def refused(out: dict[str, Any], error: str, rule: str, fragment: str | None = None) -> dict[str, Any]:
    assert out["error"] == error, out
    assert out["rule"] == rule, out
    if fragment is not None:
        assert fragment in (out["message"] or ""), out
    return out
