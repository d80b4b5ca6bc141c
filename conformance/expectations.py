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


def load_expectations(path: str | Path) -> Expectations:
    from reference_impl.rules import RULES

    p = Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except OSError as e:
        raise ExpectationsError(f"{p}: cannot read: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ExpectationsError(f"{p}: not valid TOML: {e}") from None
    exp = Expectations()
    for i, entry in enumerate(data.get("fail", [])):
        reason = str(entry.get("reason", "expected failure"))
        if "rule" in entry:
            if entry["rule"] not in RULES:
                raise ExpectationsError(f"{p}: fail[{i}]: unknown rule id {entry['rule']!r}")
            exp.by_rule[entry["rule"]] = reason
        elif "test" in entry:
            exp.by_test[str(entry["test"])] = reason
        else:
            raise ExpectationsError(f"{p}: fail[{i}] needs 'rule' or 'test'")
    unknown = set(data) - {"fail"}
    if unknown:
        raise ExpectationsError(f"{p}: unknown table(s) {sorted(unknown)}; only [[fail]] entries are read")
    return exp
