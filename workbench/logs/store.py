"""The event log: security events in a DuckDB table, appended in batches, kept as Parquet.

One row per event (columns: :mod:`workbench.logs.schema`). Batches arrive as
pandas DataFrames (the pipeline gives one per chunk of requests) and go in
with one ``INSERT ... SELECT`` each, and each write is folded into the summaries
the canned queries read (:mod:`workbench.logs.summary`); inside :meth:`EventLog.appending`
the batches are folded once, on the way out. Named views (:mod:`workbench.logs.views`)
give each source its own table-like name (``old_waf_events``,
``new_waf_events``, ...) and the canned queries' default forms
(``new_allows_old_blocked``, ``legit_blocked_by_new``, ``rule_comparison``).

Other tables can live on the same connection, kept by a *feed* that buffers
rows and writes them when asked (the storage runtime's SQL billing,
:func:`workbench.logs.billing.billing_for`): every read of :attr:`EventLog.con`
has them written first, so any SQL on the log sees them. The log's methods
hold :attr:`EventLog.lock` while they use the connection, and so does a feed
writing from another thread (on a cursor of its own): DuckDB refuses a
connection used by two threads at once. Code that uses ``con`` itself from
another thread holds the lock too.

    >>> import pandas as pd
    >>> log = EventLog()
    >>> log.append(pd.DataFrame([{"ray_id": "a" * 16, "datetime": "2026-01-01T00:00:00Z",
    ...     "zone_id": "z", "action": "block", "source": "waf", "rule_id": "100015",
    ...     "match_index": 0, "kind": "firewall"}]))
    1
    >>> log.count(), log.query("select rule_id from old_waf_events").rule_id.tolist()
    (1, ['100015'])
    >>> import tempfile, pathlib
    >>> path = log.to_parquet(pathlib.Path(tempfile.mkdtemp()) / "events.parquet")
    >>> EventLog.from_parquet(path).count()
    1
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import duckdb
import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..rules_language.sql_fragments import ident
from . import summary
from .schema import COLUMNS, SCHEMA, TABLE, normalise
from .views import SOURCE_VIEWS, create_views

__all__ = ["SOURCE_VIEWS", "TABLE", "EventLog", "Feed"]


class Feed(Protocol):
    """Rows buffered for a table of the log; :meth:`flush` writes them (from any thread)."""

    def flush(self) -> None: ...


class EventLog:
    """Security events in DuckDB (in memory unless ``con`` is a connection to a file)."""

    def __init__(self, con: duckdb.DuckDBPyConnection | None = None) -> None:
        self._con = con if con is not None else duckdb.connect(":memory:")
        #: Held by every write to the connection (appends, checkpoints, feeds), so that a
        #: feed flushing on another thread never overlaps one. Re-entrant: a writer may
        #: read through the log while it holds it.
        self.lock = threading.RLock()
        self._feeds: dict[str, Feed] = {}
        # DuckDB draws its own progress bar on long queries; in a notebook that would be
        # output nbval compares, so the log's queries never draw it.
        self._con.execute("SET enable_progress_bar = false").fetchall()
        columns = ", ".join(f"{ident(c)} {t}" for c, t in SCHEMA.items())
        self._con.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} ({columns})").fetchall()
        create_views(self._con)
        summary.create(self._con)
        self._appending = 0  # depth of appending() blocks: their batches are folded at the end

    def __repr__(self) -> str:
        return f"EventLog({self.count()} events)"

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The log's DuckDB connection, with what every feed buffered written first."""
        if self._feeds:
            self.sync()
        return self._con

    def add_feed(self, table: str, feed: Feed) -> Feed:
        """Have ``feed`` keep ``table`` on this log; returns the feed that keeps it (the
        first one added for that table stays)."""
        with self.lock:
            return self._feeds.setdefault(table, feed)

    def feed(self, table: str) -> Feed | None:
        """The feed that keeps ``table``, if any."""
        return self._feeds.get(table)

    def sync(self) -> None:
        """Write what every feed has buffered (reading :attr:`con` does it first)."""
        for feed in list(self._feeds.values()):
            feed.flush()

    def append(self, batch: Any, *, normalised: bool = False) -> int:
        """Add a batch of events (a DataFrame or a list of dicts); returns how many rows.

        ``normalised``: the batch is a DataFrame in the table's columns and dtypes
        already (:func:`~workbench.logs.schema.normalise`'s form, as the pipeline's
        event frames are), so it goes in as it is.
        """
        frame = batch if isinstance(batch, pd.DataFrame) else pd.DataFrame(list(batch))
        if frame.empty:
            return 0
        if not normalised:
            unknown = sorted(set(frame.columns) - set(COLUMNS))
            if unknown:
                raise ValueError(
                    f"unknown event columns {unknown}; the table has {', '.join(COLUMNS)}"
                )
            frame = normalise(frame)
        with self.lock:
            con = self._con
            con.register("_wb_events_batch", frame)
            try:
                names = ", ".join(ident(c) for c in COLUMNS)
                casts = ", ".join(f"CAST({ident(c)} AS {t})" for c, t in SCHEMA.items())
                con.execute(
                    f"INSERT INTO {TABLE} ({names}) SELECT {casts} FROM _wb_events_batch"
                ).fetchall()
            finally:
                con.unregister("_wb_events_batch")
            if not self._appending:
                summary.update(con)
        return len(frame)

    @contextmanager
    def appending(self) -> Iterator[EventLog]:
        """Many appends in a row (a replay): the summaries are folded and DuckDB
        checkpoints once, at the end.

        Folding a replay's batches one by one cost about 19 small queries a batch (1.2
        CPU-s for 11 batches of a million requests, against 0.5 s for one fold at the
        end); a canned query run inside the block folds what is there first, as it
        does after any write behind the log's back.

        DuckDB compacts an in-memory database's tables (a *checkpoint*) whenever a
        write passes its ``checkpoint_threshold``. Appending batch after batch, that
        came every other batch, and each pass cost more as the table grew (about 4 s
        in all for 630,000 events, against 0.5-1.5 s for one pass at the end). The
        setting is restored on the way out, and what was appended is compacted.
        """
        con = self._con
        with self.lock:
            threshold = con.execute("SELECT current_setting('checkpoint_threshold')").fetchall()
            con.execute(f"SET checkpoint_threshold = '{_NO_CHECKPOINT}'").fetchall()
            self._appending += 1
        try:
            yield self
        finally:
            with self.lock:
                self._appending -= 1
                try:
                    if not self._appending:
                        summary.update(con)
                finally:
                    con.execute("SET checkpoint_threshold = ?", [threshold[0][0]]).fetchall()
                    self.checkpoint()

    def checkpoint(self) -> None:
        """Compact what was written since the last checkpoint (cheap when nothing was)."""
        with self.lock:
            self._con.execute("CHECKPOINT").fetchall()

    def count(self) -> int:
        """How many events the log holds."""
        with self.lock:
            return int(self._con.execute(f"SELECT count(*) FROM {TABLE}").fetchall()[0][0])

    def query(self, sql: str, params: list[Any] | None = None) -> Any:
        """Run DuckDB SQL on the log's connection; a DataFrame. Safe from any thread:
        it waits for a write under way (an append of a replay on another thread)."""
        with self.lock:
            return self.con.execute(sql, params or []).df()

    def frame(self) -> Any:
        """Every event as a DataFrame, in time order (then ray, then the ray's events in order)."""
        return self.query(f"SELECT * FROM {TABLE} ORDER BY {EVENT_ORDER}")

    def to_parquet(self, path: str | Path) -> Path:
        """Write every event to one Parquet file (time order); returns the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with self.lock:
            self._con.execute(
                f"COPY (SELECT * FROM {TABLE} ORDER BY {EVENT_ORDER}) TO ? (FORMAT PARQUET)",
                [str(target)],
            ).fetchall()
        return target

    def load_parquet(self, path: str | Path) -> int:
        """Append the events of a Parquet file written by :meth:`to_parquet`; returns how many."""
        with self.lock:
            before = self.count()
            names = ", ".join(ident(c) for c in COLUMNS)
            casts = ", ".join(f"CAST({ident(c)} AS {t})" for c, t in SCHEMA.items())
            self._con.execute(
                f"INSERT INTO {TABLE} ({names}) SELECT {casts} FROM read_parquet(?)", [str(path)]
            ).fetchall()
            summary.update(self._con)
            return self.count() - before

    @classmethod
    def from_parquet(cls, path: str | Path) -> EventLog:
        """A new in-memory log holding the events of a Parquet file."""
        log = cls()
        log.load_parquet(path)
        return log


#: The event log's row order (what a Parquet file of events is sorted by).
EVENT_ORDER = "datetime, ray_id, match_index DESC"
#: A checkpoint threshold no run of appends reaches.
_NO_CHECKPOINT = "1000TB"
