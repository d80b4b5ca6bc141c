"""`python -m conformance TARGET PROFILE HYPOTHESIS_PROFILE REPORT [-x] [-k EXPR]`: the suite in this
process, results in REPORT/summary.json, exit code pytest's.  The mutant runs start one such child
per mutant (kfc check without its terminal output), so the library never starts the application."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .runner import HYPOTHESIS_PROFILES, RunError, open_target, run_suite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance", description=__doc__)
    parser.add_argument("target")
    parser.add_argument("profile")
    parser.add_argument("hypothesis_profile", choices=HYPOTHESIS_PROFILES)
    parser.add_argument("report", type=Path)
    parser.add_argument("-x", "--exitfirst", action="store_true")
    parser.add_argument("-k", dest="select", default=None)
    args = parser.parse_args(argv)
    try:
        target, profile, hello = open_target(args.target, args.profile)  # as kfc check makes it
    except RunError as e:
        print(f"python -m conformance: {e}", file=sys.stderr)
        return 2
    try:
        return run_suite(args.target, profile, args.hypothesis_profile, args.report, provided=target, hello=hello,
                         exitfirst=args.exitfirst, select=args.select)
    except KeyboardInterrupt:
        return 130
    finally:
        target.close()


if __name__ == "__main__":
    sys.exit(main())
