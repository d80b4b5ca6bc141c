"""The cluster as observed: every node a running cluster shows over the Kafka protocol, and what each
node says -- read-only, and only in API keys and versions the node advertises.

Discovery: ApiVersions v0 to each bootstrap address (every Kafka node answers v0, KIP-511), Metadata
(brokers, cluster id) and DescribeCluster endpoint type 1 (brokers, fenced) where advertised,
DescribeCluster endpoint type 2 on the controller listener the user gives (KIP-919: controllers and
the real active controller).  Per node: its API keys and versions, ApiVersions at v4 and at the
highest version below 4 (supported features, finalized features with their min/max levels, epoch).
Node ids are whatever the cluster uses.
"""

from __future__ import annotations

from typing import Any

from ..wire import codec
from ..wire.client import WireError
from ..wire.transport import Transport
from .infer import infer_software
from .view import MV, FeatureView, NodeView, Observation

__all__ = ["MV", "FeatureView", "NodeView", "Observation", "Transport", "observe", "read_features",
           "restore_command", "send_request"]

KIO_MAX = {codec.API_VERSIONS: 5, codec.METADATA: 12, codec.DESCRIBE_CLUSTER: 2}


def send_request(target: Transport, addr: tuple[str, int], api_key: int, version: int, **fields: Any) -> Any:
    schema = codec.request_schema(api_key, version)
    if schema is None:
        raise WireError(f"kio has no {codec.API_NAMES.get(api_key)} v{version} request")
    names = set(getattr(schema, "__dataclass_fields__", {}))
    return target.client(addr).request(schema(**{k: v for k, v in fields.items() if k in names}))


def _negotiated(keys: dict[int, tuple[int, int]], api_key: int, lowest: int = 0) -> int | None:
    """The highest version both the node and kio speak, at least `lowest`; None: not advertised."""
    lo, hi = keys.get(api_key, (0, -1))
    v = min(hi, KIO_MAX.get(api_key, hi))
    return v if v >= max(lo, lowest) else None


def read_features(target: Transport, addr: tuple[str, int], keys: dict[int, tuple[int, int]]) -> dict[int, FeatureView]:
    """ApiVersions at the node's newest version (v4 at most) and at the highest version below 4."""
    out: dict[int, FeatureView] = {}
    lo, hi = keys.get(codec.API_VERSIONS, (0, 0))
    newest = min(hi, KIO_MAX[codec.API_VERSIONS])
    for v in sorted({newest, min(newest, 3)}):
        if v < 3 or v < lo:
            continue  # features are v3+ tagged fields
        resp = send_request(target, addr, codec.API_VERSIONS, v, client_software_name="kfc", client_software_version="1")
        if resp.error_code != 0:
            raise WireError(f"{target.client(addr).where}: ApiVersions v{v} answered {codec.error_name(resp.error_code)}")
        out[v] = FeatureView(
            v, {f.name: (int(f.min_version), int(f.max_version)) for f in resp.supported_features},
            {f.name: (int(f.min_version_level), int(f.max_version_level)) for f in resp.finalized_features},
            int(resp.finalized_features_epoch))
    return out


def read_cluster_view(target: Transport, addr: tuple[str, int],
                      keys: dict[int, tuple[int, int]]) -> dict[str, Any] | None:
    """The node's DescribeCluster answer for brokers (None: it does not advertise DescribeCluster)."""
    v = _negotiated(keys, codec.DESCRIBE_CLUSTER)
    if v is None:
        return None
    resp = send_request(target, addr, codec.DESCRIBE_CLUSTER, v, endpoint_type=1,
                        include_cluster_authorized_operations=False, include_fenced_brokers=True)
    if resp.error_code != 0:
        return {"error": codec.error_name(resp.error_code)}
    return {"brokers": sorted(int(b.broker_id) for b in resp.brokers), "controller_id": int(resp.controller_id),
            "cluster_id": resp.cluster_id}


# Cluster-level configs a feature update reads (ConfigurationControlManager.maybeGenerateElrSafetyRecords).
CLUSTER_CONFIGS = ("min.insync.replicas",)
_DYNAMIC_DEFAULT_BROKER_CONFIG = 3  # DescribeConfigsResponse.ConfigSource


def read_cluster_configs(target: Transport, addr: tuple[str, int],
                         keys: dict[int, tuple[int, int]]) -> frozenset[str] | None:
    """Which of CLUSTER_CONFIGS are set at cluster level (None: DescribeConfigs v1+ not served, or refused)."""
    v = _negotiated(keys, codec.DESCRIBE_CONFIGS, lowest=1)
    if v is None:
        return None
    schema = codec.request_schema(codec.DESCRIBE_CONFIGS, min(v, 4))
    if schema is None:
        return None
    resource = codec.entity_type(schema, "resources")
    try:
        resp = target.client(addr).request(schema(
            resources=(resource(resource_type=4, resource_name="", configuration_keys=CLUSTER_CONFIGS),),
            include_synonyms=False, include_documentation=False))
    except WireError:
        return None
    found: set[str] = set()
    for r in resp.results:
        if r.error_code != 0:
            return None
        found |= {c.name for c in r.configs if c.config_source == _DYNAMIC_DEFAULT_BROKER_CONFIG}
    return frozenset(found)


def observe(target: Transport) -> Observation:
    """Discover every node and read what it says (TargetError when no node answers at all)."""
    from ..targets.errors import TargetError

    notes: list[str] = []
    # Keyed by role too: a combined node (process.roles=broker,controller) is two listeners, one id.
    nodes: dict[tuple[str, int], NodeView] = {}
    cluster_id: str | None = None
    active: int | None = None
    keys_at: dict[tuple[str, int], dict[int, tuple[int, int]]] = {}
    key_errors: dict[tuple[str, int], str] = {}

    def keys(addr: tuple[str, int]) -> dict[int, tuple[int, int]] | None:
        if addr in key_errors:
            return None  # asked once: one note, not one per caller
        if addr not in keys_at:
            try:
                keys_at[addr] = target.keys_of(addr)
            except WireError as e:
                key_errors[addr] = str(e)
                notes.append(str(e))
                return None
        return keys_at[addr]

    # Controllers first (KIP-919): the listener the user named.
    claimed: dict[int, tuple[str, int]] = {}  # what endpoint type 2 lists: controllers, if the cluster is right
    asked = False
    if target.controller_addr is not None:
        k = keys(target.controller_addr)
        v = _negotiated(k or {}, codec.DESCRIBE_CLUSTER, lowest=1)
        if k is not None and v is None:
            notes.append(f"the controller listener {_where(target.controller_addr)} does not advertise "
                         "DescribeCluster v1+ (KIP-919): its controllers are not discovered")
        elif k is not None and v is not None:
            try:
                resp = send_request(target, target.controller_addr, codec.DESCRIBE_CLUSTER, v, endpoint_type=2,
                                    include_cluster_authorized_operations=False, include_fenced_brokers=True)
                if resp.error_code == 0:
                    asked = True
                    active, cluster_id = int(resp.controller_id), resp.cluster_id
                    claimed = {int(b.broker_id): (b.host, int(b.port)) for b in resp.brokers}
                else:
                    notes.append(f"DescribeCluster (controllers) on {_where(target.controller_addr)}: "
                                 f"{codec.error_name(resp.error_code)}")
            except WireError as e:
                notes.append(str(e))
        if k is not None and target.controller_addr not in claimed.values():
            notes.append(f"the controller listener {_where(target.controller_addr)} is not among the controllers "
                         "DescribeCluster lists")
    # Brokers: Metadata, then DescribeCluster endpoint type 1 for the fenced flag.
    brokers: dict[int, tuple[str, int]] = {}
    fenced: dict[int, bool] = {}
    for addr in target.bootstrap:
        k = keys(addr)
        if k is None:
            continue
        v = _negotiated(k, codec.METADATA, lowest=1)
        if v is None:
            notes.append(f"{_where(addr)} does not advertise Metadata: not a broker listener")
            continue
        try:
            resp = send_request(target, addr, codec.METADATA, v, topics=(), allow_auto_topic_creation=False,
                                include_topic_authorized_operations=False, include_cluster_authorized_operations=False)
        except WireError as e:
            notes.append(str(e))
            continue
        cluster_id = cluster_id or getattr(resp, "cluster_id", None)
        brokers = {int(b.node_id): (b.host, int(b.port)) for b in resp.brokers}
        dv = _negotiated(k, codec.DESCRIBE_CLUSTER, lowest=2)
        if dv is not None:
            try:
                dc = send_request(target, addr, codec.DESCRIBE_CLUSTER, dv, endpoint_type=1,
                                  include_cluster_authorized_operations=False, include_fenced_brokers=True)
                if dc.error_code == 0:
                    for b in dc.brokers:
                        brokers.setdefault(int(b.broker_id), (b.host, int(b.port)))
                        fenced[int(b.broker_id)] = bool(getattr(b, "is_fenced", False))
            except WireError as e:
                notes.append(str(e))
        break
    # Roles where the cluster says they are, cross-checked: a node that Metadata lists as a broker at the
    # address endpoint type 2 gives is a broker listener, whatever DescribeCluster (controllers) claims.
    conflicts = []
    for cid, addr in sorted(claimed.items()):
        if brokers.get(cid) == addr:
            conflicts.append(f"DescribeCluster endpoint type 2 on {_where(target.controller_addr or addr)} lists "
                             f"node {cid} at {_where(addr)}, which Metadata lists as a broker there")
            continue
        nodes[("controller", cid)] = NodeView(cid, "controller", addr)
    if conflicts and active is not None and ("controller", active) not in nodes:
        active = None  # the "active controller" it named is a broker: not observed
    for nid, addr in brokers.items():
        # A combined node is a controller and a broker under one id, on two listeners.
        nodes.setdefault(("broker", nid), NodeView(nid, "broker", addr, fenced=fenced.get(nid)))
    if not nodes:
        # Nothing listed anybody: describe the bootstrap addresses themselves, ids unknown (-1, -2 …).
        for i, addr in enumerate(target.bootstrap):
            if keys(addr) is not None:
                nodes[("broker", -1 - i)] = NodeView(-1 - i, "broker", addr)
                notes.append(f"{_where(addr)} lists no node (no Metadata): shown as node {-1 - i}")
    if not nodes:
        raise TargetError(f"{target.name}: no node answered: {'; '.join(notes)}")
    for n in nodes.values():
        target.labels[n.address] = n.label
        k = keys(n.address)
        if k is None:
            n.error = key_errors.get(n.address)
            continue
        n.api_keys = dict(sorted(k.items()))
        try:
            n.features = read_features(target, n.address, k)
        except WireError as e:
            n.error = str(e)
            notes.append(str(e))
        try:
            # Endpoint type 1 (brokers) is a broker listener's question: a controller answers it
            # MISMATCHED_ENDPOINT_TYPE (KIP-919).
            n.cluster_view = read_cluster_view(target, n.address, k) if n.role == "broker" else None
        except WireError as e:
            n.error = n.error or str(e)
            notes.append(str(e))
        n.anomalies = target.client(n.address).anomalies  # the same list: later answers join it
    obs = Observation(cluster_id, sorted(nodes.values(), key=lambda n: (n.role != "controller", n.id)), active,
                      list(dict.fromkeys(notes)), controllers_asked=asked, role_conflicts=conflicts)
    for n in obs.brokers:
        if n.error is None:
            obs.cluster_configs = read_cluster_configs(target, n.address, n.api_keys)
            break
    for n in obs.nodes:
        n.software, n.evidence, n.nearest = infer_software(n)
        if n.catching_up:
            obs.notes.append(f"{n.label}: {not_yet_known(n)}")
    return obs


def not_yet_known(node: NodeView) -> str:
    view = node.newest
    assert view is not None
    said = f"finalized {view.levels}" if view.finalized else "no finalized features"
    return (f"metadata.version not yet known (ApiVersions epoch {view.epoch}, {said}): it has not caught up "
            "with the metadata log, so it is not held to the cluster's finalized levels (KIP584-API-05)")


def _where(addr: tuple[str, int]) -> str:
    return f"{addr[0]}:{addr[1]}"


def restore_command(obs: Observation, profile: str) -> dict[str, Any] | None:
    """The restore_state command stating the observed cluster (None: no node answers ApiVersions with
    features, so there is no state to state).  A cluster that finalizes no metadata.version is stated
    as such (metadata_version 0: the reference then finalizes none either).  Node ranges are what
    each node says at its newest ApiVersions; a node's release (for the rest of its behaviour) is its
    inferred one, else the run's profile."""
    src = obs.source
    fin = obs.finalized
    if src is None:
        return None
    controllers = []
    for c in obs.controllers:
        view = c.newest
        # DescribeCluster lists registered controllers; the active one's own registration is never checked.
        spec: dict[str, Any] = {"id": c.id, "software": c.software or profile,
                                "registered": c.id != obs.active_controller}
        if c.catching_up:
            spec["caught_up"] = False  # its ApiVersions knows no metadata.version yet (KIP584-API-05)
        if view is not None:
            spec["ranges"] = {k: list(v) for k, v in sorted(view.supported.items())}
        controllers.append(spec)
    if not controllers:
        # No controller listener: the brokers forward, the controller runs the run's profile.
        controllers = [{"id": _unused_id(obs), "software": profile}]
    active = obs.active_controller if obs.active_controller in {c["id"] for c in controllers} else controllers[0]["id"]
    brokers = []
    for b in obs.modelled_brokers:
        view = b.newest
        spec = {"id": b.id, "software": b.software or profile}
        if view is not None:
            spec["ranges"] = {k: list(v) for k, v in sorted(view.supported.items())}
        if b.fenced:
            spec["fenced"] = True
        brokers.append(spec)
    kraft = fin.get("kraft.version", 0)
    cmd: dict[str, Any] = {
        "op": "restore_state", "metadata_version": fin.get(MV, 0),
        "finalized": {k: v for k, v in fin.items() if k not in (MV, "kraft.version")},
        "kraft_version": kraft, "controllers": controllers, "active_controller": active,
        "voters": [c["id"] for c in controllers], "brokers": brokers,
    }
    if obs.cluster_configs:
        cmd["cluster_configs"] = sorted(obs.cluster_configs)
    # The records this state takes must end at the observed epoch (the finalized epoch is an offset).
    need = int(MV in fin) + sum(1 for v in cmd["finalized"].values() if v) + sum(1 for c in controllers if c.get("registered")) \
        + len(brokers) + len(cmd.get("cluster_configs", []))
    # A broker reports its image's highest offset, a controller the offset where the features last
    # changed (Kafka's FeaturesPublisher): the log ends at the newest any node shows.
    controller_epoch = max((c.newest.epoch for c in obs.controllers if c.newest is not None), default=None)
    newest = max((n.newest.epoch for n in obs.nodes if n.newest is not None), default=obs.epoch or 0)
    cmd["end_offset"] = max(newest, need - 1)
    if controller_epoch is not None and 0 <= controller_epoch <= cmd["end_offset"]:
        cmd["features_offset"] = controller_epoch
    if obs.cluster_id:
        cmd["cluster_id"] = obs.cluster_id
    return cmd


def _unused_id(obs: Observation) -> int:
    ids = {n.id for n in obs.nodes}
    candidate = 3000
    while candidate in ids:
        candidate += 1
    return candidate
