"""The cluster as observed, on one screen (terminal and report) and as JSON."""

from __future__ import annotations

from typing import Any

from ..wire import codec


def _ranges(view: Any) -> str:
    if view is None:
        return "-"
    return ", ".join(f"{k.replace('.version', '')} {lo}-{hi}" for k, (lo, hi) in sorted(view.supported.items())) or "(none)"


def _apis(n: Any) -> str:
    keys = (codec.API_VERSIONS, codec.UPDATE_FEATURES, codec.BROKER_REGISTRATION, codec.DESCRIBE_CLUSTER)
    parts = []
    for k in keys:
        hi = n.max_version(k)
        parts.append(f"{codec.API_NAMES[k]} {'v' + str(hi) if hi is not None else '-'}")
    return ", ".join(parts)


def observation_lines(ctx: Any) -> list[str]:
    obs = ctx.observation
    active = obs.active_controller if obs.active_controller is not None else "not observed"
    epoch = obs.epoch if obs.epoch is not None else "?"
    head = (f"cluster as observed: id {obs.cluster_id or '?'}, active controller {active}, "
            f"finalized {obs.finalized or 'nothing'} at epoch {epoch}")
    lines = [head]
    for n in obs.nodes:
        fenced = " (fenced, does not answer: not observed)" if n.down else " (fenced)" if n.fenced else ""
        fenced += " (metadata.version not yet known)" if n.catching_up else ""
        lines.append(f"  {n.label:<16} {n.address[0]}:{n.address[1]:<6} {n.software or 'release unknown'}{fenced}")
        lines.append(f"      APIs: {_apis(n)}")
        lines.append(f"      supports: {_ranges(n.newest)}")
        view = n.cluster_view
        if view is not None and "brokers" in view:
            lines.append(f"      DescribeCluster: brokers {view['brokers']}, controller {view['controller_id']}")
        if n.error:
            lines.append(f"      error: {n.error}")
    lines.append(f"profile: {ctx.profile}")
    lines += [f"  evidence: {e}" for e in ctx.target.evidence]
    lines.append(f"tiers: {', '.join(ctx.tiers)}")
    lines += [f"  {tier}: {why}" for tier, why in sorted(ctx.blocked.items()) if tier != "lockstep"]
    lines += [f"  note: {n}" for n in obs.notes]
    return lines


def observation_json(ctx: Any) -> dict[str, Any]:
    obs = ctx.observation
    return {
        "cluster_id": obs.cluster_id, "active_controller": obs.active_controller, "finalized": obs.finalized,
        "epoch": obs.epoch, "profile": ctx.profile, "evidence": list(ctx.target.evidence),
        "tiers": list(ctx.tiers), "blocked": dict(ctx.blocked), "notes": list(obs.notes),
        "nodes": [{"id": n.id, "role": n.role, "address": f"{n.address[0]}:{n.address[1]}", "software": n.software,
                   "fenced": n.fenced, "catching_up": n.catching_up, "error": n.error, "describe_cluster": n.cluster_view,
                   "api_keys": {codec.API_NAMES.get(k, str(k)): list(r) for k, r in n.api_keys.items()},
                   "api_versions": {str(v): {"supported": {k: list(r) for k, r in f.supported.items()},
                                             "finalized": {k: list(r) for k, r in f.finalized.items()},
                                             "epoch": f.epoch} for v, f in n.features.items()}}
                  for n in obs.nodes],
        "state": ctx.state,
    }
