"""The bundled corpora (fixtures/corpus) are what the generator makes today: a grammar or reference
change that would leave them stale fails here (regenerate: python scripts/bundle_corpora.py)."""

from __future__ import annotations

import pytest

from conformance.corpus import dumps, iter_bodies
from conformance.generate import generate_one
from reference_impl import profile_names
from reference_impl.data import fixtures
from scripts.bundle_corpora import COUNT, SEED

SAMPLE = 25


@pytest.mark.parametrize("profile", list(profile_names()))
def test_bundled_corpus_is_the_generators_output(profile: str) -> None:
    path = fixtures() / "corpus" / f"bundled-{profile}.parquet"
    rows = list(iter_bodies(str(path)))
    assert len(rows) == COUNT
    step = COUNT // SAMPLE
    for i in range(0, COUNT, step):
        assert rows[i][1] == dumps(generate_one(SEED, i, profile)), f"{profile} trace {i} is stale"
