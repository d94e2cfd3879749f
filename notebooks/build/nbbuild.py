"""Shared by the notebook builders: cells in, a valid notebook file out.

Each ``build_*.py`` script in this folder holds its cells as ``("md" | "code",
source)`` pairs, a ``PATH`` (the notebook in ``notebooks/``) and a ``PREFIX``,
and calls :func:`write` with them. Cell ids are ``<PREFIX>-01``, ``<PREFIX>-02``...,
so rebuilding a notebook does not churn its ids and the diff shows only what changed.
tests/test_notebooks_sync.py builds every notebook in memory with :func:`build` and
compares cell types, ids and sources with the committed file.

    $ python notebooks/build/build_start_here.py
    wrote notebooks/00-start-here.ipynb (20 cells, no outputs)

Execute it afterwards, so it is saved with outputs for nbval:
``jupyter nbconvert --to notebook --execute --inplace notebooks/00-start-here.ipynb``.
``make notebooks`` does both for every notebook.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def build(cells: list[tuple[str, str]], prefix: str) -> nbformat.NotebookNode:
    """The notebook with ``cells``, ids ``<prefix>-01``... and a Python 3 kernelspec."""
    made = []
    for number, (kind, source) in enumerate(cells, start=1):
        if kind not in ("md", "code"):
            raise ValueError(f'cell {number}: kind must be "md" or "code", not {kind!r}')
        make = new_markdown_cell if kind == "md" else new_code_cell
        made.append(make(source, id=f"{prefix}-{number:02d}"))
    nb = new_notebook(cells=made)
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def write(cells: list[tuple[str, str]], prefix: str, path: Path) -> int:
    """Validate and write the notebook (without outputs); returns a process exit code."""
    nb = build(cells, prefix)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    try:
        shown = path.resolve().relative_to(Path.cwd())
    except ValueError:
        shown = path
    print(f"wrote {shown} ({len(nb.cells)} cells, no outputs)")
    return 0
