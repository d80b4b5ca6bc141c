"""Run serve-broker (`python -m conformance.serving`) as a child process on free loopback ports
(tests, benchmarks, wire mutant runs)."""

from __future__ import annotations

import collections
import json
import selectors
import subprocess
import sys
import threading
from typing import Any

SERVE_ARGV = [sys.executable, "-m", "conformance.serving"]


class StartTimeout(RuntimeError):
    """serve-broker is still starting after the timeout (a loaded machine), not failing to start."""


class ServeBroker:
    """`with ServeBroker("--profile", "kafka-4.2") as sb:` — sb.port(1), sb.bootstrap, sb.spec(...)."""

    def __init__(self, *args: str, start_timeout: float = 30.0, keep_log_lines: int = 5000):
        self.proc = subprocess.Popen([*SERVE_ARGV, "--port", "0", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        # Drain the request log continuously: a full stderr pipe would stall the server's event loop.
        self.log: collections.deque[str] = collections.deque(maxlen=keep_log_lines)
        self._drain = threading.Thread(target=self._read_log, daemon=True)
        self._drain.start()
        sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        line = self.proc.stdout.readline() if sel.select(start_timeout) else ""
        sel.close()
        if not line:
            running = self.proc.poll() is None
            err = self.stop()[1]
            if running:
                raise StartTimeout(f"serve-broker printed no ports within {start_timeout:g} s")
            raise RuntimeError(f"serve-broker did not start: {err[-2000:]}")
        self.info: dict[str, Any] = json.loads(line)

    def _read_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line.rstrip("\n"))

    def port(self, node: int) -> int:
        return int(self.info["listeners"][str(node)])

    @property
    def bootstrap(self) -> str:
        return str(self.info["bootstrap"])

    def spec(self, options: str = "control=1") -> str:
        return f"kafka://127.0.0.1:{self.port(1)}" + (f"?{options}" if options else "")

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self._drain.join(5)
        return self.proc.returncode, "\n".join(self.log)

    def __enter__(self) -> ServeBroker:  # noqa: PYI034 - subclasses in tests keep the base type
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
