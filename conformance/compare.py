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


_RECORD_KEYS = ("type", "name", "level", "broker_id", "controller_id", "kind", "kraft_version", "features", "epoch")
# The reference's generated incarnations (N-M, cN-M, restored-N): a target generates its own.
_GENERATED_INCARNATION = re.compile(r"^(c?\d+-\d+|restored-c?\d+)$")


def normalize_records(records: Any) -> list[dict[str, Any]]:
    """Records as a target can reproduce them: offsets and the reference's generated incarnations
    dropped (offsets are compared as the epochs they equal); features, a kept epoch and other
    incarnations stay."""
    if not isinstance(records, list):
        return [{"invalid": repr(records)}]
    out: list[dict[str, Any]] = []
    for r in records:
        if not isinstance(r, dict):
            out.append({})
            continue
        kept = {k: r[k] for k in _RECORD_KEYS if k in r}
        inc = r.get("incarnation")
        if isinstance(inc, str) and not _GENERATED_INCARNATION.match(inc):
            kept["incarnation"] = inc
        out.append(kept)
    return out


def _records_differ(want: Any, got: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """Normalized records when they differ (None when they agree); an incarnation is compared only
    where the expected one was given, not generated."""
    want_recs, got_recs = normalize_records(want), normalize_records(got)
    for w, g in zip(want_recs, got_recs, strict=False):
        if "incarnation" not in w:
            g.pop("incarnation", None)
    return None if want_recs == got_recs else (want_recs, got_recs)


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
                capabilities: frozenset[str] | None = None, live: bool = False,
                unreported: frozenset[str] = frozenset()) -> list[Diff]:
    """The fields on which `actual` differs (empty when the target conforms on this step).
    `records` and `snapshot` are compared when the target reports them (a wire target cannot); a
    target that declares the `snapshot` capability must report the snapshot a KIP-1155 downgrade
    writes.  `live`: the target is a running cluster whose epoch is a log offset that also moves on
    its own (NoOpRecords every metadata.max.idle.interval.ms, KIP-835): its epoch may be ahead of
    the reference's, never behind, and describe lines are compared with the epoch left out.
    `unreported`: the fields this target's hello says it cannot report, skipped for it alone."""
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
        if f.name in unreported:
            continue
        want = expected.get(f.name, _MISSING)
        if want is _MISSING:
            continue
        got = actual.get(f.name, _MISSING)
        if got is _MISSING:
            if f.required and want is not None:
                diffs.append(Diff(f.name, want, None, "missing"))
        elif got != want:
            diffs.append(Diff(f.name, want, got))
    if "records" in expected and "records" in actual and "records" not in unreported:
        differ = _records_differ(expected["records"], actual["records"])
        if differ:
            diffs.append(Diff("records", *differ))
    if expected.get("snapshot") is not None and "snapshot" not in unreported:
        diffs += _compare_snapshot(expected["snapshot"], actual.get("snapshot"), capabilities)
    if "results" not in unreported:
        if "results" in expected and "results" in actual:
            diffs += _compare_results(expected["results"], actual["results"], messages)
        elif expected.get("results"):
            diffs.append(Diff("results", sorted(expected["results"]), None, "missing"))
    if isinstance(expected.get("response"), dict) and "response" in actual and "response" not in unreported:
        got = actual["response"]
        if not isinstance(got, dict):
            diffs.append(Diff("response", expected["response"], got))
        else:  # the UpdateFeatures outcome a tool got back: compared as an outcome
            diffs += [Diff(f"response.{d.field}", d.expected, d.actual, d.how)
                      for d in differences(expected["response"], got, messages=messages, capabilities=capabilities,
                                           live=live, unreported=unreported)]
    return diffs


def _compare_snapshot(want: dict[str, Any], snap: Any, capabilities: frozenset[str] | None) -> list[Diff]:
    """A snapshot's metadata.version first (the KIP-1155 point), then its body: end offset and records."""
    if snap is None:
        if capabilities is None or "snapshot" in capabilities:
            return [Diff("snapshot", "missing (a KIP-1155 downgrade writes one at the new metadata.version)",
                         None, "present")]
        return []
    if not isinstance(snap, dict) or snap.get("metadata_version") != want["metadata_version"]:
        return [Diff("snapshot.metadata_version", want["metadata_version"],
                     snap.get("metadata_version") if isinstance(snap, dict) else snap)]
    diffs = []
    if "end_offset" in want and snap.get("end_offset") != want["end_offset"]:
        diffs.append(Diff("snapshot.end_offset", want["end_offset"], snap.get("end_offset")))
    if "records" in want:
        differ = _records_differ(want["records"], snap.get("records"))
        if differ:
            diffs.append(Diff("snapshot.records", *differ))
    return diffs


def _live_view(expected: dict[str, Any], actual: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    # KIP-584: -1 is the unknown epoch, which a node that finalizes nothing may send.
    unknown = actual.get("epoch") == -1 and not actual.get("finalized") and not expected.get("finalized")
    for key in ("epoch", "broker_epoch", "epoch_before"):  # offsets of a log that moves on its own
        want, got = expected.get(key), actual.get(key)
        if isinstance(want, int) and isinstance(got, int) and not isinstance(got, bool) and (
                got >= want or (key == "epoch" and unknown)):
            actual = {**actual, key: want}
    if isinstance(expected.get("lines"), list) and isinstance(actual.get("lines"), list):
        expected = {**expected, "lines": [_EPOCH_IN_LINE.sub("Epoch: *", x) if isinstance(x, str) else x
                                          for x in expected["lines"]]}
        actual = {**actual, "lines": [_EPOCH_IN_LINE.sub("Epoch: *", x) if isinstance(x, str) else x
                                      for x in actual["lines"]]}
    return expected, actual


def compare(expected: dict[str, Any], actual: dict[str, Any], *, messages: bool = True,
            capabilities: frozenset[str] | None = None, unreported: frozenset[str] = frozenset()) -> list[str]:
    """`differences` as one line each."""
    if not isinstance(actual, dict):
        return [f"outcome is not an object: {actual!r}"]
    return [str(d) for d in differences(expected, actual, messages=messages, capabilities=capabilities,
                                        unreported=unreported)]


def _compare_results(exp: dict[str, Any], act: Any, messages: bool) -> list[Diff]:
    if not isinstance(act, dict) or set(act) != set(exp):
        return [Diff("results.features", sorted(exp), sorted(act) if isinstance(act, dict) else act)]
    diffs = []
    for name, r in exp.items():
        a = act[name] or {}
        if a.get("error") != r.get("error"):
            diffs.append(Diff(f"results[{name}].error", r.get("error"), a.get("error")))
        elif r.get("rule") and a.get("rule") and a["rule"] != r["rule"]:  # a rule only if the target sends one
            diffs.append(Diff(f"results[{name}].rule", r["rule"], a["rule"]))
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
