"""Every storage module's docstring example runs and shows what it claims."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import workbench.storage

MODULES = sorted(m.name for m in pkgutil.iter_modules(workbench.storage.__path__))


@pytest.mark.parametrize("name", MODULES)
def test_module_docstring_example(name):
    module = importlib.import_module(f"workbench.storage.{name}")
    assert module.__doc__ and ">>>" in module.__doc__, f"{name} needs a usage example"
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_package_docstring_example():
    assert doctest.testmod(workbench.storage).failed == 0
