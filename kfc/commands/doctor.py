"""`kfc doctor`: what this installation has, each with OK or what to do."""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
import sys
from importlib import metadata
from typing import Any

import click


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _run(cmd: list[str]) -> str | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (proc.stdout or proc.stderr).strip().splitlines()
    return text[0].strip() if text else None


def checks() -> list[dict[str, Any]]:
    """One row per component: name, version or what was found, ok, and what to do when not ok."""
    from conformance.report import MIN_NODE, _find_root, _lock_hash, allure_home
    from reference_impl import load_profile, profile_names

    rows: list[dict[str, Any]] = []

    def row(name: str, found: str | None, ok: bool, todo: str = "", required: bool = True) -> None:
        rows.append({"name": name, "found": found or "missing", "ok": ok, "todo": "" if ok else todo,
                     "required": required})

    row("kafka-feature-conformance", _version("kafka-feature-conformance"), True)
    names = list(profile_names())
    releases = ", ".join(f"{n} ({load_profile(n).release})" for n in names)
    row("profiles", f"{len(names)}: {releases}", bool(names), "reinstall: no profile catalogues found")
    row("python", f"{platform.python_version()} ({sys.executable})", sys.version_info >= (3, 11),
        "use Python 3.11 or later")
    java = shutil.which("java")
    jv = _run([java, "-version"]) if java else None
    java_ok = jv is not None and any(f'"{v}' in jv or f" {v}" in jv for v in ("17", "21"))
    row("java (Spark replay)", f"{jv} ({java})" if jv else None, java_ok,
        "install a Java 17 or 21 runtime (e.g. `apt-get install openjdk-17-jre-headless`), or run "
        "`kfc check --no-spark`", required=False)
    mvn = shutil.which("mvn")
    mv = _run([mvn, "-B", "-v"]) if mvn else None
    mv = re.sub(r"\x1b\[[0-9;]*m", "", mv) if mv else None  # Maven colours even when piped
    row("maven (Kafka releases)", f"{mv} ({mvn})" if mv else None, mv is not None,
        "install Maven 3.8+ (e.g. `apt-get install maven`); only `kfc kafka fetch` and real clusters need it",
        required=False)
    from conformance.realkafka.releases import cache_root, list_cached

    kafkas = list_cached()
    row("Kafka releases", (f"{len(kafkas)} in {cache_root()}: " + ", ".join(r.version for r in kafkas)) if kafkas
        else f"none yet in {cache_root()}", True, required=False)
    row("pyspark", _version("pyspark"), _version("pyspark") is not None,
        "pip install 'kafka-feature-conformance[spark]'", required=False)
    node = shutil.which("node")
    nv = _run([node, "--version"]) if node else None
    try:
        major = int((nv or "v0").lstrip("v").split(".")[0])
    except ValueError:
        major = 0
    row("node (HTML report)", f"{nv} ({node})" if nv else None, major >= MIN_NODE,
        f"install Node.js >= {MIN_NODE} with npm (https://nodejs.org/en/download); only `kfc report` needs it",
        required=False)
    npm = shutil.which("npm")
    npv = _run([npm, "--version"]) if npm else None
    row("npm", f"{npv} ({npm})" if npv else None, bool(npv), "install npm with Node.js", required=False)
    try:
        root = _find_root(None)
        home = allure_home(root)
        binary = home / "node_modules" / ".bin" / "allure"
        stamp = home / "node_modules" / ".kfc-npm-stamp"
        installed = binary.exists() and stamp.is_file() and stamp.read_text().strip() == _lock_hash(root)
        pinned = json.loads((root / "package.json").read_text())["dependencies"]["allure"]
        row("Allure CLI", f"{pinned} {'cached at' if installed else 'not yet installed; will go to'} {home}", True,
            required=False)
    except Exception as e:  # noqa: BLE001 - a broken installation is what doctor is for
        row("Allure CLI", str(e), False, "reinstall kafka-feature-conformance", required=False)
    return rows


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def doctor_command(as_json: bool) -> None:
    """Check this installation: the suite, its profiles, Python, Java, Maven, the Kafka releases in the
    cache, pyspark, Node/npm and the Allure CLI."""
    rows = checks()
    if as_json:
        click.echo(json.dumps(rows, indent=1))
    else:
        width = max(len(r["name"]) for r in rows)
        for r in rows:
            mark = "OK  " if r["ok"] else ("FAIL" if r["required"] else "WARN")
            click.echo(f"{mark} {r['name']:<{width}}  {r['found']}")
            if r["todo"]:
                click.echo(f"     {'':<{width}}  -> {r['todo']}")
    sys.exit(0 if all(r["ok"] for r in rows if r["required"]) else 1)
