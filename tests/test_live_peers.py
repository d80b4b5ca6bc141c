"""Live mode against real processes started as their users start them, each with its expected findings:
librdkafka's mock cluster (3 brokers, over the librdkafka in the confluent-kafka wheel), and a proxy in
front of `kfc serve-broker --no-control` that bends answers as other servers do (unknown tagged fields,
a trailing byte after flexible Metadata, ApiVersions v0 answered in v3, DescribeCluster endpoint type 2
answered with brokers).  Every run is `kfc check --no-spark`, with and without --profile: a table,
findings with rule ids and repro lines, tests per tier, exit 1 -- never a traceback."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _kfc(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kfc", *args], capture_output=True, text=True, timeout=timeout,
                          check=False)


def _check(spec: str, report: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], set[str], dict[str, Any]]:
    run = _kfc("check", "--no-spark", "--target", spec, "--report", str(report), *extra)
    assert "Traceback" not in run.stdout + run.stderr, run.stdout[-3000:] + run.stderr[-3000:]
    summary = json.loads((report / "summary.json").read_text())
    # A failure without a rule (a target error) shows up by its test id.
    failing = {(t.get("divergence") or {}).get("rule") or t["nodeid"] for t in summary["tests"] if t["status"] == "failed"}
    assert "cluster as observed" in run.stdout and "tests executed per tier:" in run.stdout
    return run, failing, summary


# -- librdkafka's mock cluster ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def rdkafka_mock() -> Iterator[str]:
    pytest.importorskip("confluent_kafka", reason="librdkafka's mock cluster needs the confluent-kafka wheel "
                                                  "(test extra)")
    from tests.peers.launch import rdkafka_mock as start

    with start(3) as spec:
        yield spec


@pytest.mark.parametrize("profile", [None, "kafka-4.2"])
def test_rdkafka_mock_cluster_findings(rdkafka_mock: str, tmp_path: Path, profile: str | None) -> None:
    run, failing, summary = _check(rdkafka_mock, tmp_path / "r", *(["--profile", profile] if profile else []))
    assert run.returncode == 1 and "DOES NOT CONFORM" in run.stdout, run.stdout[-3000:]
    cluster = json.loads((tmp_path / "r" / "cluster.json").read_text())
    # Its Metadata answer ends with one byte too many: the body is kept (real ids, its cluster id) and
    # the byte is a finding with its position.
    assert sorted(n["id"] for n in cluster["nodes"]) == [1, 2, 3]
    assert cluster["cluster_id"].startswith("mockCluster")
    assert "trailing byte(s) at byte" in run.stdout and "repro: kfc check" in run.stdout
    assert sum(1 for t in summary["tests"] if t.get("tier") == "observe" and t["status"] in ("passed", "failed")) >= 10
    expected = {"KIP482-WIRE-01", "KIP584-OBS-05", "KIP778-OBS-01"} | ({"KIP584-OBS-06"} if profile is None else set())
    assert failing == expected, failing
    # No UpdateFeatures, ApiVersions v2 only: the probe tier says why it sends nothing.
    assert "probe: no node advertises UpdateFeatures (57)" in run.stdout
    assert "mutate" not in run.stdout.split("kfc check target")[0]  # a tier nobody asked for is not mentioned


# -- a proxy that bends serve-broker's answers --------------------------------------------------------

def _proxied(faults: set[str]) -> contextlib.AbstractContextManager[str]:
    from tests.peers.launch import MIXED, proxied

    return proxied(MIXED, faults)


def test_unknown_tagged_fields_are_skipped_and_a_trailing_byte_is_one_finding(tmp_path: Path) -> None:
    with _proxied({"tags", "trailing"}) as spec:
        run, failing, summary = _check(spec, tmp_path / "r")
    assert run.returncode == 1, run.stdout[-3000:]
    assert failing == {"KIP482-WIRE-01"}, failing  # the tags are legal (KIP-482); the byte is not
    probes = [t for t in summary["tests"] if t.get("tier") == "probe" and t["status"] == "passed"]
    assert len(probes) >= 100, len(probes)
    assert "1 trailing byte(s) at byte" in run.stdout


def test_api_versions_v0_in_v3_and_controllers_answered_with_brokers(tmp_path: Path) -> None:
    with _proxied({"v0-as-v3", "roles"}) as spec:
        run, failing, _summary = _check(spec + "&tiers=observe", tmp_path / "r", "--profile", "kafka-4.2")
    assert run.returncode == 1, run.stdout[-3000:]
    assert failing == {"KIP511-API-01", "KIP919-OBS-01"}, failing
    assert "ApiVersions v0 answered with a flexible (v3+) body" in run.stdout
    assert run.stdout.count("malformed ApiVersions v0 response: malformed") == 0
    cluster = json.loads((tmp_path / "r" / "cluster.json").read_text())
    assert {n["id"]: n["role"] for n in cluster["nodes"]} == {0: "broker", 5: "broker"}


def test_a_cluster_without_metadata_version_is_still_probed(tmp_path: Path) -> None:
    """The proxy leaves metadata.version out of every finalized list: the probe tier still runs on the
    features the cluster advertises (the reference starts from a state without metadata.version)."""
    with _proxied({"no-mv"}) as spec:
        run, failing, summary = _check(spec, tmp_path / "r", "--profile", "kafka-4.2")
    assert run.returncode == 1, run.stdout[-3000:]
    stateful = "test_stateful.py::test_stateful_model"  # its random walk may hit the hidden level too
    assert "KIP778-OBS-01" in failing and all(r.startswith("KIP") for r in failing - {stateful}), failing
    probes = [t for t in summary["tests"] if t.get("tier") == "probe" and t["status"] in ("passed", "failed")]
    assert len(probes) >= 100, len(probes)
    # What differs is what hiding metadata.version implies (the cluster checks dependencies on the level it
    # hides), each under its rule; nothing is blocked.
    assert failing <= {"KIP778-OBS-01", "KIP1022-UPD-01", stateful}, failing
    assert "blocked" not in run.stdout
