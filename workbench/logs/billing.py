"""The storage package's SQL billing log, queryable next to the security events.

A Workbench's runtime bills straight into its event log: :func:`billing_for`
gives the :class:`~workbench.storage.BillingLog` that keeps ``sql_billing`` on
the log's connection (``wb.storage`` is made with it), with the view
``sql_billing_costs``: per namespace and object, the statements, rows read and
written, and the month's cost estimate at the storage package's prices
(:func:`~workbench.storage.estimate_cost`, as SQL). Records are buffered by the
runtime and written when the log is read, under the log's lock, on a cursor of
their own (a replay may be using the log's connection on another thread).

    >>> from workbench import Workbench
    >>> from workbench.storage import DurableObject
    >>> class Notes(DurableObject):
    ...     async def fetch(self, request):
    ...         self.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS n(body TEXT)")
    ...         self.ctx.storage.sql.exec("INSERT INTO n VALUES (?)", request)
    >>> wb = Workbench(seed=0)
    >>> ns = wb.storage.namespace(Notes)
    >>> wb.storage.run(ns.get(ns.id_from_name("a")).fetch("hi"))
    >>> wb.logs.query("SELECT statements, rows_written, total_usd FROM sql_billing_costs")
       statements  rows_written  total_usd
    0           2             3        0.0

A standalone :class:`~workbench.storage.Runtime` keeps its own billing log;
:func:`load_billing` copies its records into an event log (table
``sql_billing``, replaced on each load, and a ``sql_billing_costs`` table for
usage repeated over ``months``):

    >>> from workbench.logs.store import EventLog
    >>> from workbench.storage import Runtime
    >>> rt = Runtime()
    >>> ns = rt.namespace(Notes, storage="sqlite")
    >>> rt.run(ns.get(ns.id_from_name("a")).fetch("hi"))
    >>> log = EventLog()
    >>> costs = load_billing(log, rt.billing)
    >>> row = costs.to_dict("records")[0]
    >>> row["statements"], row["rows_written"], row["total_usd"]
    (2, 3, 0.0)
    >>> int(log.query("select count(*) AS n from sql_billing").n[0])
    2
"""

from __future__ import annotations

from typing import Any

import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..storage.billing import (
    INCLUDED_ROWS_READ,
    INCLUDED_ROWS_WRITTEN,
    USD_PER_MILLION_READ,
    USD_PER_MILLION_WRITTEN,
    BillingLog,
    estimate_cost,
)
from .store import EventLog

#: The table a Workbench's runtime keeps in its event log.
TABLE = "sql_billing"

_RECORDS = ["seq", "namespace", "object_id", "statement", "rows_read", "rows_written", "t_ms"]
_COSTS = [
    "namespace",
    "object_id",
    "statements",
    "rows_read",
    "rows_written",
    "rows_read_usd",
    "rows_written_usd",
    "storage_usd",
    "total_usd",
]


def billing_for(log: EventLog) -> BillingLog:
    """The billing log that keeps ``sql_billing`` in ``log`` (one per log: asked again,
    the same), with the ``sql_billing_costs`` view; give it to a Runtime."""
    with log.lock:
        kept = log.feed(TABLE)
        if kept is not None:
            if not isinstance(kept, BillingLog):
                raise TypeError(f"{TABLE} of this log is kept by a {type(kept).__name__}")
            return kept
        # A cursor: the log's own connection may be busy on another thread (a replay),
        # and DuckDB refuses a connection used by two threads at once.
        billing = BillingLog(log.con.cursor(), lock=log.lock)
        billing.con.execute(_COSTS_VIEW).fetchall()  # (reading .con makes the table)
        log.add_feed(TABLE, billing)
        return billing


def _usd(rows: str, included: int, per_million: float) -> str:
    """SQL for :func:`~workbench.storage.estimate_cost`'s dollars for one kind of rows."""
    return f"greatest({rows} - {included}, 0) / 1e6::DOUBLE * {per_million}::DOUBLE"


_READ_USD = _usd("rows_read", INCLUDED_ROWS_READ, USD_PER_MILLION_READ)
_WRITTEN_USD = _usd("rows_written", INCLUDED_ROWS_WRITTEN, USD_PER_MILLION_WRITTEN)
# The cost of one month of this usage, as estimate_cost computes it (no storage charge:
# the records hold no sizes).
_COSTS_VIEW = f"""CREATE OR REPLACE VIEW sql_billing_costs AS
WITH totals AS (
    SELECT namespace, object_id, count(*)::BIGINT AS statements,
        coalesce(sum(rows_read), 0)::BIGINT AS rows_read,
        coalesce(sum(rows_written), 0)::BIGINT AS rows_written
    FROM {TABLE} GROUP BY ALL
)
SELECT namespace, object_id, statements, rows_read, rows_written,
    round({_READ_USD}, 6) AS rows_read_usd,
    round({_WRITTEN_USD}, 6) AS rows_written_usd,
    0.0::DOUBLE AS storage_usd,
    round({_READ_USD} + {_WRITTEN_USD}, 6) AS total_usd
FROM totals ORDER BY namespace, object_id"""


def load_billing(log: EventLog, billing: BillingLog, months: float = 1.0) -> Any:
    """Load ``billing`` (a standalone runtime's) into ``log``'s connection; returns the
    per-object cost table.

    Costs are for usage that repeats every month over ``months`` months (default 1),
    as :meth:`BillingLog.cost` reads them. A log a Workbench's runtime bills into
    (:func:`billing_for`) is refused: its ``sql_billing`` is live, not a copy.
    """
    if log.feed(TABLE) is not None:
        raise ValueError(
            f"this event log keeps a runtime's {TABLE} live (wb.storage bills into it): "
            "query it directly; load_billing copies a standalone Runtime's billing into "
            "another log"
        )
    records = billing.records()
    frame = pd.DataFrame({c: records[c] for c in _RECORDS}) if len(records) else _empty()
    log.con.register("_wb_billing", frame)
    try:
        log.con.execute(
            "CREATE OR REPLACE TABLE sql_billing AS SELECT seq::BIGINT AS seq,"
            " namespace::VARCHAR AS namespace, object_id::VARCHAR AS object_id,"
            " statement::VARCHAR AS statement, rows_read::BIGINT AS rows_read,"
            " rows_written::BIGINT AS rows_written, t_ms::BIGINT AS t_ms FROM _wb_billing"
        ).fetchall()
    finally:
        log.con.unregister("_wb_billing")
    totals = log.query(
        "SELECT namespace, object_id, count(*) AS statements, sum(rows_read) AS rows_read,"
        " sum(rows_written) AS rows_written FROM sql_billing GROUP BY ALL"
        " ORDER BY namespace, object_id"
    )
    rows = []
    for t in totals.to_dict("records"):
        cost = estimate_cost(t["rows_read"] / months, t["rows_written"] / months)
        rows.append({**t, **cost})
    costs = pd.DataFrame(rows, columns=_COSTS).astype(
        {"statements": "int64", "rows_read": "int64", "rows_written": "int64"}
    )
    log.con.register("_wb_billing_costs", costs)
    try:
        log.con.execute(
            "CREATE OR REPLACE TABLE sql_billing_costs AS SELECT namespace::VARCHAR AS namespace,"
            " object_id::VARCHAR AS object_id, statements::BIGINT AS statements,"
            " rows_read::BIGINT AS rows_read, rows_written::BIGINT AS rows_written,"
            " rows_read_usd::DOUBLE AS rows_read_usd, rows_written_usd::DOUBLE AS rows_written_usd,"
            " storage_usd::DOUBLE AS storage_usd, total_usd::DOUBLE AS total_usd"
            " FROM _wb_billing_costs"
        ).fetchall()
    finally:
        log.con.unregister("_wb_billing_costs")
    return costs


def _empty() -> Any:
    return pd.DataFrame(
        {
            "seq": pd.Series([], dtype="int64"),
            "namespace": pd.Series([], dtype=object),
            "object_id": pd.Series([], dtype=object),
            "statement": pd.Series([], dtype=object),
            "rows_read": pd.Series([], dtype="int64"),
            "rows_written": pd.Series([], dtype="int64"),
            "t_ms": pd.Series([], dtype="int64"),
        }
    )
