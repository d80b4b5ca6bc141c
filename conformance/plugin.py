"""pytest plugin of the conformance suite (registered under `pytest11` as `kfc`).

Kept light: options and hooks only; the target, the reference and Hypothesis are imported when a
suite test first asks for them.  Options are namespaced `--kfc-*`.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

KIP_LINKS = {
    "KIP-584": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-584%3A+Versioning+scheme+for+features",
    "KIP-778": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-778%3A+KRaft+to+KRaft+Upgrades",
    "KIP-919": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-919%3A+Allow+AdminClient+to+Talk+Directly+with+the+KRaft+Controller+Quorum+and+add+Controller+Registration",
    "KIP-1022": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-1022+Formatting+and+Updating+Features",
    "KIP-1155": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-1155%3A+Metadata+Version+Downgrades",
    "KIP-915": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-915%3A+Txn+and+Group+Coordinator+Downgrade+Foundation",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("kfc", "kafka-feature-conformance")
    g.addoption("--kfc-target", default=os.environ.get("KFC_TARGET", "reference"),
                help="target spec: reference[:PROFILE], mutant:NAME, subprocess:CMD, kafka://HOST:PORT[?…], "
                     "or a kfc.targets plugin")
    g.addoption("--kfc-profile", default=os.environ.get("KFC_PROFILE"),
                help="behaviour profile to check against (default: the target's own, else kafka-4.2)")
    g.addoption("--kfc-expectations", default=None, help="TOML file of expected failures (by rule or test id)")
    g.addoption("--kfc-hypothesis-profile", default=os.environ.get("KFC_HYPOTHESIS_PROFILE", "ci"),
                choices=["ci", "dev", "deep"], help="Hypothesis settings profile for the stateful tests")
    g.addoption("--kfc-report", default=os.environ.get("KFC_REPORT", "reports/latest"),
                help="directory for summary.json, coverage and counterexample traces")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kfc_rule(*ids): the conformance test checks these rule ids")
    config.addinivalue_line("markers", "kfc_needs(*ops): the test needs these ops from the target")
    config._kfc_results = []  # type: ignore[attr-defined]
    config._kfc_started = time.time()  # type: ignore[attr-defined]


def report_dir(config: pytest.Config) -> Path:
    return Path(config.getoption("--kfc-report"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    path = config.getoption("--kfc-expectations")
    if not path:
        return
    from .expectations import load_expectations

    exp = load_expectations(path)
    for item in items:
        rules = [r for m in item.iter_markers("kfc_rule") for r in m.args]
        reason = exp.reason_for(item.nodeid, rules)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"expected failure: {reason}"))


# -- fixtures --------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def kfc_target(request: pytest.FixtureRequest) -> Any:
    from .targets import TargetError, make_target

    spec = request.config.getoption("--kfc-target")
    try:
        target = make_target(spec)
    except (ValueError, TargetError) as e:
        raise pytest.UsageError(f"target {spec}: {e}") from None
    yield target
    target.close()


@pytest.fixture(scope="session")
def kfc_hello(kfc_target: Any) -> dict[str, Any]:
    return kfc_target.hello()


@pytest.fixture(scope="session")
def kfc_profile(request: pytest.FixtureRequest, kfc_hello: dict[str, Any]) -> str:
    from reference_impl import DEFAULT_PROFILE, InputError, load_profile

    name = request.config.getoption("--kfc-profile") or kfc_hello.get("profile") or DEFAULT_PROFILE
    try:
        return load_profile(name).name
    except InputError as e:
        raise pytest.UsageError(str(e)) from None


@pytest.fixture(scope="session")
def kfc_capabilities(kfc_hello: dict[str, Any]) -> frozenset[str]:
    return frozenset(kfc_hello.get("capabilities") or ())


@pytest.fixture(autouse=True)
def _kfc_allure_labels(request: pytest.FixtureRequest) -> None:
    rules = [r for m in request.node.iter_markers("kfc_rule") for r in m.args]
    if not rules:
        return
    try:
        import allure
    except ImportError:
        return
    from reference_impl.rules import RULES

    for rid in rules:
        rule = RULES.get(rid)
        if rule is None:
            continue
        allure.dynamic.epic(rule.kip)
        allure.dynamic.feature(rule.area)
        allure.dynamic.story(rid)
    for kip in sorted({RULES[r].kip for r in rules if r in RULES}):
        allure.dynamic.link(KIP_LINKS.get(kip, ""), name=kip)


def repro_line(config: pytest.Config, trace_path: Path) -> str:
    spec = config.getoption("--kfc-target")
    return f"kfc replay-trace {shlex.quote(str(trace_path))} --target {shlex.quote(spec)}"


# -- results summary ---------------------------------------------------------------------------------

def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call" and not (report.when == "setup" and (report.skipped or report.failed)):
        return
    props = dict(report.user_properties)
    status: str = report.outcome
    if hasattr(report, "wasxfail"):
        status = "xfailed" if report.skipped else "xpassed"
    if report.failed and "[XPASS(strict)]" in str(report.longrepr):
        status = "unexpectedly-passed"
    entry = {"nodeid": report.nodeid, "status": status, "duration": round(report.duration, 4),
             "rules": props.get("kfc_rules", []), "repro": props.get("kfc_repro"),
             "summary": _first_line(report) if report.failed or report.skipped else None}
    _results().append(entry)


_RESULTS: list[dict[str, Any]] = []


def _results() -> list[dict[str, Any]]:
    return _RESULTS


def _first_line(report: pytest.TestReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])
    text = getattr(report, "longreprtext", "") or str(report.longrepr)
    for line in text.splitlines():
        if line.startswith("E "):
            return line[2:].strip()[:300]
    return text.strip().splitlines()[-1][:300] if text.strip() else ""


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput"):
        return  # xdist workers: the controller writes the summary
    if not _RESULTS:
        return
    out = report_dir(session.config)
    out.mkdir(parents=True, exist_ok=True)
    coverage = {}
    cov_dir = out / "coverage"
    if cov_dir.is_dir():
        from .session import Coverage

        merged = Coverage()
        for f in sorted(cov_dir.glob("*.json")):
            data = json.loads(f.read_text())
            merged.ops.update(data["ops"])
            merged.errors.update(data["errors"])
            merged.rules.update(data["rules"])
        coverage = merged.to_json()
    counts: dict[str, int] = {}
    for r in _RESULTS:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = {
        "target": session.config.getoption("--kfc-target"),
        "profile": session.config.getoption("--kfc-profile"),
        "hypothesis_profile": session.config.getoption("--kfc-hypothesis-profile"),
        "exit_status": int(exitstatus),
        "counts": dict(sorted(counts.items())),
        "tests": sorted(_RESULTS, key=lambda r: r["nodeid"]),
        "coverage": coverage,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
