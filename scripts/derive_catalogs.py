"""Derive fixtures/catalogs/<profile>.json from the release dumps in fixtures/release-dumps
(copies of ../shared/kafka-catalogs, produced by running each release's own code).

Tables come from the dumps exactly; behaviour switches and the edits for profiles without a dump
come from scripts/catalog_overlays.toml.  Run: python scripts/derive_catalogs.py [--check]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OVERLAYS = ROOT / "scripts" / "catalog_overlays.toml"
OUT = ROOT / "fixtures" / "catalogs"
DUMPS = ROOT / "fixtures" / "release-dumps"


def _mv_table(dump: dict) -> dict:
    mv = dump["metadata_version"]
    versions, pre_kraft = [], []
    for v in mv["versions"]:
        if v["feature_level"] < 1:
            pre_kraft.append(v["version"])  # IBPs before 3.0-IV1: parseable, never a feature level
            continue
        versions.append({
            "level": v["feature_level"],
            "name": v["version"],
            "release": v["release"],
            "did_metadata_change": v["did_metadata_change"],
            "production": v["is_production"],
        })
    minimum = mv.get("MINIMUM_VERSION", mv["MINIMUM_KRAFT_VERSION"])
    return {
        "minimum": minimum["feature_level"],
        "minimum_bootstrap": mv["MINIMUM_BOOTSTRAP_VERSION"]["feature_level"],
        "latest_production": mv["LATEST_PRODUCTION"]["feature_level"],
        "latest_testing": mv["latest_testing"]["feature_level"],
        "versions": versions,
        "pre_kraft": pre_kraft,
    }


def _features(dump: dict) -> list[dict]:
    out = []
    for f in dump["features"]:
        out.append({
            "name": f["name"],
            "production": f["in_production_features"],
            "latest_production": f["latest_production"],
            "latest_testing": f["latest_testing"],
            "levels": [
                {
                    "level": lv["level"],
                    "bootstrap_metadata_version": lv["bootstrap_metadata_version"]["feature_level"],
                    "dependencies": lv["dependencies"],
                }
                for lv in f["levels"]
            ],
        })
    return out


def _supported(dump: dict) -> dict:
    d = dump["default_supported_features"]
    return {
        role: {kind: {k: list(v) for k, v in sorted(d[f"{role}_{kind}"].items())} for kind in ("production", "unstable")}
        for role in ("controller", "broker")
    }


def _apply_edits(cat: dict, edits: dict) -> None:
    mv = cat["metadata_version"]
    for add in edits.get("add_versions", []):
        mv["versions"].append({**add, "production": False})
    for level, flag in edits.get("did_metadata_change", {}).items():
        next(v for v in mv["versions"] if v["level"] == int(level))["did_metadata_change"] = flag
    lp = edits.get("latest_production")
    if lp is not None:
        mv["latest_production"] = lp
        mv["latest_testing"] = max(mv["latest_testing"], lp)
        for v in mv["versions"]:
            v["production"] = v["level"] <= lp
        for role in cat["supported"].values():
            for kind, ranges in role.items():
                top = lp if kind == "production" else mv["latest_testing"]
                ranges["metadata.version"] = [ranges["metadata.version"][0], top]


def derive(name: str, spec: dict, defaults: dict) -> dict:
    dump = json.loads((DUMPS / spec["dump"]).read_text())
    cat = {
        "$schema": "../schema/profile.schema.json",
        "format_version": 1,
        "name": name,
        "release": spec["release"],
        "verified": spec.get("verified", True),
        "source": f"derived from {spec['dump']} (dumped by running the release's own code)",
        "note": spec.get("note", ""),
        "metadata_version": _mv_table(dump),
        "features": _features(dump),
        "production_feature_order": dump.get("PRODUCTION_FEATURE_NAMES", []),
        "supported": _supported(dump),
        "behaviour": {**defaults, **spec.get("behaviour", {})},
    }
    _apply_edits(cat, spec.get("edits", {}))
    return cat


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="fail if a committed catalogue differs")
    args = ap.parse_args(argv)
    if not DUMPS.is_dir():
        print(f"error: dumps not found at {DUMPS}", file=sys.stderr)
        return 1
    overlay = tomllib.loads(OVERLAYS.read_text())
    defaults = overlay["defaults"]["behaviour"]
    stale = []
    for name, spec in overlay["profile"].items():
        text = json.dumps(derive(name, copy.deepcopy(spec), defaults), indent=1) + "\n"
        path = OUT / f"{name}.json"
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    if stale:
        print("stale catalogues: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
