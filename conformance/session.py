"""A lockstep session: every command goes to the target and to the reference; outcomes must agree."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from .compare import compare
from .targets.base import Target, TargetError
from .trace import make_trace, write_trace

TARGET_ERROR = "TARGET_ERROR"


class Divergence(AssertionError):
    """The target's outcome differs from the reference's at one step."""

    def __init__(self, index: int, command: dict[str, Any], expected: dict[str, Any], actual: dict[str, Any],
                 diffs: list[str]):
        self.index, self.command, self.expected, self.actual, self.diffs = index, command, expected, actual, diffs
        super().__init__(f"step {index} ({command.get('op')}): " + "; ".join(diffs))


class Coverage:
    """What a run actually reached: ops, outcome errors, rule ids (from the reference's outcomes)."""

    def __init__(self) -> None:
        self.ops: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.rules: Counter[str] = Counter()

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

    def to_json(self) -> dict[str, Any]:
        return {"ops": dict(sorted(self.ops.items())), "errors": dict(sorted(self.errors.items())),
                "rules": dict(sorted(self.rules.items()))}

    @property
    def families(self) -> set[str]:
        return {r.split("-")[0] for r in self.rules}


class Session:
    """One test's cluster on both sides.  `step` returns the target's outcome or raises Divergence."""

    def __init__(self, target: Target, profile: str, *, messages: bool = True, coverage: Coverage | None = None,
                 allure_steps: bool = True):
        from reference_impl import Cluster

        self.target, self.profile, self.messages = target, profile, messages
        self.capabilities = frozenset(target.hello().get("capabilities") or ())
        self.reference = Cluster(profile)
        self.steps: list[dict[str, Any]] = []
        self.coverage = coverage if coverage is not None else Coverage()
        self._allure = _allure() if allure_steps else None
        target.reset(profile)

    def step(self, command: dict[str, Any]) -> dict[str, Any]:
        expected = self.reference.apply(command)
        self.coverage.add(command, expected)
        index = len(self.steps)
        try:
            actual = self.target.apply(command)
        except TargetError as e:
            actual = {"error": TARGET_ERROR, "error_code": None, "message": str(e), "rule": None}
        diffs = compare(expected, actual, messages=self.messages, capabilities=self.capabilities)
        record: dict[str, Any] = {"command": command, "expected": _jsonable(expected)}
        if diffs:
            record.update(actual=_jsonable(actual), diff=diffs)
        self.steps.append(record)
        if self._allure is not None:
            title = f"{command.get('op')} -> {actual.get('error')}" + (" (DIVERGES)" if diffs else "")
            with self._allure.step(title):
                pass
        if diffs:
            raise Divergence(index, command, expected, actual, diffs)
        return actual

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


def _jsonable(outcome: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(outcome, default=str))


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
