"""The storage package's SQL billing log, queryable next to the security events.

:func:`load_billing` copies a :class:`~workbench.storage.BillingLog`'s records
into the event log's DuckDB connection (table ``sql_billing``, replaced on
each load) and adds ``sql_billing_costs``: per namespace and object, the
statements, rows read and written, and the month's cost estimate the storage
package computes (:func:`~workbench.storage.estimate_cost`). The storage
package is only read.

    >>> from workbench.logs.store import EventLog
    >>> from workbench.storage import DurableObject, Runtime
    >>> class Notes(DurableObject):
    ...     async def fetch(self, request):
    ...         self.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS n(body TEXT)")
    ...         self.ctx.storage.sql.exec("INSERT INTO n VALUES (?)", request)
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

from ..storage.billing import BillingLog, estimate_cost
from .store import EventLog

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


def load_billing(log: EventLog, billing: BillingLog, months: float = 1.0) -> Any:
    """Load ``billing`` into ``log``'s connection; returns the per-object cost table.

    Costs are for usage that repeats every month over ``months`` months (default 1),
    as :meth:`BillingLog.cost` reads them.
    """
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
