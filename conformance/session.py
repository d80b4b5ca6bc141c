"""A lockstep session: every command goes to the target and to the reference; outcomes must agree."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from . import families
from .engine import Lockstep, StepResult
from .targets.base import Target, capabilities_of
from .trace import make_trace, write_trace


class Divergence(AssertionError):
    """The target's outcome differs from the reference's at one step, or the target failed there."""

    def __init__(self, result: StepResult):
        self.result = result
        self.index, self.command, self.expected, self.actual = result.index, result.command, result.expected, result.actual
        self.diffs = [str(d) for d in result.diffs]
        super().__init__(result.describe())


class Coverage:
    """What a run actually reached: ops, outcome errors, rule ids (from the reference's outcomes)."""

    def __init__(self) -> None:
        self.ops: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.rules: Counter[str] = Counter()
        self.states: Counter[str] = Counter()  # state families reached (conformance.families)

    def add(self, command: dict[str, Any], outcome: dict[str, Any]) -> None:
        self.ops[str(command.get("op"))] += 1
        self.errors[str(outcome.get("error"))] += 1
        if outcome.get("rule"):
            self.rules[outcome["rule"]] += 1
        for r in (outcome.get("results") or {}).values():
            if isinstance(r, dict) and r.get("rule"):
                self.rules[r["rule"]] += 1
                self.errors[str(r.get("error"))] += 1

    def merge(self, other: Coverage) -> None:
        self.ops.update(other.ops)
        self.errors.update(other.errors)
        self.rules.update(other.rules)
        self.states.update(other.states)

    def to_json(self) -> dict[str, Any]:
        return {"ops": dict(sorted(self.ops.items())), "errors": dict(sorted(self.errors.items())),
                "rules": dict(sorted(self.rules.items())), "states": dict(sorted(self.states.items()))}

    @property
    def families(self) -> set[str]:
        return {r.split("-")[0] for r in self.rules}


class Session:
    """One test's cluster on both sides: the target and the reference in lockstep through the one
    trace engine.  `step` returns the target's outcome or raises Divergence."""

    def __init__(self, target: Target, profile: str, *, messages: bool = True, coverage: Coverage | None = None,
                 allure_steps: bool = True, capabilities: frozenset[str] | None = None):
        from reference_impl import Cluster

        self.target, self.profile, self.messages = target, profile, messages
        self.capabilities = capabilities if capabilities is not None else capabilities_of(target.hello())
        self.reference = Cluster(profile)
        self.engine = Lockstep(target, reference=self.reference, capabilities=self.capabilities, messages=messages)
        self.coverage = coverage if coverage is not None else Coverage()
        self._allure = _allure() if allure_steps else None
        failed = self.engine.start(profile)
        if failed is not None:
            raise Divergence(failed)

    @property
    def steps(self) -> list[dict[str, Any]]:
        return [s.record() for s in self.engine.steps if s.index >= 0]

    def step(self, command: dict[str, Any]) -> dict[str, Any]:
        before = families.snapshot(command, self.reference)
        result = self.engine.step(command)
        self.coverage.add(command, result.expected)
        self.coverage.states.update(families.observe(command, result.expected, self.reference, before))
        if self._allure is not None:
            got = result.actual.get("error") if result.actual else "TARGET_ERROR"
            # Raised inside the step: Allure marks the diverging step failed, not passed.
            with self._allure.step(f"{result.op} -> {got}" + ("" if result.ok else " (DIVERGES)")):
                if not result.ok:
                    raise Divergence(result)
        if not result.ok:
            raise Divergence(result)
        assert result.actual is not None
        return result.actual

    def trace(self, source: str, rules: list[str] | None = None, target: str | None = None) -> dict[str, Any]:
        return make_trace(self.profile, self.steps, source=source, rules=rules, target=target)

    def write_counterexample(self, directory: Path, source: str, rules: list[str] | None, target_spec: str) -> Path:
        path = write_trace(self.trace(source, rules, target_spec), directory)
        if self._allure is not None:
            self._allure.attach(path.read_text(), name="counterexample trace", attachment_type="application/json")
            last = self.steps[-1] if self.steps else {}
            diff = {"command": last.get("command"), "expected": last.get("expected"), "actual": last.get("actual"),
                    "diff": last.get("diff")}
            self._allure.attach(json.dumps(diff, indent=1), name="expected vs actual",
                                attachment_type="application/json")
        return path


def _allure() -> Any:
    try:
        import allure
    except ImportError:
        return None
    return _AllureFacade(allure)


class _AllureFacade:
    def __init__(self, allure: Any):
        self._a = allure

    def step(self, title: str) -> Any:
        return self._a.step(title)

    def attach(self, body: str, name: str, attachment_type: str) -> None:
        kind = self._a.attachment_type.JSON if attachment_type.endswith("json") else self._a.attachment_type.TEXT
        self._a.attach(body, name=name, attachment_type=kind)
