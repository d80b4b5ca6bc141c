"""pytest fixtures for real Kafka clusters (a plugin: `pytest_plugins = ("conformance.realkafka.fixtures",)`).

    def test_x(kafka_cluster):
        c = kafka_cluster(version="4.1.1", combined=True)   # started; stopped at teardown
        c.bootstrap, c.api_versions(0), c.roll(0, "4.2.2")

`kafka_cluster` stops its clusters after the test, `kafka_cluster_module` after the module (share
one cluster between a module's tests).  Both then assert that no java process mentions the run
folders any more, and the session ends with the same check over every folder the fixtures made
and every JVM this process started: no JVM is left behind by a test, failing or not."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import jvm
from .cluster import KafkaCluster

_ROOTS: list[Path] = []  # the session's run folders (one per session)


def _leftovers(folders: list[Path]) -> list[int]:
    pids = [p for f in folders for p in jvm.java_processes_under(f)]
    return jvm.wait_gone(sorted(set(pids)), timeout=10.0)


class ClusterFactory:
    """`factory(version="4.1.1", combined=True, **KafkaCluster options)` -> a started cluster."""

    def __init__(self, root: Path):
        self.root = root
        self.made: list[KafkaCluster] = []

    def __call__(self, version: str = "4.1.1", combined: bool = True, **options: Any) -> KafkaCluster:
        run_dir = Path(tempfile.mkdtemp(dir=self.root, prefix=f"kafka-{version}-")) / "run"
        cluster = KafkaCluster(version, combined=combined, run_dir=run_dir, **options)
        self.made.append(cluster)
        return cluster.start()

    def close(self) -> None:
        for cluster in reversed(self.made):
            cluster.stop(grace=10.0)
        left = _leftovers([c.dir for c in self.made])
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert not left, f"JVMs left behind by the cluster fixture: pids {left}"


@pytest.fixture(scope="session")
def _kafka_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kafka-clusters")
    _ROOTS.append(root)
    return root


@pytest.fixture
def kafka_cluster(_kafka_runs: Path) -> Iterator[ClusterFactory]:
    factory = ClusterFactory(_kafka_runs)
    try:
        yield factory
    finally:
        factory.close()


@pytest.fixture(scope="module")
def kafka_cluster_module(_kafka_runs: Path) -> Iterator[ClusterFactory]:
    factory = ClusterFactory(_kafka_runs)
    try:
        yield factory
    finally:
        factory.close()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The session-level check: no JVM of ours (started here, or under a fixture's folder) survives."""
    left = sorted(set(jvm.running()) | set(_leftovers(_ROOTS)))
    if not left:
        return
    jvm.kill_all()
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.write_line(f"FAILED: JVMs left behind at the end of the session (killed now): pids {left}", red=True)
