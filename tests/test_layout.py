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
    assert "5 kept, 0 broken" in run.stdout


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


def test_no_library_starts_the_application() -> None:
    """Children the libraries start (serve-broker, one suite per mutant) run library entry points
    (`python -m conformance.serving`, `python -m conformance`), never `kfc`, the layer above them."""
    offenders = [str(p.relative_to(ROOT)) for pkg in ("reference_impl", "conformance", "spark_checks")
                 for p in (ROOT / pkg).rglob("*.py") if '"-m", "kfc"' in p.read_text()]
    assert offenders == []


def test_every_spark_checks_module_uses_spark_or_is_its_plumbing() -> None:
    """Code that never touches Spark does not live in spark_checks/."""
    for p in (ROOT / "spark_checks").glob("*.py"):
        if p.name == "__init__.py":
            continue
        text = p.read_text()
        assert "pyspark" in text or "SparkRun" in text, f"{p.name} does not use Spark"


def _cycles(package: str) -> list[list[str]]:
    """Circles among `package`'s modules, counting imports made for annotations only (an annotation is
    a dependency of the reader too), as strongly connected groups of more than one module."""
    import grimp

    graph = grimp.build_graph(package)
    edges = {m: {i for i in graph.find_modules_directly_imported_by(m) if i.startswith(package + ".")}
             for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for m in sorted(graph.modules):
        if m not in index:
            visit(m)
    return out


def test_no_module_of_conformance_is_in_a_circle_even_through_annotations() -> None:
    # The observation reads a cluster through conformance.wire.transport.Transport, not the kafka://
    # target (which observes): the circle target -> observe -> target is gone.
    assert _cycles("conformance") == []
