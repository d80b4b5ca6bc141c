"""The one trace engine: apply commands to a target and judge each outcome against the expected one.

Used by the suite's lockstep session, `kfc replay-trace`, the corpus replay (single process, pool
or Spark) and the generator (which records the reference's outcomes: no target).  One verdict model:

    pass          every step's outcome agrees
    diverged      a step's outcome differs (the first such step; `Verdict.first`)
    target-error  the target failed: raised on reset / apply, or answered something that is not an
                  outcome (the model's schema); the step where it failed

Expected outcomes come from the trace (recorded) or, in lockstep, from a reference cluster applied
to the same command.  The reference is never guarded: an exception from it is a bug in the
reference and propagates, it never becomes an outcome.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .compare import Diff, differences
from .model import Command, Status, jsonable, outcome_check, outcome_problem
from .targets.errors import NotRun


class Applies(Protocol):
    """What the engine needs of a target (conformance.targets.Target has more)."""

    def apply(self, command: dict[str, Any]) -> dict[str, Any]: ...

    def reset(self, profile: str | None = None) -> None: ...


class Reference(Protocol):
    def apply(self, command: dict[str, Any]) -> dict[str, Any]: ...


class StateNotStated(Exception):
    """A live target's stated state is one the reference cannot start from."""


@dataclass(slots=True)
class StepResult:
    """One step: the command, the expected outcome, what the target answered and how it differs.
    (Treat as read-only; not frozen because a frozen dataclass costs a setattr call per field and
    the engine makes one per step.)"""

    index: int  # -1: the trace's initial set-up
    command: Command
    expected: dict[str, Any]
    actual: dict[str, Any] | None = None
    diffs: tuple[Diff, ...] = ()
    failure: str | None = None  # the target failed here (text of the error)
    not_run: bool = False  # ... declining the step for a reason of the run (targets.errors.NotRun)

    @property
    def ok(self) -> bool:
        return not self.diffs and self.failure is None

    @property
    def op(self) -> str:
        return str(self.command.get("op")) if isinstance(self.command, dict) else "?"

    @property
    def rule(self) -> str | None:
        """The rule id the diverging expected outcome carries (its per-feature result's, if that is where)."""
        rule = self.expected.get("rule")
        if rule:
            return str(rule)
        for d in self.diffs:
            if d.field.startswith("results["):
                name = d.field[len("results["):].split("]", 1)[0]
                r = (self.expected.get("results") or {}).get(name) or {}
                if r.get("rule"):
                    return str(r["rule"])
        return None

    def record(self) -> dict[str, Any]:
        """The step as a trace stores it."""
        out: dict[str, Any] = {"command": self.command, "expected": jsonable(self.expected)}
        if self.failure is not None:
            out["actual"] = {"error": "TARGET_ERROR", "error_code": None, "message": self.failure, "rule": None}
            out["diff"] = [f"target error: {self.failure}"]
        elif self.diffs:
            out["actual"] = jsonable(self.actual)
            out["diff"] = [str(d) for d in self.diffs]
        return out

    def lines(self) -> list[str]:
        """The divergence itself, for a terminal: op, rule, command, then one line per field."""
        where = "set-up" if self.index < 0 else f"step {self.index}"
        head = f"{where} {self.op}" + (f"  rule {self.rule}" if self.rule else "")
        out = [head, f"    command: {json.dumps(self.command, sort_keys=True)}"]
        if self.failure is not None:
            return [*out, f"    target error: {self.failure}"]
        return out + [f"    {d}" for d in self.diffs]

    def describe(self) -> str:
        """One line: where and how it diverged."""
        if self.failure is not None:
            where = "set-up" if self.index < 0 else f"step {self.index} ({self.op})"
            return f"{where}: target error: {self.failure}"
        return f"step {self.index} ({self.op}): " + "; ".join(str(d) for d in self.diffs)


@dataclass
class Verdict:
    status: Status
    steps: list[StepResult] = field(default_factory=list)
    first: StepResult | None = None  # the first step that diverged or failed

    @property
    def steps_run(self) -> int:
        return sum(1 for s in self.steps if s.index >= 0)


class Lockstep:
    """Apply commands to a target step by step and judge each outcome.

    `reference`: where expected outcomes come from when a step does not bring its own (lockstep);
    `target` None: record only (the generator), every step passes."""

    def __init__(self, target: Applies | None, *, reference: Reference | None = None,
                 capabilities: frozenset[str] | None = None, messages: bool = True,
                 unreported: frozenset[str] | None = None):
        self.target, self.reference = target, reference
        self.capabilities, self.messages = capabilities, messages
        # The fields the target's hello says it cannot report (conformance.targets.Target.unreported).
        self.unreported = frozenset(unreported if unreported is not None else getattr(target, "unreported", ()) or ())
        self.steps: list[StepResult] = []
        self.count = 0  # steps so far (set-up excluded)
        self.first: StepResult | None = None  # the first step that diverged or failed
        self.live = False  # the target is a running cluster: epochs are offsets it may move on its own
        self.state: Command | None = None  # a live target's stated state, where the reference started
        self._outcome_ok = outcome_check()

    def start(self, profile: str | None, initial: Iterable[Command] = ()) -> StepResult | None:
        """Reset the target and apply the set-up commands (not compared); a failure is returned.
        A live target (one that states its state instead of being reset) gets no set-up: the
        reference starts from the state it states."""
        try:
            if self.target is not None:
                self.target.reset(profile)
                observed = getattr(self.target, "observed_state", None)
                self.state = observed() if observed is not None else None
            if self.state is not None:
                self.live = True
                if self.reference is not None:
                    out = self.reference.apply(self.state)
                    if out.get("error") != "NONE":
                        raise StateNotStated(f"the reference cannot start from the target's stated state: "
                                             f"{out.get('error')}: {out.get('message')}")
                return None
            for cmd in initial:
                if self.reference is not None:
                    self.reference.apply(cmd)
                if self.target is not None:
                    self.target.apply(cmd)
        except Exception as e:  # noqa: BLE001 - whatever the target raised, it failed here
            failed = StepResult(-1, {"op": "reset/initial"}, {}, failure=_failure_text(e))
            self.steps.append(failed)
            if self.first is None:
                self.first = failed
            return failed
        return None

    def step(self, command: Command, expected: dict[str, Any] | None = None) -> StepResult:
        if expected is None:
            if self.reference is None:
                raise ValueError("a step needs an expected outcome or a reference")
            expected = self.reference.apply(command)
        index = self.count
        self.count += 1
        if self.target is None:
            result = StepResult(index, command, expected)
        else:
            result = self._judge(index, command, expected)
            if self.first is None and (result.diffs or result.failure is not None):
                self.first = result
        self.steps.append(result)
        return result

    def _judge(self, index: int, command: Command, expected: dict[str, Any]) -> StepResult:
        assert self.target is not None
        try:
            actual = self.target.apply(command)
        except Exception as e:  # noqa: BLE001 - a crashing target is a verdict on this step
            return StepResult(index, command, expected, failure=_failure_text(e), not_run=isinstance(e, NotRun))
        if self._outcome_ok(actual) and actual == expected:  # the common case: a valid outcome, equal
            return StepResult(index, command, expected, actual)
        return self._judge_outcome(index, command, expected, actual)

    def _judge_outcome(self, index: int, command: Command, expected: dict[str, Any], actual: Any) -> StepResult:
        if not self._outcome_ok(actual):  # the fast check vouches for almost every outcome; else the schema decides
            problem = outcome_problem(actual, "malformed outcome")
            if problem is not None:
                return StepResult(index, command, expected, actual if isinstance(actual, dict) else None,
                                  failure=problem)
        if actual == expected:  # decided in C
            return StepResult(index, command, expected, actual)
        diffs = differences(expected, actual, messages=self.messages, capabilities=self.capabilities, live=self.live,
                            unreported=self.unreported)
        return StepResult(index, command, expected, actual, tuple(diffs))

    def replay(self, steps: Iterable[dict[str, Any]], stop_at_first: bool = True, *, keep_passing: bool = True) -> None:
        """`step` over recorded steps ({"command", "expected"}), each judged against its own expected
        outcome, until a target error (or, with `stop_at_first`, a divergence): the replay's loop,
        with the per-step work of `step` and `_judge` inlined.  `keep_passing=False`: `steps` gets
        only the steps that did not pass (a corpus replay reads nothing else), `count` still counts all."""
        if self.target is None:
            for step in steps:
                self.step(step["command"], step["expected"])
            return
        apply, outcome_ok, append = self.target.apply, self._outcome_ok, self.steps.append
        index = self.count
        try:
            for step in steps:
                command, expected = step["command"], step["expected"]
                if expected is None:
                    raise ValueError("a step needs an expected outcome or a reference")
                try:
                    actual = apply(command)
                except Exception as e:  # noqa: BLE001 - a crashing target is a verdict on this step
                    result = StepResult(index, command, expected, failure=_failure_text(e),
                                        not_run=isinstance(e, NotRun))
                else:
                    if outcome_ok(actual) and actual == expected:
                        index += 1
                        if keep_passing:
                            append(StepResult(index - 1, command, expected, actual))
                        continue
                    result = self._judge_outcome(index, command, expected, actual)
                index += 1
                if keep_passing or not result.ok:
                    append(result)
                if result.failure is not None or result.diffs:
                    if self.first is None:
                        self.first = result
                    if result.failure is not None or stop_at_first:
                        break
        finally:
            self.count = index

    def verdict(self) -> Verdict:
        first = self.first  # kept as steps are taken: no rescan
        status: Status = "pass" if first is None else ("target-error" if first.failure is not None else "diverged")
        return Verdict(status, list(self.steps), first)


def run_steps(trace: dict[str, Any], target: Applies | None, *, stop_at_first: bool = True,
              capabilities: frozenset[str] | None = None, reference: Reference | None = None,
              messages: bool = True, keep_passing: bool = True) -> Verdict:
    """Replay a trace (reset to its profile, its initial set-up, its steps) and judge it.

    Expected outcomes are the trace's own unless `reference` is given (then recomputed in lockstep,
    e.g. to shrink a counterexample).  A target error always ends the run; a divergence ends it when
    `stop_at_first` (later steps start from a state that already differs).  `keep_passing=False`
    leaves the passing steps out of the verdict's `steps` (replaying recorded steps only)."""
    engine = Lockstep(target, reference=reference, capabilities=capabilities, messages=messages)
    if engine.start(trace.get("profile"), trace.get("initial", ())) is not None:
        return engine.verdict()
    steps: Sequence[dict[str, Any]] = trace["steps"]
    if reference is None:
        engine.replay(steps, stop_at_first, keep_passing=keep_passing)
        return engine.verdict()
    for step in steps:
        result = engine.step(step["command"])
        if result.failure is not None or (result.diffs and stop_at_first):
            break
    return engine.verdict()


def shrink(trace: dict[str, Any], target: Applies, *, capabilities: frozenset[str] | None = None,
           max_attempts: int = 200) -> dict[str, Any] | None:
    """A smaller trace that still fails on `target`, with expected outcomes recomputed by the
    reference in lockstep; None if the trace does not fail.  Cut after the first failing step, then
    drop earlier steps one at a time while the last step still fails (bounded by `max_attempts`)."""
    from reference_impl import Cluster

    def run(steps: list[dict[str, Any]]) -> Verdict:
        return run_steps({**trace, "steps": steps}, target, capabilities=capabilities,
                         reference=Cluster(trace["profile"]))

    verdict = run(list(trace["steps"]))
    if verdict.first is None or verdict.first.index < 0:
        return None
    steps = list(trace["steps"][: verdict.first.index + 1])
    attempts, i = 0, len(steps) - 2
    while i >= 0 and attempts < max_attempts:
        candidate = steps[:i] + steps[i + 1:]
        attempts += 1
        tried = run(candidate)
        if tried.first is not None and tried.first.index == len(candidate) - 1:
            steps, verdict = candidate, tried
        i -= 1
    final = [s.record() for s in verdict.steps if s.index >= 0]
    rules = sorted({r for r in (verdict.first.rule if verdict.first else None,) if r})
    out = {k: v for k, v in trace.items() if k not in ("steps", "rules")}
    out.update(steps=final, source=f"shrunk from {trace.get('id')} ({len(trace['steps'])} -> {len(final)} steps)")
    if rules:
        out["rules"] = rules
    return out


def _failure_text(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


__all__ = ["Applies", "Lockstep", "StepResult", "Verdict", "run_steps"]
