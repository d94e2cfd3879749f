"""One object's SQLite database: write batches, the hidden KV table, the alarm row.

This layer is synchronous and knows nothing of asyncio gates; the storage API
(:mod:`workbench.storage.ctx_storage`) sits on top. Writes open a *batch* (one SQLite
transaction) that commits when the object next yields to the event loop or
when :meth:`ObjectDatabase.flush` is called: that is write coalescing.

    >>> from workbench.core import VirtualClock
    >>> db = ObjectDatabase(None, sql=True, clock=VirtualClock())
    >>> db.kv_put([(b"k", b"s\\x01\\x00\\x00\\x00v")])
    >>> db.flush()
    >>> db.kv_get(b"k"), db.size()
    (b's\\x01\\x00\\x00\\x00v', 8192)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import apsw

from workbench.core import VirtualClock

from .errors import StorageWriteFailed
from .history import History
from .names import KV_TABLE, META_TABLE

KV_DDL = f"CREATE TABLE IF NOT EXISTS {KV_TABLE} (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID"
META_DDL = f"CREATE TABLE IF NOT EXISTS {META_TABLE} (key TEXT PRIMARY KEY, value) WITHOUT ROWID"
SQL_LIMITS = {
    apsw.SQLITE_LIMIT_VARIABLE_NUMBER: 100,
    apsw.SQLITE_LIMIT_COLUMN: 100,
    apsw.SQLITE_LIMIT_SQL_LENGTH: 100_000,
    apsw.SQLITE_LIMIT_LENGTH: 2_200_000,
}


def prefix_end(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string starting with ``prefix``."""
    p = prefix.rstrip(b"\xff")
    return p[:-1] + bytes([p[-1] + 1]) if p else None


class ObjectDatabase:
    """The SQLite file (or memory) of one object, with batching and an optional change log."""

    def __init__(self, path: Path | None, *, sql: bool, clock: VirtualClock) -> None:
        self.path, self.clock = path, clock
        self.conn = apsw.Connection(str(path) if path else ":memory:")
        for limit, value in SQL_LIMITS.items():
            self.conn.limit(limit, value)
        self._c = self.conn.cursor()
        self._c.execute("PRAGMA foreign_keys = ON")
        hist_path = path.with_name(path.stem + ".history.sqlite") if path else None
        self.history = History(self.conn, hist_path, clock.now_ms()) if sql else None
        self.in_batch = False
        self.txn_depth = 0
        self.needs_confirm = False
        self.alarm_dirty = False
        # setAlarm/deleteAlarm calls that stand (undone with their savepoint or batch): a
        # failed alarm handler that made one is not retried
        self.alarm_ops = 0
        self._alarm_ops_at: dict[str, int] = {}
        self.fail_next_commit: str | None = None
        self.commits = 0
        self.on_failure: Callable[[StorageWriteFailed], None] = lambda exc: None
        self.on_alarm_change: Callable[[int | None], None] = lambda t: None
        self.cursors: set[Any] = set()  # unfinished SQL cursors, kept open until the event ends
        self._session: apsw.Session | None = None
        self._schema_version = 0
        self._flush_scheduled = False
        self._savepoints = 0
        self.schema_epoch = 0  # bumped when the schema may have changed behind the SQL API
        self._refresh_tables()

    def _refresh_tables(self) -> None:
        self.schema_epoch = getattr(self, "schema_epoch", 0) + 1
        names = {r[0] for r in self._c.execute("SELECT name FROM main.sqlite_master")}
        self.kv_exists = KV_TABLE in names
        self.meta_exists = META_TABLE in names

    def _one(self, sql: str, args: tuple = ()) -> Any:
        rows = self._c.execute(sql, args).fetchall()  # fetch all: no statement left open
        return rows[0][0] if rows else None

    def _all(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row (the hidden tables' schema, not apsw, knows the column types)."""
        return self._c.execute(sql, args).fetchall()

    # -- batches ------------------------------------------------------------
    def begin(self, confirm: bool = True) -> None:
        """Make sure a write batch is open (and remember if its result must be confirmed)."""
        if confirm:
            self.needs_confirm = True
        if self.in_batch:
            return
        self._c.execute("BEGIN")
        self.in_batch = True
        self._alarm_ops_at = {"": self.alarm_ops}
        if self.history is not None:
            self._schema_version = self._one("PRAGMA main.schema_version")
            self._session = apsw.Session(self.conn, "main")
            self._session.config(apsw.SQLITE_SESSION_OBJCONFIG_ROWID, 1)
            self._session.attach()
        self.schedule_flush()

    def schedule_flush(self) -> None:
        """Commit the batch when the running task next yields to the event loop."""
        if self._flush_scheduled or not self.in_batch:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._flush_scheduled = True
        loop.call_soon(self._auto_flush)

    def _auto_flush(self) -> None:
        self._flush_scheduled = False
        try:
            self.flush()
        except StorageWriteFailed as exc:
            self.on_failure(exc)

    def flush(self, *, force_checkpoint: bool = False) -> None:
        """Commit the open batch (unless a transaction closure is still running)."""
        if not self.in_batch or self.txn_depth:
            return
        try:
            if self.fail_next_commit is not None:
                reason, self.fail_next_commit = self.fail_next_commit, None
                raise OSError(reason)
            if any(c.blocks_commit() for c in self.cursors):
                # an INSERT ... RETURNING not read to the end is still a statement in
                # progress to SQLite on the platform, so the commit fails there
                raise apsw.BusyError("cannot commit transaction - SQL statements in progress")
            record: tuple[bytes, bool] | None = None
            if self.history is not None and self._session is not None:
                schema_changed = self._one("PRAGMA main.schema_version") != self._schema_version
                # a changeset is useless (and may fail) across a schema change: checkpoint instead
                changeset = b""
                if not schema_changed:
                    try:
                        changeset = self._session.changeset()
                    except apsw.SchemaChangeError:  # a table came and went inside the batch
                        schema_changed = True
                if changeset or schema_changed or force_checkpoint:
                    record = (changeset, schema_changed or force_checkpoint)
            self._c.execute("COMMIT")
            if self.history is not None:
                # The log is written once the data is safe, in one statement of its own: a
                # crash in between loses only this record, and the next checkpoint images
                # the data again.
                if record is not None:
                    self.history.record(*record, self.clock.now_ms(), self.size)
                self.history.commit()
        except Exception as exc:
            self.commits += 1
            ref = f"{self.commits:08x}"
            self.abort_batch()
            raise StorageWriteFailed(f"internal error; reference = {ref}", cause=str(exc)) from exc
        self.commits += 1
        self._end_batch()

    def abort_batch(self) -> None:
        """Roll the open batch back (a failed write, a reset)."""
        if self.in_batch:
            try:
                self._c.execute("ROLLBACK")
            except apsw.Error:
                pass
            if self.history is not None:
                self.history.rollback()
            self.alarm_dirty = True
            self.alarm_ops = self._alarm_ops_at.get("", self.alarm_ops)
            self._refresh_tables()
        self.txn_depth = 0
        self._savepoints = 0
        self._end_batch()

    def _end_batch(self) -> None:
        self.in_batch = False
        self.needs_confirm = False
        if self._session is not None:
            self._session.close()
            self._session = None
        if self.alarm_dirty:
            self.alarm_dirty = False
            self.on_alarm_change(self.get_alarm())

    # -- savepoints (transactions) --------------------------------------------
    def savepoint(self) -> str:
        self.begin()
        self._savepoints += 1
        name = f"_cf_txn{self._savepoints}"
        self._c.execute(f"SAVEPOINT {name}")
        self._alarm_ops_at[name] = self.alarm_ops
        return name

    def release(self, name: str) -> None:
        self._c.execute(f"RELEASE {name}")
        self._alarm_ops_at.pop(name, None)
        self._savepoints -= 1

    def rollback_to(self, name: str, release: bool = True) -> None:
        self._c.execute(f"ROLLBACK TO {name}")
        self.alarm_ops = self._alarm_ops_at.get(name, self.alarm_ops)
        self.alarm_dirty = True
        self._refresh_tables()
        if release:
            self.release(name)

    # -- key-value ------------------------------------------------------------
    def kv_get(self, key: bytes) -> bytes | None:
        if not self.kv_exists:
            return None
        return self._one("SELECT value FROM _cf_KV WHERE key = ?", (key,))

    def kv_put(self, pairs: list[tuple[bytes, bytes]], confirm: bool = True) -> None:
        self.begin(confirm)
        if not self.kv_exists:
            self._c.execute(KV_DDL)
            self.kv_exists = True
            self.schema_epoch += 1  # the SQL API's per-text caches start again
        if len(pairs) == 1:
            self._c.execute("INSERT OR REPLACE INTO _cf_KV VALUES (?, ?)", pairs[0])
        else:
            self._c.executemany("INSERT OR REPLACE INTO _cf_KV VALUES (?, ?)", pairs)

    def kv_delete(self, keys: list[bytes], confirm: bool = True) -> int:
        if not self.kv_exists:
            return 0
        self.begin(confirm)
        n = 0
        for key in dict.fromkeys(keys):
            self._c.execute("DELETE FROM _cf_KV WHERE key = ?", (key,))
            n += self.conn.changes()
        return n

    def kv_list(
        self,
        lo: bytes | None,
        lo_inclusive: bool,
        hi: bytes | None,
        reverse: bool,
        limit: int | None,
    ) -> list[tuple[bytes, bytes]]:
        if not self.kv_exists:
            return []
        where: list[str] = []
        args: list[bytes | int] = []
        if lo is not None:
            where.append("key >= ?" if lo_inclusive else "key > ?")
            args.append(lo)
        if hi is not None:
            where.append("key < ?")
            args.append(hi)
        sql = "SELECT key, value FROM _cf_KV"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY key DESC" if reverse else " ORDER BY key"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return cast("list[tuple[bytes, bytes]]", self._all(sql, args))

    def delete_all(self, delete_alarm: bool) -> None:
        """Drop every table, view, trigger and the KV data (and the alarm if asked)."""
        self.begin()
        self._c.execute("PRAGMA defer_foreign_keys = ON")
        rows = self._all(
            "SELECT type, name FROM main.sqlite_master WHERE type IN ('table', 'view', 'trigger')"
        )
        order = {"trigger": 0, "view": 1, "table": 2}
        for kind, name in sorted(rows, key=lambda r: order[r[0]]):
            if name.startswith("sqlite_") or (name == "_cf_METADATA" and not delete_alarm):
                continue
            quoted = '"' + name.replace('"', '""') + '"'
            self._c.execute(f"DROP {kind.upper()} IF EXISTS main.{quoted}")
        if self._one("SELECT 1 FROM main.sqlite_master WHERE name = 'sqlite_sequence'"):
            self._c.execute("DELETE FROM main.sqlite_sequence")
        if delete_alarm:
            self.alarm_ops += 1
        self.alarm_dirty = True
        self._refresh_tables()

    # -- alarm ------------------------------------------------------------------
    def get_alarm(self) -> int | None:
        if not self.meta_exists:
            return None
        return self._one("SELECT value FROM _cf_METADATA WHERE key = 'alarm'")

    def alarm_retry_count(self) -> int:
        if not self.meta_exists:
            return 0
        return self._one("SELECT value FROM _cf_METADATA WHERE key = 'alarm_retry'") or 0

    def set_alarm(self, t_ms: int | None, confirm: bool = True, retry: int = 0) -> None:
        self.begin(confirm)
        if not self.meta_exists:
            self._c.execute(META_DDL)
            self.meta_exists = True
            self.schema_epoch += 1
        if t_ms is None:
            self._c.execute("DELETE FROM _cf_METADATA WHERE key IN ('alarm', 'alarm_retry')")
        else:
            self._c.execute("INSERT OR REPLACE INTO _cf_METADATA VALUES ('alarm', ?)", (t_ms,))
            self._c.execute(
                "INSERT OR REPLACE INTO _cf_METADATA VALUES ('alarm_retry', ?)", (retry,)
            )
        self.alarm_ops += 1
        self.alarm_dirty = True

    # -- size, restore, close ---------------------------------------------------
    def size(self) -> int:
        """``databaseSize``: pages in use times 4096 (freed pages do not count)."""
        pages = self._one("PRAGMA main.page_count") - self._one("PRAGMA main.freelist_count")
        return max(pages, 1) * self._one("PRAGMA main.page_size")

    def close_cursors(self) -> None:
        for cursor in list(self.cursors):
            cursor.close()

    def restore(self, seq: int) -> None:
        """Replace the database with its state after ``seq``, keeping the current alarm."""
        assert self.history is not None
        alarm, retry = self.get_alarm(), self.alarm_retry_count()
        self.abort_batch()
        self.close_cursors()
        tmp = self.history.state_at(seq)
        with self.conn.backup("main", tmp, "main") as backup:
            backup.step()
        tmp.close()
        self._refresh_tables()
        self.begin()
        if alarm is not None or self.meta_exists:
            self.set_alarm(alarm, retry=retry)
        self.history.set_pending(None)
        self.flush(force_checkpoint=True)

    def close(self) -> None:
        self.abort_batch()
        self.close_cursors()
        self.conn.close()
        if self.history is not None:
            self.history.close()
