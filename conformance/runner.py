"""Running the suite: the profile under check, a pytest run of `conformance.suite`, its summary, and
the mutant run (one suite per mutant)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pluggy import HookimplMarker

from .interrupts import Trap
from .live.spec import TIERS

if TYPE_CHECKING:
    from .targets.base import Target

pytest_hookimpl = HookimplMarker("pytest")

HYPOTHESIS_PROFILES = ("ci", "dev", "deep")


class RunError(Exception):
    """The run could not start (bad target, bad profile): one line for the user."""


def open_target(target_spec: str, profile: str | None) -> tuple[Target, str, dict[str, Any]]:
    """Make the target once: (target, the profile under check -- the target's own unless given -- , hello)."""
    from reference_impl import DEFAULT_PROFILE, InputError, load_profile

    from .targets import TargetError, make_target

    try:
        target = make_target(target_spec)
    except (ValueError, TargetError) as e:
        raise RunError(str(e)) from None
    try:
        if profile and target.accepts_profile:
            target.profile = load_profile(profile).name  # a live cluster's release, as the user names it
        hello = target.hello()
        return target, load_profile(profile or hello.get("profile") or DEFAULT_PROFILE).name, hello
    except TargetError as e:
        target.close()
        raise RunError(f"target {target_spec}: {e}") from None
    except InputError as e:
        target.close()
        raise RunError(str(e)) from None


class QuickInterrupt:
    """pytest plugin: on Ctrl-C, pytest's terminal reporter renders the interrupt's whole traceback,
    with each frame's source parsed (seconds for a deep Hypothesis stack, and a crash on a frame
    without line numbers).  `kfc check` says "interrupted" instead: that rendering is skipped."""

    @staticmethod
    def _skip(excinfo: Any) -> None:
        return None

    @pytest_hookimpl(trylast=True)
    def pytest_configure(self, config: Any) -> None:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        for impl in config.pluginmanager.hook.pytest_keyboard_interrupt.get_hookimpls():
            if impl.plugin is reporter:
                impl.function = self._skip


class Progress:
    """pytest plugin counting the run for a progress line: tests done of the total, the part running
    (examples, stateful model, regressions, live tiers), seconds since the start."""

    def __init__(self, on_change: Callable[[Progress], None]):
        self.on_change = on_change
        self.start = time.monotonic()
        self.total = 0
        self.done = 0
        self.part = "collecting"

    def line(self) -> str:
        counted = f"{self.done}/{self.total} tests" if self.total else "collecting tests"
        return f"{counted}, {self.part}, {time.monotonic() - self.start:.0f} s"

    @pytest_hookimpl
    def pytest_collection_finish(self, session: Any) -> None:
        self.total = len(session.items)
        self.on_change(self)

    @pytest_hookimpl
    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py").removeprefix("test_")
        self.part = PARTS.get(module, module)
        self.on_change(self)

    @pytest_hookimpl
    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.done += 1
        self.on_change(self)


PARTS = {"examples": "example tables", "stateful": "stateful model", "regressions": "regressions",
         "live": "live tiers"}


class ProvidedTarget:
    """pytest plugin handing the suite a target made by the caller (no second construction)."""

    def __init__(self, target: Any, hello: dict[str, Any]):
        self.target, self.hello = target, hello

    def pytest_configure(self, config: Any) -> None:
        from .plugin import PROVIDED

        config.stash[PROVIDED] = (self.target, self.hello)


def suite_args(target: str, profile: str, hypothesis_profile: str, report: Path, *, expectations: str | None = None,
               workers: str | None = None, exitfirst: bool = False, extra: list[str] | None = None,
               select: str | None = None) -> list[str]:
    # no:unraisableexception: its clean-up collects garbage five times over, seconds after a big run
    # The suite's own configuration, whatever directory kfc runs in: no ini file and no conftest.py of the
    # project around it (run from this repository, its tests' conftest and settings would join the suite).
    suite_dir = Path(__file__).resolve().parent / "suite"
    args = ["-c", os.devnull, "--rootdir", str(suite_dir), "--noconftest",
            "--pyargs", "conformance.suite", "-q", "-p", "no:cacheprovider", "-p", "no:unraisableexception",
            "--kfc-target", target, "--kfc-profile", profile, "--hypothesis-profile", f"kfc-{hypothesis_profile}",
            "--kfc-report", str(report), "--alluredir", str(report / "allure-results"),
            "-o", "console_output_style=classic", "-rfE",
            # kfc has imported conformance before pytest starts; pytest (editable installs) would warn
            # that it cannot rewrite the plugin's asserts, which it does not need
            "-W", "ignore::pytest.PytestAssertRewriteWarning",
            # Every assert of the suite carries its own message; rewriting them (and every module of
            # each pytest11 distribution: hypothesis, ours) recompiles ~130 modules a run: 1.2 s.
            "--assert=plain"]
    if expectations:
        args += ["--kfc-expectations", expectations]
    if workers:
        args += ["-n", workers]
    if exitfirst:
        args.append("-x")
    if select:
        args += ["-k", select]
    return args + (extra or [])


def run_suite(target: str, profile: str, hypothesis_profile: str, report: Path, *, provided: Any = None,
              hello: dict[str, Any] | None = None, progress: Callable[[Progress], None] | None = None,
              **options: Any) -> int:
    """Run the suite with pytest in this process (a `provided` target object is used as it is, except
    under xdist, whose workers make their own); pytest's output goes to report/pytest.log;
    `progress` is called as tests start and end."""
    import pytest

    if report.exists():
        shutil.rmtree(report)
    report.mkdir(parents=True)
    args = suite_args(target, profile, hypothesis_profile, report, **options)
    plugins: list[Any] = [QuickInterrupt()]
    if progress is not None:
        plugins.append(Progress(progress))
    if provided is not None and not options.get("workers"):
        plugins.append(ProvidedTarget(provided, hello or provided.hello()))
    ctrl_c = Trap()
    try:
        with open(report / "pytest.log", "w") as log, contextlib.redirect_stdout(log), \
                contextlib.redirect_stderr(log), ctrl_c.armed():
            code = pytest.main(args, plugins=plugins)
    except BaseException:
        # An interrupt raised where pytest cannot describe it (code without line numbers: its
        # reporter fails with a TypeError) is still the interrupt, not a crash to show.
        if ctrl_c.pressed:
            raise KeyboardInterrupt from None
        raise
    if code == pytest.ExitCode.INTERRUPTED or ctrl_c.pressed:
        raise KeyboardInterrupt
    return int(code)


def run_suite_process(target: str, profile: str, hypothesis_profile: str, report: Path, *, exitfirst: bool = False,
                      keyword: str | None = None) -> int:
    """The suite in a child process (`python -m conformance`; mutant runs, in parallel: one process each)."""
    if report.exists():
        shutil.rmtree(report)
    report.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "conformance", target, profile, hypothesis_profile, str(report)]
    if exitfirst:
        cmd.append("-x")
    if keyword:
        cmd += ["-k", keyword]
    return subprocess.call(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=os.getcwd())


def load_summary(report: Path) -> dict[str, Any] | None:
    path = report / "summary.json"
    return json.loads(path.read_text()) if path.exists() else None


WIRE_TIERS = ",".join(TIERS)  # every tier
# A live cluster with node ids that are not 1..3 and a controller that is not 3000.
WIRE_NODES = ("--broker", "0", "--broker", "4", "--controller", "7")


def run_wire_mutant(name: str, out: Path, hypothesis_profile: str, tiers: str = WIRE_TIERS,
                    keyword: str | None = None) -> dict[str, Any]:
    """The mutant served by `kfc serve-broker --mutant NAME --no-control`, checked over kafka:// with
    the tiers given: is it killed, and by which tier; and whether its catalogue entry says a client
    can see its bug at all (`reachable`; else `unreachable`, why not)."""
    from .mutants import MUTANTS

    m = MUTANTS[name]
    row = _wire_run(name, out, hypothesis_profile, tiers, keyword)
    return {**row, "reachable": m.wire_reachable, "unreachable": m.wire_unreachable}


def _wire_run(name: str, out: Path, hypothesis_profile: str, tiers: str, keyword: str | None) -> dict[str, Any]:
    from .mutants import MUTANTS
    from .serving.process import ServeBroker, StartTimeout

    m = MUTANTS[name]
    start = time.perf_counter()
    try:
        with ServeBroker("--no-control", "--mutant", name, *m.wire_serve, *WIRE_NODES, start_timeout=120) as sb:
            spec = f"kafka://{sb.bootstrap}?controller={sb.info['controller']}&tiers={tiers}"
            code = run_suite_process(spec, m.profile, hypothesis_profile, out, exitfirst=True, keyword=keyword)
    except StartTimeout as e:  # slow, not broken: no verdict either way
        return {"killed": False, "tier": None, "first_failing_test": None, "repro": None, "note": str(e),
                "seconds": round(time.perf_counter() - start, 2)}
    except RuntimeError as e:  # the mutant cannot even start a cluster: that is a kill at start-up
        return {"killed": True, "tier": "start", "first_failing_test": None, "repro": None,
                "note": str(e).splitlines()[-1][:200], "seconds": round(time.perf_counter() - start, 2)}
    _, first, kill = _kill(out, code)
    return {**kill, "tier": (first.get("tier") or "examples") if first else None,
            "seconds": round(time.perf_counter() - start, 2)}


def _kill(report: Path, code: int) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]:
    """A child suite's summary, its first failing test, and whether that killed the mutant (a failing
    test, not merely a non-zero exit), with the test and its repro line."""
    summary = load_summary(report) or {"tests": []}
    first = next((t for t in summary["tests"] if t["status"] == "failed"), None)
    return summary, first, {"killed": code != 0 and first is not None,
                            "first_failing_test": first["nodeid"] if first else None,
                            "repro": first.get("repro") if first else None}


# The stateful model alone: no example tables, no regressions (and never the Spark replay).
MODEL_ALONE = "test_stateful_model"


def run_mutants(names: list[str], report_root: Path, jobs: int, hypothesis_profile: str,
                wire: bool = False, model_alone: bool = False) -> list[dict[str, Any]]:
    from .mutants import MUTANTS

    def one(name: str) -> dict[str, Any]:
        m = MUTANTS[name]
        out = report_root / name
        start = time.perf_counter()
        code = run_suite_process(f"mutant:{name}", m.profile, hypothesis_profile, out, exitfirst=True,
                                 keyword=MODEL_ALONE if model_alone else None)
        elapsed = time.perf_counter() - start
        summary, first, kill = _kill(out, code)
        row = {"mutant": name, "rule": m.rule, "profile": m.profile, **kill, "seconds": round(elapsed, 2)}
        if model_alone:
            ran = [t for t in summary["tests"] if t["status"] in ("passed", "failed")]
            if not ran:  # the model never ran (skipped, or the run broke): no verdict, never a survivor's pass
                row["killed"] = None
            row["model"] = (first or {}).get("model") or {}
        if wire:
            row["wire"] = run_wire_mutant(name, report_root / f"{name}-wire", hypothesis_profile)
        return row

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, names))


