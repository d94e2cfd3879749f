"""The two ways to run a zone's plan over requests; both give the same verdicts.

* **per request**: each distinct expression of the plan is compiled once, then
  evaluated lazily for each request (``decide`` asks only what it needs);
* **whole table**: each distinct expression is compiled once to SQL; the
  decodings and text functions the expressions share are compiled into
  columns computed once per table (:mod:`workbench.replay._shared`), and a
  regex over them runs only where its required literals occur
  (:mod:`workbench.replay._prefilter`). DuckDB fills one boolean column per
  expression over the request table, in row ranges side by side (one per
  thread). Rows are grouped by their distinct vector of booleans,
  ``decide`` runs once per distinct vector, and the verdict joins back to its
  rows. An expression with no SQL translation is evaluated per request (that
  expression only); a row DuckDB cannot hold (text that is not UTF-8) is
  evaluated per request (that row only); and where a guard says an
  expression's SQL cannot be trusted for a row (:mod:`workbench.replay._guards`)
  that expression is evaluated per request for that row.

Both return, for a chunk of requests, the index of each request's verdict in
:attr:`Evaluator.verdicts`; verdicts are kept across chunks.

    >>> from workbench.core.security import Check, SecurityEvent, StaticPlan, Verdict
    >>> from workbench.traffic.request import Request
    >>> from workbench.traffic.zone_plan import ZonePlan
    >>> fw = StaticPlan([Check("r1", 'http.request.uri.path contains "/admin"')],
    ...     lambda m: Verdict([SecurityEvent("firewallRules", "block", "r1", None, "")], "block")
    ...     if m("r1") else Verdict([]))
    >>> ev = Evaluator(ZonePlan(fw))
    >>> reqs = [Request(url="/admin"), Request(url="/"), Request(url="/admin/x")]
    >>> a = ev.per_request(reqs, Context.plain(3))
    >>> b = ev.whole_table(reqs, Context.plain(3))
    >>> [ev.verdicts[i].action for i in a] == [ev.verdicts[i].action for i in b]
    True
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np

from ..core.security import Verdict
from ..rules_language import MANAGED, Expression, compile_expression
from ..traffic.parts import Parts
from ..traffic.request import Request
from ..traffic.zone_plan import ZonePlan
from ._checks import CheckQuery, compile_checks
from ._decide import Decisions
from ._table import load_table, table_data

_TABLE = "_wb_replay_chunk"
#: Chunks of at least twice this many rows are checked in row ranges side by side.
SPLIT_FROM = 10_000


@dataclass
class Context:
    """What the pipeline adds to each request of a chunk: ray ids, times, the zone."""

    ray_ids: Sequence[str]
    times_ms: Sequence[int]
    zone_name: str = ""
    zone_plan: str = ""

    @classmethod
    def plain(cls, n: int) -> Context:
        """A context with empty ray ids and time 0 (examples and tests)."""
        return cls([""] * n, [0] * n)

    def fields_of(self, req: Request, i: int, names: Sequence[str]) -> dict[str, Any]:
        """Request ``i``'s values of ``names``."""
        return req.fields(
            names,
            ray_id=self.ray_ids[i],
            timestamp_ms=self.times_ms[i],
            zone_name=self.zone_name,
            zone_plan=self.zone_plan,
        )


@dataclass
class Staged:
    """A chunk on its way through the whole-table path (see :meth:`Evaluator.stage`)."""

    requests: Sequence[Request]
    ctx: Context
    #: The requests' parts as the table read them (the events read them again).
    request_parts: Parts
    #: The chunk's table in DuckDB, until :meth:`Evaluator.finish` (or ``check``) drops it.
    table: str | None = None
    #: Rows DuckDB cannot hold (evaluated per request).
    bad: list[int] = field(default_factory=list)
    #: The checks' columns as fetched, until :meth:`Evaluator.finish` reads them.
    result: dict[str, Any] | None = None
    #: Where the row ranges of :meth:`Evaluator.check_range` start (and the last ends).
    bounds: list[int] = field(default_factory=list)
    #: Each range's columns as fetched, and when its query ran (perf_counter seconds).
    parts: dict[int, dict[str, Any]] = field(default_factory=dict)
    spans: list[tuple[float, float]] = field(default_factory=list)


class Evaluator:
    """A plan's expressions compiled once, and the verdicts decided so far."""

    def __init__(self, plan: ZonePlan, con: Any = None) -> None:
        self.plan = plan
        self.compiled: list[Expression] = [compile_expression(e, MANAGED) for e in plan.expressions]
        self.fields: list[str] = sorted({f for c in self.compiled for f in c.fields})
        #: Each distinct vector of matches decided once (see ._decide), across chunks.
        self.decisions = Decisions(plan.decide_slots)
        self.verdicts: list[Verdict] = self.decisions.verdicts
        self._query: CheckQuery | None = None  # compiled on first use (see .checks)
        self._con = con
        self._staged = 0  # chunks staged so far (names their tables)
        self._checker: Any = None  # the connection the checks' cursors come from
        self._lock = threading.Lock()  # cursors are made on several threads
        #: Whole-table counters: rows DuckDB could not hold, checks without SQL, and
        #: (row, check) cells a guard sent to the per-request path.
        self.stats = {"rows_left_out": 0, "checks_without_sql": 0, "guarded_cells": 0}
        #: Whole-table seconds by step, each timed on the thread that runs it: ``table``
        #: (Python encoding the columns) and ``load`` (DuckDB loading them; both
        #: :meth:`stage`), ``sql`` (DuckDB's checks of a chunk, its first range's start to
        #: its last range's end, :meth:`check_range`), ``fallback`` (the per-request
        #: fallbacks) and ``decide`` (grouping and deciding the distinct vectors; both
        #: :meth:`finish`). When the pipeline runs the ranges on worker threads, ``sql``
        #: overlaps the other steps: they add up to more than the wall time.
        self.seconds = {"table": 0.0, "load": 0.0, "sql": 0.0, "fallback": 0.0, "decide": 0.0}

    @property
    def con(self) -> Any:
        """The DuckDB connection of the whole-table path (opened on first use)."""
        if self._con is None:
            self._con = duckdb.connect()
            # DuckDB's own progress bar would draw in notebooks (output nbval compares).
            self._con.execute("SET enable_progress_bar = false").fetchall()
        return self._con

    @property
    def query(self) -> CheckQuery:
        """The checks over the lean table (compiled once, on first use; see ._checks)."""
        if self._query is None:
            self._query = compile_checks(self.compiled)
        return self._query

    @property
    def sql(self) -> list[str | None]:
        """Each slot's SQL, or None when it has no translation."""
        return self.query.checks

    # -- per request ------------------------------------------------------------------
    def per_request(self, requests: Sequence[Request], ctx: Context) -> np.ndarray:
        """Decide each request on its own; returns the verdict index of each."""
        ids = np.empty(len(requests), dtype=np.int64)
        compiled, decide = self.compiled, self.plan.decide_slots
        for i, req in enumerate(requests):
            fields = ctx.fields_of(req, i, self.fields)
            seen: dict[int, bool] = {}

            def has(
                slot: int, fields: dict[str, Any] = fields, seen: dict[int, bool] = seen
            ) -> bool:
                found = seen.get(slot)
                if found is None:
                    found = seen[slot] = compiled[slot].matches(fields)
                return found

            ids[i] = len(self.verdicts)
            self.verdicts.append(decide(has))
        return ids

    # -- whole table ------------------------------------------------------------------
    def whole_table(self, requests: Sequence[Request], ctx: Context) -> np.ndarray:
        """Decide each distinct vector of matches once; returns the verdict index of each request.

        The three steps of :meth:`stage`, :meth:`check` and :meth:`finish`, one after the
        other; the pipeline overlaps them across chunks.
        """
        staged = self.stage(requests, ctx)
        self.check(staged)
        return self.finish(staged)

    def stage(
        self, requests: Sequence[Request], ctx: Context, parts: Parts | None = None
    ) -> Staged:
        """Step 1 (the caller's thread): the chunk's table, built in Python and loaded.

        Loading stays on this thread: DuckDB holds the GIL while it reads Python
        strings, and on a thread beside running Python code it would wait for it at
        every batch (several times slower).
        """
        staged = Staged(requests, ctx, parts if parts is not None else Parts(requests))
        if not (self.compiled and requests):
            return staged
        _ = self.sql  # compiled here, once, so that no other thread ever compiles it
        clock = time.perf_counter()
        data = table_data(
            requests,
            self.query.fields,  # what the lean table holds (see ._header_columns)
            ray_ids=ctx.ray_ids,
            times_ms=ctx.times_ms,
            zone_name=ctx.zone_name,
            zone_plan=ctx.zone_plan,
            lean=True,
            parts=staged.request_parts,
        )
        staged.bad = data.bad
        clock = self._lap("table", clock)
        # A name per chunk: the next chunk's table is loaded while this one is checked.
        self._staged += 1
        table = f"{_TABLE}{self._staged}"
        load_table(self.con, table, data)
        staged.table = table
        if self._checker is None:
            # The connection of check, made here: the worker never touches self.con.
            self._checker = self.con.cursor()
        self._lap("load", clock)
        return staged

    def check(self, staged: Staged) -> None:
        """Step 2 (DuckDB): every check over the chunk's table, its row ranges side by
        side on threads (:meth:`check_range` each), then drop the table."""
        ranges = self.ranges(staged)
        try:
            if len(ranges) == 1:
                self.check_range(staged, 0)
            elif ranges:
                with ThreadPoolExecutor(len(ranges)) as pool:
                    list(pool.map(lambda k: self.check_range(staged, k), ranges))
        finally:
            self.release(staged)

    def ranges(self, staged: Staged) -> range:
        """The row ranges :meth:`check_range` takes for this chunk (none: nothing to check).

        DuckDB runs one query's projection on one thread per row group (122,880 rows),
        so a chunk of 100,000 rows as one query would use one core: the chunk is
        checked as one range per DuckDB thread.
        """
        if staged.table is None or not any(s is not None for s in self.sql):
            return range(0)
        if not staged.bounds:
            n = len(staged.requests)
            parts = max(1, min(self.threads(), n // SPLIT_FROM))
            staged.bounds = [n * k // parts for k in range(parts + 1)]
        return range(len(staged.bounds) - 1)

    def threads(self) -> int:
        """DuckDB's threads (its ``threads`` setting, read on each call)."""
        con = self._cursor()
        try:
            return int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
        finally:
            con.close()

    def _cursor(self) -> Any:
        """A cursor of its own for the calling thread (of the checks' connection once
        :meth:`stage` made it: the worker threads never touch ``self.con``)."""
        with self._lock:
            return (self._checker if self._checker is not None else self.con).cursor()

    def check_range(self, staged: Staged, k: int) -> None:
        """Range ``k`` of step 2 (DuckDB, on any thread, on a cursor of its own).

        DuckDB releases the GIL while it runs the checks, so the pipeline runs the
        ranges on worker threads while the caller's thread stages the next chunk and
        finishes the previous one; a thread done with one range takes the next
        queued, of this chunk or the next. :meth:`finish` joins the ranges.
        """
        started = time.perf_counter()
        columns = self.query.projection()
        lo, hi = staged.bounds[k], staged.bounds[k + 1]
        con = self._cursor()
        try:
            staged.parts[k] = self._select(con, str(staged.table), columns, lo, hi)
        finally:
            con.close()
            staged.spans.append((started, time.perf_counter()))

    def release(self, staged: Staged) -> None:
        """Drop the chunk's table (checked, or never to be; no range may be running)."""
        if staged.table is not None:
            con = self._cursor()
            try:
                con.execute(f"DROP TABLE IF EXISTS {staged.table}").fetchall()
            finally:
                con.close()
            staged.table = None

    def finish(self, staged: Staged) -> np.ndarray:
        """Step 3 (Python, in chunk order, once every range is checked): fallbacks, then
        a verdict index per request."""
        self._join(staged)
        requests = staged.requests
        n, width = len(requests), len(self.compiled)
        matrix = np.zeros((n, width), dtype=bool)
        if width and n:
            self._fill(matrix, staged)
        started = time.perf_counter()
        ids = self.decisions.index(matrix)
        self.seconds["decide"] += time.perf_counter() - started
        return ids

    def _fill(self, matrix: np.ndarray, staged: Staged) -> None:
        requests, ctx, result = staged.requests, staged.ctx, staged.result
        sql = self.sql
        clock = time.perf_counter()
        bad = staged.bad
        # Rows x slots to evaluate per request: no SQL, a row DuckDB cannot hold, a failed guard.
        todo = np.zeros(matrix.shape, dtype=bool)
        without = [i for i, s in enumerate(sql) if s is None]
        todo[:, without] = True
        todo[bad, :] = True
        self.stats["rows_left_out"] += len(bad)
        self.stats["checks_without_sql"] = len(without)
        n = len(requests)
        if result is not None:
            idx = np.asarray(result["idx"])
            guard_sql, slot_guards = self.query.guards, self.query.slot_guards
            trusted = [np.ones(n, dtype=bool) for _ in guard_sql]
            for j in range(len(guard_sql)):
                trusted[j][idx] = _bools(result[f"g{j}"])
            with_sql = [i for i, s in enumerate(sql) if s is not None]
            if with_sql:
                # One copy of all the columns: a scattered write per column cost three times
                # as much (0.09 against 0.03 s per 100,000 rows of 248 checks).
                block = np.stack([_bools(result[f"b{i}"]) for i in with_sql]).T
                if len(with_sql) == matrix.shape[1] and np.array_equal(idx, np.arange(n)):
                    matrix[:] = block
                else:
                    matrix[np.ix_(idx, np.asarray(with_sql, dtype=np.intp))] = block
            for i in with_sql:
                for j in slot_guards[i]:
                    untrusted = ~trusted[j]
                    untrusted[bad] = False  # counted as rows left out already
                    self.stats["guarded_cells"] += int(untrusted.sum())
                    todo[:, i] |= untrusted
        staged.result = None
        for row in np.flatnonzero(todo.any(axis=1)).tolist():
            slots = np.flatnonzero(todo[row]).tolist()
            names = sorted({f for i in slots for f in self.compiled[i].fields})
            fields = ctx.fields_of(requests[row], row, names)
            for i in slots:
                matrix[row, i] = self.compiled[i].matches(fields)
        self._lap("fallback", clock)

    def _join(self, staged: Staged) -> None:
        """The ranges' columns as one result (in range order); the table is dropped."""
        self.release(staged)
        parts = [staged.parts[k] for k in sorted(staged.parts)]
        staged.parts = {}
        if staged.spans:
            starts, ends = zip(*staged.spans, strict=True)
            self.seconds["sql"] += max(ends) - min(starts)
            staged.spans = []
        if len(parts) == 1:
            staged.result = parts[0]
        elif parts:
            staged.result = {c: np.ma.concatenate([p[c] for p in parts]) for c in parts[0]}

    def _select(self, con: Any, table: str, columns: list[str], lo: int, hi: int) -> dict[str, Any]:
        """The checks over rows ``lo`` to ``hi`` of the table, fetched as numpy columns."""
        rows = f"(SELECT * FROM {table} WHERE idx >= {lo} AND idx < {hi})"
        query = f"SELECT idx, {', '.join(columns)} FROM {self.query.select(rows)}"
        return dict(con.execute(query).fetchnumpy())

    def _lap(self, name: str, since: float) -> float:
        now = time.perf_counter()
        self.seconds[name] += now - since
        return now


def _bools(column: Any) -> np.ndarray:
    """A fetched BOOLEAN column as a bool array (the SQL is NULL-free; NULL would read as False)."""
    return np.asarray(np.ma.filled(column, False), dtype=bool)
