"""Target `kafka://HOST:PORT[,HOST:PORT…][?options]`: the contract's ops as Kafka RPCs (docs/wire.md).

describe / api_versions -> ApiVersions v0-v4 to the node; update_features -> UpdateFeatures v0-v2
(to the active controller, or the node the command names); register -> BrokerRegistration v0-v4 /
ControllerRegistration v0 and unregister -> UnregisterBroker v0 (role controller: UnregisterController v0,
KIP-1312, on a live cluster only for synthetic controllers), only with `allow_register=1`
because they change the cluster.  Node ids are found through Metadata and DescribeCluster
(KIP-919 endpoint type 2 on a controller listener).  With `control=1` (only `kfc serve-broker`
answers it) reset and format reach the reference behind the server through our control extension.

Options (conformance/live/spec.py, which parses them): controller=HOST:PORT, tiers=…, timeout=SECONDS
(default 5), max_requests=N, rate=PER_S, client_id=ID (default kfc), profile=NAME (the release the
cluster runs, without control), allow_register=1, control=1.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from reference_impl import UPGRADE_TYPES

from ..targets.base import Target, TargetError
from ..wire import codec
from ..wire.client import Budget, NodeClient, WireError
from .observe import Observation, observe, restore_command, send_request
from .spec import parse_address, parse_spec

TIER_OPS = {"observe": ("describe", "api_versions"), "probe": ("update_features",), "mutate": ("update_features",),
            "register": ("register", "unregister")}
KIO_MAX = {codec.API_VERSIONS: 5, codec.UPDATE_FEATURES: 2, codec.BROKER_REGISTRATION: 4}
# Ops the Kafka protocol cannot express: no RPC formats storage, writes snapshots, loads
# coordinator records, runs the command-line tools or shows the controller's whole state.
WIRE_INEXPRESSIBLE = ("format", "restore_state", "version_mapping", "feature_dependencies", "features_tool",
                      "add_metadata", "snapshot", "load_snapshot", "load_coordinator", "state")
_INCARNATION_NS = uuid.UUID("6b66632d-7769-7265-2d69-6e6361726e61")  # fixed: same text, same incarnation


def _schema(kind: str, api_key: int, version: int) -> Any:
    loader = codec.request_schema if kind == "request" else codec.response_schema
    schema = loader(api_key, version)
    if schema is None:
        raise TargetError(f"kio has no {codec.API_NAMES.get(api_key)} v{version} {kind}")
    return schema


class KafkaTarget(Target):
    accepts_profile = True  # `kfc check --profile` names the release before the hello infers one
    # The wire does not show the metadata log, the epoch before a write, what a downgrade lost, a
    # snapshot or the kafka-features tool's own request and response: not compared for this target.
    unreported = frozenset({"records", "epoch_before", "lost", "snapshot", "request", "response"})
    def __init__(self, spec: str):
        o = parse_spec(spec)
        self.spec = spec
        self.bootstrap: list[tuple[str, int]] = o["bootstrap"]
        self.timeout, self.client_id = o["timeout"], o["client_id"]
        self.allow_register, self.use_control = o["allow_register"], o["control"]
        self.tiers: tuple[str, ...] = o["tiers"]
        self.budget = Budget(o["max_requests"], o["rate"])
        self.observation: Observation | None = None  # live: the cluster as last observed
        self.evidence: list[str] = []  # live: why the profile is what it is
        self.unclear: str | None = None  # live: why the release could not be told (the profile is assumed)
        self.blocked: dict[str, str] = {}  # live: tier -> why it can do nothing on this cluster
        self.dirty = False  # live: a write happened since the last observation
        self.controller_addr: tuple[str, int] | None = o["controller"]
        self.name = "kafka:" + ",".join(f"{h}:{p}" for h, p in self.bootstrap)
        self.profile = o["profile"]
        self.clients: dict[tuple[str, int], NodeClient] = {}
        self.labels: dict[tuple[str, int], str] = {}
        self.addresses: dict[int, tuple[str, int]] = {}
        self.controllers: set[int] = set()
        self.active: int | None = None
        self.cluster_id: str | None = None
        self.api_keys: dict[tuple[str, int], dict[int, tuple[int, int]]] = {}
        self.software: dict[tuple[str, int], str] = {}  # (role, node) -> software it registered with
        self.synthetic_controllers: set[int] = set()  # controllers this run registered that the cluster did not have
        self.formatted = True  # a real cluster is; control mode starts unformatted after reset
        self._discovered = False
        self._hello: dict[str, Any] | None = None

    # -- plumbing -----------------------------------------------------------------------------------
    def client(self, addr: tuple[str, int], label: str | None = None) -> NodeClient:
        if label:
            self.labels[addr] = label
        c = self.clients.get(addr)
        if c is None:
            c = self.clients[addr] = NodeClient(addr[0], addr[1], self.labels.get(addr, "bootstrap"),
                                                timeout=self.timeout, client_id=self.client_id, budget=self.budget)
        c.label = self.labels.get(addr, c.label)
        return c

    def control(self, command: dict[str, Any]) -> dict[str, Any]:
        addr = self.bootstrap[0]
        try:
            reply = self.client(addr).control(command)
        except WireError as e:
            raise TargetError(f"{e} (is this `kfc serve-broker`? control=1 needs its control extension)") from None
        if "error" in reply:
            raise TargetError(f"serve-broker control {command.get('op')}: {reply['error']}")
        self._take_addresses(reply)
        return reply

    def _take_addresses(self, reply: dict[str, Any]) -> None:
        if reply.get("controller"):
            self.controller_addr = parse_address(reply["controller"], "control reply")
        if reply.get("profile"):
            self.profile = reply["profile"]
        self.formatted = bool(reply.get("formatted", self.formatted))

    def _invalidate(self) -> None:
        self._discovered = False
        self.api_keys.clear()

    def discover(self) -> None:
        """Node id -> address: controllers from DescribeCluster (endpoint type 2) on the controller
        listener, brokers from Metadata on the first bootstrap broker that answers."""
        addresses: dict[int, tuple[str, int]] = {}
        self.controllers, self.active = set(), None
        errors = []
        if self.controller_addr is not None:
            schema = _schema("request", codec.DESCRIBE_CLUSTER, 1)
            resp = self.client(self.controller_addr, "controller").request(
                schema(include_cluster_authorized_operations=False, endpoint_type=2))
            if resp.error_code == 0:
                self.active, self.cluster_id = int(resp.controller_id), resp.cluster_id
                for b in resp.brokers:
                    addresses[int(b.broker_id)] = (b.host, int(b.port))
                    self.controllers.add(int(b.broker_id))
            else:
                errors.append(f"DescribeCluster on the controller listener: {codec.error_name(resp.error_code)}")
        found = False
        if self.observation is not None and not self.use_control:
            self._take_observation(self.observation)
            return
        for addr in self.bootstrap + [a for n, a in addresses.items() if n not in self.controllers]:
            try:
                hi = self.keys_of(addr).get(codec.METADATA, (0, -1))[1]
                if hi < 1:
                    errors.append(f"{addr[0]}:{addr[1]} does not advertise Metadata")
                    continue
                resp = send_request(self, addr, codec.METADATA, min(hi, 12), topics=(), allow_auto_topic_creation=False,
                                    include_topic_authorized_operations=False)
            except WireError as e:
                errors.append(str(e))
                continue
            for b in resp.brokers:
                # A combined node's id names its controller listener (as in _take_observation).
                if int(b.node_id) not in self.controllers:
                    addresses[int(b.node_id)] = (b.host, int(b.port))
            self.cluster_id = self.cluster_id or resp.cluster_id
            found = True
            break
        if not found and self.controller_addr is not None:
            # Every bootstrap broker is down (e.g. none registered yet): ask the controller.
            schema = _schema("request", codec.DESCRIBE_CLUSTER, 1)
            resp = self.client(self.controller_addr, "controller").request(
                schema(include_cluster_authorized_operations=False, endpoint_type=1))
            if resp.error_code == 0:
                for b in resp.brokers:
                    addresses[int(b.broker_id)] = (b.host, int(b.port))
                found = True
        if not found and not addresses:
            raise TargetError("no node answered discovery: " + "; ".join(errors))
        for node, addr in addresses.items():
            self.labels[addr] = f"{'controller' if node in self.controllers else 'node'} {node}"
        self.addresses = addresses
        self._discovered = True

    def address(self, node: int) -> tuple[str, int] | None:
        if not self._discovered:
            self.discover()
        if node not in self.addresses:
            self.discover()  # it may have just appeared (a registration elsewhere)
        return self.addresses.get(node)

    def active_controller(self) -> int | None:
        if not self._discovered:
            self.discover()
        return self.active

    def keys_of(self, addr: tuple[str, int]) -> dict[int, tuple[int, int]]:
        """The node's advertised api keys (an ApiVersions v0 probe answers every node)."""
        if addr not in self.api_keys:
            resp = self.client(addr).request(_schema("request", codec.API_VERSIONS, 0)())
            self.api_keys[addr] = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in resp.api_keys}
        return self.api_keys[addr]

    def _controller_or_broker(self) -> tuple[int | None, tuple[str, int]]:
        active = self.active_controller()
        if active is not None and active in self.addresses:
            return active, self.addresses[active]
        brokers = sorted(n for n in self.addresses if n not in self.controllers)
        if brokers:
            return brokers[0], self.addresses[brokers[0]]  # brokers forward controller APIs
        return None, self.bootstrap[0]

    # -- the Target contract ----------------------------------------------------------------------------
    def hello(self) -> dict[str, Any]:
        if self._hello is None:
            if self.use_control:
                self._hello = self._control_hello()
            else:
                self._hello = self._live_hello()
        return dict(self._hello)

    def _control_hello(self) -> dict[str, Any]:
        caps = {"describe", "api_versions", "format"}
        self.control({"op": "hello"})
        self._invalidate()
        keys = self._any_keys()
        if codec.UPDATE_FEATURES in keys:
            caps.add("update_features")
        if self.allow_register and codec.BROKER_REGISTRATION in keys:
            caps.add("register")
        if self.allow_register and codec.UNREGISTER_BROKER in keys:
            caps.add("unregister")
        self.capabilities = frozenset(caps)
        return super().hello()

    def _any_keys(self) -> dict[int, tuple[int, int]]:
        keys: dict[int, tuple[int, int]] = {}
        errors = []
        for addr in ([self.controller_addr] if self.controller_addr else []) + self.bootstrap:
            try:
                for k, r in self.keys_of(addr).items():
                    keys.setdefault(k, r)
            except WireError as e:
                errors.append(str(e))  # a node that is down now; another one may answer
        if not keys:
            raise TargetError(f"{self.name}: no node answered ApiVersions: {'; '.join(errors)}")
        return keys

    def _live_hello(self) -> dict[str, Any]:
        """A running cluster nobody may reset: observe it, tell its release, offer the enabled tiers."""
        from .infer import infer_profile

        obs = self.observe()
        inference = infer_profile(obs, self.profile)
        self.profile, self.evidence, self.unclear = inference.profile, inference.evidence, inference.unclear
        caps: set[str] = set(TIER_OPS["observe"])
        blocked: dict[str, str] = {}
        if obs.down:
            # UpdateFeatures checks fenced brokers' ranges too (KIP584-UPD-04): unknown ranges, unknown outcomes.
            names = ", ".join(f"{n.label} at {n.address[0]}:{n.address[1]}" for n in obs.down)
            why = (f"{names} is registered but fenced and does not answer (stopped, or registered by an interrupted "
                   "run): the ranges UpdateFeatures checks it against are unknown; start it, or unregister it "
                   "(kafka-cluster.sh unregister --id N)")
            blocked = {tier: why for tier in ("probe", "mutate", "register") if tier in self.tiers}
        elif {"probe", "mutate"} & set(self.tiers):
            if any(n.advertises(codec.UPDATE_FEATURES) for n in obs.nodes):
                caps.add("update_features")
            else:
                for tier in {"probe", "mutate"} & set(self.tiers):
                    blocked[tier] = "no node advertises UpdateFeatures (57): no update is sent"
        if "register" in self.tiers and not obs.down:
            if any(n.advertises(codec.BROKER_REGISTRATION) for n in obs.controllers):
                caps.update(TIER_OPS["register"])
            else:
                blocked["register"] = ("no observed controller advertises BrokerRegistration (62) -- give "
                                       "controller=HOST:PORT of a controller listener: nothing is registered")
        self.blocked = blocked
        self.capabilities = frozenset(caps)
        return {**super().hello(), "tiers": list(self.tiers)}

    def live(self) -> KafkaTarget | None:
        # With its control extension the cluster is reset and formatted like any target: not live.
        return None if self.use_control else self

    @property
    def requests_sent(self) -> int:
        """Requests sent to the cluster so far (the run's budget counts them)."""
        return self.budget.spent

    def observe(self) -> Observation:
        """Read the cluster as it is now (every node, read-only)."""
        self._invalidate()
        self.observation = observe(self)
        self._take_observation(self.observation)
        self.dirty = False
        return self.observation

    def _take_observation(self, obs: Observation) -> None:
        # A combined node's id names its controller listener (the one that answers controller APIs).
        self.addresses = {n.id: n.address for n in sorted(obs.nodes, key=lambda n: n.role == "controller")}
        self.controllers = {n.id for n in obs.controllers}
        self.active = obs.active_controller
        self.cluster_id = obs.cluster_id or self.cluster_id
        for n in obs.nodes:
            self.api_keys[n.address] = dict(n.api_keys)
        self._discovered = True

    def observed_state(self) -> dict[str, Any] | None:
        if self.use_control:
            return None
        if self.observation is None or self.dirty:
            self.observe()
        assert self.observation is not None and self.profile is not None
        state = restore_command(self.observation, self.profile)
        if state is None and self.observation.none_knows:
            raise TargetError(f"{self.name}: no node knows the metadata.version yet (ApiVersions epoch -1: no node "
                              "has caught up with the metadata log, KIP584-API-05), so no reference state can be stated")
        if state is None:
            raise TargetError(f"{self.name}: no node answers ApiVersions v3+ with features, so no reference state "
                              "can be stated")
        return state

    def reset(self, profile: str | None = None) -> None:
        if self.use_control:
            self.control({"op": "reset", "profile": profile})
            self.software.clear()
            self._invalidate()

    def close(self) -> None:
        for c in self.clients.values():
            c.close()
        self.clients.clear()

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        from reference_impl import OPS

        op = command.get("op") if isinstance(command, dict) else None
        handler = getattr(self, f"_op_{op}", None) if isinstance(op, str) else None
        if op not in OPS:
            return _invalid({"op": op}, f"unknown op {op!r}; known ops: {', '.join(OPS)}")
        if handler is None or (op == "format" and not self.use_control):
            return _invalid({"op": op}, f"{op} cannot be expressed over the Kafka protocol")
        if op in ("register", "unregister") and not self.allow_register:
            return _invalid({"op": op}, f"{op} changes the cluster: enable it with allow_register=1")
        if op == "update_features" and not self.use_control and "mutate" not in self.tiers and not (
                command.get("validate_only") and command.get("version", 1) != 0):
            # Never sent: without the mutate tier only validate_only requests (v1+) reach the cluster.
            return _invalid({"op": op}, "update_features without validate_only (or at v0, which has none) changes "
                            "the cluster: enable the mutate tier (tiers=observe,probe,mutate)")
        try:
            out: dict[str, Any] = handler(command)
        except WireError:
            self._invalidate()
            raise
        if op in ("update_features", "register", "unregister") and out.get("error") == "NONE" and not (
                out.get("validate_only")):
            self.dirty = True
        elif op == "update_features" and any(r.get("error") == "NONE" for r in (out.get("results") or {}).values()) \
                and not out.get("validate_only"):
            self.dirty = True  # 3.x applies the features that passed
        return out

    # -- ops -----------------------------------------------------------------------------------------
    def _op_format(self, cmd: dict[str, Any]) -> dict[str, Any]:
        reply = self.control({"op": "format", "command": cmd})
        self._invalidate()
        self.software.clear()
        outcome: dict[str, Any] = reply["outcome"]
        if outcome.get("error") == "NONE":
            # The controllers' releases: a re-registration without software keeps its node's own.
            for spec in cmd.get("controllers") or [{"id": 3000}]:
                if isinstance(spec, dict) and isinstance(spec.get("id"), int) and spec.get("ranges") is None:
                    sw = spec.get("software") or cmd.get("software") or self.profile
                    if sw:
                        self.software[("controller", spec["id"])] = str(sw)
        return outcome

    def _not_formatted(self, op: str) -> dict[str, Any] | None:
        if self.use_control and not self.formatted:
            hint = " (send format or restore_state first)" if op == "register" else ""
            return _invalid({"op": op}, f"{op}: the cluster is not formatted yet{hint}")
        return None

    def _op_api_versions(self, cmd: dict[str, Any], op: str = "api_versions") -> dict[str, Any]:
        node = cmd.get("node")
        if node is None:
            node = self.active_controller()
            if node is None:
                node = min((n for n in self.addresses), default=None)
        out: dict[str, Any] = {"op": op, "node": node}
        addr = self.address(node) if isinstance(node, int) else None
        if addr is None:
            return _err(out, "NETWORK_EXCEPTION", f"Node {node} is not running in this cluster")
        version = cmd.get("version")
        if version is None:
            hi = self.keys_of(addr).get(codec.API_VERSIONS, (0, 0))[1]
            version = min(hi, KIO_MAX[codec.API_VERSIONS])
        out["version"] = version
        if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= KIO_MAX[codec.API_VERSIONS]:
            return _err(out, "UNSUPPORTED_VERSION")  # no client can send it; no node would accept it
        lo, hi = self.keys_of(addr).get(codec.API_VERSIONS, (0, 0))
        if not lo <= version <= hi:
            return _err(out, "UNSUPPORTED_VERSION")  # negotiated: a version the node does not advertise is never sent
        schema = _schema("request", codec.API_VERSIONS, version)
        fields: dict[str, Any] = {"client_software_name": "kfc", "client_software_version": "1"} if version >= 3 else {}
        if version >= 5:  # KIP-1242: the ids the command means (null / -1: not given)
            fields.update(cluster_id=cmd.get("cluster_id"), node_id=cmd.get("node_id", -1))
        resp = self.client(addr).request(schema(**fields))
        if resp.error_code != 0:
            return _err(out, codec.error_name(resp.error_code))
        if version < 3:
            out.update(supported=None, finalized=None, epoch=None)
        else:
            out["supported"] = {f.name: [int(f.min_version), int(f.max_version)]
                                for f in sorted(resp.supported_features, key=lambda f: f.name)}
            out["finalized"] = {f.name: int(f.max_version_level)
                                for f in sorted(resp.finalized_features, key=lambda f: f.name)}
            out["epoch"] = int(resp.finalized_features_epoch)
        return _ok(out)

    def _op_describe(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """kafka-features describe: ApiVersions to one node, lines named by the tool's release."""
        from reference_impl import load_profile
        from reference_impl.api import describe_lines

        out = self._op_api_versions(cmd, "describe")
        if out["error"] != "NONE" or out.get("supported") is None:
            return out
        # The reference names levels by the active controller's release (as its tool would).
        active = self.active_controller()
        p = load_profile((self.software.get(("controller", active)) if active is not None else None) or self.profile)
        out["lines"] = describe_lines(p, out["supported"], out["finalized"], out["epoch"])
        return out

    def _epoch(self, addr: tuple[str, int]) -> int | None:
        """FinalizedFeaturesEpoch from the node's ApiVersions (UpdateFeatures does not carry it)."""
        got = self._finalized(addr)
        return got[1] if got is not None else None

    def _finalized(self, addr: tuple[str, int]) -> tuple[dict[str, int], int] | None:
        """(finalized levels, FinalizedFeaturesEpoch) from the node's ApiVersions v3+."""
        hi = self.keys_of(addr).get(codec.API_VERSIONS, (0, 0))[1]
        if hi < 3:
            return None
        v = min(hi, KIO_MAX[codec.API_VERSIONS])
        resp = self.client(addr).request(_schema("request", codec.API_VERSIONS, v)(
            client_software_name="kfc", client_software_version="1"))
        if resp.error_code != 0:
            return None
        return ({f.name: int(f.max_version_level) for f in resp.finalized_features},
                int(resp.finalized_features_epoch))

    def _op_update_features(self, cmd: dict[str, Any]) -> dict[str, Any]:
        refused = self._not_formatted("update_features")
        if refused:
            return refused
        updates = cmd.get("updates", [])
        for u in updates if isinstance(updates, list) else [updates]:
            if not isinstance(u, dict) or not isinstance(u.get("feature"), str) or not isinstance(u.get("level"), int):
                return _invalid({"op": "update_features"}, "update_features: each update needs 'feature' (string) "
                                f"and 'level' (int): {u!r}")
            if not -32768 <= u["level"] <= 32767:
                return _invalid({"op": "update_features"}, f"update_features: level {u['level']} does not fit "
                                "the wire's int16")
        node = cmd.get("node")
        explicit = isinstance(node, int) and node in self.controllers_known()
        for attempt in range(2):  # follow NOT_CONTROLLER once, unless the command names the node
            addr = self.addresses[node] if explicit and isinstance(node, int) else self._controller_or_broker()[1]
            out = self._send_update(cmd, updates, addr)
            if out["error"] != "NOT_CONTROLLER" or explicit or attempt:
                return out
            self._invalidate()
        return out

    def controllers_known(self) -> set[int]:
        if not self._discovered:
            self.discover()
        return self.controllers

    def _send_update(self, cmd: dict[str, Any], updates: list[dict[str, Any]], addr: tuple[str, int]) -> dict[str, Any]:
        lo, hi = self.keys_of(addr).get(codec.UPDATE_FEATURES, (0, -1))
        version = cmd.get("version", min(hi, KIO_MAX[codec.UPDATE_FEATURES]))
        validate_only = bool(cmd.get("validate_only", False))
        out: dict[str, Any] = {"op": "update_features", "version": version,
                               "validate_only": validate_only and isinstance(version, int) and version >= 1}
        if not isinstance(version, int) or not lo <= version <= min(hi, KIO_MAX[codec.UPDATE_FEATURES]):
            # The client negotiates: a version the node does not advertise is never sent.
            out["epoch"] = self._epoch(addr)
            return _err(out, "UNSUPPORTED_VERSION")
        schema = _schema("request", codec.UPDATE_FEATURES, version)
        key = codec.entity_type(schema, "feature_updates")
        keys = []
        for u in updates:
            kind = u.get("upgrade_type", "UPGRADE")
            code = UPGRADE_TYPES.get(kind, 0) if isinstance(kind, str) else int(kind)
            if version == 0:
                keys.append(key(feature=u["feature"], max_version_level=u["level"], allow_downgrade=code in (2, 3)))
            else:
                keys.append(key(feature=u["feature"], max_version_level=u["level"], upgrade_type=code))
        fields: dict[str, Any] = {"timeout": _timedelta(self.timeout), "feature_updates": tuple(keys)}
        if version >= 1:
            fields["validate_only"] = validate_only
        resp = self.client(addr).request(schema(**fields))
        out = _err(out, codec.error_name(resp.error_code), resp.error_message) if resp.error_code else _ok(out)
        out["message"] = resp.error_message
        results = getattr(resp, "results", ())
        if results:
            out["results"] = {r.feature: {"error": codec.error_name(r.error_code), "message": r.error_message}
                              for r in results}
        if not resp.error_code and not out["validate_only"]:
            self.settle()
        out["epoch"] = self._epoch(addr)
        return out

    def _op_register(self, cmd: dict[str, Any]) -> dict[str, Any]:
        from reference_impl import InputError, load_profile

        refused = self._not_formatted("register")
        if refused:
            return refused
        role, node = cmd.get("role", "broker"), cmd.get("node")
        out: dict[str, Any] = {"op": "register", "role": role, "node": node}
        if role not in ("broker", "controller"):
            return _invalid(out, f"register: role must be broker or controller, not {role!r}")
        if not isinstance(node, int) or isinstance(node, bool):
            return _invalid(out, f"node spec {{'id': {node!r}}} needs an integer 'id'")
        if role == "broker" and node in self.controllers_known():
            return _invalid(out, f"register: node {node} is a controller")
        default = self.profile
        try:
            if cmd.get("ranges") is not None:
                from reference_impl.api import parse_ranges

                ranges = dict(parse_ranges(cmd["ranges"], f"node {node}"))
                node_profile = load_profile(default)
                software = None
            else:
                software = cmd.get("software") or self.software.get((role, node)) or default
                node_profile = load_profile(software)
                ranges = dict(node_profile.supported(role, bool(cmd.get("unstable", False))))
        except InputError as e:
            return _invalid(out, str(e))
        active, addr = self._controller_or_broker()
        if active is None or active not in self.controllers:
            raise TargetError(f"{self.name}: registration needs a controller listener (controller=HOST:PORT)")
        if self.use_control:
            # Our extension: tell serve-broker which release this synthetic node runs (the wire
            # carries only its ranges), so the reference answers that node's ApiVersions faithfully.
            self.control({"op": "expect_register", "role": role, "node": node, "software": software,
                          "unstable": bool(cmd.get("unstable", False)), "ranges": cmd.get("ranges"),
                          "previous_session_alive": bool(cmd.get("previous_session_alive", False))})
        incarnation = cmd.get("incarnation")
        inc = uuid.uuid5(_INCARNATION_NS, str(incarnation)) if incarnation else uuid.uuid4()
        if role == "controller":
            own = node in self.controllers_known()
            out = self._register_controller(out, addr, node, inc, ranges)
            if out["error"] == "NONE" and not own:
                self.synthetic_controllers.add(node)
        else:
            out = self._register_broker(cmd, out, addr, node, inc, ranges, node_profile)
        if out["error"] == "NONE":
            if software:
                self.software[(role, node)] = software
            self._invalidate()
            self.settle()
        return out

    def _register_broker(self, cmd: dict[str, Any], out: dict[str, Any], addr: tuple[str, int], node: int,
                         inc: uuid.UUID, ranges: dict[str, Any], node_profile: Any) -> dict[str, Any]:
        lo, hi = self.keys_of(addr).get(codec.BROKER_REGISTRATION, (0, -1))
        top = min(hi, KIO_MAX[codec.BROKER_REGISTRATION])
        version = cmd.get("version", min(top, node_profile.behaviour["broker_registration_max_version"]))
        out["version"] = version
        if not isinstance(version, int) or not lo <= version <= top:
            return _err(out, "UNSUPPORTED_VERSION")
        # What a broker of this release sends: below v4, ranges with min 0 are left out (KAFKA-17492).
        sent = {k: v for k, v in sorted(ranges.items()) if version >= 4 or v[0] != 0}
        out["sent_features"] = {k: list(v) for k, v in sent.items()}
        schema = _schema("request", codec.BROKER_REGISTRATION, version)
        feature, listener = codec.entity_type(schema, "features"), codec.entity_type(schema, "listeners")
        body = {"broker_id": node, "cluster_id": cmd.get("cluster_id", self.cluster_id or ""), "incarnation_id": inc,
                "listeners": (listener(name="PLAINTEXT", host="kfc-synthetic.invalid", port=9, security_protocol=0),),
                "features": tuple(feature(name=k, min_supported_version=v[0], max_supported_version=v[1])
                                  for k, v in sent.items()),
                "rack": None, "is_migrating_zk_broker": False, "log_dirs": (uuid.uuid5(inc, "dir"),),
                "previous_broker_epoch": -1}
        names = {f for f in schema.__dataclass_fields__}
        resp = self.client(addr).request(schema(**{k: v for k, v in body.items() if k in names}))
        if resp.error_code:
            return _err(out, codec.error_name(resp.error_code))
        out["broker_epoch"] = int(resp.broker_epoch)
        return _ok(out)

    def _register_controller(self, out: dict[str, Any], addr: tuple[str, int], node: int, inc: uuid.UUID,
                             ranges: dict[str, Any]) -> dict[str, Any]:
        schema = _schema("request", codec.CONTROLLER_REGISTRATION, 0)
        feature, listener = codec.entity_type(schema, "features"), codec.entity_type(schema, "listeners")
        resp = self.client(addr).request(schema(
            controller_id=node, incarnation_id=inc, zk_migration_ready=False,
            listeners=(listener(name="CONTROLLER", host="kfc-synthetic.invalid", port=9, security_protocol=0),),
            features=tuple(feature(name=k, min_supported_version=v[0], max_supported_version=v[1])
                           for k, v in sorted(ranges.items()))))
        if resp.error_code:
            return _err(out, codec.error_name(resp.error_code), resp.error_message)
        return _ok(out)

    def _op_unregister(self, cmd: dict[str, Any]) -> dict[str, Any]:
        node = cmd.get("node")
        out: dict[str, Any] = {"op": "unregister", "node": node}
        if not isinstance(node, int) or isinstance(node, bool):
            return _invalid(out, f"unregister: node must be an integer, not {node!r}")
        if cmd.get("role", "broker") == "controller":
            return self._unregister_controller({**out, "role": "controller"}, node)
        _, addr = self._controller_or_broker()
        resp = self.client(addr).request(_schema("request", codec.UNREGISTER_BROKER, 0)(broker_id=node))
        if resp.error_code:
            return _err(out, codec.error_name(resp.error_code), resp.error_message)
        self.software.pop(("broker", node), None)  # a later registration of this id is another broker
        self._invalidate()
        self.settle()
        return _ok(out)

    def _unregister_controller(self, out: dict[str, Any], node: int) -> dict[str, Any]:
        """UnregisterController v0 (KIP-1312, 4.4+).  On a live cluster only a controller this run
        registered, or an id no controller of the cluster has: its own controllers' registrations stay."""
        if not self.use_control and node in self.controllers_known() and node not in self.synthetic_controllers:
            return _invalid(out, f"unregister: controller {node} is one of the cluster's own; only a synthetic "
                            "controller (registered by this run) may be unregistered")
        _, addr = self._controller_or_broker()
        if codec.UNREGISTER_CONTROLLER not in self.keys_of(addr):
            # A release before 4.4 does not know the API key (it would close the connection).
            return _err(out, "UNSUPPORTED_VERSION", f"UnregisterController (API key 94) is not supported by {self.profile}")
        resp = self.client(addr).request(_schema("request", codec.UNREGISTER_CONTROLLER, 0)(controller_id=node))
        if resp.error_code:
            return _err(out, codec.error_name(resp.error_code), resp.error_message)
        self.software.pop(("controller", node), None)
        self.synthetic_controllers.discard(node)
        self._invalidate()
        self.settle()
        return _ok(out)

    def settle(self, timeout: float = 5.0) -> None:
        """After a write: wait (bounded) until every node's metadata image has reached the log's high
        watermark.  A controller answers a write once it is committed, but each node -- the controller's
        own ApiVersions included -- publishes its image a moment later, so a read right after a write
        can miss it on a real cluster.  The high watermark comes from DescribeQuorum (KIP-595); a cluster
        that does not serve it is read as it is.

        The high watermark is exclusive (the next offset), so the last committed record is hw - 1: a
        broker's FinalizedFeaturesEpoch is its image's highest offset and reaches hw - 1, never hw.  A
        controller's FinalizedFeaturesEpoch is the offset of the last batch that changed features
        (Kafka's FeaturesPublisher), so it cannot show progress: once the brokers are at hw - 1, a
        controller is waited for until its levels are theirs (its own publisher can lag the brokers'
        under load: seen on 4.1.1, a describe right after a metadata.version upgrade still read the
        old level).  kraft.version is left out of that comparison (a 3.9.0 controller reports none)."""
        hw = self._high_watermark()
        if hw is None:
            return
        deadline = time.monotonic() + timeout
        brokers = {a for n, a in self.addresses.items() if n not in self.controllers}
        pending = sorted(brokers | set(self.bootstrap))
        while pending and time.monotonic() < deadline:
            pending = [a for a in pending if (self._epoch_or_none(a) or -1) < hw - 1]
            if pending:
                time.sleep(0.02)
        if pending:
            return
        want = self._levels_or_none(self.bootstrap[0])
        controllers = sorted({a for n, a in self.addresses.items() if n in self.controllers} - brokers)
        while want is not None and controllers and time.monotonic() < deadline:
            controllers = [a for a in controllers if self._levels_or_none(a) not in (None, want)]
            if controllers:
                time.sleep(0.02)

    def _levels_or_none(self, addr: tuple[str, int]) -> dict[str, int] | None:
        try:
            got = self._finalized(addr)
        except WireError:
            return None
        return {k: v for k, v in got[0].items() if k != "kraft.version"} if got is not None else None

    def _epoch_or_none(self, addr: tuple[str, int]) -> int | None:
        try:
            return self._epoch(addr)
        except WireError:
            return None

    def _high_watermark(self) -> int | None:
        addr = self.controller_addr or self.bootstrap[0]
        try:
            lo, hi = self.keys_of(addr).get(codec.DESCRIBE_QUORUM, (0, -1))
            v = min(hi, 2)
            if v < max(lo, 0):
                return None
            schema = _schema("request", codec.DESCRIBE_QUORUM, v)
            topic = codec.entity_type(schema, "topics")
            part = codec.entity_type(topic, "partitions")
            resp = self.client(addr).request(schema(topics=(topic(topic_name="__cluster_metadata",
                                                                   partitions=(part(partition_index=0),)),)))
            p = resp.topics[0].partitions[0] if resp.error_code == 0 and resp.topics else None
            return int(p.high_watermark) if p is not None and p.error_code == 0 else None
        except (WireError, IndexError, KeyError):
            return None  # not served as Kafka serves it: the cluster is read as it is


def _timedelta(seconds: float) -> Any:
    import datetime

    return datetime.timedelta(seconds=seconds)


def _ok(out: dict[str, Any]) -> dict[str, Any]:
    out.update(error="NONE", error_code=0, message=None)
    return out


_NO_MESSAGE = object()


def _err(out: dict[str, Any], error: str, message: Any = _NO_MESSAGE) -> dict[str, Any]:
    out.update(error=error, error_code=codec.error_code(error))
    if message is not _NO_MESSAGE:
        out["message"] = message  # only when the wire carried one: the comparison skips an absent message
    return out


def _invalid(out: dict[str, Any], message: str) -> dict[str, Any]:
    out.update(error="INVALID_COMMAND", error_code=None, message=message)
    return out
