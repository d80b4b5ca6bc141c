"""`kfc serve-broker`: a Kafka-protocol server backed by the reference model (docs/wire.md).

One listener per node of the reference cluster: brokers 1..N on BASE..BASE+N-1, the active
controller on BASE+N; nodes that appear later (registrations, a format with more controllers) get
a listener on a free port.  Each listener answers with its own node's view.  Served: ApiVersions
v0-v4, Metadata v0-v12, DescribeCluster v0-v2, UpdateFeatures v0-v2 (brokers forward to the active
controller, as KRaft brokers do), UnregisterBroker v0, UnregisterController v0 (KIP-1312, where the
node's release has it), and on controller listeners
BrokerRegistration v0-v4 and ControllerRegistration v0; plus our control extension (api key
32100, JSON body) that resets and formats the reference behind the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from reference_impl import UPGRADE_TYPE_NAMES, Cluster, InputError, load_profile
from reference_impl.api import DEFAULT_CONTROLLER_ID

from ..wire import codec
from ..wire.codec import (
    API_VERSIONS,
    BROKER_REGISTRATION,
    CONTROL_API_KEY,
    CONTROLLER_REGISTRATION,
    DESCRIBE_CLUSTER,
    DESCRIBE_CONFIGS,
    METADATA,
    UNREGISTER_BROKER,
    UNREGISTER_CONTROLLER,
    UPDATE_FEATURES,
)
from ..wire.framing import MAX_FRAME, FrameError, frame, read_frame

CONTROL_PROTOCOL = 1
MAX_LISTENERS = 64  # registrations can name any id: bound the sockets a client can make us open
METADATA_MAX, DESCRIBE_CLUSTER_MAX = 12, 2


def _build(schema: Any, **values: Any) -> Any:
    """A kio payload with the given fields; the fields this version lacks are dropped, the ones
    not given are blanked like an error response's."""
    names = {f.name: f for f in fields(schema)}
    kwargs = {k: v for k, v in values.items() if k in names}
    for name, f in names.items():
        if name not in kwargs and f.default is f.default_factory:  # both MISSING: required
            kwargs[name] = codec._blank(f)
    return schema(**kwargs)


class Reply:
    """What a handler sends back (None: close the connection) and what the log line says."""

    def __init__(self, body: Any, error: str = "NONE", close: bool = False, control: bool = False):
        self.body, self.error, self.close, self.control = body, error, close, control


class BrokerServer:
    def __init__(self, profile: str | None = None, nodes: int = 3, host: str = "127.0.0.1", base_port: int = 9092,
                 release_version: str | None = None, idle_timeout: float = 30.0, max_frame: int = MAX_FRAME,
                 control: bool = True, log: Any = None, brokers: list[tuple[int, str | None]] | None = None,
                 controllers: list[tuple[int, str | None]] | None = None,
                 cluster_factory: Callable[[str], Cluster] | None = None, standalone: bool = False):
        self.profile = load_profile(profile).name
        self.n_brokers, self.host, self.base_port = nodes, host, base_port
        # The start-up cluster: brokers (id, release) and controllers (id, release; the first is active).
        self.broker_specs = brokers or [(n, None) for n in range(1, nodes + 1)]
        self.controller_specs = controllers or [(DEFAULT_CONTROLLER_ID, None)]
        self.make_cluster: Callable[[str], Cluster] = cluster_factory or Cluster
        self.release_version, self.idle_timeout, self.max_frame = release_version, idle_timeout, max_frame
        self.control_enabled = control
        self.standalone = standalone  # a dynamic quorum (kraft.version 1), as `kafka-storage format --standalone`
        self.log_stream = log if log is not None else sys.stderr
        self.cluster = self.make_cluster(self.profile)
        self.listeners: dict[int, asyncio.Server] = {}
        self.ports: dict[int, int] = {}
        self.hints: dict[tuple[str, int], dict[str, Any]] = {}
        self.requests = 0
        self.connections: set[asyncio.Task[Any]] = set()

    # -- set-up --------------------------------------------------------------------------------------
    def bootstrap(self) -> None:
        """Format the cluster and register brokers 1..N with the profile's software (InputError on failure)."""
        p = load_profile(self.controller_specs[0][1] or self.profile)
        # Default: the newest production metadata.version every node's release supports (mixed software).
        releases = [load_profile(sw or self.profile) for _, sw in self.broker_specs + self.controller_specs]
        rv = self.release_version or p.mv_name(min(r.mv_latest_production for r in releases))
        controllers = [{"id": n, **({"software": sw} if sw else {})} for n, sw in self.controller_specs]
        fmt = {"op": "format", "release_version": rv, "controllers": controllers,
               **({"standalone": True} if self.standalone else {})}
        out = self.cluster.apply(fmt)
        if out["error"] != "NONE":
            raise InputError(f"format --release-version {rv}{' --standalone' if self.standalone else ''}: "
                             f"{out['message']}")
        for node, software in self.broker_specs:
            cmd: dict[str, Any] = {"op": "register", "role": "broker", "node": node}
            if software:
                cmd["software"] = software
            out = self.cluster.apply(cmd)
            if out["error"] != "NONE":
                raise InputError(f"registering broker {node}" + (f" ({software})" if software else "")
                                 + f": {out['error']}: {out['message']}")

    async def start(self) -> None:
        base = self.base_port
        for i, node in enumerate([n for n, _ in self.broker_specs] + [n for n, _ in self.controller_specs]):
            await self._listen(node, base + i if base else 0)
        await self.sync_listeners()

    async def _listen(self, node: int, port: int) -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            if task is not None:
                self.connections.add(task)
            try:
                await self._connection(node, reader, writer)
            finally:
                self.connections.discard(task)  # type: ignore[arg-type]

        server = await asyncio.start_server(handle, self.host, port, limit=64 * 1024)
        self.listeners[node] = server
        self.ports[node] = server.sockets[0].getsockname()[1]

    async def sync_listeners(self) -> None:
        """A listener for every node the reference now has (ports of earlier nodes are kept)."""
        for node in sorted(set(self.cluster.controllers) | set(self.cluster.image.brokers)):
            if node not in self.listeners and len(self.listeners) < MAX_LISTENERS:
                await self._listen(node, 0)

    async def close(self) -> None:
        for server in self.listeners.values():
            server.close()
        # Open connections outlive server.close() in 3.11: end them so the exit is quiet and prompt.
        for task in list(self.connections):
            task.cancel()
        await asyncio.gather(*self.connections, return_exceptions=True)
        for server in self.listeners.values():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)

    def addresses(self) -> dict[str, Any]:
        c = self.cluster
        brokers = {str(n): self.ports[n] for n in sorted(c.image.brokers) if n in self.ports}
        controllers = {str(n): self.ports[n] for n in sorted(c.controllers) if n in self.ports}
        return {"host": self.host, "cluster_id": c.cluster_id, "profile": c.default_software,
                "formatted": c.formatted, "active_controller": c.active_id,
                "controller": f"{self.host}:{self.ports.get(c.active_id, 0)}",
                "brokers": brokers, "controllers": controllers,
                "bootstrap": ",".join(f"{self.host}:{p}" for p in brokers.values()),
                "listeners": {str(n): p for n, p in sorted(self.ports.items())}}

    # -- connections ---------------------------------------------------------------------------------
    def log(self, node: int, api: str, version: int | str, corr: int | str, error: str, client: str | None = None,
            note: str = "") -> None:
        line = f"node={node} api={api} v={version} corr={corr} error={error}"
        if client:
            line += f" client={client}"
        if note:
            line += f" ({note})"
        with contextlib.suppress(Exception):
            print(line, file=self.log_stream, flush=True)

    async def _connection(self, node: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for _ in range(1 << 30):  # until EOF, an idle timeout, garbage or a handler's close
                try:
                    data = await asyncio.wait_for(read_frame(reader, self.max_frame), self.idle_timeout)
                except TimeoutError:
                    self.log(node, "-", "-", "-", "IDLE_TIMEOUT", note=f"closed after {self.idle_timeout:g} s idle")
                    break
                except FrameError as e:
                    self.log(node, "-", "-", "-", "BAD_FRAME", note=f"{e}; closed")
                    break
                if data is None:
                    break
                reply = self._dispatch(node, data)
                if isinstance(reply, asyncio.Future) or asyncio.iscoroutine(reply):
                    reply = await reply
                if reply.body is not None:
                    writer.write(frame(reply.body))
                    await asyncio.wait_for(writer.drain(), self.idle_timeout)
                if reply.close or reply.body is None:
                    break
        except (ConnectionError, OSError, TimeoutError, asyncio.CancelledError):
            pass  # the peer went away, or the server is stopping
        except Exception as e:  # noqa: BLE001 - never let one connection take the server down
            self.log(node, "-", "-", "-", "INTERNAL", note=f"{type(e).__name__}: {e}")
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1)

    def _dispatch(self, node: int, data: bytes) -> Any:
        self.requests += 1
        try:
            req = codec.decode_request(data)
        except codec.BadRequest as e:
            return self._bad_request(node, e)
        except codec.CodecError as e:
            self.log(node, "-", "-", "-", "BAD_REQUEST", note=f"{e}; closed")
            return Reply(None)
        name = codec.API_NAMES.get(req.api_key, str(req.api_key))
        if req.api_key == CONTROL_API_KEY:
            return self._control(node, req)
        if not self._running(node):
            self.log(node, name, req.api_version, req.correlation_id, "NODE_NOT_RUNNING", req.client_id, "closed")
            return Reply(None)
        handler = self._handlers(node).get(req.api_key)
        if handler is None:
            self.log(node, name, req.api_version, req.correlation_id, "UNSUPPORTED_API", req.client_id,
                     "not served on this listener; closed")
            return Reply(None)
        try:
            reply = handler(node, req)
        except Exception as e:  # noqa: BLE001 - a reference bug becomes an error response, not a crash
            body = codec.error_response(req.api_key, req.api_version, -1, f"{type(e).__name__}: {e}")
            reply = Reply(None if body is None else body, "UNKNOWN_SERVER_ERROR", close=True)
            if body is not None:
                reply.body = codec.encode_response(req.correlation_id, body)
            self.log(node, name, req.api_version, req.correlation_id, reply.error, req.client_id, str(e))
            return reply
        if asyncio.iscoroutine(reply):
            return self._finish(node, req, name, reply)
        self.log(node, name, req.api_version, req.correlation_id, reply.error, req.client_id)
        if reply.body is not None:
            reply.body = codec.encode_response(req.correlation_id, reply.body)
        return reply

    async def _finish(self, node: int, req: codec.Request, name: str, pending: Any) -> Reply:
        reply: Reply = await pending
        self.log(node, name, req.api_version, req.correlation_id, reply.error, req.client_id)
        if reply.body is not None:
            reply.body = (codec.encode_control_response(req.correlation_id, reply.body) if reply.control
                          else codec.encode_response(req.correlation_id, reply.body))
        return reply

    def _bad_request(self, node: int, e: codec.BadRequest) -> Reply:
        name = codec.API_NAMES.get(e.api_key, str(e.api_key))
        served = e.api_key in self._handlers(node) if self._running(node) else False
        if e.api_key == API_VERSIONS and not e.known:
            # KIP-511: a version this node cannot read is answered in v0 with the versions it has.
            body = self._api_versions_error(node, "UNSUPPORTED_VERSION")
            self.log(node, name, e.api_version, e.correlation_id, "UNSUPPORTED_VERSION", note=str(e))
            return Reply(codec.encode_response(e.correlation_id, body))
        if served and e.known:
            code = codec.error_code("INVALID_REQUEST")
            body = codec.error_response(e.api_key, e.api_version, code, str(e))
            self.log(node, name, e.api_version, e.correlation_id, "INVALID_REQUEST", note=f"{e}; closed")
            if body is not None:
                return Reply(codec.encode_response(e.correlation_id, body), "INVALID_REQUEST", close=True)
            return Reply(None)
        self.log(node, name, e.api_version, e.correlation_id, "BAD_REQUEST", note=f"{e}; closed")
        return Reply(None)

    # -- nodes ---------------------------------------------------------------------------------------
    def _running(self, node: int) -> bool:
        c = self.cluster
        return node in c.controllers or node in c.image.brokers

    def _is_controller(self, node: int) -> bool:
        return node in self.cluster.controllers

    def _handlers(self, node: int) -> dict[int, Any]:
        common = {API_VERSIONS: self._api_versions, UPDATE_FEATURES: self._update_features,
                  DESCRIBE_CLUSTER: self._describe_cluster, UNREGISTER_BROKER: self._unregister,
                  UNREGISTER_CONTROLLER: self._unregister_controller}
        if UNREGISTER_CONTROLLER not in self.api_keys(node):
            del common[UNREGISTER_CONTROLLER]  # a release before 4.4 does not know the API key
        if self._is_controller(node):
            return {**common, BROKER_REGISTRATION: self._broker_registration,
                    CONTROLLER_REGISTRATION: self._controller_registration}
        return {**common, METADATA: self._metadata, DESCRIBE_CONFIGS: self._describe_configs}

    def api_keys(self, node: int) -> dict[int, tuple[int, int]]:
        c = self.cluster
        n = c.node(node)
        p = n.profile if n is not None else c.active_profile
        ctrl = c.active_profile
        uf = p.behaviour["update_features_max_version"]
        keys = {API_VERSIONS: (0, p.behaviour["api_versions_max_version"]), DESCRIBE_CLUSTER: (0, DESCRIBE_CLUSTER_MAX),
                UNREGISTER_BROKER: (0, 0)}
        if "unregister_controller_metadata_version" in p.behaviour and (
                self._is_controller(node) or "unregister_controller_metadata_version" in ctrl.behaviour):
            keys[UNREGISTER_CONTROLLER] = (0, 0)  # KIP-1312 (4.4+); a broker forwards it to the controller
        if self._is_controller(node):
            keys.update({UPDATE_FEATURES: (0, uf), BROKER_REGISTRATION: (0, p.behaviour["broker_registration_max_version"]),
                         CONTROLLER_REGISTRATION: (0, 0)})
        else:
            # Forwarded APIs: a KRaft broker advertises what it and the controller both speak.
            keys.update({METADATA: (0, METADATA_MAX), UPDATE_FEATURES: (0, min(uf, ctrl.behaviour["update_features_max_version"])),
                         DESCRIBE_CONFIGS: (1, 4)})
        return dict(sorted(keys.items()))

    def _advertised(self, node: int, api_key: int, version: int) -> bool:
        lo, hi = self.api_keys(node).get(api_key, (0, -1))
        return lo <= version <= hi

    # -- ApiVersions ---------------------------------------------------------------------------------
    def _api_versions_error(self, node: int, error: str) -> Any:
        schema = codec.response_schema(API_VERSIONS, 0)
        item = codec.entity_type(schema, "api_keys")
        keys = tuple(item(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in self.api_keys(node).items())
        return schema(error_code=codec.ErrorCode(codec.error_code(error)), api_keys=keys)

    def _api_versions(self, node: int, req: codec.Request) -> Reply:
        v = req.api_version
        if not self._advertised(node, API_VERSIONS, v):
            return Reply(self._api_versions_error(node, "UNSUPPORTED_VERSION"), "UNSUPPORTED_VERSION")
        cmd: dict[str, Any] = {"op": "api_versions", "node": node, "version": v}
        if v >= 5:  # KIP-1242: the ids the client means
            cmd.update(cluster_id=req.body.cluster_id, node_id=int(req.body.node_id))
        out = self.cluster.apply(cmd)
        schema = codec.response_schema(API_VERSIONS, v)
        if out["error"] == "REBOOTSTRAP_REQUIRED":
            # Written at the request's version with no api keys (ApiVersionsRequest.getErrorResponse).
            code = codec.ErrorCode(codec.error_code(out["error"]))
            return Reply(_build(schema, error_code=code, api_keys=()), out["error"])
        if out["error"] != "NONE":
            return Reply(self._api_versions_error(node, out["error"]), out["error"])
        item = codec.entity_type(schema, "api_keys")
        values: dict[str, Any] = {
            "error_code": codec.ErrorCode.none,
            "api_keys": tuple(item(api_key=k, min_version=lo, max_version=hi)
                              for k, (lo, hi) in self.api_keys(node).items())}
        if out.get("supported") is not None:
            sup, fin = codec.entity_type(schema, "supported_features"), codec.entity_type(schema, "finalized_features")
            values["supported_features"] = tuple(sup(name=k, min_version=lo, max_version=hi)
                                                 for k, (lo, hi) in out["supported"].items())
            values["finalized_features"] = tuple(fin(name=k, max_version_level=lv, min_version_level=lv)
                                                 for k, lv in out["finalized"].items())
            values["finalized_features_epoch"] = out["epoch"]
        return Reply(_build(schema, **values))

    # -- discovery -----------------------------------------------------------------------------------
    def _client_controller_id(self) -> int:
        # KRaft brokers name a live broker as "controller" to clients: it forwards controller APIs.
        brokers = sorted(self.cluster.image.brokers)
        return brokers[0] if brokers else -1

    def _metadata(self, node: int, req: codec.Request) -> Reply:
        schema = codec.response_schema(METADATA, req.api_version)
        item = codec.entity_type(schema, "brokers")
        brokers = tuple(item(node_id=n, host=self.host, port=self.ports[n], rack=None)
                        for n in sorted(self.cluster.image.brokers) if n in self.ports)
        return Reply(_build(schema, brokers=brokers, cluster_id=self.cluster.cluster_id,
                            controller_id=self._client_controller_id(), topics=(),
                            error_code=codec.ErrorCode.none))

    def _describe_cluster(self, node: int, req: codec.Request) -> Reply:
        schema = codec.response_schema(DESCRIBE_CLUSTER, req.api_version)
        item = codec.entity_type(schema, "brokers")
        endpoint = int(getattr(req.body, "endpoint_type", 1))
        c = self.cluster
        # ControllerApis.handleDescribeCluster checks metadata.version first (KIP919-DESC-01).  Only a controller
        # that has not caught up refuses here: below 3.7-IV0 serve-broker still answers, as the suite's own
        # discovery of a control=1 cluster formatted that low asks it (docs/wire.md).
        late = self._is_controller(node) and not c.controllers[node].caught_up
        refusal = c.direct_to_controller_refusal(node) if late else None
        if refusal is not None:
            code = codec.ErrorCode(codec.error_code("UNSUPPORTED_VERSION"))
            return Reply(_build(schema, error_code=code, error_message=refusal[0], endpoint_type=endpoint,
                                cluster_id=c.cluster_id, controller_id=-1, brokers=()), "UNSUPPORTED_VERSION")
        if endpoint == 2:  # KIP-919: the controllers, and the real active controller
            ids, controller = sorted(c.controllers), c.active_id
        else:
            ids, controller = sorted(c.image.brokers), self._client_controller_id()
        nodes = tuple(_build(item, broker_id=n, host=self.host, port=self.ports[n], rack=None, is_fenced=False)
                      for n in ids if n in self.ports)
        return Reply(_build(schema, error_code=codec.ErrorCode.none, error_message=None, endpoint_type=endpoint,
                            cluster_id=c.cluster_id, controller_id=controller, brokers=nodes))

    # -- feature updates -----------------------------------------------------------------------------
    def _update_features(self, node: int, req: codec.Request) -> Reply:
        v = req.api_version
        schema = codec.response_schema(UPDATE_FEATURES, v)
        if not self._advertised(node, UPDATE_FEATURES, v):
            msg = f"UpdateFeatures version {v} is not supported by node {node}"
            body = codec.error_response(UPDATE_FEATURES, v, codec.error_code("UNSUPPORTED_VERSION"), msg)
            return Reply(body, "UNSUPPORTED_VERSION")
        updates = []
        for u in req.body.feature_updates:
            kind: Any
            if v == 0:
                kind = "SAFE_DOWNGRADE" if u.allow_downgrade else "UPGRADE"
            else:
                code = int(u.upgrade_type)
                kind = UPGRADE_TYPE_NAMES.get(code, code)
            updates.append({"feature": u.feature, "level": int(u.max_version_level), "upgrade_type": kind})
        cmd: dict[str, Any] = {"op": "update_features", "version": v, "updates": updates,
                               "validate_only": bool(getattr(req.body, "validate_only", False))}
        if self._is_controller(node):
            cmd["node"] = node  # a non-active controller answers NOT_CONTROLLER; brokers forward
        out = self.cluster.apply(cmd)
        error = out["error"]
        wire_error = "INVALID_REQUEST" if out["error_code"] is None else error
        values: dict[str, Any] = {"error_code": codec.ErrorCode(codec.error_code(wire_error)),
                                  "error_message": out.get("message"), "results": ()}
        if v <= 1 and out.get("results"):
            item = codec.entity_type(schema, "results")
            values["results"] = tuple(
                item(feature=name, error_code=codec.ErrorCode(codec.error_code(r["error"])),
                     error_message=r.get("message"))
                for name, r in out["results"].items())
        return Reply(_build(schema, **values), wire_error)

    # -- registration --------------------------------------------------------------------------------
    def _hinted(self, role: str, node_id: int, cmd: dict[str, Any], features: Any) -> dict[str, Any]:
        hint = self.hints.pop((role, node_id), None)
        if hint is not None:
            # The client told us (control extension) which release this synthetic node runs: the
            # reference then answers that node's ApiVersions as that release would.
            for key in ("software", "unstable", "previous_session_alive", "ranges"):
                if hint.get(key) is not None:
                    cmd[key] = hint[key]
        if "software" not in cmd and "ranges" not in cmd:
            cmd["ranges"] = {f.name: [int(f.min_supported_version), int(f.max_supported_version)] for f in features}
        return cmd

    async def _broker_registration(self, node: int, req: codec.Request) -> Reply:
        b = req.body
        schema = codec.response_schema(BROKER_REGISTRATION, req.api_version)
        if node != self.cluster.active_id:
            body = codec.error_response(BROKER_REGISTRATION, req.api_version, codec.error_code("NOT_CONTROLLER"), None)
            return Reply(body, "NOT_CONTROLLER")
        cmd = {"op": "register", "role": "broker", "node": int(b.broker_id), "version": req.api_version,
               "cluster_id": b.cluster_id, "incarnation": str(b.incarnation_id)}
        out = self.cluster.apply(self._hinted("broker", int(b.broker_id), cmd, b.features))
        wire_error = "INVALID_REQUEST" if out["error_code"] is None else out["error"]
        await self.sync_listeners()
        return Reply(_build(schema, error_code=codec.ErrorCode(codec.error_code(wire_error)),
                            broker_epoch=out.get("broker_epoch", -1)), wire_error)

    async def _controller_registration(self, node: int, req: codec.Request) -> Reply:
        b = req.body
        if node != self.cluster.active_id:
            body = codec.error_response(CONTROLLER_REGISTRATION, 0, codec.error_code("NOT_CONTROLLER"), None)
            return Reply(body, "NOT_CONTROLLER")
        cmd = {"op": "register", "role": "controller", "node": int(b.controller_id),
               "incarnation": str(b.incarnation_id)}
        out = self.cluster.apply(self._hinted("controller", int(b.controller_id), cmd, b.features))
        wire_error = "INVALID_REQUEST" if out["error_code"] is None else out["error"]
        await self.sync_listeners()
        body = codec.error_response(CONTROLLER_REGISTRATION, 0, codec.error_code(wire_error), out.get("message"))
        return Reply(body, wire_error)

    def _describe_configs(self, node: int, req: codec.Request) -> Reply:
        """The cluster-level broker configs the image holds (resource type BROKER, name ""), as a KRaft
        broker describes its dynamic defaults: source DYNAMIC_DEFAULT_BROKER_CONFIG (3).  The reference
        keeps which are set, not their values: the value is "1" (what enabling ELR writes by default)."""
        schema = codec.response_schema(DESCRIBE_CONFIGS, req.api_version)
        result = codec.entity_type(schema, "results")
        config = codec.entity_type(result, "configs")
        results = []
        for r in req.body.resources:
            if int(r.resource_type) != 4 or r.resource_name != "":
                results.append(_build(result, error_code=codec.ErrorCode(codec.error_code("INVALID_REQUEST")),
                                      error_message="kfc serve-broker describes only the cluster-level broker configs",
                                      resource_type=r.resource_type, resource_name=r.resource_name, configs=()))
                continue
            wanted = set(r.configuration_keys) if r.configuration_keys is not None else None
            names = sorted(n for n in self.cluster.image.cluster_configs if wanted is None or n in wanted)
            results.append(_build(result, error_code=codec.ErrorCode.none, error_message=None,
                                  resource_type=r.resource_type, resource_name="", configs=tuple(
                                      _build(config, name=n, value="1", read_only=False, config_source=3,
                                             is_sensitive=False, synonyms=(), config_type=3, documentation=None)
                                      for n in names)))
        return Reply(_build(schema, results=tuple(results)))

    def _unregister(self, node: int, req: codec.Request) -> Reply:
        out = self.cluster.apply({"op": "unregister", "node": int(req.body.broker_id)})
        wire_error = "INVALID_REQUEST" if out["error_code"] is None else out["error"]
        body = codec.error_response(UNREGISTER_BROKER, 0, codec.error_code(wire_error), out.get("message"))
        return Reply(body, wire_error)

    def _unregister_controller(self, node: int, req: codec.Request) -> Reply:
        out = self.cluster.apply({"op": "unregister", "role": "controller", "node": int(req.body.controller_id)})
        wire_error = "INVALID_REQUEST" if out["error_code"] is None else out["error"]
        # UnregisterControllerRequest.getErrorResponse carries the exception's message (4.4.0).
        body = codec.error_response(UNREGISTER_CONTROLLER, 0, codec.error_code(wire_error), out.get("message"))
        return Reply(body, wire_error)

    # -- control extension ---------------------------------------------------------------------------
    def _control(self, node: int, req: codec.Request) -> Any:
        op = req.body.get("op")
        if not self.control_enabled:
            self.log(node, "KfcControl", op or "-", req.correlation_id, "DISABLED", req.client_id, "closed")
            return Reply(None)

        async def run() -> Reply:
            try:
                reply = await self._control_op(req.body)
            except InputError as e:
                reply = {"error": str(e)}
            return Reply(reply, "NONE" if "error" not in reply else "CONTROL_ERROR", control=True)

        return self._finish(node, req, f"KfcControl/{op}", run())

    async def _control_op(self, cmd: dict[str, Any]) -> dict[str, Any]:
        op = cmd.get("op")
        if op == "hello":
            return {"protocol": CONTROL_PROTOCOL, **self.addresses()}
        if op == "reset":
            self.cluster = self.make_cluster(cmd.get("profile") or self.profile)  # InputError before anything changes
            self.hints.clear()
            await self.sync_listeners()
            return {"protocol": CONTROL_PROTOCOL, **self.addresses()}
        if op == "bootstrap":  # back to the start-up state: formatted, brokers 1..N registered
            self.cluster = self.make_cluster(cmd.get("profile") or self.profile)
            self.hints.clear()
            self.bootstrap()
            await self.sync_listeners()
            return {"protocol": CONTROL_PROTOCOL, **self.addresses()}
        # format, or a stated state (restore_state: e.g. a controller that has not caught up, KIP584-API-05)
        if op in ("format", "restore_state"):
            command = cmd.get("command")
            if not isinstance(command, dict):
                raise InputError(f"control {op} needs a 'command' object")
            outcome = self.cluster.apply({**command, "op": op})
            self.hints.clear()
            await self.sync_listeners()
            return {"outcome": outcome, **self.addresses()}
        if op == "expect_register":
            role, node = cmd.get("role", "broker"), cmd.get("node")
            if role not in ("broker", "controller") or not isinstance(node, int):
                raise InputError("expect_register needs role broker/controller and an integer node")
            self.hints[(role, node)] = {k: cmd.get(k) for k in ("software", "unstable", "previous_session_alive",
                                                                 "ranges")}
            return {"ok": True}
        raise InputError(f"unknown control op {op!r}; known: hello, reset, bootstrap, format, restore_state, "
                         "expect_register")


async def run_server(server: BrokerServer, announce: Any = None, stop: asyncio.Event | None = None) -> None:
    """Start, announce the ports (one JSON line), serve until `stop` is set or SIGINT/SIGTERM."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    await server.start()
    if announce is not None:
        announce(json.dumps(server.addresses()))
    started = time.monotonic()
    try:
        await stop.wait()
    finally:
        await server.close()
        server.log(0, "-", "-", "-", "NONE", note=f"stopped after {time.monotonic() - started:.1f} s, "
                                                   f"{server.requests} request(s)")
