"""Record framing and a writer for "newer software".

A logical record is a dict:
  {"key_type": 1, "key": {"group": "g", "topic": "t", "partition": 0}, "version": 3, "value": {...} | None}
  {"key_type": 2, "key": {"group": "g"}, "version": 3, "value": {...} | None}
  {"key_type": 0, "key": {"transactionalId": "t"}, "version": 1, "value": {...} | None}   # transaction
  {"key_type": 4242, "key": "<hex body>", "value": "<hex of the whole value>" | None}      # opaque
Values may carry "_unknown_tags": [[tag, hex], ...] (also inside struct elements); they are written
verbatim into the tagged-field section.
"""

from __future__ import annotations

import random
import struct
from typing import Any

from ._codec import encode, schemas
from ._loader import _KEY_SCHEMA, _VALUE_SCHEMA, GROUP, TXN, known_tags, loader_spec

_I16 = struct.Struct(">h")
FUTURE_TAG_MIN = 1000  # above every tag any release defines: unknown to every reader
FUTURE_KEY_TYPE_MIN = 100  # above every key type any release defines (0-23)


def frame_key(key_type: int, body: bytes) -> bytes:
    """Stored key: int16 type (the key "version" before 4.1) + body."""
    return _I16.pack(key_type) + body


def frame_value(version: int, body: bytes) -> bytes:
    return _I16.pack(version) + body


def encode_record(coordinator: str, rec: dict[str, Any],
                  known: dict[str, frozenset[int]] | None = None) -> tuple[bytes, bytes | None]:
    """(key bytes, value bytes or None) of one logical record; `known` = tags the writer knows (None: all)."""
    kt = rec["key_type"]
    if isinstance(rec["key"], str):
        v = rec.get("value")
        return frame_key(kt, bytes.fromhex(rec["key"])), None if v is None else bytes.fromhex(v)
    kschema = _KEY_SCHEMA[coordinator][kt]
    key = frame_key(kt, encode(kschema, kt, rec["key"]))
    if rec.get("value") is None:
        return key, None
    vschema = _VALUE_SCHEMA[coordinator][kt]
    return key, frame_value(rec["version"], encode(vschema, rec["version"], rec["value"], known))


def encode_records(coordinator: str, records: list[dict[str, Any]], profile: str | None = None) -> list[dict[str, Any]]:
    """Logical records -> [{"key": hex, "value": hex|None}] as written by `profile`'s software (None: all tags)."""
    known = None if profile is None else known_tags(profile)
    out = []
    for rec in records:
        k, v = encode_record(coordinator, rec, known)
        out.append({"key": k.hex(), "value": None if v is None else v.hex()})
    return out


def load_command(coordinator: str, records: list[dict[str, Any]], profile: str | None = None) -> dict[str, Any]:
    """A ready load_coordinator command from logical records."""
    return {"op": "load_coordinator", "coordinator": coordinator,
            "records": encode_records(coordinator, records, profile)}


class NewerWriter:
    """Writes records as newer software would: with the tagged fields `profile` knows, plus (on request)
    tagged fields and key types no release knows, and key types `profile` knows but older ones may not."""

    def __init__(self, profile: str, seed: int | None = None):
        self.profile = profile
        self.known = known_tags(profile)
        self.rng = random.Random(seed)

    def future_tags(self, n: int) -> list[list[Any]]:
        tags = self.rng.sample(range(FUTURE_TAG_MIN, FUTURE_TAG_MIN + 10_000), n)
        return [[t, self.rng.randbytes(self.rng.randrange(0, 9)).hex()] for t in sorted(tags)]

    def with_unknown_tags(self, schema: str, value: dict[str, Any], n: int) -> dict[str, Any]:
        """Copy of `value` with n unknown tagged fields spread over the value and its struct elements."""
        v = dict(value)
        holders: list[dict[str, Any]] = [v]
        for f in schemas()[schema]["fields"]:
            if f["type"].startswith("[") and f["type"].rstrip("?")[1:-1] in schemas() and v.get(f["name"]):
                v[f["name"]] = [dict(el) for el in v[f["name"]]]
                holders.extend(v[f["name"]])
        for tag in self.future_tags(n):
            h = self.rng.choice(holders)
            h["_unknown_tags"] = sorted([*h.get("_unknown_tags", []), tag])
        return v

    def future_key(self) -> dict[str, Any]:
        """A record whose key type no release knows (every loader must skip it)."""
        kt = self.rng.randrange(FUTURE_KEY_TYPE_MIN, 32768)
        value = None if self.rng.random() < 0.2 else self.rng.randbytes(self.rng.randrange(0, 12)).hex()
        return {"key_type": kt, "key": self.rng.randbytes(self.rng.randrange(0, 12)).hex(), "value": value}

    def opaque_known_key(self, loader: str | None = None) -> dict[str, Any] | None:
        """A record of a type this software knows but we do not model (e.g. ConsumerGroupMetadata)."""
        types = [t for t in loader_spec(self.profile, GROUP, loader)["key_types"] if t > 2]
        if not types:
            return None
        kt = self.rng.choice(types)
        return {"key_type": kt, "key": self.rng.randbytes(self.rng.randrange(2, 10)).hex(),
                "value": frame_value(0, self.rng.randbytes(4)).hex()}

    def write(self, coordinator: str, records: list[dict[str, Any]], unknown_tags: int = 0,
              future_keys: int = 0) -> list[tuple[bytes, bytes | None]]:
        out = []
        for rec in records:
            if unknown_tags and isinstance(rec["key"], dict) and rec.get("value") is not None:
                vschema = _VALUE_SCHEMA[coordinator][rec["key_type"]]
                fx = schemas()[vschema]["flexible_from"]
                if rec["version"] >= fx:
                    rec = {**rec, "value": self.with_unknown_tags(vschema, rec["value"], unknown_tags)}
            out.append(encode_record(coordinator, rec, self.known))
        for _ in range(future_keys):
            out.insert(self.rng.randrange(0, len(out) + 1), encode_record(coordinator, self.future_key()))
        return out


def sample_records(coordinator: str, seed: int) -> list[dict[str, Any]]:
    """1-3 small logical records (offset commits or transactions) that vary with `seed`: what the
    suite's model and the corpus generator ask newer software to write."""
    n = seed % 3 + 1
    if coordinator == "group":
        return [{"key_type": 1, "key": {"group": f"g{i}", "topic": "t", "partition": i}, "version": 3 + seed % 2,
                 "value": {"offset": 10 * i + seed % 7, "leaderEpoch": -1, "metadata": "", "commitTimestamp": 1}}
                for i in range(n)]
    return [{"key_type": 0, "key": {"transactionalId": f"tx{i}"}, "version": seed % 2,
             "value": {"producerId": i, "producerEpoch": 0, "transactionTimeoutMs": 60000, "transactionStatus": 0,
                       "transactionPartitions": None, "transactionLastUpdateTimestampMs": 1,
                       "transactionStartTimestampMs": 1}}
            for i in range(n)]


__all__ = [
    "GROUP",
    "TXN",
    "NewerWriter",
    "encode_record",
    "encode_records",
    "frame_key",
    "frame_value",
    "load_command",
    "sample_records",
]
