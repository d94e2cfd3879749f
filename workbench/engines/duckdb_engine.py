"""The DuckDB engine: a zone's replay over a Parquet log on this machine, memory bounded.

DuckDB reads the log's files in parallel on ``threads`` and spills to
``temp_directory`` past ``memory_limit`` (see :func:`.parquet_logs.connect`);
the events go to one Parquet file in the event log's order, which
:meth:`workbench.logs.EventLog.from_parquet` opens.

    >>> import tempfile, pathlib
    >>> from workbench import Workbench
    >>> from workbench.traffic.request import Request
    >>> from workbench.engines.parquet_logs import write_log
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

from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..logs.store import _ORDER
from ..rules_language.sql_fragments import ident
from ..traffic.zone_plan import ZonePlan, zone_plan
from .parquet_logs import connect, context_columns, scan
from .replay import LogReplay, run_replay

_TYPES = {"string": "VARCHAR", "int": "INTEGER", "bigint": "BIGINT"}


class DuckDBBackend:
    """Runs the replay's SQL on a DuckDB connection."""

    dialect = "duckdb"

    def __init__(self, con: Any) -> None:
        self.con = con

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
        return None  # streaming passes cost less than a table of every request's key

    def write_events(self, sql: str, target: Path) -> None:
        self.con.execute(
            f"COPY ({sql} ORDER BY {_ORDER}) TO ? (FORMAT PARQUET)", [str(target)]
        ).fetchall()


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
) -> LogReplay:
    """Replay the log's requests of the zone (``log_zone``, default the zone's name) into ``out``.

    ``plan`` replaces the zone's own plan: the what-if hook (a tuned configuration's
    :class:`~workbench.traffic.zone_plan.ZonePlan`, replayed on the same log).
    """
    zone = wb.zone(zone_id)
    con = connect(memory_limit=memory_limit, threads=threads, temp_directory=temp_directory)
    try:
        backend = DuckDBBackend(con)
        return run_replay(
            backend,
            plan or zone_plan(wb, zone.id, systems),
            zone_id=zone.id,
            zone_name=zone.name,
            zone_plan=zone.plan,
            source=source_sql(log, log_zone or zone.name, zone.plan),
            out=Path(out),
        )
    finally:
        con.close()
