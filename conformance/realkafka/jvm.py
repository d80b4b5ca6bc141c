"""Kafka JVMs as child processes that cannot outlive us.

Each JVM starts in its own process group (Ctrl-C on the terminal reaches us, not the JVMs, so we
stop them in order), with PR_SET_PDEATHSIG=SIGKILL on Linux (the JVM dies if we are killed hard),
and is listed in `_LIVE` until reaped: an atexit hook SIGKILLs whatever is still listed.  The hook
and signal handlers touch only that dict and os.killpg: no locks."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

# pid -> process group id of every JVM started and not yet reaped
_LIVE: dict[int, int] = {}
_PR_SET_PDEATHSIG = 1

# Small and quick to start: this machine runs several clusters next to test suites.
JVM_FLAGS = ("-Xms32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
             "-Djava.awt.headless=true", "-Dfile.encoding=UTF-8")
TOOL_HEAP = "-Xmx128m"


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc() if sys.platform == "linux" else None


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: one syscall, libc loaded beforehand in the parent.
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    import shutil

    found = shutil.which("java")
    if found is None:
        raise FileNotFoundError("java")
    return found


def spawn(cmd: Sequence[str], *, log: Path, cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start one JVM, stdout and stderr appended to `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                cwd=cwd, start_new_session=True,
                                preexec_fn=_die_with_parent if _LIBC is not None else None)  # noqa: PLW1509 - one syscall
    _LIVE[proc.pid] = proc.pid  # its own session: the group id is its pid
    return proc


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def stop(proc: subprocess.Popen[bytes], grace: float) -> int:
    """SIGTERM the JVM's group, wait `grace` seconds, then SIGKILL; returns its exit code."""
    if proc.poll() is None:
        _signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(proc.pid, signal.SIGKILL)  # also any child it left in its group
    code = proc.wait()
    _LIVE.pop(proc.pid, None)
    return code


def kill_all() -> None:
    """SIGKILL every JVM still listed (atexit, a second signal). No locks, no waiting."""
    for pgid in list(_LIVE.values()):
        _signal_group(pgid, signal.SIGKILL)


def running() -> list[int]:
    """The JVMs this process started that are still alive (the leak check of the tests)."""
    return [pid for pid in list(_LIVE) if _alive(pid)]


def reaped(proc: subprocess.Popen[bytes]) -> None:
    """The JVM ended on its own and was waited for."""
    _LIVE.pop(proc.pid, None)


def run_tool(cmd: Sequence[str], *, log: Path, timeout: float) -> tuple[int, str]:
    """Run a short-lived JVM (StorageTool) to completion; returns (exit code, its output)."""
    proc = spawn(cmd, log=log)
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        code = -1
    finally:
        stop(proc, grace=0)
    return code, log.read_text(errors="replace")


def java_processes_under(folder: Path | str) -> list[int]:
    """Pids of java processes whose command line mentions `folder` (the leak check of the tests)."""
    needle = str(folder).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"java") and any(needle in a for a in argv):
            found.append(int(entry.name))
    return found


def wait_gone(pids: Sequence[int], timeout: float) -> list[int]:
    """The pids still alive after `timeout` seconds (zombies count as gone)."""
    deadline = time.monotonic() + timeout
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if _alive(p)]
        if alive:
            time.sleep(0.05)
    return [p for p in alive if _alive(p)]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


atexit.register(kill_all)
