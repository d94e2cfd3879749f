"""The traffic pipeline: requests through a zone's security systems, into security events.

Which systems run is read from the zone (see :mod:`workbench.traffic.zone_plan`
for the order and conventions) unless ``systems=`` says otherwise. Each
request gets a seeded 16-hex ray id and a time from the virtual clock, which
moves ``step_ms`` per request (an imported request keeps its own time); it
yields its final action and one event per rule that acted.

Two replay paths give exactly the same events (see
:mod:`workbench.replay._evaluate`): ``path="table"`` (DuckDB, the default, for
volume; DuckDB checks one chunk on a worker thread while this thread prepares
the next and finishes the previous) and ``path="request"`` (one request at a
time).

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
from collections import deque
from collections.abc import Iterable, Iterator, Sized
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..logs.schema import empty_frame
from ..traffic.events import Templates, event_frame, final_actions, request_columns
from ..traffic.parts import Parts
from ..traffic.progress import progress_bar
from ..traffic.request import Request, epoch_ms
from ..traffic.zone_plan import ZonePlan, zone_plan
from ._evaluate import Context, Evaluator, Staged

if TYPE_CHECKING:
    from ..core.platform import Workbench

PATHS = ("table", "request")
#: Replays at least this long show a progress bar by default.
PROGRESS_FROM = 20_000
#: The whole-table path's first chunk is ``chunk_size`` divided by this (at least 1 long).
FIRST_CHUNK_SHARE = 4


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
    #: Whole-table counters and seconds by step (see :class:`~workbench.replay._evaluate.Evaluator`).
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
        chunk; the whole-table path's first chunk is shorter (:data:`FIRST_CHUNK_SHARE`),
        so that DuckDB starts sooner. ``seed`` fixes the ray ids (default: drawn from
        the Workbench's ids).
        ``keep_events=False`` keeps only the log's copy (long replays). ``progress``
        forces the bar on or off.
        """
        if path not in PATHS:
            raise ValueError(f"path must be one of {', '.join(PATHS)}, got {path!r}")
        if chunk_size < 1:
            raise ValueError("chunk_size must be >= 1")
        total = len(requests) if isinstance(requests, Sized) else None
        run = _Run(self, path, log, keep_events, seed)
        long = total is not None and total >= PROGRESS_FROM
        show = progress if progress is not None else (None if long else False)
        # Millions of small objects live through a replay; the cyclic collector would
        # rescan them again and again for nothing (they hold no cycles), so it pauses.
        collecting = gc.isenabled()
        gc.disable()
        try:
            with (
                log.appending() if log is not None else nullcontext(),
                progress_bar(total or 0, f"replay ({path})", show) as bar,
            ):
                run.bar = bar
                # DuckDB has nothing to check until the first chunk is staged: a small
                # first chunk sets it to work sooner.
                first = max(1, chunk_size // FIRST_CHUNK_SHARE) if path == "table" else chunk_size
                chunks = _chunks(requests, chunk_size, first)
                if path == "table":
                    run.overlapped(chunks)
                else:
                    run.one_by_one(chunks)
        finally:
            if collecting:
                gc.enable()
        return run.result()

    def _context(self, parts: Parts, rays: random.Random) -> Context:
        """Ray ids and times for a chunk; the clock moves ``step_ms`` per request."""
        n = len(parts.requests)
        start = self.wb.clock.now_ms()
        clock = (start + self.step_ms * np.arange(1, n + 1, dtype=np.int64)).tolist()
        stamps = parts.attribute("timestamp")
        times = [clock[i] if t is None else epoch_ms(t) for i, t in enumerate(stamps)]
        if n and self.step_ms:
            self.wb.advance(milliseconds=self.step_ms * n)
        ray_ids = [f"{rays.getrandbits(64):016x}" for _ in range(n)]
        return Context(ray_ids, times, self.zone.name, self.zone.plan)


class _Run:
    """One replay under way: its chunks through the evaluator, and what they gave so far."""

    def __init__(
        self, pipe: Pipeline, path: str, log: Any, keep_events: bool, seed: int | None
    ) -> None:
        self.pipe, self.path, self.log, self.keep_events = pipe, path, log, keep_events
        wb = pipe.wb
        self.rays = random.Random(int(wb.ids.new_id(), 16) if seed is None else seed)
        self.evaluator = Evaluator(pipe.plan())
        self.templates = Templates(self.evaluator.verdicts)
        self.ray_ids: list[str] = []
        self.times_ms: list[int] = []
        self.actions: list[str | None] = []
        self.labels: list[str] = []
        self.frames: list[Any] = []
        self.bar: Any = None
        #: Main-thread seconds the evaluator does not count: making Requests, ray ids and
        #: times (``requests``), the event rows and the log (``events``), and waiting for
        #: DuckDB to finish a chunk's checks (``wait``).
        self.seconds = {"requests": 0.0, "events": 0.0, "wait": 0.0}
        self.started = time.perf_counter()

    def _requests(self, chunk: list[Any]) -> tuple[list[Request], Context, Parts]:
        clock = time.perf_counter()
        reqs = [Request.from_raw(r) for r in chunk]
        parts = Parts(reqs)  # listed once, read by the context, the table and the events
        ctx = self.pipe._context(parts, self.rays)
        self.seconds["requests"] += time.perf_counter() - clock
        return reqs, ctx, parts

    def overlapped(self, chunks: Iterable[list[Any]]) -> None:
        """The whole-table path, DuckDB's checks of chunk k beside Python's work on k-1 and k+1.

        DuckDB releases the GIL while it runs the checks, so worker threads (one per
        DuckDB thread) run them while this thread stages the next chunk (Requests, ray
        ids, times, its table) and finishes the previous one (fallbacks, verdicts,
        events). Each chunk is checked in row ranges (:meth:`Evaluator.check_range`),
        queued in order: a worker done with its range early takes the next chunk's
        first one instead of waiting for the other range. Chunks are staged and
        finished in order, so verdict indexes, ray ids and events are those of a run
        without overlap; at most one chunk is staged ahead of the one being finished
        (the virtual clock has moved past it already when its events are made: events
        carry their own times). ``stats["seconds"]`` times each step on its own
        thread: ``sql`` (each chunk's checks, first range's start to last range's end)
        runs beside the others, and ``wait`` is this thread waiting for it.
        """
        evaluator = self.evaluator
        pending: deque[tuple[Staged, list[Future[None]]]] = deque()
        workers = max(1, evaluator.threads())
        try:
            with ThreadPoolExecutor(workers, thread_name_prefix="workbench-duckdb") as duck:
                try:
                    for chunk in chunks:
                        staged = evaluator.stage(*self._requests(chunk))
                        checks: list[Future[None]] = []
                        pending.append((staged, checks))
                        ranges = evaluator.ranges(staged)
                        checks.extend(duck.submit(evaluator.check_range, staged, k) for k in ranges)
                        if len(pending) > 1:
                            self._finish(*pending[0])
                            pending.popleft()
                    if self.log is not None:
                        # Compact the log while DuckDB checks the last chunk, not after it.
                        self.log.checkpoint()
                    while pending:
                        self._finish(*pending[0])
                        pending.popleft()
                except BaseException:
                    duck.shutdown(wait=True, cancel_futures=True)
                    raise
        except BaseException:
            for staged, _ in pending:  # no range is running any more: drop their tables
                evaluator.release(staged)
            raise

    def _finish(self, staged: Staged, checks: list[Future[None]]) -> None:
        clock = time.perf_counter()
        for checked in checks:
            checked.result()
        self.seconds["wait"] += time.perf_counter() - clock
        ids = self.evaluator.finish(staged)
        self._emit(staged.request_parts, staged.ctx, ids)

    def one_by_one(self, chunks: Iterable[list[Any]]) -> None:
        """The per-request path, chunk after chunk."""
        evaluator = self.evaluator
        for chunk in chunks:
            reqs, ctx, parts = self._requests(chunk)
            # Per request, every request has its own verdict: start afresh each chunk so
            # the templates never grow past one chunk.
            evaluator.verdicts.clear()
            self.templates = Templates(evaluator.verdicts)
            self._emit(parts, ctx, evaluator.per_request(reqs, ctx))

    def _emit(self, parts: Parts, ctx: Context, ids: np.ndarray) -> None:
        """A decided chunk's events, into the log and the results."""
        clock = time.perf_counter()
        templates = self.templates
        templates.refresh()
        # Only requests with events give rows: their columns are all event_frame reads.
        acting = np.flatnonzero(np.asarray(templates.count, dtype=np.int64)[ids])
        columns = request_columns(parts, ctx.ray_ids, ctx.times_ms, acting)
        requests = parts.requests
        frame = event_frame(
            self.pipe.zone.id,
            columns,
            ids[acting],
            templates,
            [requests[i] for i in acting.tolist()],
        )
        if self.log is not None:
            self.log.append(frame, normalised=True)
        if self.keep_events:
            self.frames.append(frame)
        self.ray_ids.extend(ctx.ray_ids)
        self.times_ms.extend(ctx.times_ms)
        self.actions.extend(final_actions(ids, self.templates).tolist())
        self.labels.extend(parts.attribute("label"))
        self.seconds["events"] += time.perf_counter() - clock
        self.bar.update(len(parts.requests))

    def result(self) -> Replay:
        frames = self.frames
        events = pd.concat(frames, ignore_index=True) if frames else empty_frame()
        ev = self.evaluator
        seconds = {"requests": self.seconds["requests"], **ev.seconds, **self.seconds}
        return Replay(
            self.path,
            self.ray_ids,
            self.times_ms,
            self.actions,
            self.labels,
            events,
            time.perf_counter() - self.started,
            ev.plan.systems,
            {**ev.stats, "seconds": seconds} if self.path == "table" else {},
        )


def _chunks(items: Iterable[Any], size: int, first: int) -> Iterator[list[Any]]:
    """``items`` in lists of ``size``, the first one ``first`` long."""
    it = iter(items)
    chunk = list(itertools.islice(it, first))
    while chunk:
        yield chunk
        chunk = list(itertools.islice(it, size))
