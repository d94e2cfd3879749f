"""Every committed notebook matches its builder in notebooks/build/ (cell types, ids, sources).

Outputs are not compared (nbval does that); this catches a builder edited without
`make notebooks`, and a notebook edited by hand whose builder would undo the edit.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
BUILD = NOTEBOOKS / "build"
BUILDERS = sorted(BUILD.glob("build_*.py"))


def load_builder(path: Path) -> ModuleType:
    """Import a builder script (which does `import nbbuild`) without running its __main__."""
    sys.path.insert(0, str(BUILD))
    try:
        spec = importlib.util.spec_from_file_location(f"_notebook_builder_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BUILD))
        sys.modules.pop("nbbuild", None)
    return module


def cell_key(cell: nbformat.NotebookNode) -> tuple[str, str, str]:
    return cell.cell_type, cell.get("id", "<no id>"), cell.source


def first_difference(
    built: nbformat.NotebookNode, saved: nbformat.NotebookNode, notebook: str, builder: str
) -> str | None:
    """None when the cells agree, else a message naming the notebook and the first differing cell."""
    fix = f"Run `make notebooks` to rebuild and re-execute {notebook} from {builder}."
    for number, (new, old) in enumerate(zip(built.cells, saved.cells, strict=False), start=1):
        if cell_key(new) == cell_key(old):
            continue
        lines = [f"{notebook} is out of date with {builder}: cell {number} differs."]
        if new.cell_type != old.cell_type:
            lines.append(f"  type: builder {new.cell_type!r}, notebook {old.cell_type!r}")
        if new.get("id") != old.get("id"):
            lines.append(f"  id: builder {new.get('id')!r}, notebook {old.get('id')!r}")
        if new.source != old.source:
            diff = difflib.unified_diff(
                old.source.splitlines(),
                new.source.splitlines(),
                "notebook",
                "builder",
                lineterm="",
            )
            lines.extend(f"  {line}" for line in list(diff)[:20])
        lines.append(fix)
        return "\n".join(lines)
    if len(built.cells) != len(saved.cells):
        return (
            f"{notebook} is out of date with {builder}: the builder has {len(built.cells)} "
            f"cells, the notebook {len(saved.cells)} (first differing cell: "
            f"{min(len(built.cells), len(saved.cells)) + 1}).\n{fix}"
        )
    return None


def built_and_saved(path: Path) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode, str, str]:
    module = load_builder(path)
    built = module.nbbuild.build(module.CELLS, module.PREFIX)
    nbformat.validate(built)
    notebook = Path(module.PATH)
    assert notebook.parent == NOTEBOOKS, f"{path.name} writes outside notebooks/: {notebook}"
    assert notebook.is_file(), f"{notebook.name} is missing: run `make notebooks`"
    saved = nbformat.read(notebook, as_version=4)
    return built, saved, f"notebooks/{notebook.name}", f"notebooks/build/{path.name}"


def test_notebooks_folder_holds_notebooks_and_the_build_folder_only():
    stray = [p.name for p in NOTEBOOKS.iterdir() if p.is_file() and p.suffix != ".ipynb"]
    assert not stray, f"builders and helpers belong in notebooks/build/: {stray}"
    assert (BUILD / "nbbuild.py").is_file()


def test_every_notebook_has_exactly_one_builder():
    targets = [Path(load_builder(path).PATH).name for path in BUILDERS]
    assert len(targets) == len(set(targets)), targets
    assert sorted(targets) == sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda path: path.stem)
def test_notebook_matches_its_builder(builder):
    built, saved, notebook, name = built_and_saved(builder)
    message = first_difference(built, saved, notebook, name)
    assert message is None, message


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda path: path.stem)
def test_an_edited_builder_is_caught(builder):
    # The comparison itself, against the builder's own output (not the committed file).
    module = load_builder(builder)
    build, prefix = module.nbbuild.build, module.PREFIX
    notebook, name = f"notebooks/{Path(module.PATH).name}", f"notebooks/build/{builder.name}"
    built = build(module.CELLS, prefix)
    assert first_difference(build(module.CELLS, prefix), built, notebook, name) is None

    cells = list(module.CELLS)
    kind, source = cells[2]
    cells[2] = (kind, source + "\n# edited")
    message = first_difference(build(cells, prefix), built, notebook, name)
    assert message is not None
    assert message.startswith(f"{notebook} is out of date with {name}: cell 3 differs.")
    assert "+# edited" in message and message.endswith(
        f"Run `make notebooks` to rebuild and re-execute {notebook} from {name}."
    )

    message = first_difference(build(module.CELLS[:-1], prefix), built, notebook, name)
    assert message is not None and "the builder has" in message
    assert f"first differing cell: {len(module.CELLS)})" in message

    message = first_difference(build(module.CELLS, prefix + "x"), built, notebook, name)
    assert message is not None and "cell 1 differs" in message and "id: builder" in message


def test_make_notebooks_rebuilds_and_executes_every_notebook():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^\.PHONY:.*\bnotebooks\b", makefile, re.M)
    recipe = re.search(r"^notebooks: \$\(STAMP\)\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe, "Makefile has no `notebooks: $(STAMP)` target"
    commands = recipe.group(1)
    executes = re.search(r"^NBEXEC := (.*)$", makefile, re.M)
    assert executes and "nbconvert --to notebook --execute --inplace" in executes.group(1)
    for path in BUILDERS:
        notebook = Path(load_builder(path).PATH).name
        line = f"$(BIN)/python notebooks/build/{path.name} && $(NBEXEC) notebooks/{notebook}"
        assert line in commands, f"`make notebooks` does not rebuild {notebook}"
