"""Moving the virtual clock from a request body: ``{"now": ISO time}`` or ``{"advance_seconds": N}``.

The migration's dates (2022-05-04, 2022-09-19) are read from the clock, so
the HTTP face lets a client move it, forward only. A time without an offset
is taken as UTC; a time within the second the clock shows is no move (the
clock prints no fraction, so a time read from it can be sent back). The move goes through :meth:`Workbench.advance`, so whatever
listens to the clock (alarms, a deploy that is finishing) sees it.

    >>> from datetime import UTC, datetime
    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0, start=datetime(2022, 1, 1, tzinfo=UTC))
    >>> move_clock(wb, {"now": "2022-05-04T00:00:00Z"}).isoformat()
    '2022-05-04T00:00:00+00:00'
    >>> move_clock(wb, {"advance_seconds": 90}).isoformat()
    '2022-05-04T00:01:30+00:00'
    >>> move_clock(wb, {"now": "2022-01-01T00:00:00Z"})
    Traceback (most recent call last):
    ...
    workbench.core.errors.ClockBackwards: the clock cannot move backwards (it reads 2022-05-04T00:01:30Z, and 2022-01-01T00:00:00Z is earlier); time only moves forward
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..core.clock import iso
from ..core.errors import ClockBackwards, ValidationError

if TYPE_CHECKING:
    from ..core.platform import Workbench

_KEYS = ("now", "advance_seconds")


def move_clock(wb: Workbench, body: Any) -> datetime:
    """Move ``wb``'s clock as ``body`` asks (exactly one of its two keys) and return the time."""
    if not isinstance(body, Mapping):
        raise ValidationError('the body must be {"now": "<ISO time>"} or {"advance_seconds": N}')
    unknown = [str(k) for k in body if k not in _KEYS]
    if unknown:
        raise ValidationError(f"unknown field {unknown[0]!r}: use now or advance_seconds")
    given = [k for k in _KEYS if k in body]
    if len(given) != 1:
        raise ValidationError("give exactly one of now and advance_seconds")
    now = wb.now()
    if given == ["now"]:
        target = _parse_time(body["now"])
        if target < now:
            if iso(target) == iso(now):
                return now  # the second the clock shows (it prints no fraction): no move
            raise ClockBackwards(iso(now), f"{iso(target)} is earlier")
        return wb.advance(target - now)
    seconds = body["advance_seconds"]
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not math.isfinite(seconds)
    ):
        raise ValidationError("advance_seconds must be a number of seconds")
    if seconds < 0:
        raise ClockBackwards(iso(now), f"advance_seconds is {seconds}")
    try:
        return wb.advance(seconds=seconds)
    except (OverflowError, ValueError):
        raise ValidationError(f"advance_seconds: {seconds} is too far ahead") from None


def _parse_time(value: Any) -> datetime:
    """An ISO-8601 time (``Z`` or an offset; none means UTC)."""
    if not isinstance(value, str):
        raise ValidationError("now must be an ISO-8601 time, for example 2022-09-19T00:00:00Z")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValidationError(
            f"now: {value!r} is not an ISO-8601 time, for example 2022-09-19T00:00:00Z"
        ) from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
