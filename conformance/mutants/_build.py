"""How a catalogue entry becomes a Cluster class.

The bug is either an *edit* (the seam's own source with one fragment replaced, recompiled into a
private copy of its module's globals) or a *variant* (a hand-written replacement, for the few bugs
that are no one-fragment edit).  Either way it is installed at its seam through
reference_impl.lowlevel, so nothing global is patched and any number of mutants live in one process.
An edit whose fragment no longer occurs exactly once in the reference fails loudly instead of
silently building the reference.

A seam is a name in reference_impl.lowlevel (`update_features`) or one of its classes' attributes
(`UpdateContext.check`, `Reader.struct`, `Cluster.epoch`).
"""

from __future__ import annotations
import __future__

import functools
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

from reference_impl import MV, lowlevel
from reference_impl.lowlevel import Cluster


def resolve(seam: str) -> Any:
    """What `seam` names in reference_impl.lowlevel (ValueError when nothing)."""
    head, _, attr = seam.partition(".")
    if head != "Cluster" and head not in lowlevel.REPLACEABLE:
        raise ValueError(f"seam {seam!r}: {head!r} is not Cluster or in reference_impl.lowlevel.REPLACEABLE")
    owner = getattr(lowlevel, head)
    if not attr:
        return owner
    if "." in attr or not isinstance(owner, type) or attr not in vars(owner):
        raise ValueError(f"seam {seam!r}: {head} defines no attribute {attr!r}")
    return vars(owner)[attr]


def recompile(fn: Any, old: str, new: str) -> Any:
    """`fn` rebuilt from its source with `old` (which must occur exactly once) replaced by `new`."""
    src = textwrap.dedent(inspect.getsource(fn))
    n = src.count(old)
    if n != 1:
        raise RuntimeError(f"mutant edit no longer applies to {fn.__qualname__}: {old!r} occurs {n} times")
    ns = dict(fn.__globals__)  # a private copy: the edited function is defined there only
    code = compile(src.replace(old, new), f"<mutant of {fn.__module__}.{fn.__qualname__}>", "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, ns)  # noqa: S102 - our own reference source, into a private namespace only
    ns[fn.__name__].__qualname__ = fn.__qualname__
    return ns[fn.__name__]


# ------------------------------------------------------------------------------------- variants
# name -> (the seam it replaces, original -> replacement)

def _check_writing_nothing_when(pred: Callable[[str, int, int], bool]) -> Callable[[Any], Any]:
    """UpdateContext.check that accepts the update but returns no record when pred(name, level, current)."""
    def make(check: Any) -> Any:
        def mutant_check(self: Any, name: str, level: int) -> list[dict[str, Any]]:
            current = self.current(name)
            recs: list[dict[str, Any]] = check(self, name, level)
            return [] if pred(name, level, current) else recs
        return mutant_check
    return make


def _epoch_of_last_feature_level_record(_: Any) -> property:
    def epoch(self: Cluster) -> int:
        for r in reversed(self.log):
            if r["type"] == "FeatureLevelRecord":
                return int(r["offset"])
        return len(self.log) - 1
    return property(epoch)


VARIANTS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    # "nothing changes, so nothing to write"
    "no-records-at-current-level": ("UpdateContext.check",
                                    _check_writing_nothing_when(lambda name, level, current: level == current)),
    # "0 means absent, so nothing to write"
    "no-records-at-level-0": ("UpdateContext.check",
                              _check_writing_nothing_when(lambda name, level, current: level == 0 and name != MV)),
    # the feature cache moves its epoch only when it replays a FeatureLevelRecord
    "epoch-of-last-feature-level-record": ("Cluster.epoch", _epoch_of_last_feature_level_record),
}


def check_change(seam: str, variant: str | None) -> None:
    """ValueError unless `seam` resolves and `variant` (if any) is known and made for that seam."""
    resolve(seam)
    if variant is not None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
        if VARIANTS[variant][0] != seam:
            raise ValueError(f"variant {variant!r} replaces {VARIANTS[variant][0]}, not {seam}")


# ---------------------------------------------------------------------------------------- build

@functools.cache
def cluster_class(name: str, seam: str, edit: tuple[str, str] | None, variant: str | None) -> type[Cluster]:
    """The mutant's Cluster subclass (built once per mutant)."""
    original = resolve(seam)
    if variant is not None:
        replacement = VARIANTS[variant][1](original)
    elif edit is not None:
        replacement = recompile(original, *edit)
    else:
        raise ValueError(f"mutant {name}: neither an edit nor a variant")
    head, _, attr = seam.partition(".")
    cls_name = f"Mutant_{name.replace('-', '_')}"
    if head == "Cluster":
        return lowlevel.cluster_class(cls_name, methods={attr: replacement})
    if attr:  # a method: the class with that one method replaced
        owner = getattr(lowlevel, head)
        slots = {"__slots__": ()} if "__slots__" in vars(owner) else {}
        replacement = type(owner.__name__, (owner,), {attr: replacement, **slots})
    return lowlevel.cluster_class(cls_name, **{head: replacement})
