"""Behaviour profiles: one validated data file per Kafka release, wrapped for fast look-ups."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from ._errors import InputError
from .data import fixtures

MV = "metadata.version"
KRAFT = "kraft.version"
# UpdateFeatures v1+ upgrade types by name (the request carries the number)
UPGRADE_TYPES = {"UNKNOWN": 0, "UPGRADE": 1, "SAFE_DOWNGRADE": 2, "UNSAFE_DOWNGRADE": 3}
UPGRADE_TYPE_NAMES = {v: k for k, v in UPGRADE_TYPES.items()}
DEFAULT_PROFILE = "kafka-4.4"  # the newest verified release


@dataclass(frozen=True, slots=True)
class MetadataVersion:
    level: int
    name: str  # "3.7-IV4"
    release: str  # "3.7"
    did_metadata_change: bool
    production: bool

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class FeatureLevel:
    level: int
    bootstrap_metadata_version: int
    dependencies: dict[str, int]


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    production: bool  # listed in Features.PRODUCTION_FEATURES
    latest_production: int
    latest_testing: int
    levels: dict[int, FeatureLevel]

    def default_level(self, mv_level: int) -> int:
        """Last level whose bootstrap metadata.version <= mv (Kafka's defaultValue walk)."""
        best = 0
        for lv in sorted(self.levels):
            if self.levels[lv].bootstrap_metadata_version <= mv_level:
                best = lv
            else:
                break
        return best


@dataclass(frozen=True)
class Profile:
    name: str
    release: str
    verified: bool
    note: str
    releases: tuple[str, ...]  # the Apache releases that behave as this profile (none: hypothetical)
    mv_minimum: int
    mv_minimum_bootstrap: int
    mv_latest_production: int
    mv_latest_testing: int
    versions: dict[int, MetadataVersion]
    pre_kraft: tuple[str, ...]
    features: dict[str, Feature]  # every registered non-MV feature, enum order
    production_feature_order: tuple[str, ...]
    supported_ranges: dict[tuple[str, bool], dict[str, tuple[int, int]]]
    behaviour: dict[str, Any]
    raw: dict[str, Any] = field(repr=False, compare=False)

    # -- metadata.version -------------------------------------------------
    @functools.cached_property
    def _by_name(self) -> dict[str, MetadataVersion]:
        return {v.name: v for v in self.versions.values()}

    def mv(self, level: int) -> MetadataVersion | None:
        return self.versions.get(level)

    def mv_name(self, level: int) -> str:
        v = self.versions.get(level)
        return v.name if v else f"UNKNOWN {level}"

    def mv_by_name(self, name: str) -> MetadataVersion | None:
        return self._by_name.get(name)

    @functools.cached_property
    def _mv_levels(self) -> tuple[int, ...]:
        return tuple(sorted(self.versions))

    @property
    def mv_levels(self) -> list[int]:
        return list(self._mv_levels)  # a profile is read-only: sorted once

    def metadata_changed(self, a: int, b: int) -> bool:
        """MetadataVersion.checkIfMetadataChanged: some MV in (low, high] changed metadata."""
        if a == b:
            return False
        low, high = min(a, b), max(a, b)
        return any(self.versions[lv].did_metadata_change for lv in range(low + 1, high + 1) if lv in self.versions)

    # -- features ----------------------------------------------------------
    @functools.cached_property
    def _production_features(self) -> tuple[str, ...]:
        return tuple(f for f in self.production_feature_order if f in self.features)

    @property
    def production_features(self) -> list[str]:
        return list(self._production_features)

    def default_levels(self, mv_level: int, features: list[str] | None = None) -> dict[str, int]:
        names = self.production_features if features is None else features
        return {f: self.features[f].default_level(mv_level) for f in names}

    def supported(self, role: str, unstable: bool = False) -> dict[str, tuple[int, int]]:
        """Default supported ranges of a node of this software (controller or broker)."""
        return self.supported_ranges[(role, unstable)]

    def min_mv_for_features(self) -> int:
        """The metadata.version every feature level >= 1 needs (validateVersion)."""
        return self.mv_minimum_bootstrap


def _build(raw: dict[str, Any]) -> Profile:
    mvd = raw["metadata_version"]
    versions = {
        v["level"]: MetadataVersion(v["level"], v["name"], v["release"], v["did_metadata_change"], v["production"])
        for v in mvd["versions"]
    }
    features = {
        f["name"]: Feature(
            f["name"],
            f["production"],
            f["latest_production"],
            f["latest_testing"],
            {lv["level"]: FeatureLevel(lv["level"], lv["bootstrap_metadata_version"], dict(lv["dependencies"]))
             for lv in f["levels"]},
        )
        for f in raw["features"]
    }
    supported = {
        (role, kind == "unstable"): {k: (v[0], v[1]) for k, v in ranges.items()}
        for role, kinds in raw["supported"].items()
        for kind, ranges in kinds.items()
    }
    return Profile(
        name=raw["name"],
        release=raw["release"],
        verified=raw["verified"],
        note=raw.get("note", ""),
        releases=tuple(raw.get("releases", ())),
        mv_minimum=mvd["minimum"],
        mv_minimum_bootstrap=mvd["minimum_bootstrap"],
        mv_latest_production=mvd["latest_production"],
        mv_latest_testing=mvd["latest_testing"],
        versions=versions,
        pre_kraft=tuple(mvd["pre_kraft"]),
        features=features,
        production_feature_order=tuple(raw["production_feature_order"]),
        supported_ranges=supported,
        behaviour=dict(raw["behaviour"]),
        raw=raw,
    )


def _catalog_dir() -> Any:
    return fixtures() / "catalogs"


@functools.cache
def _validator() -> Any:
    import jsonschema  # deferred: only needed the first time a profile loads

    schema = json.loads((fixtures() / "schema" / "profile.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


@functools.cache
def profile_names() -> tuple[str, ...]:
    names = [p.name[:-5] for p in _catalog_dir().iterdir() if p.name.endswith(".json")]
    return tuple(sorted(names, key=_profile_sort_key))


def _profile_sort_key(name: str) -> tuple[int, ...]:
    if name.startswith("kafka-"):
        return tuple(int(x) for x in name[6:].split("."))
    return (99,)


@functools.cache
def load_profile(name: str | None = None) -> Profile:
    """Load and validate a profile by name (default: the newest verified release)."""
    name = name or DEFAULT_PROFILE
    if name not in profile_names():
        raise InputError(f"Unknown profile '{name}'. Known profiles: {', '.join(profile_names())}")
    path = _catalog_dir() / f"{name}.json"
    try:
        raw = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise InputError(f"Profile file {name}.json is not valid JSON: {e}") from None
    errors = sorted(_validator().iter_errors(raw), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.path) or "(top)"
        raise InputError(f"Profile file {name}.json fails its schema at {where}: {first.message}")
    return _build(raw)
