"""The register tier's catalogue: registrations of one synthetic broker (an id above the cluster's)
at the edges of the controller's registration and UpdateFeatures checks, built from the state the
cluster is in (the reference restored from it).  The stateful model draws registrations from
releases; these are the edges a release's ranges never reach:

  fenced-narrow-F       a broker whose range of F stops (or starts) at F's finalized level registers
                        (it stays fenced: nobody heartbeats for it), then an upgrade (a downgrade)
                        of F is probed (validate_only): fenced brokers count too (KIP584-UPD-04)
  min-above-F           a range of F whose minimum is above F's finalized level (KIP584-REG-01)
  omits-F               a registration that leaves out a finalized feature (KIP584-REG-02)
  without-mv            a registration without metadata.version (KIP1022-REG-02 / KIP584-REG-07)
  downgrade-capable-fenced
                        (KIP-1155) a fenced broker whose metadata.version stops one below the
                        downgrade-capable level, then a downgrade is probed (KIP1155-DG-01)

Only entries on which the reference refuses with the rule the entry is about are kept.  Every
accepted registration is unregistered in the same sequence, so the cluster ends as it started."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reference_impl import KRAFT, MV, Cluster, load_profile


@dataclass(frozen=True)
class Registration:
    id: str  # "<kind>-<feature>"
    rule: str  # the rule the reference refuses with
    node: int  # the synthetic broker's id
    commands: tuple[dict[str, Any], ...]


def _reg(node: int, ranges: dict[str, tuple[int, int]]) -> dict[str, Any]:
    return {"op": "register", "role": "broker", "node": node,
            "ranges": {k: [lo, hi] for k, (lo, hi) in sorted(ranges.items())}}


def _candidates(cluster: Cluster, node: int, probe_version: int | None) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(id, rule, commands) before the reference has judged them."""
    fin = cluster.finalized_view()
    base = dict(load_profile(cluster.active_profile.name).supported("broker"))
    for name, level in fin.items():  # the cluster's own levels are inside the base ranges
        lo, hi = base.get(name, (level, level))
        base[name] = (min(lo, level), max(hi, level))
    supported = cluster.controllers[cluster.active_id].ranges()
    unregister = {"op": "unregister", "node": node}
    out: list[tuple[str, str, list[dict[str, Any]]]] = []
    if probe_version is not None:
        for name in sorted(supported, key=lambda n: (n == MV, n)):  # metadata.version's own checks come first
            cur, (lo, hi) = fin.get(name, 0), supported[name]
            # kraft.version lives in the raft layer: left to the stateful model
            if name not in base or name == KRAFT:
                continue
            if cur < hi:  # its range stops at the finalized level: an upgrade is refused
                narrow, level, kind = (min(base[name][0], cur), cur), cur + 1, "UPGRADE"
            elif cur >= 2:  # its range starts at the finalized level: a downgrade is refused
                narrow, level, kind = (cur, max(cur, base[name][1])), cur - 1, "SAFE_DOWNGRADE"
            else:
                continue
            probe = {"op": "update_features", "version": probe_version, "validate_only": True,
                     "updates": [{"feature": name, "level": level, "upgrade_type": kind}]}
            out.append((f"fenced-narrow-{name}", "KIP584-UPD-04",
                        [_reg(node, {**base, name: narrow}), probe, unregister]))
    capable = cluster.active_profile.behaviour.get("kip1155_downgrade_capable_level")
    cur_mv = fin.get(MV, 0)
    if probe_version is not None and cluster.active_profile.behaviour.get("kip1155") and capable \
            and MV in base and base[MV][0] <= cur_mv < capable:
        # KIP-1155: a metadata.version downgrade needs every node to support the downgrade-capable level.
        probe = {"op": "update_features", "version": probe_version, "validate_only": True,
                 "updates": [{"feature": MV, "level": cur_mv - 1, "upgrade_type": "SAFE_DOWNGRADE"}]}
        out.append(("downgrade-capable-fenced", "KIP1155-DG-01",
                    [_reg(node, {**base, MV: (base[MV][0], capable - 1)}), probe, unregister]))
    for name, cur in sorted(fin.items()):
        if name == KRAFT:
            continue
        if cur >= 1:
            above = {**base, name: (cur + 1, max(cur + 1, base[name][1]))}
            out.append((f"min-above-{name}", "KIP584-REG-01", [_reg(node, above)]))
        if cur >= 1 and name != MV:
            out.append((f"omits-{name}", "KIP584-REG-02", [_reg(node, {k: v for k, v in base.items() if k != name})]))
    rule = "KIP1022-REG-02" if cluster.active_profile.behaviour["registration_requires_metadata_version"] \
        else "KIP584-REG-07"
    out.append(("without-mv", rule, [_reg(node, {k: v for k, v in base.items() if k != MV})]))
    return out


def registrations(state: dict[str, Any], profile: str, ids: set[int], probe_version: int | None,
                  per_kind: int = 2) -> list[Registration]:
    """The catalogue for a cluster in `state` whose node ids are `ids`; `probe_version` is the
    UpdateFeatures version (1+) for the validate_only probes, None when none can be sent."""
    start = Cluster(profile)
    start.apply(state)
    node = max([*ids, *start.image.brokers, *start.controllers, 0]) + 1
    out: list[Registration] = []
    kinds: dict[str, int] = {}
    for rid, rule, commands in _candidates(start, node, probe_version):
        kind = rid.split("-")[0]
        if kinds.get(kind, 0) >= per_kind:
            continue
        ref = Cluster(profile)
        ref.apply(state)
        outcomes = [ref.apply(c) for c in commands]
        first = next((o.get("rule") for o in outcomes if o.get("error") != "NONE"), None)
        # Kept only when the refusal it is about is the reference's (earlier steps accepted) and what
        # it registered is unregistered again.
        if first != rule or (commands[-1]["op"] == "unregister" and outcomes[-1].get("error") != "NONE"):
            continue
        kinds[kind] = kinds.get(kind, 0) + 1
        out.append(Registration(rid, rule, node, tuple(commands)))
    return out
