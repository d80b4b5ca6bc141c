"""`kfc check`, `kfc replay-trace`, `kfc mutants`: run the suite and show the verdict."""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import click

from conformance.runner import (
    HYPOTHESIS_PROFILES,
    Progress,
    RunError,
    load_summary,
    open_target,
    run_mutants,
    run_suite,
)
from conformance.verdicts import (
    CONFORMS,
    DOES_NOT_CONFORM,
    EXECUTED,
    INPUT_ERRORS,
    NOTHING_CHECKED,
    failing_rule,
    group_findings,
    overall_verdict,
    skipped_lines,
    uncovered_lines,
)
from reference_impl.data import fixtures

from .._errors import interruptible
from ._render import print_failure


def _console() -> Any:
    from rich.console import Console

    # Logs (CI, pipes) get a width that fits the tables; terminals keep their own.
    width = None if sys.stdout.isatty() else 150
    return Console(highlight=False, soft_wrap=False, width=width)


VERDICT_STYLE = {CONFORMS: "green", DOES_NOT_CONFORM: "red", INPUT_ERRORS: "red", NOTHING_CHECKED: "red"}


def print_summary(console: Any, summary: dict[str, Any], report: Path, elapsed: float) -> None:
    from rich.markup import escape
    from rich.table import Table

    from reference_impl.rules import RULES

    tests = summary["tests"]
    counts = summary["counts"]
    console.print(f"[bold]kfc check[/] target [cyan]{escape(str(summary['target']))}[/] profile "
                  f"[cyan]{summary['profile']}[/] hypothesis [cyan]{summary['hypothesis_profile']}[/] — {elapsed:.1f} s")
    by_kip: dict[str, dict[str, set[str]]] = {}
    for t in tests:
        if t["status"] not in EXECUTED:
            continue  # a rule is covered by a test that ran, not by one skipped or expected to fail
        for rid in t.get("rules") or []:
            kip = RULES[rid].kip if rid in RULES else "?"
            slot = by_kip.setdefault(kip, {"rules": set(), "failing": set()})
            slot["rules"].add(rid)
        failing = failing_rule(t)
        if failing:
            by_kip.setdefault(RULES[failing].kip if failing in RULES else "?",
                              {"rules": set(), "failing": set()})["failing"].add(failing)
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
    for line in uncovered_lines(tests, {rid for slot in by_kip.values() for rid in slot["rules"]}, set(by_kip)):
        console.print(line, markup=False, soft_wrap=True)
    for line in skipped_lines(tests):
        console.print(line, markup=False, soft_wrap=True)
    cov = summary.get("coverage") or {}
    if cov:
        from conformance.families import FAMILIES

        states = cov.get("states", {})
        # a family of several counts once, when any of its instances ("family:instance") was met
        met = {f for f in FAMILIES if f in states or any(k.startswith(f + ":") for k in states)}
        console.print(f"stateful coverage: {len(cov.get('ops', {}))} ops, {len(cov.get('errors', {}))} outcome codes, "
                      f"{len(cov.get('rules', {}))} rule ids, {len(met)} state families reached "
                      "(what each profile reaches: docs/matrices.md in the kafka-feature-conformance repository)")
    if any(t.get("tier") for t in tests):
        console.print("tests executed per tier:", markup=False)
        print_tiers(console, tests, summary.get("requests_by_tier") or {})
    restore = summary.get("restore")
    if restore:
        left = restore.get("not_restored") or []
        console.print("mutate tier: starting levels restored" if not left else
                      "mutate tier: NOT restored: " + "; ".join(f"{r['feature']} wanted {r['wanted']}, now {r['now']}"
                                                                 for r in left), markup=False, soft_wrap=True)
    failures = [t for t in tests if t["status"] in ("failed", "unexpectedly-passed")]
    if failures:
        print_findings(console, failures, report)


SPARK_EXTRA = "kafka-feature-conformance[spark]"
NO_TESTS_COLLECTED = 5  # pytest's exit code


def _has_pyspark() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("pyspark") is not None
    except (ImportError, ValueError):  # ValueError: blocked in sys.modules
        return False


@click.command("check")
@click.option("--target", "target", default="reference", show_default=True, help="Target spec.")
@click.option("--profile", default=None, help="Profile to check against (default: the target's).")
@click.option("--hypothesis-profile", type=click.Choice(HYPOTHESIS_PROFILES), default="ci", show_default=True,
              help="Hypothesis settings for the stateful model (kfc-ci, kfc-dev, kfc-deep).")
@click.option("--report", "report", default="reports/latest", show_default=True, type=click.Path(file_okay=False))
@click.option("--expectations", default=None, type=click.Path(dir_okay=False, exists=True),
              help="TOML file of expected failures.")
@click.option("-n", "--workers", default=None, help="pytest-xdist workers (e.g. auto).")
@click.option("-x", "--exitfirst", is_flag=True, help="Stop at the first failure.")
@click.option("--spark/--no-spark", default=True, show_default=True,
              help="Also replay the bundled trace corpus of the profile with Spark.")
@click.option("--spark-master", default="local[2]", show_default=True)
@click.option("-k", "select", default=None, metavar="EXPR", help="Only the tests whose names match (pytest -k).")
@interruptible
def check_command(target: str, profile: str | None, hypothesis_profile: str, report: str, expectations: str | None,
                  workers: str | None, exitfirst: bool, spark: bool, spark_master: str, select: str | None) -> None:
    """Run the conformance suite against TARGET; exit 0 only if it conforms."""
    from conformance.expectations import ExpectationsError, load_expectations

    console = _console()
    if spark and not _has_pyspark():
        raise click.ClickException("the Spark replay that ends kfc check needs pyspark: "
                                   f"pip install '{SPARK_EXTRA}', or pass --no-spark")
    if expectations:
        try:
            load_expectations(expectations)  # a bad file is one line here, before anything runs
        except ExpectationsError as e:
            raise click.ClickException(str(e)) from None
    try:
        made, prof, hello = open_target(target, profile)
    except RunError as e:
        raise click.ClickException(str(e)) from None
    out = Path(report)
    start = time.perf_counter()
    if hello.get("tiers") is not None:
        print_observation(console, made, prof)
    try:
        # On a terminal a live line (tests done / total, the part running, seconds); elsewhere nothing.
        status = ProgressLine(f"checking {hello.get('name', target)} against the reference ({prof})")
        with console.status(status):
            code = run_suite(target, prof, hypothesis_profile, out, provided=made, hello=hello, progress=status.update,
                             expectations=expectations, workers=workers, exitfirst=exitfirst, select=select)
        summary = load_summary(out)
        if summary is None and select and code == NO_TESTS_COLLECTED:
            raise click.ClickException(f"no test matched -k {select!r}")
        if summary is None:
            tail = (out / "pytest.log").read_text().splitlines()[-15:]
            console.print("\n".join(tail), markup=False)
            raise click.ClickException(f"the suite did not run (pytest exit {code}); log: {out / 'pytest.log'}")
        spark_summary = None
        if spark and summary.get("verdict") != NOTHING_CHECKED and not (exitfirst and code != 0):
            spark_summary = spark_stage(console, target, made, prof, out, spark_master,
                                        frozenset(hello.get("capabilities") or ()))
    finally:
        made.close()
    elapsed = time.perf_counter() - start
    print_summary(console, summary, out, elapsed)
    if spark_summary is not None:
        print_spark(console, spark_summary)
    verdict = overall_verdict(summary, spark_summary if spark_summary and "by_status" in spark_summary else None)
    (out / "verdict").write_text(verdict + "\n")
    console.print(f"[{VERDICT_STYLE[verdict]}]{verdict}[/]   report: {escape_path(out)}  (HTML: kfc report "
                  f"{escape_path(out)})")
    sys.exit(0 if verdict == CONFORMS else 1)


class ProgressLine:
    """The spinner's text, rendered at each refresh: the elapsed time moves during a long test too."""

    def __init__(self, label: str):
        self.label = label
        self.progress: Progress | None = None

    def update(self, progress: Progress) -> None:
        self.progress = progress

    def __rich__(self) -> str:
        from rich.markup import escape

        return escape(self.label + (f" — {self.progress.line()}" if self.progress is not None else " …"))


def print_observation(console: Any, target: Any, profile: str) -> None:
    """The cluster as observed, before anything runs (also in the report: cluster.txt, cluster.json)."""
    from conformance.live.context import build
    from conformance.live.table import observation_lines

    for line in observation_lines(build(target, profile)):
        console.print(line, markup=False, soft_wrap=True)


def print_findings(console: Any, failures: list[dict[str, Any]], report: Path) -> None:
    """Failures grouped by the rule they break (one cause, one finding), most tests first; each with
    its first divergence and repro line."""
    from reference_impl.rules import RULES

    ranked = group_findings(failures)
    console.print(f"findings: {len(ranked)} (from {len(failures)} failing test(s)), most tests first", markup=False)
    shown = 0
    for i, (cause, tests) in enumerate(ranked, 1):
        statement = RULES[cause].statement if cause in RULES else ""
        rules = sorted({r for r in (failing_rule(t) for t in tests) if r and r != cause})
        also = f" (in outcomes of {', '.join(rules[:6])}{' …' if len(rules) > 6 else ''})" if rules else ""
        console.print(f"{i}. {cause}{': ' + statement if statement else ''} — {len(tests)} test(s){also}",
                      markup=False, soft_wrap=True)
        for t in tests:
            if shown == 8:
                break
            print_failure(console, t["nodeid"], t.get("divergence"), t.get("summary"), t.get("repro"))
            shown += 1
    if shown < len(failures):
        console.print(f"… and {len(failures) - shown} more failing test(s) (see {report / 'summary.json'})",
                      markup=False)


def print_tiers(console: Any, tests: list[dict[str, Any]], requests: dict[str, int]) -> None:
    tiers: dict[str, Counter[str]] = defaultdict(Counter)
    for t in tests:
        tiers[t.get("tier") or "examples/regressions"][t["status"]] += 1
    from conformance.live.spec import TIERS

    order = [*TIERS, "examples/regressions"]
    for tier in sorted(tiers, key=lambda x: order.index(x) if x in order else 99):
        c = tiers[tier]
        executed = sum(v for k, v in c.items() if k in ("passed", "failed", "unexpectedly-passed", "xfailed"))
        sent = f", {requests[tier]:,} request(s) sent" if tier in requests else ""
        console.print(f"  {tier}: {executed} executed (" + ", ".join(f"{k} {v}" for k, v in sorted(c.items())) + ")"
                      + sent, markup=False)


def escape_path(path: Path) -> str:
    from rich.markup import escape

    return escape(str(path))


def print_spark(console: Any, s: dict[str, Any]) -> None:
    if "skipped" in s:
        console.print(f"spark replay skipped: {s['skipped']}", markup=False, soft_wrap=True)
        return
    counts = s["by_status"]
    bad = {k: v for k, v in counts.items() if k != "pass" and v}
    console.print(f"spark replay of the bundled corpus: {s['rows_in']} traces in, {s['rows_out']} out, "
                  f"{counts.get('pass', 0)} pass" + "".join(f", {v} {k}" for k, v in bad.items())
                  + f" ({s['master']}, {s['traces_per_s'] or 0:,.0f} traces/s after a "
                    f"{s['seconds']['spark_start']:.0f} s start)", markup=False, soft_wrap=True)
    for d in s.get("shrunk", []):
        print_failure(console, f"corpus trace {d['trace_id']} ({d['status']})", d.get("divergence"), d.get("diff"),
                      d.get("repro"))


def spark_stage(console: Any, target: str, made: Any, profile: str, out: Path, master: str,
                capabilities: frozenset[str]) -> dict[str, Any]:
    """Replay the profile's bundled corpus (fixtures/corpus) with Spark; its divergences join the
    suite's Allure results (one report shows both) and are shrunk to a repro on the driver."""
    from conformance.allure_results import ENVIRONMENT_FILE, write_environment
    from conformance.replay import shrink_failures
    from reference_impl import OPS

    # The generated corpus uses every op; a target without some of them (e.g. over the Kafka wire)
    # cannot replay it, and saying so beats reporting thousands of divergences.
    missing = sorted(set(OPS) - capabilities)
    if missing:
        return {"skipped": f"the target lacks op(s) {', '.join(missing)} used by the bundled corpus"}
    corpus = fixtures() / "corpus" / f"bundled-{profile}.parquet"
    if not corpus.is_file():
        return {"skipped": f"no bundled corpus for {profile}"}
    try:
        from spark_checks.replay_job import replay as spark_replay
        from spark_checks.session import SparkJobError
    except ImportError as e:
        raise click.ClickException(f"the Spark replay needs pyspark ({e}): pip install '{SPARK_EXTRA}', "
                                   "or pass --no-spark") from None
    with console.status(f"replaying the bundled corpus ({profile}) with Spark {master} …"):
        try:
            s = spark_replay(str(corpus), target, out / "spark", master=master, k_allure=20, progress=False)
        except SparkJobError as e:
            raise click.ClickException(f"Spark replay: {e} (pass --no-spark to skip it)") from None
    results = out / "allure-results"
    results.mkdir(exist_ok=True)
    for f in sorted((out / "spark" / "allure-results").glob("*")):
        if f.name == ENVIRONMENT_FILE:  # joins the suite's environment instead of replacing it
            write_environment(results, dict(line.split("=", 1) for line in f.read_text().splitlines()
                                            if "=" in line and not line.startswith("#")))
        else:
            shutil.copy2(f, results / f.name)
    s["shrunk"] = shrink_failures(out / "spark" / "results", made, target, out / "traces", capabilities, limit=5)
    return s


@click.command("replay-trace")
@click.argument("trace_file", type=click.Path(dir_okay=False))
@click.option("--target", "target", default="reference", show_default=True)
def replay_trace_command(trace_file: str, target: str) -> None:
    """Replay a trace file against TARGET and show where it diverges (exit 1 if it does)."""
    from conformance.engine import run_steps
    from conformance.targets import TargetError, capabilities_of, make_target
    from conformance.trace import TraceError, read_trace

    try:
        trace = read_trace(trace_file)
    except TraceError as e:
        raise click.ClickException(str(e)) from None
    try:
        t = make_target(target)
        capabilities = capabilities_of(t.hello())
    except (ValueError, TargetError) as e:
        raise click.ClickException(f"target {target}: {e}") from None
    reference = None
    if t.live() is not None:
        from reference_impl import Cluster

        # A running cluster is where it is now: the reference starts from that state and recomputes
        # each step's expected outcome in lockstep (the recorded ones belong to the state of then).
        reference = Cluster(trace["profile"])
        click.echo(f"{target} is a live cluster: expected outcomes come from the reference started from its "
                   "current state")
    try:
        verdict = run_steps(trace, t, stop_at_first=False, capabilities=capabilities, reference=reference)
    except TargetError as e:
        raise click.ClickException(f"target {target}: {e}") from None
    finally:
        t.close()
    n = len(trace["steps"])
    bad = [s for s in verdict.steps if not s.ok]
    for step in bad:
        for line in step.lines():
            click.echo(line)
    if verdict.status == "pass":
        click.echo(f"{trace_file}: {n} step(s) replayed on {target} ({trace['profile']}): PASS")
        return
    first = verdict.first
    assert first is not None
    where = "set-up" if first.index < 0 else f"step {first.index}"
    click.echo(f"{trace_file}: {verdict.status.upper()} at {where} on {target} "
               f"({len([s for s in bad if s.index >= 0])} of {n} step(s) differ)")
    sys.exit(1)


@click.command("mutants")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--run", "run", is_flag=True, help="Run the suite (ci profile) against each mutant.")
@click.option("--only", multiple=True, help="Mutant name (repeatable); default all.")
@click.option("--jobs", default=2, show_default=True, help="Mutants checked in parallel.")
@click.option("--report", "report", default="reports/mutants", show_default=True, type=click.Path(file_okay=False))
@click.option("--wire", is_flag=True, help="Also serve each mutant with `kfc serve-broker --mutant --no-control` "
              "and check it over kafka:// (tiers observe,probe,mutate,register): the wire column.  A survivor "
              "its catalogue entry declares wire-reachable fails the run.")
@click.option("--model-alone", is_flag=True, help="Run only the stateful model (no example tables, no "
              "regressions, no corpus replay): what the model kills by itself, how many steps it walked "
              "before the first divergence and how short Hypothesis shrank it.")
def mutants_cli(as_json: bool, run: bool, only: tuple[str, ...], jobs: int, report: str, wire: bool,
                model_alone: bool) -> None:
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
    what = "the stateful model alone" if model_alone else "the ci suite"
    with console.status(f"running {what} against {len(names)} mutants, {jobs} at a time …"):
        ran = run_mutants(names, root, jobs, "ci", wire=wire, model_alone=model_alone)
    elapsed = time.perf_counter() - start
    (root / "mutants.json").write_text(json.dumps({"seconds": round(elapsed, 2), "mutants": ran}, indent=1) + "\n")
    if as_json:
        click.echo(json.dumps(ran, indent=1))
    else:
        from rich.table import Table

        table = Table(title=f"mutants: {sum(bool(row['killed']) for row in ran)}/{len(ran)} killed in {elapsed:.1f} s")
        cols = ["mutant", "rule", "killed?", "first failing test", "time to kill (s)"]
        if model_alone:
            cols[3:4] = ["steps to first divergence", "shrunk length"]
        if wire:
            cols += ["wire: killed? (tier)", "wire (s)"]
        for col in cols:
            table.add_column(col)
        for row in ran:
            test = (row["first_failing_test"] or "-").replace("conformance/suite/", "")
            killed = {True: "[green]yes[/]", False: "[red]NO[/]", None: "[yellow]not run[/]"}[row["killed"]]
            cells = [row["mutant"], row["rule"], killed, test[:60], f"{row['seconds']:.1f}"]
            if model_alone:
                model = row["model"]
                cells[3:4] = [str(model.get("steps_to_first", "-")), str(model.get("shrunk_length", "-"))]
            if wire:
                wr = row["wire"]
                if wr["killed"]:
                    said = f"[green]yes[/] ({wr['tier']})"
                elif wr["reachable"]:
                    said = "[red]NO[/] (reachable over the wire)"
                else:
                    said = "[yellow]no[/] (unreachable: see kfc mutants --json)"
                cells += [said, f"{wr['seconds']:.1f}"]
            table.add_row(*cells)
        console.print(table)
        rate = 100.0 * sum(bool(row["killed"]) for row in ran) / len(ran)
        console.print(f"kill rate {rate:.0f}%  ({root / 'mutants.json'})")
        if wire:
            wired = sum(bool(row["wire"]["killed"]) for row in ran)
            reachable = [row for row in ran if row["wire"]["reachable"]]
            console.print(f"wire (kafka://, no control): {wired}/{len(ran)} killed by the live tiers; "
                          f"{sum(bool(row['wire']['killed']) for row in reachable)}/{len(reachable)} of the "
                          "wire-reachable ones")
    # Over the wire every mutant its catalogue entry declares reachable must be killed as well.
    survivors = [row for row in ran if wire and row["wire"]["reachable"] and not row["wire"]["killed"]]
    sys.exit(0 if all(row["killed"] for row in ran) and not survivors else 1)
