"""Per-trace replay shared by the single-process loop, multiprocessing and the Spark job.

Pure Python (no Spark import).  A result row is a flat dict with a fixed set of keys and types
(RESULT_FIELDS), so the Spark job can write it as Parquet without guessing a schema:

    trace_id             str
    profile              str | None
    status               "pass" | "diverged" | "target-error" | "input-error" | "skipped"
    first_divergent_step int | None     index into steps (target-error: the step that failed)
    op                   str | None     op of that step
    rule                 str | None     rule id the diverging expected outcome carries
    expected             str | None     JSON of the expected outcome at that step
    actual               str | None     JSON of the actual outcome at that step
    diff                 str | None     the differences, "; "-joined (or the error message)
    n_steps              int
    ops                  list[str]      op of every step, in order
    codes                list[str]      distinct expected error names of the trace, sorted
    op_codes             list[str]      distinct "op/ERROR" pairs of the expected outcomes, sorted

A trace using an op the target's hello does not list (e.g. the kafka-jvm harness has no
`snapshot`) is "skipped", its missing ops in `diff`: never run, never a pass, counted on its own.

Coverage (`codes`, `op_codes`) is taken from the trace's expected outcomes, so it does not depend
on how far a diverging target got.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .corpus import CorpusRow, parse_body
from .engine import run_steps
from .model import STATUSES

RESULT_FIELDS = ("trace_id", "profile", "status", "first_divergent_step", "op", "rule", "expected", "actual",
                 "diff", "n_steps", "ops", "codes", "op_codes")
DIVERGENCE_SAMPLE = 20
SKIPPED_BECAUSE = "the target lacks op(s) "  # a skipped row's diff: this, then the ops, ", "-joined


def _json(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=repr)


def _coverage(trace: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    steps = trace.get("steps", [])
    ops = [str(s["command"].get("op")) for s in steps]
    errs = [str(s["expected"].get("error")) for s in steps]
    return ops, sorted(set(errs)), sorted({f"{op}/{err}" for op, err in set(zip(ops, errs))})


def _row(trace_id: str, profile: str | None, status: str, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"trace_id": trace_id, "profile": profile, "status": status,
                           "first_divergent_step": None, "op": None, "rule": None, "expected": None, "actual": None,
                           "diff": None, "n_steps": 0, "ops": [], "codes": [], "op_codes": []}
    row.update(kw)
    return row


def input_error_row(row: CorpusRow) -> dict[str, Any]:
    """The result of a corpus row that could not be read: passes through as input-error."""
    return _row(row.trace_id, None, "input-error", diff=row.error)


@runtime_checkable
class BatchApplies(Protocol):
    """A target that can apply a whole trace's commands in one request (the protocol's `apply_batch`)."""

    unreported: frozenset[str]

    @property
    def batching(self) -> bool: ...

    def observed_state(self) -> dict[str, Any] | None: ...

    def apply_batch(self, commands: Sequence[dict[str, Any]]) -> list[dict[str, Any]]: ...

    def apply(self, command: dict[str, Any]) -> dict[str, Any]: ...

    def reset(self, profile: str | None = None) -> None: ...


class Prefetched:
    """The engine's target for one recorded trace on a batching target: `reset` resets it and sends
    every command of the trace in one `apply_batch`; `apply` then hands out those outcomes in order
    (the engine judges them as ever, and stops reading at the first divergence).  If the batch fails
    the target is reset again and the commands go one at a time, so a failure is located at its step."""

    def __init__(self, target: BatchApplies, commands: list[dict[str, Any]]):
        self.target, self.commands = target, commands
        self.unreported = target.unreported
        self._outcomes: list[dict[str, Any]] | None = None
        self._next = 0

    def reset(self, profile: str | None = None) -> None:
        self.target.reset(profile)
        self._next = 0
        try:
            self._outcomes = self.target.apply_batch(self.commands)
        except Exception:  # noqa: BLE001 - located by the step-by-step replay below
            self._outcomes = None
            self.target.reset(profile)

    def observed_state(self) -> dict[str, Any] | None:
        return self.target.observed_state()

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        i, self._next = self._next, self._next + 1
        if self._outcomes is None:
            return self.target.apply(command)
        if i >= len(self._outcomes) or command is not self.commands[i]:
            raise RuntimeError(f"prefetched replay out of step at command {i}")  # a bug of ours, not the target's
        return self._outcomes[i]


def missing_ops(trace: dict[str, Any], capabilities: frozenset[str]) -> list[str]:
    """The contract's ops the trace uses and the target lacks (an op outside the contract is a
    malformed command every target answers: not a reason to skip)."""
    from reference_impl import OPS

    ops = {c.get("op") for c in trace.get("initial", ())} | {s["command"].get("op") for s in trace.get("steps", ())}
    return sorted(str(op) for op in ops if op in OPS and op not in capabilities)


def foreign_software(trace: dict[str, Any], active_software: frozenset[str] | None,
                     node_software: frozenset[str] | None = None) -> str | None:
    """Why a target of one release's code cannot run this trace, or None: its active controller runs
    a release outside `active_software` (Target.active_software), or a node whose software is outside
    `node_software` (Target.node_software: what the target's own builders answer for) registers or is
    asked its own ApiVersions: that node's code answers, e.g. a kafka-4.4 broker's v5, or a 3.9+
    broker leaving min-0 ranges out below v4 where a 3.7 harness's builders keep them."""
    if active_software is None:
        return None
    # node -> (software, whether its ranges are its software's: explicit ranges run on any code)
    software: dict[Any, tuple[str, bool]] = {}
    active: Any = None
    for step in trace["steps"]:
        cmd = step["command"]
        op = cmd.get("op")
        if op in ("format", "restore_state"):
            specs = [c for c in (cmd.get("controllers") or [{"id": 3000}]) if isinstance(c, dict)]
            ids = [c.get("id") for c in specs]
            active = cmd.get("active_controller", ids[0] if ids else None)
            default = cmd.get("software") if op == "format" else None
            software = {}
            for spec in [*specs, *(b for b in cmd.get("brokers") or [] if isinstance(b, dict))]:
                name = spec.get("software") or default
                if isinstance(name, str):
                    software[spec.get("id")] = (name, spec.get("ranges") is None)
        elif op == "register" and isinstance(cmd.get("software"), str):
            software[cmd.get("node")] = (cmd["software"], cmd.get("ranges") is None)
        name, own_ranges = software.get(active, (None, False))
        if name is not None and own_ranges and name not in active_software:
            return f"target cannot run its active controller on {name} (it runs {_names(active_software)})"
        if node_software is None or op not in ("api_versions", "describe", "register"):
            continue
        node = cmd.get("node", active)
        # What a node puts on the wire is its software's, explicit ranges or not (KAFKA-17492).
        name = software.get(node, (None, False))[0]
        if name is not None and name not in node_software:
            return f"target cannot answer as node {node} on {name} (its builders answer as {_names(node_software)})"
    return None


def _names(profiles: frozenset[str]) -> str:
    return ", ".join(sorted(profiles))


def replay_trace(target: Any, trace: dict[str, Any], *, messages: bool = True,
                 capabilities: frozenset[str] | None = None) -> dict[str, Any]:
    """Replay one trace on `target` with the one trace engine (stop at the first divergence) and
    give its result row.  The target's failures are target-error rows, never exceptions (the caller
    decides whether to recreate the target)."""
    ops, codes, op_codes = _coverage(trace)
    base: dict[str, Any] = {"n_steps": len(ops), "ops": ops, "codes": codes, "op_codes": op_codes}
    tid, profile = str(trace.get("id")), trace.get("profile")
    if capabilities is None:
        capabilities = getattr(target, "capabilities", None)
    if capabilities is not None:
        missing = missing_ops(trace, capabilities)
        if missing:
            return _row(tid, profile, "skipped", diff=SKIPPED_BECAUSE + ", ".join(missing), **base)
    foreign = foreign_software(trace, getattr(target, "active_software", None), getattr(target, "node_software", None))
    if foreign is not None:
        return _row(tid, profile, "skipped", diff=foreign, **base)
    if isinstance(target, BatchApplies) and target.batching:
        target = Prefetched(target, [*trace.get("initial", ()), *(s["command"] for s in trace["steps"])])
    verdict = run_steps(trace, target, stop_at_first=True, capabilities=capabilities, messages=messages,
                        keep_passing=False)  # the row reads the first failing step only
    first = verdict.first
    if first is None:
        return _row(tid, profile, "pass", **base)
    if first.index < 0:
        return _row(tid, profile, "target-error", diff=f"at reset/initial: {first.failure}", **base)
    return _row(tid, profile, verdict.status, first_divergent_step=first.index, op=first.op,
                expected=_json(first.expected), actual=None if first.actual is None else _json(first.actual),
                diff=first.failure if first.failure is not None else "; ".join(str(d) for d in first.diffs),
                rule=first.rule, **base)


def replay_rows(target_spec: str, rows: Iterable[CorpusRow | tuple[str, str]], *,
                messages: bool = True, target: Any = None) -> Iterator[dict[str, Any]]:
    """Replay a stream of corpus rows on ONE target made from `target_spec` (one per call, i.e. per
    Spark partition), closed at the end.  Rows are `CorpusRow`s or raw (key, body) pairs from
    `corpus.iter_bodies` / a Parquet (trace_id, body).  Input errors pass through as input-error
    rows.  After a target-error the target is reset; if that fails it is closed and made again.
    `target`: one already made from `target_spec` to start with; it stays the caller's to close."""
    from conformance.targets import make_target

    given = target
    frozen = False
    try:
        for raw in rows:
            row = raw if isinstance(raw, CorpusRow) else parse_body(raw[0], raw[1])
            if row.trace is None:
                yield input_error_row(row)
                continue
            if target is None:
                try:
                    target = make_target(target_spec)
                except Exception as e:  # noqa: BLE001 - reported per trace; the next row tries again
                    yield _row(row.trace_id, row.trace.get("profile"), "target-error",
                               diff=f"cannot start target {target_spec!r}: {type(e).__name__}: {e}",
                               **dict(zip(("ops", "codes", "op_codes"), _coverage(row.trace), strict=True)),
                               n_steps=len(row.trace["steps"]))
                    continue
                if not frozen and not gc.get_freeze_count():
                    # What is alive now (modules, the target, the caller's data) lives through the
                    # replay: keep the collector from walking it again for every few traces.
                    gc.freeze()
                    frozen = True
            result = replay_trace(target, row.trace, messages=messages)
            yield result
            if result["status"] == "target-error":
                target = _recover(target)
    finally:
        if frozen:
            gc.unfreeze()
        if target is not None and target is not given:
            with contextlib.suppress(Exception):  # closing a broken target must not hide the results
                target.close()


def _recover(target: Any) -> Any:
    """Reset after a crash; a target that cannot even reset is dropped (made again on the next row)."""
    try:
        target.reset()
        return target
    except Exception:  # noqa: BLE001 - any failure to reset means: make a new target
        with contextlib.suppress(Exception):
            target.close()
        return None


# -- summary ---------------------------------------------------------------------------------------

class Summary:
    """Mergeable counters over result rows (one per partition, then `merge`d on the driver)."""

    def __init__(self) -> None:
        self.total = 0
        self.steps = 0
        self.status: Counter[str] = Counter()
        self.by_profile: dict[str, Counter[str]] = {}
        self.op_steps: Counter[str] = Counter()  # steps per op
        self.code_traces: Counter[str] = Counter()  # traces per expected error name
        self.divergent_ops: Counter[str] = Counter()  # op of the first divergent step
        self.coverage: dict[str, Counter[str]] = {}  # profile -> Counter of "op/CODE" (traces)
        self.divergences: list[dict[str, Any]] = []
        self.skipped_ops: Counter[str] = Counter()  # op the target lacks -> skipped traces that use it

    def add(self, r: dict[str, Any]) -> None:
        self.total += 1
        status = r["status"]
        self.status[status] += 1
        profile = r.get("profile") or "(unknown)"
        self.by_profile.setdefault(profile, Counter())[status] += 1
        if status == "skipped":  # not run: its steps and outcomes count as neither replayed nor covered
            diff = r.get("diff") or ""
            if diff.startswith(SKIPPED_BECAUSE):
                self.skipped_ops.update(diff.removeprefix(SKIPPED_BECAUSE).split(", "))
            else:  # "target cannot run node N on kafka-X …": counted by the release it cannot run
                release = diff.split(" on ", 1)[1].split(" ", 1)[0] if " on " in diff else ""
                self.skipped_ops[f"a node on {release}" if release else (diff or "(no reason)")] += 1
            return
        self.steps += r.get("n_steps") or 0
        self.op_steps.update(r.get("ops") or [])
        self.code_traces.update(r.get("codes") or [])
        if r.get("op_codes"):
            self.coverage.setdefault(profile, Counter()).update(r["op_codes"])
        if status in ("diverged", "target-error"):
            self.divergent_ops[r.get("op") or "(none)"] += 1
        if status != "pass" and len(self.divergences) < DIVERGENCE_SAMPLE:
            self.divergences.append({k: r.get(k) for k in ("trace_id", "profile", "status",
                                                           "first_divergent_step", "op", "rule", "diff")})

    def merge(self, other: Summary) -> Summary:
        self.total += other.total
        self.steps += other.steps
        self.status.update(other.status)
        for p, c in other.by_profile.items():
            self.by_profile.setdefault(p, Counter()).update(c)
        self.op_steps.update(other.op_steps)
        self.code_traces.update(other.code_traces)
        self.divergent_ops.update(other.divergent_ops)
        self.skipped_ops.update(other.skipped_ops)
        for p, c in other.coverage.items():
            self.coverage.setdefault(p, Counter()).update(c)
        room = DIVERGENCE_SAMPLE - len(self.divergences)
        self.divergences.extend(other.divergences[:max(0, room)])
        return self

    def to_dict(self) -> dict[str, Any]:
        replayed = self.total - self.status["input-error"] - self.status["skipped"]
        matrix: dict[str, dict[str, dict[str, int]]] = {}
        for profile in sorted(self.coverage):
            for pair, n in sorted(self.coverage[profile].items()):
                op, _, code = pair.partition("/")
                matrix.setdefault(op, {}).setdefault(code, {})[profile] = n
        return {
            "traces": self.total,
            "steps": self.steps,
            "by_status": {s: self.status.get(s, 0) for s in STATUSES} | {
                s: n for s, n in sorted(self.status.items()) if s not in STATUSES},
            "by_profile": {p: dict(sorted(c.items())) for p, c in sorted(self.by_profile.items())},
            "by_op": dict(sorted(self.op_steps.items())),
            "by_error_code": dict(sorted(self.code_traces.items())),
            "divergent_ops": dict(sorted(self.divergent_ops.items())),
            "divergence_rate": (self.status["diverged"] / replayed) if replayed else 0.0,
            "coverage": matrix,  # op -> expected error name -> profile -> traces
            "first_divergences": list(self.divergences),
            "skipped_ops": dict(self.skipped_ops.most_common()),  # op the target lacks -> traces skipped for it
        }


def summarize(results: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Counts by status, op, error code and profile; divergence rate; coverage op x code x profile.

    divergence_rate = diverged / (traces - input errors - skipped).  `by_op` counts steps; `by_error_code`
    counts traces whose expected outcomes reach that error name."""
    s = Summary()
    for r in results:
        s.add(r)
    return s.to_dict()


__all__ = ["RESULT_FIELDS", "SKIPPED_BECAUSE", "STATUSES", "BatchApplies", "Prefetched", "Summary", "foreign_software", "input_error_row", "missing_ops", "replay_rows",
           "replay_trace", "summarize"]


# -- shrinking what a corpus replay found ----------------------------------------------------------

def shrink_failures(results_dir: Path, target: Any, target_spec: str, traces_dir: Path,
                    capabilities: frozenset[str] | None, *, limit: int = 5) -> list[dict[str, Any]]:
    """The first `limit` non-passing traces of a replay's results (by trace id), each shrunk on the
    target with the one engine, written as a trace, with its divergence and a one-line repro."""
    import pyarrow.parquet as pq

    from .engine import shrink
    from .trace import make_trace, write_trace
    from .verdicts import repro_command

    files = sorted(Path(results_dir).glob("*.parquet"))
    rows: list[dict[str, Any]] = []
    for f in files:
        table = pq.read_table(f, columns=["trace_id", "status", "diff", "trace"])
        rows += [r for r in table.to_pylist() if r["status"] not in ("pass", "skipped")]
    out = []
    for r in sorted(rows, key=lambda r: r["trace_id"])[:limit]:
        entry: dict[str, Any] = {"trace_id": r["trace_id"], "status": r["status"], "diff": r["diff"]}
        trace = json.loads(r["trace"]) if r.get("trace") and r["status"] != "input-error" else None
        small = shrink(trace, target, capabilities=capabilities) if trace else None
        if small is not None:
            last = small["steps"][-1]
            written = make_trace(small["profile"], small["steps"], source=small["source"],
                                 rules=small.get("rules"), initial=small.get("initial"), target=target_spec)
            path = write_trace(written, traces_dir)
            entry.update(path=str(path), repro=repro_command(path, target_spec),
                         divergence={"step": len(small["steps"]) - 1, "op": last["command"].get("op"),
                                     "rule": (small.get("rules") or [None])[0], "failure": None,
                                     "diffs": [{"text": d} for d in last.get("diff", [])]})
        out.append(entry)
    return out
