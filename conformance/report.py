"""HTML report from allure-results: `kfc report [DIR]`.

The Allure 3 command line is an npm package pinned in conformance/allure/package.json and
package-lock.json, which ship with the wheel.  The first report installs it with `npm ci` into a
per-user cache ($KFC_CACHE_DIR, else platformdirs' user cache directory), once per lockfile; nothing
is written into the installed package.  Report settings live in conformance/allure/allurerc.mjs; the
Google Analytics script that Allure embeds is switched off with ALLURE_NO_ANALYTICS=true (see
allurerc.mjs for why the allure2 plugin).

Errors are ReportError with a one-line message; `kfc report` prints it and exits 1.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The pinned npm manifest, lockfile and Allure config ship with the package (conformance/allure/);
# the Allure CLI itself is installed once per lockfile into a per-user cache, never into the package.
ASSETS = Path(__file__).resolve().parent / "allure"
CONFIG_NAME = "allurerc.mjs"
MIN_NODE = 20
CACHE_ENV = "KFC_CACHE_DIR"
# Markers of the analytics script Allure 3 (and 2) templates embed; a report must contain none of them.
ANALYTICS_MARKERS = ("googletagmanager", "gtag(")
_STAMP = ".kfc-npm-stamp"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
GET_NODE = "install Node.js >= 20 with npm (https://nodejs.org/en/download, or e.g. `apt-get install nodejs npm`)"


class ReportError(Exception):
    """A report could not be built; the message is one line for the user."""


def _find_root(root: Path | str | None) -> Path:
    """Where package.json, package-lock.json and allurerc.mjs are: the package's own copy."""
    c = Path(root) if root is not None else ASSETS
    if (c / "package.json").is_file() and (c / "package-lock.json").is_file():
        return c.resolve()
    raise ReportError(f"no package.json + package-lock.json in {c}: the installation is incomplete "
                      "(reinstall kafka-feature-conformance)")


def cache_dir() -> Path:
    """The per-user cache: $KFC_CACHE_DIR, else the platform's cache directory (platformdirs)."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given).expanduser().resolve()
    import platformdirs

    return Path(platformdirs.user_cache_dir("kafka-feature-conformance", appauthor=False))


def _lock_hash(root: Path) -> str:
    data = (root / "package.json").read_bytes() + (root / "package-lock.json").read_bytes()
    return hashlib.sha256(data).hexdigest()[:16]


def allure_home(root: Path | str | None = None) -> Path:
    """Where the Allure CLI of this lockfile lives (installed or not)."""
    return cache_dir() / "allure" / _lock_hash(_find_root(root))


def _node_version() -> tuple[str | None, int | None]:
    node = shutil.which("node")
    if node is None:
        return None, None
    try:
        out = subprocess.run([node, "--version"], check=False, capture_output=True, text=True, timeout=30).stdout
        return out.strip(), int(out.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.SubprocessError):
        return "unknown", None


def _check_node() -> None:
    version, major = _node_version()
    if version is None:
        raise ReportError(f"node not found on PATH: the HTML report needs the Allure CLI, which runs on Node.js; {GET_NODE}")
    if major is not None and major < MIN_NODE:
        raise ReportError(f"node {version} at {shutil.which('node')} is too old: the Allure CLI needs Node.js "
                          f">= {MIN_NODE}; {GET_NODE}")


def _stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def ensure_allure(root: Path | str | None = None, log: Callable[[str], None] = _stderr) -> Path:
    """Path of the pinned Allure CLI in the cache, running `npm ci` there once (per lockfile) first."""
    root = _find_root(root)
    home = allure_home(root)
    binary = home / "node_modules" / ".bin" / "allure"
    stamp = home / "node_modules" / _STAMP
    want = _lock_hash(root)
    _check_node()
    if binary.exists() and stamp.is_file() and stamp.read_text().strip() == want:
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise ReportError(f"npm not found on PATH: it installs the Allure CLI once, into {home}; {GET_NODE}")
    try:
        home.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(root / name, home / name)
    except OSError as e:
        raise ReportError(f"cannot prepare the Allure CLI cache {home}: {e.strerror or e} "
                          f"(set {CACHE_ENV} to a writable directory)") from None
    log(f"[kfc] first use: installing the Allure CLI (npm ci, from the npm registry) into {home} ...\n")
    # --ignore-scripts: nothing in the lock needs install scripts, and none may fetch binaries.
    cmd = [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"]
    # npm's output goes to our stderr so stdout stays the report path; relay it when stderr is not a
    # real file (e.g. under click's CliRunner).
    sink: Any = sys.stderr
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        sink = subprocess.PIPE
    try:
        proc = subprocess.run(cmd, check=False, cwd=home, stdout=sink, stderr=subprocess.STDOUT,
                              text=True, timeout=1800)
    except (OSError, subprocess.SubprocessError) as e:
        raise ReportError(f"could not run npm: {e}") from None
    if proc.stdout:
        log(proc.stdout)
    rc = proc.returncode
    if rc != 0:
        raise ReportError(f"`npm ci` failed in {home} (exit code {rc}); see npm's output above")
    if not binary.exists():
        raise ReportError(f"`npm ci` finished but {binary} is missing; is `allure` still in package.json?")
    stamp.write_text(want + "\n")
    return binary


def _has_results(results_dir: Path) -> bool:
    return any(results_dir.glob("*-result.json"))


def build_report(results_dir: Path | str, out_dir: Path | str, single_file: bool = True,
                 root: Path | str | None = None, log: Callable[[str], None] = _stderr) -> Path:
    """Render RESULTS_DIR (allure-results) into OUT_DIR with the Allure CLI; return OUT_DIR/index.html."""
    results = Path(results_dir).resolve()
    out = Path(out_dir).resolve()
    if not results.is_dir():
        raise ReportError(f"no allure results at {results}: run `kfc check --report DIR` first")
    if not _has_results(results):
        raise ReportError(f"{results} holds no test results (*-result.json): did the run collect any tests?")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "index.html").exists())):
        # Only ever replace a previous report, never someone's other files.
        raise ReportError(f"{out} exists and is not an Allure report; choose another output directory")
    root = _find_root(root)
    config = root / CONFIG_NAME
    if not config.is_file():
        raise ReportError(f"Allure config {config} is missing")
    binary = ensure_allure(root, log)
    home = allure_home(root)

    env = dict(os.environ, ALLURE_NO_ANALYTICS="true", KFC_ALLURE_SINGLE_FILE=str(single_file).lower())
    out.parent.mkdir(parents=True, exist_ok=True)
    # Allure neither cleans its output directory nor copes with unrelated sub-directories in it
    # (it "flattens" a lone one), so render into a fresh sibling and swap it in.
    tmp = fresh_sibling(out)
    try:
        cmd = [str(binary), "generate", "--config", str(config), "--output", str(tmp), str(results)]
        try:
            proc = subprocess.run(cmd, check=False, cwd=home, env=env, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as e:
            raise ReportError(f"could not run the Allure CLI: {e}") from None
        if proc.returncode != 0:
            lines = [ln.strip() for ln in _ANSI.sub("", proc.stderr + proc.stdout).splitlines() if ln.strip()]
            detail = lines[-1] if lines else "no output"
            raise ReportError(f"allure generate failed (exit code {proc.returncode}): {detail}")
        index = tmp / "index.html"
        if not index.is_file() or index.stat().st_size == 0:
            raise ReportError(f"allure generate wrote no index.html for {results}")
        html = index.read_text(encoding="utf-8", errors="replace")
        found = [m for m in ANALYTICS_MARKERS if m in html]
        if found:
            # Guards against a CLI upgrade that stops honouring ALLURE_NO_ANALYTICS.
            raise ReportError(f"the generated report still embeds analytics ({', '.join(found)}); "
                              "check the Allure version pinned in package.json")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out / "index.html"


def fresh_sibling(out: Path) -> Path:
    """An empty directory beside `out`, to become it: with the permissions the umask gives a new
    directory (mkdtemp's are 0700, and a report is for others to read too)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)
    return tmp
