"""`kfc generate`: a deterministic corpus of traces, single-process or split by seed ranges on Spark."""

from __future__ import annotations

from pathlib import Path

import click

from conformance.corpus import FORMATS, CorpusError
from conformance.generate import check_profiles, generate_to
from reference_impl import InputError

from .._errors import interruptible

SUFFIXES = {".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", "": "parquet"}


@click.command("generate")
@click.option("--count", type=int, required=True, help="Number of traces.")
@click.option("--seed", type=int, required=True, help="Seed: the same seed gives the same bytes.")
@click.option("--out", "out", type=click.Path(dir_okay=False), required=True, help="Corpus file to write.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Corpus format (default: from the --out suffix: .parquet, .jsonl, .ndjson, .json; none: parquet).")
@click.option("--profile", "profiles", multiple=True, help="Profile(s) to generate for (default: all, cycled).")
@click.option("--row-group-size", type=int, default=None, help="Parquet rows per row group.")
@click.option("--spark", is_flag=True, help="Generate with Spark, split by seed ranges.")
@click.option("--master", default=None, help="Spark master URL (with --spark; default local[*]).")
@interruptible
def generate_command(count: int, seed: int, out: str, fmt: str | None, profiles: tuple[str, ...],
                     row_group_size: int | None, spark: bool, master: str | None) -> None:
    """Generate a corpus of traces with the reference's expected outcomes."""
    if count < 0:
        raise click.UsageError(f"--count must be >= 0, got {count}")
    if row_group_size is not None and row_group_size < 1:
        raise click.UsageError(f"--row-group-size must be >= 1, got {row_group_size}")
    if fmt is None:
        suffix = Path(out).suffix.lower()
        if suffix not in SUFFIXES:
            known = ", ".join(k for k in SUFFIXES if k)
            raise click.UsageError(f"--out {out}: {suffix!r} is not a corpus suffix ({known}); name the file so, "
                                   "or pass --format")
        fmt = SUFFIXES[suffix]
    profile: list[str] | None = list(profiles) if profiles else None
    try:
        check_profiles(profile)
    except InputError as e:
        raise click.ClickException(str(e)) from None
    if master and not spark:
        raise click.UsageError("--master needs --spark")
    try:
        if spark:
            from spark_checks.generate_job import generate_with_spark

            info = generate_with_spark(count, seed, out, fmt, profile, master, row_group_size=row_group_size)
        else:
            info = generate_to(out, count, seed, fmt, profile, row_group_size=row_group_size)
    except (CorpusError, InputError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    except OSError as e:
        raise click.ClickException(f"{out}: {e.strerror or e}") from None
    rate = info.get("traces_per_s")
    click.echo(f"generated {info['count']} traces ({info['format']}, {info['bytes']:,} bytes) to {info['path']}"
               + (f" in {info['seconds']:.2f}s, {rate:,.0f} traces/s" if rate else ""))
