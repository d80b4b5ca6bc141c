"""The live tiers (observe, probe, mutate, register) against real Apache Kafka clusters.

Each cluster is real (`kafka_cluster`: Kafka's StorageTool formats it, `kafka.Kafka` runs each
node; one cluster per test, stopped right after it so that the next one has the cores) and each
check is run the way a user runs it: `kfc check --no-spark --target
"kafka://BOOTSTRAP?controller=CTRL&tiers=…"` in a subprocess.  Every run must CONFORM with zero
findings, and every enabled tier must have executed tests (read from the run's summary.json).  After
the mutate tier the finalized levels are read back over the wire (ApiVersions) and must equal the
levels before the run: the suite put them back.

Releases: 3.9.2 (one combined node, static voters), 4.1.1 (one controller, two brokers), 4.4.0 (one
combined node), and a rolling rehearsal: 3.9.2 (one controller, two brokers) rolled node by node to
4.1.1 with observe+probe at every step, then metadata.version finalized upward (one UpdateFeatures through `kfc target serve` over kafka://) and
all four tiers on the upgraded cluster.  4.4.0's release is inferred (kafka-4.4) from what it advertises."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conformance.realkafka.cluster import HOST, KafkaCluster
from conformance.wire import codec
from conformance.wire.client import NodeClient

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
ALL = ("observe", "probe", "mutate", "register")
MV = "metadata.version"
MV_3_9, MV_4_1 = 21, 27  # Kafka's MetadataVersion levels of 3.9-IV0 and 4.1-IV1
CHECK_TIMEOUT = 900


def finalized(port: int) -> tuple[dict[str, int], int]:
    """One node's finalized levels and epoch, over the wire (ApiVersions v3)."""
    client = NodeClient(HOST, port, f"port {port}", timeout=20.0)
    try:
        schema = codec.request_schema(codec.API_VERSIONS, 3)
        resp = client.request(schema(client_software_name="kfc-test", client_software_version="1"))
    finally:
        client.close()
    assert resp.error_code == 0, resp
    return ({f.name: int(f.max_version_level) for f in resp.finalized_features},
            int(resp.finalized_features_epoch))


def levels(cluster: KafkaCluster) -> dict[int, dict[str, int]]:
    """Every listener's finalized levels (brokers and controllers, a combined node's both)."""
    out = {n.id: finalized(n.client_port)[0] for n in cluster.nodes}
    out.update({-1 - n.id: finalized(n.controller_port)[0] for n in cluster.nodes
                if n.is_broker and n.controller_port is not None})
    return out


def start(factory: Any, **options: Any) -> KafkaCluster:
    """A cluster from the fixture, its start time printed (the figures of docs/real-kafka.md)."""
    t0 = time.monotonic()
    cluster: KafkaCluster = factory(**options)
    print(f"started {options} in {time.monotonic() - t0:.0f} s")
    return cluster


def kfc_check(cluster: KafkaCluster, report: Path, tiers: tuple[str, ...] = ("observe", "probe"),
              *extra: str) -> dict[str, Any]:
    """`kfc check` over kafka:// in a subprocess; asserts CONFORMS, zero findings, tests in every tier."""
    target = f"kafka://{cluster.bootstrap}?controller={cluster.controller_bootstrap}&tiers={','.join(tiers)}"
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kfc", "check", "--no-spark", "--target", target,
                           "--report", str(report), *extra],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=CHECK_TIMEOUT,
                          check=False)
    wall = time.monotonic() - start
    out = proc.stdout + proc.stderr
    summary = json.loads((report / "summary.json").read_text())
    failed = [t["nodeid"] for t in summary["tests"] if t["status"] in ("failed", "unexpectedly-passed")]
    assert not failed, f"{len(failed)} finding(s) on {target}: {failed[:10]}\n{out[-6000:]}"
    assert summary["verdict"] == "CONFORMS", out[-6000:]
    assert proc.returncode == 0, out[-6000:]
    ran: dict[str, int] = {}
    for t in summary["tests"]:
        if t["status"] == "passed":
            tier = t.get("tier") or "examples"
            ran[tier] = ran.get(tier, 0) + 1
    for tier in tiers:
        if tier == "register":  # the stateful model's registrations (it runs in the mutate tier)
            assert summary["coverage"]["ops"].get("register", 0) > 0, summary["coverage"]
        else:
            assert ran.get(tier, 0) > 0, f"tier {tier}: no test executed ({ran})\n{out[-3000:]}"
    if "mutate" in tiers:
        restore = summary.get("restore")
        assert restore is not None and restore["not_restored"] == [], restore
    summary["_ran"], summary["_wall"] = ran, round(wall, 1)
    releases = "+".join(sorted({n.release.version for n in cluster.nodes}))
    print(f"Kafka {releases} tiers {','.join(tiers)}: {ran} in {wall:.0f} s")  # the figures of docs/real-kafka.md
    return summary


def all_tiers_restore_levels(cluster: KafkaCluster, report: Path) -> dict[str, Any]:
    """All four tiers; the levels read back over the wire afterwards equal the levels before."""
    before = levels(cluster)
    summary = kfc_check(cluster, report, ALL)
    assert levels(cluster) == before, "the mutate tier did not put the finalized levels back"
    return summary


# -- (a) 3.9.2, one combined node, static voters --------------------------------------------------------

def test_392_combined_static_voters_conforms_on_every_tier(kafka_cluster: Any, tmp_path: Path) -> None:
    cluster = start(kafka_cluster, version="3.9.2", combined=True, quorum="static")
    assert levels(cluster)[0][MV] == MV_3_9
    all_tiers_restore_levels(cluster, tmp_path / "report")


# -- (b) 4.1.1, one controller and two brokers ----------------------------------------------------------

def test_411_separate_controller_and_two_brokers_conforms_on_every_tier(kafka_cluster: Any,
                                                                         tmp_path: Path) -> None:
    cluster = start(kafka_cluster, version="4.1.1", combined=False, controllers=1, brokers=2)
    assert {n.id for n in cluster.brokers} == {0, 1} and [n.id for n in cluster.controllers] == [3000]
    all_tiers_restore_levels(cluster, tmp_path / "report")


# -- (c) 4.4.0, one combined node ----------------------------------------------------------------------

def test_440_combined_conforms_on_every_tier(kafka_cluster: Any, tmp_path: Path) -> None:
    cluster = start(kafka_cluster, version="4.4.0", combined=True)
    summary = all_tiers_restore_levels(cluster, tmp_path / "report")
    # Inferred from what it advertises (ApiVersions v5, metadata.version 7-33), not named by us.
    assert summary["profile"] == "kafka-4.4", summary.get("profile")
    fenced_broker_left_behind_is_no_finding(cluster, tmp_path / "down")


def fenced_broker_left_behind_is_no_finding(cluster: KafkaCluster, report: Path) -> None:
    """A broker registered by a run that was killed (fenced, nobody listens at its endpoint): the observe
    tier reports no finding about it, the tiers that would need its ranges say why they send nothing."""
    from conformance.targets import make_target

    spec = f"kafka://{cluster.bootstrap}?controller={cluster.controller_bootstrap}"
    t = make_target(spec + "&tiers=observe,register")
    try:
        t.hello()
        out = t.apply({"op": "register", "role": "broker", "node": 77, "software": "kafka-4.4"})
        assert out["error"] == "NONE", out
    finally:
        t.close()
    try:
        proc = subprocess.run([sys.executable, "-m", "kfc", "check", "--no-spark", "--target",
                               spec + "&tiers=observe,probe", "--report", str(report), "-k", "test_observe"],
                              cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=CHECK_TIMEOUT, check=False)
        out_text = proc.stdout + proc.stderr
        summary = json.loads((report / "summary.json").read_text())
        failed = [t["nodeid"] for t in summary["tests"] if t["status"] == "failed"]
        assert proc.returncode == 0 and not failed, f"{failed}\n{out_text[-4000:]}"
        assert sum(t["status"] == "passed" for t in summary["tests"]) > 10, summary["counts"]
        view = json.loads((report / "cluster.json").read_text())
        assert "broker 77" in view["blocked"]["probe"] and "does not answer" in view["blocked"]["probe"], view["blocked"]
        assert "does not answer: not observed" in proc.stdout, proc.stdout[-3000:]
    finally:
        t = make_target(spec + "&tiers=observe,register")
        try:
            t.hello()
            t.apply({"op": "unregister", "node": 77})
        finally:
            t.close()


# -- (d) a rolling upgrade 3.9.2 -> 4.1.1, checked at every step ------------------------------------------

# Per step only the observe and probe tiers' own tests (their invariants and the probe catalogue);
# the stateful model (minutes on a loaded machine) runs once, on the upgraded cluster.
STEP = ("-k", "test_observe or test_probe")


def test_rolling_392_to_411_conforms_at_every_step_then_finalizes_upward(kafka_cluster: Any,
                                                                          tmp_path: Path) -> None:
    cluster = start(kafka_cluster, version="3.9.2", combined=False, controllers=1, brokers=2, quorum="static")
    kfc_check(cluster, tmp_path / "step-0", ("observe", "probe"), *STEP)
    # The controller first, then the brokers, one node at a time; each mixed step is checked.
    for step, node in enumerate([3000, 0, 1], start=1):
        t0 = time.monotonic()
        cluster.roll(node, "4.1.1")
        print(f"rolled node {node} to 4.1.1 in {time.monotonic() - t0:.0f} s")
        assert cluster.node(node).release.version == "4.1.1"
        kfc_check(cluster, tmp_path / f"step-{step}", ("observe", "probe"), *STEP)
    # Every node runs 4.1.1, metadata.version is still 3.9-IV0 (the probes above tried every upgrade
    # with validate_only).  The operator's step: finalize it upward through the suite's kafka:// target.
    assert {lv[MV] for lv in levels(cluster).values()} == {MV_3_9}
    up = upgrade_metadata_version(cluster, MV_4_1)
    assert (up["error"], up["error_code"]) == ("NONE", 0), up
    assert {lv[MV] for lv in levels(cluster).values()} == {MV_4_1}
    all_tiers_restore_levels(cluster, tmp_path / "upgraded")
    assert {lv[MV] for lv in levels(cluster).values()} == {MV_4_1}


def upgrade_metadata_version(cluster: KafkaCluster, level: int) -> dict[str, Any]:
    """One real UpdateFeatures (metadata.version UPGRADE to `level`) through `kfc target serve` over
    kafka:// with the mutate tier: the suite's own write path, driven from the command line."""
    target = f"kafka://{cluster.bootstrap}?controller={cluster.controller_bootstrap}&tiers=observe,probe,mutate"
    requests = [{"id": 0, "type": "hello", "protocol_version": 1},
                {"id": 1, "type": "apply", "command": {"op": "update_features", "updates": [
                    {"feature": MV, "level": level, "upgrade_type": "UPGRADE"}]}}]
    proc = subprocess.run([sys.executable, "-m", "kfc", "target", "serve", "--target", target],
                          input="".join(json.dumps(r) + "\n" for r in requests), cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["type"] for a in answers] == ["hello", "outcome"], answers
    return dict(answers[1]["outcome"])
