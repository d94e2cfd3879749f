"""Moving the virtual clock from a request body: forward only."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workbench import Workbench
from workbench.core.errors import ClockBackwards, ValidationError
from workbench.migration import move_clock


@pytest.fixture
def wb():
    return Workbench(seed=0, start=datetime(2022, 1, 1, tzinfo=UTC))


def test_now_and_advance_seconds_move_it_forward(wb):
    assert move_clock(wb, {"now": "2022-05-04T00:00:00Z"}) == datetime(2022, 5, 4, tzinfo=UTC)
    assert move_clock(wb, {"now": "2022-05-04T02:01:00+02:00"}) == datetime(
        2022, 5, 4, 0, 1, tzinfo=UTC
    )
    half = datetime(2022, 5, 4, 0, 2, 0, 500000, UTC)
    assert move_clock(wb, {"advance_seconds": 60.5}) == half
    # The time as the clock prints it (no fraction) is no move, not a step back.
    assert move_clock(wb, {"now": "2022-05-04T00:02:00Z"}) == half
    assert move_clock(wb, {"now": "2022-09-19T00:00:00"}) == datetime(2022, 9, 19, tzinfo=UTC)
    assert move_clock(wb, {"advance_seconds": 0}) == wb.now()


@pytest.mark.parametrize("body", [{"now": "2021-12-31T23:59:59Z"}, {"advance_seconds": -1}])
def test_backwards_is_refused_and_the_clock_stays(wb, body):
    with pytest.raises(ClockBackwards) as info:
        move_clock(wb, body)
    assert "backwards" in info.value.message and isinstance(info.value, ValidationError)
    assert wb.now() == datetime(2022, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "body",
    [
        [],
        {},
        {"now": "2023-01-01T00:00:00Z", "advance_seconds": 1},
        {"when": "2023-01-01"},
        {"now": "next tuesday"},
        {"now": 5},
        {"advance_seconds": "5"},
        {"advance_seconds": True},
        {"advance_seconds": float("nan")},
        {"advance_seconds": 1e300},
    ],
)
def test_bad_bodies_are_validation_errors(wb, body):
    with pytest.raises(ValidationError):
        move_clock(wb, body)
    assert wb.now() == datetime(2022, 1, 1, tzinfo=UTC)


def test_moving_the_clock_finishes_a_deploy(wb):
    zone = wb.create_zone("example.com", plan="pro").id
    move_clock(wb, {"now": "2022-09-19T00:00:00Z"})
    wb.migration.deploy(zone, wb.migration.review(zone).config)
    move_clock(wb, {"advance_seconds": 120})
    assert wb.waf_legacy.retired(zone)
