"""Record the conformance suite's example tables from the project's own tests.

Every reference cluster a test in tests/ drives becomes one example: its commands, the outcomes
the reference gave, and the rule ids of the test's markers plus the rules the outcomes name.  An
example that gets no rule id that way (every step succeeds and its test has no rule marker) is
labelled with the rule whose behaviour its test checks (BEHAVIOUR_RULES); an example left without
any rule id is an error.  The KIP-915 loads are labelled in coordinator_examples.
Run: python scripts/record_examples.py [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "examples" / "examples.jsonl"


# Source test (tests/FILE::NAME, parameters dropped) -> the rule ids of the behaviour it checks, for
# its examples that nothing else labels: tests of a successful path, whose outcomes carry no rule id.
# Each is the rule whose "pass" side the test shows (the comment says how).
BEHAVIOUR_RULES: dict[str, tuple[str, ...]] = {
    # the same broker incarnation re-registering is an amend, not a DUPLICATE_BROKER_REGISTRATION
    "tests/test_controller.py::test_3_7_3_8_amend_gets_a_new_epoch": ("KIP584-REG-04",),
    "tests/test_controller.py::test_3_9_plus_amend_keeps_the_broker_epoch": ("KIP584-REG-04",),
    # ApiVersions v3 (not below) carries the feature information
    "tests/test_controller.py::test_3_7_3_8_api_versions_v3_lists_metadata_version": ("KIP584-API-01",),
    # raft's kraft.version 0 replaces the record's 1, and a level 0 is never listed
    "tests/test_controller.py::test_3_9_brokers_report_kraft_version_from_raft": ("KIP584-API-02",),
    # kraft.version finalized at raft's 0: a broker that does not mention it is checked against 0-0
    "tests/test_controller.py::test_3_9_controller_uses_raft_kraft_version_for_registration": ("KIP584-REG-02",),
    # before 4.1 kraft.version can be downgraded; an update to the current level writes a record
    "tests/test_controller.py::test_3_9_kraft_version_is_an_ordinary_feature": ("KIP1022-UPD-03", "KIP584-UPD-08"),
    "tests/test_controller.py::test_4_0_kraft_version_update_is_a_silent_no_op": ("KIP1022-UPD-03", "KIP584-API-02"),
    # only the last entry of a feature is checked: the dropped level 99 would be outside the range
    "tests/test_controller.py::test_duplicate_feature_names_last_entry_wins": ("KIP584-UPD-03",),
    # a 3.7 controller takes BrokerRegistration v3, which omits the min-0 features
    "tests/test_controller.py::test_mixed_3_7_controller_and_3_9_broker_registers_at_v3": ("KIP1022-REG-01",),
    # the epoch continues from the restored one: the offset of the last applied record
    "tests/test_controller.py::test_restore_state_from_stated_levels": ("KIP584-EPOCH-01",),
    # UpdateFeatures v0 has no validate_only: the request is applied
    "tests/test_controller.py::test_v0_has_no_validate_only": ("KIP584-UPD-09",),
    # the snapshot is written on a metadata.version downgrade only
    "tests/test_kip1155.py::test_no_snapshot_on_upgrade": ("KIP1155-DG-05",),
    # describe's Epoch is the offset of the last metadata record
    "tests/test_tools.py::test_describe_lines_40": ("KIP584-EPOCH-01",),
    # kafka-features success lines and exit code 0 (disable = level 0 deletes the feature)
    "tests/test_tools.py::test_downgrade_and_disable_success_lines": ("KIP1022-TOOL-06", "KIP584-UPD-07"),
    "tests/test_tools.py::test_kip_example_upgrade_mv16_tv2_gv1": ("KIP1022-TOOL-06",),
    "tests/test_tools.py::test_kip_example_upgrade_transaction_version_2": ("KIP1022-TOOL-06",),
    "tests/test_tools.py::test_success_lines_sorted_by_name": ("KIP1022-TOOL-06",),
    # a dry run (validate_only) checks everything and writes nothing
    "tests/test_tools.py::test_dry_run_lines_write_nothing": ("KIP584-UPD-09",),
    # 3.8 format reads --feature metadata.version only and ignores the other features
    "tests/test_tools.py::test_format_38_feature_metadata_version_sets_mv_others_ignored": ("KIP1022-FMT-03",),
    # the default release version is a stable one unless unstable versions are enabled
    "tests/test_tools.py::test_format_default_release_version_is_latest_production": ("KIP1022-FMT-07",),
    "tests/test_tools.py::test_format_default_release_version_with_unstable": ("KIP1022-FMT-07",),
    # --metadata alone (without --feature or --release-version) is accepted
    "tests/test_tools.py::test_metadata_flag_deprecation_line_4x": ("KIP1022-TOOL-02",),
    "tests/test_tools.py::test_metadata_flag_no_deprecation_line_3x": ("KIP1022-TOOL-02",),
}


def source_test(source: str) -> str:
    """tests/FILE::NAME of a recorded source ("tests/x.py::test_y[params]#0")."""
    return source.split("#")[0].split("[")[0]


def label_unlabelled(traces: list[dict]) -> None:
    """Give every trace without a rule id the rules of its source test's behaviour; fail loudly for
    one that has none, and for a BEHAVIOUR_RULES entry naming an unknown rule or no example."""
    from reference_impl.rules import RULES

    unknown = sorted({r for rules in BEHAVIOUR_RULES.values() for r in rules} - set(RULES))
    if unknown:
        raise SystemExit(f"error: BEHAVIOUR_RULES names unknown rule id(s) {unknown}")
    used: set[str] = set()
    for t in traces:
        if t["rules"]:
            continue
        test = source_test(t["source"])
        if test not in BEHAVIOUR_RULES:
            raise SystemExit(f"error: the example {t['id']} from {t['source']} carries no rule id: mark its "
                             f"test with @pytest.mark.rule or add it to BEHAVIOUR_RULES in {Path(__file__).name}")
        t["rules"] = sorted(BEHAVIOUR_RULES[test])
        used.add(test)
    stale = sorted(set(BEHAVIOUR_RULES) - used)
    if stale:
        raise SystemExit(f"error: BEHAVIOUR_RULES entries label no example (remove them): {stale}")


def _trace(rec: dict) -> dict:
    steps = rec["steps"]
    rules = {m[0] for m in rec["marks"]}
    for s in steps:
        out = s["expected"]
        if out.get("rule"):
            rules.add(out["rule"])
        for r in (out.get("results") or {}).values():
            if isinstance(r, dict) and r.get("rule"):
                rules.add(r["rule"])
    body = json.dumps([rec["profile"], [s["command"] for s in steps]], sort_keys=True)
    return {"format": "kfc-trace", "version": 1, "id": hashlib.sha256(body.encode()).hexdigest()[:16],
            "profile": rec["profile"], "source": rec["source"], "rules": sorted(rules), "steps": steps}


def coordinator_examples() -> list[dict]:
    """KIP-915 examples: records written by the newest software, loaded by each profile's loader."""
    sys.path.insert(0, str(ROOT))
    from reference_impl import Cluster, profile_names
    from reference_impl.coordinator import NewerWriter

    offsets = [{"key_type": 1, "key": {"group": "g", "topic": "t", "partition": p}, "version": v,
                "value": {"offset": 5 + p, "leaderEpoch": -1, "metadata": "", "commitTimestamp": 7}}
               for p, v in ((0, 3), (1, 4))]
    txns = [{"key_type": 0, "key": {"transactionalId": f"tx{v}"}, "version": v,
             "value": {"producerId": 1, "producerEpoch": 0, "transactionTimeoutMs": 60000, "transactionStatus": 0,
                       "transactionPartitions": None, "transactionLastUpdateTimestampMs": 1,
                       "transactionStartTimestampMs": 1}} for v in (0, 1)]
    out = []
    for reader in profile_names():
        for coordinator, logical in (("group", offsets), ("transaction", txns)):
            w = NewerWriter(profile_names()[-1], 7)
            variants = {
                "plain": w.write(coordinator, logical),
                "unknown tags and key types": w.write(coordinator, logical, unknown_tags=2, future_keys=1),
            }
            future = list(w.write(coordinator, logical))
            k, v = future[-1]
            assert v is not None
            future[-1] = (k, (9).to_bytes(2, "big") + v[2:])  # a value version no release knows
            variants["future value version"] = future
            variants["empty value buffer"] = [(future[0][0], b"")]
            loads = {}
            for name, raw in variants.items():
                recs = [{"key": k.hex(), "value": None if v is None else v.hex()} for k, v in raw]
                c = Cluster(reader)
                cmds: list[dict] = [{"op": "format"},
                                    {"op": "load_coordinator", "coordinator": coordinator, "records": recs}]
                loads[name] = [{"command": x, "expected": json.loads(json.dumps(c.apply(x)))} for x in cmds]
            # What the successful loads show (the failing ones carry their rule in the outcome):
            # unknown tags and key types are skipped; the plain records, at value versions this reader
            # knows, are read in their version's layout and accepted -- the check the future value
            # version fails (KIP915-LOAD-03 for the Scala readers, LOAD-04 for the new group coordinator).
            version_rule = loads["future value version"][-1]["expected"]["rule"]
            behaviour = {"plain": {"KIP915-CODEC-02", version_rule or "KIP915-LOAD-03"},
                         "unknown tags and key types": {"KIP915-LOAD-01", "KIP915-LOAD-02"}}
            if version_rule is None:
                # 4.3+ transaction loader: TransactionLog.read's UnknownValueVersion is logged and the record
                # ignored (TransactionStateManager.scala:507@4.3.0), never fatal
                ignored = loads["future value version"][-1]["expected"]
                assert coordinator == "transaction" and ignored["error"] == "NONE", (reader, ignored)
                assert "tx1" not in ignored["state"]["transactions"], (reader, ignored)
                behaviour["future value version"] = {"KIP915-LOAD-03"}
            for name, steps in loads.items():
                rules = behaviour.get(name, set())
                out.append({"source": f"kip915:{coordinator}:{name}:{reader}", "profile": reader,
                            "marks": [[r, "pass"] for r in sorted(rules)], "steps": steps})
    return out


def record() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.jsonl"
        env = {**os.environ, "KFC_RECORD_EXAMPLES": str(raw)}
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
               "tests/test_controller.py", "tests/test_kip1155.py", "tests/test_tools.py", "tests/test_fidelity.py",
               *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_kafka_cases_*.py"))]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-2000:])
            raise SystemExit("error: the project tests failed while recording; fix them first")
        seen: dict[str, dict] = {}
        lines = [json.loads(line) for line in raw.read_text().splitlines()] + coordinator_examples()
        for rec in lines:
            if not all(isinstance(s["command"], dict) and isinstance(s["command"].get("op"), str)
                       for s in rec["steps"]):
                continue  # not expressible in the wire contract (a command is an object with an "op")
            t = _trace(rec)
            if t["id"] in seen:  # the same command sequence from another test: merge the labels
                seen[t["id"]]["rules"] = sorted(set(seen[t["id"]]["rules"]) | set(t["rules"]))
            else:
                seen[t["id"]] = t
    label_unlabelled(list(seen.values()))
    return "".join(json.dumps(t, sort_keys=True) + "\n" for t in sorted(seen.values(), key=lambda t: t["id"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="fail if the committed examples are stale")
    args = ap.parse_args(argv)
    text = record()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"error: {OUT.relative_to(ROOT)} is stale; run python scripts/record_examples.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"{OUT.relative_to(ROOT)}: {text.count(chr(10))} examples")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
