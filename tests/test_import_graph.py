"""The package's import structure: no cycles, and no core package imports a face.

Imports are read with ``ast`` from every module, inside functions too (an
import deferred into a function is still a dependency); imports under
``if TYPE_CHECKING:`` are left out, since they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "workbench"
FACES = ("workbench.api", "workbench.widgets", "workbench.cli")
CORE = (
    "workbench.core",
    "workbench.rules_language",
    "workbench.firewall",
    "workbench.storage",
    "workbench.waf_legacy",
    "workbench.rulesets",
    "workbench.migration",
    "workbench.zone_import",
    "workbench.terraform",
    "workbench.traffic",
    "workbench.replay",
    "workbench.logs",
    "workbench.tuning",
)


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _under(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def graph() -> dict[str, set[str]]:
    """Module -> the workbench modules it imports at run time."""
    files = {_name(p): p for p in ROOT.rglob("*.py")}
    known = set(files)
    edges: dict[str, set[str]] = {}
    for module, path in files.items():
        is_pkg = path.name == "__init__.py"
        out: set[str] = set()

        def resolve(node: ast.Import | ast.ImportFrom) -> list[str]:
            if isinstance(node, ast.Import):
                return [a.name for a in node.names]
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if is_pkg else module.split(".")[:-1]  # noqa: B023
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([base] if base else []))
            return [base] + [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]

        def walk(node: ast.AST) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child.test):
                    for other in child.orelse:
                        walk_one(other)
                    continue
                walk_one(child)

        def walk_one(child: ast.AST) -> None:
            if isinstance(child, ast.Import | ast.ImportFrom):
                for name in resolve(child):
                    while name and name not in known:
                        name = name.rpartition(".")[0]
                    if name and name != module:  # noqa: B023
                        out.add(name)  # noqa: B023
            walk(child)

        walk(ast.parse(path.read_text(encoding="utf-8")))
        edges[module] = out
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_cycle():
    # A module importing its own package (``from . import x``) meets that
    # package's __init__ re-exporting it: the usual shape, not a cycle to name.
    edges = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph().items()}
    assert _cycles(edges) == []


def test_no_core_package_imports_a_face():
    bad = sorted(
        f"{m} -> {t}"
        for m, targets in graph().items()
        if _under(m, CORE)
        for t in targets
        if _under(t, FACES)
    )
    assert bad == []


def test_the_checks_see_a_planted_cycle_and_a_core_to_face_import():
    edges = {"workbench.a": {"workbench.b"}, "workbench.b": {"workbench.a"}, "workbench.c": set()}
    assert _cycles(edges) == [["workbench.a", "workbench.b"]]
    assert _under("workbench.api.server", FACES) and _under("workbench.core.platform", CORE)
    real = graph()
    assert "workbench.core.errors" in real["workbench.firewall.errors"]


def _absolute_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
    return names


def test_the_package_never_imports_the_tools_beside_it():
    # tools/ (the CRS reference, the catalogue builders), tests/ and benchmarks/ are not
    # installed with the package.
    bad = sorted(
        f"{_name(path)} -> {name}"
        for path in ROOT.rglob("*.py")
        for name in _absolute_imports(path)
        if name.split(".")[0] in ("tools", "tests", "benchmarks")
    )
    assert bad == []
