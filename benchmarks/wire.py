"""Wire throughput against `kfc serve-broker` on loopback, and the suite over the wire vs in process.

    python -m benchmarks.wire [--profile kafka-4.2] [--seconds 3] [--no-suite]

Round trips: one client, one connection per node, one request in flight (what the kafka://
target does).  UpdateFeatures carries 3 features with validate_only=true (the state does not
change); the same work in process (Cluster.apply) gives the ratio.  The suite: `kfc check
--target kafka://…?control=1` vs `--target reference`, ci Hypothesis profile, wall time of one run.
Every number is from one run on this machine; all traffic stays on 127.0.0.1 and every loop is
bounded by --seconds.
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.serving.process import ServeBroker
from conformance.wire import codec
from conformance.wire.client import NodeClient
from reference_impl import Cluster

UPDATES = [("metadata.version", 29), ("group.version", 1), ("transaction.version", 2)]


def _rate(fn: Callable[[], Any], seconds: float) -> float:
    n, start = 0, time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline and n < 10_000_000:
        fn()
        n += 1
    return n / (time.perf_counter() - start)


def round_trips(profile: str, seconds: float) -> list[tuple[str, float, float]]:
    ref = Cluster(profile)
    ref.apply({"op": "format"})
    for b in (1, 2, 3):
        ref.apply({"op": "register", "node": b})
    cmd_uf = {"op": "update_features", "version": 2, "validate_only": True,
              "updates": [{"feature": f, "level": lv, "upgrade_type": "UPGRADE"} for f, lv in UPDATES]}
    cmd_av = {"op": "api_versions", "node": 1, "version": 4}
    with ServeBroker("--profile", profile, "--nodes", "3") as sb:
        broker = NodeClient("127.0.0.1", sb.port(1), "node 1", timeout=5)
        ctl = NodeClient("127.0.0.1", sb.port(sb.info["active_controller"]), "controller", timeout=5)
        av = codec.request_schema(codec.API_VERSIONS, 4)(client_software_name="bench", client_software_version="1")
        uf_schema = codec.request_schema(codec.UPDATE_FEATURES, 2)
        key = uf_schema.__dataclass_fields__["feature_updates"].type.__args__[0]
        uf = uf_schema(timeout=datetime.timedelta(seconds=5), validate_only=True,
                       feature_updates=tuple(key(feature=f, max_version_level=lv, upgrade_type=1) for f, lv in UPDATES))
        assert broker.request(av).error_code == 0 and ctl.request(uf).error_code == 0
        rows = [
            ("ApiVersions v4 (broker 1)", _rate(lambda: broker.request(av), seconds),
             _rate(lambda: ref.apply(cmd_av), seconds)),
            ("UpdateFeatures v2 validate_only (controller)", _rate(lambda: ctl.request(uf), seconds),
             _rate(lambda: ref.apply(cmd_uf), seconds)),
            ("UpdateFeatures v2 validate_only (broker, forwarded)", _rate(lambda: broker.request(uf), seconds),
             _rate(lambda: ref.apply(cmd_uf), seconds)),
        ]
        broker.close()
        ctl.close()
    return rows


def suite_times(profile: str) -> tuple[float, float, int, int]:
    kfc = str(Path(sys.executable).parent / "kfc")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        t0 = time.perf_counter()
        ref_rc = subprocess.run([kfc, "check", "--target", f"reference:{profile}", "--report", f"{tmp}/ref"],
                                check=False, capture_output=True, env=env, timeout=1800).returncode
        t_ref = time.perf_counter() - t0
        with ServeBroker("--profile", profile) as sb:
            t0 = time.perf_counter()
            wire_rc = subprocess.run([kfc, "check", "--target", sb.spec("control=1"), "--report", f"{tmp}/wire"],
                                     check=False, capture_output=True, env=env, timeout=1800).returncode
            t_wire = time.perf_counter() - t0
    return t_ref, t_wire, ref_rc, wire_rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="kafka-4.2")
    ap.add_argument("--seconds", type=float, default=3.0, help="per measurement (bounded loop)")
    ap.add_argument("--no-suite", action="store_true", help="skip the two suite runs (~40 s)")
    args = ap.parse_args(argv)
    print(f"profile {args.profile}, {args.seconds:g} s per measurement, loopback, one run\n")
    print(f"{'round trip':52} {'wire/s':>9} {'in-process/s':>13} {'in-proc÷wire':>13}")
    for name, wire, local in round_trips(args.profile, args.seconds):
        print(f"{name:52} {wire:9.0f} {local:13.0f} {local / wire:12.1f}x")
    if not args.no_suite:
        t_ref, t_wire, ref_rc, wire_rc = suite_times(args.profile)
        print(f"\n{'kfc check (ci)':52} {'wall s':>9}")
        print(f"{'  --target reference:' + args.profile:52} {t_ref:9.1f}   exit {ref_rc}")
        print(f"{'  --target kafka://…?control=1 (serve-broker)':52} {t_wire:9.1f}   exit {wire_rc}")
        print(f"{'  ratio wire ÷ in-process':52} {t_wire / t_ref:9.2f}x  (the wire run skips the "
              "ops it cannot express)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
