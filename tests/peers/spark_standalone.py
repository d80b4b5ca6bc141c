"""A throw-away Spark standalone cluster on 127.0.0.1 for the tests (not part of the product): one
master and N workers from pyspark's own jars.

pip's pyspark ships `bin/spark-class` but not `sbin/start-master.sh`, so the daemons are started with
`spark-class org.apache.spark.deploy.{master.Master,worker.Worker}`, each in its own process group
(killing the group also kills the executor JVM and its Python workers).  Ports are chosen free,
every directory (work, logs, local) lives under one per-run directory that `stop()` removes.

    with StandaloneCluster(workers=2) as c:
        replay(corpus, "reference", out, master=c.master_url)
        c.kill_worker(0)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Self

HOST = "127.0.0.1"


class ClusterError(RuntimeError):
    """The cluster could not be started; the message is one line and names the log to read."""


def spark_home() -> Path:
    try:
        import pyspark
    except ImportError:
        raise ClusterError("pyspark is not installed: pip install 'kafka-feature-conformance[spark]'") from None
    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def daemon_env(base: Path) -> dict[str, str]:
    """Environment shared by the daemons: loopback only, this interpreter, logs under BASE."""
    env = dict(os.environ)
    env.update({
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOCAL_IP": HOST,
        "SPARK_LOCAL_HOSTNAME": "localhost",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOG_DIR": str(base / "logs"),
        "SPARK_LOCAL_DIRS": str(base / "local"),
        "TMPDIR": str(base / "tmp"),
        # Small daemons: the worker JVM itself does little; executors get their own heap.
        "SPARK_DAEMON_MEMORY": "256m",
    })
    env.pop("SPARK_CONF_DIR", None)
    return env


class StandaloneCluster:
    """Master + `workers` workers (each `cores` cores), as a context manager."""

    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "2g", base_dir: str | Path | None = None,
                 start_timeout: float = 90.0):
        self.n_workers = workers
        self.cores = cores
        self.memory = memory
        self.start_timeout = start_timeout
        self._own_base = base_dir is None
        self.base = Path(base_dir) if base_dir else Path(tempfile.mkdtemp(prefix="kfc-spark-cluster-"))
        self.master_port = 0
        self.webui_port = 0
        self.master: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes] | None] = []
        self._logs: list[Any] = []

    # -- life cycle -------------------------------------------------------------------------------

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.master_port}"

    @property
    def json_url(self) -> str:
        return f"http://{HOST}:{self.webui_port}/json/"

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        for d in ("logs", "local", "tmp", "work"):
            (self.base / d).mkdir(parents=True, exist_ok=True)
        log = open(self.base / "logs" / f"{name}.log", "wb")  # noqa: SIM115 - lives as long as the daemon; closed in stop()
        self._logs.append(log)
        cmd = [str(spark_home() / "bin" / "spark-class"), *args]
        # start_new_session: a process group per daemon, so one killpg reaches its executors too.
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=daemon_env(self.base), cwd=self.base, start_new_session=True)

    def start(self) -> Self:
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            raise ClusterError("java not found on PATH (Spark needs Java 17 or 21)")
        try:
            self._start_master()
            for i in range(self.n_workers):
                self._start_worker(i)
            self.wait_workers(self.n_workers)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_master(self) -> None:
        self.master_port, self.webui_port = free_port(), free_port()
        props = self.base / "master.properties"
        # No REST submission server (it would take a fixed port 6066); the JSON UI endpoint is enough.
        props.write_text("spark.master.rest.enabled false\nspark.ui.killEnabled false\n")
        self.master = self._spawn("master", [
            "org.apache.spark.deploy.master.Master", "--host", HOST, "--port", str(self.master_port),
            "--webui-port", str(self.webui_port), "--properties-file", str(props)])
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.master.poll() is not None:
                raise ClusterError(f"the Spark master exited with code {self.master.returncode}; "
                                   f"see {self.base / 'logs' / 'master.log'}")
            state = self._state()
            if state and state.get("status") == "ALIVE":
                return
            time.sleep(0.3)
        raise ClusterError(f"the Spark master did not come up in {self.start_timeout:.0f} s; "
                           f"see {self.base / 'logs' / 'master.log'}")

    def _start_worker(self, i: int) -> None:
        work = self.base / "work" / f"worker-{i}"
        work.mkdir(parents=True, exist_ok=True)
        proc = self._spawn(f"worker-{i}", [
            "org.apache.spark.deploy.worker.Worker", "--host", HOST, "--port", str(free_port()),
            "--webui-port", str(free_port()), "--cores", str(self.cores), "--memory", self.memory,
            "--work-dir", str(work), self.master_url])
        if i < len(self.workers):
            self.workers[i] = proc
        else:
            self.workers.append(proc)

    def _state(self) -> dict[str, Any] | None:
        try:
            with urllib.request.urlopen(self.json_url, timeout=2) as r:
                data: dict[str, Any] = json.loads(r.read())
                return data
        except (OSError, urllib.error.URLError, ValueError):
            return None

    def alive_workers(self) -> int:
        state = self._state() or {}
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def wait_workers(self, n: int, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout or self.start_timeout)
        while time.monotonic() < deadline:
            for i, w in enumerate(self.workers):
                if w is not None and w.poll() is not None:
                    raise ClusterError(f"Spark worker {i} exited with code {w.returncode}; "
                                       f"see {self.base / 'logs' / f'worker-{i}.log'}")
            if self.alive_workers() >= n:
                return
            time.sleep(0.3)
        raise ClusterError(f"only {self.alive_workers()} of {n} Spark workers registered in "
                           f"{timeout or self.start_timeout:.0f} s; see {self.base / 'logs'}")

    @staticmethod
    def _kill_group(proc: subprocess.Popen[bytes] | None, sig: int = signal.SIGKILL) -> None:
        if proc is None:
            return
        try:
            os.killpg(proc.pid, sig)  # the group is the daemon's own (start_new_session)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def kill_worker(self, i: int) -> None:
        """SIGKILL worker I with its executor and Python workers (a machine that dies, not a clean stop)."""
        self._kill_group(self.workers[i])
        self.workers[i] = None

    def stop(self) -> None:
        for i in range(len(self.workers)):
            self._kill_group(self.workers[i], signal.SIGTERM)
            self._kill_group(self.workers[i])  # anything that ignored TERM (an executor mid-task)
            self.workers[i] = None
        self._kill_group(self.master, signal.SIGTERM)
        self._kill_group(self.master)
        self.master = None
        for log in self._logs:
            log.close()
        self._logs.clear()
        if self._own_base:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
