"""Fixtures for the storage tests (helpers live in storage_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from storage_helpers import Probe  # noqa: E402

from workbench.storage import Runtime  # noqa: E402


@pytest.fixture
def rt() -> Runtime:
    return Runtime()


@pytest.fixture
def sqlite_stub(rt: Runtime) -> Any:
    ns = rt.namespace(Probe, storage="sqlite")
    return ns.get(ns.id_from_name("probe"))


@pytest.fixture
def kv_stub(rt: Runtime) -> Any:
    ns = rt.namespace(Probe, storage="kv", name="ProbeKV")
    return ns.get(ns.id_from_name("probe"))


@pytest.fixture(params=["sqlite", "kv"])
def stub(request: Any, rt: Runtime) -> Any:
    ns = rt.namespace(Probe, storage=request.param, name=f"Probe_{request.param}")
    return ns.get(ns.id_from_name("probe"))
