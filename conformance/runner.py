"""Running the suite: the profile under check, a pytest run of `conformance.suite`, its summary, and
the mutant run (one suite per mutant)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HYPOTHESIS_PROFILES = ("ci", "dev", "deep")


class RunError(Exception):
    """The run could not start (bad target, bad profile): one line for the user."""


def resolve_profile(target_spec: str, profile: str | None) -> tuple[str, dict[str, Any]]:
    """The profile under check (the target's own unless given) and the target's hello."""
    from reference_impl import DEFAULT_PROFILE, InputError, load_profile

    from .targets import TargetError, make_target

    try:
        target = make_target(target_spec)
    except (ValueError, TargetError) as e:
        raise RunError(str(e)) from None
    try:
        hello = target.hello()
    except TargetError as e:
        raise RunError(f"target {target_spec}: {e}") from None
    finally:
        target.close()
    try:
        return load_profile(profile or hello.get("profile") or DEFAULT_PROFILE).name, hello
    except InputError as e:
        raise RunError(str(e)) from None


def run_suite(target: str, profile: str, hypothesis_profile: str, report: Path, *, expectations: str | None = None,
              workers: str | None = None, exitfirst: bool = False, extra: list[str] | None = None) -> int:
    """Run the suite in a child pytest (clean plugin state per run); output goes to report/pytest.log."""
    if report.exists():
        shutil.rmtree(report)
    report.mkdir(parents=True)
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "conformance.suite", "-q", "-p", "no:cacheprovider",
           "--kfc-target", target, "--kfc-profile", profile, "--kfc-hypothesis-profile", hypothesis_profile,
           "--kfc-report", str(report), "--alluredir", str(report / "allure-results"),
           "-o", "console_output_style=classic", "-rfE"]
    if expectations:
        cmd += ["--kfc-expectations", expectations]
    if workers:
        cmd += ["-n", workers]
    if exitfirst:
        cmd.append("-x")
    cmd += extra or []
    with open(report / "pytest.log", "w") as log:
        return subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=os.getcwd())


def load_summary(report: Path) -> dict[str, Any] | None:
    path = report / "summary.json"
    return json.loads(path.read_text()) if path.exists() else None


def run_mutants(names: list[str], report_root: Path, jobs: int, hypothesis_profile: str) -> list[dict[str, Any]]:
    from .mutants import MUTANTS

    def one(name: str) -> dict[str, Any]:
        m = MUTANTS[name]
        out = report_root / name
        start = time.perf_counter()
        code = run_suite(f"mutant:{name}", m.profile, hypothesis_profile, out, exitfirst=True)
        elapsed = time.perf_counter() - start
        summary = load_summary(out) or {"tests": []}
        first = next((t for t in summary["tests"] if t["status"] == "failed"), None)
        return {"mutant": name, "rule": m.rule, "profile": m.profile, "killed": code != 0 and first is not None,
                "first_failing_test": first["nodeid"] if first else None,
                "repro": first.get("repro") if first else None, "seconds": round(elapsed, 2)}

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, names))


