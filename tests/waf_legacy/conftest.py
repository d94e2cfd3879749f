"""Fixtures for the old-WAF tests (the small catalogue lives in waf_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from waf_helpers import small_catalog  # noqa: E402

from workbench import Workbench  # noqa: E402
from workbench.waf_legacy import WafLegacyService  # noqa: E402


@pytest.fixture
def wb():
    bench = Workbench(seed=0)
    # The Workbench's own service, on the small catalogue (wb.waf_legacy is this one).
    bench.__dict__["_waf_legacy"] = WafLegacyService(bench, small_catalog())
    return bench


@pytest.fixture
def waf(wb):
    return wb.waf_legacy


@pytest.fixture
def zones(wb):
    return {
        p: wb.create_zone(f"{p}.example", plan=p).id
        for p in ("free", "pro", "business", "enterprise")
    }


@pytest.fixture
def zone(zones):
    return zones["pro"]
