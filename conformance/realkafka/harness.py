"""Kafka's own classes as a target: the Java harness in `harness/` (a Maven module for IDEs; built
here with javac against the release's jars), compiled on first use into the per-user cache
(`CACHE/harness/<version>/<hash of the sources>/classes`) and started as a JSON-lines target.

The sources are the common core (`harness/src/main/java`), one release line's shim
(`harness/shims/<line>/`: the few calls whose signatures move between releases) and the layers the
line falls in (`harness/layers/<from>-<to>/`, either end open: code several neighbouring lines share,
e.g. `4.0-` for what only 4.x can compile)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .releases import FetchError, Release, _check_version, fetch

HERE = Path(__file__).resolve().parent / "harness"
CORE = HERE / "src" / "main" / "java"
SHIMS = HERE / "shims"
LAYERS = HERE / "layers"
MAIN_CLASS = "org.apache.kafka.controller.KfcHarness"
_DONE = ".kfc-complete"
JAR = "harness.jar"  # the classes again as a jar: a class-data archive takes jars only
ARCHIVE = "harness.jsa"  # the class-data (CDS) archive of a training run, made at build time
# What the training run sends: every op the harness runs, so that their classes are in the archive.
_TRAINING: list[dict[str, Any]] = [
    {"type": "hello", "protocol_version": 1},
    {"type": "reset", "profile": None},
    {"type": "apply", "command": {"op": "version_mapping", "release_version": "3.9"}},
    {"type": "apply", "command": {"op": "feature_dependencies", "features": ["transaction.version=2"]}},
    {"type": "apply", "command": {"op": "format", "release_version": "3.9", "standalone": True}},
    {"type": "apply", "command": {"op": "register", "node": 1}},
    {"type": "apply", "command": {"op": "register", "role": "controller", "node": 3000}},
    {"type": "apply", "command": {"op": "update_features",
                                  "updates": [{"feature": "metadata.version", "level": 99}]}},
    {"type": "apply", "command": {"op": "api_versions", "node": 1}},
    {"type": "apply", "command": {"op": "describe"}},
    {"type": "apply", "command": {"op": "state"}},
    {"type": "apply", "command": {"op": "restore_state", "metadata_version": 21}},
]
PRUNE_AFTER = 86400.0  # seconds


def _unused_for(build_dir: Path, seconds: float) -> bool:
    try:
        return time.time() - (build_dir / _DONE).stat().st_mtime > seconds
    except OSError:
        return True  # an incomplete or broken build

class HarnessError(FetchError):
    """The harness could not be built; the message is one line for the user."""


@dataclass(frozen=True)
class Harness:
    """A built harness for one release: the java command line that starts it."""

    release: Release
    classes: Path
    build_seconds: float  # 0.0 when it came from the cache

    def argv(self, profile: str, name: str, tmpdir: Path | None = None, *, archive: bool = True) -> list[str]:
        java = shutil.which("java") or "java"
        jar, jsa = self.classes.parent / JAR, self.classes.parent / ARCHIVE
        shared = archive and jar.is_file() and jsa.is_file()
        # The class-data archive names the jars it was dumped with: the same class path, the jar first.
        cp = os.pathsep.join([str(jar if shared else self.classes), *(str(j) for j in self.release.classpath)])
        # A small, quickly started JVM: the harness is single-threaded and short-lived.  The JVM's own
        # log (e.g. a class-data archive it cannot use) goes to stderr: stdout carries protocol lines only.
        flags = ["-Xss4m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                 "-Xlog:disable", "-Xlog:all=warning:stderr"]
        # 3.7/3.8's kafka-storage parser calls System.exit on a refusal: their shim traps it with a
        # SecurityManager, which JDK 18-23 install only when allowed.
        if _line_key(shim_line(self.release.version)) < (3, 9):
            flags.append("-Djava.security.manager=allow")
        if shared:  # Kafka's classes as parsed and verified at build time: about half of the start
            flags.append(f"-XX:SharedArchiveFile={jsa}")
        if tmpdir is not None:  # where kafka-storage format writes its scratch directories
            flags.append(f"-Djava.io.tmpdir={tmpdir}")
        return [java, *flags, "-cp", cp, MAIN_CLASS, profile, name]


def shim_line(version: str) -> str:
    """The shim of a release: its own line if there is one, else the newest line below it."""
    want = tuple(int(x) for x in version.split(".")[:2])
    lines = sorted((tuple(int(x) for x in p.name.split(".")), p.name) for p in SHIMS.iterdir() if p.is_dir())
    below = [name for key, name in lines if key <= want]
    if not below:
        raise HarnessError(f"Kafka {version}: the kafka-jvm harness has no shim for this release line")
    return below[-1]


def _line_key(line: str) -> tuple[int, ...]:
    return tuple(int(x) for x in line.split("."))


def layers(version: str) -> list[str]:
    """The layers a release's line falls in: `A-B` holds lines A to B, `A-` every line from A on."""
    want = _line_key(".".join(version.split(".")[:2]))
    out = []
    for p in sorted(LAYERS.iterdir()) if LAYERS.is_dir() else []:
        lo, _, hi = p.name.partition("-")
        if p.is_dir() and _line_key(lo) <= want and (not hi or want <= _line_key(hi)):
            out.append(p.name)
    return out


def sources(version: str) -> list[Path]:
    line = shim_line(version)
    extra = [p for layer in layers(version) for p in sorted((LAYERS / layer).rglob("*.java"))]
    return sorted(CORE.rglob("*.java")) + extra + sorted((SHIMS / line).rglob("*.java"))


_RECIPE = b"javac, jar, class-data archive (2)"  # how a build is made: a new recipe is a new build


def source_hash(version: str) -> str:
    h = hashlib.sha256(_RECIPE)
    for p in sources(version):
        h.update(p.relative_to(HERE).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def build(version: str) -> Harness:
    """The harness of `version`, compiled on first use (the release is fetched first if needed)."""
    from conformance.report import cache_dir

    _check_version(version)
    shim_line(version)  # a release line without a shim fails before anything is downloaded
    release = fetch(version)
    home = cache_dir() / "harness" / version / source_hash(version)
    classes = home / "classes"
    if (home / _DONE).is_file():
        os.utime(home / _DONE)  # in use: not pruned by another checkout's build
        return Harness(release, classes, 0.0)
    javac = shutil.which("javac")
    if javac is None:
        raise HarnessError("javac not found: install a JDK 17 (e.g. `apt-get install openjdk-17-jdk-headless`)")
    tmp = home.with_name(f".{home.name}.part-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "classes").mkdir(parents=True)
    cp = os.pathsep.join(str(j) for j in release.classpath)
    start = time.monotonic()
    proc = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-d", str(tmp / "classes"), "-cp", cp,
                           *(str(p) for p in sources(version))],
                          capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        first = next((ln for ln in proc.stderr.splitlines() if "error:" in ln), proc.stderr.strip()[:300])
        raise HarnessError(f"Kafka {version}: the kafka-jvm harness does not compile against this release: {first}")
    _jar(tmp / "classes", tmp / JAR)
    seconds = time.monotonic() - start
    (tmp / _DONE).write_text(f"{version} {seconds:.1f}s\n")
    if (home / _DONE).is_file():  # another process built it meanwhile (and may be running it): keep that one
        shutil.rmtree(tmp, ignore_errors=True)
        return Harness(release, classes, seconds)
    if home.exists() and not (home / _DONE).is_file():
        shutil.rmtree(home, ignore_errors=True)  # a build that never finished
    try:
        tmp.rename(home)  # atomic: a directory another process renamed in meanwhile is never replaced
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not (home / _DONE).is_file():
            raise
        return Harness(release, classes, seconds)
    _archive(Harness(release, classes, 0.0), version)  # after the rename: the archive names the jar's final path
    for old in home.parent.iterdir():
        # Builds of other sources of this release not used for a day: another checkout (a branch, a
        # worktree) may be running its own build right now.
        if old.name != home.name and not old.name.startswith(".") and _unused_for(old, PRUNE_AFTER):
            shutil.rmtree(old, ignore_errors=True)
    return Harness(release, classes, seconds)


def _jar(classes: Path, jar: Path) -> None:
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_STORED) as z:
        for f in sorted(classes.rglob("*.class")):
            z.write(f, f.relative_to(classes).as_posix())


def _archive(harness: Harness, version: str) -> None:
    """A training run of the harness that dumps the classes it loaded at exit (JDK 13+'s
    -XX:ArchiveClassesAtExit), then moved into place whole.  Best effort: without the archive the
    harness starts as before."""
    jsa = harness.classes.parent / ARCHIVE
    part = jsa.with_name(f".{ARCHIVE}.part-{os.getpid()}")
    argv = harness.argv(f"kafka-{version}", "kfc-training", archive=False)
    argv[argv.index("-cp") + 1] = os.pathsep.join([str(harness.classes.parent / JAR),
                                                   *(str(j) for j in harness.release.classpath)])
    argv.insert(1, f"-XX:ArchiveClassesAtExit={part}")
    with tempfile.TemporaryDirectory(prefix="kfc-training-") as scratch:
        argv.insert(1, f"-Djava.io.tmpdir={scratch}")
        requests = "".join(json.dumps({"id": i, **r}) + "\n" for i, r in enumerate(_TRAINING))
        try:
            done = subprocess.run(argv, input=requests.encode(), capture_output=True, timeout=300,
                                  check=False).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            done = False
    if done and part.is_file():
        os.replace(part, jsa)
    part.unlink(missing_ok=True)
