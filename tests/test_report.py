"""`kfc report`: allure-results -> one self-contained HTML file, with no analytics script.

Needs Node.js and npm: the first run installs the pinned Allure CLI with `npm ci` (~20 s), later runs take
a few seconds.  Without node/npm this fails on purpose (the report is part of what the project ships).
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.report import ANALYTICS_MARKERS, ReportError, build_report
from kfc.commands.report import report_command

SAMPLE = '''
import allure

KIP = "https://cwiki.apache.org/confluence/display/KAFKA/KIP-584"

@allure.epic("KIP-584")
@allure.feature("finalized-features")
@allure.story("KIP-584.R1")
@allure.link(KIP, name="KIP-584")
def test_kfc_sample_passes():
    allure.attach("kfc-attachment-body", name="trace", attachment_type=allure.attachment_type.TEXT)
    assert 1 + 1 == 2

@allure.epic("KIP-584")
@allure.feature("finalized-features")
@allure.story("KIP-584.R2")
@allure.link(KIP, name="KIP-584")
def test_kfc_sample_fails():
    assert 1 + 1 == 3, "kfc-deliberate-failure"
'''


@pytest.fixture(scope="module")
def allure_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("allure-sample")
    (work / "test_sample.py").write_text(SAMPLE)
    results = work / "allure-results"
    # A separate pytest, without the project's kfc plugin or cache, so only the sample's results land here.
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:kfc", "-p", "no:cacheprovider",
         "--rootdir", str(work), "--alluredir", str(results), "test_sample.py"],
        check=False, cwd=work, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # one test fails by design
    assert len(list(results.glob("*-result.json"))) == 2, proc.stdout + proc.stderr
    return results


def _embedded_files(html: str) -> dict[str, str]:
    # The allure2 single-file report embeds each data file as d("path","<base64>") in an inline script.
    return {m.group(1): base64.b64decode(m.group(2)).decode("utf-8", "replace")
            for m in re.finditer(r'd\("([^"]+)","([A-Za-z0-9+/=]*)"\)', html)}


def test_build_report_single_file(allure_results: Path, tmp_path: Path) -> None:
    index = build_report(allure_results, tmp_path / "html")
    assert index == tmp_path / "html" / "index.html"
    html = index.read_text(encoding="utf-8")
    assert len(html) > 100_000  # the whole app is inlined
    assert "<title>kafka-feature-conformance</title>" in html
    for marker in (*ANALYTICS_MARKERS, "G-FVWC4GKEYS", "G-LNDJ3J7WT0", "dataLayer"):
        assert marker not in html, marker
    # Self-contained: no script or stylesheet is loaded from anywhere else.
    assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', html)

    files = _embedded_files(html)
    cases = [json.loads(v) for k, v in files.items() if k.startswith("data/test-cases/")]
    assert {c["name"]: c["status"] for c in cases} == {
        "test_kfc_sample_passes": "passed", "test_kfc_sample_fails": "failed"}
    failed = next(c for c in cases if c["status"] == "failed")
    assert "kfc-deliberate-failure" in failed["statusMessage"]
    assert any(lk["name"] == "KIP-584" for lk in failed["links"])
    assert "kfc-attachment-body" in [v for k, v in files.items() if k.startswith("data/attachments/")]

    # Behaviors tree: epic (KIP) -> feature (area) -> story (rule) -> tests with their status.
    def tree(node: dict) -> object:
        kids = node.get("children")
        return node["status"] if kids is None else {c["name"]: tree(c) for c in kids}

    assert tree(json.loads(files["data/behaviors.json"])) == {"KIP-584": {"finalized-features": {
        "KIP-584.R1": {"test_kfc_sample_passes": "passed"},
        "KIP-584.R2": {"test_kfc_sample_fails": "failed"}}}}
    summary = json.loads(files["widgets/summary.json"])
    assert summary["reportName"] == "kafka-feature-conformance"
    assert summary["statistic"]["passed"] == 1 and summary["statistic"]["failed"] == 1

    # Rebuilding over a previous report replaces it.
    assert build_report(allure_results, tmp_path / "html") == index


def test_report_command(allure_results: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "allure-results").mkdir(parents=True)
    for f in allure_results.iterdir():
        (run_dir / "allure-results" / f.name).write_bytes(f.read_bytes())
    result = CliRunner().invoke(report_command, [str(run_dir)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == str((run_dir / "html" / "index.html").resolve())
    assert (run_dir / "html" / "index.html").stat().st_size > 100_000


def test_missing_or_empty_results_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no allure results at"):
        build_report(tmp_path / "nope", tmp_path / "html")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError, match="holds no test results"):
        build_report(tmp_path / "empty", tmp_path / "html")

    result = CliRunner().invoke(report_command, [str(tmp_path / "run")])
    assert result.exit_code == 1
    assert "error: no allure results at" in result.output and "Traceback" not in result.output


def test_refuses_to_overwrite_other_files(allure_results: Path, tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ReportError, match="is not an Allure report"):
        build_report(allure_results, tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
