"""The architecture, checked: `kfc` over three libraries that never import upward, no import cycle, the
reference's private modules reached from outside only through reference_impl.lowlevel (import-linter
contracts in pyproject.toml), and Spark only under spark_checks."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    run = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "3 kept, 0 broken" in run.stdout


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
    return out


def test_only_spark_checks_touches_spark() -> None:
    offenders = [str(p.relative_to(ROOT)) for pkg in ("kfc", "reference_impl", "conformance")
                 for p in (ROOT / pkg).rglob("*.py") if any(m.split(".")[0] == "pyspark" for m in _imports(p))]
    assert offenders == []


def test_every_spark_checks_module_uses_spark_or_is_its_plumbing() -> None:
    """Code that never touches Spark does not live in spark_checks/."""
    for p in (ROOT / "spark_checks").glob("*.py"):
        if p.name == "__init__.py":
            continue
        text = p.read_text()
        assert "pyspark" in text or "SparkRun" in text, f"{p.name} does not use Spark"
