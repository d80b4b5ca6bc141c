"""Derive fixtures/catalogs/<profile>.json from the release dumps in fixtures/release-dumps
(made by scripts/dump_release.py, which runs each release's own classes).

Tables come from the dumps exactly; behaviour switches, the releases behind each profile and the edits
of the hypothetical kip-1155 come from scripts/catalog_overlays.toml.
Run: python scripts/derive_catalogs.py [--check [--fresh]]
  --check          fail if a committed catalogue differs from what the committed dumps give
  --check --fresh  dump every release behind every profile from its jars (fetched into the per-user
                   cache) and fail, naming each difference, if a committed dump or profile disagrees
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


def derive(name: str, spec: dict, defaults: dict, dump: dict | None = None) -> dict:
    """The profile `name` from its overlay `spec`; `dump` (a fresh one) replaces the committed file."""
    if dump is None:
        dump = json.loads((DUMPS / spec["dump"]).read_text())
    cat = {
        "$schema": "../schema/profile.schema.json",
        "format_version": 1,
        "name": name,
        "release": spec["release"],
        "verified": spec.get("verified", True),
        "source": f"derived from {spec['dump']} (dumped by running the release's own code)",
        "note": spec.get("note", ""),
        "releases": spec.get("releases", []),
        "metadata_version": _mv_table(dump),
        "features": _features(dump),
        "production_feature_order": dump.get("PRODUCTION_FEATURE_NAMES", []),
        "supported": _supported(dump),
        "behaviour": {**defaults, **spec.get("behaviour", {})},
    }
    _apply_edits(cat, spec.get("edits", {}))
    return cat


def _differences(committed: object, fresh: object, path: str = "") -> list[str]:
    """Where two JSON values differ, as `path: committed X, fresh Y` lines."""
    if isinstance(committed, dict) and isinstance(fresh, dict):
        out = []
        for k in list(committed) + [k for k in fresh if k not in committed]:
            if k not in fresh:
                out.append(f"{path}/{k}: only in the committed file")
            elif k not in committed:
                out.append(f"{path}/{k}: only in the fresh one ({json.dumps(fresh[k])[:80]})")
            else:
                out += _differences(committed[k], fresh[k], f"{path}/{k}")
        return out
    if isinstance(committed, list) and isinstance(fresh, list) and len(committed) == len(fresh):
        return [d for i, (a, b) in enumerate(zip(committed, fresh, strict=True)) for d in _differences(a, b, f"{path}/{i}")]
    if committed != fresh:
        return [f"{path or '/'}: committed {json.dumps(committed)[:80]}, fresh {json.dumps(fresh)[:80]}"]
    return []


def _release_of(dump_file: str) -> str:
    return dump_file.removeprefix("kafka-").removesuffix(".json")


def _fresh_dumps(versions: list[str]) -> dict[str, dict]:
    """Each release's dump made now from its jars (fetched into the per-user cache on first use)."""
    from conformance.realkafka.dump import dump
    from conformance.realkafka.releases import fetch

    out = {}
    for v in versions:
        print(f"dumping Kafka {v} ...", file=sys.stderr, flush=True)
        out[v] = json.loads(dump(fetch(v)))
    return out


def check_fresh(overlay: dict, defaults: dict) -> list[str]:
    """Every committed dump and every profile against dumps made now from the releases behind them."""
    specs = overlay["profile"]
    wanted = {_release_of(p.name) for p in DUMPS.glob("kafka-*.json")}
    wanted |= {v for spec in specs.values() for v in spec.get("releases", [])}
    fresh = _fresh_dumps(sorted(wanted, key=lambda v: tuple(int(x) for x in v.split("."))))
    problems = []
    for path in sorted(DUMPS.glob("kafka-*.json")):
        problems += [f"{path.name} vs a fresh dump of {_release_of(path.name)}: {d}"
                     for d in _differences(json.loads(path.read_text()), fresh[_release_of(path.name)])]
    for name, spec in specs.items():
        committed = json.loads((OUT / f"{name}.json").read_text()) if (OUT / f"{name}.json").is_file() else {}
        for v in spec.get("releases", []):
            derived = derive(name, copy.deepcopy(spec), defaults, fresh[v])
            problems += [f"{name}.json vs Kafka {v}: {d}" for d in _differences(committed, derived)]
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail if a committed catalogue differs")
    ap.add_argument("--fresh", action="store_true",
                    help="with --check: compare with dumps made now from every release's jars")
    args = ap.parse_args(argv)
    if args.fresh and not args.check:
        ap.error("--fresh needs --check (derivation always reads the committed dumps)")
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
        print("stale catalogues (run scripts/derive_catalogs.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    if args.fresh:
        sys.path.insert(0, str(ROOT))
        from conformance.realkafka.dump import DumpError
        from conformance.realkafka.releases import FetchError

        try:
            problems = check_fresh(overlay, defaults)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
        except (FetchError, DumpError) as e:  # one line, already worded for the user
            print(f"error: {e}", file=sys.stderr)
            return 1
        for line in problems:
            print(line, file=sys.stderr)
        if problems:
            print(f"{len(problems)} difference(s) between the committed files and fresh dumps", file=sys.stderr)
            return 1
        print("every committed dump and profile agrees with fresh dumps of its releases", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
