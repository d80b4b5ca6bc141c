"""A target that runs one release's code (Target.active_software, the kafka-jvm harness) gets node
software -- brokers' too -- only from what it can run, and every other target's draws are unchanged.

Why: a kafka-4.4 broker answers ApiVersions v5 with its own code (KIP-1242); Kafka 4.1.1's
ApiVersionsResponse has no v5, so the harness cannot play that broker (the 4.1.1 check's former
strict xfail).  A third-party broker's explicit `ranges` stay drawn from any release: data, not code."""

from __future__ import annotations

import random
from typing import Any

from conformance.grammar import Grammar, RandomChooser
from reference_impl import Cluster, load_profile

RUNNABLE = frozenset({"kafka-4.1", "kafka-4.1.1"})  # what kafka-jvm:4.1.1 computes


def _draws(active: frozenset[str] | None, seed: int, profile: str = "kafka-4.1", n: int = 400) -> list[dict[str, Any]]:
    g = Grammar(profile)
    g.active_software = active
    ch, cluster = RandomChooser(random.Random(seed)), Cluster(profile)
    cluster.apply({"op": "format"})
    for node in (0, 1):
        cluster.apply({"op": "register", "node": node, "software": profile})
    out: list[dict[str, Any]] = []
    for _ in range(n):
        out += [g.register_broker(ch, cluster), g.roll_broker(ch, cluster), g.register_controller(ch, cluster),
                g.format(ch), *g.controller_rollback(ch, cluster)]
    return out


def _software(cmds: list[dict[str, Any]]) -> set[str]:
    found = {c["software"] for c in cmds if c.get("software")}
    found |= {s["software"] for c in cmds for s in c.get("controllers") or [] if s.get("software")}
    return found


def test_every_node_software_drawn_is_one_the_target_can_run() -> None:
    free, kept = _draws(None, 7), _draws(RUNNABLE, 7)
    assert "kafka-4.4" in _software(free) and len(_software(free) - RUNNABLE) > 3  # the draws do reach other releases
    assert _software(kept) <= RUNNABLE and _software(kept)
    # Only the software is replaced: every other field of every command is drawn alike.
    strip = [{k: v for k, v in c.items() if k not in ("software", "controllers")} for c in free]
    assert strip == [{k: v for k, v in c.items() if k not in ("software", "controllers")} for c in kept]
    # Explicit ranges (a third-party broker) still come from other releases' ranges.
    ranges = [c["ranges"] for c in kept if "ranges" in c]
    own = {k: list(v) for k, v in load_profile("kafka-4.1").supported("broker").items()}
    assert ranges and any({k: v for k, v in r.items() if k in own} != {k: v for k, v in own.items() if k in r}
                          for r in ranges)


def test_a_node_software_is_kept_or_replaced_by_the_clusters_own() -> None:
    g = Grammar("kafka-4.1")
    assert g.active_software is None and g._runnable("kafka-4.4") == "kafka-4.4"
    g.active_software = RUNNABLE
    assert g._runnable("kafka-4.4") == "kafka-4.1" and g._runnable("kafka-4.1.1") == "kafka-4.1.1"


def test_explicit_ranges_on_a_one_release_target_hold_what_its_code_can() -> None:
    """3.7's code holds no supported range with min 0 (BaseVersionRange, kafka-clients 3.7.2): a harness
    of 3.7 cannot answer ApiVersions for a third-party broker advertising one, so none is drawn there."""
    runs = frozenset({"kafka-3.7"})
    ranges = [c["ranges"] for c in _draws(runs, 12, "kafka-3.7") if "ranges" in c]
    assert ranges and all(v[0] >= 1 for r in ranges for v in r.values())
    free = [c["ranges"] for c in _draws(None, 12, "kafka-3.7") if "ranges" in c]
    assert any(v[0] == 0 for r in free for v in r.values())  # the reference still meets them
