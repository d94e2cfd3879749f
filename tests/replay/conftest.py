"""Fixtures of the replay tests: the traffic tests' zone and requests, and one local Spark
session (starting one takes ~20 s).

The zone and its stand-in catalogues live in tests/traffic/traffic_helpers.py, shared
with the traffic tests.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "traffic"))

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


@pytest.fixture(scope="session")
def spark():
    # pyspark is in the test extra: a missing pyspark fails these tests rather than skips them.
    importlib.import_module("pyspark")
    from workbench.replay import spark_session

    session = spark_session(cores=2)
    yield session
    session.stop()
