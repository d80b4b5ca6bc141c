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
    config.addinivalue_line("markers", "kafka_jvm_full: a whole `kfc check` against a kafka-jvm release "
                            "(minutes each): run with `-m kafka_jvm_full` (`tox -m kafka-jvm`)")


# Under xdist (`--dist loadgroup`, as .ci/run runs it) these modules share one worker, one test at a
# time: real Kafka clusters and harness JVMs never overlap each other (each wants a core to start),
# while the other worker runs everything else.
_ONE_AT_A_TIME = {"test_live_real_kafka", "test_kafka_cluster", "test_kafka_jvm", "test_kafka_jvm_replay",
                  "test_realkafka_fetch"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    full = "kafka_jvm_full" in (config.getoption("markexpr") or "")
    skip = pytest.mark.skip(reason="a whole kfc check against kafka-jvm 3.7/3.8 (minutes): tox -m kafka-jvm")
    for item in items:
        if item.module is not None and item.module.__name__.rsplit(".", 1)[-1] in _ONE_AT_A_TIME:
            item.add_marker(pytest.mark.xdist_group("kafka-jvms"))
        if not full and item.get_closest_marker("kafka_jvm_full"):
            item.add_marker(skip)


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


# -- recording the suite's example tables ------------------------------------------------------------
# KFC_RECORD_EXAMPLES=FILE records every reference cluster a test drives (its commands, outcomes and
# the test's rule markers) as kfc traces; scripts/record_examples.py turns them into
# fixtures/examples/, the example tables of the conformance suite.

@pytest.fixture(autouse=True)
def _kfc_record_examples(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    import os

    path = os.environ.get("KFC_RECORD_EXAMPLES")
    if not path:
        yield
        return
    import json

    from reference_impl import api

    clusters: list[tuple[str, list[dict[str, Any]]]] = []
    real_init, real_apply = api.Cluster.__init__, api.Cluster.apply

    def init(self: Any, profile: str | None = None, *args: Any, **kwargs: Any) -> None:
        real_init(self, profile, *args, **kwargs)
        self._kfc_steps = []
        clusters.append((self.default_software, self._kfc_steps))

    def apply(self: Any, command: dict[str, Any]) -> dict[str, Any]:
        depth = getattr(self, "_kfc_depth", 0)
        self._kfc_depth = depth + 1  # features_tool applies nested commands: record the outer one only
        try:
            out = real_apply(self, command)
        finally:
            self._kfc_depth = depth
        steps = getattr(self, "_kfc_steps", None)
        if steps is not None and depth == 0:
            steps.append({"command": json.loads(json.dumps(command)), "expected": json.loads(json.dumps(out))})
        return out

    monkeypatch.setattr(api.Cluster, "__init__", init)
    monkeypatch.setattr(api.Cluster, "apply", apply)
    yield
    if request.node.get_closest_marker("xfail") is not None:
        return  # a known difference from Kafka: the reference's outcome there is no example to copy
    marks = [(m.args[0], m.args[1]) for m in request.node.iter_markers("rule") if len(m.args) == 2]
    with open(path, "a") as f:
        for n, (profile, steps) in enumerate(clusters):
            if steps:
                f.write(json.dumps({"source": f"{request.node.nodeid}#{n}", "profile": profile,
                                    "marks": marks, "steps": steps}) + "\n")


# Real Kafka clusters (kafka_cluster, kafka_cluster_module) and the check that no JVM outlives a test.
pytest_plugins = ("conformance.realkafka.fixtures",)
