"""Comparing a target's outcome with the reference's: error names and codes exactly, levels,
ranges and epochs exactly, messages by their key fragment (the part after the generic prefixes).

`differences` gives structured `Diff`s (field, expected, actual); `compare` their one-line texts.
Long values are shown where they differ (first differing item, key or character), not truncated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .model import COMPARED_FIELDS

_PREFIXES = (
    re.compile(r"^The update failed for all features since the following feature had an error: "),
    re.compile(r"^Invalid update version -?\d+ for feature [^ ]+\. "),
)
SHOW = 160  # characters of a value shown in full; longer values are shown around where they differ
_MISSING = object()


def key_fragment(message: str | None) -> str | None:
    """The distinctive part of a message: generic prefixes removed, whitespace collapsed."""
    if message is None:
        return None
    text = " ".join(message.split())
    for rx in _PREFIXES:
        text = rx.sub("", text)
    return text


_RECORD_KEYS = ("type", "name", "level", "broker_id", "controller_id", "kind", "kraft_version")


def normalize_records(records: Any) -> list[dict[str, Any]]:
    """Records as a target can reproduce them: offsets, incarnations and generated ids dropped."""
    if not isinstance(records, list):
        return [{"invalid": repr(records)}]
    return [{k: r[k] for k in _RECORD_KEYS if isinstance(r, dict) and k in r} for r in records]


@dataclass(frozen=True)
class Diff:
    """One field on which the target's outcome differs from the expected one."""

    field: str
    expected: Any
    actual: Any
    how: str = "equal"  # "equal" | "contain" (message fragments) | "missing" | "present"

    def __str__(self) -> str:
        if self.how == "missing":
            return f"{self.field}: missing (expected {_short(self.expected)})"
        if self.how == "contain":
            return f"{self.field}: expected to contain {self.expected!r}, got {self.actual!r}"
        if self.how == "present":
            return f"{self.field}: {self.expected}"
        return f"{self.field}: {where_differs(self.expected, self.actual)}"


_EPOCH_IN_LINE = re.compile(r"Epoch: -?\d+")


def differences(expected: dict[str, Any], actual: dict[str, Any], *, messages: bool = True,
                capabilities: frozenset[str] | None = None, live: bool = False) -> list[Diff]:
    """The fields on which `actual` differs (empty when the target conforms on this step).
    `records` and `snapshot` are compared when the target reports them (a wire target cannot); a
    target that declares the `snapshot` capability must report the snapshot a KIP-1155 downgrade
    writes.  `live`: the target is a running cluster whose epoch is a log offset that also moves on
    its own (NoOpRecords every metadata.max.idle.interval.ms, KIP-835): its epoch may be ahead of
    the reference's, never behind, and describe lines are compared with the epoch left out."""
    if live:
        expected, actual = _live_view(expected, actual)
    diffs: list[Diff] = []
    for key in ("error", "error_code"):
        if actual.get(key) != expected.get(key):
            diffs.append(Diff(key, expected.get(key), actual.get(key)))
    if messages and expected.get("message") and "message" in actual:
        want = key_fragment(expected["message"])
        got = key_fragment(actual.get("message"))
        if want and (got is None or want not in got):
            diffs.append(Diff("message", want, actual.get("message"), "contain"))
    if expected.get("rule") and actual.get("rule") and actual["rule"] != expected["rule"]:
        diffs.append(Diff("rule", expected["rule"], actual["rule"]))
    for f in COMPARED_FIELDS:
        want = expected.get(f.name, _MISSING)
        if want is _MISSING:
            continue
        got = actual.get(f.name, _MISSING)
        if got is _MISSING:
            if f.required and want is not None:
                diffs.append(Diff(f.name, want, None, "missing"))
        elif got != want:
            diffs.append(Diff(f.name, want, got))
    if "records" in expected and "records" in actual:
        want_recs, got_recs = normalize_records(expected["records"]), normalize_records(actual["records"])
        if want_recs != got_recs:
            diffs.append(Diff("records", want_recs, got_recs))
    if expected.get("snapshot") is not None:
        snap = actual.get("snapshot")
        want_mv = expected["snapshot"]["metadata_version"]
        if snap is None:
            if capabilities is None or "snapshot" in capabilities:
                diffs.append(Diff("snapshot", "missing (a KIP-1155 downgrade writes one at the new metadata.version)",
                                  None, "present"))
        elif not isinstance(snap, dict) or snap.get("metadata_version") != want_mv:
            diffs.append(Diff("snapshot.metadata_version", want_mv,
                              snap.get("metadata_version") if isinstance(snap, dict) else snap))
    if "results" in expected and "results" in actual:
        diffs += _compare_results(expected["results"], actual["results"], messages)
    elif expected.get("results"):
        diffs.append(Diff("results", sorted(expected["results"]), None, "missing"))
    return diffs


def _live_view(expected: dict[str, Any], actual: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    want, got = expected.get("epoch"), actual.get("epoch")
    # KIP-584: -1 is the unknown epoch, which a node that finalizes nothing may send.
    unknown = got == -1 and not actual.get("finalized") and not expected.get("finalized")
    if isinstance(want, int) and isinstance(got, int) and not isinstance(got, bool) and (got >= want or unknown):
        actual = {**actual, "epoch": want}
    if isinstance(expected.get("lines"), list) and isinstance(actual.get("lines"), list):
        expected = {**expected, "lines": [_EPOCH_IN_LINE.sub("Epoch: *", x) if isinstance(x, str) else x
                                          for x in expected["lines"]]}
        actual = {**actual, "lines": [_EPOCH_IN_LINE.sub("Epoch: *", x) if isinstance(x, str) else x
                                      for x in actual["lines"]]}
    return expected, actual


def compare(expected: dict[str, Any], actual: dict[str, Any], *, messages: bool = True,
            capabilities: frozenset[str] | None = None) -> list[str]:
    """`differences` as one line each."""
    if not isinstance(actual, dict):
        return [f"outcome is not an object: {actual!r}"]
    return [str(d) for d in differences(expected, actual, messages=messages, capabilities=capabilities)]


def _compare_results(exp: dict[str, Any], act: Any, messages: bool) -> list[Diff]:
    if not isinstance(act, dict) or set(act) != set(exp):
        return [Diff("results.features", sorted(exp), sorted(act) if isinstance(act, dict) else act)]
    diffs = []
    for name, r in exp.items():
        a = act[name] or {}
        if a.get("error") != r.get("error"):
            diffs.append(Diff(f"results[{name}].error", r.get("error"), a.get("error")))
        elif messages and r.get("message") and (key_fragment(r["message"]) or "") not in (
                key_fragment(a.get("message")) or ""):
            diffs.append(Diff(f"results[{name}].message", key_fragment(r["message"]), a.get("message"), "contain"))
    return diffs


def where_differs(expected: Any, actual: Any) -> str:
    """'expected X, got Y', narrowed to the first differing item, key or character of long values."""
    a, b = repr(expected), repr(actual)
    if len(a) <= SHOW and len(b) <= SHOW:
        return f"expected {a}, got {b}"
    if isinstance(expected, list) and isinstance(actual, list):
        for i, (x, y) in enumerate(zip(expected, actual, strict=False)):
            if x != y:
                return f"at [{i}] {where_differs(x, y)} ({len(expected)} vs {len(actual)} items)"
        shorter, longer = (expected, actual) if len(expected) < len(actual) else (actual, expected)
        extra = "got extra" if longer is actual else "missing"
        return f"{extra} item(s) from [{len(shorter)}]: {_short(longer[len(shorter):])}"
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k in sorted(set(expected) | set(actual), key=str):
            x, y = expected.get(k, _MISSING), actual.get(k, _MISSING)
            if x is _MISSING:
                return f"got extra key {k!r}: {_short(y)}"
            if y is _MISSING:
                return f"missing key {k!r} (expected {_short(x)})"
            if x != y:
                return f"at [{k!r}] {where_differs(x, y)}"
    i = next((n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, i - 40)
    return (f"differs at character {i}: expected …{a[start:i + 60]}…, got …{b[start:i + 60]}… "
            f"({len(a)} vs {len(b)} characters)")


def _short(v: Any, limit: int = SHOW) -> str:
    text = repr(v)
    return text if len(text) <= limit else f"{text[: limit - 3]}... ({len(text)} characters)"
