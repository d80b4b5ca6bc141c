"""The cluster model: a controller quorum plus brokers, a metadata log of records, and its image.

Records are plain dicts (JSON-able).  The image is what replaying the log gives; the finalized
epoch is the offset of the last applied record.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ._catalog import KRAFT, MV, Profile, load_profile
from ._errors import InputError
from ._timeline import TimelineOrder

Ranges = dict[str, tuple[int, int]]

# Payload record kinds that need a minimum metadata.version (add_metadata); kind -> (record type, level).
PAYLOAD_KINDS: dict[str, tuple[str, int, str]] = {
    "scram_credential": ("UserScramCredentialRecord", 11, "SCRAM credentials"),
    "delegation_token": ("DelegationTokenRecord", 14, "Delegation tokens"),
    "directory_assignment": ("PartitionChangeRecord.Directories", 17, "Directory assignments"),
    "elr_partition_state": ("PartitionChangeRecord.EligibleLeaderReplicas", 23, "ELR partition state"),
    "cordoned_log_dir": ("BrokerRegistrationChangeRecord.CordonedLogDirs", 30, "Cordoned log directories"),
}

CONTROLLER_REGISTRATION_MV = 15  # 3.7-IV0, isControllerRegistrationSupported


@dataclass
class Node:
    """A running node: software profile (ranges follow from it) or explicit ranges."""

    id: int
    role: str  # "broker" | "controller"
    software: str | None = None
    unstable: bool = False
    explicit_ranges: Ranges | None = None
    # False: a controller whose metadata high watermark is not yet known (restore_state only): its
    # FeaturesPublisher has published nothing, so its ApiVersions knows no metadata.version (KIP584-API-05).
    caught_up: bool = True

    @property
    def profile(self) -> Profile:
        # A node given explicit ranges behaves like the newest verified release otherwise.
        cached = self.__dict__.get("_profile")  # (software, its profile): read often, loaded once
        if cached is not None and cached[0] is self.software:
            return cached[1]  # type: ignore[no-any-return]
        profile = load_profile(self.software)
        self.__dict__["_profile"] = (self.software, profile)
        return profile

    def ranges(self) -> Ranges:
        """Supported ranges (read-only: shared with the profile)."""
        if self.explicit_ranges is not None:
            return self.explicit_ranges
        return self.profile.supported(self.role, self.unstable)

    def describe(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "role": self.role}
        if self.explicit_ranges is not None:
            d["ranges"] = {k: list(v) for k, v in sorted(self.explicit_ranges.items())}
        else:
            d["software"] = self.profile.name
            d["unstable"] = self.unstable
        return d


def node_from_spec(spec: dict[str, Any], role: str, default_software: str | None) -> Node:
    try:
        node_id = int(spec["id"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"node spec {spec!r} needs an integer 'id'") from None
    ranges = spec.get("ranges")
    explicit = None
    if ranges is not None:
        explicit = parse_ranges(ranges, f"node {node_id}")
    software = spec.get("software", default_software)
    if explicit is None:
        load_profile(software)  # validate early: unknown profile is an input error
    return Node(node_id, role, software, bool(spec.get("unstable", False)), explicit)


def parse_ranges(ranges: Any, where: str) -> Ranges:
    if not isinstance(ranges, dict):
        raise InputError(f"{where}: ranges must be an object of feature -> [min, max]")
    out: Ranges = {}
    for name, r in ranges.items():
        if (not isinstance(r, (list, tuple)) or len(r) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in r)):
            raise InputError(f"{where}: range of {name} must be [min, max] integers, got {r!r}")
        if r[0] < 0 or r[1] < r[0] or r[1] > 32767:
            raise InputError(f"{where}: range of {name} is invalid: {r!r}")
        out[str(name)] = (r[0], r[1])
    return out


@dataclass
class Image:
    metadata_version: int = 0
    finalized: dict[str, int] = field(default_factory=dict)  # non-MV features, level > 0 only
    kraft_version: int = 0  # the raft layer's kraft.version (KRaftVersionRecord), not a FeatureLevelRecord
    brokers: dict[int, dict[str, Any]] = field(default_factory=dict)
    controllers: dict[int, dict[str, Any]] = field(default_factory=dict)
    payload: list[dict[str, Any]] = field(default_factory=list)
    # The controller's iteration order over registrations (a TimelineHashMap in Kafka): which node an
    # error names when several fail a support check.
    broker_order: TimelineOrder = field(default_factory=TimelineOrder)
    controller_order: TimelineOrder = field(default_factory=TimelineOrder)
    # Cluster-level dynamic configs set by ConfigRecords (only the ones feature updates look at:
    # min.insync.replicas, which enabling ELR writes unless it is already set).
    cluster_configs: frozenset[str] = frozenset()

    def copy(self) -> Image:
        """A deep copy (what copy.deepcopy gives, without its bookkeeping: an image is plain data)."""
        return Image(self.metadata_version, dict(self.finalized), self.kraft_version, tree_copy(self.brokers),
                     tree_copy(self.controllers), tree_copy(self.payload), self.broker_order.copy(),
                     self.controller_order.copy(), self.cluster_configs)


_ATOMS = frozenset({str, int, float, bool, type(None)})


def tree_copy(value: Any) -> Any:
    """copy.deepcopy of plain data (dicts, lists, tuples of str / int / float / bool / None), made
    directly; anything else is left to copy.deepcopy.  (Like deepcopy, a tuple of atoms is kept as
    it is.  Unlike it, an object reachable twice is copied twice: image data never shares one.)"""
    t = type(value)
    if t in _ATOMS:
        return value
    if t is dict:
        return {k: v if type(v) in _ATOMS else tree_copy(v) for k, v in value.items()}
    if t is list:
        return [v if type(v) in _ATOMS else tree_copy(v) for v in value]
    if t is tuple:
        if all(type(v) in _ATOMS for v in value):
            return value
        return tuple(tree_copy(v) for v in value)
    return copy.deepcopy(value)


class ReplayError(Exception):
    pass


def replay(image: Image, record: dict[str, Any]) -> None:
    """Apply one record to the image (the metadata loader)."""
    t = record["type"]
    if t == "FeatureLevelRecord":
        name, level = record["name"], record["level"]
        if name == MV:
            image.metadata_version = level
        elif name == KRAFT and record.get("ignored_on_replay"):
            pass  # 4.x ignores FeatureLevelRecord for kraft.version (KAFKA-18979)
        elif level == 0:
            image.finalized.pop(name, None)
        else:
            image.finalized[name] = level
    elif t == "RegisterBrokerRecord":
        image.broker_order.put(record["broker_id"])
        image.brokers[record["broker_id"]] = {
            "incarnation": record["incarnation"],
            "features": {k: tuple(v) for k, v in record["features"].items()},
            "epoch": record.get("epoch", record["offset"]),
            "fenced": True,
        }
    elif t == "UnregisterBrokerRecord":
        image.brokers.pop(record["broker_id"], None)
        image.broker_order.remove(record["broker_id"])
    elif t == "RegisterControllerRecord":
        image.controller_order.put(record["controller_id"])
        image.controllers[record["controller_id"]] = {
            "incarnation": record["incarnation"],
            "features": {k: tuple(v) for k, v in record["features"].items()},
        }
    elif t == "UnregisterControllerRecord":
        image.controllers.pop(record["controller_id"], None)
        image.controller_order.remove(record["controller_id"])
    elif t == "KRaftVersionRecord":
        image.kraft_version = record["level"]
    elif t == "ConfigRecord":
        if record.get("resource") == "cluster":
            image.cluster_configs = image.cluster_configs | {record["name"]}
    elif t == "NoOpRecord":
        if "kraft_version" in record:  # 4.x: a kraft.version upgrade lands in the raft log; this marks its offset
            image.kraft_version = record["kraft_version"]
    elif t == "PayloadRecord":
        image.payload.append({"kind": record["kind"], "id": record["id"]})
    elif t == "RemovePayloadRecord":
        image.payload = [p for p in image.payload if p["id"] != record["id"]]
    else:
        raise ReplayError(f"unknown record type {t}")


def image_records(image: Image) -> list[dict[str, Any]]:
    """The records of a snapshot of this image, in the order a snapshot writes them."""
    recs: list[dict[str, Any]] = [{"type": "FeatureLevelRecord", "name": MV, "level": image.metadata_version}]
    recs.append({"type": "KRaftVersionRecord", "level": image.kraft_version})
    for name in sorted(image.finalized):
        recs.append({"type": "FeatureLevelRecord", "name": name, "level": image.finalized[name]})
    for cid in sorted(image.controllers):
        c = image.controllers[cid]
        recs.append({"type": "RegisterControllerRecord", "controller_id": cid, "incarnation": c["incarnation"],
                     "features": {k: list(v) for k, v in sorted(c["features"].items())}})
    for bid in sorted(image.brokers):
        b = image.brokers[bid]
        recs.append({"type": "RegisterBrokerRecord", "broker_id": bid, "incarnation": b["incarnation"],
                     "features": {k: list(v) for k, v in sorted(b["features"].items())}, "offset": b["epoch"]})
    for name in sorted(image.cluster_configs):
        recs.append({"type": "ConfigRecord", "resource": "cluster", "name": name})
    for p in image.payload:
        recs.append({"type": "PayloadRecord", "kind": p["kind"], "id": p["id"]})
    return recs
