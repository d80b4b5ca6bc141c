"""The probe tier's catalogue: UpdateFeatures requests with validate_only, across the controller's
whole check order, built from the state the cluster is in (the reference restored from it).  Each
probe is sent at every request version the receiving node advertises from v1 (v0 has no
validate_only: it belongs to the mutate tier).  Probes change nothing; after each one the cluster's
levels must be unchanged (KIP584-UPD-09)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reference_impl import MV

UNKNOWN = "kfc.unknown.feature"


@dataclass(frozen=True)
class Probe:
    id: str  # "<kind>-<feature>-v<version>"
    kind: str
    command: dict[str, Any]


def _u(feature: str, level: int, kind: str | None = "UPGRADE") -> dict[str, Any]:
    u: dict[str, Any] = {"feature": feature, "level": level}
    if kind is not None:
        u["upgrade_type"] = kind
    return u


def batches(cluster: Any) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(kind, feature label, updates) of every probe, from the reference cluster's state."""
    p = cluster.active_profile
    fin = cluster.finalized_view()
    supported = cluster.controllers[cluster.active_id].ranges()
    out: list[tuple[str, str, list[dict[str, Any]]]] = []
    names = sorted(set(supported) | set(fin))
    for name in names:
        cur = fin.get(name, 0)
        lo, hi = supported.get(name, (0, 0))
        per = [
            ("negative", [_u(name, -1)]),
            ("too-high", [_u(name, hi + 1)]),
            ("same-level", [_u(name, cur)]),
            ("unknown-type", [_u(name, min(cur + 1, hi) if cur < hi else cur, "UNKNOWN")]),
            ("mismatched-type-up", [_u(name, cur + 1, "SAFE_DOWNGRADE")]),
        ]
        if cur < hi:
            per.append(("upgrade", [_u(name, cur + 1)]))
            per.append(("upgrade-to-max", [_u(name, hi)]))
        if cur > 0:
            per += [("downgrade-no-type", [_u(name, cur - 1)]),
                    ("delete-no-type", [_u(name, 0)]),
                    ("safe-downgrade", [_u(name, cur - 1, "SAFE_DOWNGRADE")]),
                    ("unsafe-downgrade", [_u(name, cur - 1, "UNSAFE_DOWNGRADE")]),
                    ("safe-delete", [_u(name, 0, "SAFE_DOWNGRADE")])]
        if lo > 1:
            per.append(("too-low", [_u(name, lo - 1, "SAFE_DOWNGRADE")]))
        if name == MV:
            # Lossy and lossless metadata.version downgrades: one step, to the minimum, below it.
            below = [v for v in p.mv_levels if v < cur]
            for level in sorted({below[-1] if below else cur, p.mv_minimum, max(p.mv_minimum - 1, 0)}):
                if level < cur:
                    per += [(f"mv-safe-down-to-{level}", [_u(MV, level, "SAFE_DOWNGRADE")]),
                            (f"mv-unsafe-down-to-{level}", [_u(MV, level, "UNSAFE_DOWNGRADE")])]
        feat = p.features.get(name)
        if feat is not None:
            # Dependency violations: a level whose dependencies the current state does not meet.
            for level, spec in sorted(feat.levels.items()):
                unmet = {d: need for d, need in spec.dependencies.items() if fin.get(d, 0) < need}
                if unmet and level != cur:
                    per.append((f"dependency-unmet-{level}", [_u(name, level, "UPGRADE" if level > cur
                                                                     else "SAFE_DOWNGRADE")]))
                    break
        out += [(kind, name, ups) for kind, ups in per]
    out += [
        ("unknown-feature", UNKNOWN, [_u(UNKNOWN, 1)]),
        ("empty-name", "empty", [_u("", 1)]),
        ("duplicate", MV, [_u(MV, fin.get(MV, 0)), _u(MV, fin.get(MV, 0))]),
        ("batch-empty", "none", []),
    ]
    # Mixed batches: one valid entry with one invalid one, in both orders.
    valid = next(([_u(n, fin.get(n, 0))] for n in names if fin.get(n, 0) > 0), None)
    if valid:
        bad = _u(UNKNOWN, 1)
        out += [("batch-valid-then-invalid", "mixed", [*valid, bad]), ("batch-invalid-then-valid", "mixed", [bad, *valid])]
        ups = [_u(n, min(fin.get(n, 0) + 1, supported[n][1])) for n in names if n in supported and n != MV][:3]
        if len(ups) > 1:
            out.append(("batch-several", "several", ups))
    return out


def probes(cluster: Any, versions: list[int]) -> list[Probe]:
    """Every probe at every version in `versions` (those from 1 that the receiving node advertises)."""
    out = []
    for v in versions:
        if v < 1:
            continue
        for kind, label, ups in batches(cluster):
            cmd = {"op": "update_features", "version": v, "validate_only": True, "updates": ups}
            out.append(Probe(f"{kind}-{label or 'empty'}-v{v}", kind, cmd))
    return out
