"""Deterministic trace generator: a weighted, coverage-guided random walk over every op of the
wire contract, with the expected outcomes computed by the reference.

Trace i of `generate(N, seed)` depends only on (seed, i): its random source is
`random.Random("kfc-generate:{seed}:{i}")` (string seeding is stable across processes and
PYTHONHASHSEED), its id is `g{seed}-{i:09d}`, and its profile is `profiles[i % len(profiles)]`.
So seed ranges can be generated independently (`generate_range`, one Spark task each) and
concatenated into the same corpus, byte for byte.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from reference_impl import Cluster, load_profile, profile_names
from reference_impl.api import OPS

MV, KRAFT = "metadata.version", "kraft.version"
TYPES = ("UPGRADE", "SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE", "UNKNOWN")
PAYLOADS = ("scram_credential", "delegation_token", "directory_assignment", "elr_partition_state",
            "cordoned_log_dir")
BROKER_IDS = (1, 2, 3)
MIN_STEPS, MAX_STEPS = 5, 30


def trace_id(seed: int, index: int) -> str:
    return f"g{seed}-{index:09d}"


def check_profiles(profile: str | Sequence[str] | None) -> list[str]:
    if profile is None:
        return list(profile_names())
    names = [profile] if isinstance(profile, str) else list(profile)
    for n in names:
        load_profile(n)  # InputError names the known profiles
    if not names:
        raise ValueError("an empty profile list")
    return names


def _norm(out: Any) -> Any:
    """JSON-normalised outcome (tuples become lists, keys strings)."""
    return json.loads(json.dumps(out))


# Op kinds of the walk: base weight and the error names each tends to reach (coverage guidance).
_KINDS: dict[str, tuple[float, tuple[str, ...]]] = {
    "register_broker": (14, ("UNSUPPORTED_VERSION", "INVALID_REGISTRATION", "INCONSISTENT_CLUSTER_ID",
                             "DUPLICATE_BROKER_REGISTRATION")),
    "register_controller": (5, ("UNSUPPORTED_VERSION", "UNKNOWN_SERVER_ERROR")),
    "unregister": (4, ("BROKER_ID_NOT_REGISTERED",)),
    "update_features": (18, ("INVALID_UPDATE_VERSION", "UNSUPPORTED_VERSION", "NOT_CONTROLLER")),
    "kip1155_downgrade": (6, ("INVALID_UPDATE_VERSION",)),
    "features_tool": (7, ("TOOL_ERROR", "INVALID_UPDATE_VERSION")),
    "add_metadata": (5, ("UNSUPPORTED_VERSION",)),
    "api_versions": (5, ("UNSUPPORTED_VERSION", "NETWORK_EXCEPTION")),
    "describe": (4, ("UNSUPPORTED_VERSION", "NETWORK_EXCEPTION")),
    "snapshot": (3, ("INVALID_UPDATE_VERSION", "INVALID_COMMAND")),
    "load_snapshot": (2, ()),
    "load_coordinator": (4, ("UNKNOWN_SERVER_ERROR",)),
    "version_mapping": (2, ("TOOL_ERROR",)),
    "feature_dependencies": (2, ("TOOL_ERROR",)),
    "reformat": (2, ("TOOL_ERROR",)),
    "restore_state": (1, ("INVALID_COMMAND",)),
    "state": (1, ()),
}


class _Walk:
    """One trace: a reference cluster, the steps so far, and per-trace coverage counters."""

    def __init__(self, profile: str, rng: random.Random):
        self.p = load_profile(profile)
        self.rng = rng
        self.c = Cluster(profile)
        self.steps: list[dict[str, Any]] = []
        self.kinds: Counter[str] = Counter()
        self.codes: Counter[str] = Counter()
        self.snapshots: list[dict[str, Any]] = []
        self.names = list(profile_names())
        self.kind_names = [k for k in _KINDS if k != "kip1155_downgrade" or self.p.b("kip1155")]
        self.kind_table = [(k, *_KINDS[k]) for k in self.kind_names]

    # -- plumbing -----------------------------------------------------------------------------
    def step(self, cmd: dict[str, Any]) -> dict[str, Any]:
        out = _norm(self.c.apply(cmd))
        self.steps.append({"command": cmd, "expected": out})
        self.codes[out["error"]] += 1
        snap = out.get("snapshot")
        if out["error"] == "NONE" and isinstance(snap, dict) and "records" in snap:
            self.snapshots.append(snap)
        return out

    def pick(self, seq: Sequence[Any]) -> Any:
        return seq[self.rng.randrange(len(seq))]

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def software(self) -> str:
        """A node's software: mostly the cluster's release or a neighbour (rolling upgrade/downgrade)."""
        home = self.names.index(self.p.name)
        r = self.rng.random()
        if r < 0.4:
            return self.p.name
        if r < 0.85:
            i = home + self.pick((-2, -1, -1, 1, 1, 2))
            return self.names[min(max(i, 0), len(self.names) - 1)]
        return self.pick(self.names)

    def finalized(self) -> dict[str, int]:
        return self.c.finalized_view()

    def mv_name(self, level: int) -> str:
        return self.p.mv_name(level)

    def bootstrap_levels(self, production: bool = True) -> list[int]:
        return [v for v in self.p.mv_levels if v >= self.p.mv_minimum_bootstrap
                and (self.p.versions[v].production or not production)]

    def level_near(self, name: str) -> int:
        cur = self.finalized().get(name, 0)
        if name == MV:
            cands = {cur - 2, cur - 1, cur, cur + 1, cur + 2, self.p.mv_latest_production, self.p.mv_minimum,
                     15, 0, self.p.mv_latest_testing + 1}
        else:
            feat = self.p.features.get(name)
            top = feat.latest_testing if feat else 1
            cands = {0, cur - 1, cur, cur + 1, top, top + 1, -1}
        return int(self.pick(sorted(cands)))

    # -- choosing the next op -----------------------------------------------------------------
    def choose(self) -> str:
        """Weighted choice: an op's weight shrinks as it repeats within the trace and grows while an
        error it can reach has not been seen in this trace yet."""
        seen, counts = self.codes, self.kinds
        weights = [(1.5 if any(c not in seen for c in codes) else 1.0) * base / (1 + 0.5 * counts[kind])
                   for kind, base, codes in self.kind_table]
        kind = self.rng.choices(self.kind_names, weights)[0]
        self.kinds[kind] += 1
        return kind

    # -- ops ------------------------------------------------------------------------------------
    def format(self, valid: bool = False) -> dict[str, Any]:
        p, rng = self.p, self.rng
        prod = self.bootstrap_levels()
        n_ctl = self.pick((1, 1, 2, 3))
        controllers: list[dict[str, Any]] = [{"id": 3000 + i} for i in range(n_ctl)]
        if n_ctl > 1 and self.chance(0.2):
            controllers[-1]["software"] = self.software()
        cmd: dict[str, Any] = {"op": "format", "controllers": controllers}
        if valid:
            cmd["release_version"] = self.mv_name(self.pick(prod[-4:]))
            return self.step(cmd)
        r = rng.random()
        if r < 0.62:
            level = self.pick(prod)
            rel = self.p.versions[level]
            cmd["release_version"] = rel.release if self.chance(0.1) else rel.name
        elif r < 0.72:
            unstable = [v for v in self.bootstrap_levels(False) if not p.versions[v].production]
            cmd["release_version"] = self.mv_name(self.pick(unstable or prod))
            if self.chance(0.7):
                cmd["unstable"] = True
        elif r < 0.78:
            cmd["release_version"] = self.pick(("9.9-IV9", "2.9-IV2", "3.6-IVI", "3.2-IV0", "3.3", "nonsense"))
        else:
            if self.chance(0.85):
                cmd["release_version"] = self.mv_name(self.pick(prod))
            feats = [f for f in p.production_features] + ["nope.version", MV]
            flags = []
            for _ in range(self.pick((1, 1, 2))):
                f = self.pick(feats)
                if f == MV:
                    flags.append(f"{MV}={self.pick(prod)}")
                    continue
                feat = p.features.get(f)
                top = feat.latest_testing if feat else 1
                lv: Any = self.pick((0, 1, top, top + 1, "x")) if self.chance(0.9) else ""
                flags.append(f"{f}={lv}")
            cmd["features"] = flags
            if self.chance(0.1):
                cmd["unstable"] = True
        if p.b("format_style") not in ("3.7", "3.8") or self.chance(0.05):
            q = rng.random()
            if q < 0.15:
                cmd["standalone"] = True
            elif q < 0.22:
                cmd["initial_controllers"] = True
            elif q < 0.27:
                cmd["no_initial_controllers"] = True
            elif q < 0.30:
                cmd["standalone"] = cmd["no_initial_controllers"] = True
            if self.chance(0.08):
                cmd["static_voters"] = self.chance(0.5)
        return self.step(cmd)

    def reformat(self) -> dict[str, Any]:
        out = self.format()
        if out["error"] != "NONE" and self.chance(0.7):
            out = self.format(valid=True)
        return out

    def restore_state(self) -> dict[str, Any]:
        levels = self.bootstrap_levels()
        mv = self.pick(levels) if self.chance(0.9) else 999
        cmd: dict[str, Any] = {"op": "restore_state", "metadata_version": mv,
                               "epoch": self.rng.randrange(0, 12)}
        if mv != 999:
            cmd["finalized"] = {k: v for k, v in self.p.default_levels(mv).items() if v and k != KRAFT}
        if self.chance(0.2):
            cmd["kraft_version"] = 1
        if self.chance(0.3):
            cmd["controllers"] = [{"id": 3000}, {"id": 3001}]
        return self.step(cmd)

    def register_broker(self) -> dict[str, Any]:
        node = self.pick(BROKER_IDS) if self.chance(0.95) else 4
        cmd: dict[str, Any] = {"op": "register", "role": "broker", "node": node}
        if self.chance(0.08):
            base = load_profile(self.software()).supported("broker")
            ranges = {k: list(v) for k, v in base.items() if k != KRAFT}
            if self.chance(0.3):
                ranges.pop(MV, None)
            cmd["ranges"] = ranges
        else:
            cmd["software"] = self.software()
            if self.chance(0.05):
                cmd["unstable"] = True
        if self.chance(0.2):
            cmd["version"] = self.pick((0, 1, 2, 3, 4, 4, 5))
        existing = self.c.image.brokers.get(node)
        r = self.rng.random()
        if r < 0.03:
            cmd["cluster_id"] = "another-cluster-id"
        elif existing and r < 0.10:
            cmd["previous_session_alive"] = True
        elif existing and r < 0.15:
            cmd["incarnation"] = existing["incarnation"]  # the same process registering again
        return self.step(cmd)

    def register_controller(self) -> dict[str, Any]:
        ids = list(self.c.voters) + ([3007] if self.chance(0.1) else [])
        cmd = {"op": "register", "role": "controller", "node": self.pick(ids), "software": self.software()}
        return self.step(cmd)

    def unregister(self) -> dict[str, Any]:
        registered = sorted(self.c.image.brokers)
        node = self.pick(registered) if registered and self.chance(0.75) else self.pick((*BROKER_IDS, 9))
        return self.step({"op": "unregister", "node": node})

    def update_features(self) -> dict[str, Any]:
        p = self.p
        names = [MV, *p.production_features, "unknown.feature.version"]
        if "test.feature.version" in p.features and self.chance(0.1):
            names.append("test.feature.version")
        chosen = self.rng.sample(names, min(len(names), self.pick((1, 1, 1, 2, 2, 3))))
        vmax = p.b("update_features_max_version")
        version = self.pick((vmax, vmax, vmax, 1, 0)) if self.chance(0.95) else vmax + 1
        updates = []
        for name in chosen:
            u: dict[str, Any] = {"feature": name, "level": self.level_near(name)}
            if self.chance(0.85):
                u["upgrade_type"] = self.pick(("UPGRADE", "UPGRADE", "SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE",
                                               "UPGRADE", "SAFE_DOWNGRADE", "UNKNOWN"))
            updates.append(u)
        cmd: dict[str, Any] = {"op": "update_features", "version": min(version, 2) if version <= vmax else version,
                               "updates": updates}
        if self.chance(0.2):
            cmd["validate_only"] = True
        if len(self.c.controllers) > 1 and self.chance(0.05):
            cmd["node"] = self.pick([n for n in self.c.controllers if n != self.c.active_id])
        return self.step(cmd)

    def kip1155_downgrade(self) -> dict[str, Any]:
        cur = self.finalized().get(MV, 0)
        target = self.pick(sorted({14, 15, 17, 21, 23, 27, max(cur - 1, 7), max(cur - 3, 7)}))
        utype = "UNSAFE_DOWNGRADE" if self.chance(0.4) else "SAFE_DOWNGRADE"
        cmd = {"op": "update_features", "version": 2,
               "updates": [{"feature": MV, "level": target, "upgrade_type": utype}]}
        if self.chance(0.15):
            cmd["validate_only"] = True
        return self.step(cmd)

    def features_tool(self) -> dict[str, Any]:
        p = self.p
        action = self.pick(("upgrade", "upgrade", "downgrade", "disable", "describe"))
        cmd: dict[str, Any] = {"op": "features_tool", "action": action}
        if self.chance(0.3):
            cmd["dry_run"] = True
        if action == "downgrade" and self.chance(0.4):
            cmd["unsafe"] = True
        if action == "disable":
            cmd["features"] = [self.pick([*p.production_features, MV, "nope.version"])]
        elif action != "describe":
            r = self.rng.random()
            if p.b("features_tool_style") in ("4.0", "4.2") and r < 0.3:
                levels = self.bootstrap_levels()
                cmd["release_version"] = self.mv_name(self.pick(levels)) if self.chance(0.9) else "9.9-IV9"
                if self.chance(0.05):
                    cmd["features"] = [f"{MV}={self.pick(levels)}"]
            elif r < 0.45:
                cmd["metadata"] = self.mv_name(self.pick(self.bootstrap_levels())) if self.chance(0.85) else "1.0"
            elif r < 0.5:
                cmd["features"] = self.pick(([], ["group.version"], ["a=1", "a=2"]))
            else:
                names = [MV, *p.production_features]
                picked = self.rng.sample(names, min(len(names), self.pick((1, 1, 2))))
                cmd["features"] = [f"{n}={self.level_near(n)}" for n in picked]
        elif self.chance(0.3):
            cmd["node"] = self.pick([*sorted(self.c.image.brokers), self.c.active_id, 99])
        return self.step(cmd)

    def add_metadata(self) -> dict[str, Any]:
        kind = self.pick(PAYLOADS) if self.chance(0.97) else "not_a_kind"
        return self.step({"op": "add_metadata", "kind": kind})

    def _probe_node(self) -> int:
        nodes = sorted(self.c.image.brokers) + list(self.c.controllers) + [99]
        nodes += sorted(n for n in self.c.nodes if n not in self.c.image.brokers)  # unregistered brokers
        return int(self.pick(nodes))

    def api_versions(self, op: str = "api_versions") -> dict[str, Any]:
        cmd: dict[str, Any] = {"op": op, "node": self._probe_node()}
        if op == "api_versions" or self.chance(0.5):
            cmd["version"] = self.pick((0, 1, 2, 3, 3, 4, 4, 5))
        return self.step(cmd)

    def describe(self) -> dict[str, Any]:
        return self.api_versions("describe")

    def snapshot(self) -> dict[str, Any]:
        cmd: dict[str, Any] = {"op": "snapshot"}
        if self.chance(0.4):
            mv = self.finalized().get(MV, 0)
            cmd["metadata_version"] = self.pick(sorted({mv, mv - 1, 15, 21, 23, 27, 999}))
            if self.chance(0.5):
                cmd["allow_loss"] = True
        return self.step(cmd)

    def load_snapshot(self) -> dict[str, Any]:
        if not self.snapshots:
            out = self.step({"op": "snapshot"})
            if out["error"] != "NONE":
                return out
        return self.step({"op": "load_snapshot", "snapshot": self.pick(self.snapshots)})

    def load_coordinator(self) -> dict[str, Any]:
        from reference_impl.coordinator import NewerWriter, sample_records

        coordinator = self.pick(("group", "transaction"))
        writer = self.software()
        seed = self.rng.randrange(0, 1 << 16)
        w = NewerWriter(writer, seed)
        raw = w.write(coordinator, sample_records(coordinator, seed), unknown_tags=seed % 3,
                      future_keys=seed % 2)
        if seed % 5 == 0 and raw[0][1] is not None:
            raw[0] = (raw[0][0], (9).to_bytes(2, "big") + raw[0][1][2:])  # a value version no release knows
        recs = [{"key": k.hex(), "value": None if v is None else v.hex()} for k, v in raw]
        cmd: dict[str, Any] = {"op": "load_coordinator", "coordinator": coordinator, "records": recs}
        if self.c.image.brokers and self.chance(0.3):
            cmd["node"] = self.pick(sorted(self.c.image.brokers))
        return self.step(cmd)

    def version_mapping(self) -> dict[str, Any]:
        names = [self.mv_name(v) for v in self.bootstrap_levels(False)]
        cmd: dict[str, Any] = {"op": "version_mapping",
                               "release_version": self.pick(names) if self.chance(0.8) else self.pick(
                                   ("9.9-IV9", "3.6", "2.9-IV2", "3.6-IVI"))}
        if self.chance(0.15):
            cmd["unstable"] = True
        return self.step(cmd)

    def feature_dependencies(self) -> dict[str, Any]:
        names = [MV, *self.p.production_features, "nope.version"]
        items = []
        for _ in range(self.pick((1, 1, 2))):
            n = self.pick(names)
            items.append(f"{n}={self.rng.randrange(0, 32)}" if self.chance(0.95) else n)
        return self.step({"op": "feature_dependencies", "features": items})

    def state(self) -> dict[str, Any]:
        return self.step({"op": "state"})


def generate_one(seed: int, index: int, profile: str | Sequence[str] | None = None) -> dict[str, Any]:
    """Trace `index` of the corpus of `seed` (independent of every other trace)."""
    names = check_profiles(profile)
    return _generate(seed, index, names[index % len(names)])


def _generate(seed: int, index: int, profile: str) -> dict[str, Any]:
    rng = random.Random(f"kfc-generate:{seed}:{index}")
    w = _Walk(profile, rng)
    n = rng.randint(MIN_STEPS, MAX_STEPS)
    out = w.format()
    if out["error"] != "NONE":
        w.format(valid=True)
    while len(w.steps) < n:
        kind = w.choose()
        method: Callable[[], dict[str, Any]] = getattr(w, kind)
        method()
    steps = w.steps[:MAX_STEPS]
    rules = sorted({s["expected"]["rule"] for s in steps if s["expected"].get("rule")})
    trace: dict[str, Any] = {"format": "kfc-trace", "version": 1, "id": trace_id(seed, index), "profile": profile,
                             "source": f"kfc generate seed={seed} index={index}", "steps": steps}
    if rules:
        trace["rules"] = rules
    return trace


def generate_range(seed: int, start: int, stop: int,
                   profile: str | Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
    """Traces start..stop-1 of the corpus of `seed` (what one Spark task generates)."""
    names = check_profiles(profile)
    for i in range(start, stop):
        yield _generate(seed, i, names[i % len(names)])


def generate(count: int, seed: int, profile: str | Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
    """`count` traces of the corpus of `seed`; profiles cycle over all of them unless given."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    return generate_range(seed, 0, count, profile)


def generate_to(path: str | Path, count: int, seed: int, fmt: str | None = None,
                profile: str | Sequence[str] | None = None, *, row_group_size: int | None = None) -> dict[str, Any]:
    """Generate a corpus file; returns {"path", "format", "count", "bytes", "seconds", "traces_per_s"}."""
    from .corpus import DEFAULT_ROW_GROUP_SIZE, write_corpus

    check_profiles(profile)  # fail before creating the file
    t0 = time.perf_counter()
    info = write_corpus(generate(count, seed, profile), path, fmt, row_group_size=row_group_size or
                        DEFAULT_ROW_GROUP_SIZE)
    seconds = time.perf_counter() - t0
    info.update(seconds=round(seconds, 3), traces_per_s=round(count / seconds, 1) if seconds > 0 else None)
    return info




__all__ = ["MAX_STEPS", "MIN_STEPS", "OPS", "generate", "generate_one", "generate_range",
           "generate_to", "trace_id"]
