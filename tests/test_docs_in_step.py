"""The README says what the program says: its profile list is `kfc profiles`, its counts are the
fixtures' and `kfc mutants`', its option lists are the commands' options, and where it puts things
is where the code puts them."""

from __future__ import annotations

import re
from pathlib import Path

import click

from conformance.mutants import MUTANTS
from kfc.commands.check import check_command
from kfc.commands.serve import serve_broker_command
from reference_impl import profile_names

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _section(text: str, start: str, end: str = "\n\n") -> str:
    at = text.index(start)
    return text[at:text.index(end, at + len(start))]


def _options(command: click.Command) -> set[str]:
    return {opt for p in command.params if isinstance(p, click.Option) for opt in [*p.opts, *p.secondary_opts]
            if opt.startswith("--") and opt != "--help"}


def test_the_profile_list_is_kfc_profiles() -> None:
    listed = set(re.findall(r"`((?:kafka-\d[\d.]*|kip-\d+))`", _section(README, "Profiles (`kfc profiles`)")))
    assert listed == set(profile_names())


def test_the_example_counts_are_the_fixtures() -> None:
    examples = ROOT / "fixtures" / "examples"
    recorded = sum(1 for line in (examples / "examples.jsonl").read_text().splitlines() if line.strip())
    generated = sum(1 for line in (examples / "generated.jsonl").read_text().splitlines() if line.strip())
    tables = _section(README, "- **example tables**", ";\n")
    assert f"{recorded:,} example traces recorded" in tables, tables
    assert f"and {generated:,} generated" in tables, tables


def test_the_mutant_count_is_kfc_mutants() -> None:
    assert f"a seeded bug ({len(MUTANTS)} of them" in README


def test_the_kfc_check_synopsis_has_every_option() -> None:
    synopsis = _section(README, "kfc check --target T", "```")
    named = set(re.findall(r"(?<![\w-])--?[a-zA-Z][a-z-]*", synopsis))
    missing = [p.opts[-1] for p in check_command.params if isinstance(p, click.Option)
               and not named & {*p.opts, *p.secondary_opts}]
    assert not missing, f"README's kfc check synopsis lacks {missing}"


def test_the_serve_broker_synopsis_names_only_real_options() -> None:
    synopsis = _section(README, "`kfc serve-broker [", "` serves")
    named = set(re.findall(r"--[a-z][a-z-]*", synopsis))
    assert named <= _options(serve_broker_command), named - _options(serve_broker_command)


def test_the_allure_cli_lives_in_the_per_user_cache() -> None:
    from conformance import report

    assert "node_modules/" not in README  # `kfc report` installs it into the per-user cache
    reports = _section(README, "`kfc report [DIR]`")
    assert "per-user cache" in reports and report.CACHE_ENV in reports


def test_wire_md_real_cluster_steps_agree_with_the_tiers() -> None:
    wire = (ROOT / "docs" / "wire.md").read_text()
    steps = _section(wire, "## Pointing the suite at a real test cluster", "\nLimits:")
    # The default tiers change nothing; only mutate / register do, and they are opt-in.
    assert "tiers=observe,probe,mutate" in steps and "change nothing" in steps
    assert "They can still finalize and downgrade features" not in steps


def test_wire_md_option_table_is_the_parsers() -> None:
    from conformance.live.spec import OPTIONS

    table = _section((ROOT / "docs" / "wire.md").read_text(), "| option | default | meaning |")
    assert set(re.findall(r"^\| `(\w+)=", table, re.MULTILINE)) == set(OPTIONS)
