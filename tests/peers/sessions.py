"""The processes of one session (a command started with start_new_session=True), read from /proc:
what an interrupted run left behind, and how to clear it.  Shared by the interrupt tests and
benchmarks/interrupts.py."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def session(sid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the live processes (zombies are dead) whose session id is sid."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            out.append((int(d.name), cmd))
    return out


def kill_session(sid: int, rounds: int = 3) -> None:
    """SIGKILL every process of the session, a few rounds (the pyspark daemon moves to a process group
    of its own, so the group cannot be killed at once)."""
    for _ in range(rounds):
        for pid, _ in session(sid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)
