"""Suite-wide settings: property tests run a fixed sequence of examples in CI, and the test
files listed in ``tests/slow.txt`` are marked ``slow`` (``make check`` leaves them out)."""

import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

_SLOW_LIST = Path(__file__).with_name("slow.txt")


def _slow_files() -> frozenset[str]:
    if not _SLOW_LIST.exists():
        return frozenset()
    lines = _SLOW_LIST.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slow = _slow_files()
    for item in items:
        if item.nodeid.split("::", 1)[0] in slow:
            item.add_marker(pytest.mark.slow)
