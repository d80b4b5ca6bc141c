"""pytest plugin of the conformance suite (registered under `pytest11` as `kfc`).

Kept light: options and hooks only; the target, the reference and Hypothesis are imported when a
suite test first asks for them.  Options are namespaced `--kfc-*`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .verdicts import NOTHING_CHECKED, repro_command, suite_verdict

if TYPE_CHECKING:
    from .live.context import LiveContext
    from .live.protocol import LiveTarget

KIP_LINKS = {
    "KIP-584": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-584%3A+Versioning+scheme+for+features",
    "KIP-778": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-778%3A+KRaft+to+KRaft+Upgrades",
    "KIP-919": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-919%3A+Allow+AdminClient+to+Talk+Directly+with+the+KRaft+Controller+Quorum+and+add+Controller+Registration",
    "KIP-1022": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-1022+Formatting+and+Updating+Features",
    "KIP-1242": "https://cwiki.apache.org/confluence/x/KIP-1242",
    "KIP-1155": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-1155%3A+Metadata+Version+Downgrades",
    "KIP-915": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-915%3A+Txn+and+Group+Coordinator+Downgrade+Foundation",
    "KIP-482": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-482%3A+The+Kafka+Protocol+should+Support+Optional+Tagged+Fields",
    "KIP-511": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-511%3A+Collect+and+Expose+Client%27s+Name+and+Version+in+the+Brokers",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("kfc", "kafka-feature-conformance")
    g.addoption("--kfc-target", default=os.environ.get("KFC_TARGET", "reference"),
                help="target spec: reference[:PROFILE], mutant:NAME, subprocess:CMD, kafka://HOST:PORT[?…], "
                     "or a kfc.targets plugin")
    g.addoption("--kfc-profile", default=os.environ.get("KFC_PROFILE"),
                help="behaviour profile to check against (default: the target's own, else kafka-4.2)")
    g.addoption("--kfc-expectations", default=None, help="TOML file of expected failures (by rule or test id)")
    g.addoption("--kfc-report", default=os.environ.get("KFC_REPORT", "reports/latest"),
                help="directory for summary.json, coverage and counterexample traces")


RESULTS = pytest.StashKey[list[dict[str, Any]]]()
PROVIDED = pytest.StashKey[tuple[Any, dict[str, Any]]]()  # (target, hello) of this run
OWNED = pytest.StashKey[Any]()  # a target the plugin made, closed at the end
EXPECTATIONS = pytest.StashKey[Any]()  # conformance.expectations.Expectations of --kfc-expectations
LIVE = pytest.StashKey[Any]()  # conformance.live.context.LiveContext of a live target, or None
REQUESTS_AT = pytest.StashKey[int]()  # an item's: requests the live target had sent when its setup began


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kfc_rule(*ids): the conformance test checks these rule ids")
    config.addinivalue_line("markers", "kfc_tier(name): the live tier the test belongs to")
    config.addinivalue_line("markers", "kfc_not_here: a placeholder test for another kind of target (deselected)")
    config.stash[RESULTS] = []
    if str(config.getoption("--hypothesis-profile", None) or "").startswith("kfc-"):
        # Before Hypothesis's own pytest_configure loads the profile by name.
        from . import hypothesis_profiles  # noqa: F401 - registers the kfc-* profiles
    path = config.getoption("--kfc-expectations")
    if path:  # a bad file is one line (pytest's "ERROR: ..."), before anything runs
        from .expectations import ExpectationsError, load_expectations

        try:
            config.stash[EXPECTATIONS] = load_expectations(path)
        except ExpectationsError as e:
            raise pytest.UsageError(str(e)) from None
    if any("conformance.suite" in a or "conformance/suite" in a for a in config.args):
        config.pluginmanager.register(_Results(config), "kfc-results")  # only runs of the suite report


def report_dir(config: pytest.Config) -> Path:
    return Path(config.getoption("--kfc-report"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Tests that only exist for another kind of target (live tiers on a resettable one) are not part of the run.
    foreign = [i for i in items if i.get_closest_marker("kfc_not_here")]
    if foreign:
        config.hook.pytest_deselected(items=foreign)
        items[:] = [i for i in items if not i.get_closest_marker("kfc_not_here")]
    exp = config.stash.get(EXPECTATIONS, None)
    if exp is None:
        return
    for item in items:
        rules = [r for m in item.iter_markers("kfc_rule") for r in m.args]
        reason = exp.reason_for(item.nodeid, rules)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"expected failure: {reason}"))


# -- fixtures --------------------------------------------------------------------------------------

def suite_target(config: pytest.Config) -> tuple[Any, dict[str, Any]]:
    """The run's one target and its hello: the caller's (kfc check), else made once from --kfc-target."""
    if PROVIDED not in config.stash:
        from .targets import TargetError, make_target

        spec = config.getoption("--kfc-target")
        try:
            target = make_target(spec)
            config.stash[PROVIDED] = (target, target.hello())
        except (ValueError, TargetError) as e:
            raise pytest.UsageError(f"target {spec}: {e}") from None
        config.stash[OWNED] = target
    return config.stash[PROVIDED]


def live_context(config: pytest.Config) -> LiveContext | None:
    """The run's LiveContext when the target is a running cluster (its hello names tiers), else None."""
    if LIVE not in config.stash:
        target, hello = suite_target(config)
        ctx = None
        live = target.live()
        if live is not None:  # a running cluster
            from reference_impl import DEFAULT_PROFILE

            from .live.context import build

            ctx = build(live, config.getoption("--kfc-profile") or hello.get("profile") or DEFAULT_PROFILE)
            _write_observation(config, ctx)
        config.stash[LIVE] = ctx
    return config.stash[LIVE]


def _write_observation(config: pytest.Config, ctx: Any) -> None:
    """The cluster as observed: report/cluster.txt (the table) and report/cluster.json."""
    from .live.table import observation_json, observation_lines

    out = report_dir(config)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cluster.txt").write_text("\n".join(observation_lines(ctx)) + "\n")
    (out / "cluster.json").write_text(json.dumps(observation_json(ctx), indent=1, default=str) + "\n")


def pytest_unconfigure(config: pytest.Config) -> None:
    owned = config.stash.get(OWNED, None)
    if owned is not None:
        owned.close()


@pytest.fixture(scope="session")
def kfc_target(request: pytest.FixtureRequest) -> Any:
    return suite_target(request.config)[0]


@pytest.fixture(scope="session")
def kfc_hello(request: pytest.FixtureRequest) -> dict[str, Any]:
    return suite_target(request.config)[1]


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


def _rule_labels(item: pytest.Item) -> None:
    """The rules a test checks, on its result and as Allure labels: in the set-up hook, not an autouse
    fixture (a fixture per test costs a report container file each)."""
    rules = [r for m in item.iter_markers("kfc_rule") for r in m.args]
    if not rules:
        return
    # Recorded before the test body: a test skipped there still says which rules it would check.
    item.user_properties.append(("kfc_rules", rules))
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


def _live_target(config: pytest.Config) -> LiveTarget | None:
    """The running cluster of this run, once the target is made (never made here), else None."""
    provided = config.stash.get(PROVIDED, None)
    return provided[0].live() if provided is not None else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _rule_labels(item)
    live = _live_target(item.config)
    if live is not None:
        item.stash[REQUESTS_AT] = live.requests_sent


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A live test's report carries the requests it sent to the cluster (setup included)."""
    outcome = yield
    start = item.stash.get(REQUESTS_AT, None)
    live = _live_target(item.config)
    if start is None or live is None:
        return
    report = outcome.get_result()
    if report.when == "call" or (report.when == "setup" and (report.skipped or report.failed)):
        report.user_properties.append(("kfc_requests", live.requests_sent - start))


def repro_line(config: pytest.Config, trace_path: Path) -> str:
    return repro_command(trace_path, config.getoption("--kfc-target"))


# -- results summary ---------------------------------------------------------------------------------

class _Results:
    """Collects one entry per test into config.stash[RESULTS]; writes summary.json and the verdict."""

    def __init__(self, config: pytest.Config):
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call" and not (report.when == "setup" and (report.skipped or report.failed)):
            return
        props = dict(report.user_properties)
        status: str = report.outcome
        if hasattr(report, "wasxfail"):
            status = "xfailed" if report.skipped else "xpassed"
        if report.failed and "[XPASS(strict)]" in str(report.longrepr):
            status = "unexpectedly-passed"
        self.config.stash[RESULTS].append({
            "nodeid": report.nodeid, "status": status, "duration": round(report.duration, 4),
            "rules": props.get("kfc_rules", []), "divergence": props.get("kfc_divergence"),
            "repro": props.get("kfc_repro"), "tier": props.get("kfc_tier"), "restore": props.get("kfc_restore"),
            "model": props.get("kfc_model"), "requests": props.get("kfc_requests"),
            "summary": _first_line(report) if report.failed or report.skipped else None})

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(session.config, "workerinput"):
            return  # xdist workers: the controller writes the summary
        _write_allure_environment(self.config)
        results = self.config.stash[RESULTS]
        if not results:
            return
        counts: dict[str, int] = {}
        for r in results:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        verdict = suite_verdict(counts, int(session.exitstatus))
        if verdict == NOTHING_CHECKED and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED  # a run that checked nothing is no pass
        out = report_dir(self.config)
        out.mkdir(parents=True, exist_ok=True)
        summary = {
            "target": self.config.getoption("--kfc-target"),
            "profile": self.config.getoption("--kfc-profile"),
            "hypothesis_profile": self.config.getoption("--hypothesis-profile", None),
            "exit_status": int(session.exitstatus),
            "verdict": verdict,
            "counts": dict(sorted(counts.items())),
            "tests": sorted(results, key=lambda r: r["nodeid"]),
            "coverage": _merged_coverage(out / "coverage"),
        }
        requests = requests_by_tier(results)
        if requests:
            summary["requests_by_tier"] = requests
        restore = next((dict(r["restore"]) for r in results if r.get("restore")), None)
        if restore:
            summary["restore"] = restore
        (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")


def requests_by_tier(results: list[dict[str, Any]]) -> dict[str, int]:
    """Requests sent to a live cluster by the tests of each tier (a test without a tier: examples)."""
    out: dict[str, int] = {}
    for r in results:
        if r.get("requests") is not None:
            tier = r.get("tier") or "examples/regressions"
            out[tier] = out.get(tier, 0) + r["requests"]
    return out


def allure_environment(config: pytest.Config) -> dict[str, str]:
    """What the Allure report's Environment widget shows for this suite run."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    from reference_impl import DEFAULT_PROFILE

    def dist(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    hello = config.stash[PROVIDED][1] if PROVIDED in config.stash else {}
    target = config.getoption("--kfc-target")
    return {
        "target": str(target),
        "target.name": str(hello.get("name") or target),
        "profile": str(config.getoption("--kfc-profile") or hello.get("profile") or DEFAULT_PROFILE),
        "hypothesis.profile": str(config.getoption("--hypothesis-profile", None) or "default"),
        "kafka-feature-conformance": dist("kafka-feature-conformance"),
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "hypothesis": dist("hypothesis"),
        # a live run: what each tier sent to the cluster (a test count hides thousands of requests)
        **{f"requests.{tier}": str(n) for tier, n in requests_by_tier(config.stash.get(RESULTS, [])).items()},
    }


def _properties_escape(text: str, key: bool = False) -> str:
    """java.util.Properties escaping (what Allure reads): backslash, line breaks, and in keys = : space."""
    out = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    if key:
        for ch in "=: #!":
            out = out.replace(ch, "\\" + ch)
    elif out.startswith(" "):
        out = "\\" + out
    # Non-ASCII as \\uXXXX UTF-16 code units (the file is ISO 8859-1 by definition).
    return "".join(c if ord(c) < 0x7F else "".join(f"\\u{u:04x}" for u in _utf16_units(c)) for c in out)


def _utf16_units(c: str) -> list[int]:
    data = c.encode("utf-16-be")
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]


def _write_allure_environment(config: pytest.Config) -> None:
    alluredir = config.getoption("--alluredir", None)
    if not alluredir:
        return
    out = Path(alluredir)
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"{_properties_escape(k, key=True)}={_properties_escape(v)}"
             for k, v in allure_environment(config).items()]
    (out / "environment.properties").write_text("\n".join(lines) + "\n", encoding="ascii")


def _merged_coverage(cov_dir: Path) -> dict[str, Any]:
    if not cov_dir.is_dir():
        return {}
    from .session import Coverage

    merged = Coverage()
    for f in sorted(cov_dir.glob("*.json")):
        data = json.loads(f.read_text())
        merged.ops.update(data["ops"])
        merged.errors.update(data["errors"])
        merged.rules.update(data["rules"])
        merged.states.update(data.get("states", {}))
    return merged.to_json()


def _first_line(report: pytest.TestReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])
    text = getattr(report, "longreprtext", "") or str(report.longrepr)
    for line in text.splitlines():
        if line.startswith("E "):
            return line[2:].strip()[:300]
    return text.strip().splitlines()[-1][:300] if text.strip() else ""
