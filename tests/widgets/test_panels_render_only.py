"""Panels only read widget values, call the core and render: no SQL text of their own, and
no pipeline, event log or storage runtime built inside a panel module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

WIDGETS = Path(__file__).resolve().parents[2] / "workbench" / "widgets"
SQL = re.compile(
    r"\b(SELECT\b[\s\S]*\bFROM|INSERT\s+INTO|CREATE\s+(TABLE|VIEW)|DELETE\s+FROM|UPDATE\s+\w+\s+SET)\b"
)
BUILT_BY_THE_CORE = {"Pipeline", "EventLog", "Runtime"}


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring nodes (a docstring's examples may show SQL typed into a panel)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _findings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skip
            and SQL.search(node.value)
        ):
            found.append(f"{path.name}:{node.lineno}: SQL text {node.value[:50]!r}")
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in BUILT_BY_THE_CORE:
                found.append(f"{path.name}:{node.lineno}: builds a {name} itself")
    return found


def test_no_panel_module_holds_sql_or_builds_what_the_core_owns():
    findings = [f for path in sorted(WIDGETS.glob("*.py")) for f in _findings(path)]
    assert not findings, "\n".join(findings)


def test_the_check_sees_what_it_looks_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""Docstring: SELECT x FROM y is fine here."""\n'
        'Q = "SELECT a FROM t"\n'
        "log = EventLog()\n"
        "run = core.Pipeline(wb, z)\n",
        encoding="utf-8",
    )
    assert [f.split(": ", 1)[1] for f in _findings(bad)] == [
        "SQL text 'SELECT a FROM t'",
        "builds a EventLog itself",
        "builds a Pipeline itself",
    ]
