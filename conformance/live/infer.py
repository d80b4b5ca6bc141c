"""Which release a node runs, from what it advertises: its supported feature ranges (newest
ApiVersions) and its ApiVersions / UpdateFeatures / BrokerRegistration maxima, matched against every
release profile.  Only release profiles are candidates (kip-1155 is a spec mode, chosen by name).
A node that matches several releases or none is reported as such -- never guessed silently."""

from __future__ import annotations

from dataclasses import dataclass

from ..wire import codec
from .view import NodeView, Observation


@dataclass(frozen=True)
class Inference:
    """The release the reference runs, why, and -- when what the cluster advertises does not decide
    it -- the assumption taken instead (the nearest release; --profile overrides it)."""

    profile: str
    evidence: list[str]
    unclear: str | None = None  # why no release could be told (a finding, KIP584-OBS-06), None: decided


def _release_profiles() -> list[str]:
    from reference_impl import profile_names

    return [n for n in profile_names() if n.startswith("kafka-")]


def candidates(node: NodeView) -> tuple[list[str], list[str]]:
    """(releases whose advertised surface equals the node's, evidence lines)."""
    from reference_impl import load_profile

    view = node.newest
    if view is None:
        return [], [f"{node.label}: no feature information (ApiVersions below v3 or no answer)"]
    seen = {k: tuple(v) for k, v in view.supported.items()}
    matches = []
    for name in _release_profiles():
        p = load_profile(name)
        b = p.behaviour
        if node.max_version(codec.API_VERSIONS) != b["api_versions_max_version"]:
            continue
        if node.role == "controller" and node.max_version(codec.UPDATE_FEATURES) not in (
                None, b["update_features_max_version"]):
            continue
        if node.role == "controller" and node.max_version(codec.BROKER_REGISTRATION) not in (
                None, b["broker_registration_max_version"]):
            continue
        for unstable in (False, True):
            if {k: tuple(v) for k, v in p.supported(node.role, unstable).items()} == seen:
                matches.append(name + (" (unstable versions enabled)" if unstable else ""))
                break
    mv = seen.get("metadata.version")
    evidence = [f"{node.label}: ApiVersions max v{node.max_version(codec.API_VERSIONS)}, UpdateFeatures max "
                f"v{node.max_version(codec.UPDATE_FEATURES)}, metadata.version {mv[0]}-{mv[1] if mv else '?'}, "
                f"{len(seen)} feature(s) -> " + (", ".join(matches) if matches else "no release matches")
                if mv else f"{node.label}: advertises no metadata.version range -> no release matches"]
    return matches, evidence


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in name.removeprefix("kafka-").split(".") if x.isdigit())


def distance(node: NodeView, name: str) -> int:
    """How far what a node advertises is from a release: one per API maximum and per feature range
    that differ (a missing feature counts as a differing range)."""
    from reference_impl import load_profile

    p = load_profile(name)
    b = p.behaviour
    d = int(node.max_version(codec.API_VERSIONS) != b["api_versions_max_version"])
    if node.role == "controller":
        d += int(node.max_version(codec.UPDATE_FEATURES) != b["update_features_max_version"])
        d += int(node.max_version(codec.BROKER_REGISTRATION) != b["broker_registration_max_version"])
    else:
        d += int(node.max_version(codec.UPDATE_FEATURES) is None)
    view = node.newest
    seen = {k: tuple(v) for k, v in (view.supported if view is not None else {}).items()}
    want = {k: tuple(v) for k, v in p.supported(node.role, False).items()}
    return d + sum(1 for k in set(seen) | set(want) if seen.get(k) != want.get(k))


def nearest(node: NodeView) -> str:
    """The release nearest to what the node advertises; ties go to the newest release."""
    names = _release_profiles()
    return min(names, key=lambda n: (distance(node, n), tuple(-x for x in _version(n))))


def infer_software(node: NodeView) -> tuple[str | None, str, str | None]:
    """(release, evidence, nearest release when none matches).  A release whose stable ranges match
    wins over one that matches only with unstable versions enabled (a test setting): kafka-4.2's
    stable ranges are kafka-4.1's unstable ones."""
    matches, evidence = candidates(node)
    stable = sorted(m for m in matches if " " not in m)
    names = stable or sorted({m.split(" ")[0] for m in matches})
    # Patches that advertise the same surface as their minor cannot be told apart over the wire: the
    # minor name (its newest patch) stands for them, and the evidence says so.
    minors = [n for n in names if all(m == n or m.startswith(n + ".") for m in names)]
    if len(names) > 1 and len(minors) == 1:
        patches = [m for m in names if m != minors[0]]
        return minors[0], f"{evidence[0]} (patches {', '.join(patches)} look the same; --profile picks one)", None
    if len(names) > 1:
        # Several releases advertise this very surface: the newest stands for them, and the evidence says so.
        pick = max(names, key=_version)
        return pick, f"{evidence[0]} ({pick}, the newest of them, is assumed; --profile picks one)", None
    if names:
        return names[0], evidence[0], None
    near = nearest(node)
    return None, f"{evidence[0]}; nearest: {near} ({distance(node, near)} difference(s))", near


def infer_profile(obs: Observation, given: str | None) -> Inference:
    """The profile the reference runs: the user's, else the active controller's release, else the
    brokers' one release.  When what the cluster advertises does not decide it, the nearest release
    (the active controller's, else the newest the brokers are nearest to) is assumed and the reason
    kept: that is a finding, not an error."""
    from reference_impl import load_profile

    evidence = [n.evidence for n in obs.nodes if n.evidence]
    if given:
        return Inference(load_profile(given).name, [f"--profile {given} (given)", *evidence])
    active = obs.node(obs.active_controller) if obs.active_controller is not None else None
    if active is not None and active.software:
        return Inference(active.software, [f"the active controller {active.id} runs {active.software}", *evidence])
    releases = {n.software for n in obs.brokers if n.newest is not None}
    if len(releases) == 1 and None not in releases:
        (name,) = releases
        assert name is not None
        why = (f"every broker runs {name}; the controller is not observed (give controller=HOST:PORT) "
               "and is taken to run the same release")
        return Inference(name, [why, *evidence])
    known = sorted((n.software for n in obs.brokers if n.software), key=_version)
    if active is not None and active.nearest:
        pick, basis = active.nearest, f"nearest to what the active controller {active.id} advertises"
    elif known and all(n.software for n in obs.brokers):
        pick, basis = known[-1], "the newest release the brokers run (controllers are upgraded first)"
    else:
        near = sorted((n.nearest or n.software or "" for n in obs.nodes if n.nearest or n.software), key=_version)
        pick = near[-1] if near else max(_release_profiles(), key=_version)
        basis = "nearest to what the nodes advertise" if near else "no node says anything: the newest release"
    unclear = ("cannot tell which release this cluster runs from what it advertises: "
               + "; ".join(evidence or obs.notes or ["no node answered"]))
    return Inference(pick, [f"assumed {pick}: {basis}; name the release with --profile", *evidence], unclear)
