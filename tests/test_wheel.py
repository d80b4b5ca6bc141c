"""The wheel is the product: built from this checkout, installed into a fresh venv in a temporary
directory outside the checkout, and used from there as another project's CI would -- `kfc --version`,
`kfc doctor`, `kfc check --no-spark` against the reference and against `kfc serve-broker --no-control`
over kafka://, and `kfc report` (its HTML has the results).  Nothing is written into site-packages.
The core install has no pyspark (`[spark]` is an extra): `kfc check` says how to get it.  The PyPI
distribution `fixtures` is installed beside it: the wheel ships its data inside `reference_impl`, no
top-level package of another distribution's name, so `from fixtures import Fixture` still works.

The Allure CLI cache is the user's (or KFC_CACHE_DIR): shared between runs, as the issue allows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_report import _embedded_files

ROOT = Path(__file__).resolve().parent.parent


def _run(cmd: list[str], cwd: Path, timeout: float = 600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # Nothing from the checkout (a PYTHONPATH to it would make the venv's pip see the package as installed).
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "PYTHONPATH"}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False, env=env)


def _tree(path: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(path)): (p.stat().st_size, p.stat().st_mtime_ns) for p in path.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("wheel")
    start = time.monotonic()
    build = _run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(base / "dist")], base)
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = (base / "dist").glob("kafka_feature_conformance-*.whl")
    venv = base / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], base)
    assert made.returncode == 0, made.stderr
    pip = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
               base, timeout=1200)
    assert pip.returncode == 0, pip.stderr[-3000:]
    size = sum(p.stat().st_size for p in (venv / "lib").rglob("*") if p.is_file())  # the core install, deps included
    other = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                  "fixtures"], base, timeout=600)  # the PyPI distribution our wheel must not shadow
    assert other.returncode == 0, other.stderr[-3000:]
    site = Path(_run([str(venv / "bin" / "python"), "-c", ("import conformance, pathlib; "
                      "print(pathlib.Path(conformance.__file__).parent.parent)")], base).stdout.strip())
    work = base / "elsewhere"  # a project of its own, far from the checkout
    work.mkdir()
    print(f"\nwheel {wheel.stat().st_size / 1e6:.1f} MB, core install {size / 1e6:.0f} MB (no pyspark), built and "
          f"installed in {time.monotonic() - start:.1f} s")
    return {"wheel": wheel, "bin": venv / "bin", "site": site, "work": work}


def test_the_wheel_carries_the_report_manifest_and_no_checkout_paths(installed: dict[str, Path]) -> None:
    import zipfile

    names = zipfile.ZipFile(installed["wheel"]).namelist()
    for f in ("conformance/allure/package.json", "conformance/allure/package-lock.json",
              "conformance/allure/allurerc.mjs", "reference_impl/fixtures/catalogs/kafka-4.2.json",
              "reference_impl/fixtures/corpus/bundled-kafka-4.2.parquet",
              "reference_impl/fixtures/schema/command.schema.json", "reference_impl/fixtures/mutants/catalogue.json"):
        assert f in names, f
    top = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert top == {"kfc", "reference_impl", "conformance", "spark_checks"}, top  # no top-level `fixtures`
    assert not any(n.startswith(("tests/", "node_modules/", ".venv/")) for n in names)
    assert not str(installed["site"]).startswith(str(ROOT))


def test_the_wheel_lives_beside_the_pypi_fixtures_distribution(installed: dict[str, Path]) -> None:
    code = ("from fixtures import Fixture; import fixtures, reference_impl, conformance.mutants; "
            "from reference_impl.data import fixtures as data; "
            "assert 'site-packages/fixtures' in fixtures.__file__, fixtures.__file__; "
            "print(Fixture.__name__, reference_impl.load_profile('kafka-4.2').name, len(conformance.mutants.MUTANTS), "
            "(data() / 'corpus' / 'bundled-kafka-4.2.parquet').is_file())")
    out = _run([str(installed["bin"] / "python"), "-c", code], installed["work"],
               env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert out.returncode == 0, out.stderr[-2000:]
    name, profile, mutants, corpus = out.stdout.split()
    assert (name, profile, corpus) == ("Fixture", "kafka-4.2", "True") and int(mutants) > 10


def test_the_core_install_says_how_to_get_spark(installed: dict[str, Path]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = _run([str(installed["bin"] / "kfc"), "check", "--report", "r"], installed["work"], env=env)
    assert out.returncode == 1 and out.stdout == "", out.stdout[-2000:]
    assert out.stderr == ("error: the Spark replay that ends kfc check needs pyspark: "
                          "pip install 'kafka-feature-conformance[spark]', or pass --no-spark\n"), out.stderr
    assert not (installed["work"] / "r").exists()  # said before anything ran


def test_version_doctor_check_live_and_report_from_the_wheel(installed: dict[str, Path]) -> None:
    kfc = str(installed["bin"] / "kfc")
    work = installed["work"]
    env = {**os.environ, "PATH": f"{installed['bin']}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)  # nothing from the checkout
    before = _tree(installed["site"])
    timings: dict[str, float] = {}

    def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        t = time.monotonic()
        out = _run([kfc, *args], work, timeout, env)
        timings[args[0]] = timings.get(args[0], 0) + time.monotonic() - t
        return out

    version = run("--version")
    assert version.returncode == 0 and version.stdout.startswith("kfc 0.1.0"), version.stdout + version.stderr
    doctor = run("doctor", "--json")
    rows = {r["name"]: r for r in json.loads(doctor.stdout)}
    assert rows["kafka-feature-conformance"]["found"] == "0.1.0" and "kafka-4.2 (4.2.0)" in rows["profiles"]["found"]
    assert doctor.returncode == 0, doctor.stdout

    ref = run("check", "--no-spark", "--report", "reports/reference")
    assert ref.returncode == 0 and "CONFORMS" in ref.stdout, ref.stdout[-2000:] + ref.stderr[-2000:]
    assert (work / "reports" / "reference" / "summary.json").exists()  # relative paths are the caller's

    # The suite as a pytest plugin, from anywhere: --pyargs finds it in site-packages.
    t = time.monotonic()
    pyargs = _run([str(installed["bin"] / "python"), "-m", "pytest", "--pyargs", "conformance.suite", "-q",
                   "-p", "no:cacheprovider", "--kfc-target", "reference:kafka-4.1", "--kfc-report", "reports/pyargs"],
                  work, 600, env)
    timings["pytest --pyargs"] = time.monotonic() - t
    assert pyargs.returncode == 0, pyargs.stdout[-2000:]
    assert json.loads((work / "reports" / "pyargs" / "summary.json").read_text())["verdict"] == "CONFORMS"

    sb = subprocess.Popen([kfc, "serve-broker", "--no-control", "--port", "0", "--broker", "0", "--broker", "4",
                           "--controller", "7"], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True)
    try:
        assert sb.stdout is not None
        info = json.loads(sb.stdout.readline())
        spec = f"kafka://{info['bootstrap']}?controller={info['controller']}"
        live = run("check", "--no-spark", "--target", spec, "--report", "reports/live")
    finally:
        sb.terminate()
        sb.wait(timeout=10)
    assert live.returncode == 0 and "CONFORMS" in live.stdout and "cluster as observed" in live.stdout, (
        live.stdout[-2000:] + live.stderr[-2000:])

    report = run("report", "reports/live", timeout=1800)
    assert report.returncode == 0, report.stderr[-3000:]
    index = Path(report.stdout.strip().splitlines()[-1])
    assert index == work / "reports" / "live" / "html" / "index.html" and index.stat().st_size > 10_000
    html = index.read_text(errors="replace")
    assert "kafka-feature-conformance" in html and "googletagmanager" not in html
    # The results are in it: the single-file report embeds each test case; the live run's are there.
    summary = json.loads((work / "reports" / "live" / "summary.json").read_text())
    files = _embedded_files(html)
    cases = {json.loads(v)["name"] for k, v in files.items() if k.startswith("data/test-cases/")}
    assert len(cases) >= 100 and any(n.startswith("test_probe[") for n in cases), sorted(cases)[:5]
    stats = json.loads(files["widgets/summary.json"])["statistic"]
    assert stats["passed"] == summary["counts"]["passed"], (stats, summary["counts"])

    after = _tree(installed["site"])
    written = sorted(k for k in after if after.get(k) != before.get(k) and "__pycache__" not in k)
    assert not written, f"written into site-packages: {written[:10]}"
    print("timings (s):", {k: round(v, 1) for k, v in timings.items()})


def test_build_and_twine_check_pass(tmp_path: Path) -> None:
    from importlib.metadata import PackageNotFoundError, version

    for tool in ("build", "twine"):  # by distribution: a build/ folder in the checkout is no `build`
        try:
            version(tool)
        except PackageNotFoundError:
            pytest.skip(f"the dev extra's {tool} is not installed")
    built = _run([sys.executable, "-m", "build", "-q", "--outdir", str(tmp_path), str(ROOT)], tmp_path, timeout=900)
    assert built.returncode == 0, built.stderr[-3000:]
    dists = sorted(str(p) for p in tmp_path.iterdir())
    assert sorted(Path(d).suffix for d in dists) == [".gz", ".whl"], dists
    check = _run([sys.executable, "-m", "twine", "check", "--strict", *dists], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
