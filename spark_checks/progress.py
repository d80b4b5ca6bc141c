"""Progress of a Spark job group, polled from pyspark's status tracker on a driver thread: a rich bar on
a terminal, else a line every `every` seconds on stderr (CI logs)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Self

JOIN_SECONDS = 2.0  # the poller wakes every 0.5 s; Ctrl-C must not wait for a stuck poll


class Progress:
    """`with Progress(sc, group, label, enabled):` around the action of job group `group`.  `failed`
    is the most task failures (retried) seen in one poll."""

    def __init__(self, sc: Any, group: str, label: str, enabled: bool, every: float = 10.0):
        self.sc, self.group, self.label, self.enabled, self.every = sc, group, label, enabled, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kfc-progress", daemon=True)
        self.failed = 0

    def __enter__(self) -> Self:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=JOIN_SECONDS)

    def poll(self) -> tuple[int, int, int, int]:
        tracker = self.sc.statusTracker()
        total = done = active = failed = 0
        for jid in tracker.getJobIdsForGroup(self.group):
            job = tracker.getJobInfo(jid)
            for sid in (job.stageIds if job else []):
                st = tracker.getStageInfo(sid)
                if st is not None:
                    total += st.numTasks
                    done += st.numCompletedTasks
                    active += st.numActiveTasks
                    failed += st.numFailedTasks
        return total, done, active, failed

    def _run(self) -> None:
        t0 = time.monotonic()
        if sys.stderr.isatty():
            from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            with Bar(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[info]}"),
                     TimeElapsedColumn(), transient=True) as bar:
                task = bar.add_task(self.label, total=None, info="")
                while not self._stop.wait(0.5) and (polled := self._safe_poll()) is not None:
                    total, done, active, failed = polled
                    bar.update(task, total=total or None, completed=done,
                               info=f"{done}/{total} tasks, {active} running" + (f", {failed} retried" if failed else ""))
            return
        last = 0.0
        while not self._stop.wait(0.5):
            now = time.monotonic() - t0
            if now - last >= self.every:
                last = now
                if (polled := self._safe_poll()) is None:
                    return  # the JVM is gone (stopping, or killed on Ctrl-C): nothing more to say
                total, done, active, failed = polled
                print(f"[kfc] {self.label}: {done}/{total} tasks done, {active} running"
                      + (f", {failed} failed (retried)" if failed else "") + f" — {now:.0f} s",
                      file=sys.stderr, flush=True)

    def _safe_poll(self) -> tuple[int, int, int, int] | None:
        try:
            out = self.poll()
        except Exception:  # noqa: BLE001 - the context is stopping; progress is best effort
            return None
        self.failed = max(self.failed, out[3])
        return out


__all__ = ["Progress"]
