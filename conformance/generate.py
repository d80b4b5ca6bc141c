"""Deterministic trace generator: a weighted, coverage-guided random walk over every op of the
wire contract (conformance.grammar driven by `random.Random`), with the expected outcomes recorded
from the reference by the one trace engine.

Trace i of `generate(N, seed)` depends only on (seed, i): its random source is
`random.Random("kfc-generate:{seed}:{i}")` (string seeding is stable across processes and
PYTHONHASHSEED), its id is `g{seed}-{i:09d}`, and its profile is `profiles[i % len(profiles)]`.
So seed ranges can be generated independently (`generate_range`, one Spark task each) and
concatenated into the same corpus, byte for byte.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from reference_impl import OPS, Cluster, load_profile, profile_names

from .engine import Lockstep
from .grammar import KINDS, Grammar, RandomChooser
from .model import jsonable

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


class _Walk:
    """One trace: the grammar driven by `random.Random`, recorded on the reference by the engine."""

    def __init__(self, profile: str, rng: random.Random):
        self.grammar = Grammar(profile)
        self.choose_from = RandomChooser(rng)
        self.cluster = Cluster(profile)
        self.engine = Lockstep(None, reference=self.cluster)
        self.kinds_seen: Counter[str] = Counter()
        self.codes: Counter[str] = Counter()
        self.snapshots: list[dict[str, Any]] = []
        self.kind_table = [(k, *KINDS[k]) for k in self.grammar.kinds]

    def step(self, cmd: dict[str, Any]) -> dict[str, Any]:
        out = jsonable(self.engine.step(cmd).expected)
        self.codes[out["error"]] += 1
        snap = out.get("snapshot")
        if out["error"] == "NONE" and isinstance(snap, dict) and "records" in snap:
            self.snapshots.append(snap)
        return out

    def choose(self) -> str:
        """Weighted choice: an op's weight shrinks as it repeats within the trace and grows while an
        error it can reach has not been seen in this trace yet."""
        weights = [(1.5 if any(c not in self.codes for c in codes) else 1.0) * base / (1 + 0.5 * self.kinds_seen[kind])
                   for kind, base, codes in self.kind_table]
        kind = self.choose_from.weighted([k for k, _, _ in self.kind_table], weights, "op")
        self.kinds_seen[kind] += 1
        return kind

    def run(self, kind: str) -> None:
        g, ch, c = self.grammar, self.choose_from, self.cluster
        if kind == "reformat":
            if self.step(g.format(ch))["error"] != "NONE" and ch.chance(0.7, "then a valid one"):
                self.step(g.format(ch, valid=True))
        elif kind == "load_snapshot":
            if not self.snapshots and self.step({"op": "snapshot"})["error"] != "NONE":
                return
            self.step(g.load_snapshot(ch, self.snapshots))
        elif kind == "controller_rollback":
            for cmd in g.controller_rollback(ch, c):
                self.step(cmd)
        elif kind == "load_coordinator":
            self.step(g.load_coordinator(ch, c)[0])
        elif kind == "state":
            self.step({"op": "state"})
        elif kind in ("add_metadata", "version_mapping", "feature_dependencies", "restore_state"):
            self.step(getattr(g, kind)(ch))
        else:
            self.step(getattr(g, kind)(ch, c))

    @property
    def steps(self) -> list[dict[str, Any]]:
        return [s.record() for s in self.engine.steps]


def generate_one(seed: int, index: int, profile: str | Sequence[str] | None = None) -> dict[str, Any]:
    """Trace `index` of the corpus of `seed` (independent of every other trace)."""
    names = check_profiles(profile)
    return _generate(seed, index, names[index % len(names)])


def _generate(seed: int, index: int, profile: str) -> dict[str, Any]:
    rng = random.Random(f"kfc-generate:{seed}:{index}")
    w = _Walk(profile, rng)
    n = rng.randint(MIN_STEPS, MAX_STEPS)
    if w.step(w.grammar.format(w.choose_from))["error"] != "NONE":
        w.step(w.grammar.format(w.choose_from, valid=True))
    while len(w.engine.steps) < n:
        w.run(w.choose())
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
