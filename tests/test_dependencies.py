"""Every third-party module the package imports is a runtime dependency in pyproject.toml."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _top_level_imports() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "workbench").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"workbench", "__future__"}


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0] for d in project["dependencies"]}
    return {n.lower().replace("_", "-") for n in names}


def test_every_imported_library_is_a_runtime_dependency():
    dists = packages_distributions()
    missing = {}
    for module in sorted(_top_level_imports()):
        owners = {d.lower().replace("_", "-") for d in dists.get(module, [module])}
        if not owners & _declared():
            missing[module] = sorted(owners)
    assert missing == {}, f"imported at run time but not in [project.dependencies]: {missing}"
