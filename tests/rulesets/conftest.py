"""Fixtures for the ruleset tests (the small catalogue lives in ruleset_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ruleset_helpers import small_catalog  # noqa: E402

from workbench import Workbench  # noqa: E402
from workbench.rulesets import RulesetsService  # noqa: E402


@pytest.fixture
def wb():
    return Workbench(seed=0)


@pytest.fixture
def zone(wb):
    return wb.create_zone("example.com", plan="enterprise")


@pytest.fixture
def rs(wb):
    return RulesetsService(wb, catalog=small_catalog())
