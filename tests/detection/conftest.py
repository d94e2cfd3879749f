"""Fixtures for the detection tests: compiled catalogues and held-out labelled traffic."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fields import request_fields  # noqa: E402
from verdicts import NewSystem, OldSystem  # noqa: E402

from workbench.traffic.generators import generate  # noqa: E402

#: A seed the catalogues were never tuned on.
HELD_OUT_SEED = 20261124
#: Requests per label in the held-out set.
HELD_OUT = {
    "sqli": 2000,
    "xss": 2000,
    "cmdi": 2000,
    "traversal": 2000,
    "scanner": 300,
    "cms": 300,
    "benign": 3500,
    "api": 1200,
    "bot": 300,
}


@pytest.fixture(scope="session")
def new_system() -> NewSystem:
    return NewSystem(paranoia=2, threshold=40)


@pytest.fixture(scope="session")
def old_system() -> OldSystem:
    return OldSystem(sensitivity="high")


@pytest.fixture(scope="session")
def held_out() -> list[tuple[str, dict]]:
    """``(label, fields)`` for the held-out generated traffic."""
    reqs = generate(sum(HELD_OUT.values()), seed=HELD_OUT_SEED, mix=dict(HELD_OUT))
    return [(r.label, request_fields(r)) for r in reqs]
