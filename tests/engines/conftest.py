"""One local Spark session for the engine tests (starting one takes ~20 s)."""

import importlib

import pytest


@pytest.fixture(scope="session")
def spark():
    # pyspark is in the test extra: a missing pyspark fails these tests rather than skips them.
    importlib.import_module("pyspark")
    from workbench.engines.spark_engine import spark_session

    session = spark_session(cores=2)
    yield session
    session.stop()
