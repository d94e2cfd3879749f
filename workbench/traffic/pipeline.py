"""The traffic pipeline: requests through a zone's security systems, into security events.

Which systems run is read from the zone (see :mod:`workbench.traffic.zone_plan`
for the order and conventions) unless ``systems=`` says otherwise. Each
request gets a seeded 16-hex ray id and a time from the virtual clock, which
moves ``step_ms`` per request (an imported request keeps its own time); it
yields its final action and one event per rule that acted.

Two replay paths give exactly the same events (see
:mod:`workbench.traffic.evaluate`): ``path="table"`` (DuckDB, the default, for
volume) and ``path="request"`` (one request at a time).

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="enterprise")
    >>> _ = wb.firewall.create_rules(zone.id, [
    ...     {"filter": {"expression": 'http.request.uri.path contains "/admin"'}, "action": "block"}])
    >>> pipe = Pipeline(wb, zone.id, systems="none")
    >>> run = pipe.replay([Request(url="https://example.com/admin"), Request(url="/")], progress=False)
    >>> run.actions, run.events[["source", "action", "path"]].values.tolist()
    (['block', None], [['firewallRules', 'block', '/admin']])
    >>> len(run.ray_ids[0]), pipe.run(Request(url="/admin/x")).action
    (16, 'block')

Long replays show a progress bar (:mod:`workbench.traffic.progress`); it
stays off under ``NBVAL``/``CI`` and when output is not a terminal or notebook.
"""

from __future__ import annotations

import gc
import itertools
import random
import time
from collections.abc import Iterable, Iterator, Sized
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..logs.schema import empty_frame
from .evaluate import Context, Evaluator
from .events import Templates, event_frame, final_actions, request_columns
from .progress import progress_bar
from .request import Request
from .zone_plan import ZonePlan, zone_plan

if TYPE_CHECKING:
    from ..core.platform import Workbench

PATHS = ("table", "request")
#: Replays at least this long show a progress bar by default.
PROGRESS_FROM = 20_000


@dataclass
class RequestResult:
    """One request's outcome: its ray id, time, final action (None: it reached the origin), events."""

    ray_id: str
    datetime: Any
    action: str | None
    events: list[dict[str, Any]]


@dataclass
class Replay:
    """What a replay gave: the events (the log's columns) and each request's final action."""

    path: str
    ray_ids: list[str]
    times_ms: list[int]
    actions: list[str | None]
    labels: list[str]
    events: Any  # pandas DataFrame
    seconds: float
    systems: list[str] = field(default_factory=list)
    #: Whole-table counters and seconds by step (see :class:`~workbench.traffic.evaluate.Evaluator`).
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def requests(self) -> int:
        """How many requests were replayed."""
        return len(self.ray_ids)

    def summary(self) -> Any:
        """Requests by label (rows) and final action (columns; "pass" for none)."""
        frame = pd.DataFrame({"label": self.labels, "action": [a or "pass" for a in self.actions]})
        return pd.crosstab(frame["label"], frame["action"])


class Pipeline:
    """A zone's systems, ready to replay requests (the plan is read afresh at each replay)."""

    def __init__(
        self, wb: Workbench, zone_id: str, *, systems: Any = "auto", step_ms: int = 10
    ) -> None:
        self.wb = wb
        self.zone = wb.zone(zone_id)
        self.systems = systems
        if step_ms < 0:
            raise ValueError("step_ms must be >= 0")
        self.step_ms = step_ms

    def plan(self) -> ZonePlan:
        """The zone's plan as configured now."""
        return zone_plan(self.wb, self.zone.id, self.systems)

    def run(self, request: Any) -> RequestResult:
        """One request through the per-request path (the clock moves as in a replay)."""
        result = self.replay([request], path="request", progress=False)
        events = result.events.to_dict("records")
        when = pd.Timestamp(result.times_ms[0], unit="ms", tz="UTC").to_pydatetime()
        return RequestResult(result.ray_ids[0], when, result.actions[0], events)

    def replay(
        self,
        requests: Iterable[Any],
        *,
        path: str = "table",
        log: Any = None,
        chunk_size: int = 100_000,
        progress: bool | None = None,
        seed: int | None = None,
        keep_events: bool = True,
    ) -> Replay:
        """Run ``requests`` (Requests or raw requests) through the zone; see the module docstring.

        ``log`` (an :class:`~workbench.logs.EventLog`) receives the events chunk by
        chunk. ``seed`` fixes the ray ids (default: drawn from the Workbench's ids).
        ``keep_events=False`` keeps only the log's copy (long replays). ``progress``
        forces the bar on or off.
        """
        if path not in PATHS:
            raise ValueError(f"path must be one of {', '.join(PATHS)}, got {path!r}")
        if chunk_size < 1:
            raise ValueError("chunk_size must be >= 1")
        total = len(requests) if isinstance(requests, Sized) else None
        rays = random.Random(int(self.wb.ids.new_id(), 16) if seed is None else seed)
        evaluator = Evaluator(self.plan())
        templates = Templates(evaluator.verdicts)
        ray_ids: list[str] = []
        times_ms: list[int] = []
        actions: list[str | None] = []
        labels: list[str] = []
        frames: list[Any] = []
        started = time.perf_counter()
        long = total is not None and total >= PROGRESS_FROM
        show = progress if progress is not None else (None if long else False)
        # Millions of small objects live through a replay; the cyclic collector would
        # rescan them again and again for nothing (they hold no cycles), so it pauses.
        collecting = gc.isenabled()
        gc.disable()
        try:
            with progress_bar(total or 0, f"replay ({path})", show) as bar:
                for chunk in _chunks(requests, chunk_size):
                    reqs = [Request.from_raw(r) for r in chunk]
                    ctx = self._context(reqs, rays)
                    if path == "table":
                        ids = evaluator.whole_table(reqs, ctx)
                    else:
                        # Per request, every request has its own verdict: start afresh
                        # each chunk so the templates never grow past one chunk.
                        evaluator.verdicts.clear()
                        templates = Templates(evaluator.verdicts)
                        ids = evaluator.per_request(reqs, ctx)
                    columns = request_columns(reqs, ctx.ray_ids, ctx.times_ms)
                    frame = event_frame(self.zone.id, columns, ids, templates)
                    if log is not None:
                        log.append(frame)
                    if keep_events:
                        frames.append(frame)
                    ray_ids.extend(ctx.ray_ids)
                    times_ms.extend(ctx.times_ms)
                    actions.extend(final_actions(ids, templates).tolist())
                    labels.extend(r.label for r in reqs)
                    bar.update(len(reqs))
        finally:
            if collecting:
                gc.enable()
        events = pd.concat(frames, ignore_index=True) if frames else empty_frame()
        return Replay(
            path,
            ray_ids,
            times_ms,
            actions,
            labels,
            events,
            time.perf_counter() - started,
            evaluator.plan.systems,
            {**evaluator.stats, "seconds": dict(evaluator.seconds)} if path == "table" else {},
        )

    def _context(self, reqs: list[Request], rays: random.Random) -> Context:
        """Ray ids and times for a chunk; the clock moves ``step_ms`` per request."""
        n = len(reqs)
        start = self.wb.clock.now_ms()
        clock = (start + self.step_ms * np.arange(1, n + 1, dtype=np.int64)).tolist()
        times = [clock[i] if r.timestamp is None else _ms(r.timestamp) for i, r in enumerate(reqs)]
        if n and self.step_ms:
            self.wb.advance(milliseconds=self.step_ms * n)
        ray_ids = [f"{rays.getrandbits(64):016x}" for _ in range(n)]
        return Context(ray_ids, times, self.zone.name, self.zone.plan)


def _ms(when: datetime) -> int:
    """Milliseconds since the epoch; a time without a zone is read as UTC (logs are)."""
    aware = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return int(aware.timestamp() * 1000)


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(items)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def replay(
    wb: Workbench, zone_id: str, requests: Iterable[Any], *, systems: Any = "auto", **options: Any
) -> Replay:
    """``Pipeline(wb, zone_id, systems=systems).replay(requests, **options)``."""
    return Pipeline(wb, zone_id, systems=systems).replay(requests, **options)
