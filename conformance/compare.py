"""Comparing a target's outcome with the reference's: error names and codes exactly, levels,
ranges and epochs exactly, messages by their key fragment (the part after the generic prefixes)."""

from __future__ import annotations

import re
from typing import Any

# Fields compared exactly when the expected outcome has them and the target reports them.
EXACT_FIELDS = (
    "levels", "metadata_version", "finalized", "supported", "epoch", "lines", "exit_code", "dependencies",
    "state", "skipped_unknown_keys", "ignored_tagged_fields", "sent_features", "lost",
)
# Fields every target must report when the reference does (the rest may be absent, e.g. over the wire).
REQUIRED_FIELDS = ("finalized", "supported", "epoch", "levels", "lines")

_PREFIXES = (
    re.compile(r"^The update failed for all features since the following feature had an error: "),
    re.compile(r"^Invalid update version -?\d+ for feature [^ ]+\. "),
)


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


def compare(expected: dict[str, Any], actual: dict[str, Any], *, messages: bool = True,
            capabilities: frozenset[str] | None = None) -> list[str]:
    """Differences (empty when the target conforms on this step).  `records` and `snapshot` are
    compared when the target reports them (a wire target cannot); a target that declares the
    `snapshot` capability must report the snapshot a KIP-1155 downgrade writes."""
    diffs: list[str] = []
    if not isinstance(actual, dict):
        return [f"outcome is not an object: {actual!r}"]
    for key in ("error", "error_code"):
        if actual.get(key) != expected.get(key):
            diffs.append(f"{key}: expected {expected.get(key)!r}, got {actual.get(key)!r}")
    if messages and expected.get("message") and "message" in actual:
        want = key_fragment(expected["message"])
        got = key_fragment(actual.get("message"))
        if want and (got is None or want not in got):
            diffs.append(f"message: expected to contain {want!r}, got {actual.get('message')!r}")
    if expected.get("rule") and actual.get("rule") and actual["rule"] != expected["rule"]:
        diffs.append(f"rule: expected {expected['rule']}, got {actual['rule']}")
    for key in EXACT_FIELDS:
        if key not in expected:
            continue
        if key not in actual:
            if key in REQUIRED_FIELDS and expected[key] is not None:
                diffs.append(f"{key}: missing (expected {_short(expected[key])})")
            continue
        if actual[key] != expected[key]:
            diffs.append(f"{key}: expected {_short(expected[key])}, got {_short(actual[key])}")
    if "records" in expected and "records" in actual:
        want_recs, got_recs = normalize_records(expected["records"]), normalize_records(actual["records"])
        if want_recs != got_recs:
            diffs.append(f"records: expected {_short(want_recs)}, got {_short(got_recs)}")
    if expected.get("snapshot") is not None:
        snap = actual.get("snapshot")
        if snap is None:
            if capabilities is None or "snapshot" in capabilities:
                diffs.append("snapshot: missing (a KIP-1155 downgrade writes one at the new metadata.version)")
        elif not isinstance(snap, dict) or snap.get("metadata_version") != expected["snapshot"]["metadata_version"]:
            diffs.append(f"snapshot: expected one at metadata.version {expected['snapshot']['metadata_version']}, "
                         f"got {_short(snap)}")
    if "results" in expected and "results" in actual:
        diffs += _compare_results(expected["results"], actual["results"], messages)
    elif expected.get("results"):
        diffs.append("results: missing per-feature results")
    return diffs


def _compare_results(exp: dict[str, Any], act: Any, messages: bool) -> list[str]:
    if not isinstance(act, dict) or set(act) != set(exp):
        return [f"results: expected features {sorted(exp)}, got {sorted(act) if isinstance(act, dict) else act!r}"]
    diffs = []
    for name, r in exp.items():
        a = act[name] or {}
        if a.get("error") != r.get("error"):
            diffs.append(f"results[{name}].error: expected {r.get('error')}, got {a.get('error')}")
        elif messages and r.get("message") and (key_fragment(r["message"]) or "") not in (
                key_fragment(a.get("message")) or ""):
            diffs.append(f"results[{name}].message: expected to contain {key_fragment(r['message'])!r}, "
                         f"got {a.get('message')!r}")
    return diffs


def _short(v: Any, limit: int = 160) -> str:
    text = repr(v)
    return text if len(text) <= limit else text[: limit - 3] + "..."
