"""KIP-915 coordinator records: codec vectors, round trips, per-profile loading and the downgrade property."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_impl.coordinator import (
    RULES,
    JavaError,
    NewerWriter,
    decode,
    encode,
    encode_records,
    load,
    load_command,
    load_coordinator,
    profile_names,
    project,
)
from reference_impl.coordinator._codec import schemas, uvarint
from reference_impl.coordinator._loader import known_tags, profile

PROFILES = profile_names()
ORDER = {p: i for i, p in enumerate(PROFILES)}
# 4.3 and kip-1155 behave as 4.2, so they are "newer or equal" to everything up to 4.2
PAIRS = [(w, r) for w in PROFILES for r in PROFILES if ORDER[r] <= ORDER[w]]
ALL = None  # writer that knows every tag
H = bytes.fromhex


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def cmd(coordinator: str, pairs: list[tuple[bytes | None, bytes | None]], **kw) -> dict:
    return {"op": "load_coordinator", "coordinator": coordinator,
            "records": [{"key": None if k is None else k.hex(), "value": None if v is None else v.hex()}
                        for k, v in pairs], **kw}


OC_KEY = {"group": "g", "topic": "t", "partition": 0}
OC_V3 = {"offset": 5, "leaderEpoch": 1, "metadata": "m", "commitTimestamp": 9}
MEMBER = {"memberId": "m1", "groupInstanceId": None, "clientId": "c", "clientHost": "h", "rebalanceTimeout": 7,
          "sessionTimeout": 8, "subscription": "aa", "assignment": ""}
GM_V4 = {"protocolType": "consumer", "generation": 1, "protocol": "range", "leader": "m1",
         "currentStateTimestamp": 5, "members": [MEMBER]}
TX_V0 = {"producerId": 7, "producerEpoch": 1, "transactionTimeoutMs": 1000, "transactionStatus": 1,
         "transactionPartitions": [{"topic": "t", "partitionIds": [0, 2]}],
         "transactionLastUpdateTimestampMs": 11, "transactionStartTimestampMs": 10}

# ------------------------------------------------------------------------------- hand-derived vectors
# Each hex string below was derived by hand from schemas.json: int16 prefix, then fields in order;
# non-flexible strings = int16 length + UTF-8, arrays/bytes = int32 length; flexible = uvarint(len+1)
# and a tagged-field section (uvarint count, then uvarint tag, uvarint size, payload) after each struct.
VECTORS = [
    ("OffsetCommitKey", 1, OC_KEY, ("0001" "67" "0001" "74" "00000000"), "0001"),
    ("OffsetCommitKey", 0, OC_KEY, ("0001" "67" "0001" "74" "00000000"), "0000"),
    ("GroupMetadataKey", 2, {"group": "g"}, ("0001" "67"), "0002"),
    ("TransactionLogKey", 0, {"transactionalId": "tx"}, ("0002" "7478"), "0000"),
    ("OffsetCommitValue", 3, OC_V3, ("0000000000000005" "00000001" "0001" "6d" "0000000000000009"), "0003"),
    ("OffsetCommitValue", 1, {"offset": 5, "metadata": "", "commitTimestamp": 9, "expireTimestamp": 10},
     ("0000000000000005" "0000" "0000000000000009" "000000000000000a"), "0001"),
    ("OffsetCommitValue", 4, {"offset": 5, "leaderEpoch": -1, "metadata": "", "commitTimestamp": 9},
     ("0000000000000005" "ffffffff" "01" "0000000000000009" "00"), "0004"),
    ("OffsetCommitValue", 4, {"offset": 5, "leaderEpoch": -1, "metadata": "", "commitTimestamp": 9,
                              "topicId": "11" * 16},
     "0000000000000005" "ffffffff" "01" "0000000000000009" "01" "00" "10" + "11" * 16, "0004"),
    ("GroupMetadataValue", 0, {"protocolType": "c", "generation": 1, "protocol": None, "leader": None, "members": []},
     ("0001" "63" "00000001" "ffff" "ffff" "00000000"), "0000"),
    ("GroupMetadataValue", 4, GM_V4,
     ("09" "636f6e73756d6572" "00000001" "06" "72616e6765" "03" "6d31" "0000000000000005"
     "02"  # one member
     "03" "6d31" "00" "02" "63" "02" "68" "00000007" "00000008" "02" "aa" "01" "00"  # member + its tag section
     "00"), "0004"),
    ("TransactionLogValue", 0, TX_V0,
     ("0000000000000007" "0001" "000003e8" "01" "00000001" "0001" "74" "00000002" "00000000" "00000002"
     "000000000000000b" "000000000000000a"), "0000"),
    ("TransactionLogValue", 1, {**TX_V0, "clientTransactionVersion": 2},
     ("0000000000000007" "0001" "000003e8" "01" "02" "02" "74" "03" "00000000" "00000002" "00"
     "000000000000000b" "000000000000000a" "01" "02" "02" "0002"), "0001"),
]


def full(schema: str, version: int, obj: dict) -> dict:
    """obj with the defaults a reader fills in (absent fields, tags left at their default)."""
    out = dict(obj)
    s = schemas()[schema]
    for f in s["fields"]:
        out.setdefault(f["name"], f.get("default"))
        if f["type"].startswith("[") and out[f["name"]] and f["type"].rstrip("?")[1:-1] in schemas():
            out[f["name"]] = [full(f["type"].rstrip("?")[1:-1], version, e) for e in out[f["name"]]]
    for t in s.get("tagged", []):
        out.setdefault(t["name"], t["default"])
    return out


@pytest.mark.parametrize("schema,version,obj,body,prefix", VECTORS)
def test_hand_vectors(schema, version, obj, body, prefix):
    assert encode(schema, version, obj).hex() == body
    assert decode(schema, version, H(body)) == full(schema, version, obj)
    assert prefix == i16(version).hex()


def test_framing_of_records_and_tombstones():
    out = encode_records("group", [{"key_type": 1, "key": OC_KEY, "version": 3, "value": OC_V3},
                                   {"key_type": 1, "key": OC_KEY, "value": None}])
    assert out[0] == {"key": "0001" "0001" "67" "0001" "74" "00000000",
                      "value": "0003" "0000000000000005" "00000001" "0001" "6d" "0000000000000009"}
    assert out[1]["value"] is None


def test_older_writer_omits_tags_it_does_not_know():
    rec = {"key_type": 1, "key": OC_KEY, "version": 4,
           "value": {"offset": 5, "leaderEpoch": -1, "metadata": "", "commitTimestamp": 9, "topicId": "11" * 16}}
    v40 = encode_records("group", [rec], profile="kafka-4.0")[0]["value"]
    v41 = encode_records("group", [rec], profile="kafka-4.1")[0]["value"]
    assert v40.endswith("0000000000000009" "00") and v41.endswith("01" "00" "10" + "11" * 16)


def test_writer_refuses_what_the_version_cannot_carry():
    with pytest.raises(ValueError, match="non-default expireTimestamp at version 3"):
        encode("OffsetCommitValue", 3, {**OC_V3, "expireTimestamp": 5})
    with pytest.raises(ValueError, match="Tagged fields were set, but version 3"):
        encode("OffsetCommitValue", 3, {**OC_V3, "topicId": "22" * 16})


# ----------------------------------------------------------------------------------- strategies

i8 = st.integers(-128, 127)
i16s = st.integers(-(2 ** 15), 2 ** 15 - 1)
i32 = st.integers(-(2 ** 31), 2 ** 31 - 1)
i64 = st.integers(-(2 ** 63), 2 ** 63 - 1)
text = st.text(max_size=6)
hexb = st.binary(max_size=6).map(bytes.hex)
uuid = st.binary(min_size=16, max_size=16).map(bytes.hex)

member = st.fixed_dictionaries({
    "memberId": text, "groupInstanceId": st.none() | text, "clientId": text, "clientHost": text,
    "rebalanceTimeout": i32, "sessionTimeout": i32, "subscription": hexb, "assignment": hexb})


def fit(schema: str, version: int, obj: dict) -> dict:
    """Reset fields (and tags) the version cannot carry to their defaults."""
    s = schemas()[schema]
    lo, hi = s["versions"]
    out = dict(obj)
    for f in s["fields"]:
        since, until = f.get("since", lo), f.get("until", hi)
        if not since <= version <= until:
            out[f["name"]] = f.get("default")
        sub = f["type"].rstrip("?")[1:-1] if f["type"].startswith("[") else None
        if sub in schemas() and out[f["name"]]:
            out[f["name"]] = [fit(sub, version, e) for e in out[f["name"]]]
    fx = s["flexible_from"]
    for t in s.get("tagged", []):
        if fx is None or version < fx:
            out[t["name"]] = t["default"]
    return out


@st.composite
def offset_record(draw, groups=("g1", "g2"), topics=("t1", "t2")):
    key = {"group": draw(st.sampled_from(groups)), "topic": draw(st.sampled_from(topics)),
           "partition": draw(st.integers(0, 3))}
    kt = draw(st.sampled_from([0, 1]))
    if draw(st.integers(0, 9)) == 0:
        return {"key_type": kt, "key": key, "value": None}
    version = draw(st.integers(0, 4))
    v = {"offset": draw(i64), "leaderEpoch": draw(i32), "metadata": draw(text), "commitTimestamp": draw(i64),
         "expireTimestamp": draw(i64), "topicId": draw(st.just("0" * 32) | uuid)}
    return {"key_type": kt, "key": key, "version": version, "value": fit("OffsetCommitValue", version, v)}


@st.composite
def group_record(draw):
    key = {"group": draw(st.sampled_from(["g1", "g2", "g3"]))}
    if draw(st.integers(0, 9)) == 0:
        return {"key_type": 2, "key": key, "value": None}
    version = draw(st.integers(0, 4))
    v = {"protocolType": draw(text), "generation": draw(i32), "protocol": draw(st.none() | text),
         "leader": draw(st.none() | text), "currentStateTimestamp": draw(i64),
         "members": draw(st.lists(member, max_size=3))}
    return {"key_type": 2, "key": key, "version": version, "value": fit("GroupMetadataValue", version, v)}


@st.composite
def txn_record(draw):
    key = {"transactionalId": draw(st.sampled_from(["a", "b", "c"]))}
    if draw(st.integers(0, 9)) == 0:
        return {"key_type": 0, "key": key, "value": None}
    version = draw(st.integers(0, 1))
    status = draw(st.integers(0, 7))
    parts = draw(st.lists(st.fixed_dictionaries({"topic": text, "partitionIds": st.lists(i32, max_size=3)}),
                          max_size=3))
    v = {"producerId": draw(i64), "producerEpoch": draw(i16s), "transactionTimeoutMs": draw(i32),
         "transactionStatus": status, "transactionPartitions": None if status == 0 and draw(st.booleans()) else parts,
         "transactionLastUpdateTimestampMs": draw(i64), "transactionStartTimestampMs": draw(i64),
         "previousProducerId": draw(i64), "nextProducerId": draw(i64),
         "clientTransactionVersion": draw(st.integers(0, 2)), "nextProducerEpoch": draw(i16s)}
    return {"key_type": 0, "key": key, "version": version, "value": fit("TransactionLogValue", version, v)}


VALUE_STRATEGY = {"OffsetCommitValue": offset_record(), "GroupMetadataValue": group_record(),
                  "TransactionLogValue": txn_record()}


# ---------------------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("schema", sorted(VALUE_STRATEGY))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_round_trip_every_version(schema, data):
    rec = data.draw(VALUE_STRATEGY[schema])
    if rec["value"] is None:
        return
    body = encode(schema, rec["version"], rec["value"])
    assert decode(schema, rec["version"], body) == full(schema, rec["version"], rec["value"])


@settings(max_examples=60, deadline=None)
@given(key=st.fixed_dictionaries({"group": text, "topic": text, "partition": i32}), kt=st.sampled_from([0, 1]))
def test_round_trip_keys(key, kt):
    assert decode("OffsetCommitKey", kt, encode("OffsetCommitKey", kt, key)) == key


def test_unknown_tags_round_trip_verbatim():
    v = {**OC_V3, "leaderEpoch": -1, "_unknown_tags": [[5000, "abcd"], [7, ""]]}
    body = encode("OffsetCommitValue", 4, v)
    assert body.hex().endswith("02" "07" "00" + "8827" "02" "abcd")  # sorted by tag, uvarint tag/size
    assert decode("OffsetCommitValue", 4, body)["_unknown_tags"] == [[7, ""], [5000, "abcd"]]


# --------------------------------------------------------------------------- downgrade property (KIP-915)

@pytest.mark.parametrize("writer,reader", PAIRS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=st.lists(st.one_of(offset_record(), group_record()), max_size=8),
       seed=st.integers(0, 2 ** 32), tags=st.integers(0, 3), future=st.integers(0, 2), opaque=st.integers(0, 2))
def test_projection_property_group(writer, reader, recs, seed, tags, future, opaque):
    w = NewerWriter(writer, seed)
    recs = recs + [r for r in (w.opaque_known_key() for _ in range(opaque)) if r is not None]
    pairs = w.write("group", recs, unknown_tags=tags, future_keys=future)
    newer, older = load(writer, "group", pairs), load(reader, "group", pairs)
    assert newer.ok and older.ok, (newer.message, older.message)
    assert older.state == project(newer.state, "group", reader)
    assert older.skipped_unknown_keys >= newer.skipped_unknown_keys >= future
    assert older.ignored_tagged_fields >= newer.ignored_tagged_fields


@pytest.mark.parametrize("writer,reader", PAIRS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=st.lists(txn_record(), min_size=1, max_size=8), seed=st.integers(0, 2 ** 32),
       tags=st.integers(0, 3), future=st.integers(0, 2))
def test_projection_property_transaction(writer, reader, recs, seed, tags, future):
    pairs = NewerWriter(writer, seed).write("transaction", recs, unknown_tags=tags, future_keys=future)
    newer, older = load(writer, "transaction", pairs), load(reader, "transaction", pairs)
    assert newer.ok and older.ok, (newer.message, older.message)
    assert older.state == project(newer.state, "transaction", reader)


def test_projection_drops_exactly_the_newer_tags():
    rec = {"key_type": 0, "key": {"transactionalId": "a"}, "version": 1,
           "value": {**TX_V0, "previousProducerId": 3, "nextProducerId": 4, "clientTransactionVersion": 2,
                     "nextProducerEpoch": 5}}
    pairs = NewerWriter("kafka-4.2").write("transaction", [rec])
    s42 = load("kafka-4.2", "transaction", pairs).state
    assert s42["transactions"]["a"]["nextProducerEpoch"] == 5
    s40 = load("kafka-4.0", "transaction", pairs)
    assert s40.ignored_tagged_fields == 1 and "nextProducerEpoch" not in s40.state["transactions"]["a"]
    s37 = load("kafka-3.7", "transaction", pairs)
    assert s37.ignored_tagged_fields == 4 and s37.state == project(s42, "transaction", "kafka-3.7")
    assert s37.state["transactions"]["a"]["partitions"] == {"t": [0, 2]}


# ---------------------------------------------------------------------------- unknown key types (LOAD-01)

FUTURE_KEY = i16(4242) + b"\x00\x01x"


@pytest.mark.rule("KIP915-LOAD-01", "pass")
@pytest.mark.parametrize("name", PROFILES)
def test_unknown_key_types_skipped_and_counted(name):
    oc = (i16(1) + encode("OffsetCommitKey", 1, OC_KEY), i16(3) + encode("OffsetCommitValue", 3, OC_V3))
    out = load_coordinator(name, cmd("group", [(FUTURE_KEY, b"zz"), oc, (i16(-1), None)]))
    assert out["error"] == "NONE" and out["rule"] is None and out["skipped_unknown_keys"] == 2
    assert out["state"]["offsets"]["g"]["t"]["0"]["offset"] == 5
    tx = (i16(0) + encode("TransactionLogKey", 0, {"transactionalId": "a"}), i16(0) + encode("TransactionLogValue", 0, TX_V0))
    out = load_coordinator(name, cmd("transaction", [(FUTURE_KEY, None), tx]))
    assert out["error"] == "NONE" and out["skipped_unknown_keys"] == 1 and "a" in out["state"]["transactions"]


def test_unknown_key_log_lines():
    r = load("kafka-3.9", "group", [(FUTURE_KEY, None)])
    assert r.log == [("Unknown message key with version 4242 while loading offsets and group metadata from "
                     "__consumer_offsets-0. Ignoring it. It could be a left over from an aborted upgrade.")]
    r = load("kafka-4.2", "group", [(FUTURE_KEY, None)])
    assert r.log == [("Unknown record type 4242 while loading offsets and group metadata from "
                     "__consumer_offsets-0. Ignoring it. It could be a left over from an aborted upgrade.")]
    r = load("kafka-4.2", "transaction", [(FUTURE_KEY, None)])
    assert r.ok and r.log[0].startswith("Unknown message key with version 4242 while loading transaction state")


@pytest.mark.parametrize("name,loader,known", [
    ("kafka-3.7", None, {0, 1, 2}), ("kafka-3.7", "java-coordinator", set(range(9))),
    ("kafka-4.0", None, set(range(17))), ("kafka-4.0", "scala-gmm", {0, 1, 2}),
    ("kafka-4.1", None, set(range(24)) - {9, 18}), ("kafka-4.2", None, set(range(24)) - {9, 18}),
])
def test_key_types_known_per_loader(name, loader, known):
    pairs = [(i16(t) + b"\x00\x01x", None) for t in range(3, 30)]
    r = load(name, "group", pairs, loader)
    assert r.ok and r.skipped_unknown_keys == len(set(range(3, 30)) - known)


@pytest.mark.rule("KIP915-LOAD-01", "fail")
@pytest.mark.parametrize("name", ["kafka-3.7", "kafka-3.8", "kafka-3.9"])
def test_3x_transaction_loader_stalls_on_batch_without_known_key(name):
    out = load_coordinator(name, cmd("transaction", [(FUTURE_KEY, None)]))
    assert out["error"] == "UNKNOWN_SERVER_ERROR" and out["error_code"] == -1 and out["rule"] == "KIP915-LOAD-01"
    assert load_coordinator("kafka-4.0", cmd("transaction", [(FUTURE_KEY, None)]))["error"] == "NONE"


# ------------------------------------------------------------------------- unknown tagged fields (LOAD-02)

@pytest.mark.rule("KIP915-LOAD-02", "pass")
@pytest.mark.parametrize("name", PROFILES)
def test_unknown_tagged_fields_ignored(name):
    # testDeserializeFutureOffsetCommitValue & co.: highest version plus tags nobody knows
    v = {**GM_V4, "members": [{**MEMBER, "_unknown_tags": [[4000, "01"]]}], "_unknown_tags": [[4001, "0203"]]}
    pairs = [(i16(2) + encode("GroupMetadataKey", 2, {"group": "g"}), i16(4) + encode("GroupMetadataValue", 4, v))]
    out = load_coordinator(name, cmd("group", pairs))
    assert out["error"] == "NONE" and out["ignored_tagged_fields"] == 2
    assert out["state"]["groups"]["g"] == full("GroupMetadataValue", 4, GM_V4)


@pytest.mark.rule("KIP915-LOAD-02", "fail")
def test_unknown_tag_size_past_buffer_fails():
    body = encode("OffsetCommitValue", 4, {**OC_V3, "leaderEpoch": -1})[:-1] + H("01" "e807" "05" "aa")
    pairs = [(i16(1) + encode("OffsetCommitKey", 1, OC_KEY), i16(4) + body)]
    out = load_coordinator("kafka-4.2", cmd("group", pairs))
    assert out["rule"] == "KIP915-LOAD-02"
    assert out["message"] == ("Could not read record with version 4 from value's buffer due to: "
                              "Error reading byte array of 5 byte(s): only 1 byte(s) available.")
    out = load_coordinator("kafka-3.7", cmd("group", pairs))
    assert out["message"] == "Error reading byte array of 5 byte(s): only 1 byte(s) available"


# ----------------------------------------------------------------------- unknown value versions (03, 04)

def _oc(version: int, body: bytes | None = None) -> list[tuple[bytes, bytes]]:
    return [(i16(1) + encode("OffsetCommitKey", 1, OC_KEY),
             i16(version) + (body if body is not None else encode("OffsetCommitValue", 4, {**OC_V3})))]


@pytest.mark.rule("KIP915-LOAD-03", "pass")
@pytest.mark.rule("KIP915-LOAD-04", "pass")
@pytest.mark.parametrize("name", PROFILES)
def test_known_value_versions_load(name):
    assert load_coordinator(name, cmd("group", _oc(4)))["error"] == "NONE"


@pytest.mark.rule("KIP915-LOAD-03", "fail")
@pytest.mark.parametrize("name,loader", [("kafka-3.7", None), ("kafka-3.9", None), ("kafka-4.0", "scala-gmm")])
def test_scala_group_loader_rejects_unknown_value_version(name, loader):
    out = load_coordinator(name, cmd("group", _oc(5), loader=loader))
    assert (out["rule"], out["message"]) == ("KIP915-LOAD-03", "Unknown offset message version: 5")
    gm = [(i16(2) + encode("GroupMetadataKey", 2, {"group": "g"}), i16(-32768))]
    assert load_coordinator(name, cmd("group", gm, loader=loader))["message"] == \
        "Unknown group metadata message version: -32768"


TXN_SKIPS_UNKNOWN_VALUE = ("kafka-4.3", "kafka-4.4", "kip-1155")


@pytest.mark.rule("KIP915-LOAD-03", "fail")
@pytest.mark.parametrize("name", [p for p in PROFILES if p not in TXN_SKIPS_UNKNOWN_VALUE])
def test_transaction_loader_rejects_unknown_value_version(name):
    tx = [(i16(0) + encode("TransactionLogKey", 0, {"transactionalId": "a"}), i16(2) + b"\x00" * 40)]
    out = load_coordinator(name, cmd("transaction", tx))
    assert (out["rule"], out["message"]) == ("KIP915-LOAD-03", "Unknown version 2 from the transaction log message value")


@pytest.mark.parametrize("name", TXN_SKIPS_UNKNOWN_VALUE)
def test_transaction_loader_ignores_unknown_value_version_from_4_3(name):
    # TransactionLog.read -> UnknownValueVersion, logged and ignored (TransactionStateManager.scala:507@4.3.0)
    key = i16(0) + encode("TransactionLogKey", 0, {"transactionalId": "a"})
    tx = [(key, i16(0) + encode("TransactionLogValue", 0, {**TX_V0, "producerId": 3})), (key, i16(2) + b"\x00" * 40)]
    out = load_coordinator(name, cmd("transaction", tx))
    assert out["error"] == "NONE" and out["state"]["transactions"]["a"]["producerId"] == 3, out


@pytest.mark.rule("KIP915-LOAD-04", "fail")
@pytest.mark.parametrize("name", ["kafka-4.0", "kafka-4.1", "kafka-4.2", "kafka-4.3", "kip-1155"])
def test_new_group_coordinator_rejects_unknown_value_version_from_4_0(name):
    out = load_coordinator(name, cmd("group", _oc(5)))
    assert (out["rule"], out["message"]) == ("KIP915-LOAD-04", "Found an unknown record version 5 for 1 type")
    assert out["state"] == {"offsets": {}, "groups": {}, "other": {}}


@pytest.mark.parametrize("name", ["kafka-3.7", "kafka-3.8", "kafka-3.9"])
def test_new_group_coordinator_before_4_0_reads_higher_versions_as_newest(name):
    # the KIP text's "read unknown versions as the highest": only the opt-in 3.x Java coordinator does it
    out = load_coordinator(name, cmd("group", _oc(7), loader="java-coordinator"))
    assert out["error"] == "NONE" and out["state"]["offsets"]["g"]["t"]["0"]["offset"] == 5
    # a version below 0 reads the version-0 layout; the v4 bytes then underflow
    out = load_coordinator(name, cmd("group", _oc(-1), loader="java-coordinator"))
    assert out["error"] == "NONE"  # v0 layout = offset, metadata, commitTimestamp; extra bytes are ignored


# -------------------------------------------------------------------- empty and garbage buffers (CODEC)

@pytest.mark.rule("KIP915-CODEC-01", "pass")
@pytest.mark.rule("KIP915-CODEC-02", "pass")
@pytest.mark.rule("KIP915-CODEC-03", "pass")
@pytest.mark.parametrize("name", PROFILES)
def test_well_formed_buffers_load(name):
    assert load_coordinator(name, load_command("group", [{"key_type": 1, "key": OC_KEY, "version": 3, "value": OC_V3}]))[
        "error"] == "NONE"


@pytest.mark.rule("KIP915-CODEC-01", "fail")
@pytest.mark.parametrize("name,coord,pairs,java,scala", [
    ("x", "group", [(b"", None)], "Could not read version from key's buffer.", "java.nio.BufferUnderflowException"),
    ("x", "group", [(b"\x00", None)], "Could not read version from key's buffer.", "java.nio.BufferUnderflowException"),
    ("x", "group", [(i16(1) + encode("OffsetCommitKey", 1, OC_KEY), b"")],
     "Could not read version from value's buffer.", "java.nio.BufferUnderflowException"),
])
def test_empty_buffers(name, coord, pairs, java, scala):
    assert load_coordinator("kafka-4.2", cmd(coord, pairs))["message"] == java
    assert load_coordinator("kafka-3.7", cmd(coord, pairs, loader="java-coordinator"))["message"] == java
    out = load_coordinator("kafka-3.7", cmd(coord, pairs))
    assert (out["message"], out["rule"]) == (scala, "KIP915-CODEC-01")
    assert load_coordinator("kafka-4.2", cmd("transaction", [(b"", None)]))["message"] == scala


@pytest.mark.rule("KIP915-CODEC-02", "fail")
def test_garbage_bodies():
    trunc = [(i16(1) + H("0001" "67" "0005" "74"), None)]
    out = load_coordinator("kafka-4.2", cmd("group", trunc))
    assert (out["rule"], out["message"]) == ("KIP915-CODEC-02", ("Could not read record with version 1 from key's "
                                             "buffer due to: Error reading byte array of 5 byte(s): only 1 byte(s) available."))
    out = load_coordinator("kafka-4.2", cmd("group", [(i16(1) + H("0001" "67" "0001" "74" "0000"), None)]))
    assert out["message"] == "Could not read record with version 1 from key's buffer due to: null."
    assert load_coordinator("kafka-3.8", cmd("group", [(i16(1) + H("0001" "67" "0001" "74"), None)]))[
        "message"] == "java.nio.BufferUnderflowException"
    long = [(i16(2) + H("8000"), None)]
    assert load_coordinator("kafka-3.8", cmd("group", long))["message"] == "non-nullable field group was serialized as null"
    varint = _oc(4, H("0000000000000005" "ffffffff" "ffffffffff"))
    assert load_coordinator("kafka-4.1", cmd("group", varint))["message"] == (
        "Could not read record with version 4 from value's buffer due to: Varint is too long, the most significant "
        "bit in the 5th byte is set, converted value: ffffffff.")
    arr = [(i16(2) + encode("GroupMetadataKey", 2, {"group": "g"}),
            i16(3) + H("0001" "63" "00000001" "ffff" "ffff" "0000000000000000" "00000009"))]
    assert load_coordinator("kafka-3.9", cmd("group", arr))["message"] == \
        "Tried to allocate a collection of size 9, but there are only 0 bytes remaining."


def test_string_length_limit_and_garbage_tx_keeps_partial_state():
    tx_ok = (i16(0) + encode("TransactionLogKey", 0, {"transactionalId": "a"}), i16(0) + encode("TransactionLogValue", 0, TX_V0))
    bad = (i16(0) + H("7fff"), None)
    out = load_coordinator("kafka-4.2", cmd("transaction", [tx_ok, bad]))
    assert out["rule"] == "KIP915-CODEC-02" and out["message"] == "Error reading byte array of 32767 byte(s): only 0 byte(s) available"
    assert "a" in out["state"]["transactions"]  # TransactionStateManager keeps what it loaded before the error
    flex = _oc(4, H("0000000000000005" "ffffffff" "ffff03"))  # compact length 65534 > 0x7fff
    assert load_coordinator("kafka-3.7", cmd("group", flex))["message"] == "string field metadata had invalid length 65534"


@pytest.mark.rule("KIP915-CODEC-03", "fail")
def test_null_in_non_nullable_field():
    body = H("0000000000000005" "00000001" "ffff" "0000000000000009")
    out = load_coordinator("kafka-4.0", cmd("group", _oc(3, body)))
    assert (out["rule"], out["message"]) == ("KIP915-CODEC-03", ("Could not read record with version 3 from value's "
                                             "buffer due to: non-nullable field metadata was serialized as null."))


# ------------------------------------------------------------------------------ transaction checks

def _tx(value: dict, version: int = 1, known=None) -> list[tuple[bytes, bytes]]:
    k = i16(0) + encode("TransactionLogKey", 0, {"transactionalId": "a"})
    return [(k, i16(version) + encode("TransactionLogValue", version, value, known))]


@pytest.mark.rule("KIP915-LOAD-05", "pass")
@pytest.mark.rule("KIP915-LOAD-06", "pass")
@pytest.mark.rule("KIP915-LOAD-08", "pass")
@pytest.mark.parametrize("name", PROFILES)
def test_valid_transactions_load(name):
    out = load_coordinator(name, cmd("transaction", _tx({**TX_V0, "clientTransactionVersion": 2})))
    assert out["error"] == "NONE" and out["state"]["transactions"]["a"]["partitions"] == {"t": [0, 2]}
    empty = {**TX_V0, "transactionStatus": 0, "transactionPartitions": None}
    assert load_coordinator(name, cmd("transaction", _tx(empty)))["state"]["transactions"]["a"]["partitions"] == {}


@pytest.mark.rule("KIP915-LOAD-05", "fail")
@pytest.mark.parametrize("name", PROFILES)
def test_unknown_transaction_state(name):
    out = load_coordinator(name, cmd("transaction", _tx({**TX_V0, "transactionStatus": 9})))
    assert (out["rule"], out["message"]) == ("KIP915-LOAD-05", "Unknown transaction state id 9 from the transaction status message")


@pytest.mark.rule("KIP915-LOAD-06", "fail")
def test_client_transaction_version_checked_from_4_0():
    pairs = _tx({**TX_V0, "clientTransactionVersion": 3})
    for name in PROFILES:
        out = load_coordinator(name, cmd("transaction", pairs))
        if name.startswith("kafka-3"):
            assert out["error"] == "NONE" and out["ignored_tagged_fields"] == 1
        else:
            assert (out["rule"], out["message"]) == ("KIP915-LOAD-06", "No feature:transaction.version with feature level 3")


@pytest.mark.rule("KIP915-LOAD-08", "fail")
def test_null_partitions_of_a_live_transaction():
    pairs = _tx({**TX_V0, "transactionPartitions": None, "clientTransactionVersion": 3})
    assert load_coordinator("kafka-3.9", cmd("transaction", pairs))["rule"] == "KIP915-LOAD-08"
    assert load_coordinator("kafka-4.1", cmd("transaction", pairs))["rule"] == "KIP915-LOAD-06"  # TV checked first
    assert load_coordinator("kafka-4.2", cmd("transaction", pairs))["rule"] == "KIP915-LOAD-08"  # partitions first


@pytest.mark.rule("KIP915-LOAD-07", "pass")
@pytest.mark.rule("KIP915-LOAD-07", "fail")
def test_null_key():
    assert load_coordinator("kafka-4.2", cmd("group", _oc(4)))["error"] == "NONE"
    out = load_coordinator("kafka-3.7", cmd("group", [(None, None)]))
    assert (out["rule"], out["message"]) == ("KIP915-LOAD-07", "requirement failed: Group metadata/offset entry key should not be null")
    out = load_coordinator("kafka-4.2", cmd("transaction", [(None, None)]))
    assert out["message"] == "requirement failed: Transaction state log's key should not be null"


# ------------------------------------------------------------------------------- data and plumbing

def test_every_rule_listed_once_and_profiles_complete():
    assert all(r.startswith(("KIP915-LOAD-", "KIP915-CODEC-")) for r in RULES)
    assert PROFILES == ["kafka-3.7", "kafka-3.8", "kafka-3.9", "kafka-4.0", "kafka-4.1", "kafka-4.2", "kafka-4.3", "kafka-4.4",
                        "kip-1155"]
    # 4.3 = 4.2 but for the transaction loader's unknown value versions (TransactionLog.read, 4.3.0)
    p42, p43 = profile("kafka-4.2"), profile("kafka-4.3")
    assert p43 == {**p42, "release": "4.3", "evidence": p43["evidence"], "transaction": p43["transaction"]}
    changed = {k for k in {*p42["transaction"], *p43["transaction"]}
               if p42["transaction"].get(k) != p43["transaction"].get(k)}
    assert changed == {"implementation", "unknown_value_version", "unknown_value_version_messages", "unknown_value_log"}
    assert profile("kafka-4.4") == {**profile("kafka-4.3"), "release": "4.4", "evidence": profile("kafka-4.4")["evidence"]}
    assert known_tags("kafka-3.9")["TransactionLogValue"] == frozenset()


def test_outcome_shape_and_tombstones():
    recs = [{"key_type": 1, "key": OC_KEY, "version": 3, "value": OC_V3}, {"key_type": 1, "key": OC_KEY, "value": None},
            {"key_type": 2, "key": {"group": "g"}, "version": 4, "value": GM_V4}]
    out = load_coordinator("kafka-4.2", load_command("group", recs))
    assert set(out) == {"op", "error", "error_code", "message", "rule", "state", "skipped_unknown_keys", "ignored_tagged_fields"}
    assert out["state"]["offsets"] == {} and out["state"]["groups"]["g"]["members"][0]["subscription"] == "aa"


def test_bad_commands_are_input_errors():
    from reference_impl._errors import InputError
    with pytest.raises(InputError):
        load_coordinator("kafka-9.9", {"op": "load_coordinator", "coordinator": "group", "records": []})
    with pytest.raises(InputError):
        load_coordinator("kafka-4.2", {"op": "load_coordinator", "coordinator": "share", "records": []})
    with pytest.raises(InputError):
        load_coordinator("kafka-4.2", {"op": "load_coordinator", "coordinator": "group", "records": [{"key": "zz"}]})
    with pytest.raises(InputError):
        load_coordinator("kafka-4.1", {"op": "load_coordinator", "coordinator": "group", "records": [], "loader": "scala-gmm"})


def test_uvarint_edges():
    assert uvarint(0) == b"\x00" and uvarint(127) == b"\x7f" and uvarint(128) == b"\x80\x01"
    assert uvarint(-1) == b"\xff\xff\xff\xff\x0f"
    with pytest.raises(JavaError):
        decode("OffsetCommitKey", 1, b"")


def test_codec_is_fast_enough():
    rec = [{"key_type": 2, "key": {"group": "g"}, "version": 4, "value": {**GM_V4, "members": [MEMBER] * 5}}]
    pairs = NewerWriter("kafka-4.2", 0).write("group", rec * 2000)
    import time
    t = time.perf_counter()
    assert load("kafka-4.2", "group", pairs).ok
    assert time.perf_counter() - t < 2.0
