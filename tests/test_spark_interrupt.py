"""Ctrl-C (and SIGTERM) during a Spark run: `kfc replay` and `kfc generate --spark` stop within 2 s,
say one line ("interrupted"), exit 130, and leave no process (gateway JVM, spark-submit's launcher,
Python workers, the targets they run) and no temporary file behind.

Each case starts kfc in a session of its own and signals it at a moment read from /proc: while
spark-submit launches the JVM, a while after the JVM is up (gateway, SparkContext), or once Python
workers run tasks.  Afterwards no live process of that session may remain."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.peers.sessions import kill_session, session

ROOT = Path(__file__).resolve().parent.parent
STOP_SECONDS = 2.0
JVM_WARNING = "WARNING: Using incubator modules: jdk.incubator.vector"  # the JVM's own start-up line, not kfc's

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")

SLOW_TARGET = Path(__file__).parent / "targets" / "slow_target.py"
SLOW_DELAY = "0.02"  # seconds per apply


def _has(*fragments: str) -> Callable[[list[tuple[int, str]]], bool]:
    return lambda procs: any(f in cmd for _, cmd in procs for f in fragments)


# When to send the signal: (what must be running, seconds to wait after that)
MOMENTS = {
    # spark-submit's scripts exec one another within milliseconds, too fast to catch reliably on a
    # loaded machine: the launch moment is the first sign of any of them, the fresh JVM included.
    "launch": (_has("spark-submit", "spark-class", "org.apache.spark.launcher.Main",
                    "org.apache.spark.deploy.SparkSubmit"), 0.0),
    "jvm": (_has("org.apache.spark.deploy.SparkSubmit"), 1.5),  # the driver JVM boots, pyspark connects
    "job": (_has("pyspark.daemon"), 0.5),  # Python workers run tasks
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conformance.generate import generate_to

    path = tmp_path_factory.mktemp("corpus") / "c.parquet"
    generate_to(path, 200, 7)
    return path


@pytest.fixture
def tmpdir_env(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A TMPDIR of the test's own (kfc's scratch and pyspark's temp files land there) and the child's env."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(ROOT)}
    return tmp, env


def _interrupt(args: list[str], env: dict[str, str], cwd: Path, moment: str, sig: int,
               whole_group: bool) -> tuple[subprocess.CompletedProcess[str], float, list[str], list[tuple[int, str]]]:
    """Run `kfc ARGS`, send SIG at MOMENT (to its process group, as a terminal's Ctrl-C does, or to
    the process alone).  Returns kfc's result, the seconds from the signal to its exit, the command
    lines of its session's processes when the signal went and the processes left after it exited."""
    ready, wait = MOMENTS[moment]
    proc = subprocess.Popen([sys.executable, "-m", "kfc", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        end = time.monotonic() + 120
        while not ready(session(proc.pid)):
            assert proc.poll() is None, f"kfc ended before the {moment!r} moment: {proc.communicate()}"
            assert time.monotonic() < end, f"no {moment!r} moment within 120 s"
            time.sleep(0.02)
        time.sleep(wait)
        running = [cmd for _, cmd in session(proc.pid)]
        assert proc.poll() is None, f"kfc ended before the signal: {proc.communicate()}"
        (os.killpg if whole_group else os.kill)(proc.pid, sig)
        sent = time.monotonic()
        try:
            # communicate() also waits for every process holding kfc's stdout/stderr (a JVM left behind)
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail(f"kfc did not stop within 15 s of the signal; its session: {session(proc.pid)}")
        took = time.monotonic() - sent
        left = session(proc.pid)
    finally:
        kill_session(proc.pid)
        proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), took, running, left


def _check_stopped(run: subprocess.CompletedProcess[str], took: float, left: list[tuple[int, str]],
                   tmp: Path) -> None:
    assert run.returncode == 130, run.stderr[-3000:]
    assert took < STOP_SECONDS, f"stopping took {took:.2f} s"
    assert [line for line in run.stderr.splitlines() if line != JVM_WARNING] == ["interrupted"], run.stderr[-3000:]
    assert not left, f"processes left behind: {left}"
    assert not list(tmp.iterdir()), f"left in TMPDIR: {sorted(p.name for p in tmp.iterdir())}"


@pytest.mark.parametrize(("moment", "sig", "whole_group"), [
    pytest.param("launch", signal.SIGINT, True, id="launch-ctrl-c"),
    pytest.param("jvm", signal.SIGTERM, False, id="jvm-sigterm"),
    pytest.param("job", signal.SIGINT, True, id="job-ctrl-c"),
])
def test_replay_interrupted(corpus: Path, tmpdir_env: tuple[Path, dict[str, str]], tmp_path: Path,
                            moment: str, sig: int, whole_group: bool) -> None:
    tmp, env = tmpdir_env
    target = f"{SLOW_TARGET} {SLOW_DELAY}"
    out = tmp_path / "out"
    run, took, running, left = _interrupt(
        ["replay", str(corpus), "--target", f"subprocess:{sys.executable} {target}", "--master", "local[2]",
         "--out", str(out)], env, tmp_path, moment, sig, whole_group)
    _check_stopped(run, took, left, tmp)
    if moment == "job":  # there were workers, and targets in them, to stop
        assert any("pyspark.daemon" in cmd for cmd in running) and any(str(target) in cmd for cmd in running)
        assert not [p.name for p in (out / "results").iterdir() if p.name.startswith(".")]  # no half-written part
    assert not (out / "summary.json").exists()


@pytest.mark.parametrize(("moment", "sig", "whole_group"), [
    pytest.param("jvm", signal.SIGINT, False, id="jvm-sigint"),
    pytest.param("job", signal.SIGINT, True, id="job-ctrl-c"),
])
def test_generate_interrupted(tmpdir_env: tuple[Path, dict[str, str]], tmp_path: Path, moment: str, sig: int,
                              whole_group: bool) -> None:
    tmp, env = tmpdir_env
    out = tmp_path / "gen"
    run, took, running, left = _interrupt(
        ["generate", "--spark", "--master", "local[2]", "--count", "50000", "--seed", "1", "--out",
         str(out / "c.parquet")], env, tmp_path, moment, sig, whole_group)
    _check_stopped(run, took, left, tmp)
    if moment == "job":
        assert any("pyspark.daemon" in cmd for cmd in running)
    assert not out.exists() or not list(out.iterdir()), "the staging directory or a half-written corpus was left"
