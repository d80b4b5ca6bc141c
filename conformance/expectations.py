"""Expectation files: failures a target is known to have, by rule id or test id (like
web-platform-tests metadata).  TOML:

    [[fail]]
    rule = "KIP584-UPD-04"          # every test labelled with this rule
    reason = "we do not check fenced brokers yet"

    [[fail]]
    test = "test_examples.py::test_example[abc123"   # a test id, or a prefix of one
    reason = "…"
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


class ExpectationsError(ValueError):
    pass


@dataclass
class Expectations:
    by_rule: dict[str, str] = field(default_factory=dict)
    by_test: dict[str, str] = field(default_factory=dict)

    def reason_for(self, nodeid: str, rules: list[str]) -> str | None:
        for rid in rules:
            if rid in self.by_rule:
                return f"{rid}: {self.by_rule[rid]}"
        for prefix, reason in self.by_test.items():
            if prefix in nodeid:
                return reason
        return None


_ENTRY_KEYS = {"rule": str, "test": str, "reason": str}
_AT = re.compile(r"^(?P<what>.*?) \(at (?:line (?P<line>\d+), column (?P<col>\d+)|end of document)\)$", re.DOTALL)


def toml_error_position(error: tomllib.TOMLDecodeError, text: str) -> tuple[str, int, int]:
    """(message, line, column) of a TOML error.  Python 3.11-3.13 give them only inside the message
    ("Invalid value (at line 3, column 10)"; "... (at end of document)"); 3.14 has attributes."""
    message = str(getattr(error, "msg", "") or error)
    lineno, colno = getattr(error, "lineno", None), getattr(error, "colno", None)
    m = _AT.match(str(error))
    if m:
        message = m["what"]
        if m["line"]:
            lineno, colno = int(m["line"]), int(m["col"])
    if lineno is None or colno is None:  # at the end of the document
        lines = text.split("\n")
        lineno, colno = len(lines), len(lines[-1]) + 1
    return message, int(lineno), int(colno)


def _fail_header_lines(text: str) -> list[int]:
    """Line numbers of the `[[fail]]` headers, to point at an entry (inline arrays have none)."""
    return [n for n, line in enumerate(text.splitlines(), 1) if re.match(r"\s*\[\[\s*fail\s*\]\]", line)]


def load_expectations(path: str | Path) -> Expectations:
    """Read an expectations file; every problem is one ExpectationsError line naming the file and
    where in it (FILE:LINE:COLUMN for syntax, FILE:LINE: [[fail]] entry N for a bad entry)."""
    from reference_impl.rules import RULES

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ExpectationsError(f"{p}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ExpectationsError(f"{p}: not UTF-8 text (byte {e.start})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        message, line, col = toml_error_position(e, text)
        raise ExpectationsError(f"{p}:{line}:{col}: not valid TOML: {message}") from None
    unknown = set(data) - {"fail"}
    if unknown:
        raise ExpectationsError(f"{p}: unknown table(s) {sorted(unknown)}; only [[fail]] entries are read")
    entries = data.get("fail", [])
    if not isinstance(entries, list):
        raise ExpectationsError(f"{p}: 'fail' must be an array of tables ([[fail]] entries), "
                                f"not {type(entries).__name__}")
    headers = _fail_header_lines(text)
    exp = Expectations()
    for i, entry in enumerate(entries):
        at = f"{headers[i]}:" if len(headers) == len(entries) else ""
        where = f"{p}:{at} [[fail]] entry {i + 1}"
        if not isinstance(entry, dict):
            raise ExpectationsError(f"{where}: must be a table, not {type(entry).__name__} {entry!r}")
        extra = sorted(set(entry) - set(_ENTRY_KEYS))
        if extra:
            raise ExpectationsError(f"{where}: unknown key(s) {', '.join(map(repr, extra))} "
                                    f"(an entry has {', '.join(sorted(_ENTRY_KEYS))})")
        for key, kind in _ENTRY_KEYS.items():
            if key in entry and not isinstance(entry[key], kind):
                raise ExpectationsError(f"{where}: {key} must be a string, not {type(entry[key]).__name__} "
                                        f"{entry[key]!r}")
        if ("rule" in entry) == ("test" in entry):
            raise ExpectationsError(f"{where}: needs exactly one of 'rule' or 'test'")
        reason = entry.get("reason", "expected failure")
        if "rule" in entry:
            if entry["rule"] not in RULES:
                raise ExpectationsError(f"{where}: unknown rule id {entry['rule']!r}")
            exp.by_rule[entry["rule"]] = reason
        else:
            if not entry["test"]:
                raise ExpectationsError(f"{where}: test must not be empty (it would match every test)")
            exp.by_test[entry["test"]] = reason
    return exp
