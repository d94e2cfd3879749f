"""The virtual clock every part of a Workbench reads.

Time moves only when someone advances it, so runs are repeatable: alarms,
bookmarks, event timestamps and ``created_on`` all come from here.

    >>> from datetime import datetime, timezone
    >>> clock = VirtualClock(datetime(2026, 1, 1, tzinfo=timezone.utc))
    >>> clock.advance(seconds=90).isoformat()
    '2026-01-01T00:01:30+00:00'
    >>> clock.now_ms()
    1767225690000
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

DEFAULT_START = datetime(2026, 1, 1, tzinfo=UTC)


class VirtualClock:
    """A clock that starts at ``start`` and moves only through :meth:`advance`."""

    def __init__(self, start: datetime = DEFAULT_START) -> None:
        if start.tzinfo is None:
            raise ValueError("start must be timezone-aware (for example tzinfo=timezone.utc)")
        # Integer milliseconds are the unit of the platform (Date.now()), so keep
        # time as an int and derive datetimes from it: no float drift.
        self._ms = int(start.timestamp() * 1000)
        self._listeners: list[Callable[[int], None]] = []

    def now(self) -> datetime:
        """The current virtual time as an aware UTC datetime."""
        return datetime.fromtimestamp(self._ms / 1000, tz=UTC)

    def now_ms(self) -> int:
        """The current virtual time in integer milliseconds since the epoch."""
        return self._ms

    def advance(
        self,
        delta: timedelta | None = None,
        *,
        days: float = 0,
        hours: float = 0,
        minutes: float = 0,
        seconds: float = 0,
        milliseconds: float = 0,
    ) -> datetime:
        """Move time forward and return the new time. Time never goes back."""
        step = (delta or timedelta()) + timedelta(
            days=days, hours=hours, minutes=minutes, seconds=seconds, milliseconds=milliseconds
        )
        ms = round(step.total_seconds() * 1000)
        if ms < 0:
            raise ValueError(f"advance: time cannot go back (asked for {ms} ms)")
        self._ms += ms
        for listener in list(self._listeners):
            listener(self._ms)
        return self.now()

    def set_ms(self, ms: int) -> None:
        """Jump to ``ms`` (not earlier than now); used by runtimes that own their loop."""
        if ms < self._ms:
            raise ValueError(f"set_ms: time cannot go back ({ms} < {self._ms})")
        self._ms = ms

    def on_advance(self, listener: Callable[[int], None]) -> None:
        """Call ``listener(now_ms)`` after every advance."""
        self._listeners.append(listener)


def iso(dt: datetime) -> str:
    """ISO-8601 UTC with a ``Z`` and no fraction, as the v4 API prints timestamps."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
