"""kfc traces (fixtures/schema/trace.schema.json): read, validate, write (replay: conformance.engine)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .model import trace_problems

FORMAT, VERSION = "kfc-trace", 1


class TraceError(ValueError):
    """A trace file that cannot be used: names the file and what is wrong."""


def validate(trace: Any, where: str = "trace") -> list[str]:
    return trace_problems(trace, where)


def make_trace(profile: str, steps: list[dict[str, Any]], *, source: str, rules: list[str] | None = None,
               initial: list[dict[str, Any]] | None = None, target: str | None = None) -> dict[str, Any]:
    body = json.dumps([profile, initial or [], [s["command"] for s in steps]], sort_keys=True)
    trace: dict[str, Any] = {
        "format": FORMAT, "version": VERSION,
        "id": hashlib.sha256(body.encode()).hexdigest()[:16],
        "profile": profile, "source": source, "steps": steps,
    }
    if initial:
        trace["initial"] = initial
    if rules:
        trace["rules"] = sorted(set(rules))
    if target:
        trace["target"] = target
    return trace


def write_trace(trace: dict[str, Any], directory: Path) -> Path:
    problems = validate(trace)
    if problems:  # a counterexample we cannot replay would be worse than none
        raise TraceError("; ".join(problems))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"trace-{trace['id']}.json"
    path.write_text(json.dumps(trace, indent=1, sort_keys=False) + "\n")
    return path


def read_trace(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise TraceError(f"{p}: cannot read: {e.strerror}") from None
    try:
        trace = json.loads(text)
    except json.JSONDecodeError as e:
        raise TraceError(f"{p}: not valid JSON (line {e.lineno}, column {e.colno}): {e.msg}") from None
    problems = validate(trace, str(p))
    if problems:
        raise TraceError("; ".join(problems))
    return trace
