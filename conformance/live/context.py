"""One live run's view of its cluster: the observation, the profile and its evidence, the observe
checks and probes built from it, and what each tier cannot do here (blocked, with the finding or
reason that blocks it).  Built once per run from a target that states its state (`observed_state`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..wire import codec
from .checks import Check, checks
from .probes import Probe, probes


@dataclass
class LiveContext:
    target: Any
    profile: str
    tiers: tuple[str, ...]
    observation: Any
    state: dict[str, Any] | None
    checks: dict[str, Check] = field(default_factory=dict)
    probes: dict[str, Probe] = field(default_factory=dict)
    probe_rules: dict[str, str | None] = field(default_factory=dict)
    blocked: dict[str, str] = field(default_factory=dict)  # tier -> why it sends nothing
    start_levels: dict[str, int] = field(default_factory=dict)

    @property
    def visible(self) -> set[int]:
        return {n.id for n in self.observation.nodes}


def build(target: Any, profile: str) -> LiveContext:
    from reference_impl import Cluster

    obs = target.observation if target.observation is not None else target.observe()
    tiers = tuple(getattr(target, "tiers", ("observe",)))
    try:
        state = target.observed_state()
    except Exception as e:  # noqa: BLE001 - the target cannot state its state: every stateful tier is blocked
        state, why = None, str(e)
    else:
        why = ""
    ctx = LiveContext(target, profile, tiers, obs, state)
    ctx.checks = {c.id: c for c in checks(obs, profile, target)}
    ctx.start_levels = dict(obs.finalized)
    if state is None:
        for tier in ("probe", "mutate", "register", "lockstep"):
            ctx.blocked[tier] = f"blocked by finding KIP778-OBS-01: {why or 'no finalized metadata.version'}"
        return ctx
    ctx.blocked.update(getattr(target, "blocked", {}))
    for tier in ("probe", "mutate", "register"):
        if tier not in tiers:
            ctx.blocked.setdefault(tier, f"tier {tier} not enabled (tiers={','.join(tiers)})")
    if "probe" not in ctx.blocked:
        node = obs.node(obs.active_controller) if obs.active_controller is not None else None
        node = node or next((n for n in obs.brokers if n.advertises(codec.UPDATE_FEATURES)), None)
        lo, hi = node.api_keys.get(codec.UPDATE_FEATURES, (0, -1)) if node else (0, -1)
        versions = [v for v in range(max(lo, 1), min(hi, 2) + 1)]
        if not versions:
            ctx.blocked["probe"] = "no node advertises UpdateFeatures v1+ (validate_only): nothing to probe"
        reference = Cluster(profile)
        reference.apply(state)
        before = (reference.finalized_view(), reference.epoch)
        for p in probes(reference, versions):
            ctx.probes[p.id] = p
            ctx.probe_rules[p.id] = reference.apply(p.command).get("rule")  # validate_only: nothing written
        assert (reference.finalized_view(), reference.epoch) == before, "a validate_only probe moved the reference"
    return ctx
