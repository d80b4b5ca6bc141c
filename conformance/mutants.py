"""Seeded mutants: targets that are the reference with exactly one bug each.

A mutant is how the suite proves it can see a broken target: each one violates one rule of
reference_impl.rules (its `rule`) on its default profile, and each carries a *witness*, a short
command sequence on which its outcome differs from the reference's.

Most bugs are *source mutants*: the reference function's own source with one fragment replaced
(an off-by-one, a wrong variable, a dropped branch), recompiled into a private copy of its module's
globals.  Nothing global is patched, so any number of mutants can live in one process; a fragment
that no longer occurs in the reference makes the mutant fail loudly instead of silently passing.

Specs: `mutant:NAME` (the mutant's default profile) or `mutant:NAME@PROFILE`.
"""

from __future__ import annotations
import __future__

import copy
import functools
import inspect
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reference_impl import Cluster
from reference_impl import _controller as ctl
from reference_impl import _features_tool as ftool
from reference_impl import _tools as tools
from reference_impl.coordinator import _codec as codec
from reference_impl.coordinator import _loader as loader
from reference_impl.rules import RULES

MV = "metadata.version"
KRAFT = "kraft.version"
GV = "group.version"
ELR = "eligible.leader.replicas.version"


# ------------------------------------------------------------------------------- source mutation

def _clone(fn: Callable[..., Any], **overrides: Any) -> dict[str, Any]:
    """A private copy of `fn`'s module globals (mutated functions are compiled into it)."""
    ns = dict(fn.__globals__)
    ns.update(overrides)
    return ns


def _recompile(fn: Callable[..., Any], edits: list[tuple[str, str]], ns: dict[str, Any] | None = None) -> Any:
    """`fn` rebuilt from its source with each (old, new) fragment replaced exactly once, in `ns`."""
    src = textwrap.dedent(inspect.getsource(fn))
    for old, new in edits:
        n = src.count(old)
        if n != 1:
            raise RuntimeError(f"mutant edit no longer applies to {fn.__qualname__}: {old!r} occurs {n} times")
        src = src.replace(old, new)
    ns = _clone(fn) if ns is None else ns
    code = compile(src, f"<mutant of {fn.__module__}.{fn.__qualname__}>", "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, ns)  # noqa: S102 - our own reference source, into a private namespace only
    ns[fn.__name__].__qualname__ = fn.__qualname__
    return ns[fn.__name__]


def _module_with(module: types.ModuleType, **overrides: Any) -> types.SimpleNamespace:
    """A stand-in for `module` (as seen by one recompiled function) with some attributes replaced."""
    return types.SimpleNamespace(**{**vars(module), **overrides})


def _context(**methods: Any) -> type[ctl.UpdateContext]:
    return type("MutantUpdateContext", (ctl.UpdateContext,), methods)


def _cluster(name: str, **attrs: Any) -> type[Cluster]:
    return type(f"Mutant_{name.replace('-', '_')}", (Cluster,), {"mutant": name, **attrs})


def _update_op(update_features: Any) -> Any:
    """Cluster._op_update_features calling a recompiled ctl.update_features."""
    ns = _clone(Cluster._op_update_features, ctl=_module_with(ctl, update_features=update_features))
    return _recompile(Cluster._op_update_features, [], ns)


def _register_broker_op(edits: list[tuple[str, str]], **overrides: Any) -> Any:
    fn = _recompile(ctl.register_broker, edits, _clone(ctl.register_broker, **overrides))

    def register_broker(self: Cluster, cmd: dict[str, Any], node: Any) -> dict[str, Any]:
        return fn(self, cmd, node)  # type: ignore[no-any-return]

    return register_broker


def _op_with_tool(op: str, tool: str, edits: list[tuple[str, str]]) -> Any:
    """Cluster.`op` calling `tools.tool` recompiled with `edits`."""
    fn = _recompile(getattr(tools, tool), edits)
    method = getattr(Cluster, op)
    return _recompile(method, [], _clone(method, tools=_module_with(tools, **{tool: fn})))


# ----------------------------------------------------------------------------------- the mutants
# Each builder returns the mutant's Cluster subclass; builders are cached (compiled once).

def _edit_method(method: str, old: str, new: str) -> Callable[[], type[Cluster]]:
    """A Cluster method with one edit."""
    def build() -> type[Cluster]:
        return _cluster(method, **{method: _recompile(getattr(Cluster, method), [(old, new)])})
    return build


def _edit_tool(op: str, tool: str, old: str, new: str) -> Callable[[], type[Cluster]]:
    """A tool function (reference_impl._tools) with one edit, as called by the Cluster op `op`."""
    def build() -> type[Cluster]:
        return _cluster(tool, **{op: _op_with_tool(op, tool, [(old, new)])})
    return build


def _edit_check(old: str, new: str) -> Callable[[], type[Cluster]]:
    def build() -> type[Cluster]:
        return _cluster("check", update_context_cls=_context(check=_recompile(ctl.UpdateContext.check, [(old, new)])))
    return build


def _edit_support(old: str, new: str) -> Callable[[], type[Cluster]]:
    def build() -> type[Cluster]:
        fn = _recompile(ctl.UpdateContext.check_support, [(old, new)])
        return _cluster("support", update_context_cls=_context(check_support=fn))
    return build


def _edit_mv(old: str, new: str) -> Callable[[], type[Cluster]]:
    def build() -> type[Cluster]:
        fn = _recompile(ctl.UpdateContext.check_metadata_version, [(old, new)])
        return _cluster("mv", update_context_cls=_context(check_metadata_version=fn))
    return build


def _edit_update(old: str, new: str) -> Callable[[], type[Cluster]]:
    def build() -> type[Cluster]:
        uf = _recompile(ctl.update_features, [(old, new)])
        return _cluster("update", _op_update_features=_update_op(uf))
    return build


def _edit_kip1155(old: str, new: str) -> Callable[[], type[Cluster]]:
    def build() -> type[Cluster]:
        ns = _clone(ctl.update_features)
        _recompile(ctl.kip1155_downgrade, [(old, new)], ns)  # update_features below calls this copy
        return _cluster("kip1155", _op_update_features=_update_op(_recompile(ctl.update_features, [], ns)))
    return build


def _edit_register_broker(old: str, new: str) -> Callable[[], type[Cluster]]:
    def build() -> type[Cluster]:
        return _cluster("register", register_broker=_register_broker_op([(old, new)]))
    return build


def _noop_writes_nothing() -> type[Cluster]:
    class Ctx(ctl.UpdateContext):
        def check(self, name: str, level: int) -> list[dict[str, Any]]:
            current = self.current(name)
            recs = super().check(name, level)
            return [] if level == current else recs  # bug: "nothing changes, so nothing to write"

    return _cluster("noop", update_context_cls=Ctx)


def _epoch_from_feature_records() -> type[Cluster]:
    class Mutant(Cluster):
        @property
        def epoch(self) -> int:
            # bug: the feature cache moves its epoch only when it replays a FeatureLevelRecord
            for r in reversed(self.log):
                if r["type"] == "FeatureLevelRecord":
                    return int(r["offset"])
            return len(self.log) - 1

    return Mutant


def _controller_registration_off_by_one() -> type[Cluster]:
    fn = _recompile(ctl.register_controller, [("if c.image.metadata_version < CONTROLLER_REGISTRATION_MV:",
                                               "if c.image.metadata_version < CONTROLLER_REGISTRATION_MV - 1:")])

    def register_controller(self: Cluster, cmd: dict[str, Any], node: Any) -> dict[str, Any]:
        return fn(self, cmd, node)  # type: ignore[no-any-return]

    return _cluster("creg", register_controller=register_controller)


def _registration_v3_min0() -> type[Cluster]:
    sent = _recompile(ctl.sent_ranges, [("if version < 4 and omit:", "if version < 3 and omit:")])
    return _cluster("reg-min0", register_broker=_register_broker_op([], sent_ranges=sent))


def _update_skips_dependencies() -> type[Cluster]:
    fn = _recompile(ctl.UpdateContext.check_feature_level,
                    [("reason = dependency_reason(p, name, level, self.proposed)", "reason = None")])
    return _cluster("deps", update_context_cls=_context(check_feature_level=fn))


def _kraft_downgrade_allowed() -> type[Cluster]:
    fn = _recompile(ctl.UpdateContext.check_kraft_raft, [("if level != current:", "if level > current:")])
    return _cluster("kraft-dg", update_context_cls=_context(check_kraft_raft=fn))


def _tool_upgrade_sends_zero() -> type[Cluster]:
    fn = _recompile(ftool.features_tool, [('if action == "upgrade" and default == 0:',
                                           'if action == "downgrade" and default == 0:')])

    def _op_features_tool(self: Cluster, cmd: dict[str, Any]) -> dict[str, Any]:
        return fn(self, cmd)  # type: ignore[no-any-return]

    return _cluster("tool", _op_features_tool=_op_features_tool)



def _disable_writes_nothing() -> type[Cluster]:
    class Ctx(ctl.UpdateContext):
        def check(self, name: str, level: int) -> list[dict[str, Any]]:
            recs = super().check(name, level)
            return [] if level == 0 and name != MV else recs  # bug: "0 means absent, so nothing to write"

    return _cluster("disable", update_context_cls=Ctx)


def _loader_cluster(name: str, ns: dict[str, Any]) -> type[Cluster]:
    """Cluster whose load_coordinator runs `load` (and `_read`) recompiled in `ns`."""
    _recompile(loader._read, [], ns)
    if "load" not in ns or ns["load"] is loader.load:
        _recompile(loader.load, [], ns)
    lc = _recompile(loader.load_coordinator, [], ns)

    def _op_load_coordinator(self: Cluster, cmd: dict[str, Any]) -> dict[str, Any]:
        node = self.node(cmd.get("node")) if cmd.get("node") is not None else None
        profile = node.profile.name if node is not None else self.active_profile.name
        return lc(profile, cmd)  # type: ignore[no-any-return]

    return _cluster(name, _op_load_coordinator=_op_load_coordinator)


def _unknown_key_fatal() -> type[Cluster]:
    ns = _clone(loader.load)
    _recompile(loader.load, [("res.skipped_unknown_keys += 1",
                              'raise _Fatal(f"Unexpected record key type {ktype}", "KIP915-LOAD-01")')], ns)
    return _loader_cluster("key", ns)


def _unknown_tag_fatal() -> type[Cluster]:
    struct = _recompile(codec.Reader.struct, [
        ("self.unknown_tags += 1",
         'raise JavaError("java.lang.RuntimeException", f"Tag {tag} is not known", "KIP915-LOAD-02")')])
    strict = type("StrictReader", (codec.Reader,), {"__slots__": (), "struct": struct})
    return _loader_cluster("tags", _clone(loader.load, Reader=strict))


def _value_version_read_as_highest() -> type[Cluster]:
    ns = _clone(loader.load)
    _recompile(loader.load, [('if check == "unknown-record-version":',
                              'if check == "unknown-record-version" and version < lo:')], ns)
    return _loader_cluster("version", ns)


# ------------------------------------------------------------------------------------ witnesses

def _fmt(release: str | None = None, **kw: Any) -> dict[str, Any]:
    cmd: dict[str, Any] = {"op": "format", **kw}
    if release:
        cmd["release_version"] = release
    return cmd


def _upd(*updates: tuple[Any, ...], **kw: Any) -> dict[str, Any]:
    ups = []
    for u in updates:
        d: dict[str, Any] = {"feature": u[0], "level": u[1]}
        if len(u) > 2:
            d["upgrade_type"] = u[2]
        ups.append(d)
    return {"op": "update_features", "updates": ups, **kw}


def _reg(node: int, **kw: Any) -> dict[str, Any]:
    return {"op": "register", "role": kw.pop("role", "broker"), "node": node, **kw}


def _hex_records(pairs: list[tuple[bytes, bytes | None]]) -> list[dict[str, Any]]:
    return [{"key": k.hex(), "value": None if v is None else v.hex()} for k, v in pairs]


def _i16(v: int) -> bytes:
    return v.to_bytes(2, "big", signed=True)


_OC_KEY = {"group": "g", "topic": "t", "partition": 0}
_OC_V3 = {"offset": 5, "leaderEpoch": 1, "metadata": "m", "commitTimestamp": 9}
_MEMBER = {"memberId": "m1", "groupInstanceId": None, "clientId": "c", "clientHost": "h", "rebalanceTimeout": 7,
           "sessionTimeout": 8, "subscription": "aa", "assignment": ""}
_GM_V4 = {"protocolType": "consumer", "generation": 1, "protocol": "range", "leader": "m1",
          "currentStateTimestamp": 5, "members": [_MEMBER]}


@functools.cache
def _coordinator_witnesses() -> dict[str, list[dict[str, Any]]]:
    enc = codec.encode
    oc = (_i16(1) + enc("OffsetCommitKey", 1, _OC_KEY), _i16(3) + enc("OffsetCommitValue", 3, _OC_V3))
    future_key = (_i16(4242) + b"\x00\x01x", b"zz")
    gm = {**_GM_V4, "members": [{**_MEMBER, "_unknown_tags": [[4000, "01"]]}], "_unknown_tags": [[4001, "0203"]]}
    tagged = (_i16(2) + enc("GroupMetadataKey", 2, {"group": "g"}), _i16(4) + enc("GroupMetadataValue", 4, gm))
    v5 = (_i16(1) + enc("OffsetCommitKey", 1, _OC_KEY), _i16(5) + enc("OffsetCommitValue", 4, _OC_V3))

    def load(pairs: list[tuple[bytes, bytes | None]]) -> list[dict[str, Any]]:
        return [{"op": "load_coordinator", "coordinator": "group", "records": _hex_records(pairs)}]

    return {"key": load([future_key, oc]), "tags": load([tagged]), "version": load([v5])}


# ------------------------------------------------------------------------------------- registry

@dataclass(frozen=True)
class Mutant:
    name: str
    rule: str
    profile: str
    description: str
    factory: Callable[[], type[Cluster]]  # builds the mutant's Cluster class (compiled once, cached)
    witness: tuple[dict[str, Any], ...]  # commands on which the mutant's outcome differs from the reference's
    # "rule": on the first diverging step the reference's outcome carries `rule` (a refusal the mutant
    # misses or misattributes).  Otherwise the outcome field the rule is about, which must differ there.
    diverges_on: str = "rule"

    @property
    def kip(self) -> str:
        return RULES[self.rule].kip

    def cluster(self, profile: str | None = None) -> Cluster:
        return _cluster_class(self.name)(profile or self.profile)


def _w(*steps: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    return steps


_TWO = [{"id": 3000}, {"id": 3001}]

_DEFS: list[Mutant] = [
    # --- KIP-584 ---------------------------------------------------------------------------------
    Mutant("broker-support-skips-fenced", "KIP584-UPD-04", "kafka-4.2",
           "UpdateFeatures checks only unfenced brokers' ranges (fenced brokers must count too)",
           _edit_support("for bid in sorted(brokers):", 'for bid in sorted(b for b in brokers if not brokers[b]["fenced"]):'),
           _w(_fmt("3.7-IV4"), _reg(1, ranges={MV: [7, 19]}), _upd((MV, 20)))),
    Mutant("downgrade-type-only-for-mv", "KIP584-UPD-05", "kafka-4.2",
           "the 'downgrade needs SAFE/UNSAFE' check guards metadata.version only; other features drop with UPGRADE",
           _edit_check("if level < current and utype == 1:", "if level < current and utype == 1 and name == MV:"),
           _w(_fmt(), _upd((GV, 0)))),
    Mutant("safe-downgrade-may-raise", "KIP584-UPD-06", "kafka-4.2",
           "only UNSAFE_DOWNGRADE is refused for a raise; SAFE_DOWNGRADE to a newer level passes",
           _edit_check("if level > current and utype != 1:", "if level > current and utype == 3:"),
           _w(_fmt("3.9-IV0"), _upd((MV, 22, "SAFE_DOWNGRADE")))),
    Mutant("negative-level-off-by-one", "KIP584-UPD-02", "kafka-4.2",
           "the negative-level check is 'level < -1', so -1 reaches the range check (UPD-03) instead",
           _edit_check("if level < 0:", "if level < -1:"),
           _w(_fmt(), _upd((GV, -1, "SAFE_DOWNGRADE")))),
    Mutant("unknown-upgrade-type-zero", "KIP584-UPD-01", "kafka-4.2",
           "the upgrade-type check is 'utype > 3', so UNKNOWN (0) is treated as a known type",
           _edit_check("if utype not in (1, 2, 3):", "if utype > 3:"),
           _w(_fmt("3.9-IV0"), _upd((MV, 22, "UNKNOWN")))),
    Mutant("validate-only-writes", "KIP584-UPD-09", "kafka-4.2",
           "validate_only runs the checks but the records are appended anyway",
           _edit_update("out[\"records\"] = c.append([] if validate_only else records)",
                        "out[\"records\"] = c.append(records)"),
           _w(_fmt("3.9-IV0"), _upd((MV, 22), validate_only=True), {"op": "describe"}), "epoch"),
    Mutant("noop-update-writes-nothing", "KIP584-UPD-08", "kafka-4.2",
           "an update to the current level succeeds but writes no record (the epoch does not move)",
           _noop_writes_nothing, _w(_fmt(), _upd((GV, 1))), "epoch"),
    Mutant("epoch-from-feature-records", "KIP584-EPOCH-01", "kafka-4.2",
           "the finalized epoch is the offset of the last FeatureLevelRecord, not of the last record",
           _epoch_from_feature_records, _w(_fmt(), _reg(1), {"op": "describe"}), "epoch"),
    Mutant("finalized-lists-kraft-zero", "KIP584-API-02", "kafka-4.2",
           "ApiVersions lists kraft.version=0 ('is not None' instead of a truth test)",
           _edit_method("finalized_view", "if self.image.kraft_version:", "if self.image.kraft_version is not None:"),
           _w(_fmt(), {"op": "api_versions"}), "finalized"),
    Mutant("registration-checks-max-only", "KIP584-REG-01", "kafka-4.2",
           "broker registration checks a finalized level against the broker's maximum only",
           _edit_register_broker("if not lo <= level <= hi:", "if not level <= hi:"),
           _w(_fmt("3.7-IV4"), _reg(1, ranges={MV: [20, 29]}))),
    Mutant("unmentioned-check-uses-node-ranges", "KIP584-REG-02", "kafka-4.2",
           "the unmentioned-feature check looks at the broker's own ranges, not at what the request sent",
           _edit_register_broker("if name not in sent and name != MV and level != 0:",
                                 "if name not in node.ranges() and name != MV and level != 0:"),
           _w(_fmt(), _reg(1, version=3))),
    Mutant("disable-writes-nothing", "KIP584-UPD-07", "kafka-4.2",
           "disabling a feature (level 0) is accepted but writes no record, so the feature stays finalized",
           _disable_writes_nothing, _w(_fmt(), _upd((GV, 0, "SAFE_DOWNGRADE")), {"op": "describe"}), "records"),
    Mutant("v1-all-or-nothing-3x", "KIP584-UPD-10", "kafka-3.9",
           "a 3.x controller drops the features that passed when another one fails (4.x behaviour)",
           _edit_update('if first_error is not None and p.b("update_atomic"):', "if first_error is not None:"),
           _w(_fmt("3.8-IV0"), _upd((MV, 21), ("no.such.feature", 1), version=1), {"op": "describe"}), "records"),
    Mutant("api-versions-v2-lists-features", "KIP584-API-01", "kafka-4.2",
           "ApiVersions v2 answers with feature ranges (features are v3+ tagged fields)",
           _edit_method("_op_api_versions", "if version < 3:", "if version < 2:"),
           _w(_fmt(), {"op": "api_versions", "version": 2}), "supported"),
    Mutant("snapshot-load-drops-features", "SNAP-02", "kafka-4.2",
           "loading a snapshot replays metadata.version but drops the other FeatureLevelRecords",
           _edit_method("_op_load_snapshot", "        replay(image, r)",
                        '        if r["type"] != "FeatureLevelRecord" or r["name"] == MV:\n            replay(image, r)'),
           _w(_fmt(), {"op": "load_snapshot", "snapshot": {
               "metadata_version": 29, "end_offset": 2, "cluster_id": "kfc-cluster-0000000000", "records": [
                   {"type": "FeatureLevelRecord", "name": MV, "level": 29},
                   {"type": "FeatureLevelRecord", "name": GV, "level": 1}]}}, {"op": "describe"}), "finalized"),
    # --- KIP-778 ---------------------------------------------------------------------------------
    Mutant("safe-lossy-mv-downgrade", "KIP778-MV-04", "kafka-4.2",
           "a SAFE_DOWNGRADE of metadata.version across a metadata change is allowed",
           _edit_mv("if p.metadata_changed(level, current):", "if p.metadata_changed(level, current) and utype == 3:"),
           _w(_fmt("4.0-IV1"), _upd((MV, 22, "SAFE_DOWNGRADE")))),
    Mutant("unsafe-lossy-mv-downgrade", "KIP778-MV-05", "kafka-4.2",
           "an UNSAFE_DOWNGRADE of metadata.version across a metadata change is allowed",
           _edit_mv("if p.metadata_changed(level, current):", "if p.metadata_changed(level, current) and utype == 2:"),
           _w(_fmt("4.0-IV1"), _upd((MV, 22, "UNSAFE_DOWNGRADE")))),
    Mutant("mv-minimum-off-by-one", "KIP778-MV-02", "kafka-3.9",
           "3.x compares against the bootstrap minimum minus one, so metadata.version 3 (below 3.3-IV0) passes",
           _edit_mv("if three and level < p.mv_minimum_bootstrap:", "if three and level < p.mv_minimum_bootstrap - 1:"),
           _w(_fmt("3.3-IV0"), _upd((MV, 3, "SAFE_DOWNGRADE")))),
    Mutant("lossless-mv-downgrade-refused", "KIP778-MV-03", "kafka-4.2",
           "every metadata.version downgrade counts as lossy, even when no version in between changed metadata",
           _edit_mv("if p.metadata_changed(level, current):", "if True:"),
           _w(_fmt("3.9-IV0"), _upd((MV, 19, "SAFE_DOWNGRADE"))), "error"),
    # --- KIP-919 ---------------------------------------------------------------------------------
    Mutant("controller-registration-off-by-one", "KIP919-CREG-01", "kafka-4.2",
           "controller registration is accepted from 3.6-IV2 (one below 3.7-IV0)",
           _controller_registration_off_by_one,
           _w(_fmt("3.6-IV2", controllers=_TWO), _reg(3001, role="controller"))),
    Mutant("controller-support-inverted", "KIP919-UPD-01", "kafka-4.2",
           "the registered-controller loop checks only the active controller (inverted id test)",
           _edit_support("if cid != c.active_id:", "if cid == c.active_id:"),
           _w(_fmt("4.1-IV1", controllers=[{"id": 3000}, {"id": 3001, "software": "kafka-4.1"}]),
              _reg(3001, role="controller"), _upd((MV, 29)))),
    Mutant("static-voters-wrong-set", "KIP919-UPD-02", "kafka-4.2",
           "the static-voter check looks a voter up in the voter list, not the registered controllers",
           _edit_support("if vid != c.active_id and vid not in controllers:",
                         "if vid != c.active_id and vid not in c.voters:"),
           _w(_fmt("3.7-IV4", controllers=_TWO), _upd((MV, 20)))),
    # --- KIP-1022 --------------------------------------------------------------------------------
    Mutant("api-versions-v3-lists-min0", "KIP1022-API-01", "kafka-4.2",
           "ApiVersions omits min-0 ranges below v3 instead of below v4, so v3 lists them",
           _edit_method("_op_api_versions", "if version < 4 and (", "if version < 3 and ("),
           _w(_fmt(), {"op": "api_versions", "version": 3}), "supported"),
    Mutant("registration-v3-sends-min0", "KIP1022-REG-01", "kafka-4.2",
           "BrokerRegistration omits min-0 features below v3 instead of below v4, so v3 sends them",
           _registration_v3_min0, _w(_fmt("3.7-IV4"), _reg(1, version=3)), "sent_features"),
    Mutant("update-skips-dependencies", "KIP1022-UPD-01", "kafka-4.2",
           "UpdateFeatures validates the level but never the feature's dependencies",
           _update_skips_dependencies, _w(_fmt("3.9-IV0"), _upd((ELR, 1)))),
    Mutant("partial-apply-4x", "KIP1022-UPD-02", "kafka-4.2",
           "a failing request returns early only when nothing passed; features checked before the failure are written",
           _edit_update('if first_error is not None and p.b("update_atomic"):',
                        'if first_error is not None and p.b("update_atomic") and not emitted:'),
           _w(_fmt("3.9-IV0"), _upd((GV, 1), (MV, 99)), {"op": "describe"}), "epoch"),
    Mutant("format-trusts-explicit-features", "KIP1022-FMT-05", "kafka-4.2",
           "format checks dependencies of default levels only; an explicit --feature is trusted",
           _edit_tool("_op_format", "format_levels", "        if reason:\n", "        if reason and name not in requested:\n"),
           _w(_fmt("3.9-IV0", features=[f"{ELR}=1"]))),
    Mutant("format-kraft-default-from-release", "KIP1022-FMT-10", "kafka-4.2",
           "kraft.version's default comes from the release version like other features, ignoring the quorum",
           _edit_tool("_op_format", "format_levels", "if name == KRAFT:", "if name == KRAFT and KRAFT in requested:"),
           _w(_fmt()), "levels"),
    Mutant("version-mapping-previous-mv", "KIP1022-MAP-01", "kafka-4.2",
           "version-mapping takes the defaults of the metadata.version before the one asked for",
           _edit_tool("_op_version_mapping", "version_mapping", "levels = p.default_levels(mv.level)",
                      "levels = p.default_levels(mv.level - 1)"),
           _w({"op": "version_mapping", "release_version": "4.0-IV0"}), "levels"),
    Mutant("bootstrap-writes-kraft-version", "KIP1022-FMT-11", "kafka-3.9",
           "the bootstrap metadata writes a FeatureLevelRecord for kraft.version (it belongs to the raft log)",
           _edit_tool("_op_format", "bootstrap_records", "if lv > 0 and n != KRAFT]", "if lv > 0]"),
           _w(_fmt("3.9-IV0", standalone=True)), "records"),
    Mutant("dependencies-without-mv-name", "KIP1022-DEP-01", "kafka-4.2",
           "feature-dependencies prints a metadata.version dependency without its release name",
           _edit_tool("_op_feature_dependencies", "feature_dependencies",
                      'suffix = f" ({p.mv_name(dl)})" if dep == MV else ""', 'suffix = ""'),
           _w({"op": "feature_dependencies", "features": [f"{ELR}=1"]}), "lines"),
    Mutant("features-upgrade-sends-zero", "KIP1022-TOOL-04", "kafka-4.2",
           "kafka-features upgrade --release-version sends level-0 defaults (the skip is on the downgrade branch)",
           _tool_upgrade_sends_zero,
           _w(_fmt("3.9-IV0"), {"op": "features_tool", "action": "upgrade", "release_version": "4.0-IV0"}), "error"),
    Mutant("kraft-version-downgrade-allowed", "KIP1022-UPD-03", "kafka-4.2",
           "a kraft.version downgrade is refused only when it would raise the level",
           _kraft_downgrade_allowed, _w(_fmt(standalone=True), _upd((KRAFT, 0, "SAFE_DOWNGRADE")))),
    Mutant("registration-without-mv-4x", "KIP1022-REG-02", "kafka-4.2",
           "the missing-metadata.version branch is gated on the 3.x flag, so a 4.x controller accepts it",
           _edit_register_broker("if MV not in sent:",
                                 'if MV not in sent and not p.b("registration_requires_metadata_version"):'),
           _w(_fmt("3.7-IV4"), _reg(1, ranges={GV: [0, 1]}))),
    # --- KIP-1155 --------------------------------------------------------------------------------
    Mutant("downgrade-capable-off-by-one", "KIP1155-DG-01", "kip-1155",
           "a node supporting one below the downgrade-capable metadata.version is accepted",
           _edit_kip1155("if r is None or r[1] < capable:", "if r is None or r[1] < capable - 1:"),
           _w(_fmt("4.3-IV0"), _reg(2, software="kafka-4.3"), _upd((MV, 29, "SAFE_DOWNGRADE")))),
    Mutant("downgrade-floor-off-by-one", "KIP1155-DG-02", "kip-1155",
           "the downgrade floor is compared with 'level < floor - 1', so 3.6-IV2 is allowed",
           _edit_kip1155("if level < floor:", "if level < floor - 1:"),
           _w(_fmt("3.7-IV0"), _upd((MV, 14, "SAFE_DOWNGRADE")))),
    Mutant("safe-downgrade-drops-data", "KIP1155-DG-06", "kip-1155",
           "the SAFE check compares the numeric upgrade type with a name, so SAFE drops data like UNSAFE",
           _edit_kip1155("if lost and utype == 2:", 'if lost and utype == "SAFE_DOWNGRADE":'),
           _w(_fmt("4.0-IV1"), {"op": "add_metadata", "kind": "elr_partition_state"},
              _upd((MV, 22, "SAFE_DOWNGRADE")))),
    Mutant("downgrade-mv-record-first", "KIP1155-DG-04", "kip-1155",
           "the metadata.version record is put before the cleanup records instead of last",
           _edit_update("records += emitted.get(MV, [])", "records[:0] = emitted.get(MV, [])"),
           _w(_fmt("4.0-IV1"), {"op": "add_metadata", "kind": "elr_partition_state"},
              _upd((MV, 22, "UNSAFE_DOWNGRADE"))), "records"),
    Mutant("downgrade-without-snapshot", "KIP1155-DG-05", "kip-1155",
           "the version 'before' is read after applying the update, so a downgrade never triggers a snapshot",
           _edit_method("_op_update_features", "out = ctl.update_features(self, cmd)",
                        "out = ctl.update_features(self, cmd); mv_before = self.image.metadata_version"),
           _w(_fmt("3.9-IV0"), _upd((MV, 20, "SAFE_DOWNGRADE"))), "snapshot"),
    Mutant("unsafe-downgrade-keeps-data", "KIP1155-DG-07", "kip-1155",
           "an accepted UNSAFE_DOWNGRADE reports the lost records but writes no record removing them",
           _edit_kip1155('cleanup = [{"type": "RemovePayloadRecord", "id": pl["id"], "kind": pl["kind"]} for pl in lost]',
                         "cleanup = []"),
           _w(_fmt("4.0-IV1"), {"op": "add_metadata", "kind": "elr_partition_state"},
              _upd((MV, 22, "UNSAFE_DOWNGRADE"))), "records"),
    # --- KIP-915 ---------------------------------------------------------------------------------
    Mutant("unknown-key-type-fatal", "KIP915-LOAD-01", "kafka-4.2",
           "the group loader fails on a record key type it does not know instead of skipping it",
           _unknown_key_fatal, _w(*_coordinator_witnesses()["key"]), "skipped_unknown_keys"),
    Mutant("unknown-tagged-field-fatal", "KIP915-LOAD-02", "kafka-4.2",
           "the record reader fails on an unknown tagged field instead of skipping it",
           _unknown_tag_fatal, _w(*_coordinator_witnesses()["tags"]), "ignored_tagged_fields"),
    Mutant("value-version-read-as-highest", "KIP915-LOAD-04", "kafka-4.2",
           "the 4.x group loader checks only versions below the known range; a newer one is read as the highest",
           _value_version_read_as_highest, _w(*_coordinator_witnesses()["version"])),
]

MUTANTS: dict[str, Mutant] = {m.name: m for m in _DEFS}


@functools.cache
def _cluster_class(name: str) -> type[Cluster]:
    cls = MUTANTS[name].factory()
    cls.__name__ = f"Mutant_{name.replace('-', '_')}"
    return cls


def witness(name: str) -> list[dict[str, Any]]:
    """The mutant's witness commands (a fresh copy)."""
    return copy.deepcopy(list(MUTANTS[name].witness))


def neutral_scenario(profile: str) -> list[dict[str, Any]]:
    """Formatting, a broker, a plain upgrade and describe: touches none of the mutants' rules."""
    if profile.startswith("kafka-3."):
        start, target, quorum = "3.8-IV0", 21, {}
    else:
        start, target, quorum = "4.0-IV3", 27, {"standalone": True}
    return [_fmt(start, **quorum), _reg(1), _upd((MV, target)), {"op": "describe"},
            {"op": "api_versions", "node": 1}]


# ------------------------------------------------------------------------------------ the target

def parse_spec(arg: str) -> tuple[Mutant, str]:
    name, _, profile = arg.partition("@")
    if name not in MUTANTS:
        raise ValueError(f"unknown mutant '{name}'; known: {', '.join(sorted(MUTANTS))}")
    m = MUTANTS[name]
    return m, profile or m.profile


# ---------------------------------------------------------------------------------------- CLI

def mutant_rows() -> list[dict[str, str]]:
    return [{"name": m.name, "rule": m.rule, "kip": m.kip, "profile": m.profile, "description": m.description}
            for m in MUTANTS.values()]


__all__ = [
    "MUTANTS",
    "Mutant",
    "mutant_rows",
    "neutral_scenario",
    "parse_spec",
    "witness",
]
