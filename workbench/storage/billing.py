"""The SQL billing log: one record per ``sql.exec``, kept in DuckDB, with a cost estimate.

Records are buffered in memory and written to DuckDB in one insert when the
log is read, so billing adds almost nothing to each statement; a record shows
its cursor's counters as they are at that moment (final once consumed).

A log keeps its table in its own in-memory DuckDB unless it is given a
connection and the lock that guards writes to it: that is how a Workbench's
runtime (``wb.storage``) keeps ``sql_billing`` in the event log, next to the
security events (:func:`workbench.logs.billing.billing_for`). Statements may
be billed on one thread while another reads the log: :meth:`BillingLog.flush`
takes records off the front of the buffer without stopping the statements
(no lock on their side), and no record is lost, repeated or overwritten.

    >>> log = BillingLog()
    >>> log.totals()
    {'statements': 0, 'rows_read': 0, 'rows_written': 0}
    >>> estimate_cost(rows_read=30e9, rows_written=50e6)["total_usd"]
    5.0

Prices (``shared/facts/README.md``, Workers Paid): 25 billion rows read and
50 million rows written included per month, then $0.001 per million rows read
and $1.00 per million rows written; storage 5 GB-month included, then $0.20
per GB-month.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

import duckdb
import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ._counters import Counted

INCLUDED_ROWS_READ = 25_000_000_000
INCLUDED_ROWS_WRITTEN = 50_000_000
USD_PER_MILLION_READ = 0.001
USD_PER_MILLION_WRITTEN = 1.00
INCLUDED_GB_MONTH = 5
USD_PER_GB_MONTH = 0.20
_COLUMNS = ["seq", "namespace", "object_id", "statement", "rows_read", "rows_written", "t_ms"]


def estimate_cost(
    rows_read: float, rows_written: float, stored_gb_month: float = 0.0
) -> dict[str, float]:
    """Dollars for a month with this usage on Workers Paid, after the included amounts."""
    read = max(rows_read - INCLUDED_ROWS_READ, 0) / 1e6 * USD_PER_MILLION_READ
    written = max(rows_written - INCLUDED_ROWS_WRITTEN, 0) / 1e6 * USD_PER_MILLION_WRITTEN
    stored = max(stored_gb_month - INCLUDED_GB_MONTH, 0) * USD_PER_GB_MONTH
    return {
        "rows_read_usd": round(read, 6),
        "rows_written_usd": round(written, 6),
        "storage_usd": round(stored, 6),
        "total_usd": round(read + written + stored, 6),
    }


class BillSink(NamedTuple):
    """How one object bills its SQL statements: ``final(statement, read, written)`` for a
    statement that has finished, ``open(statement, cursor)`` (returns a slot) for one still
    being read, and ``settle(slot, cursor)`` once that cursor is done."""

    final: Callable[[str, int, int], None]
    open: Callable[[str, Counted], int]
    settle: Callable[[int, Counted], None]
    # what ``final`` does, for a caller that appends the record itself (the SQL hot path):
    # ``append((namespace, object_id, statement, read, written, now()))``
    append: Callable[[tuple[str, str, str, Any, int, int]], None]
    namespace: str
    object_id: str
    now: Callable[[], int]


class BillingLog:
    """The ``sql_billing`` table: namespace, object, statement, rowsRead, rowsWritten, virtual time.

    ``con``: the DuckDB connection to keep the table in (default: an in-memory one of
    its own, opened on first use). ``lock``: held while this log writes to or reads
    from ``con``; give the lock of whoever else writes there (an event log's), so
    that writes never overlap. A shared connection should be a ``cursor()`` of the
    owner's: DuckDB refuses a connection used by two threads at once.
    """

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection | None = None,
        *,
        lock: AbstractContextManager[Any] | None = None,
    ) -> None:
        self._con = con
        self._ready = False
        self._lock: AbstractContextManager[Any] = lock if lock is not None else threading.Lock()
        # One flush at a time. The billing side takes no lock (a lock per statement cost
        # about 0.4 us, 20% of a lookup by key): a list append is atomic and a flush only
        # takes records from the front; ``settle``, which rewrites a record in place, and
        # the flush's removal keep out of each other's way with two flags (see ``sink``).
        self._mutex = threading.Lock()
        self._settling = False
        self._trimming = False
        # (namespace, object id, statement, rows read, rows written, t_ms), or with the
        # statement's cursor in place of rows read and -1 for rows written while it is open;
        # numbered when written out. Finished records hold no objects, so a long run of
        # statements leaves nothing behind for the garbage collector to walk.
        self._pending: list[tuple[str, str, str, Any, int, int]] = []
        self._first = 0  # the slot number of _pending[0]
        self._seq = 0

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection (opened on first use, so an unused log costs nothing)."""
        if self._con is None:
            self._con = duckdb.connect(":memory:")
        if not self._ready:
            self._con.execute(
                "CREATE TABLE IF NOT EXISTS sql_billing (seq BIGINT, namespace VARCHAR,"
                " object_id VARCHAR, statement VARCHAR, rows_read BIGINT, rows_written BIGINT,"
                " t_ms BIGINT)"
            ).fetchall()
            self._ready = True
        return self._con

    def sink(self, namespace: str, object_id: str, now: Callable[[], int]) -> BillSink:
        """The three calls one object bills through (see :class:`BillSink`)."""
        pending = self._pending
        append = pending.append

        def final(statement: str, rows_read: int, rows_written: int) -> None:
            append((namespace, object_id, statement, rows_read, rows_written, now()))

        def open_(statement: str, counted: Counted) -> int:
            append((namespace, object_id, statement, counted, -1, now()))
            # (A flush between these lines can make the slot stale: settle then finds
            # another record there and leaves this one open, to be read at the next flush.)
            return self._first + len(pending) - 1

        def settle(slot: int, counted: Counted) -> None:
            # Statements are billed on one thread (the runtime's loop); a flush may run on
            # another. A flush raises _trimming, then waits while _settling is up before it
            # removes records; this raises _settling, then looks at _trimming. Under the
            # GIL one of the two sees the other's flag, so the record rewritten here never
            # moves under the write. Skipped, the record stays open: the flush reads its
            # cursor's counters, final by now.
            self._settling = True
            try:
                if not self._trimming:
                    j = slot - self._first
                    if 0 <= j < len(pending) and pending[j][3] is counted:
                        ns, oid, st, _, _, t = pending[j]
                        pending[j] = (ns, oid, st, counted.rows_read, counted.rows_written, t)
            finally:  # (a flush waits while it is up)
                self._settling = False

        return BillSink(final, open_, settle, append, namespace, object_id, now)

    def flush(self) -> None:
        """Write the buffered records to ``sql_billing`` (from any thread)."""
        with self._lock:
            with self._mutex:
                pending = self._pending
                n = len(pending)
                if not n:
                    return
                rows = []
                for seq, (ns, oid, st, read, written, t) in enumerate(pending[:n], self._seq + 1):
                    if written < 0:  # still open: its counters as they are now
                        read, written = read.rows_read, read.rows_written
                    rows.append((seq, ns, oid, st, read, written, t))
                self._trimming = True
                try:
                    while self._settling:  # a settle in its window: let it finish
                        time.sleep(0)
                    del pending[:n]  # (records billed meanwhile stay, behind these)
                    self._first += n
                finally:
                    self._trimming = False
                self._seq += n
            frame = pd.DataFrame(rows, columns=_COLUMNS)
            con = self.con
            con.register("_billing_batch", frame)
            try:
                con.execute("INSERT INTO sql_billing SELECT * FROM _billing_batch").fetchall()
            finally:
                con.unregister("_billing_batch")

    def query(self, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
        """Run DuckDB SQL over ``sql_billing`` and return a DataFrame."""
        self.flush()
        with self._lock:
            return self.con.execute(sql, params or []).df()

    def records(self, object_id: str | None = None) -> pd.DataFrame:
        """Every record (of one object if given), oldest first."""
        where = "WHERE object_id = ?" if object_id else ""
        return self.query(
            f"SELECT * FROM sql_billing {where} ORDER BY seq", [object_id] if object_id else None
        )

    def totals(self, object_id: str | None = None) -> dict[str, int]:
        """Statements, rows read and rows written (of one object if given)."""
        where = "WHERE object_id = ?" if object_id else ""
        frame = self.query(
            "SELECT count(*) AS statements, coalesce(sum(rows_read), 0) AS rows_read,"
            f" coalesce(sum(rows_written), 0) AS rows_written FROM sql_billing {where}",
            [object_id] if object_id else None,
        )
        return {k: int(v) for k, v in frame.iloc[0].items()}

    def cost(self, object_id: str | None = None, months: float = 1.0) -> dict[str, float]:
        """The cost estimate if this usage repeated every month for ``months`` (default 1)."""
        t = self.totals(object_id)
        return estimate_cost(t["rows_read"] / months, t["rows_written"] / months)
