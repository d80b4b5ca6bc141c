"""Real KRaft clusters from Kafka's jars (`conformance/realkafka/cluster.py`, `kfc cluster up/roll`).

Every cluster here is real: Kafka's StorageTool formats it and `kafka.Kafka` runs each node.  The
releases come from the per-user cache (`kfc kafka fetch`; fetched on first use).  Clusters are
shared per module (each takes 5-30 s to start on a loaded machine)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.realkafka import jvm
from conformance.realkafka.cluster import HOST, ClusterError, KafkaCluster, read_state
from conformance.wire import codec
from conformance.wire.client import NodeClient

ROOT = Path(__file__).resolve().parents[1]
KFC = [sys.executable, "-m", "kfc"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

# Kafka's MetadataVersion: 3.9-IV0 is level 21, 4.1-IV1 (4.1's latest production) is 27.
MV_3_9, MV_4_1 = 21, 27


def _request(port: int, api_key: int, version: int, **fields: Any) -> Any:
    client = NodeClient(HOST, port, f"port {port}", timeout=20.0)
    try:
        return client.request(codec.request_schema(api_key, version)(**fields))
    finally:
        client.close()


def _create_topic(port: int, name: str, broker: int) -> None:
    """CreateTopics v5: one partition, placed on `broker` (so the roll below moves its data)."""
    from datetime import timedelta

    from kio.schema.create_topics.v5 import request as ct
    from kio.static.primitive import i32Timedelta

    topic = ct.CreatableTopic(name=name, num_partitions=-1, replication_factor=-1,  # type: ignore[arg-type]
                              assignments=(ct.CreatableReplicaAssignment(partition_index=0,  # type: ignore[arg-type]
                                                                         broker_ids=(broker,)),),  # type: ignore[arg-type]
                              configs=())
    resp = _request(port, 19, 5, topics=(topic,), timeout=i32Timedelta.parse(timedelta(seconds=20)),
                    validate_only=False)
    assert [codec.error_name(t.error_code) for t in resp.topics] == ["NONE"], resp


def _partition(port: int, name: str) -> Any:
    from kio.schema.metadata.v12 import request as md

    resp = _request(port, codec.METADATA, 12, topics=(md.MetadataRequestTopic(topic_id=None, name=name),),  # type: ignore[arg-type]
                    allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    (topic,) = resp.topics
    assert codec.error_name(topic.error_code) == "NONE", topic
    (partition,) = topic.partitions
    return resp.cluster_id, topic.topic_id, partition


# -- one combined 4.1.1 node ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def combined(kafka_cluster_module: Any) -> KafkaCluster:
    started = time.monotonic()
    cluster: KafkaCluster = kafka_cluster_module(version="4.1.1", combined=True)
    cluster.start_seconds = time.monotonic() - started  # type: ignore[attr-defined]
    return cluster


def test_combined_411_answers_api_versions_with_its_finalized_metadata_version(combined: KafkaCluster) -> None:
    (node,) = combined.nodes
    assert node.roles == ("broker", "controller") and combined.quorum == "dynamic"
    seen = combined.api_versions(node.id)
    assert seen is not None
    assert seen["finalized"]["metadata.version"] == MV_4_1  # formatted at the release's latest production
    assert seen["supported"]["metadata.version"][1] >= MV_4_1
    summary = combined.summary()
    assert summary["bootstrap"] == f"{HOST}:{node.port}" and summary["controllers"] == f"{HOST}:{node.controller_port}"
    assert summary["kafka"] == "4.1.1" and summary["cluster_id"] and summary["dir"] == str(combined.dir)
    # Kafka's own logging (log4j2 on 4.x) writes into the run folder; the JVM's stdout stays quiet.
    assert "Kafka Server started" in node.server_log.read_text()
    assert node.jvm_log.read_text() == ""
    rss = node.rss_kib()
    assert rss is not None and rss < 600_000, rss  # -Xmx256m
    print(f"\n4.1.1 combined: started in {combined.start_seconds:.1f} s, RSS {rss // 1024} MiB")  # type: ignore[attr-defined]


def test_a_binary_downgrade_kafka_refuses_names_the_node_and_its_error(combined: KafkaCluster) -> None:
    """Last on this cluster: 3.9.2 cannot run a cluster finalized at 4.1-IV1; the node's own error
    comes back in one line (and the node is down, its JVM gone)."""
    with pytest.raises(ClusterError) as failed:
        combined.roll(0, "3.9.2", grace=10.0, timeout=120.0)
    message = str(failed.value)
    assert "\n" not in message
    assert message.startswith("node 0 (Kafka 3.9.2) exited with code 1 before it was ready: "), message
    assert str(combined.node(0).server_log) in message and "ERROR" in message, message
    assert "No MetadataVersion with feature level 27" in message  # Kafka's own words, from its log
    assert combined.node(0).rss_kib() is None and jvm.running() == []
    print(f"\n{message}")


# -- 3.9.2 with static voters: one controller, two brokers; then a rolling upgrade of one broker --------

@pytest.fixture(scope="module")
def separate(kafka_cluster_module: Any) -> KafkaCluster:
    started = time.monotonic()
    cluster: KafkaCluster = kafka_cluster_module(version="3.9.2", combined=False, controllers=1, brokers=2,
                                                 quorum="static")
    cluster.start_seconds = time.monotonic() - started  # type: ignore[attr-defined]
    return cluster


def test_392_static_voters_one_controller_two_brokers_come_up(separate: KafkaCluster) -> None:
    assert [(n.id, n.roles) for n in separate.nodes] == [(3000, ("controller",)), (0, ("broker",)), (1, ("broker",))]
    props = (separate.nodes[0].properties).read_text()
    assert f"controller.quorum.voters=3000@{HOST}:{separate.nodes[0].controller_port}" in props
    for n in separate.nodes:
        seen = separate.api_versions(n.id)
        assert seen is not None, n
        assert seen["finalized"].get("metadata.version") == MV_3_9, (n, seen)
        assert seen["supported"]["metadata.version"][1] == MV_3_9  # 3.9.2 knows nothing newer
        assert "kraft.version" not in seen["finalized"]  # static voters: kraft.version 0
    rss = {n.id: n.rss_kib() for n in separate.nodes}
    print(f"\n3.9.2 1c+2b: started in {separate.start_seconds:.1f} s, RSS MiB "  # type: ignore[attr-defined]
          f"{ {k: (v or 0) // 1024 for k, v in rss.items()} }")


def test_roll_one_broker_from_392_to_411_keeps_its_data(separate: KafkaCluster) -> None:
    broker = separate.node(0)
    _create_topic(broker.port or 0, "kept", broker=0)
    cluster_id, topic_id, before = _partition(broker.port or 0, "kept")
    assert before.leader_id == 0
    data = broker.folder / "data"
    meta = (data / "meta.properties").read_text()
    # The broker creates the partition's folder when it applies the metadata delta, which may come
    # after its metadata cache already names it leader.
    deadline = time.monotonic() + 30
    while not (data / "kept-0").is_dir() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (data / "kept-0").is_dir()
    old_pid = broker.proc.pid if broker.proc else None

    started = time.monotonic()
    rolled = separate.roll(0, "4.1.1")
    took = time.monotonic() - started
    assert rolled.release.version == "4.1.1" and rolled.proc is not None and rolled.proc.pid != old_pid
    assert old_pid not in jvm.running()
    seen = separate.api_versions(0)
    assert seen is not None
    # The new binary supports newer metadata versions; the cluster's finalized level did not move.
    assert seen["supported"]["metadata.version"][1] >= MV_4_1 > MV_3_9
    assert seen["finalized"]["metadata.version"] == MV_3_9
    # Same data: the same storage identity, and the partition that lives on broker 0 is led by it again.
    assert (data / "meta.properties").read_text() == meta
    deadline = time.monotonic() + 60
    while True:
        cid, tid, after = _partition(separate.node(1).port or 0, "kept")
        if after.leader_id == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert (cid, tid, after.leader_id) == (cluster_id, topic_id, 0), after
    assert "4.1.1" in " ".join(rolled.proc.args)  # type: ignore[arg-type, union-attr]
    print(f"\nroll 3.9.2 -> 4.1.1 of broker 0: {took:.1f} s, RSS {(rolled.rss_kib() or 0) // 1024} MiB")


def test_roll_refuses_an_unknown_node(separate: KafkaCluster) -> None:
    with pytest.raises(ClusterError, match=r"node 42: not in this cluster \(nodes: 3000, 0, 1\)"):
        separate.roll(42, "4.1.1")


# -- the CLI: kfc cluster up / roll as subprocesses ---------------------------------------------------

def _java_under(folder: Path) -> list[int]:
    return jvm.wait_gone(jvm.java_processes_under(folder), timeout=15.0)


def _start_up(run_dir: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*KFC, "cluster", "up", "--dir", str(run_dir), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)


def _kill(proc: subprocess.Popen[str], run_dir: Path) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for pid in jvm.java_processes_under(run_dir):
        os.kill(pid, signal.SIGKILL)


def test_cli_up_prints_its_json_line_rolls_through_the_run_folder_and_ctrl_c_leaves_no_java(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    up = _start_up(run_dir, "--kafka", "4.1.1", "--release-version", "3.9-IV0")
    try:
        assert up.stdout is not None
        line = up.stdout.readline()  # blocks until the cluster is ready (or up ended)
        assert line, up.stderr.read() if up.stderr else ""
        info = json.loads(line)
        assert set(info) == {"bootstrap", "controllers", "kafka", "cluster_id", "dir", "nodes"}
        assert info["kafka"] == "4.1.1" and info["dir"] == str(run_dir)
        (node,) = info["nodes"]
        assert node["id"] == 0 and node["roles"] == ["broker", "controller"]
        assert info["bootstrap"] == f"{HOST}:{node['port']}"
        resp = _request(node["port"], codec.API_VERSIONS, 3, client_software_name="kfc", client_software_version="1")
        finalized = {f.name: int(f.max_version_level) for f in resp.finalized_features}
        assert finalized["metadata.version"] == MV_3_9  # --release-version 3.9-IV0 reached StorageTool
        assert read_state(run_dir)["pid"] == up.pid

        # roll: the up process restarts the node; an unknown node is one line and exit 1.
        bad = subprocess.run([*KFC, "cluster", "roll", "5", "--kafka", "4.1.1", "--dir", str(run_dir)],
                             check=False, capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120)
        assert bad.returncode == 1 and bad.stderr.strip().splitlines() == [
            f"error: node 5: not in the cluster of {run_dir} (nodes: 0)"], bad.stderr
        # A binary downgrade Kafka allows: the cluster is finalized at 3.9-IV0, so 3.9.2 can run it.
        roll = subprocess.run([*KFC, "cluster", "roll", "0", "--kafka", "3.9.2", "--dir", str(run_dir)],
                              check=False, capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=240)
        assert roll.returncode == 0, roll.stderr
        back = json.loads(roll.stdout)
        assert back["id"] == 0 and back["kafka"] == "3.9.2" and back["pid"] != node.get("pid")
        resp = _request(node["port"], codec.API_VERSIONS, 3, client_software_name="kfc", client_software_version="1")
        supported = {f.name: int(f.max_version) for f in resp.supported_features}
        assert supported["metadata.version"] == MV_3_9  # the 3.9.2 binary answers now
        assert read_state(run_dir)["nodes"][0]["pid"] == back["pid"]
        assert jvm.java_processes_under(run_dir) == [back["pid"]]

        up.send_signal(signal.SIGINT)
        _, err = up.communicate(timeout=60)
        assert up.returncode == 130, err
        assert err.strip().splitlines()[-1] == "interrupted"
        assert _java_under(run_dir) == []
        assert not (run_dir / "cluster.json").exists()
    finally:
        _kill(up, run_dir)


def _wait_for_java(run_dir: Path, proc: subprocess.Popen[str], timeout: float = 120) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        found = jvm.java_processes_under(run_dir)
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"no JVM under {run_dir} (up exited {proc.returncode})")


def test_cli_up_sigterm_while_starting_stops_every_jvm(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    up = _start_up(run_dir, "--kafka", "4.1.1")
    try:
        _wait_for_java(run_dir, up)
        up.send_signal(signal.SIGTERM)
        out, err = up.communicate(timeout=60)
        assert up.returncode == 0 and out == "", (up.returncode, err)
        assert err.strip().splitlines()[-1] == "stopped"
        assert _java_under(run_dir) == []
    finally:
        _kill(up, run_dir)


def test_jvms_die_with_a_killed_parent(tmp_path: Path) -> None:
    """SIGKILL gives the up process no chance to clean up: PR_SET_PDEATHSIG takes its JVMs down."""
    run_dir = tmp_path / "run"
    up = _start_up(run_dir, "--kafka", "4.1.1")
    try:
        pids = _wait_for_java(run_dir, up)
        up.kill()
        up.wait()
        assert jvm.wait_gone(pids, timeout=15.0) == []
    finally:
        _kill(up, run_dir)


@pytest.mark.parametrize(("args", "message"), [
    (["--kafka", "9.9.9"], ("error: Kafka 9.9.9: Maven could not resolve the release: "
                            "org.apache.kafka:kafka_2.13:jar:9.9.9 is not on Maven Central (is the version right?)")),
    (["--kafka", "4.1"], "error: '4.1' is not a Kafka release version (like 4.1.1)"),
    (["--kafka", "3.6.2"], "error: Kafka 3.6.2: only KRaft releases 3.7.0 and later are supported"),
    (["--kafka", "3.8.1", "--standalone"], ("error: Kafka 3.8.1 has no dynamic quorum (KIP-853 came in 3.9): "
                                            "use static voters")),
    (["--kafka", "4.1.1", "--combined", "--controllers", "1"], "error: --combined and --controllers exclude each other"),
    (["--kafka", "4.1.1", "--feature", "nope"], "error: --feature nope: expected FEATURE=LEVEL (like kraft.version=1)"),
])
def test_cli_up_bad_input_is_one_line_and_exit_1(tmp_path: Path, args: list[str], message: str) -> None:
    run_dir = tmp_path / "run"
    proc = subprocess.run([*KFC, "cluster", "up", "--dir", str(run_dir), *args], check=False, capture_output=True, text=True,
                          env=ENV, cwd=ROOT, timeout=120)
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("fetching ")]
    assert (proc.returncode, lines, proc.stdout) == (1, [message], "")
    assert _java_under(run_dir) == []


def test_cli_up_refuses_a_format_kafka_refuses(tmp_path: Path) -> None:
    """A metadata.version StorageTool rejects: Kafka's own message, one line, no JVM left."""
    run_dir = tmp_path / "run"
    proc = subprocess.run([*KFC, "cluster", "up", "--kafka", "4.1.1", "--dir", str(run_dir), "--release-version",
                           "9.9-IV9"], check=False, capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=180)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: Kafka 4.1.1 StorageTool format failed: node 0:") and "9.9-IV9" in lines[0]
    assert "Traceback" not in proc.stderr
    assert _java_under(run_dir) == []


def test_cli_roll_without_a_running_cluster(tmp_path: Path) -> None:
    proc = subprocess.run([*KFC, "cluster", "roll", "0", "--kafka", "4.1.1", "--dir", str(tmp_path)],
                          check=False, capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=60)
    assert (proc.returncode, proc.stderr.strip()) == (
        1, f"error: {tmp_path}: no running cluster there (no cluster.json; start one with `kfc cluster up --dir`)")


def test_a_run_folder_holding_a_cluster_is_refused(tmp_path: Path) -> None:
    (tmp_path / "node-0").mkdir()
    with pytest.raises(ClusterError, match="already holds a cluster"):
        KafkaCluster("4.1.1", run_dir=tmp_path).start()


def test_the_session_fails_when_a_jvm_is_left_behind(tmp_path: Path) -> None:
    """The plugin's session check: a test that starts a JVM and leaves it makes the run fail."""
    (tmp_path / "Sleep.java").write_text(
        "class Sleep { public static void main(String[] a) throws Exception { Thread.sleep(120000); } }\n")
    (tmp_path / "test_leaky.py").write_text(
        "from pathlib import Path\nfrom conformance.realkafka import jvm\n\n"
        "def test_leaves_a_jvm(tmp_path):\n"
        f"    jvm.spawn(['java', {str(tmp_path / 'Sleep.java')!r}], log=tmp_path / 'out.log')\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conformance.realkafka.fixtures",
                           "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path / "test_leaky.py")],
                          check=False, capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1, proc.stdout
    assert "1 passed" in proc.stdout and "FAILED: JVMs left behind at the end of the session" in proc.stdout
    assert _java_under(tmp_path) == []  # and it was killed
