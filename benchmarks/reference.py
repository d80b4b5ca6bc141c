"""Reference throughput: UpdateFeatures validations/s and ApiVersions/s on one core.

    python -m benchmarks.reference [--profile kafka-4.2] [--seconds 3]

Cluster: 3 controllers (registered) + 3 brokers = 6 nodes; each request carries 3 features and
validate_only=true, so the state does not change between iterations.  Ratios are from one run.
"""

from __future__ import annotations

import argparse
import time

from reference_impl import Cluster

UPDATES = [
    {"feature": "metadata.version", "level": 29, "upgrade_type": "UPGRADE"},
    {"feature": "group.version", "level": 1, "upgrade_type": "UPGRADE"},
    {"feature": "transaction.version", "level": 2, "upgrade_type": "UPGRADE"},
]


def build(profile: str) -> Cluster:
    c = Cluster(profile)
    ctrl = [{"id": 3000 + i} for i in range(3)]
    assert c.apply({"op": "format", "release_version": "3.9-IV0", "controllers": ctrl})["error"] == "NONE"
    for i in (1, 2):
        assert c.apply({"op": "register", "role": "controller", "node": 3000 + i})["error"] == "NONE"
    for b in (1, 2, 3):
        assert c.apply({"op": "register", "role": "broker", "node": b})["error"] == "NONE"
    return c


def rate(fn, seconds: float) -> tuple[float, int]:
    n, start = 0, time.process_time()  # CPU time of this process: robust to other load
    deadline = start + seconds
    while True:
        for _ in range(200):
            fn()
        n += 200
        now = time.process_time()
        if now >= deadline:
            return n / (now - start), n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="kafka-4.2")
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args(argv)
    c = build(args.profile)
    upd = {"op": "update_features", "version": 2, "validate_only": True, "updates": UPDATES}
    out = c.apply(upd)
    assert out["error"] == "NONE", out  # the benchmark measures the full (successful) check path
    av = {"op": "api_versions", "node": 1, "version": 4}
    assert c.apply(av)["error"] == "NONE"
    u_rate, u_n = rate(lambda: c.apply(upd), args.seconds)
    a_rate, a_n = rate(lambda: c.apply(av), args.seconds)
    goal = 50_000
    print(f"profile {args.profile}, 6 nodes (3 controllers + 3 brokers), 3 features per request, one core")
    print(f"{'measure':<34} {'ops/s':>12} {'iterations':>11}")
    print(f"{'update_features validations':<34} {u_rate:>12,.0f} {u_n:>11,}")
    print(f"{'api_versions (v4)':<34} {a_rate:>12,.0f} {a_n:>11,}")
    print(f"goal >= {goal:,} validations/s: {'met' if u_rate >= goal else 'NOT met'} "
          f"({u_rate / goal:.2f}x of goal)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
