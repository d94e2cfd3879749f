"""Fixtures of the tuning tests (zones and bodies live in tuning_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from tuning_helpers import migrated_zone  # noqa: E402

from workbench.traffic.generators import generate  # noqa: E402


@pytest.fixture(scope="module")
def strict():
    """A migrated Pro zone at PL4/25 and a what-if of 1,500 generated requests over it."""
    wb, zone = migrated_zone()
    whatif = wb.tuning.whatif(zone.id, generate(1500, seed=1), progress=False)
    return wb, zone, whatif


@pytest.fixture(scope="module")
def false_positives(strict):
    """Ray ids of benign requests the strict zone blocks (OWASP's false positives)."""
    _, _, w = strict
    r = w.requests
    found = r[r.label.isin(["benign", "api", "bot"]) & (r.new_action == "block")]
    assert len(found) >= 2, "the strict configuration should block some benign requests"
    # Two on the path with the most of them, so that a skip rule has a condition to share.
    path = found.path.value_counts().index[0]
    same = found[found.path == path]
    assert len(same) >= 2
    return list(same.ray_id[:2])
