"""Every outcome field docs/target-protocol.md documents is compared, or listed in NOT_COMPARED with
why; a wrong value of a newly compared field is a divergence; a target's `unreported` fields are
skipped for that target alone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conformance.compare import differences, normalize_records
from conformance.engine import Lockstep
from conformance.model import NOT_COMPARED, REPORTABLE, compared_fields, hello_problem, unreported_of
from conformance.targets import Target
from reference_impl import Cluster

DOC = Path(__file__).resolve().parents[1] / "docs" / "target-protocol.md"
_FIELD = re.compile(r"`([a-z][a-z_]*)`")


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def _rows(section: str) -> list[list[str]]:
    rows = []
    for line in section.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))])
    return rows[1:]  # the header row


def _cleaned(cell: str) -> str:
    """An Ops row's outcome cell without its error list, prose and parenthesised remarks/shapes."""
    cell = cell.split("; errors:")[0].split(" — ")[0]
    while re.search(r"\([^()]*\)", cell):
        cell = re.sub(r"\([^()]*\)", "", cell)
    return cell


def documented_fields() -> dict[str, set[str]]:
    """{field: ops documenting it} from the 'Outcomes and error names' and 'Ops' tables."""
    text = DOC.read_text()
    found: dict[str, set[str]] = {}
    for key, _ in _rows(_section(text, "Outcomes and error names")):
        for name in _FIELD.findall(key):
            found.setdefault(name, set()).add("*")
    ops = {row[0].strip("`"): _cleaned(row[2]) for row in _rows(_section(text, "Ops"))}
    for op, cell in ops.items():
        for name in _FIELD.findall(cell):
            for field in (_FIELD.findall(ops[name]) if name in ops else [name]):
                found.setdefault(field, set()).add(op)  # "as `api_versions`": that op's fields
    return found


def test_the_doc_tables_parse() -> None:
    fields = documented_fields()
    # a parser that found nothing would pass the next test vacuously
    assert {"error", "broker_epoch", "voters", "epoch_before", "request", "response", "payload"} <= set(fields)
    assert "TOOL_ERROR" not in fields and "api_versions" not in fields
    assert len(fields) >= 40, sorted(fields)


def test_every_documented_outcome_field_is_compared_or_listed_as_not_compared() -> None:
    compared, listed = compared_fields(), set(NOT_COMPARED)
    neither = {f: sorted(ops) for f, ops in documented_fields().items() if f not in compared and f not in listed}
    assert not neither, f"documented outcome fields neither compared nor in model.NOT_COMPARED: {neither}"
    assert not compared & listed, f"both compared and listed as not compared: {sorted(compared & listed)}"
    assert all(reason.strip() for reason in NOT_COMPARED.values())


# -- newly compared fields: a wrong value diverges ---------------------------------------------------

def _ref(profile: str, *commands: dict[str, Any]) -> list[dict[str, Any]]:
    c = Cluster(profile)
    return [c.apply(cmd) for cmd in commands]


def _fields(diffs: list[Any]) -> set[str]:
    return {d.field for d in diffs}


def test_a_wrong_broker_epoch_diverges() -> None:
    *_, reg = _ref("kafka-4.1", {"op": "format"}, {"op": "register", "node": 1})
    assert reg["error"] == "NONE" and isinstance(reg["broker_epoch"], int)
    assert differences(reg, reg) == []
    wrong = {**reg, "broker_epoch": reg["broker_epoch"] + 1}
    assert "broker_epoch" in _fields(differences(reg, wrong))
    missing = {k: v for k, v in reg.items() if k != "broker_epoch"}
    assert "broker_epoch" in _fields(differences(reg, missing))


def test_wrong_state_voters_brokers_and_payload_diverge() -> None:
    *_, state = _ref("kafka-4.1", {"op": "format"}, {"op": "register", "node": 1}, {"op": "state"})
    assert state["voters"] == [3000]
    for field, wrong in (("voters", [3000, 3001]), ("brokers", {}), ("kraft_version", 1), ("payload", [{"x": 1}]),
                         ("controllers", {"3000": {}}), ("profile", "kafka-3.9")):
        assert field in _fields(differences(state, {**state, field: wrong})), field


def test_a_wrong_per_feature_rule_diverges_only_when_the_target_sends_one() -> None:
    expected = {"error": "INVALID_UPDATE_VERSION", "error_code": 95, "message": None,
                "results": {"group.version": {"error": "INVALID_UPDATE_VERSION", "message": "m", "rule": "KIP584-UPD-01"}}}
    wrong = {**expected, "results": {"group.version": {"error": "INVALID_UPDATE_VERSION", "message": "m",
                                                       "rule": "KIP584-UPD-02"}}}
    assert _fields(differences(expected, wrong)) == {"results[group.version].rule"}
    silent = {**expected, "results": {"group.version": {"error": "INVALID_UPDATE_VERSION", "message": "m"}}}
    assert differences(expected, silent) == []


def test_registration_records_compare_features_kept_epoch_and_given_incarnation() -> None:
    *_, reg = _ref("kafka-4.1", {"op": "format"}, {"op": "register", "node": 1, "incarnation": "abc"})
    rec = reg["records"][0]
    assert rec["incarnation"] == "abc"
    bad_features = {**reg, "records": [{**rec, "features": {**rec["features"], "group.version": [0, 0]}}]}
    assert "records" in _fields(differences(reg, bad_features))
    bad_inc = {**reg, "records": [{**rec, "incarnation": "xyz"}]}
    assert "records" in _fields(differences(reg, bad_inc))
    bad_epoch = {**reg, "records": [{**rec, "epoch": 99}]}
    assert "records" in _fields(differences(reg, bad_epoch))
    # a generated incarnation is the cluster's own: not compared
    *_, gen = _ref("kafka-4.1", {"op": "format"}, {"op": "register", "node": 1})
    assert "incarnation" not in normalize_records(gen["records"])[0]
    uuid = {**gen, "records": [{**gen["records"][0], "incarnation": "0b6f3c9e-some-uuid"}]}
    assert differences(gen, uuid) == []


def test_a_snapshot_body_is_compared_beyond_its_metadata_version() -> None:
    *_, snap = _ref("kafka-4.1", {"op": "format"}, {"op": "register", "node": 1}, {"op": "snapshot"})
    body = snap["snapshot"]
    fewer = {**snap, "snapshot": {**body, "records": body["records"][:-1]}}
    assert "snapshot.records" in _fields(differences(snap, fewer))
    moved = {**snap, "snapshot": {**body, "end_offset": body["end_offset"] + 1}}
    assert "snapshot.end_offset" in _fields(differences(snap, moved))
    other_cluster = {**snap, "snapshot": {**body, "cluster_id": "elsewhere"}}
    assert differences(snap, other_cluster) == []


def test_features_tool_request_and_response_are_compared() -> None:
    *_, out = _ref("kafka-4.1", {"op": "format"},
                   {"op": "features_tool", "action": "downgrade", "features": ["group.version=0"]})
    assert out["error"] == "NONE" and out["response"]["epoch_before"] is not None
    wrong_req = {**out, "request": {**out["request"], "version": 1}}
    assert "request" in _fields(differences(out, wrong_req))
    wrong_resp = {**out, "response": {**out["response"], "epoch_before": out["response"]["epoch_before"] + 1}}
    assert "response.epoch_before" in _fields(differences(out, wrong_resp))


def test_format_dynamic_quorum_and_echoed_update_fields_are_compared() -> None:
    fmt, upd = _ref("kafka-4.1", {"op": "format"},
                    {"op": "update_features", "updates": [{"feature": "group.version", "level": 1}], "validate_only": True})
    assert "dynamic_quorum" in _fields(differences(fmt, {**fmt, "dynamic_quorum": not fmt["dynamic_quorum"]}))
    for field, wrong in (("validate_only", not upd["validate_only"]), ("version", 0),
                         ("epoch_before", (upd["epoch_before"] or 0) + 1)):
        assert field in _fields(differences(upd, {**upd, field: wrong})), field


# -- unreported: skipped for the target that declares it, only for it -------------------------------

class _Lying(Target):
    """Answers the reference's outcome with a wrong broker_epoch and records."""

    name = "lying"

    def __init__(self, unreported: frozenset[str]):
        self.unreported = unreported
        self.cluster = Cluster("kafka-4.1")

    def reset(self, profile: str | None = None) -> None:
        self.cluster = Cluster(profile or "kafka-4.1")

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        out = self.cluster.apply(command)
        if command["op"] == "register":
            out = {**out, "broker_epoch": out["broker_epoch"] + 1, "records": []}
        return out


def _run(target: Target) -> set[str]:
    engine = Lockstep(target, reference=Cluster("kafka-4.1"))
    assert engine.start("kafka-4.1") is None
    engine.step({"op": "format"})
    return _fields(list(engine.step({"op": "register", "node": 1}).diffs))


def test_unreported_fields_are_skipped_for_the_declaring_target_only() -> None:
    assert _run(_Lying(frozenset())) == {"broker_epoch", "records"}
    assert _run(_Lying(frozenset({"records"}))) == {"broker_epoch"}
    assert _run(_Lying(frozenset({"records", "broker_epoch"}))) == set()
    assert _run(_Lying(frozenset())) == {"broker_epoch", "records"}  # nothing leaks to the next target


def test_the_hello_carries_unreported_and_unknown_names_are_refused() -> None:
    hello = _Lying(frozenset({"records", "epoch_before"})).hello()
    assert hello["unreported"] == ["epoch_before", "records"]
    assert hello_problem(hello) is None and unreported_of(hello) == {"records", "epoch_before"}
    assert "unreported" not in _Lying(frozenset()).hello()
    problem = hello_problem({**hello, "unreported": ["records", "error"]})
    assert problem is not None and "'error'" in problem
    assert "error" not in REPORTABLE


def test_the_kafka_target_declares_what_the_wire_cannot_show() -> None:
    from conformance.live.target import KafkaTarget

    assert {"records", "epoch_before", "lost", "snapshot", "request", "response"} <= KafkaTarget.unreported
    assert KafkaTarget.unreported <= REPORTABLE
    assert "broker_epoch" not in KafkaTarget.unreported


@pytest.mark.parametrize("live", [False, True])
def test_a_live_broker_epoch_may_be_ahead_never_behind(live: bool) -> None:
    expected = {"error": "NONE", "error_code": 0, "message": None, "broker_epoch": 5}
    ahead, behind = {**expected, "broker_epoch": 9}, {**expected, "broker_epoch": 4}
    assert bool(differences(expected, ahead, live=live)) is not live
    assert differences(expected, behind, live=live)
