"""A Kafka release's jars in the per-user cache, resolved through Maven (never by hand).

`fetch("4.1.1")` runs `mvn dependency:copy-dependencies` on the project's pom (release.pom.xml beside
this file) into `CACHE/kafka/4.1.1/libs` once; later calls find it there. `from_home(DIR)` uses an
existing installation with the binary tarball's layout (`DIR/libs/*.jar`) instead."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

POM = Path(__file__).resolve().parent / "release.pom.xml"
_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
_DONE = ".kfc-complete"
GET_MAVEN = "install Maven 3.8+ and a JDK 17 (e.g. `apt-get install maven openjdk-17-jdk-headless`)"


class FetchError(Exception):
    """A release could not be had; the message is one line for the user."""


@dataclass(frozen=True)
class Release:
    """One Kafka release on this machine: its version and the jars to put on a classpath."""

    version: str
    home: Path  # holds libs/ (the tarball's layout)

    @property
    def libs(self) -> Path:
        return self.home / "libs"

    @property
    def classpath(self) -> tuple[Path, ...]:
        return tuple(sorted(self.libs.glob("*.jar")))

    @property
    def line(self) -> int:
        """The major version: 3.x logs through reload4j, 4.x through log4j2."""
        return int(self.version.split(".")[0])


def cache_root() -> Path:
    from conformance.report import cache_dir

    return cache_dir() / "kafka"


def _check_version(version: str) -> None:
    if not _VERSION.match(version):
        raise FetchError(f"{version!r} is not a Kafka release version (like 4.1.1)")
    major, minor, _ = (int(x) for x in version.split("."))
    if (major, minor) < (3, 7):
        raise FetchError(f"Kafka {version}: only KRaft releases 3.7.0 and later are supported")


def cached(version: str) -> Release | None:
    home = cache_root() / version
    return Release(version, home) if (home / _DONE).is_file() else None


def list_cached() -> list[Release]:
    root = cache_root()
    if not root.is_dir():
        return []
    found = [Release(p.name, p) for p in root.iterdir() if (p / _DONE).is_file()]
    return sorted(found, key=lambda r: tuple(int(x) for x in r.version.split(".")))


def from_home(path: str | Path) -> Release:
    """An existing Kafka installation (the binary tarball: DIR/libs/kafka_2.13-V.jar)."""
    home = Path(path).expanduser().resolve()
    jars = sorted((home / "libs").glob("kafka_2.1*-*.jar")) if (home / "libs").is_dir() else []
    jars = [j for j in jars if not re.search(r"-(test|sources|javadoc|scaladoc|test-sources)\.jar$", j.name)]
    if not jars:
        raise FetchError(f"--kafka-home {path}: no libs/kafka_2.13-VERSION.jar there (expected the layout of "
                         "Kafka's binary tarball)")
    m = re.match(r"kafka_2\.1\d-(\d+\.\d+\.\d+)\.jar$", jars[0].name)
    if not m:
        raise FetchError(f"--kafka-home {path}: cannot read the release from {jars[0].name}")
    return Release(m.group(1), home)


def _mvn() -> str:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise FetchError(f"Maven (mvn) not found: {GET_MAVEN}")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise FetchError(f"Java not found: {GET_MAVEN}")
    return mvn


def fetch(version: str, progress: Callable[[str], None] | None = None) -> Release:
    """The release from the cache, resolved from Maven Central on first use."""
    _check_version(version)
    done = cached(version)
    if done is not None:
        return done
    mvn = _mvn()
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    home = cache_root() / version
    tmp = home.with_name(f".{version}.part-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    say(f"fetching Apache Kafka {version} from Maven Central (through Maven) ...")
    cmd = [mvn, "-B", "-q", "-f", str(POM), f"-Dkafka.version={version}",
           f"-Dkafka.line={version.split('.')[0]}", "dependency:copy-dependencies",
           f"-DoutputDirectory={tmp / 'libs'}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
                              env={**os.environ, "MAVEN_OPTS": os.environ.get("MAVEN_OPTS", "") + " -Dstyle.color=never"})
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise FetchError(f"Kafka {version}: Maven could not resolve the release: {_maven_reason(proc.stdout)}")
    (tmp / _DONE).write_text(version + "\n")
    # Another process may have finished the same release meanwhile: keep the first one complete.
    if cached(version) is None:
        shutil.rmtree(home, ignore_errors=True)  # an incomplete leftover
        try:
            tmp.rename(home)
        except OSError:
            if cached(version) is None:
                shutil.rmtree(tmp, ignore_errors=True)
                raise FetchError(f"Kafka {version}: cannot move the jars into {home}") from None
    shutil.rmtree(tmp, ignore_errors=True)
    rel = Release(version, home)
    say(f"Apache Kafka {version}: {len(rel.classpath)} jars in {rel.libs}")
    return rel


_OFFLINE = re.compile(r"Unknown host|UnknownHost|Temporary failure in name resolution|Network is unreachable|"
                      r"Connection refused|Connect(ion)? timed out|No route to host|transfer failed|"
                      r"Could not transfer|No plugin found for prefix", re.IGNORECASE)


def _maven_reason(out: str) -> str:
    """Maven's first [ERROR] line, shortened: what the user needs to know (not found, no network)."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln) for ln in out.splitlines()]
    errors = [ln.split("[ERROR]", 1)[1].strip() for ln in lines if "[ERROR]" in ln]
    errors = [e for e in errors if e]
    text = errors[0] if errors else (lines[-1] if lines else "mvn failed with no message")
    # Offline first: Maven then also says "could not be resolved" (or, with an empty local
    # repository, that it has no dependency plugin).
    offline = _OFFLINE.search(out)
    if offline:
        return f"cannot reach Maven Central (no network?): {offline.group(0)}"
    if "was not found in" in text or "could not be resolved" in text:
        missing = re.search(r"(?:could not be resolved|Could not find artifact):? ([^ ,]+)", text)
        what = missing.group(1) if missing else "the release's jars"
        return f"{what} is not on Maven Central (is the version right?)"
    return text[:300]
