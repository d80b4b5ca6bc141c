"""`kafka-jvm:VERSION`: Apache Kafka's own controller and tool classes of one release, behind the
JSON-lines protocol (conformance/realkafka/harness).

The harness runs one release.  What it cannot know is translated here, and only here: a node
of *another* release (`software`) is sent with that release's supported ranges from the project's
catalogue (fixtures/release-dumps), and a malformed command is answered INVALID_COMMAND by the
command schema, as the protocol requires, before it reaches the JVM."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..targets.base import Target
from ..targets.hookspecs import hookimpl
from ..targets.jsonlines import SubprocessTarget

_NODE_LISTS = ("controllers", "brokers")


def release_profile(version: str) -> str:
    """The profile a release behaves as: its patch profile if the suite has one, else its minor's."""
    from reference_impl import InputError, load_profile

    for name in (f"kafka-{version}", "kafka-" + ".".join(version.split(".")[:2])):
        try:
            return load_profile(name).name
        except InputError:
            continue
    raise ValueError(f"kafka-jvm:{version}: the suite has no profile for Kafka {version}")


# What a node's own code decides on the wire (reference_impl: api_versions, sent_ranges).
NODE_WIRE_BEHAVIOURS = ("min0_ranges_below_v4", "api_versions_max_version", "broker_registration_max_version",
                        "controller_reports_kraft_version")


def node_wire(behaviour: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(behaviour.get(k) for k in NODE_WIRE_BEHAVIOURS)


class KafkaJvmTarget(SubprocessTarget):
    """The harness JVM of one release; foreign nodes' ranges and malformed commands translated here."""

    replays_restored_levels = True  # docs/deviations.md §8 row 8
    all_nodes_caught_up = True  # docs/deviations.md §8 row 11

    def __init__(self, version: str, *, timeout: float = 30.0, start_timeout: float = 60.0):
        from conformance.realkafka.harness import build
        from reference_impl import load_profile

        self.version = version
        self._software = {}
        self.harness = build(version)
        self.own_profile = release_profile(version)
        self.release_name = load_profile(self.own_profile).release
        self._scratch = _scratch_dir()
        try:
            super().__init__(self.harness.argv(self.own_profile, f"kafka-jvm:{version}", tmpdir=self._scratch),
                             timeout=timeout, start_timeout=start_timeout)
        except BaseException:
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
            raise
        # Every node runs this release's code: a node restarted on another release is not expressible
        # (its ApiVersions is its code); the grammar draws node software from these.
        from reference_impl import profile_names

        self.active_software = frozenset(n for n in profile_names() if not self._foreign(n))
        # A node of another release is emulated from its ranges by this release's builders: faithful
        # only where that release's nodes put the same things on the wire.
        own = node_wire(load_profile(self.own_profile).behaviour)
        self.node_software = frozenset(n for n in profile_names() if node_wire(load_profile(n).behaviour) == own)

    def _foreign(self, software: Any) -> bool:
        from reference_impl import InputError, load_profile

        if not isinstance(software, str) or not software:
            return False
        try:
            return load_profile(software).release != self.release_name
        except InputError:
            return False

    def _translate_node(self, spec: dict[str, Any], role: str) -> dict[str, Any]:
        from reference_impl import load_profile

        if spec.get("ranges") is not None or not self._foreign(spec.get("software")):
            return spec
        ranges = load_profile(spec["software"]).supported(role, bool(spec.get("unstable", False)))
        return {**spec, "ranges": {k: list(v) for k, v in ranges.items()}}

    def _remember(self, cmd: dict[str, Any]) -> None:
        """The software each node last ran: a register without one restarts it on the same release."""
        op = cmd.get("op")
        if op in ("format", "restore_state"):
            self._software = {}
            default = cmd.get("software") if op == "format" else None
            for key in _NODE_LISTS:
                for s in cmd.get(key) or []:
                    software = (s.get("software") or default) if isinstance(s, dict) else None
                    if isinstance(software, str):
                        self._software[(key == "controllers", s.get("id"))] = software
        elif op == "register":
            node_key = (cmd.get("role") == "controller", cmd.get("node"))
            if cmd.get("software"):
                self._software[node_key] = cmd["software"]
            elif cmd.get("ranges") is not None:
                self._software.pop(node_key, None)  # explicit ranges: the node runs the cluster's default release

    def translate(self, command: dict[str, Any]) -> dict[str, Any]:
        cmd = dict(command)
        if cmd.get("op") == "register":
            known = self._software.get((cmd.get("role") == "controller", cmd.get("node")))
            if not cmd.get("software") and cmd.get("ranges") is None and known:
                cmd["software"] = known
            if cmd.get("role", "broker") == "broker" and "version" not in cmd and self._foreign(cmd.get("software")):
                # A broker of another release sends its own newest BrokerRegistration version (its code,
                # which this harness cannot run): the lower of the two releases' maxima.
                from reference_impl import load_profile

                cmd["version"] = min(load_profile(s).behaviour["broker_registration_max_version"]
                                     for s in (cmd["software"], self.own_profile))
            cmd = self._translate_node(cmd, cmd.get("role", "broker"))
        if cmd.get("op") in ("api_versions", "describe") and cmd.get("node") is not None:
            # A node of another release answers up to its own newest ApiVersions (its code, not runnable
            # here): the harness is told that maximum, the default version and the bound it refuses above.
            software = (self._software.get((False, cmd["node"])) or self._software.get((True, cmd["node"])))
            if self._foreign(software):
                from reference_impl import load_profile

                cmd["max_version"] = min(load_profile(s).behaviour["api_versions_max_version"]
                                         for s in (software, self.own_profile))
        default = cmd.get("software") if cmd.get("op") == "format" else None
        for key in _NODE_LISTS:
            if isinstance(cmd.get(key), list):
                role = "controller" if key == "controllers" else "broker"
                cmd[key] = [self._translate_node({"software": default, **s} if default else s, role)
                            if isinstance(s, dict) else s for s in cmd[key]]
        if cmd.get("op") == "format" and default and self._foreign(default) and not cmd.get("controllers"):
            cmd["controllers"] = [self._translate_node({"id": 3000, "software": default}, "controller")]
        return cmd

    _software: dict[tuple[bool, Any], str]
    _scratch: Path | None = None
    _profile: str | None = None

    def reset(self, profile: str | None = None) -> None:
        self._software = {}
        # The harness runs one release: a profile of that release is named as asked, any other is
        # answered with the release's own (the suite then compares against what it asked for).
        self._profile = profile if profile is not None and not self._foreign(profile) else self.own_profile
        super().reset(self._profile)

    def _malformed(self, command: dict[str, Any]) -> dict[str, Any] | None:
        """The protocol's INVALID_COMMAND for a malformed command, worded as the reference words it
        (a fresh reference cluster refuses a malformed command before doing anything); else None."""
        from conformance.model import fast_check
        from reference_impl import OPS, Cluster

        op = command.get("op") if isinstance(command, dict) else None
        # restore_state also states levels: one the release does not know is the command's fault too
        if op == "restore_state" or not isinstance(op, str) or op not in OPS or \
                not fast_check("command.schema.json", f"/$defs/{op}")(command):
            out = Cluster(self._profile or self.own_profile).apply(command)
            if out.get("rule") == "CMD-01":
                return out
        return None

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        refused = self._malformed(command)
        if refused is not None:
            return refused
        out = super().apply(self.translate(command))
        if out.get("error") == "NONE":
            self._remember(command)  # as the reference: a refused registration changes no node's release
        return out

    def apply_batch(self, commands: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """As `apply` on each command in order, in as few round trips as the translation allows: a
        command whose translation reads the nodes' releases waits until the outcomes of the commands
        before it that may change them (format, restore_state, register) are known."""
        outcomes: list[dict[str, Any] | None] = [None] * len(commands)
        pending: list[tuple[int, dict[str, Any], dict[str, Any]]] = []  # (index, command, translated)
        uncertain = False  # `pending` holds a command whose success decides later translations

        def flush() -> None:
            sent = super(KafkaJvmTarget, self).apply_batch([t for _, _, t in pending])
            for (i, command, _), out in zip(pending, sent, strict=True):
                outcomes[i] = out
                if out.get("error") == "NONE":
                    self._remember(command)
            pending.clear()

        for i, command in enumerate(commands):
            refused = self._malformed(command)
            if refused is not None:
                outcomes[i] = refused
                continue
            if uncertain and _reads_releases(command):
                flush()
                uncertain = False
            pending.append((i, command, self.translate(command)))
            uncertain = uncertain or command.get("op") in _CHANGES_RELEASES
        if pending:
            flush()
        return [o for o in outcomes if o is not None]

    def close(self) -> None:
        super().close()  # (also before a restart: the harness makes its scratch directory again)
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)


_CHANGES_RELEASES = frozenset({"format", "restore_state", "register"})


def _reads_releases(command: dict[str, Any]) -> bool:
    """`translate` reads the nodes' last releases for this command (see `_remember`)."""
    op = command.get("op")
    if op == "register":
        return not command.get("software") and command.get("ranges") is None
    return op in ("api_versions", "describe") and "version" not in command and command.get("node") is not None


def _scratch_dir() -> Path | None:
    """A directory in memory for `kafka-storage format`'s scratch files: format writes and fsyncs
    meta.properties and the bootstrap checkpoint, which costs ~20 ms a format on a disk."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK | os.X_OK)):
        return None
    return Path(tempfile.mkdtemp(prefix="kfc-harness-", dir=shm))


@hookimpl
def kfc_make_target(spec: str) -> Target | None:
    kind, _, arg = spec.partition(":")
    if kind != "kafka-jvm":
        return None
    version = arg.strip()
    if not version:
        raise ValueError("target 'kafka-jvm:': give a Kafka release, e.g. kafka-jvm:4.1.1")
    from conformance.realkafka.releases import FetchError

    try:
        return KafkaJvmTarget(version)
    except FetchError as e:  # no Java/Maven/network, an unknown release, no shim: one line for the user
        raise ValueError(f"target 'kafka-jvm:{version}': {e}") from None


@hookimpl
def kfc_target_kinds() -> list[str]:
    return ["kafka-jvm:VERSION"]
