"""`kfc check`, `kfc replay-trace`, `kfc mutants`: run the suite and show the verdict."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import click

from conformance.runner import (
    HYPOTHESIS_PROFILES,
    RunError,
    load_summary,
    resolve_profile,
    run_mutants,
    run_suite,
)


def _console() -> Any:
    from rich.console import Console

    # Logs (CI, pipes) get a width that fits the tables; terminals keep their own.
    width = None if sys.stdout.isatty() else 150
    return Console(highlight=False, soft_wrap=False, width=width)


def print_summary(console: Any, summary: dict[str, Any], report: Path, elapsed: float) -> None:
    from rich.table import Table

    from reference_impl.rules import RULES

    tests = summary["tests"]
    counts = summary["counts"]
    console.print(f"[bold]kfc check[/] target [cyan]{summary['target']}[/] profile [cyan]{summary['profile']}[/] "
                  f"hypothesis [cyan]{summary['hypothesis_profile']}[/] — {elapsed:.1f} s")
    by_kip: dict[str, dict[str, set[str]]] = {}
    for t in tests:
        for rid in t.get("rules") or []:
            kip = RULES[rid].kip if rid in RULES else "?"
            slot = by_kip.setdefault(kip, {"rules": set(), "failing": set()})
            slot["rules"].add(rid)
            if t["status"] in ("failed", "unexpectedly-passed"):
                slot["failing"].add(rid)
    table = Table(title="rules by KIP", show_lines=False)
    for col in ("KIP", "rules covered", "rules failing", "of registry"):
        table.add_column(col, justify="right" if col != "KIP" else "left")
    for kip in sorted(by_kip, key=lambda k: (len(k), k)):
        total = sum(1 for r in RULES.values() if r.kip == kip)
        slot = by_kip[kip]
        fail = len(slot["failing"])
        table.add_row(kip, str(len(slot["rules"])), f"[red]{fail}[/]" if fail else "0", str(total))
    console.print(table)
    console.print("tests: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    cov = summary.get("coverage") or {}
    if cov:
        console.print(f"stateful coverage: {len(cov.get('ops', {}))} ops, {len(cov.get('errors', {}))} outcome codes, "
                      f"{len(cov.get('rules', {}))} rule ids reached")
    failures = [t for t in tests if t["status"] in ("failed", "unexpectedly-passed")]
    for t in failures[:8]:
        console.print(f"[red]FAIL[/] {t['nodeid']}\n     {t.get('summary') or ''}", soft_wrap=True)
        if t.get("repro"):  # one line, never wrapped: it is meant to be copied
            console.print(f"     repro: {t['repro']}", soft_wrap=True, markup=False)
    if len(failures) > 8:
        console.print(f"… and {len(failures) - 8} more failures (see {report / 'summary.json'})")
    verdict = "[green]CONFORMS[/]" if summary["exit_status"] == 0 else "[red]DOES NOT CONFORM[/]"
    console.print(f"{verdict}   report: {report}  (HTML: kfc report {report})")


@click.command("check")
@click.option("--target", "target", default="reference", show_default=True, help="Target spec.")
@click.option("--profile", default=None, help="Profile to check against (default: the target's).")
@click.option("--hypothesis-profile", type=click.Choice(HYPOTHESIS_PROFILES), default="ci", show_default=True)
@click.option("--report", "report", default="reports/latest", show_default=True, type=click.Path(file_okay=False))
@click.option("--expectations", default=None, type=click.Path(dir_okay=False, exists=True),
              help="TOML file of expected failures.")
@click.option("-n", "--workers", default=None, help="pytest-xdist workers (e.g. auto).")
@click.option("-x", "--exitfirst", is_flag=True, help="Stop at the first failure.")
@click.option("--spark/--no-spark", default=True, show_default=True,
              help="Also replay the bundled trace corpus of the profile with Spark.")
@click.option("--spark-master", default="local[2]", show_default=True)
def check_command(target: str, profile: str | None, hypothesis_profile: str, report: str, expectations: str | None,
                  workers: str | None, exitfirst: bool, spark: bool, spark_master: str) -> None:
    """Run the conformance suite against TARGET; exit 0 only if it conforms."""
    console = _console()
    try:
        prof, hello = resolve_profile(target, profile)
    except RunError as e:
        raise click.ClickException(str(e)) from None
    out = Path(report)
    start = time.perf_counter()
    with console.status(f"checking {hello.get('name', target)} against the reference ({prof}) …"):
        code = run_suite(target, prof, hypothesis_profile, out, expectations=expectations, workers=workers,
                         exitfirst=exitfirst)
    summary = load_summary(out)
    if summary is None:
        tail = (out / "pytest.log").read_text().splitlines()[-15:]
        console.print("\n".join(tail))
        raise click.ClickException(f"the suite did not run (pytest exit {code}); log: {out / 'pytest.log'}")
    spark_line, spark_ok = None, True
    if spark and not (exitfirst and code != 0):
        spark_line, spark_ok = spark_stage(console, target, prof, out, spark_master,
                                           frozenset(hello.get("capabilities") or ()))
    elapsed = time.perf_counter() - start
    print_summary(console, summary, out, elapsed)
    if spark_line:
        console.print(spark_line, soft_wrap=True)
    sys.exit(0 if code == 0 and spark_ok else 1)


def spark_stage(console: Any, target: str, profile: str, out: Path, master: str,
                capabilities: frozenset[str]) -> tuple[str, bool]:
    """Replay the profile's bundled corpus (fixtures/corpus) with Spark; its divergences join the
    suite's Allure results, so one report shows both."""
    from importlib import resources

    from reference_impl import OPS

    # The generated corpus uses every op; a target without some of them (e.g. over the Kafka wire)
    # cannot replay it, and saying so beats reporting thousands of divergences.
    missing = sorted(set(OPS) - capabilities)
    if missing:
        return f"spark replay skipped: the target lacks op(s) {', '.join(missing)} used by the bundled corpus", True
    corpus = resources.files("fixtures") / "corpus" / f"bundled-{profile}.parquet"
    if not corpus.is_file():
        return f"spark replay: no bundled corpus for {profile}", True
    try:
        from spark_checks.job import SparkJobError
        from spark_checks.job import replay as spark_replay
    except ImportError as e:
        raise click.ClickException(f"the Spark replay needs pyspark ({e}); pass --no-spark to skip it") from None
    with console.status(f"replaying the bundled corpus ({profile}) with Spark {master} …"):
        try:
            s = spark_replay(str(corpus), target, out / "spark", master=master, k_allure=20, progress=False)
        except SparkJobError as e:
            raise click.ClickException(f"Spark replay: {e} (pass --no-spark to skip it)") from None
    results = out / "allure-results"
    results.mkdir(exist_ok=True)
    for f in sorted((out / "spark" / "allure-results").glob("*")):
        shutil.copy2(f, results / f.name)
    counts = s["by_status"]
    bad = {k: v for k, v in counts.items() if k != "pass" and v}
    line = (f"spark replay of the bundled corpus: {s['rows_in']} traces in, {s['rows_out']} out, "
            f"{counts.get('pass', 0)} pass" + "".join(f", {v} {k}" for k, v in bad.items())
            + f" ({master}, {s['traces_per_s']:,.0f} traces/s after a {s['seconds']['spark_start']:.0f} s start)")
    return line, not bad and s["rows_in"] == s["rows_out"]


@click.command("replay-trace")
@click.argument("trace_file", type=click.Path(dir_okay=False))
@click.option("--target", "target", default="reference", show_default=True)
def replay_trace_command(trace_file: str, target: str) -> None:
    """Replay a trace file against TARGET and show where it diverges."""
    from conformance.targets import TargetError, make_target
    from conformance.trace import TraceError, read_trace, replay

    try:
        trace = read_trace(trace_file)
    except TraceError as e:
        raise click.ClickException(str(e)) from None
    try:
        t = make_target(target)
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    try:
        diverged = replay(trace, t)
    except TargetError as e:
        raise click.ClickException(f"target {target} failed: {e}") from None
    finally:
        t.close()
    n = len(trace["steps"])
    if not diverged:
        click.echo(f"{trace_file}: {n} step(s) replayed on {target} ({trace['profile']}): conforms")
        return
    for d in diverged:
        click.echo(f"step {d['index']} {json.dumps(d['command'])}")
        for line in d["diff"]:
            click.echo(f"    {line}")
    click.echo(f"{trace_file}: {len(diverged)} of {n} step(s) diverge on {target}")
    sys.exit(1)


@click.command("mutants")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--run", "run", is_flag=True, help="Run the suite (ci profile) against each mutant.")
@click.option("--only", multiple=True, help="Mutant name (repeatable); default all.")
@click.option("--jobs", default=2, show_default=True, help="Mutants checked in parallel.")
@click.option("--report", "report", default="reports/mutants", show_default=True, type=click.Path(file_okay=False))
def mutants_cli(as_json: bool, run: bool, only: tuple[str, ...], jobs: int, report: str) -> None:
    """List the seeded mutants, or with --run check that the suite kills every one."""
    from conformance.mutants import MUTANTS, mutant_rows

    unknown = [n for n in only if n not in MUTANTS]
    if unknown:
        raise click.ClickException(f"unknown mutant(s) {', '.join(unknown)}; see kfc mutants")
    if not run:
        rows = [r for r in mutant_rows() if not only or r["name"] in only]
        if as_json:
            click.echo(json.dumps(rows, indent=1))
            return
        w = max(len(r["name"]) for r in rows)
        for r in rows:
            click.echo(f"{r['name']:<{w}}  {r['rule']:<17} {r['profile']:<9} {r['description']}")
        return
    names = list(only) or list(MUTANTS)
    root = Path(report)
    console = _console()
    start = time.perf_counter()
    with console.status(f"running the ci suite against {len(names)} mutants, {jobs} at a time …"):
        rows = run_mutants(names, root, jobs, "ci")
    elapsed = time.perf_counter() - start
    (root / "mutants.json").write_text(json.dumps({"seconds": round(elapsed, 2), "mutants": rows}, indent=1) + "\n")
    if as_json:
        click.echo(json.dumps(rows, indent=1))
    else:
        from rich.table import Table

        table = Table(title=f"mutants: {sum(bool(r['killed']) for r in rows)}/{len(rows)} killed in {elapsed:.1f} s")
        for col in ("mutant", "rule", "killed?", "first failing test", "time to kill (s)"):
            table.add_column(col)
        for r in rows:
            test = (r["first_failing_test"] or "-").replace("conformance/suite/", "")
            table.add_row(r["mutant"], r["rule"], "[green]yes[/]" if r["killed"] else "[red]NO[/]", test[:70],
                          f"{r['seconds']:.1f}")
        console.print(table)
        rate = 100.0 * sum(bool(r["killed"]) for r in rows) / len(rows)
        console.print(f"kill rate {rate:.0f}%  ({root / 'mutants.json'})")
    sys.exit(0 if all(r["killed"] for r in rows) else 1)
