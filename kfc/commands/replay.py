"""`kfc replay CORPUS --target T [--master URL] --out DIR [--k-allure K]`: the Spark replay job.

Exit 0 only when every trace passed.  Divergences, target errors and input errors (bad corpus rows)
all exit 1: a corpus row that cannot be replayed is a finding too, never silently dropped.
Setup problems (missing corpus, unknown target, no Java, unreachable master) are one line on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from conformance.verdicts import PASS, replay_verdict

from .._errors import interruptible
from ._render import print_failure


def _console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 120)


def print_summary(console: Any, s: dict[str, Any], out: Path) -> None:
    """One screen: status counts, per-profile counts, where it diverged, the first few trace ids."""
    from rich.markup import escape
    from rich.table import Table

    st = s["by_status"]
    secs = s["seconds"]
    console.print(f"[bold]kfc replay[/] {s['corpus']} on [cyan]{s['target']}[/] ({s['master']}, "
                  f"{s['partitions']} tasks): {s['traces']:,} traces, {s['steps']:,} steps in {secs['replay']:.1f} s "
                  f"([bold]{s['traces_per_s'] or 0:,.0f} traces/s[/]; Spark start {secs['spark_start']:.1f} s)")
    table = Table(title=None, show_lines=False)
    table.add_column("profile")
    cols = ("pass", "diverged", "target-error", "input-error") + (("skipped",) if st.get("skipped") else ())
    for col in cols:
        table.add_column(col, justify="right")
    for profile, counts in s["by_profile"].items():
        table.add_row(profile, *(_cell(col, counts.get(col, 0)) for col in cols))
    table.add_row("[bold]total[/]", *(_cell(col, st.get(col, 0)) for col in cols))
    console.print(table)
    if st.get("skipped"):
        lacks = ", ".join(f"{op} ({n:,})" for op, n in (s.get("skipped_ops") or {}).items())
        console.print(f"[yellow]skipped[/] {st['skipped']:,} traces (not run, not passed): the target lacks "
                      f"{escape(lacks)} (traces using each)")
    if s.get("divergent_ops"):
        console.print("first divergent op: " + ", ".join(f"{op} {n}" for op, n in
                                                           sorted(s["divergent_ops"].items(), key=lambda kv: -kv[1])[:6]))
    cov = s.get("coverage") or {}
    pairs = sum(len(codes) for codes in cov.values())
    console.print(f"coverage: {len(cov)} ops × {len(s.get('by_error_code') or {})} outcome codes "
                  f"({pairs} op/code pairs) × {len(s['by_profile'])} profiles; divergence rate "
                  f"{100 * s['divergence_rate']:.2f}%")
    for d in s.get("first_divergences", [])[:6]:
        console.print(f"[red]{d['status']}[/] {escape(divergence_line(d))}", soft_wrap=True)
    if not s.get("complete", True):
        console.print(f"[red]rows in {s['rows_in']} != rows out {s['rows_out']}[/]")
    for d in s.get("shrunk", []):
        print_failure(console, f"corpus trace {d['trace_id']} ({d['status']})", d.get("divergence"), d.get("diff"),
                      d.get("repro"))
    verdict = replay_verdict(s)
    extra = f", {s['allure_results']} Allure results (kfc report {out})" if s.get("allure_results") else ""
    style = "green" if verdict == PASS else "red"
    console.print(f"[{style}]{verdict}[/]   results: {escape(str(out))}/results  summary: {escape(str(out))}/summary.json"
                  f"{escape(extra)}")


def divergence_line(d: dict[str, Any]) -> str:
    """A row's trace id, profile, step and diff; a bad corpus line (no profile, no step, a message that
    names its location itself) is the message alone."""
    diff = d.get("diff") or ""
    parts = [] if diff.startswith(str(d["trace_id"])) else [str(d["trace_id"])]
    if d.get("profile"):
        parts.append(f"[{d['profile']}]")
    if d.get("first_divergent_step") is not None:
        parts.append(f"step {d['first_divergent_step']} {d['op']}")
    return (" ".join(parts) + ": " if parts else "") + diff


def _cell(col: str, n: int) -> str:
    if n and col == "skipped":
        return f"[yellow]{n:,}[/]"
    if n and col != "pass":
        return f"[red]{n:,}[/]"
    return f"{n:,}"


@click.command("replay")
@click.argument("corpus", type=click.Path(path_type=Path))
@click.option("--target", "target", default="reference", show_default=True, help="Target spec.")
@click.option("--master", default=None,
              help="Spark master: local[N], local[*] or spark://HOST:PORT [default: local[*], or spark-submit's].")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output directory (results/, summary.json, coverage.*, allure-results/).")
@click.option("--k-allure", "k_allure", default=20, show_default=True, type=click.IntRange(min=0),
              help="First K non-passing traces (by trace id) written as Allure results.")
@click.option("--partitions", default=None, type=click.IntRange(min=1), help="Force the number of replay tasks.")
@click.option("--quiet", is_flag=True, help="No progress while it runs.")
@click.option("--spark/--no-spark", "spark", default=True, show_default=True,
              help="--no-spark: replay in this process (one target, e.g. one harness JVM), same outputs.")
@interruptible
def replay_command(corpus: Path, target: str, master: str | None, out: Path, k_allure: int, partitions: int | None,
                   quiet: bool, spark: bool) -> None:
    """Replay every trace of CORPUS (JSON Lines or Parquet, a file or a directory of them) against
    TARGET with Spark (or in this process with --no-spark); exit 0 only when nothing diverged.
    Traces using ops the target does not list in its capabilities are skipped and counted."""
    from spark_checks.replay_job import replay, replay_in_process
    from spark_checks.session import SparkJobError

    if not corpus.exists():
        raise click.ClickException(f"{corpus}: no such corpus file or directory")
    if not spark and (master or partitions):
        raise click.ClickException("--master and --partitions are Spark's: not with --no-spark")
    made = None if spark else _make(target)  # --no-spark: one target for the replay and the shrinking
    try:
        try:
            if made is None:
                summary = replay(corpus, target, out, master=master or "local[*]", k_allure=k_allure,
                                 progress=not quiet, partitions=partitions)
            else:
                summary = replay_in_process(corpus, target, out, k_allure=k_allure, target=made)
        except SparkJobError as e:
            raise click.ClickException(str(e)) from None
        except Exception as e:  # noqa: BLE001 - a failed Spark job: one line, not the JVM's stack trace
            text = " ".join(str(e).split())
            what = "the Spark job" if made is None else "the replay"
            raise click.ClickException(f"{what} failed: {type(e).__name__}: {text[:400]}") from None
        if summary["by_status"].get("diverged") or summary["by_status"].get("target-error"):
            summary["shrunk"] = _shrunk(target, out, made)
    finally:
        if made is not None:
            made.close()
    print_summary(_console(), summary, out)
    sys.exit(0 if replay_verdict(summary) == PASS else 1)


def _make(target_spec: str) -> Any:
    """The target, or one line for the user (an unknown spec, a target that cannot start)."""
    from conformance.targets import TargetError, make_target

    try:
        return make_target(target_spec)
    except (ValueError, TargetError) as e:
        raise click.ClickException(f"target {target_spec}: {e}") from None


def _shrunk(target_spec: str, out: Path, made: Any = None) -> list[dict[str, Any]]:
    """The first divergences, shrunk on the target in this process (`made`, or one made here), each
    with a repro line."""
    from conformance.replay import shrink_failures
    from conformance.targets import capabilities_of

    target = made if made is not None else _make(target_spec)
    try:
        return shrink_failures(out / "results", target, target_spec, out / "traces",
                               capabilities_of(target.hello()), limit=5)
    finally:
        if made is None:
            target.close()
