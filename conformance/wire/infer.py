"""Which release a node runs, from what it advertises: its supported feature ranges (newest
ApiVersions) and its ApiVersions / UpdateFeatures / BrokerRegistration maxima, matched against every
release profile.  Only release profiles are candidates (kip-1155 is a spec mode, chosen by name).
A node that matches several releases or none is reported as such -- never guessed silently."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import codec

if TYPE_CHECKING:
    from .observe import NodeView, Observation


class ProfileUnclear(Exception):
    """The cluster's release cannot be told from what it advertises: the user must name it."""


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


def infer_software(node: NodeView) -> tuple[str | None, str]:
    """A release whose stable ranges match wins over one that matches only with unstable versions
    enabled (a test setting): kafka-4.2's stable ranges are kafka-4.1's unstable ones."""
    matches, evidence = candidates(node)
    stable = sorted(m for m in matches if " " not in m)
    names = stable or sorted({m.split(" ")[0] for m in matches})
    # Patches that advertise the same surface as their minor cannot be told apart over the wire: the
    # minor name (its newest patch) stands for them, and the evidence says so.
    minors = [n for n in names if all(m == n or m.startswith(n + ".") for m in names)]
    if len(names) > 1 and len(minors) == 1:
        patches = [m for m in names if m != minors[0]]
        return minors[0], f"{evidence[0]} (patches {', '.join(patches)} look the same; --profile picks one)"
    return (names[0] if len(names) == 1 else None), evidence[0]


def infer_profile(obs: Observation, given: str | None) -> tuple[str, list[str]]:
    """The profile the reference runs: the user's, else the active controller's release, else the
    brokers' one release.  Returns (profile, evidence lines); ProfileUnclear when it cannot be told."""
    from reference_impl import load_profile

    evidence = [n.evidence for n in obs.nodes if n.evidence]
    if given:
        return load_profile(given).name, [f"--profile {given} (given)", *evidence]
    active = obs.node(obs.active_controller) if obs.active_controller is not None else None
    if active is not None and active.software:
        return active.software, [f"the active controller {active.id} runs {active.software}", *evidence]
    releases = {n.software for n in obs.brokers if n.newest is not None}
    if len(releases) == 1 and None not in releases:
        (name,) = releases
        assert name is not None
        why = (f"every broker runs {name}; the controller is not observed (give controller=HOST:PORT) "
               "and is taken to run the same release")
        return name, [why, *evidence]
    raise ProfileUnclear("cannot tell which release this cluster runs from what it advertises; name it with "
                         "--profile (or ?profile=): " + "; ".join(evidence or obs.notes or ["no node answered"]))
