"""One live run's view of its cluster: the observation, the profile and its evidence, the observe
checks and probes built from it, and what each tier cannot do here (blocked, with the finding or
reason that blocks it).  Built once per run from a target that states its state (`observed_state`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..wire import codec
from .checks import Check, checks
from .probes import Probe, probes
from .protocol import LiveTarget
from .registrations import Registration, registrations
from .view import Observation


@dataclass
class LiveContext:
    target: LiveTarget
    profile: str
    tiers: tuple[str, ...]
    observation: Observation
    state: dict[str, Any] | None
    checks: dict[str, Check] = field(default_factory=dict)
    probes: dict[str, Probe] = field(default_factory=dict)
    probe_rules: dict[str, str | None] = field(default_factory=dict)
    registrations: dict[str, Registration] = field(default_factory=dict)
    blocked: dict[str, str] = field(default_factory=dict)  # tier -> why it sends nothing
    start_levels: dict[str, int] = field(default_factory=dict)

    @property
    def visible(self) -> set[int]:
        return {n.id for n in self.observation.nodes}


def build(target: LiveTarget, profile: str) -> LiveContext:
    from reference_impl import Cluster

    obs = target.observation if target.observation is not None else target.observe()
    tiers = tuple(target.tiers)
    try:
        state = target.observed_state()
    except Exception as e:  # noqa: BLE001 - the target cannot state its state: every stateful tier is blocked
        state, why = None, str(e)
    else:
        why = ""
    ctx = LiveContext(target, profile, tiers, obs, state)
    ctx.checks = {c.id: c for c in checks(obs, profile, target, target.unclear)}
    ctx.start_levels = dict(obs.finalized)
    if state is None:
        # Nothing to start the reference from: only the observe invariants run.  Tiers the user did not
        # ask for are not mentioned.
        ctx.blocked["lockstep"] = f"no reference state: {why}"
        for tier in ("probe", "mutate", "register"):
            if tier in tiers:
                ctx.blocked[tier] = target.blocked.get(tier) or f"no reference state: {why}"
        return ctx
    ctx.blocked.update({k: v for k, v in target.blocked.items() if k in tiers})
    node = obs.node(obs.active_controller) if obs.active_controller is not None else None
    node = node or next((n for n in obs.brokers if n.advertises(codec.UPDATE_FEATURES)), None)
    lo, hi = node.api_keys.get(codec.UPDATE_FEATURES, (0, -1)) if node else (0, -1)
    versions = [v for v in range(max(lo, 1), min(hi, 2) + 1)]
    if "register" in tiers and "register" not in ctx.blocked:
        ctx.registrations = {r.id: r for r in registrations(state, profile, ctx.visible, max(versions, default=None))}
    if "probe" in tiers and "probe" not in ctx.blocked:
        if not versions:
            ctx.blocked["probe"] = "no node advertises UpdateFeatures v1+ (validate_only): nothing to probe"
            return ctx
        reference = Cluster(profile)
        reference.apply(state)
        before = (reference.finalized_view(), reference.epoch)
        for p in probes(reference, versions):
            ctx.probes[p.id] = p
            ctx.probe_rules[p.id] = reference.apply(p.command).get("rule")  # validate_only: nothing written
        assert (reference.finalized_view(), reference.epoch) == before, "a validate_only probe moved the reference"
    return ctx
