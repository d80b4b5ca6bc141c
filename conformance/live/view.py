"""What an observation of a running cluster holds: each node as it answered, and the cluster they
show (plain data; conformance.live.observe fills it, the live checks and inference read it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reference_impl import MV

from ..wire.client import Anomaly


@dataclass
class FeatureView:
    """One ApiVersions answer (v3+): what the node supports and what it says is finalized."""

    version: int
    supported: dict[str, tuple[int, int]]
    finalized: dict[str, tuple[int, int]]  # name -> (min_version_level, max_version_level) as sent
    epoch: int

    @property
    def levels(self) -> dict[str, int]:
        return {k: v[1] for k, v in sorted(self.finalized.items())}


@dataclass
class NodeView:
    id: int
    role: str  # "broker" | "controller"
    address: tuple[str, int]
    api_keys: dict[int, tuple[int, int]] = field(default_factory=dict)
    features: dict[int, FeatureView] = field(default_factory=dict)  # ApiVersions version -> answer
    fenced: bool | None = None
    cluster_view: dict[str, Any] | None = None  # its DescribeCluster (brokers): {"brokers": [...], "controller_id"}
    error: str | None = None  # the node did not answer (the text names the request)
    software: str | None = None  # the release its answers match (inference), None: unknown
    evidence: str = ""
    nearest: str | None = None  # no release matches: the nearest one by what it advertises
    anomalies: list[Anomaly] = field(default_factory=list)  # answers that were not the message asked for

    def advertises(self, api_key: int, version: int | None = None) -> bool:
        lo, hi = self.api_keys.get(api_key, (0, -1))
        return hi >= lo and (version is None or lo <= version <= hi)

    def max_version(self, api_key: int) -> int | None:
        r = self.api_keys.get(api_key)
        return r[1] if r else None

    @property
    def newest(self) -> FeatureView | None:
        return self.features[max(self.features)] if self.features else None

    @property
    def label(self) -> str:
        return f"{self.role} {self.id}"

    @property
    def catching_up(self) -> bool:
        """Its metadata.version is not yet known: it has not caught up with the metadata log (KIP584-API-05).
        ApiVersions says so with epoch -1 and no finalized metadata.version (4.4+, KAFKA-19964); before 4.4
        a controller claims the minimum metadata.version at epoch -1 (a controller's epoch is the offset of
        its last features batch, never negative once its FeaturesPublisher has published).  Only a
        controller answers before catching up (a broker serves requests after its initial catch-up,
        BrokerServer@4.4), and only a node that supports metadata.version has one to learn: a broker
        of an implementation without feature versioning (epoch -1, nothing finalized) is not this."""
        view = self.newest
        return view is not None and view.epoch < 0 and self.role == "controller" and MV in view.supported

    @property
    def down(self) -> bool:
        """Registered, fenced, and not answering: a stopped broker (or one a killed run registered)."""
        return bool(self.fenced) and not self.api_keys


@dataclass
class Observation:
    cluster_id: str | None
    nodes: list[NodeView]
    active_controller: int | None  # from DescribeCluster endpoint type 2, None: not observed
    notes: list[str] = field(default_factory=list)  # what could not be observed, and why
    # Cluster-level dynamic configs that are set (DescribeConfigs of the default broker resource),
    # among those feature updates look at; None: not observed.
    cluster_configs: frozenset[str] | None = None
    controllers_asked: bool = False  # DescribeCluster endpoint type 2 was answered (a controller listener given)
    role_conflicts: list[str] = field(default_factory=list)  # DescribeCluster (controllers) vs Metadata (brokers)

    def node(self, node_id: int) -> NodeView | None:
        return next((n for n in self.nodes if n.id == node_id), None)

    @property
    def brokers(self) -> list[NodeView]:
        return [n for n in self.nodes if n.role == "broker"]

    @property
    def controllers(self) -> list[NodeView]:
        return [n for n in self.nodes if n.role == "controller"]

    @property
    def down(self) -> list[NodeView]:
        return [n for n in self.nodes if n.down]

    @property
    def modelled_brokers(self) -> list[NodeView]:
        """The brokers the reference holds: a combined node (a broker and a controller under one id) is
        modelled as its controller (same process, same ranges)."""
        ids = {n.id for n in self.controllers}
        return [n for n in self.brokers if n.id not in ids]

    @property
    def source(self) -> NodeView | None:
        """The node whose view states the cluster: the active controller, else the first broker that
        answered ApiVersions with features -- never a node whose metadata.version is not yet known."""
        order = ([n for n in self.controllers if n.id == self.active_controller]
                 + [n for n in self.brokers] + [n for n in self.controllers])
        return next((n for n in order if n.newest is not None and not n.catching_up), None)

    @property
    def catching_up(self) -> list[NodeView]:
        return [n for n in self.nodes if n.catching_up]

    @property
    def none_knows(self) -> bool:
        """Every node that answered ApiVersions with features has not caught up: no metadata.version yet."""
        return self.source is None and bool(self.catching_up)

    @property
    def finalized(self) -> dict[str, int]:
        src = self.source
        return src.newest.levels if src is not None and src.newest is not None else {}

    @property
    def epoch(self) -> int | None:
        src = self.source
        return src.newest.epoch if src is not None and src.newest is not None else None
