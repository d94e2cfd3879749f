"""The ipywidgets face: panels that drive the simulation from a notebook.

Each panel lives in its own small module and is imported lazily, so importing
``workbench`` never pulls in ipywidgets until a panel is asked for.

    >>> from workbench.widgets import ExpressionChecker   # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import Any

_PANELS = {
    "EventsExplorer": "events_explorer",
    "ExpressionChecker": "expression_checker",
    "MigrationWizard": "migration_wizard",
    "RuleBuilder": "rule_builder",
    "StorageInspector": "storage_inspector",
    "TuningPanel": "tuning_panel",
}

__all__ = sorted(_PANELS)


def __dir__() -> list[str]:
    return __all__


def __getattr__(name: str) -> Any:
    module = _PANELS.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench.widgets' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
