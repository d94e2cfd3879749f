"""The traffic pipeline: requests through a zone's security systems, into security events.

Which systems run is read from the zone (see :mod:`workbench.traffic.zone_plan`
for the order and conventions) unless ``systems=`` says otherwise. Each
request gets a seeded 16-hex ray id and a time from the virtual clock, which
moves ``step_ms`` per request (an imported request keeps its own time); it
yields its final action and one event per rule that acted.

Two replay paths give exactly the same events, each a backend of
:mod:`workbench.replay` (:mod:`._memory`): ``path="table"`` (DuckDB, the
default, for volume; DuckDB checks one chunk on a worker thread while this
thread prepares the next and finishes the previous) and ``path="request"`` (one
request at a time). The pipeline stages the chunks (Requests, ray ids, times)
and makes the event rows of each decided chunk; the backend decides them.

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
from ._backend import Backend, Chunk
from ._evaluate import Context
from ._memory import RequestBackend, TableBackend

if TYPE_CHECKING:
    from ..core.platform import Workbench
    from ..core.security import Verdict

PATHS = ("table", "request")
#: The backend of each path.
BACKENDS: dict[str, type[RequestBackend] | type[TableBackend]] = {
    "table": TableBackend,
    "request": RequestBackend,
}
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
    #: Whole-table counters and seconds by step (see :class:`~workbench.replay._memory.TableBackend`).
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
    """A zone's systems, ready to replay requests (the plan is read afresh at each replay,
    unless ``plan`` fixes it: the what-if's sides)."""

    def __init__(
        self,
        wb: Workbench,
        zone_id: str,
        *,
        systems: Any = "auto",
        step_ms: int = 10,
        plan: ZonePlan | None = None,
    ) -> None:
        self.wb = wb
        self.zone = wb.zone(zone_id)
        self.systems = systems
        if step_ms < 0:
            raise ValueError("step_ms must be >= 0")
        self.step_ms = step_ms
        self._plan = plan

    def plan(self) -> ZonePlan:
        """The zone's plan as configured now (or the one given)."""
        if self._plan is not None:
            return self._plan
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
        plan = self.plan()
        run = _Run(self, path, log, keep_events, seed, plan.systems)
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
                backend: Backend[Iterable[Chunk], _Run, dict[str, Any]] = BACKENDS[path]()
                run.stats = backend.replay(
                    plan, run.staged(_chunks(requests, chunk_size, first)), run
                )
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
    """One replay under way: it stages the backend's chunks and makes the events of each
    decided one (the backend's :class:`~._backend.ChunkSink`), and keeps what they gave."""

    def __init__(
        self,
        pipe: Pipeline,
        path: str,
        log: Any,
        keep_events: bool,
        seed: int | None,
        systems: list[str],
    ) -> None:
        self.pipe, self.path, self.log, self.keep_events = pipe, path, log, keep_events
        self.systems = systems
        wb = pipe.wb
        self.rays = random.Random(int(wb.ids.new_id(), 16) if seed is None else seed)
        self.templates: Templates | None = None
        self.ray_ids: list[str] = []
        self.times_ms: list[int] = []
        self.actions: list[str | None] = []
        self.labels: list[str] = []
        self.frames: list[Any] = []
        self.bar: Any = None
        #: The backend's counters and seconds by step (the table backend's).
        self.stats: dict[str, Any] = {}
        #: Main-thread seconds the backend does not count: making Requests, ray ids and
        #: times (``requests``) and the event rows and the log (``events``).
        self.seconds = {"requests": 0.0, "events": 0.0}
        self.started = time.perf_counter()

    def staged(self, chunks: Iterable[list[Any]]) -> Iterator[Chunk]:
        """Each chunk's Requests, ray ids and times, made as the backend asks for it."""
        for chunk in chunks:
            clock = time.perf_counter()
            reqs = [Request.from_raw(r) for r in chunk]
            parts = Parts(reqs)  # listed once, read by the context, the table and the events
            ctx = self.pipe._context(parts, self.rays)
            self.seconds["requests"] += time.perf_counter() - clock
            yield Chunk(reqs, ctx, parts)

    def all_staged(self) -> None:
        if self.log is not None:
            # Compact the log while DuckDB checks the last chunk, not after it.
            self.log.checkpoint()

    def emit(self, chunk: Chunk, ids: np.ndarray, verdicts: list[Verdict]) -> None:
        """A decided chunk's events, into the log and the results."""
        clock = time.perf_counter()
        templates = self.templates
        if templates is None or templates.verdicts is not verdicts:
            # A new list of verdicts (per request, one per chunk): new templates.
            templates = self.templates = Templates(verdicts)
        templates.refresh()
        parts, ctx = chunk.parts, chunk.ctx
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
        self.actions.extend(final_actions(ids, templates).tolist())
        self.labels.extend(parts.attribute("label"))
        self.seconds["events"] += time.perf_counter() - clock
        self.bar.update(len(parts.requests))

    def result(self) -> Replay:
        frames = self.frames
        events = pd.concat(frames, ignore_index=True) if frames else empty_frame()
        stats: dict[str, Any] = {}
        if self.path == "table":
            # Steps in the order they run: requests, the backend's, events, then waiting.
            backend = dict(self.stats.get("seconds", {}))
            wait = backend.pop("wait", 0.0)
            seconds = {"requests": self.seconds["requests"], **backend}
            seconds.update(events=self.seconds["events"], wait=wait)
            stats = {**{k: v for k, v in self.stats.items() if k != "seconds"}, "seconds": seconds}
        return Replay(
            self.path,
            self.ray_ids,
            self.times_ms,
            self.actions,
            self.labels,
            events,
            time.perf_counter() - self.started,
            self.systems,
            stats,
        )


def _chunks(items: Iterable[Any], size: int, first: int) -> Iterator[list[Any]]:
    """``items`` in lists of ``size``, the first one ``first`` long."""
    it = iter(items)
    chunk = list(itertools.islice(it, first))
    while chunk:
        yield chunk
        chunk = list(itertools.islice(it, size))
