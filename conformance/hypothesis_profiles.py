"""The suite's Hypothesis settings profiles, registered with `settings.register_profile` and chosen
with Hypothesis's own `--hypothesis-profile` (`kfc check --hypothesis-profile ci` passes kfc-ci).

    kfc-ci    80 examples x 25 steps (after the tour of directed walks), derandomized, no database:
              the same command, the same run and report
    kfc-dev   200 examples x 40 steps, example database (a failure found once is replayed first)
    kfc-deep  5,000 examples x 60 steps, example database (nightly)
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

PREFIX = "kfc-"
NAMES = ("ci", "dev", "deep")
DEFAULT = "kfc-ci"


def register() -> None:
    # The explain phase replays a counterexample many times to annotate it; our trace says more.
    base = settings(deadline=None, suppress_health_check=list(HealthCheck),
                    phases=[p for p in Phase if p != Phase.explain])
    settings.register_profile("kfc-ci", base, derandomize=True, database=None, max_examples=80,
                              stateful_step_count=25)
    db = DirectoryBasedExampleDatabase(os.environ.get("KFC_HYPOTHESIS_DB", ".hypothesis/kfc-examples"))
    settings.register_profile("kfc-dev", base, database=db, max_examples=200, stateful_step_count=40)
    settings.register_profile("kfc-deep", base, database=db, max_examples=5000, stateful_step_count=60)


def resolve(name: str | None) -> str:
    """`ci` or `kfc-ci` -> `kfc-ci`; None -> the default."""
    if not name:
        return DEFAULT
    return name if name.startswith(PREFIX) else PREFIX + name


register()
