"""A release's feature-versioning dump, produced by running the release's own classes.

`dump(release)` compiles `dump/DumpRelease.java` (beside this file) with javac against the release's
classpath into the per-user cache (once per release and source), runs it with `java`, and returns the
dump as text in the layout of fixtures/release-dumps (json.dumps(indent=1) plus a newline)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from .releases import Release, cache_root

SOURCE = Path(__file__).resolve().parent / "dump" / "DumpRelease.java"
MAIN = "DumpRelease"
_TIMEOUT = 180  # seconds; a dump takes 2-10 s on a busy 2-core machine


class DumpError(Exception):
    """The dump could not be made; the message is one line for the user."""


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise DumpError(f"{name} not found: install a JDK 17 (e.g. `apt-get install openjdk-17-jdk-headless`)")
    return path


def _classpath(parts: list[Path]) -> str:
    return ":".join(str(p) for p in parts)


def compiled(release: Release) -> Path:
    """The directory holding DumpRelease.class built against `release` (compiled on first use)."""
    if not release.classpath:
        raise DumpError(f"Kafka {release.version}: no jars in {release.libs}")
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    out = cache_root().parent / "dump-classes" / f"{release.version}-{digest}"
    if (out / f"{MAIN}.class").is_file():
        return out
    tmp = out.with_name(f"{out.name}.part-{os.getpid()}")  # two runs may compile at once
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        proc = subprocess.run([_tool("javac"), "-nowarn", "-d", str(tmp), "-cp", _classpath(list(release.classpath)),
                               str(SOURCE)], capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
                              timeout=_TIMEOUT)
    except BaseException as e:  # Ctrl-C, timeout: run() has killed javac; leave no half-built directory
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, subprocess.TimeoutExpired):
            raise DumpError(f"Kafka {release.version}: javac did not finish in {_TIMEOUT} s") from e
        raise
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200])
        raise DumpError(f"Kafka {release.version}: javac failed on {SOURCE.name}: {first}")
    if (out / f"{MAIN}.class").is_file():  # another run finished first: keep its classes
        shutil.rmtree(tmp, ignore_errors=True)
        return out
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def dump(release: Release) -> str:
    """The release's dump text (json.dumps(indent=1) layout, trailing newline)."""
    classes = compiled(release)
    cmd = [_tool("java"), "-cp", _classpath([classes, *release.classpath]), MAIN, release.version]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
                              timeout=_TIMEOUT)  # run() kills the JVM on timeout and on Ctrl-C
    except subprocess.TimeoutExpired as e:
        raise DumpError(f"Kafka {release.version}: the dump program did not finish in {_TIMEOUT} s") from e
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("log4j:")]
        why = next((ln for ln in lines if "Exception" in ln or "Error" in ln), lines[0] if lines else "no message")
        raise DumpError(f"Kafka {release.version}: the dump program failed (exit {proc.returncode}): {why.strip()}")
    try:
        parsed = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise DumpError(f"Kafka {release.version}: the dump program printed no JSON ({e})") from e
    text = json.dumps(parsed, indent=1) + "\n"
    if text != proc.stdout:  # the Java writer and Python's layout must agree byte for byte
        raise DumpError(f"Kafka {release.version}: the dump is not in the json.dumps(indent=1) layout")
    return text
