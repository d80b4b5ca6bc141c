"""`kfc kafka fetch` / `kfc kafka list` and the doctor's rows: a release's jars through Maven.

One real fetch into a fresh cache (Maven's local repository makes it quick once warm); the error
paths are real too: no java or mvn on PATH, a version Maven Central does not have, no network
(a network namespace with nothing in it, and an empty local Maven repository)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KFC = [sys.executable, "-m", "kfc"]


def _env(cache: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "KFC_CACHE_DIR": str(cache), **extra}


def _kfc(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*KFC, *args], check=False, capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=timeout)


def _path_with(tmp: Path, *tools: str) -> str:
    """A PATH holding only the named tools (symlinks), so the others are missing."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for tool in tools:
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


@pytest.fixture(scope="module")
def fetched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str], float]:
    cache = tmp_path_factory.mktemp("cache")
    started = time.monotonic()
    proc = _kfc("kafka", "fetch", "3.9.2", env=_env(cache))
    return cache, proc, time.monotonic() - started


def test_fetch_resolves_the_release_through_maven_into_the_cache(fetched: tuple[Path, subprocess.CompletedProcess[str],
                                                                                float]) -> None:
    cache, proc, took = fetched
    assert proc.returncode == 0, proc.stderr
    home = cache / "kafka" / "3.9.2"
    assert proc.stdout == f"3.9.2\t{home}\n"
    assert proc.stderr.splitlines()[0] == "fetching Apache Kafka 3.9.2 from Maven Central (through Maven) ..."
    jars = {p.name for p in (home / "libs").glob("*.jar")}
    # The broker, the tools, and the logging binding the binary tarball ships for 3.x (reload4j).
    assert {"kafka_2.13-3.9.2.jar", "kafka-tools-3.9.2.jar", "kafka-metadata-3.9.2.jar",
            "kafka-server-common-3.9.2.jar", "slf4j-reload4j-1.7.36.jar"} <= jars
    assert not any(j.startswith(("connect-runtime", "jetty-")) for j in jars)
    with zipfile.ZipFile(home / "libs" / "kafka_2.13-3.9.2.jar") as jar:
        assert "kafka/tools/StorageTool.class" in jar.namelist()
    assert not list((cache / "kafka").glob(".*part*"))  # no half-fetched folder left
    print(f"\nkfc kafka fetch 3.9.2 (warm Maven repository, cold kfc cache): {took:.1f} s")


def test_fetch_again_is_found_in_the_cache_without_maven(fetched: tuple[Path, subprocess.CompletedProcess[str],
                                                                         float], tmp_path: Path) -> None:
    cache, _, _ = fetched
    started = time.monotonic()
    # No mvn, no java on PATH: a cached release needs neither.
    proc = _kfc("kafka", "fetch", "3.9.2", env=_env(cache, PATH=_path_with(tmp_path)))
    took = time.monotonic() - started
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"3.9.2\t{cache / 'kafka' / '3.9.2'}\n", "")
    print(f"\nkfc kafka fetch 3.9.2 (cached): {took:.1f} s")


def test_list_and_doctor_name_the_cached_releases(fetched: tuple[Path, subprocess.CompletedProcess[str],
                                                                  float]) -> None:
    cache, _, _ = fetched
    listed = _kfc("kafka", "list", env=_env(cache))
    assert (listed.returncode, listed.stdout) == (0, f"3.9.2\t{cache / 'kafka' / '3.9.2'}\n")
    as_json = json.loads(_kfc("kafka", "list", "--json", env=_env(cache)).stdout)
    assert [(r["version"], r["jars"] > 40) for r in as_json] == [("3.9.2", True)]
    doctor = json.loads(_kfc("doctor", "--json", env=_env(cache)).stdout)
    rows = {r["name"]: r for r in doctor}
    assert rows["Kafka releases"]["found"] == f"1 in {cache / 'kafka'}: 3.9.2"
    assert rows["maven (Kafka releases)"]["ok"] and rows["maven (Kafka releases)"]["found"].startswith("Apache Maven")


def test_list_of_an_empty_cache(tmp_path: Path) -> None:
    proc = _kfc("kafka", "list", env=_env(tmp_path))
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr == f"no Kafka release in {tmp_path / 'kafka'} (`kfc kafka fetch VERSION` gets one)\n"
    rows = {r["name"]: r for r in json.loads(_kfc("doctor", "--json", env=_env(tmp_path)).stdout)}
    assert rows["Kafka releases"]["found"] == f"none yet in {tmp_path / 'kafka'}"


GET = "install Maven 3.8+ and a JDK 17 (e.g. `apt-get install maven openjdk-17-jdk-headless`)"


@pytest.mark.parametrize(("tools", "message"), [
    ((), f"error: Maven (mvn) not found: {GET}"),
    (("mvn",), f"error: Java not found: {GET}"),
])
def test_fetch_without_maven_or_java_is_one_line(tmp_path: Path, tools: tuple[str, ...], message: str) -> None:
    env = _env(tmp_path / "cache", PATH=_path_with(tmp_path, *tools))
    env.pop("JAVA_HOME", None)
    proc = _kfc("kafka", "fetch", "3.9.2", env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", message + "\n")
    assert not (tmp_path / "cache" / "kafka").exists() or not any((tmp_path / "cache" / "kafka").iterdir())


def test_fetch_of_a_version_maven_central_does_not_have(tmp_path: Path) -> None:
    proc = _kfc("kafka", "fetch", "9.9.9", env=_env(tmp_path))
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "fetching Apache Kafka 9.9.9 from Maven Central (through Maven) ...",
        ("error: Kafka 9.9.9: Maven could not resolve the release: org.apache.kafka:kafka_2.13:jar:9.9.9 is not on "
         "Maven Central (is the version right?)")]
    assert list((tmp_path / "kafka").iterdir()) == []  # the half-made folder is gone


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1) for a network namespace")
def test_fetch_without_network_is_one_line(tmp_path: Path) -> None:
    if subprocess.run(["unshare", "-rn", "true"], check=False, capture_output=True).returncode != 0:
        pytest.skip("unprivileged network namespaces are not allowed here")
    env = _env(tmp_path / "cache", MAVEN_OPTS=f"-Dmaven.repo.local={tmp_path / 'm2'}")
    proc = subprocess.run(["unshare", "-rn", *KFC, "kafka", "fetch", "3.9.2"], check=False, capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 1 and proc.stdout == ""
    (_progress, error) = proc.stderr.splitlines()
    assert error.startswith("error: Kafka 3.9.2: Maven could not resolve the release: cannot reach Maven Central "
                            "(no network?)"), error


@pytest.mark.parametrize(("args", "message"), [
    (["4.1"], "error: '4.1' is not a Kafka release version (like 4.1.1)"),
    (["3.6.2"], "error: Kafka 3.6.2: only KRaft releases 3.7.0 and later are supported"),
    ([], "error: give VERSION (like 4.1.1) or --kafka-home DIR"),
])
def test_fetch_bad_versions(tmp_path: Path, args: list[str], message: str) -> None:
    proc = _kfc("kafka", "fetch", *args, env=_env(tmp_path))
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", message + "\n")


def test_kafka_home_uses_an_installation_in_the_tarball_layout(
        fetched: tuple[Path, subprocess.CompletedProcess[str], float], tmp_path: Path) -> None:
    cache, _, _ = fetched
    home = tmp_path / "kafka_2.13-3.9.2"
    shutil.copytree(cache / "kafka" / "3.9.2" / "libs", home / "libs")
    proc = _kfc("kafka", "fetch", "--kafka-home", str(home), env=_env(tmp_path / "empty"))
    assert (proc.returncode, proc.stdout) == (0, f"3.9.2\t{home}\n"), proc.stderr
    wrong = _kfc("kafka", "fetch", "4.1.1", "--kafka-home", str(home), env=_env(tmp_path / "empty"))
    assert (wrong.returncode, wrong.stderr) == (1, f"error: VERSION 4.1.1 but --kafka-home {home} holds Kafka 3.9.2\n")
    empty = _kfc("kafka", "fetch", "--kafka-home", str(tmp_path), env=_env(tmp_path / "empty"))
    assert empty.returncode == 1 and empty.stderr.startswith(f"error: --kafka-home {tmp_path}: no libs/kafka_2.13-")
