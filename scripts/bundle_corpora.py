"""Regenerate the per-profile corpora that `kfc check` replays with Spark (fixtures/corpus/).

    python scripts/bundle_corpora.py [--check]

Each is `kfc generate --count 2000 --seed 20261122 --profile P`: deterministic, so the same
grammar and reference give the same bytes.  --check regenerates into a temporary directory and
fails if any committed file differs (after a grammar or reference change: run without --check).
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from pathlib import Path

from conformance.generate import generate_to
from reference_impl import profile_names

SEED, COUNT = 20261122, 2000
HERE = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) if args.check else HERE
        stale = []
        for profile in profile_names():
            path = out / f"bundled-{profile}.parquet"
            info = generate_to(path, COUNT, SEED, "parquet", profile)
            print(f"{path.name}: {info['count']} traces, {info['bytes']:,} bytes", file=sys.stderr)
            if args.check and not filecmp.cmp(path, HERE / path.name, shallow=False):
                stale.append(path.name)
    if stale:
        print(f"stale: {', '.join(stale)}: run python scripts/bundle_corpora.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
