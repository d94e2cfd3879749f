"""The usage examples in the traffic and logs modules' docstrings run as tests.

(tests/test_doctests.py lists its own packages; these two are run here.)
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import workbench.logs
import workbench.traffic

MODULES = sorted(
    name
    for package in (workbench.traffic, workbench.logs)
    for _, name, _ in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
    if name != "workbench.traffic.generators"  # another helper's module, tested with its own tests
) + ["workbench.traffic", "workbench.logs"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
