"""Dump one Kafka release's feature-versioning tables by running its own classes.

Fetches the release into the per-user cache (Maven Central, once), compiles
conformance/realkafka/dump/DumpRelease.java against it and prints the dump (the layout of
fixtures/release-dumps/*.json).  Run: python scripts/dump_release.py 4.3.1 [--out FILE|DIR]
(a DIR gets kafka-VERSION.json).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance.realkafka.dump import DumpError, dump
from conformance.realkafka.releases import FetchError, fetch


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("version", help="a Kafka release, e.g. 4.3.1")
    ap.add_argument("--out", type=Path, help="write here (a file, or a directory for kafka-VERSION.json)")
    args = ap.parse_args(argv)
    try:
        text = dump(fetch(args.version))
    except (FetchError, DumpError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    if args.out is None:
        sys.stdout.write(text)
        return 0
    path = args.out / f"kafka-{args.version}.json" if args.out.is_dir() else args.out
    try:
        path.write_text(text)
    except OSError as e:
        print(f"error: --out {args.out}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
