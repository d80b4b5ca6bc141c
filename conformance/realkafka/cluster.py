"""A real KRaft cluster on 127.0.0.1, run from a release's jars (`releases.fetch`).

Every node is formatted by Kafka's own StorageTool (`kafka.tools.StorageTool format`) and runs as
`java kafka.Kafka node.properties` with a small heap, its data and logs under the run folder:

    RUN_DIR/cluster.json           the running cluster (written by the process that owns the JVMs)
    RUN_DIR/control/               roll requests from other processes (`request_roll`)
    RUN_DIR/log4j2.properties      4.x logging (log4j2);  RUN_DIR/log4j.properties: 3.x (reload4j)
    RUN_DIR/node-ID/node.properties, data/, logs/server.log, jvm.log (stdout+stderr), format.log

Node ids follow Kafka's test kit: brokers 0.., separate controllers 3000..; combined nodes 0...
Quorums: static voters (`controller.quorum.voters`, every release) or dynamic (KIP-853, 3.9+:
`controller.quorum.bootstrap.servers`, formatted `--standalone` or `--initial-controllers`)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from . import jvm
from .releases import FetchError, Release, fetch, from_home

HOST = "127.0.0.1"
NODE_HEAP = "-Xmx256m"
STATE = "cluster.json"
CONTROL = "control"
DEFAULT_TIMEOUT = 180.0

# What a throwaway cluster needs: replication factor 1 everywhere, little memory, few threads.
SMALL = {
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "default.replication.factor": "1",
    "min.insync.replicas": "1",
    "num.partitions": "1",
    "group.initial.rebalance.delay.ms": "0",
    "log.cleaner.dedupe.buffer.size": str(4 << 20),
    "log.cleaner.threads": "1",
    "num.network.threads": "1",
    "num.io.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
    "background.threads": "2",
}

LOG4J2 = """\
# Kafka 4.x node logs (log4j2), one file per node: -Dkafka.logs.dir=RUN_DIR/node-ID/logs
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = ${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
"""

LOG4J = """\
# Kafka 3.x node logs (reload4j), one file per node: -Dkafka.logs.dir=RUN_DIR/node-ID/logs
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=${kafka.logs.dir}/server.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
"""


class ClusterError(Exception):
    """The cluster could not be formatted, started, rolled or reached; one line for the user."""


def release_of(version: str | None = None, home: str | Path | None = None,
               progress: Callable[[str], None] | None = None) -> Release:
    """The release to run: an installation (`home`) or VERSION from the cache / Maven Central."""
    try:
        if home is not None:
            rel = from_home(home)
            if version is not None and version != rel.version:
                raise ClusterError(f"--kafka {version} but --kafka-home {home} holds Kafka {rel.version}")
            return rel
        if version is None:
            raise ClusterError("give a Kafka release: --kafka VERSION or --kafka-home DIR")
        return fetch(version, progress)
    except FetchError as e:
        raise ClusterError(str(e)) from None


def _at_least(release: Release, major: int, minor: int) -> bool:
    parts = release.version.split(".")
    return (int(parts[0]), int(parts[1])) >= (major, minor)


def check_input(version: str | None, quorum: str | None, features: Iterable[str]) -> None:
    """A cluster's bad input, told before anything is fetched: a dynamic quorum on a release without
    KIP-853, a feature that is not FEATURE=LEVEL (an unparsable version is the fetch's to refuse)."""
    parts = (version or "").split(".")
    if quorum == "dynamic" and len(parts) > 1 and parts[0].isdigit() and parts[1].isdigit() \
            and (int(parts[0]), int(parts[1])) < (3, 9):
        raise ClusterError(f"Kafka {version} has no dynamic quorum (KIP-853 came in 3.9): use static voters")
    for f in features:
        if "=" not in f:
            raise ClusterError(f"--feature {f}: expected FEATURE=LEVEL (like kraft.version=1)")


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _kafka_uuid() -> str:
    """A directory id as Kafka writes one (Uuid.toString: 16 random bytes, URL-safe base64, no
    padding; Uuid.randomUuid never hands out an id whose text starts with '-')."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


@dataclass
class Node:
    id: int
    roles: tuple[str, ...]  # ("broker",), ("controller",) or ("broker", "controller")
    port: int | None  # the PLAINTEXT (client) listener, brokers only
    controller_port: int | None  # the CONTROLLER listener, controllers only
    folder: Path
    release: Release
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles

    @property
    def properties(self) -> Path:
        return self.folder / "node.properties"

    @property
    def server_log(self) -> Path:
        return self.folder / "logs" / "server.log"

    @property
    def jvm_log(self) -> Path:
        return self.folder / "jvm.log"

    @property
    def client_port(self) -> int:
        """Where ApiVersions is asked: the broker listener, else the controller listener."""
        port = self.port if self.port is not None else self.controller_port
        assert port is not None
        return port

    def rss_kib(self) -> int | None:
        """The JVM's resident memory now (Linux), None when not running."""
        if self.proc is None or self.proc.poll() is not None:
            return None
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            return None
        return None

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "roles": list(self.roles), "port": self.client_port}
        if self.is_broker and self.controller_port is not None:
            out["controller_port"] = self.controller_port
        out["kafka"] = self.release.version
        if self.proc is not None and self.proc.poll() is None:
            out["pid"] = self.proc.pid
        return out


def _log_args(release: Release, run_dir: Path) -> list[str]:
    if release.line >= 4:
        return [f"-Dlog4j2.configurationFile={run_dir / 'log4j2.properties'}"]
    return [f"-Dlog4j.configuration=file:{run_dir / 'log4j.properties'}"]


def _java_cmd(release: Release, run_dir: Path, logs: Path, heap: str, main: str, *args: str) -> list[str]:
    try:
        java = jvm.java()
    except FileNotFoundError:
        raise ClusterError("java not found: install a JDK 17 (e.g. `apt-get install openjdk-17-jdk-headless`)") \
            from None
    cp = os.pathsep.join(str(p) for p in release.classpath)
    if not cp:
        raise ClusterError(f"Kafka {release.version}: no jars in {release.libs}")
    return [java, heap, *jvm.JVM_FLAGS, f"-Dkafka.logs.dir={logs}", *_log_args(release, run_dir),
            "-cp", cp, main, *args]


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return " | ".join(ln.strip() for ln in text[-lines:] if ln.strip())


def _tool_message(text: str) -> str:
    """What a Kafka tool said: its error line, without the stack trace under it."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith("at ") and not (ln.startswith("...") and ln.endswith("more"))]
    thrown = [ln for ln in lines if "Exception" in ln.split(":", 1)[0] or ln.startswith("Exception in thread")]
    line = thrown[0] if thrown else (lines[-1] if lines else "")
    return line.removeprefix('Exception in thread "main" ')[:400]


def explain(node: Node) -> str:
    """The most telling lines a dead or stuck node left: its last ERROR, else its JVM output."""
    try:
        log = node.server_log.read_text(errors="replace").splitlines()
    except OSError:
        log = []
    errors = [i for i, ln in enumerate(log) if "] ERROR " in ln or "] FATAL " in ln]
    if errors:
        at = errors[-1]
        said = log[at].strip()
        # "ERROR Exiting Kafka due to fatal exception" says why on the next line (the exception).
        following = log[at + 1].strip() if at + 1 < len(log) else ""
        if following and not following.startswith(("[", "at ")):
            said += " | " + following
        return f"{node.server_log}: {said[:500]}"
    jvm_tail = _tail(node.jvm_log)
    if jvm_tail:
        return f"{node.jvm_log}: {jvm_tail[:400]}"
    return f"{node.server_log}: {_tail(node.server_log)[:400] or '(empty)'}"


def api_versions(port: int, label: str, timeout: float = 3.0) -> dict[str, Any] | None:
    """ApiVersions v3 to one listener: {"supported": {f: (min, max)}, "finalized": {f: level}, "epoch"},
    None when the node does not answer (yet)."""
    from conformance.wire import codec
    from conformance.wire.client import NodeClient, WireError

    client = NodeClient(HOST, port, label, timeout=timeout, client_id="kfc-cluster")
    try:
        schema = codec.request_schema(codec.API_VERSIONS, 3)
        resp = client.request(schema(client_software_name="kfc", client_software_version="1"))
    except WireError:
        return None
    finally:
        client.close()
    if resp.error_code != 0:
        return None
    return {"supported": {f.name: (int(f.min_version), int(f.max_version)) for f in resp.supported_features},
            "finalized": {f.name: int(f.max_version_level) for f in resp.finalized_features},
            "epoch": int(resp.finalized_features_epoch)}


class KafkaCluster:
    """Format and run a KRaft cluster; a context manager (stopped on exit, every JVM gone).

    `KafkaCluster("4.1.1")` is one combined node; `KafkaCluster("3.9.2", combined=False,
    controllers=1, brokers=2)` separates them.  `quorum` is "static" or "dynamic" (default: dynamic
    from 4.0, static before)."""

    def __init__(self, release: Release | str, *, brokers: int = 1, controllers: int = 1, combined: bool = True,
                 release_version: str | None = None, features: Mapping[str, int] | Iterable[str] = (),
                 quorum: str | None = None, run_dir: str | Path | None = None,
                 config: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT,
                 progress: Callable[[str], None] | None = None):
        self.release = release_of(release, progress=progress) if isinstance(release, str) else release
        if brokers < 1 or (not combined and controllers < 1):
            raise ClusterError("a cluster needs at least one broker and one controller")
        if quorum is None:
            quorum = "dynamic" if self.release.line >= 4 else "static"
        if quorum not in ("static", "dynamic"):
            raise ClusterError(f"quorum {quorum!r}: static or dynamic")
        self.features = ([f"{k}={v}" for k, v in features.items()] if isinstance(features, Mapping)
                         else list(features))
        check_input(self.release.version, quorum, self.features)
        self.combined, self.quorum = combined, quorum
        self.n_brokers, self.n_controllers = brokers, (brokers if combined else controllers)
        self.release_version = release_version
        self.config = dict(config or {})
        self.timeout = timeout
        self.say = progress or (lambda _line: None)
        self._own_dir = run_dir is None
        self.dir = Path(tempfile.mkdtemp(prefix="kfc-cluster-") if run_dir is None else run_dir).resolve()
        self.cluster_id: str | None = None
        self.nodes: list[Node] = []
        self.started = False

    # -- addresses ------------------------------------------------------------------------------------
    @property
    def brokers(self) -> list[Node]:
        return [n for n in self.nodes if n.is_broker]

    @property
    def controllers(self) -> list[Node]:
        return [n for n in self.nodes if n.is_controller]

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{HOST}:{n.port}" for n in self.brokers)

    @property
    def controller_bootstrap(self) -> str:
        return ",".join(f"{HOST}:{n.controller_port}" for n in self.controllers)

    def addresses(self) -> dict[str, str]:
        return {"bootstrap": self.bootstrap, "controllers": self.controller_bootstrap}

    def node(self, node_id: int) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise ClusterError(f"node {node_id}: not in this cluster (nodes: {', '.join(str(n.id) for n in self.nodes)})")

    def summary(self) -> dict[str, Any]:
        return {"bootstrap": self.bootstrap, "controllers": self.controller_bootstrap,
                "kafka": self.release.version, "cluster_id": self.cluster_id, "dir": str(self.dir),
                "nodes": [n.describe() for n in self.nodes]}

    def api_versions(self, node_id: int) -> dict[str, Any] | None:
        n = self.node(node_id)
        return api_versions(n.client_port, f"node {n.id}")

    # -- lifecycle ------------------------------------------------------------------------------------
    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> Self:
        if self.started:
            return self
        if (self.dir / STATE).exists() or any(self.dir.glob("node-*")):
            raise ClusterError(f"{self.dir} already holds a cluster: give an empty or new --dir")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.started = True
        try:
            self._layout()
            self._format()
            self.say(f"starting {len(self.nodes)} Kafka {self.release.version} node(s) in {self.dir} ...")
            for n in sorted(self.nodes, key=lambda n: not n.is_controller):
                self._launch(n)
            self._wait_ready(self.nodes)
            self.write_state()
        except BaseException:
            self.stop(grace=0)
            raise
        return self

    def _layout(self) -> None:
        (self.dir / "log4j2.properties").write_text(LOG4J2)
        (self.dir / "log4j.properties").write_text(LOG4J)
        specs: list[tuple[int, tuple[str, ...]]]
        if self.combined:
            specs = [(i, ("broker", "controller")) for i in range(self.n_brokers)]
        else:
            specs = [(3000 + i, ("controller",)) for i in range(self.n_controllers)]
            specs += [(i, ("broker",)) for i in range(self.n_brokers)]
        ports = iter(_free_ports(sum(len(roles) for _, roles in specs)))
        for node_id, roles in specs:
            self.nodes.append(Node(node_id, roles, next(ports) if "broker" in roles else None,
                                   next(ports) if "controller" in roles else None,
                                   self.dir / f"node-{node_id}", self.release))
        self.dir_ids = {n.id: _kafka_uuid() for n in self.controllers}
        voters = ",".join(f"{n.id}@{HOST}:{n.controller_port}" for n in self.controllers)
        for n in self.nodes:
            (n.folder / "logs").mkdir(parents=True, exist_ok=True)
            listeners = []
            if n.is_broker:
                listeners.append(f"PLAINTEXT://{HOST}:{n.port}")
            if n.is_controller:
                listeners.append(f"CONTROLLER://{HOST}:{n.controller_port}")
            props = {"process.roles": ",".join(n.roles), "node.id": str(n.id),
                     "controller.listener.names": "CONTROLLER",
                     "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                     "listeners": ",".join(listeners), "log.dirs": str(n.folder / "data")}
            if n.is_broker:
                props["inter.broker.listener.name"] = "PLAINTEXT"
            if self.quorum == "static":
                props["controller.quorum.voters"] = voters
            else:
                props["controller.quorum.bootstrap.servers"] = self.controller_bootstrap
            props.update(SMALL)
            props.update(self.config)
            n.properties.write_text("".join(f"{k}={v}\n" for k, v in props.items()))

    def _format_args(self, n: Node) -> list[str]:
        args = ["format", "-t", str(self.cluster_id), "-c", str(n.properties)]
        if self.release_version:
            args += ["--release-version", self.release_version]
        for f in self.features:
            args += ["--feature", f]
        if self.quorum == "dynamic" and n.is_controller:
            if len(self.controllers) == 1:
                args.append("--standalone")
            else:
                args += ["--initial-controllers", ",".join(
                    f"{c.id}@{HOST}:{c.controller_port}:{self.dir_ids[c.id]}" for c in self.controllers)]
        return args

    def _format(self) -> None:
        rel = self.release
        cmd = _java_cmd(rel, self.dir, self.dir, jvm.TOOL_HEAP, "kafka.tools.StorageTool", "random-uuid")
        code, out = jvm.run_tool(cmd, log=self.dir / "random-uuid.log", timeout=self.timeout)
        lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
        if code != 0 or not lines:
            raise ClusterError(f"Kafka {rel.version} StorageTool random-uuid failed (exit {code}): "
                               f"{' | '.join(lines[-3:])[:400]}")
        self.cluster_id = lines[-1]
        self.say(f"formatting {len(self.nodes)} node(s) with Kafka {rel.version}'s StorageTool "
                 f"(cluster id {self.cluster_id}) ...")
        # One JVM per node, all at once: each is mostly start-up time.
        running = []
        for n in self.nodes:
            log = n.folder / "format.log"
            cmd = _java_cmd(rel, self.dir, n.folder / "logs", jvm.TOOL_HEAP, "kafka.tools.StorageTool",
                            *self._format_args(n))
            running.append((n, log, jvm.spawn(cmd, log=log)))
        deadline = time.monotonic() + self.timeout
        failed = []
        for n, log, proc in running:
            try:
                code = proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                code = -1
            jvm.stop(proc, grace=0)
            if code != 0:
                said = _tool_message(log.read_text(errors="replace")) if log.exists() else ""
                failed.append(f"node {n.id}: {said or f'exit {code}'}")
        if failed:
            raise ClusterError(f"Kafka {rel.version} StorageTool format failed: {failed[0]}")

    def _launch(self, n: Node) -> None:
        cmd = _java_cmd(n.release, self.dir, n.folder / "logs", NODE_HEAP, "kafka.Kafka", str(n.properties))
        n.proc = jvm.spawn(cmd, log=n.jvm_log)

    def _ready(self, n: Node) -> bool:
        seen = api_versions(n.client_port, f"node {n.id}", timeout=2.0)
        if seen is None:
            return False
        # A broker opens its client listener once it caught up and was unfenced; it then names the
        # finalized metadata.version.  A controller answering at all is enough.
        return not n.is_broker or "metadata.version" in seen["finalized"]

    def _wait_ready(self, nodes: list[Node], timeout: float | None = None) -> None:
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        waiting = list(nodes)
        while waiting:
            for n in list(waiting):
                assert n.proc is not None
                code = n.proc.poll()
                if code is not None:
                    jvm.reaped(n.proc)
                    self._own_dir = False  # keep the logs the message points to
                    raise ClusterError(f"node {n.id} (Kafka {n.release.version}) exited with code {code} before "
                                       f"it was ready: {explain(n)}")
                if self._ready(n):
                    waiting.remove(n)
            if waiting:
                if time.monotonic() > deadline:
                    n = waiting[0]
                    self._own_dir = False
                    raise ClusterError(f"node {n.id} (Kafka {n.release.version}) not ready after "
                                       f"{timeout:g} s: {explain(n)}")
                time.sleep(0.25)

    def stop(self, grace: float = 20.0) -> None:
        """Stop every JVM: brokers first (their controlled shutdown needs the controllers), then the
        controllers; SIGTERM, `grace` seconds, then SIGKILL.  A run folder of our own is removed."""
        for group in ([n for n in self.nodes if not n.is_controller], [n for n in self.nodes if n.is_controller]):
            procs = [n.proc for n in group if n.proc is not None]
            for p in procs:
                if p.poll() is None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(p.pid, signal.SIGTERM)
            deadline = time.monotonic() + grace
            for p in procs:
                jvm.stop(p, grace=max(deadline - time.monotonic(), 0))
        self.started = False
        state = self.dir / STATE
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        elif state.exists():
            with contextlib.suppress(OSError):
                state.unlink()

    def roll(self, node_id: int, release: Release | str, grace: float = 30.0, timeout: float | None = None) -> Node:
        """Restart one node on another release with the same data and configuration (ready within
        `timeout` seconds, default the cluster's)."""
        n = self.node(node_id)
        rel = release_of(release, progress=self.say) if isinstance(release, str) else release
        if n.proc is not None:
            jvm.stop(n.proc, grace=grace)
        n.release = rel
        self._launch(n)
        self._wait_ready([n], timeout)
        if (self.dir / STATE).exists():
            self.write_state()
        return n

    # -- the control channel of `kfc cluster up` (another process asks for a roll) -------------------
    def write_state(self) -> None:
        data = {**self.summary(), "pid": os.getpid()}
        tmp = self.dir / f".{STATE}.tmp"
        tmp.write_text(json.dumps(data, indent=1) + "\n")
        tmp.replace(self.dir / STATE)

    def serve_control(self) -> None:
        """Answer the roll requests waiting in RUN_DIR/control (called by the owner's idle loop)."""
        folder = self.dir / CONTROL
        if not folder.is_dir():
            return
        for req in sorted(folder.glob("*.request.json")):
            reply = req.with_name(req.name.replace(".request.json", ".reply.json"))
            try:
                ask = json.loads(req.read_text())
                node = self.roll(int(ask["node"]), release_of(ask.get("kafka"), ask.get("kafka_home"), self.say))
                answer: dict[str, Any] = {"ok": True, "node": node.describe()}
            except (ClusterError, ValueError, KeyError, TypeError) as e:
                answer = {"ok": False, "error": str(e)}
            with contextlib.suppress(OSError):
                req.unlink()
            tmp = reply.with_suffix(".tmp")
            tmp.write_text(json.dumps(answer) + "\n")
            tmp.replace(reply)

    def dead_nodes(self) -> list[Node]:
        """Nodes whose JVM ended on its own (reaped)."""
        dead = []
        for n in self.nodes:
            if n.proc is not None and n.proc.poll() is not None:
                jvm.reaped(n.proc)
                dead.append(n)
        return dead


def read_state(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / STATE
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        raise ClusterError(f"{run_dir}: no running cluster there (no {STATE}; start one with "
                           "`kfc cluster up --dir`)") from None
    except (OSError, ValueError) as e:
        raise ClusterError(f"{path}: unreadable: {e}") from None
    return data


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def request_roll(run_dir: str | Path, node_id: int, version: str | None, home: str | Path | None,
                 timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """Ask the process running the cluster in `run_dir` to roll one node; returns the node's summary."""
    run_dir = Path(run_dir).resolve()
    state = read_state(run_dir)
    owner = int(state.get("pid", 0))
    if not owner or not _pid_alive(owner):
        raise ClusterError(f"{run_dir}: the process that ran this cluster (pid {owner}) is gone")
    if node_id not in [int(n["id"]) for n in state.get("nodes", [])]:
        ids = ", ".join(str(n["id"]) for n in state.get("nodes", []))
        raise ClusterError(f"node {node_id}: not in the cluster of {run_dir} (nodes: {ids})")
    folder = run_dir / CONTROL
    folder.mkdir(exist_ok=True)
    name = f"roll-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    ask = {"op": "roll", "node": node_id, "kafka": version, "kafka_home": str(home) if home else None}
    tmp = folder / f"{name}.tmp"
    tmp.write_text(json.dumps(ask) + "\n")
    tmp.replace(folder / f"{name}.request.json")
    reply = folder / f"{name}.reply.json"
    deadline = time.monotonic() + timeout
    try:
        while not reply.exists():
            if not _pid_alive(owner):
                raise ClusterError(f"{run_dir}: the process that ran this cluster (pid {owner}) ended")
            if time.monotonic() > deadline:
                raise ClusterError(f"node {node_id}: no answer to the roll within {timeout:g} s")
            time.sleep(0.2)
        answer: dict[str, Any] = json.loads(reply.read_text())
    finally:
        for leftover in (folder / f"{name}.request.json", reply):
            with contextlib.suppress(OSError):
                leftover.unlink()
    if not answer.get("ok"):
        raise ClusterError(str(answer.get("error")))
    node: dict[str, Any] = answer["node"]
    return node
