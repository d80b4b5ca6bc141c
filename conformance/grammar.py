"""The command grammar: op kinds, value pools and command builders, behind a small chooser.

Two drivers use it: the corpus generator (`RandomChooser` over `random.Random`: byte-stable
corpora) and the stateful model (`DrawChooser` over Hypothesis draws: shrinking).  Builders read
the cluster's current state from the reference cluster the driver keeps in lockstep, and return a
command; the driver applies it.  Options are listed most interesting first: Hypothesis shrinks
towards the first one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from reference_impl import KRAFT, MV, Cluster, Profile, load_profile, profile_names

from .families import COORDINATORS, UNKNOWN_VALUE_VERSION

T = TypeVar("T")

UPGRADE_TYPES = ("UPGRADE", "SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE", "UNKNOWN")  # drawing order (corpus bytes)
PAYLOADS = ("scram_credential", "delegation_token", "directory_assignment", "elr_partition_state",
            "cordoned_log_dir")
BROKER_IDS = (1, 2, 3)
FIRST_CONTROLLER = 3000
BAD_RELEASES = ("9.9-IV9", "2.9-IV2", "3.6-IVI", "3.2-IV0", "3.3", "nonsense")
UNKNOWN_FEATURE = "unknown.feature.version"
DYNAMIC_QUORUM_MV = 21  # 3.9-IV0: the first metadata.version a KIP-853 (dynamic) quorum can run

# Op kinds: base weight for the generator and the error names each tends to reach (its coverage guidance).
KINDS: dict[str, tuple[float, tuple[str, ...]]] = {
    "register_broker": (14, ("UNSUPPORTED_VERSION", "INVALID_REGISTRATION", "INCONSISTENT_CLUSTER_ID",
                             "DUPLICATE_BROKER_REGISTRATION")),
    "register_controller": (5, ("UNSUPPORTED_VERSION", "UNKNOWN_SERVER_ERROR")),
    "controller_rollback": (2, ("UNSUPPORTED_VERSION", "INVALID_UPDATE_VERSION")),
    "roll_broker": (3, ("UNSUPPORTED_VERSION",)),
    "unregister": (4, ("BROKER_ID_NOT_REGISTERED",)),
    "unregister_controller": (3, ("CONTROLLER_ID_NOT_REGISTERED", "INVALID_REQUEST", "UNSUPPORTED_VERSION")),
    "update_features": (18, ("INVALID_UPDATE_VERSION", "UNSUPPORTED_VERSION", "NOT_CONTROLLER")),
    "downgrade_metadata_version": (4, ("INVALID_UPDATE_VERSION",)),
    "kip1155_downgrade": (6, ("INVALID_UPDATE_VERSION",)),
    "features_tool": (7, ("TOOL_ERROR", "INVALID_UPDATE_VERSION")),
    "add_metadata": (5, ("UNSUPPORTED_VERSION",)),
    "api_versions": (5, ("UNSUPPORTED_VERSION", "NETWORK_EXCEPTION")),
    "describe": (4, ("UNSUPPORTED_VERSION", "NETWORK_EXCEPTION")),
    "snapshot": (3, ("INVALID_UPDATE_VERSION", "INVALID_COMMAND")),
    "load_snapshot": (2, ()),
    "load_coordinator": (4, ("UNKNOWN_SERVER_ERROR",)),
    "version_mapping": (2, ("TOOL_ERROR",)),
    "feature_dependencies": (2, ("TOOL_ERROR",)),
    "reformat": (2, ("TOOL_ERROR",)),
    "restore_state": (1, ("INVALID_COMMAND",)),
    "state": (1, ()),
}


class Chooser(Protocol):
    """Where the grammar's choices come from."""

    def pick(self, options: Sequence[T], label: str) -> T: ...

    def chance(self, p: float, label: str) -> bool: ...

    def integer(self, lo: int, hi: int, label: str) -> int: ...

    def sample(self, options: Sequence[T], k: int, label: str) -> list[T]: ...

    def weighted(self, options: Sequence[T], weights: Sequence[float], label: str) -> T: ...


class RandomChooser:
    """`random.Random` draws: the same seed gives the same commands (the generator)."""

    def __init__(self, rng: Any):
        self.rng = rng

    def pick(self, options: Sequence[T], label: str) -> T:
        return options[self.rng.randrange(len(options))]

    def chance(self, p: float, label: str) -> bool:
        return bool(self.rng.random() < p)

    def integer(self, lo: int, hi: int, label: str) -> int:
        return int(self.rng.randint(lo, hi))

    def sample(self, options: Sequence[T], k: int, label: str) -> list[T]:
        return list(self.rng.sample(list(options), k))

    def weighted(self, options: Sequence[T], weights: Sequence[float], label: str) -> T:
        return self.rng.choices(list(options), weights)[0]  # type: ignore[no-any-return]


_ATOMS = frozenset({str, int, float, bool, type(None)})
_STRATEGIES: dict[Any, Any] = {}  # the strategies DrawChooser draws from, made once (see DrawChooser)


def _strategy(key: tuple[Any, ...], make: Any) -> Any:
    s = _STRATEGIES.get(key)
    if s is None:
        if len(_STRATEGIES) >= 4096:
            _STRATEGIES.clear()
        s = _STRATEGIES[key] = make()
    return s


def _atoms_key(options: Sequence[Any]) -> tuple[Any, ...] | None:
    """A cache key for a list of plain values (with their types: 1, 1.0 and True differ), else None."""
    opts = tuple(options)
    types = tuple(map(type, opts))
    return opts + types if _ATOMS.issuperset(types) else None


class DrawChooser:
    """Hypothesis draws (the stateful model): every choice shrinks towards the first option / False.

    Cheap draws, the same draws: a strategy is made once per distinct option list (making one is
    most of a `sampled_from` draw's cost), and a draw goes straight to the test case's
    ConjectureData, skipping what `DataObject.draw` adds around it (a random-module state check and
    a note for the final report), except when Hypothesis reports a failing example and the notes are
    wanted.  Either way Hypothesis records the same choices: runs, shrinking and the derandomized ci
    sequence are what plain `data.draw` gives."""

    def __init__(self, data: Any):
        from hypothesis import strategies as st

        self.data, self.st = data, st
        from ._hypothesis_seam import direct_draw

        # One chooser serves one rule of one test case: whether notes are wanted does not change.
        self._direct = direct_draw(data)

    def _draw(self, strategy: Any, label: str) -> Any:
        if self._direct is None:
            return self.data.draw(strategy, label=label)
        return self._direct(strategy)

    def pick(self, options: Sequence[T], label: str) -> T:
        key = _atoms_key(options)
        if key is None:
            strategy = self.st.sampled_from(list(options))
        else:
            strategy = _strategy(("sampled_from", key), lambda: self.st.sampled_from(list(options)))
        return self._draw(strategy, label)  # type: ignore[no-any-return]

    def chance(self, p: float, label: str) -> bool:
        if p <= 0 or p >= 1:
            return p >= 1
        return self.weighted((False, True), (1 - p, p), label)

    def integer(self, lo: int, hi: int, label: str) -> int:
        return int(self._draw(_strategy(("integers", lo, hi), lambda: self.st.integers(lo, hi)), label))

    def sample(self, options: Sequence[T], k: int, label: str) -> list[T]:
        def make() -> Any:
            return self.st.lists(self.st.sampled_from(list(options)), min_size=k, max_size=k, unique=True)

        key = _atoms_key(options)
        return list(self._draw(make() if key is None else _strategy(("sample", k, key), make), label))

    def weighted(self, options: Sequence[T], weights: Sequence[float], label: str) -> T:
        """A pick from 20 slots shared out by weight (each option keeps at least one): a small choice
        Hypothesis draws evenly, where buckets of a wide integer range come out skewed; shrinks
        towards the first option."""
        total = float(sum(weights))
        slots = [o for o, w in zip(options, weights, strict=True) if w > 0
                 for _ in range(max(1, round(20 * w / total)))]
        return self.pick(slots, label)


class Grammar:
    """The command builders of one profile."""

    def __init__(self, profile: str):
        self.profile: Profile = load_profile(profile)
        self.names = list(profile_names())
        self.kinds = [k for k in KINDS if (k != "kip1155_downgrade" or self.profile.behaviour["kip1155"])
                      and (k != "unregister_controller" or self.has_unregister_controller)]
        # A live cluster (conformance.live): its own node ids stay untouched by registrations, only
        # nodes it shows are asked, and the absent node is one it does not have.
        self.broker_ids: tuple[int, ...] = BROKER_IDS
        self.stray_broker, self.absent_node = 4, 99
        self.visible: set[int] | None = None
        self.synthetic_only = False
        # A target that runs one release's code (kafka-jvm) runs every node -- controllers and brokers,
        # whose own code answers ApiVersions -- only on that release: the profiles it can run (None:
        # any).  Draws stay the same; only the software drawn is replaced.
        self.active_software: frozenset[str] | None = None

    def live(self, ids: set[int]) -> Grammar:
        """Set the pools for a live cluster whose nodes have these ids."""
        top = max([*ids, 0]) + 1
        self.broker_ids = (top, top + 1, top + 2)
        self.stray_broker, self.absent_node = top + 3, top + 99
        self.visible, self.synthetic_only = set(ids), True
        return self

    # -- value pools ----------------------------------------------------------------------------
    def bootstrap_levels(self, production: bool = True) -> list[int]:
        p = self.profile
        return [v for v in p.mv_levels if v >= p.mv_minimum_bootstrap and (p.versions[v].production or not production)]

    def software(self, ch: Chooser) -> str:
        """A node's software: mostly the cluster's release or a neighbour (rolling upgrade/downgrade)."""
        home = self.names.index(self.profile.name)
        kind = ch.weighted(("same", "neighbour", "any"), (0.4, 0.45, 0.15), "software")
        if kind == "same":
            return self.profile.name
        if kind == "neighbour":
            i = home + ch.pick((-1, 1, -2, 2, -1, 1), "step")
            return self.names[min(max(i, 0), len(self.names) - 1)]
        return ch.pick(self.names, "software name")

    def level_near(self, ch: Chooser, cluster: Cluster, name: str) -> int:
        """A level for `name` around its finalized level (most interesting first)."""
        p, cur = self.profile, cluster.finalized_view().get(name, 0)
        if name == MV:
            cands = [cur - 1, p.mv_minimum, 15, cur + 1, cur, p.mv_latest_production, cur - 2, cur + 2, 0,
                     p.mv_latest_testing + 1]
        else:
            feat = p.features.get(name)
            top = feat.latest_testing if feat else 1
            cands = [cur + 1, cur - 1, top, 0, cur, top + 1, -1]
        return int(ch.pick(list(dict.fromkeys(cands)), f"{name} level"))

    def probe_nodes(self, cluster: Cluster) -> list[int]:
        """Nodes to ask: registered brokers, controllers, a node that is not there, brokers that left."""
        img = cluster.image
        nodes = [*sorted(img.brokers), *cluster.controllers, self.absent_node,
                 *sorted(n for n in cluster.nodes if n not in img.brokers)]
        if self.visible is not None:
            nodes = [n for n in nodes if n in self.visible or n == self.absent_node]
        return nodes

    # -- set-up ---------------------------------------------------------------------------------
    def format(self, ch: Chooser, *, valid: bool = False) -> dict[str, Any]:
        p = self.profile
        prod = self.bootstrap_levels()
        n_ctl = ch.pick((1, 2, 3, 1), "controllers")
        controllers: list[dict[str, Any]] = [{"id": FIRST_CONTROLLER + i} for i in range(n_ctl)]
        if n_ctl > 1 and ch.chance(0.2, "mixed controller software"):
            controllers[-1]["software"] = self._runnable(self.software(ch))
        cmd: dict[str, Any] = {"op": "format", "controllers": controllers}
        if valid:
            dynamic_ok = [v for v in prod if v >= DYNAMIC_QUORUM_MV]
            if KRAFT in p.features and dynamic_ok and ch.chance(0.3, "valid dynamic quorum"):
                # A KIP-853 quorum needs metadata.version 3.9-IV0 or later: choose one that can have it.
                cmd["release_version"] = p.mv_name(ch.pick(dynamic_ok[::-1][:4], "release"))
                cmd["standalone"] = True
                return cmd
            cmd["release_version"] = p.mv_name(ch.pick(prod[::-1][:4], "release"))
            return cmd
        how = ch.weighted(("release", "features", "unstable", "bad release"), (0.62, 0.22, 0.10, 0.06), "format")
        if how == "release":
            rel = p.versions[ch.pick(prod[::-1], "release")]
            cmd["release_version"] = rel.release if ch.chance(0.1, "short name") else rel.name
        elif how == "unstable":
            unstable = [v for v in self.bootstrap_levels(False) if not p.versions[v].production]
            cmd["release_version"] = p.mv_name(ch.pick(unstable or prod, "unstable release"))
            if ch.chance(0.7, "unstable flag"):
                cmd["unstable"] = True
        elif how == "bad release":
            too_old = [p.mv_name(v) for v in p.mv_levels if v < p.mv_minimum_bootstrap]
            cmd["release_version"] = ch.pick([*BAD_RELEASES, *too_old], "bad release")
        else:
            if ch.chance(0.85, "with release"):
                cmd["release_version"] = p.mv_name(ch.pick(prod[::-1], "release"))
            feats = [*p.production_features, "nope.version", MV]
            flags = []
            for _ in range(ch.pick((1, 2, 1), "flags")):
                f = ch.pick(feats, "feature")
                if f == MV:
                    flags.append(f"{MV}={ch.pick(prod, 'level')}")
                    continue
                feat = p.features.get(f)
                top = feat.latest_testing if feat else 1
                lv: Any = ch.pick((1, 0, top, top + 1, "x"), "level") if ch.chance(0.9, "well-formed") else ""
                flags.append(f"{f}={lv}")
            cmd["features"] = flags
            if ch.chance(0.1, "unstable flag"):
                cmd["unstable"] = True
        if p.behaviour["format_style"] not in ("3.7", "3.8") or ch.chance(0.05, "quorum flags anyway"):
            quorum = ch.weighted(("static", "standalone", "initial_controllers", "no_initial_controllers", "both"),
                                 (0.70, 0.15, 0.07, 0.05, 0.03), "quorum")
            dynamic_ok = [v for v in prod if v >= DYNAMIC_QUORUM_MV]
            if (quorum in ("standalone", "initial_controllers") and dynamic_ok and cmd.get("release_version")
                    and ch.chance(0.5, "a release the quorum can have")):
                cmd["release_version"] = p.mv_name(ch.pick(dynamic_ok, "dynamic-quorum release"))
            if quorum in ("standalone", "both"):
                cmd["standalone"] = True
            if quorum in ("no_initial_controllers", "both"):
                cmd["no_initial_controllers"] = True
            if quorum == "initial_controllers":
                cmd["initial_controllers"] = True
            if ch.chance(0.08, "static voters flag"):
                cmd["static_voters"] = ch.chance(0.5, "static voters")
        return cmd

    # -- directed scenarios: one instance of a family of several (conformance.families.instances) ---------
    def fresh_format(self, *, dynamic: bool = False) -> dict[str, Any]:
        """A valid format at the latest production metadata.version (a KIP-853 quorum when asked)."""
        p = self.profile
        cmd: dict[str, Any] = {"op": "format", "controllers": [{"id": FIRST_CONTROLLER}],
                               "release_version": p.mv_name(p.mv_latest_production)}
        if dynamic:
            cmd["standalone"] = True
        return cmd

    def quorum_format(self, static: bool | None, flags: Sequence[str]) -> dict[str, Any]:
        """A format with one combination of the quorum flags (valid or not: the release decides)."""
        cmd = self.fresh_format()
        if static is not None:
            cmd["static_voters"] = static
        cmd.update({f: True for f in flags})
        return cmd

    def update_command(self, updates: list[dict[str, Any]]) -> dict[str, Any]:
        """UpdateFeatures at the newest version a client sends here (v2 at most)."""
        return {"op": "update_features", "version": min(2, self.profile.behaviour["update_features_max_version"]),
                "updates": updates}

    def one_update(self, name: str, level: int, upgrade_type: str) -> dict[str, Any]:
        """UpdateFeatures of one feature (`update_command`)."""
        return self.update_command([{"feature": name, "level": level, "upgrade_type": upgrade_type}])

    def feature_level_update(self, cluster: Cluster, name: str, level: int) -> dict[str, Any] | None:
        """An update that finalizes `name` at `level`, with the dependencies the level needs raised in
        the same request (None: it is finalized there already)."""
        p = self.profile
        fin = cluster.finalized_view()
        cur = fin.get(name, 0)
        if cur == level:
            return None
        updates = [{"feature": name, "level": level, "upgrade_type": "UPGRADE" if level > cur else "UNSAFE_DOWNGRADE"}]
        for dep, need in sorted(p.features[name].levels[level].dependencies.items()):
            if fin.get(dep, 0) < need:
                updates.append({"feature": dep, "level": need, "upgrade_type": "UPGRADE"})
        return self.update_command(updates)

    def mv_downgrade(self, cluster: Cluster, how: str) -> dict[str, Any] | None:
        """metadata.version one step down (`step`), or across a metadata change (`lossy-SAFE_DOWNGRADE`,
        `lossy-UNSAFE_DOWNGRADE`: refused by a release, or under KIP-1155 refused / allowed by what
        the image holds); None when there is no such level."""
        p = self.profile
        cur = cluster.finalized_view().get(MV, 0)
        below = [v for v in reversed(p.mv_levels) if p.mv_minimum_bootstrap <= v < cur]
        # lossy: as far down as the release lets one ask (KIP-1155's floor is 3.7-IV0), so data is lost
        levels = below[:1] if how == "step" else [v for v in below if p.metadata_changed(v, cur)
                                                  and (v >= 15 or not p.behaviour["kip1155"])][-1:]
        if not levels:
            return None
        kind = "SAFE_DOWNGRADE" if how == "step" else how.split("-", 1)[1]
        updates = [{"feature": MV, "level": levels[0], "upgrade_type": kind}]
        for name, level in cluster.finalized_view().items():  # features the lower level cannot keep come down too
            feat = p.features.get(name)
            if name not in (MV, KRAFT) and feat and feat.levels.get(level) and \
                    feat.levels[level].dependencies.get(MV, 0) > levels[0]:
                updates.append({"feature": name, "level": feat.default_level(levels[0]), "upgrade_type": kind})
        return self.update_command(updates)

    def restore_at(self, level: int) -> dict[str, Any]:
        """A cluster restored at `level` with that level's default features (below the bootstrap
        minimum too: a cluster formatted by an old release)."""
        p = self.profile
        fin = {k: v for k, v in p.default_levels(level).items() if v and k != KRAFT}
        return {"op": "restore_state", "metadata_version": level, "epoch": 3, "finalized": fin}

    def restore_state(self, ch: Chooser) -> dict[str, Any]:
        p = self.profile
        mv = ch.pick(self.bootstrap_levels(), "metadata.version") if ch.chance(0.9, "known level") else 999
        cmd: dict[str, Any] = {"op": "restore_state", "metadata_version": mv, "epoch": ch.integer(0, 11, "epoch")}
        if mv != 999:
            cmd["finalized"] = {k: v for k, v in p.default_levels(mv).items() if v and k != KRAFT}
        if ch.chance(0.2, "kraft.version 1"):
            cmd["kraft_version"] = 1
        if ch.chance(0.3, "two controllers"):
            cmd["controllers"] = [{"id": FIRST_CONTROLLER}, {"id": FIRST_CONTROLLER + 1}]
        return cmd

    # -- registration ---------------------------------------------------------------------------
    def register_broker(self, ch: Chooser, cluster: Cluster) -> dict[str, Any]:
        node = ch.pick(self.broker_ids, "broker") if ch.chance(0.95, "known broker id") else self.stray_broker
        cmd: dict[str, Any] = {"op": "register", "role": "broker", "node": node}
        if ch.chance(0.08, "explicit ranges"):  # a third-party node: ranges instead of a release
            base = load_profile(self.software(ch)).supported("broker")
            ranges = {k: list(v) for k, v in base.items() if k != KRAFT}
            if self.active_software is not None:  # the target's builders answer for it: ranges its code holds
                least = self.profile.behaviour["supported_range_min"]
                ranges = {k: v for k, v in ranges.items() if v[0] >= least}
            if ch.chance(0.3, "omits metadata.version"):
                ranges.pop(MV, None)
            cmd["ranges"] = ranges
        else:
            cmd["software"] = self._runnable(self.software(ch))
            if ch.chance(0.05, "unstable"):
                cmd["unstable"] = True
        if ch.chance(0.2, "request version"):
            cmd["version"] = ch.pick((3, 2, 0, 1, 4, 5), "BrokerRegistration version")
        existing = cluster.image.brokers.get(node)
        how = ch.weighted(("plain", "other cluster", "session alive", "same incarnation"), (0.85, 0.03, 0.07, 0.05),
                          "registration")
        if how == "session alive" and self.synthetic_only:
            how = "plain"  # a live broker's session is heartbeats, which the wire target cannot send
        if how == "other cluster":
            cmd["cluster_id"] = "another-cluster-id"
        elif existing and how == "session alive":
            cmd["previous_session_alive"] = True
        elif existing and how == "same incarnation":
            cmd["incarnation"] = existing["incarnation"]  # the same process registering again
        return cmd

    def register_controller(self, ch: Chooser, cluster: Cluster) -> dict[str, Any]:
        ids = list(cluster.voters) + ([FIRST_CONTROLLER + 7] if ch.chance(0.1, "not a voter") else [])
        node = ch.pick(ids, "controller")
        return {"op": "register", "role": "controller", "node": node,
                "software": self._runnable(self.software(ch))}

    def _runnable(self, software: str) -> str:
        """A node's software, kept on what the target can run: a node's own code answers its
        ApiVersions (e.g. a kafka-4.4 broker's v5) and a standby controller may become active.  A
        third-party broker's explicit ranges stay drawn from any release: they are data, not code."""
        if self.active_software is None or software in self.active_software:
            return software
        return self.profile.name if self.profile.name in self.active_software else min(self.active_software)

    def start_up_registrations(self, ch: Chooser, cluster: Cluster) -> list[dict[str, Any]]:
        """Real controllers register themselves at start-up (KIP-919): mostly all of them, sometimes
        one is still down (its missing registration blocks updates), sometimes none has yet."""
        how = ch.weighted(("all", "all but one", "none"), (0.6, 0.25, 0.15), "start-up registration")
        voters = list(cluster.voters)
        if how == "none" or len(voters) < 2:
            return []
        if how == "all but one":
            voters.remove(ch.pick(voters[1:], "still down"))
        return [{"op": "register", "role": "controller", "node": n, "software": self.profile.name} for n in voters]

    def controller_rollback(self, ch: Chooser, cluster: Cluster) -> list[dict[str, Any]]:
        """A voter restarted on an older release, then an upgrade to the newest metadata.version: the
        old controller's registration must hold the upgrade back (KIP-919)."""
        p = self.profile
        older = self.names[: self.names.index(p.name)] or [p.name]
        node = ch.pick(list(cluster.voters), "controller")
        roll = {"op": "register", "role": "controller", "node": node,
                "software": self._runnable(ch.pick(older[::-1], "older release"))}
        upgrade = self.one_update(MV, p.mv_latest_production, "UPGRADE")
        # Upgraded first, a standby then rolled back below the finalized level cannot replay it (REPLAY-01).
        steps = [upgrade, roll] if ch.chance(0.4, "upgrade first") else [roll, upgrade]
        current = cluster.node(node)
        if older == [p.name] and current is not None and current.profile.name == p.name:
            # The oldest release has nothing older: the voter first runs a newer release, then comes back.
            newer = self._runnable(ch.pick(self.names[self.names.index(p.name) + 1:] or [p.name], "newer release"))
            steps.insert(0, {"op": "register", "role": "controller", "node": node, "software": newer})
        return steps

    def roll_broker(self, ch: Chooser, cluster: Cluster) -> dict[str, Any]:
        """A rolling upgrade or rollback: a registered broker restarts on the next or previous release."""
        registered = sorted(n for n in cluster.image.brokers if not self.synthetic_only or n in self.broker_ids)
        node = ch.pick(registered, "broker") if registered else ch.pick(self.broker_ids, "broker")
        current = cluster.node(node)
        base = current.software if current is not None and current.software in self.names else self.profile.name
        i = self.names.index(base) + ch.pick((1, -1, 2, -1, 1, -1), "release step")
        return {"op": "register", "role": "broker", "node": node,
                "software": self._runnable(self.names[min(max(i, 0), len(self.names) - 1)])}

    def unregister(self, ch: Chooser, cluster: Cluster) -> dict[str, Any]:
        registered = sorted(n for n in cluster.image.brokers if not self.synthetic_only or n in self.broker_ids)
        if registered and ch.chance(0.75, "a registered broker"):
            return {"op": "unregister", "node": ch.pick(registered, "broker")}
        return {"op": "unregister", "node": ch.pick((*self.broker_ids, 9 if not self.synthetic_only
                                                       else self.absent_node), "broker")}

    @property
    def has_unregister_controller(self) -> bool:
        """UnregisterController (KIP-1312) exists in the profile's release (4.4+): drawn only there."""
        return self.profile.behaviour.get("unregister_controller_metadata_version") is not None

    def unregister_controller(self, ch: Chooser, cluster: Cluster) -> dict[str, Any]:
        """UnregisterController: a stale registration (a registered controller that is not the active
        one), the active controller itself, or an id no controller registered.  On a live cluster only
        the absent id: its own controllers' registrations stay."""
        stale = sorted(n for n in cluster.image.controllers if n != cluster.active_id)
        how = ch.weighted(("stale", "active", "unknown"), (0.6, 0.2, 0.2), "which controller")
        if self.synthetic_only or how == "unknown" or (how == "stale" and not stale):
            node = self.absent_node
        elif how == "active":
            node = cluster.active_id
        else:
            node = ch.pick(stale, "controller")
        return {"op": "unregister", "role": "controller", "node": node}

    # -- updates --------------------------------------------------------------------------------
    def update_features(self, ch: Chooser, cluster: Cluster) -> dict[str, Any]:
        p = self.profile
        names = [MV, *p.production_features, UNKNOWN_FEATURE]
        if "test.feature.version" in p.features and ch.chance(0.1, "test feature"):
            names.append("test.feature.version")
        chosen = ch.sample(names, min(len(names), ch.pick((1, 2, 3, 1, 2), "how many")), "features")
        vmax = p.behaviour["update_features_max_version"]
        version = ch.pick((vmax, 1, 0, vmax), "UpdateFeatures version") if ch.chance(0.95, "supported") else vmax + 1
        updates = []
        for name in chosen:
            u: dict[str, Any] = {"feature": name, "level": self.level_near(ch, cluster, name)}
            if ch.chance(0.85, "with type"):
                u["upgrade_type"] = ch.pick(("UPGRADE", "SAFE_DOWNGRADE", "UNSAFE_DOWNGRADE", "UPGRADE",
                                             "SAFE_DOWNGRADE", "UNKNOWN"), "type")
            updates.append(u)
        cmd: dict[str, Any] = {"op": "update_features", "version": min(version, 2) if version <= vmax else version,
                               "updates": updates}
        if ch.chance(0.2, "validate only"):
            cmd["validate_only"] = True
        if len(cluster.controllers) > 1 and ch.chance(0.05, "to a standby controller"):
            cmd["node"] = ch.pick([n for n in cluster.controllers if n != cluster.active_id], "controller")
        return cmd

    def downgrade_metadata_version(self, ch: Chooser, cluster: Cluster) -> dict[str, Any]:
        """metadata.version steps: a lossless downgrade (no metadata change crossed), one step down,
        across a metadata change, below the minimum -- or the next production level up."""
        p = self.profile
        cur = cluster.finalized_view().get(MV, 0)
        below = [v for v in reversed(p.mv_levels) if v < cur]
        up = [v for v in p.mv_levels if cur < v <= p.mv_latest_production]
        version = min(2, p.behaviour["update_features_max_version"])
        if up and ch.chance(0.25, "upgrade instead"):
            return self.one_update(MV, up[0], "UPGRADE")
        lossless = [v for v in below if not p.metadata_changed(v, cur)]
        if lossless and ch.chance(0.4, "lossless"):
            target = ch.pick(lossless, "lossless down to")
        else:
            target = ch.pick([*below, p.mv_minimum - 1] if below else [cur, p.mv_minimum - 1], "down to")
        unsafe = ch.chance(0.5, "unsafe")
        return {"op": "update_features", "version": version, "validate_only": ch.chance(0.2, "validate only"),
                "updates": [{"feature": MV, "level": target,
                             "upgrade_type": "UNSAFE_DOWNGRADE" if unsafe else "SAFE_DOWNGRADE"}]}

    def kip1155_downgrade(self, ch: Chooser, cluster: Cluster) -> dict[str, Any]:
        cur = cluster.finalized_view().get(MV, 0)
        target = ch.pick(sorted({14, 15, 17, 21, 23, 27, max(cur - 1, 7), max(cur - 3, 7)}), "down to")
        utype = "UNSAFE_DOWNGRADE" if ch.chance(0.4, "unsafe") else "SAFE_DOWNGRADE"
        cmd: dict[str, Any] = {"op": "update_features", "version": 2,
                               "updates": [{"feature": MV, "level": target, "upgrade_type": utype}]}
        if ch.chance(0.15, "validate only"):
            cmd["validate_only"] = True
        return cmd

    def features_tool(self, ch: Chooser, cluster: Cluster) -> dict[str, Any]:
        p = self.profile
        action = ch.pick(("upgrade", "downgrade", "disable", "describe", "upgrade"), "action")
        cmd: dict[str, Any] = {"op": "features_tool", "action": action}
        if ch.chance(0.3, "dry run"):
            cmd["dry_run"] = True
        if action == "downgrade" and ch.chance(0.4, "unsafe"):
            cmd["unsafe"] = True
        if action == "disable":
            cmd["features"] = [ch.pick([*p.production_features, MV, "nope.version"], "feature")]
        elif action != "describe":
            by_release = p.behaviour["features_tool_style"] in ("4.0", "4.2")
            how = ch.weighted(("features", "release", "metadata", "odd flags"),
                              (0.5, 0.3 if by_release else 0.0, 0.15, 0.05), "how")
            if how == "release":
                levels = self.bootstrap_levels()
                cmd["release_version"] = (p.mv_name(ch.pick(levels[::-1], "release"))
                                          if ch.chance(0.9, "known release") else "9.9-IV9")
                if ch.chance(0.05, "and a metadata.version flag"):
                    cmd["features"] = [f"{MV}={ch.pick(levels, 'level')}"]
            elif how == "metadata":
                cmd["metadata"] = (p.mv_name(ch.pick(self.bootstrap_levels()[::-1], "release"))
                                   if ch.chance(0.85, "known release") else "1.0")
            elif how == "odd flags":
                cmd["features"] = ch.pick(([], ["group.version"], ["a=1", "a=2"]), "odd flags")
            else:
                names = [MV, *p.production_features]
                picked = ch.sample(names, min(len(names), ch.pick((1, 2, 1), "how many")), "features")
                cmd["features"] = [f"{n}={self.level_near(ch, cluster, n)}" for n in picked]
        elif ch.chance(0.3, "to a node"):
            cmd["node"] = ch.pick([*sorted(cluster.image.brokers), cluster.active_id, 99], "node")
        return cmd

    # -- data, snapshots --------------------------------------------------------------------------
    def add_metadata(self, ch: Chooser) -> dict[str, Any]:
        return {"op": "add_metadata", "kind": ch.pick(PAYLOADS, "kind") if ch.chance(0.97, "known kind")
                else "not_a_kind"}

    def snapshot(self, ch: Chooser, cluster: Cluster) -> dict[str, Any]:
        cmd: dict[str, Any] = {"op": "snapshot"}
        if ch.chance(0.4, "at another metadata.version"):
            mv = cluster.finalized_view().get(MV, 0)
            cmd["metadata_version"] = ch.pick(sorted({mv, mv - 1, 15, 21, 23, 27, 999}), "metadata.version")
            if ch.chance(0.5, "allow loss"):
                cmd["allow_loss"] = True
        return cmd

    def load_snapshot(self, ch: Chooser, snapshots: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return {"op": "load_snapshot", "snapshot": ch.pick(snapshots, "snapshot")}

    def load_coordinator(self, ch: Chooser, cluster: Cluster) -> tuple[dict[str, Any], str, list[Any]]:
        """A load of records a (possibly newer) release wrote: (command, writer release, raw records)."""
        coordinator = ch.pick(COORDINATORS, "coordinator")
        writer = self.software(ch)
        seed = ch.integer(0, (1 << 16) - 1, "records seed")
        cmd, raw = self.coordinator_load(coordinator, writer, seed, unknown_value_version=seed % 5 == 0)
        if cluster.image.brokers and ch.chance(0.3, "on a broker"):
            cmd["node"] = ch.pick(sorted(cluster.image.brokers), "broker")
        return cmd, writer, raw

    def coordinator_load(self, coordinator: str, writer: str, seed: int, *,
                         unknown_value_version: bool = False) -> tuple[dict[str, Any], list[Any]]:
        """A load of `writer`'s records (seeded): (command, raw records)."""
        from reference_impl.coordinator import NewerWriter, sample_records

        raw = NewerWriter(writer, seed).write(coordinator, sample_records(coordinator, seed),
                                              unknown_tags=seed % 3, future_keys=seed % 2)
        if unknown_value_version and raw[0][1] is not None:
            # A value version newer than any release knows (KIP-915: older loaders must cope).
            raw[0] = (raw[0][0], UNKNOWN_VALUE_VERSION.to_bytes(2, "big") + raw[0][1][2:])
        return ({"op": "load_coordinator", "coordinator": coordinator,
                 "records": [{"key": k.hex(), "value": None if v is None else v.hex()} for k, v in raw]}, raw)

    # -- probes and tools -------------------------------------------------------------------------
    def api_versions(self, ch: Chooser, cluster: Cluster, op: str = "api_versions") -> dict[str, Any]:
        cmd: dict[str, Any] = {"op": op, "node": ch.pick(self.probe_nodes(cluster), "node")}
        if op == "api_versions" or ch.chance(0.5, "request version"):
            cmd["version"] = ch.pick((3, 4, 0, 1, 2, 3, 4, 5), "ApiVersions version")
        if (op == "api_versions" and cmd.get("version") == 5 == self.profile.behaviour["api_versions_max_version"]
                and ch.chance(0.6, "KIP-1242 ids")):
            cmd["cluster_id"] = ch.pick((cluster.cluster_id, "another-cluster-id"), "cluster id")
            cmd["node_id"] = ch.pick((cmd["node"], cmd["node"] + 1), "node id")
        return cmd

    def describe(self, ch: Chooser, cluster: Cluster) -> dict[str, Any]:
        return self.api_versions(ch, cluster, "describe")

    def version_mapping(self, ch: Chooser) -> dict[str, Any]:
        names = [self.profile.mv_name(v) for v in self.bootstrap_levels(False)]
        cmd: dict[str, Any] = {"op": "version_mapping", "release_version": ch.pick(names, "release")
                               if ch.chance(0.8, "known release") else ch.pick(("9.9-IV9", "3.6", "2.9-IV2", "3.6-IVI"),
                                                                               "bad release")}
        if ch.chance(0.15, "unstable"):
            cmd["unstable"] = True
        self._tool(ch, cmd)
        return cmd

    def feature_dependencies(self, ch: Chooser) -> dict[str, Any]:
        names = [MV, *self.profile.production_features, "nope.version"]
        items = []
        for _ in range(ch.pick((1, 2, 3, 1), "how many")):
            n = ch.pick(names, "feature")
            items.append(f"{n}={ch.integer(0, 31, 'level')}" if ch.chance(0.95, "with level") else n)
        return self._tool(ch, {"op": "feature_dependencies", "features": items})

    def _tool(self, ch: Chooser, cmd: dict[str, Any]) -> dict[str, Any]:
        """4.0+ have version-mapping and feature-dependencies in kafka-features too."""
        if self.profile.behaviour["tools_have_mapping_commands"] and ch.chance(0.4, "kafka-features"):
            cmd["tool"] = "kafka-features"
        return cmd


__all__ = [
    "BROKER_IDS",
    "KINDS",
    "KRAFT",
    "MV",
    "PAYLOADS",
    "UPGRADE_TYPES",
    "Chooser",
    "DrawChooser",
    "Grammar",
    "RandomChooser",
]
