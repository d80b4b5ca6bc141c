"""Allure results for corpus replay findings, written with allure-pytest's own `allure_commons`
(its result models and its file logger), so they sit beside the suite's results in one report.

One result per non-passing replay row (a dict with the fields of `conformance.replay.RESULT_FIELDS`
plus the trace's JSON in `trace`): epic / feature / story from the rule ids at the divergent step
(KIP, area, rule id), the trace and expected-vs-actual attached.  Every file is named
`kfc-replay-<key>-…` with a key stable per (target, trace id), so a later replay replaces its own
files and leaves everyone else's alone.  `environment.properties` carries the run's environment
(Allure has no model for it: it reads that file from the results directory).
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ALLURE_PREFIX = "kfc-replay-"
ENVIRONMENT_FILE = "environment.properties"
_ENVIRONMENT_MARK = "# kfc replay environment"  # a file of ours, to replace; anyone else's is kept
_SHARED_PREFIX = "replay."  # our keys in someone else's file


def rules_of(row: Mapping[str, Any], trace: Mapping[str, Any] | None) -> list[str]:
    """Rule ids of a finding: the diverging step's, else those its outcomes carry, else the trace's own."""
    rules: list[str] = [row["rule"]] if row.get("rule") else []
    for field in ("expected", "actual"):
        try:
            outcome = json.loads(row.get(field) or "null") or {}
            rid = outcome.get("rule") if isinstance(outcome, dict) else None
        except ValueError:
            rid = None
        if rid and rid not in rules:
            rules.append(rid)
    if not rules and trace:
        rules = list(trace.get("rules") or [])[:5]
    return rules


def _key(target_spec: str, trace_id: str) -> str:
    return hashlib.md5(f"{target_spec}\0{trace_id}".encode()).hexdigest()


def divergence_result(row: Mapping[str, Any], target_spec: str, now_ms: int) -> tuple[Any, list[tuple[str, str]]]:
    """The Allure TestResult of one non-passing replay row, plus its attachments as (file name, content)."""
    from allure_commons.model2 import (
        Attachment,
        Label,
        Link,
        Parameter,
        Status,
        StatusDetails,
        TestResult,
        TestStepResult,
    )
    from allure_commons.types import AttachmentType, LabelType, LinkType

    from conformance.plugin import KIP_LINKS
    from reference_impl.rules import RULES

    tid = row["trace_id"]
    key = _key(target_spec, tid)
    try:
        trace = json.loads(row.get("trace") or "null")
    except ValueError:
        trace = None
    rules = rules_of(row, trace if isinstance(trace, dict) else None)
    labels, kips = [], []
    for rid in rules:
        rule = RULES.get(rid)
        if rule is not None:
            labels += [(LabelType.EPIC, rule.kip), (LabelType.FEATURE, rule.area), (LabelType.STORY, rid)]
            kips += [rule.kip] if rule.kip not in kips else []
    if not labels:
        labels = [(LabelType.EPIC, "kfc replay"), (LabelType.FEATURE, row.get("op") or "input"),
                  (LabelType.STORY, "(no rule id)")]
    labels += [(LabelType.SUITE, "kfc replay"), (LabelType.PARENT_SUITE, target_spec), (LabelType.TAG, row["status"]),
               (LabelType.FRAMEWORK, "kfc-spark"), (LabelType.LANGUAGE, "cpython3")]
    status = Status.FAILED if row["status"] == "diverged" else Status.BROKEN
    json_type = AttachmentType.JSON.mime_type
    files: list[tuple[str, str]] = []
    attachments = []
    if row.get("trace"):
        name = f"{ALLURE_PREFIX}{key}-trace-attachment.json"
        files.append((name, row["trace"]))
        attachments.append(Attachment(name="trace", source=name, type=json_type))
    if row.get("expected") or row.get("actual"):
        name = f"{ALLURE_PREFIX}{key}-diff-attachment.json"
        body = {"step": row.get("first_divergent_step"), "op": row.get("op"),
                "expected": json.loads(row["expected"]) if row.get("expected") else None,
                "actual": json.loads(row["actual"]) if row.get("actual") else None, "diff": row.get("diff")}
        files.append((name, json.dumps(body, indent=1)))
        attachments.append(Attachment(name="expected vs actual", source=name, type=json_type))
    stop_at = row.get("first_divergent_step")
    ops = list(row.get("ops") or [])[: (stop_at + 1) if stop_at is not None else 0]
    steps = [TestStepResult(name=f"step {i}: {op}", status=status if i == stop_at else Status.PASSED,
                            start=now_ms, stop=now_ms) for i, op in enumerate(ops)]
    where = f"step {stop_at} ({row.get('op')})" if stop_at is not None else "the trace"
    result = TestResult(
        name=f"replay {tid} [{row.get('profile') or '?'}]",
        fullName=f"kfc replay#{tid}",
        status=status,
        statusDetails=StatusDetails(message=f"{row['status']} at {where}: {row.get('diff') or ''}",
                                    trace=f"kfc replay-trace <trace file> --target {target_spec}\n"
                                          f"(the trace is attached; results row trace_id={tid})"),
        steps=steps,
        attachments=attachments,
        parameters=[Parameter(name="target", value=target_spec), Parameter(name="profile", value=str(row.get("profile"))),
                    Parameter(name="trace_id", value=tid)],
        start=now_ms, stop=now_ms,
        uuid=str(uuid.UUID(key)),
        historyId=key,
        testCaseId=hashlib.md5(f"kfc replay\0{tid}".encode()).hexdigest(),
        labels=[Label(name=name, value=value) for name, value in labels],
        links=[Link(type=LinkType.LINK, url=KIP_LINKS[kip], name=kip) for kip in kips if kip in KIP_LINKS],
    )
    # The logger names a result file after its file_pattern; a stable name (not a fresh uuid4) lets a
    # later replay replace this one.
    result.file_pattern = f"{ALLURE_PREFIX}{key}-result.json"
    return result, files


def write_divergences(directory: str | Path, rows: Sequence[Mapping[str, Any]], target_spec: str) -> int:
    """Write one Allure result (and its attachments) per row into DIRECTORY; return how many."""
    if not rows:
        return 0
    from allure_commons.logger import AllureFileLogger

    logger = AllureFileLogger(str(directory))
    now_ms = int(time.time() * 1000)
    for row in rows:
        result, files = divergence_result(row, target_spec, now_ms)
        for name, content in files:
            logger.report_attached_data(body=content, file_name=name)
        logger.report_result(result)
    return len(rows)


def _escape(text: str) -> str:
    """A Java properties value (what Allure parses): backslashes, line breaks, a leading blank."""
    out = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    return "\\" + out if out[:1] in (" ", "\t") else out


def _ours(path: Path) -> bool:
    return path.read_text(encoding="utf-8", errors="replace").startswith(_ENVIRONMENT_MARK)


def write_environment(directory: str | Path, environment: Mapping[str, str]) -> Path:
    """environment.properties (the report's Environment widget) in DIRECTORY.  If another run (the
    suite) wrote one there, ours joins it as `replay.*` keys instead of replacing it."""
    path = Path(directory) / ENVIRONMENT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    pairs = [(k.replace(" ", "_"), _escape(str(v))) for k, v in environment.items()]
    if path.is_file() and not _ours(path):
        kept = [line for line in path.read_text(encoding="utf-8").splitlines()
                if not line.startswith(_SHARED_PREFIX)]
        lines = kept + [f"{_SHARED_PREFIX}{k}={v}" for k, v in pairs]
    else:
        lines = [_ENVIRONMENT_MARK] + [f"{k}={v}" for k, v in pairs]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def remove_ours(directory: str | Path) -> None:
    """Delete what an earlier replay wrote into DIRECTORY (the suite's results may share it)."""
    d = Path(directory)
    if not d.is_dir():
        return
    for f in d.glob(f"{ALLURE_PREFIX}*"):
        f.unlink()
    env = d / ENVIRONMENT_FILE
    if not env.is_file():
        return
    if _ours(env):
        env.unlink()
        return
    lines = env.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if not line.startswith(_SHARED_PREFIX)]
    if kept != lines:
        env.write_text("\n".join(kept) + "\n", encoding="utf-8")


__all__ = ["ALLURE_PREFIX", "ENVIRONMENT_FILE", "divergence_result", "remove_ours", "rules_of",
           "write_divergences", "write_environment"]
