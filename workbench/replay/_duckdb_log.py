"""The DuckDB engine: a zone's replay over a Parquet log on this machine, memory bounded.

DuckDB reads the log's files in parallel on ``threads`` and spills to
``temp_directory`` past ``memory_limit`` (see :func:`.parquet_logs.connect`);
the events go to one Parquet file in the event log's order, which
:meth:`workbench.logs.EventLog.from_parquet` opens. A large log's events are
sorted in time slices sized to ``memory_limit`` (:func:`time_slices`), since
one sort of them all needs memory in proportion to the log even when it spills.

    >>> import tempfile, pathlib
    >>> from workbench import Workbench
    >>> from workbench.traffic.request import Request
    >>> from workbench.replay import write_log
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("a.example", plan="enterprise")
    >>> _ = wb.firewall.create_rules(zone.id, [
    ...     {"filter": {"expression": 'http.request.uri.path eq "/x"'}, "action": "block"}])
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_log([Request(url="https://a.example/x"), Request(url="https://a.example/y")], folder)
    2
    >>> done = replay_duckdb(wb, zone.id, folder, folder / "events.parquet", systems="none")
    >>> done.requests, done.events, done.actions
    (2, 1, {'block': 1, 'pass': 1})
"""

from __future__ import annotations

import re
import shutil
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..logs.store import EVENT_ORDER
from ..rules_language.sql_fragments import ident, sql_string
from ..traffic.zone_plan import ZonePlan
from ._log_backend import LogBackend, replay_zone
from ._log_replay import LogReplay
from ._parquet_logs import connect, context_columns, scan

_TYPES = {"string": "VARCHAR", "int": "INTEGER", "bigint": "BIGINT"}


class DuckDBBackend(LogBackend):
    """The replay over a log on a DuckDB connection (the ``duckdb`` backend).

    Given the log (``log``, ``zone``), the events are sorted in time slices of at
    most ``slice_rows`` requests (default: one per KiB of ``memory_limit``), each
    written to a part, then the parts are concatenated in order: DuckDB's sort
    spills, but it still needs memory in proportion to its input (a 1,000,000
    event sort failed under 96 MB), so one sort of a whole 50,000,000-request log
    would fail under 1 GB.
    """

    name = dialect = "duckdb"

    def __init__(
        self,
        con: Any,
        *,
        log: str | Path | None = None,
        zone: str | None = None,
        slice_rows: int | None = None,
    ) -> None:
        if slice_rows is not None and slice_rows < 1:
            raise ValueError(f"slice_rows must be >= 1, got {slice_rows}")
        self.con = con
        self.log, self.zone, self.slice_rows = log, zone, slice_rows
        self._spilled: dict[str, Path] = {}

    def quote(self, name: str) -> str:
        return ident(name)

    def fetch(self, sql: str) -> list[dict[str, Any]]:
        cursor = self.con.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def register(
        self, name: str, rows: list[tuple[Any, ...]], schema: tuple[tuple[str, str], ...]
    ) -> None:
        columns = [c for c, _ in schema]
        frame = pd.DataFrame(rows, columns=columns, dtype=object)
        self.con.register(f"_{name}_frame", frame)
        casts = ", ".join(f"CAST({c} AS {_TYPES[t]}) AS {c}" for c, t in schema)
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT {casts} FROM _{name}_frame"
        ).fetchall()
        self.con.unregister(f"_{name}_frame")

    def materialize(self, name: str, sql: str) -> str | None:
        return None  # a table of every request's key would be held in memory: spill instead

    def spill(self, name: str, sql: str) -> str | None:
        # One Parquet file in the spill folder, written as the rows stream by (bounded
        # memory); the passes after it read it instead of computing every check again.
        folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self._spill()))
        self._spilled[name] = folder
        target = folder / "rows"
        # A file per thread: one file's writer would take the rows one thread at a time.
        self.con.execute(
            f"COPY ({sql}) TO ? (FORMAT PARQUET, PER_THREAD_OUTPUT true)",
            [str(target)],
        ).fetchall()
        return f"read_parquet({sql_string(str(target / '*.parquet'))})"

    def release(self, name: str) -> None:
        folder = self._spilled.pop(name, None)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def slices(self) -> list[tuple[str | None, str | None]]:
        """Time ranges ``[start, end)`` (None: open) to sort the events in, in time order."""
        if self.log is None:
            return [(None, None)]
        budget = self.slice_rows or max(10_000, memory_bytes(self.con) // 1024)
        return time_slices(hour_counts(self.con, self.log, self.zone), budget)

    def write_events(self, sql: str, target: Path) -> None:
        ranges = self.slices()
        if len(ranges) == 1:
            self.con.execute(
                f"COPY ({sql} ORDER BY {EVENT_ORDER}) TO ? (FORMAT PARQUET)", [str(target)]
            ).fetchall()
            return
        parts = Path(tempfile.mkdtemp(prefix="events-", dir=self._spill()))
        try:
            names = []
            for i, (start, end) in enumerate(ranges):
                # Slices are disjoint time ranges in order, so sorted parts concatenate sorted.
                tests = ["true"]
                if start is not None:
                    tests.append(f"datetime >= TIMESTAMP {sql_string(start)}")
                if end is not None:
                    tests.append(f"datetime < TIMESTAMP {sql_string(end)}")
                test = " AND ".join(tests)
                if end is None and start is not None:
                    test = f"({test} OR datetime IS NULL)"  # NULLS LAST: in the last part
                names.append(str(parts / f"part{i:05d}.parquet"))
                self.con.execute(
                    f"COPY (SELECT * FROM ({sql}) WHERE {test} ORDER BY {EVENT_ORDER}) TO ? "
                    "(FORMAT PARQUET)",
                    [names[-1]],
                ).fetchall()
            self.con.execute("SET preserve_insertion_order = true").fetchall()
            try:
                self.con.execute(
                    "COPY (SELECT * FROM read_parquet(?)) TO ? (FORMAT PARQUET)",
                    [names, str(target)],
                ).fetchall()
            finally:
                self.con.execute("SET preserve_insertion_order = false").fetchall()
        finally:
            shutil.rmtree(parts, ignore_errors=True)

    def _spill(self) -> str:
        return str(self.con.execute("SELECT current_setting('temp_directory')").fetchall()[0][0])


_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
_UNITS.update({"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40})


def memory_bytes(con: Any) -> int:
    """The connection's ``memory_limit`` in bytes."""
    text = str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
    match = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", text)
    if not match or match.group(2).upper() not in _UNITS:
        raise ValueError(f"memory_limit: cannot read {text!r} as a size")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def hour_counts(con: Any, log: str | Path, zone: str | None) -> dict[str, int]:
    """Requests per ``hour`` partition of the log (of ``zone``), from the files' footers only."""
    glob = str(Path(log) / (f"zone={zone}" if zone else "zone=*") / "hour=*" / "*.parquet")
    counts: dict[str, int] = {}
    rows = con.execute("SELECT file_name, num_rows FROM parquet_file_metadata(?)", [glob])
    for name, n in rows.fetchall():
        hour = Path(name).parent.name.split("=", 1)[1]
        counts[hour] = counts.get(hour, 0) + int(n)
    return counts


def time_slices(counts: dict[str, int], budget: int) -> list[tuple[str | None, str | None]]:
    """Consecutive time ranges of about ``budget`` requests at most, from requests per hour.

    An hour over the budget is cut into equal sub-ranges (its requests assumed spread
    evenly); hours under it are grouped. The first range is open at the start and the
    last at the end, so every row falls in one range.

    >>> time_slices({"2024-01-01-00": 5, "2024-01-01-01": 5}, 100)
    [(None, None)]
    >>> time_slices({"2024-01-01-00": 30, "2024-01-01-02": 10}, 20)
    [(None, '2024-01-01 00:30:00'), ('2024-01-01 00:30:00', '2024-01-01 02:00:00'), ('2024-01-01 02:00:00', None)]
    """
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    cuts: list[datetime] = []
    held = 0
    for hour in sorted(counts):
        start = datetime.strptime(hour, "%Y-%m-%d-%H")
        n = counts[hour]
        if held and held + n > budget:
            cuts.append(start)
            held = 0
        pieces = max(1, -(-n // budget))
        for k in range(1, pieces):
            cuts.append(start + timedelta(hours=k / pieces))
        held += n if pieces == 1 else n // pieces
    bounds: list[str | None] = [
        None,
        *(
            c.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
            if c.microsecond
            else c.strftime("%Y-%m-%d %H:%M:%S")
            for c in cuts
        ),
        None,
    ]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def source_sql(folder: str | Path, zone_name: str, zone_plan_name: str, quote: Any = ident) -> str:
    """The zone's rows of the log with the context fields as constant columns (DuckDB SQL)."""
    extra = ", ".join(
        f"{lit} AS {quote(name)}" for name, lit in context_columns(zone_name, zone_plan_name)
    )
    return f"(SELECT *, {extra} FROM {scan(folder, zone_name)})"


def replay_duckdb(
    wb: Any,
    zone_id: str,
    log: str | Path,
    out: str | Path,
    *,
    systems: Any = "auto",
    memory_limit: str = "1GB",
    threads: int = 2,
    temp_directory: str | Path | None = None,
    log_zone: str | None = None,
    plan: ZonePlan | None = None,
    slice_rows: int | None = None,
) -> LogReplay:
    """Replay the log's requests of the zone (``log_zone``, default the zone's name) into ``out``.

    ``plan`` replaces the zone's own plan: the what-if hook (a tuned configuration's
    :class:`~workbench.traffic.zone_plan.ZonePlan`, replayed on the same log).
    ``slice_rows`` caps the requests whose events are sorted at once (see :class:`DuckDBBackend`).
    """
    zone = wb.zone(zone_id)
    log_zone = log_zone or zone.name
    con = connect(memory_limit=memory_limit, threads=threads, temp_directory=temp_directory)
    try:
        backend = DuckDBBackend(con, log=log, zone=log_zone, slice_rows=slice_rows)
        return replay_zone(
            backend, wb, zone, source_sql(log, log_zone, zone.plan), out, systems, plan
        )
    finally:
        con.close()
