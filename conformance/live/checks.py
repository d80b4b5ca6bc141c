"""The observe tier's invariants: what can be checked on what the nodes of a running cluster say,
without changing anything.  Each check has a stable rule id and returns the problems it found (an
empty list: it holds).  Node ids are the cluster's own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from reference_impl import KRAFT

from ..invariants import EPOCH, IN_RANGE, LEVEL_ZERO, epoch_went_back, levels_outside, zero_levels
from ..wire import codec
from ..wire.transport import Transport
from .observe import MV, NodeView, Observation


@dataclass(frozen=True)
class Check:
    id: str  # test id: "<rule>-<what>[-<node>]"
    rule: str
    title: str
    node: int | None  # None: a check of the whole cluster
    run: Callable[[], list[str]]
    needs_features: bool = True  # skipped (with the reason) on a node that reports no features
    inferred_only: bool = False  # exists only when the release is inferred: its repro names no --profile
    skip: str | None = None  # why it cannot run on this cluster (e.g. no metadata.version known yet)


def _release(node: NodeView, profile: str) -> Any:
    from reference_impl import load_profile

    return load_profile(node.software or profile)


def finalized_in_range(obs: Observation, node: NodeView) -> list[str]:
    view = node.newest
    assert view is not None
    return levels_outside(obs.finalized, view.supported, f"node {node.id}")


def level_zero_never_listed(node: NodeView) -> list[str]:
    return [f"ApiVersions v{v}: {problem}" for v, view in sorted(node.features.items())
            for problem in zero_levels({name: hi for name, (_, hi) in view.finalized.items()})]


def finalized_min_equals_max(node: NodeView) -> list[str]:
    # Kafka sends each finalized level as min_version_level = max_version_level = the level.
    return [f"ApiVersions v{v} sends finalized {name} with min_version_level {lo} and max_version_level {hi} "
            "(Kafka sends the level in both)" for v, view in sorted(node.features.items())
            for name, (lo, hi) in sorted(view.finalized.items()) if lo != hi]


def min0_omitted_below_v4(node: NodeView, profile: str) -> list[str]:
    out = []
    v4, below = node.features.get(4), [v for v in node.features if v < 4]
    omit = _release(node, profile).behaviour["min0_ranges_below_v4"] == "omit"
    for v in below:
        view = node.features[v]
        if omit:
            out += [f"ApiVersions v{v} carries {name} {lo}-{hi}: ranges with min 0 are left out below v4"
                    for name, (lo, hi) in sorted(view.supported.items()) if lo == 0]
        if v4 is not None:
            want = {k: r for k, r in v4.supported.items() if not (omit and r[0] == 0)}
            if view.supported != want:
                out.append(f"ApiVersions v{v} supported {_ranges(view.supported)} is not v4's {_ranges(want)}"
                           + (" without the min-0 ranges" if omit else ""))
    return out


def epoch_never_goes_back(target: Transport, node: NodeView) -> list[str]:
    """The epoch is an offset: a later read never shows a smaller one.  (It may grow with no write of
    ours: KRaft appends NoOpRecords every metadata.max.idle.interval.ms, KIP-835.)"""
    from .observe import read_features

    before = node.newest
    assert before is not None
    again = read_features(target, node.address, node.api_keys)
    now = again.get(before.version)
    if now is None:
        return [f"ApiVersions v{before.version} no longer answers with features"]
    went_back = epoch_went_back(before.epoch, now.epoch)
    if went_back:
        return [f"{problem} with no write in between" for problem in went_back]
    if now.levels != before.levels and not node.catching_up:  # catching up: the levels arrive
        return [f"finalized levels changed from {before.levels} to {now.levels} with no write of the suite"]
    return []


def nodes_agree(obs: Observation, node: NodeView) -> list[str]:
    src = obs.source
    view = node.newest
    assert src is not None and view is not None
    if view.levels != obs.finalized:
        return [f"node {node.id} reports finalized {view.levels}; {src.label} reports {obs.finalized}"]
    return []


def not_yet_known_as_its_release(node: NodeView, profile: str) -> list[str]:
    """A controller whose metadata.version is not yet known answers as its release's FeaturesPublisher
    starts: 4.4+ no finalized features (FinalizedFeatures.unknown(), KAFKA-19964); before, the minimum
    metadata.version (FinalizedFeatures.fromKRaftVersion(MINIMUM_VERSION)), kraft.version aside."""
    release = _release(node, profile)
    view = node.newest
    assert view is not None
    got = {k: v for k, v in view.levels.items() if k != KRAFT}
    if release.behaviour["features_before_catch_up"] == "unknown":
        want: dict[str, int] = {}
    else:
        want = {MV: release.mv_minimum}
    if got != want:
        text = (f"{node.label} answers at epoch {view.epoch} (not caught up) with finalized {got or 'nothing'}; "
                f"{release.name} answers {want or 'no finalized features'} then")
        return [text]
    return []


def cluster_views_agree(obs: Observation, node: NodeView) -> list[str]:
    """Every node's DescribeCluster lists the brokers the cluster has, under one cluster id."""
    view = node.cluster_view
    if view is None:
        return []
    if "error" in view:
        return [f"{node.label}'s DescribeCluster answered {view['error']}"]
    out = []
    brokers = sorted(n.id for n in obs.brokers)
    if view["brokers"] != brokers:
        out.append(f"{node.label}'s DescribeCluster lists brokers {view['brokers']}; the cluster has {brokers}")
    if obs.cluster_id and view["cluster_id"] != obs.cluster_id:
        out.append(f"{node.label}'s DescribeCluster names cluster {view['cluster_id']!r}, not {obs.cluster_id!r}")
    return out


def metadata_version_finalized(obs: Observation) -> list[str]:
    out = []
    if MV not in obs.finalized:
        src = obs.source
        out.append("no node reports a finalized metadata.version" + (
            f" ({src.label} finalizes {sorted(obs.finalized) or 'nothing'})" if src else
            " (no node answers ApiVersions v3+ with features)"))
    for n in obs.nodes:
        view = n.newest
        if view is not None and MV not in view.supported:
            out.append(f"{n.label} advertises no metadata.version range")
    return out


def release_features(node: NodeView, profile: str) -> list[str]:
    """The feature names a node of its release advertises (v4): the profile's, no more, no fewer."""
    release = _release(node, profile)
    view = node.newest
    assert view is not None
    want = set(release.supported(node.role, False))
    got = set(view.supported)
    out = []
    if want - got:
        out.append(f"{node.label} does not advertise {', '.join(sorted(want - got))} ({release.name} does)")
    if got - want - set(release.supported(node.role, True)):
        out.append(f"{node.label} advertises {', '.join(sorted(got - want))}, unknown to {release.name}")
    return out


def release_api_versions(obs: Observation, node: NodeView, profile: str) -> list[str]:
    from reference_impl import load_profile

    release = _release(node, profile)
    b = release.behaviour
    want = {codec.API_VERSIONS: b["api_versions_max_version"]}
    if node.role == "controller":
        want[codec.UPDATE_FEATURES] = b["update_features_max_version"]
        want[codec.BROKER_REGISTRATION] = b["broker_registration_max_version"]
    else:
        # A broker forwards UpdateFeatures: it advertises what it and the active controller both speak.
        active = obs.node(obs.active_controller) if obs.active_controller is not None else None
        ctl = load_profile(active.software) if active is not None and active.software else load_profile(profile)
        want[codec.UPDATE_FEATURES] = min(b["update_features_max_version"], ctl.behaviour["update_features_max_version"])
    out = []
    for key, top in want.items():
        got = node.max_version(key)
        name = codec.API_NAMES[key]
        if got is None:
            out.append(f"{node.label} does not advertise {name} ({key}); {release.name} serves v0-v{top}")
        elif got != top:
            out.append(f"{node.label} advertises {name} up to v{got}; {release.name} serves up to v{top}")
    return out


def answers_well_formed(node: NodeView) -> list[str]:
    """Every answer was one readable message of the version asked (trailing bytes: the body was kept)."""
    return [f"{node.label}: {a.text}" for a in node.anomalies if a.kind in ("malformed", "trailing")]


def api_versions_in_version_asked(node: NodeView) -> list[str]:
    return [f"{node.label}: {a.text}" for a in node.anomalies if a.kind == "version"]


def roles_agree(obs: Observation) -> list[str]:
    return list(obs.role_conflicts)


def release_told(unclear: str) -> list[str]:
    return [unclear]


def _ranges(r: dict[str, tuple[int, int]]) -> str:
    return "{" + ", ".join(f"{k}: {lo}-{hi}" for k, (lo, hi) in sorted(r.items())) + "}"


def checks(obs: Observation, profile: str, target: Transport, unclear: str | None = None) -> list[Check]:
    """Every observe-tier check of this cluster, cluster-wide first, then per node.  `unclear`: why the
    release could not be told from what the cluster advertises (the profile is then assumed)."""
    none_knows = ("no node knows the metadata.version yet (ApiVersions epoch -1: no node has caught up with the "
                  "metadata log, KIP584-API-05)") if obs.none_knows else None
    out = [Check("KIP778-OBS-01-metadata-version", "KIP778-OBS-01", "the cluster finalizes metadata.version and "
                 "every node advertises its range", None, partial(metadata_version_finalized, obs), False,
                 skip=none_knows)]
    if unclear:
        out.append(Check("KIP584-OBS-06-release", "KIP584-OBS-06", "what the cluster advertises is one Apache Kafka "
                         "release's", None, partial(release_told, unclear), False, True))
    if obs.controllers_asked:
        out.append(Check("KIP919-OBS-01-roles", "KIP919-OBS-01", "DescribeCluster endpoint type 2 lists controllers, "
                         "not the brokers Metadata lists", None, partial(roles_agree, obs), False))
    for n in obs.nodes:
        if n.down:
            continue  # nothing of it can be read: the table and the blocked tiers say so
        tag = f"{n.role}{n.id}"
        out += [
            Check(f"KIP482-WIRE-01-answers-{tag}", "KIP482-WIRE-01", f"every answer of {n.label} is one readable "
                  "message of the version asked", n.id, partial(answers_well_formed, n), False),
            Check(f"KIP511-API-01-version-{tag}", "KIP511-API-01", f"{n.label} answers ApiVersions in the version "
                  "asked", n.id, partial(api_versions_in_version_asked, n), False),
            Check(f"KIP584-OBS-05-api-versions-{tag}", "KIP584-OBS-05", f"{n.label} advertises its release's "
                  "ApiVersions / UpdateFeatures / BrokerRegistration maxima", n.id,
                  partial(release_api_versions, obs, n, profile), False),
            Check(f"KIP1022-OBS-01-features-{tag}", "KIP1022-OBS-01", f"{n.label} advertises its release's features",
                  n.id, partial(release_features, n, profile)),
            Check(f"{IN_RANGE.rule}-in-range-{tag}", IN_RANGE.rule, f"every finalized level lies in {n.label}'s "
                  "supported range", n.id, partial(finalized_in_range, obs, n)),
            Check(f"{LEVEL_ZERO.rule}-no-level-0-{tag}", LEVEL_ZERO.rule, f"{n.label} never lists a finalized level 0",
                  n.id, partial(level_zero_never_listed, n)),
            Check(f"KIP584-OBS-02-min-max-{tag}", "KIP584-OBS-02", f"{n.label} sends finalized levels as Kafka does "
                  "(min = max = level)", n.id, partial(finalized_min_equals_max, n)),
            Check(f"KIP1022-API-01-min0-below-v4-{tag}", "KIP1022-API-01", f"{n.label}'s ApiVersions below v4 "
                  "leaves out min-0 ranges, and says the same otherwise", n.id,
                  partial(min0_omitted_below_v4, n, profile)),
            Check(f"{EPOCH.rule}-epoch-{tag}", EPOCH.rule, f"{n.label}'s epoch never goes back and its levels "
                  "hold between reads", n.id, partial(epoch_never_goes_back, target, n)),
            Check(f"KIP584-OBS-04-agree-{tag}", "KIP584-OBS-04", f"{n.label} agrees with the active controller's "
                  "finalized levels", n.id, partial(nodes_agree, obs, n),
                  skip=f"{n.label}'s metadata.version is not yet known (KIP584-API-05)" if n.catching_up else none_knows),
            Check(f"KIP584-API-05-not-yet-known-{tag}", "KIP584-API-05", f"{n.label}, not caught up, answers "
                  "ApiVersions as its release does then", n.id, partial(not_yet_known_as_its_release, n, profile),
                  skip=None if n.catching_up and n.role == "controller" else f"{n.label} has caught up"),
            Check(f"KIP584-OBS-04-cluster-view-{tag}", "KIP584-OBS-04", f"{n.label}'s DescribeCluster lists the "
                  "cluster's brokers", n.id, partial(cluster_views_agree, obs, n), False),
        ]
    return out


def example_precondition(example: dict[str, Any], ctx: Any, capabilities: frozenset[str]) -> tuple[int, str | None]:
    """Where a recorded example can start on this live cluster: (index of its first step to run, None)
    when its set-up (the leading steps the cluster cannot take: format, restore_state, registrations)
    leads to the state the cluster is in and its other steps fit the enabled tiers; else (0, the
    precondition that failed)."""
    from reference_impl import Cluster

    steps = [s["command"] for s in example["steps"]]
    first = 0
    while first < len(steps) and steps[first].get("op") not in capabilities:
        first += 1
    rest = steps[first:]
    missing = sorted({c.get("op") for c in rest} - capabilities)
    if missing:
        return 0, f"needs op(s) {', '.join(str(m) for m in missing)} after its set-up"
    if "mutate" not in ctx.tiers and any(c.get("op") == "update_features" and (
            not c.get("validate_only") or c.get("version") == 0) for c in rest):
        return 0, "changes feature levels: needs tier mutate"
    ref = Cluster(example["profile"])
    for c in steps[:first]:
        ref.apply(c)
    if not ref.formatted:
        return 0, "its set-up formats no cluster"
    want = ref.finalized_view()
    got = dict(sorted(ctx.observation.finalized.items()))
    if want != got:
        return 0, f"needs finalized {want}; the cluster has {got}"
    brokers = sorted(ref.image.brokers)
    seen = sorted(n.id for n in ctx.observation.modelled_brokers)
    if brokers != seen:
        return 0, f"needs brokers {brokers}; the cluster has {seen}"
    if example["profile"] != ctx.profile:
        return 0, f"is for {example['profile']}; the cluster runs {ctx.profile}"
    # kraft.version is the quorum's own protocol and never goes back (3.9 writes it as an ordinary
    # feature, 4.1+ in the raft layer): the suite never changes it on a running cluster.
    for c in rest:
        if c.get("op") != "register":
            continue
        if c.get("role") == "controller":
            # A controller registration is never removed (there is no UnregisterController): the
            # synthetic one would take part in every later feature check of the cluster.
            return 0, "registers a controller, which a running cluster would keep for good"
        if c.get("previous_session_alive"):
            # Kafka's BrokerHeartbeatManager.hasValidSession is false for a fenced broker, and a
            # synthetic broker never heartbeats: its session is never alive.
            return 0, "needs a live broker session, which a synthetic broker (no heartbeats) never has"
    if any(c.get("op") == "update_features" and (not c.get("validate_only") or c.get("version") == 0)
           and any(u.get("feature") == KRAFT for u in c.get("updates", [])) for c in rest):
        return 0, f"writes {KRAFT}, which the suite never changes on a running cluster"
    return first, None
