"""Fixtures of the traffic tests (the zone and its catalogues live in traffic_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from traffic_helpers import workbench_with_zone  # noqa: E402

from workbench.traffic.generators import generate  # noqa: E402


@pytest.fixture
def zone_wb():
    """``(wb, zone_id)``: firewall rules, old WAF on, new WAF's entry point in place."""
    return workbench_with_zone()


@pytest.fixture(scope="session")
def traffic():
    """2,000 generated requests (seeded), shared by the tests that only read them."""
    return generate(2000, seed=21)
