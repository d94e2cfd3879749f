"""The usage examples in module docstrings run as tests, so they stay true."""

import doctest
import importlib
import pkgutil

import pytest

import workbench

# Packages whose module docstrings carry runnable examples.
# Every module of the package, so a new package's examples are run without a list to update.
MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(
        importlib.import_module("workbench").__path__, "workbench."
    )
    if not name.endswith("__main__")
) + ["workbench"]
# The CRS reference beside the package (tools/crs_reference) keeps its examples true too.
MODULES += sorted(
    name
    for _, name, _ in pkgutil.walk_packages(
        importlib.import_module("tools.crs_reference").__path__, "tools.crs_reference."
    )
) + ["tools.crs_reference"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_package_has_version():
    assert workbench.__version__
