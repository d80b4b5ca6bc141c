"""The same replay job on a real Spark standalone cluster (a master and two workers on 127.0.0.1, from
pyspark's own jars), with the project's code shipped as a zip; then one worker is killed mid-replay."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.generate import generate_to
from spark_checks import replay_job
from spark_checks.session import SparkRun
from tests.peers.spark_standalone import StandaloneCluster

SLOW_TARGET = Path(__file__).parent / "targets" / "slow_target.py"
SLOW_DELAY = "0.002"  # seconds per apply


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    c = StandaloneCluster(workers=2, cores=1, memory="2g")
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def spark(cluster: StandaloneCluster) -> Iterator[SparkRun]:
    run = SparkRun(cluster.master_url, app_name="kfc standalone tests", conf={
        "spark.executor.memory": "1g", "spark.executor.cores": "1", "spark.cores.max": "2"})
    run.start()
    try:
        yield run
    finally:
        run.stop()


def test_replay_on_standalone_cluster(spark: SparkRun, cluster: StandaloneCluster, tmp_path: Path) -> None:
    assert cluster.alive_workers() == 2
    # The executors import the shipped zip, not the checkout (the zip comes first on their sys.path).
    # (a lambda: pickled by value, this test module is not importable there)
    where = set(spark.sc.parallelize(range(4), 4).map(lambda _: __import__("spark_checks").__file__).collect())
    assert where and all("kfc-code.zip" in w for w in where), where
    corpus = tmp_path / "c.parquet"
    generate_to(corpus, 300, 21)
    s = replay_job.replay(corpus, "reference", tmp_path / "out", spark=spark, progress=False)
    assert s["master"] == cluster.master_url
    assert s["by_status"]["pass"] == 300 and s["rows_in"] == s["rows_out"] == 300
    s = replay_job.replay(corpus, "mutant:broker-support-skips-fenced", tmp_path / "out2", spark=spark, progress=False)
    assert s["by_status"]["diverged"] > 0 and s["rows_out"] == 300


def test_worker_killed_mid_replay(spark: SparkRun, cluster: StandaloneCluster, tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    n = 300
    generate_to(corpus, n, 22)
    script = f"{SLOW_TARGET} {SLOW_DELAY}"
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["summary"] = replay_job.replay(corpus, f"subprocess:{sys.executable} {script}", tmp_path / "out",
                                        spark=spark, partitions=10, progress=True)
        except BaseException as e:  # noqa: BLE001 - reported by the test thread
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    tracker = spark.sc.statusTracker()
    deadline = time.monotonic() + 90
    killed_at = None
    while time.monotonic() < deadline and t.is_alive():
        stages = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
        done = [st for st in stages if st is not None and st.numCompletedTasks >= 1 and st.numTasks == 10]
        if done:
            killed_at = (done[0].numCompletedTasks, done[0].numTasks)
            cluster.kill_worker(0)
            break
        time.sleep(0.2)
    t.join(timeout=150)
    assert not t.is_alive(), "the replay did not finish after the worker was killed"
    assert killed_at is not None and killed_at[0] < killed_at[1], f"the kill did not land mid-job: {killed_at}"
    assert "error" not in box, box.get("error")
    s = box["summary"]
    assert s["rows_in"] == s["rows_out"] == n and s["complete"]
    assert s["by_status"]["pass"] == n
    assert cluster.alive_workers() <= 1 or cluster.workers[0] is None
