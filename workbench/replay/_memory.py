"""The two backends over requests in memory: per request, and DuckDB over a chunk's table.

Both read :class:`~._backend.Chunk` s staged by the caller (the pipeline gives
each its ray ids and times) and hand each decided chunk to a
:class:`~._backend.ChunkSink`, in chunk order. The checks run in an
:class:`~._evaluate.Evaluator`: per request (:class:`RequestBackend`), or over
the chunk's DuckDB table (:class:`TableBackend`), DuckDB checking chunk k on
worker threads while this thread stages chunk k+1 and emits chunk k-1.

    >>> from workbench.core.security import Check, SecurityEvent, StaticPlan, Verdict
    >>> from workbench.traffic.parts import Parts
    >>> from workbench.traffic.request import Request
    >>> from workbench.traffic.zone_plan import ZonePlan
    >>> plan = ZonePlan(StaticPlan([Check("r1", 'http.request.uri.path contains "/admin"')],
    ...     lambda m: Verdict([SecurityEvent("firewallRules", "block", "r1", None, "")], "block")
    ...     if m("r1") else Verdict([])))
    >>> reqs = [Request(url="/admin"), Request(url="/")]
    >>> class Actions:
    ...     def emit(self, chunk, ids, verdicts): print([verdicts[i].action for i in ids])
    ...     def all_staged(self): pass
    >>> for backend in (RequestBackend(), TableBackend()):
    ...     _ = backend.replay(plan, [Chunk(reqs, Context.plain(2), Parts(reqs))], Actions())
    ['block', None]
    ['block', None]
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ._backend import Chunk, ChunkSink
from ._evaluate import Context, Evaluator, Staged

if TYPE_CHECKING:
    from ..traffic.zone_plan import ZonePlan

__all__ = ["Context", "RequestBackend", "TableBackend"]


class RequestBackend:
    """Each request on its own, in Python (the reference every other backend agrees with)."""

    name = "request"

    def replay(self, plan: ZonePlan, source: Iterable[Chunk], sink: ChunkSink) -> dict[str, Any]:
        """Every chunk of ``source`` decided request by request; no counters (an empty dict)."""
        evaluator = Evaluator(plan)
        for chunk in source:
            # Every request has its own verdict here: a new list each chunk, so that what
            # the sink keeps of them never grows past one chunk.
            evaluator.verdicts = []
            ids = evaluator.per_request(chunk.requests, chunk.ctx)
            sink.emit(chunk, ids, evaluator.verdicts)
        sink.all_staged()
        return {}


class TableBackend:
    """DuckDB over each chunk's in-memory table, checks beside Python's work on other chunks."""

    name = "table"

    def __init__(self, con: Any = None) -> None:
        #: The DuckDB connection (None: the evaluator opens one).
        self.con = con

    def replay(self, plan: ZonePlan, source: Iterable[Chunk], sink: ChunkSink) -> dict[str, Any]:
        """DuckDB's checks of chunk k beside Python's work on k-1 and k+1.

        DuckDB releases the GIL while it runs the checks, so worker threads (one per
        DuckDB thread) run them while this thread stages the next chunk (its table)
        and finishes the previous one (fallbacks, verdicts, the sink's events). Each
        chunk is checked in row ranges (:meth:`Evaluator.check_range`), queued in
        order: a worker done with its range early takes the next chunk's first one
        instead of waiting for the other range. Chunks are staged and finished in
        order, so verdict indexes are those of a run without overlap; at most one
        chunk is staged ahead of the one being finished. Returns the evaluator's
        counters, with ``seconds`` by step, each timed on its own thread: ``sql``
        (each chunk's checks, first range's start to last range's end) runs beside
        the others, and ``wait`` is this thread waiting for it.
        """
        evaluator = Evaluator(plan, self.con)
        waited = [0.0]
        pending: deque[tuple[Chunk, Staged, list[Future[None]]]] = deque()
        workers = max(1, evaluator.threads())
        try:
            with ThreadPoolExecutor(workers, thread_name_prefix="workbench-duckdb") as duck:
                try:
                    for chunk in source:
                        staged = evaluator.stage(chunk.requests, chunk.ctx, chunk.parts)
                        checks: list[Future[None]] = []
                        pending.append((chunk, staged, checks))
                        ranges = evaluator.ranges(staged)
                        checks.extend(duck.submit(evaluator.check_range, staged, k) for k in ranges)
                        if len(pending) > 1:
                            _finish(evaluator, *pending[0], sink, waited)
                            pending.popleft()
                    sink.all_staged()
                    while pending:
                        _finish(evaluator, *pending[0], sink, waited)
                        pending.popleft()
                except BaseException:
                    duck.shutdown(wait=True, cancel_futures=True)
                    raise
        except BaseException:
            for _, staged, _ in pending:  # no range is running any more: drop their tables
                evaluator.release(staged)
            raise
        return {**evaluator.stats, "seconds": {**evaluator.seconds, "wait": waited[0]}}


def _finish(
    evaluator: Evaluator,
    chunk: Chunk,
    staged: Staged,
    checks: list[Future[None]],
    sink: ChunkSink,
    waited: list[float],
) -> None:
    clock = time.perf_counter()
    for checked in checks:
        checked.result()
    waited[0] += time.perf_counter() - clock
    sink.emit(chunk, evaluator.finish(staged), evaluator.verdicts)
