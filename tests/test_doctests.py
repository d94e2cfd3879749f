"""The usage examples in module docstrings run as tests, so they stay true."""

import doctest
import importlib
import pkgutil

import pytest

import workbench

# Packages whose module docstrings carry runnable examples.
PACKAGES = ["workbench.core", "workbench.rules_language", "workbench.firewall", "workbench.api"]
MODULES = sorted(
    name
    for package in PACKAGES
    for _, name, _ in pkgutil.walk_packages(
        importlib.import_module(package).__path__, package + "."
    )
) + ["workbench"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_package_has_version():
    assert workbench.__version__
