"""Per-profile loaders of __consumer_offsets and __transaction_state, and the projection helper.

State is the replayed logical content (last write wins, a null value deletes), as plain JSON data:
  group:       {"offsets": {group: {topic: {"<partition>": value}}}, "groups": {group: value},
                "other": {"<key type>": {"<key hex>": "<value hex>"}}}   # known but unmodelled types
  transaction: {"transactions": {transactional id: value with "partitions": {topic: [ids]}}}
The records form one batch (as in Kafka's own loader tests).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .._errors import InputError
from ..data import fixtures
from ._codec import JavaError, Reader, schemas
from .rules import RULES

GROUP, TXN = "group", "transaction"
_KEY_SCHEMA = {GROUP: {0: "OffsetCommitKey", 1: "OffsetCommitKey", 2: "GroupMetadataKey"}, TXN: {0: "TransactionLogKey"}}
_VALUE_SCHEMA = {GROUP: {0: "OffsetCommitValue", 1: "OffsetCommitValue", 2: "GroupMetadataValue"},
                 TXN: {0: "TransactionLogValue"}}
_TXN_STATES = range(8)
_TV_LEVELS = range(3)
_EMPTY = 0


@functools.cache
def behaviour_doc() -> dict[str, Any]:
    return json.loads((fixtures() / "coordinator" / "behaviour.json").read_text())


def profile_names() -> list[str]:
    return list(behaviour_doc()["profile_order"])


def profile(name: str) -> dict[str, Any]:
    profiles = behaviour_doc()["profiles"]
    p = profiles.get(name)
    if p is None and name.count(".") == 2:
        # A patch profile (kafka-4.1.0): its coordinators are its minor release's (no patch changed them).
        p = profiles.get(name.rsplit(".", 1)[0])
    if p is None:
        raise InputError(f"Unknown profile '{name}'. Known profiles: {', '.join(profile_names())}")
    return p


@functools.cache
def known_tags(name: str) -> dict[str, frozenset[int]]:
    return {k: frozenset(v) for k, v in profile(name)["known_tags"].items()}


def loader_spec(name: str, coordinator: str, loader: str | None = None) -> dict[str, Any]:
    p = profile(name)
    if coordinator == TXN:
        if loader not in (None, "scala-txn"):
            raise InputError(f"{name} has no transaction loader '{loader}'")
        return p["transaction"]
    if coordinator != GROUP:
        raise InputError(f"Unknown coordinator '{coordinator}': expected 'group' or 'transaction'")
    loaders = p["group"]["loaders"]
    key = loader or p["group"]["default_loader"]
    if key not in loaders:
        raise InputError(f"{name} has no group loader '{key}'. Known: {', '.join(loaders)}")
    return loaders[key]


@dataclass
class LoadResult:
    profile: str
    coordinator: str
    loader: str
    state: dict[str, Any]
    skipped_unknown_keys: int = 0
    ignored_tagged_fields: int = 0
    message: str | None = None  # the fatal exception's message, None when the load succeeded
    rule: str | None = None
    log: list[str] = field(default_factory=list)  # warnings Kafka would log (one per skipped key)

    @property
    def ok(self) -> bool:
        return self.message is None

    def outcome(self) -> dict[str, Any]:
        return {
            "op": "load_coordinator",
            "error": "NONE" if self.ok else "UNKNOWN_SERVER_ERROR",
            "error_code": 0 if self.ok else -1,
            "message": self.message,
            "rule": self.rule,
            "state": self.state,
            "skipped_unknown_keys": self.skipped_unknown_keys,
            "ignored_tagged_fields": self.ignored_tagged_fields,
        }


class _Fatal(Exception):
    def __init__(self, message: str, rule: str):
        super().__init__(message)
        self.message, self.rule = message, rule


def _i16(b: bytes) -> int:
    v = (b[0] << 8) | b[1]
    return v - 0x10000 if v & 0x8000 else v


def _empty_state(coordinator: str) -> dict[str, Any]:
    return {"offsets": {}, "groups": {}, "other": {}} if coordinator == GROUP else {"transactions": {}}


def load(profile_name: str, coordinator: str, records: Iterable[tuple[bytes | None, bytes | None]],
         loader: str | None = None) -> LoadResult:
    """Replay `records` [(key bytes, value bytes or None)] the way `profile_name`'s loader would."""
    spec = loader_spec(profile_name, coordinator, loader)
    res = LoadResult(profile_name, coordinator, spec["loader"], _empty_state(coordinator))
    tp = behaviour_doc()["topic_partition"][coordinator]
    java = spec["loader"] == "java-coordinator"
    known = known_tags(profile_name)
    key_types = frozenset(spec["key_types"])
    saw_known_key = False
    try:
        for key, value in records:
            if key is None:
                raise _Fatal(spec["null_key_message"], "KIP915-LOAD-07")
            if len(key) < 2:
                raise _Fatal("Could not read version from key's buffer." if java else "java.nio.BufferUnderflowException",
                             "KIP915-CODEC-01")
            ktype = _i16(key)
            if ktype not in key_types:
                res.skipped_unknown_keys += 1
                res.log.append(spec["unknown_key_log"].format(type=ktype, tp=tp))
                continue
            saw_known_key = True
            kschema = _KEY_SCHEMA[coordinator].get(ktype)
            if kschema is None:  # known to this software, not modelled here: kept as opaque bytes
                if java and value is not None and len(value) < 2:
                    # The Java serde still reads the value's version first, whatever the record type
                    # (CoordinatorRecordSerde.readVersion: coordinator-common/.../CoordinatorRecordSerde.java:93-99@4.0.0,
                    # group/CoordinatorRecordSerde.java:106-112@3.9.0): an empty value fails the load.
                    raise _Fatal("Could not read version from value's buffer.", "KIP915-CODEC-01")
                other = res.state["other"].setdefault(str(ktype), {})
                if value is None:
                    other.pop(key.hex(), None)
                else:
                    other[key.hex()] = value.hex()
                continue
            # keys are read at version = type (OffsetCommitKey 0/1, GroupMetadataKey 2, TransactionLogKey 0)
            k = _read(java, "key", kschema, ktype, key, known, res)
            if value is None:
                _tombstone(res.state, coordinator, ktype, k)
                continue
            vschema = _VALUE_SCHEMA[coordinator][ktype]
            if len(value) < 2:
                raise _Fatal("Could not read version from value's buffer." if java else "java.nio.BufferUnderflowException",
                             "KIP915-CODEC-01")
            version = _i16(value)
            lo, hi = schemas()[vschema]["versions"]
            if not lo <= version <= hi:
                check = spec["unknown_value_version"]
                if check == "illegal-state":
                    msg = spec["unknown_value_version_messages"][vschema].format(version=version)
                    raise _Fatal(msg, "KIP915-LOAD-03")
                if check == "unknown-record-version":
                    msg = spec["unknown_value_version_messages"]["*"].format(version=version, type=ktype)
                    raise _Fatal(msg, "KIP915-LOAD-04")
                if check == "skip":
                    # 4.3+: TransactionLog.read gives UnknownValueVersion, which TransactionStateManager logs and
                    # ignores -- no tombstone (TransactionStateManager.scala:507@4.3.0, TransactionLogTest.java:321)
                    res.log.append(spec["unknown_value_log"].format(version=version, tp=tp))
                    continue
                # "none": the pre-4.0 Java serde reads on with whatever layout the version selects
            v = _read(java, "value", vschema, version, value, known, res)
            if coordinator == GROUP:
                _apply_group(res.state, ktype, k, v)
            else:
                _apply_txn(res.state, spec, k, v)
        if spec.get("stall_on_batch_without_known_key") and res.skipped_unknown_keys and not saw_known_key:
            # 3.7-3.9 TransactionStateManager advances its offset only after a known key: it re-reads forever
            raise _Fatal(f"Loading {tp} never completes: the batch holds no known key, so the loader never "
                         "advances its read offset (TransactionStateManager before 4.0)", "KIP915-LOAD-01")
    except _Fatal as f:
        res.message, res.rule = f.message, f.rule
        if spec["state_on_failure"] == "none":
            res.state = _empty_state(coordinator)
    return res


def _read(java: bool, side: str, schema: str, version: int, buf: bytes, known: dict[str, frozenset[int]],
          res: LoadResult) -> dict[str, Any]:
    r = Reader(buf, 2, known)
    try:
        out = r.struct(schema, version)
    except JavaError as e:
        if java:  # CoordinatorRecordSerde.readMessage wraps getMessage() (a null message prints as "null")
            raise _Fatal(f"Could not read record with version {version} from {side}'s buffer due to: "
                         f"{e.message if e.message is not None else 'null'}.", e.rule) from None
        raise _Fatal(e.text, e.rule) from None
    res.ignored_tagged_fields += r.unknown_tags  # trailing bytes after the message are never checked
    return out


def _tombstone(state: dict[str, Any], coordinator: str, ktype: int, k: dict[str, Any]) -> None:
    if coordinator == TXN:
        state["transactions"].pop(k["transactionalId"], None)
    elif ktype == 2:
        state["groups"].pop(k["group"], None)
    else:
        topics = state["offsets"].get(k["group"], {})
        parts = topics.get(k["topic"], {})
        parts.pop(str(k["partition"]), None)
        if not parts:
            topics.pop(k["topic"], None)
        if not topics:
            state["offsets"].pop(k["group"], None)


def _apply_group(state: dict[str, Any], ktype: int, k: dict[str, Any], v: dict[str, Any]) -> None:
    if ktype == 2:
        state["groups"][k["group"]] = v
    else:
        state["offsets"].setdefault(k["group"], {}).setdefault(k["topic"], {})[str(k["partition"])] = v


def _apply_txn(state: dict[str, Any], spec: dict[str, Any], k: dict[str, Any], v: dict[str, Any]) -> None:
    status = v["transactionStatus"]
    parts_in = v.pop("transactionPartitions")
    partitions: dict[str, list[int]] = {}
    for check in spec["value_check_order"]:
        if check == "state" and status not in _TXN_STATES:
            raise _Fatal(spec["unknown_transaction_state_message"].format(id=status), "KIP915-LOAD-05")
        if check == "client_transaction_version" and v["clientTransactionVersion"] not in _TV_LEVELS:
            raise _Fatal(spec["client_transaction_version_message"].format(level=v["clientTransactionVersion"]),
                         "KIP915-LOAD-06")
        if check == "partitions" and status != _EMPTY:  # an Empty transaction's partitions are ignored
            if parts_in is None:
                raise _Fatal("java.lang.NullPointerException", "KIP915-LOAD-08")
            for ps in parts_in:
                ids = partitions.setdefault(ps["topic"], [])
                ids.extend(ps["partitionIds"])
    v["partitions"] = {t: sorted(set(ids)) for t, ids in partitions.items()}
    state["transactions"][k["transactionalId"]] = v


# -------------------------------------------------------------------------------------------- projection

def _unknown_tag_names(profile_name: str) -> dict[str, set[str]]:
    kt = known_tags(profile_name)
    return {s: {t["name"] for t in d.get("tagged", []) if t["tag"] not in kt.get(s, frozenset())}
            for s, d in schemas().items()}


def project(state: dict[str, Any], coordinator: str, older_profile: str, loader: str | None = None) -> dict[str, Any]:
    """Restrict a (newer) loader's state to what `older_profile`'s loader can know: drop tagged fields
    it does not know and key types it skips."""
    drop = _unknown_tag_names(older_profile)
    if coordinator == TXN:
        gone = drop["TransactionLogValue"]
        return {"transactions": {tid: {f: x for f, x in v.items() if f not in gone}
                                 for tid, v in state["transactions"].items()}}
    types = set(loader_spec(older_profile, GROUP, loader)["key_types"])
    oc, gv, mm = drop["OffsetCommitValue"], drop["GroupMetadataValue"], drop["MemberMetadata"]

    def group_value(v: dict[str, Any]) -> dict[str, Any]:
        out = {f: x for f, x in v.items() if f not in gv}
        out["members"] = [{f: x for f, x in m.items() if f not in mm} for m in v["members"]]
        return out

    offsets = {}
    if types & {0, 1}:
        offsets = {g: {t: {p: {f: x for f, x in v.items() if f not in oc} for p, v in parts.items()}
                       for t, parts in topics.items()} for g, topics in state["offsets"].items()}
    return {
        "offsets": offsets,
        "groups": {g: group_value(v) for g, v in state["groups"].items()} if 2 in types else {},
        "other": {t: dict(kv) for t, kv in state["other"].items() if int(t) in types},
    }


# ---------------------------------------------------------------------------------------- plain data op

def load_coordinator(profile_name: str, command: dict[str, Any]) -> dict[str, Any]:
    """The suite's plain-data operation: {"op": "load_coordinator", "coordinator", "records", ["loader"]}."""
    coordinator = command.get("coordinator")
    if coordinator not in (GROUP, TXN):
        raise InputError(f"load_coordinator: unknown coordinator {coordinator!r}: expected 'group' or 'transaction'")
    recs = command.get("records")
    if not isinstance(recs, list):
        raise InputError("load_coordinator: 'records' must be a list of {\"key\": hex, \"value\": hex|null}")
    pairs = []
    for i, r in enumerate(recs):
        try:
            k, v = r.get("key"), r.get("value")
            pairs.append((None if k is None else bytes.fromhex(k), None if v is None else bytes.fromhex(v)))
        except (AttributeError, TypeError, ValueError):
            raise InputError(f"load_coordinator: record {i} is not {{\"key\": hex, \"value\": hex|null}}") from None
    res = load(profile_name, coordinator, pairs, command.get("loader"))
    assert res.rule is None or res.rule in RULES
    return res.outcome()
