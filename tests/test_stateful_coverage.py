"""The ci stateful model reaches every op and rule family it is held to, also for a target with the
smaller op set of the Kafka wire target (format/reset by the control extension, allow_register=1)."""

from __future__ import annotations

import pytest

from conformance.suite import test_stateful as model
from conformance.targets import make_target
from reference_impl import profile_names

WIRE_OPS = frozenset({"format", "register", "unregister", "update_features", "describe", "api_versions"})


def test_required_families_follow_the_capabilities() -> None:
    full = frozenset(model.GENERATED_OPS)
    assert model.required_families("kafka-4.2", full) == model.FAMILIES
    assert model.required_families("kip-1155", full) == model.FAMILIES | {"KIP1155"}
    # ApiVersions alone can only ever show KIP-584 rules
    assert model.required_families("kafka-4.2", frozenset({"api_versions", "describe"})) == {"KIP584"}
    assert model.required_families("kafka-4.2", WIRE_OPS) == model.FAMILIES
    # kip-1155 shows KIP-778 rules through UpdateFeatures too (an unknown metadata.version level), which the
    # wire target has (fixtures/examples/generated.jsonl holds such a kip-1155 example)
    assert model.required_families("kip-1155", WIRE_OPS) == model.FAMILIES | {"KIP1155"}


@pytest.mark.parametrize("profile", list(profile_names()))
def test_ci_run_with_the_wire_op_set_reaches_what_it_must(profile: str) -> None:
    target = make_target(f"reference:{profile}")
    run = model.Run(target, profile, WIRE_OPS)
    try:
        run.execute("ci")
    finally:
        target.close()
    assert set(run.coverage.ops) == WIRE_OPS
    missing = model.required_families(profile, WIRE_OPS) - run.coverage.families
    assert not missing, f"{profile}: never reached {sorted(missing)}; reached {dict(run.coverage.rules)}"
    # the downgrade paths themselves, not just some KIP-778 rule
    assert run.coverage.errors["INVALID_UPDATE_VERSION"] > 0
