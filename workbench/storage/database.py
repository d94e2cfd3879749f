"""One object's SQLite database: write batches, the hidden KV table, the alarm row.

This layer is synchronous and knows nothing of asyncio gates; the storage API
(:mod:`workbench.storage.ctx_storage`) sits on top. Writes open a *batch* (one SQLite
transaction) that commits when the object next yields to the event loop or
when :meth:`ObjectDatabase.flush` is called: that is write coalescing.

    >>> from workbench.core.clock import VirtualClock
    >>> db = ObjectDatabase(None, sql=True, clock=VirtualClock())
    >>> db.kv_put([(b"k", b"s\\x01\\x00\\x00\\x00v")])
    >>> db.flush()
    >>> db.kv_get(b"k"), db.size()
    (b's\\x01\\x00\\x00\\x00v', 8192)
"""

from __future__ import annotations

import asyncio
import itertools
import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import apsw

from workbench.core.clock import VirtualClock

from .errors import StorageWriteFailed
from .history import History
from .names import KV_TABLE, META_TABLE, quoted

# workerd's own text (sqlite-kv.c++), so ``sqlite_master.sql`` shows what the platform's does:
# SQLite keeps the text from the table's name on, line breaks and indentation included.
KV_DDL = f"""
      CREATE TABLE IF NOT EXISTS {KV_TABLE} (
        key TEXT PRIMARY KEY,
        value BLOB
      ) WITHOUT ROWID;
    """
META_DDL = f"CREATE TABLE IF NOT EXISTS {META_TABLE} (key TEXT PRIMARY KEY, value) WITHOUT ROWID"
HAND_LOGGED_KEYS = 32  # KV keys a batch logs by hand before a session is cheaper
SQL_LIMITS = {
    apsw.SQLITE_LIMIT_VARIABLE_NUMBER: 100,
    apsw.SQLITE_LIMIT_COLUMN: 100,
    apsw.SQLITE_LIMIT_SQL_LENGTH: 100_000,
    apsw.SQLITE_LIMIT_LENGTH: 2_200_000,
}


def _varint(n: int) -> bytes:
    """SQLite's variable-length integer (lengths in a changeset; below 2**56 here)."""
    if n < 0x80:
        return bytes((n,))
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def _value(v: Any) -> bytes:
    """One value in a changeset record: KV keys and values are BLOBs (the other types are
    for a file written otherwise, so a changeset never misstates what the table holds)."""
    if type(v) is bytes:
        n = len(v)
        return (_SHORT_BLOB[n] if n < 0x80 else b"\x04" + _varint(n)) + v
    if isinstance(v, str):
        data = v.encode("utf-8", "surrogatepass")
        return b"\x03" + _varint(len(data)) + data
    if isinstance(v, int):
        return b"\x01" + v.to_bytes(8, "big", signed=True)
    if isinstance(v, float):
        return b"\x02" + struct.pack(">d", v)
    if v is None:
        return b"\x05"
    return _value(bytes(v))  # a memoryview or bytearray read back as a BLOB


_SHORT_BLOB = [bytes((4, n)) for n in range(0x80)]  # a BLOB's type and one-byte length
_KV_HEADER = b"T\x02\x01\x00" + KV_TABLE.encode() + b"\x00"  # 2 columns, the first the key


def kv_changeset(before: dict[bytes, bytes | None], after: dict[bytes, bytes | None]) -> bytes:
    """The changeset SQLite's session would write for KV keys going from ``before`` to
    ``after`` (None: no row); a key written back to its old value is no change.

    >>> before = {b"a": None, b"b": b"1", b"c": b"2", b"d": b"3"}
    >>> after = {b"a": b"x", b"b": b"1", b"c": None, b"d": b"4"}
    >>> [(c.op, c.old, c.new) for c in apsw.Changeset.iter(kv_changeset(before, after))]
    [('INSERT', None, (b'a', b'x')), ('DELETE', (b'c', b'2'), None), ('UPDATE', (b'd', b'3'), (<apsw.no_change>, b'4'))]
    """
    parts = [_KV_HEADER]
    for key, old in before.items():
        new = after[key]
        if new == old:
            continue
        if old is None:  # an INSERT: the new row
            parts.append(b"\x12\x00" + _value(key) + _value(cast("bytes", new)))
        elif new is None:  # a DELETE: the old row
            parts.append(b"\x09\x00" + _value(key) + _value(old))
        else:  # an UPDATE: the key and old value, then (key unchanged) the new value
            parts.append(b"\x17\x00" + _value(key) + _value(old) + b"\x00" + _value(new))
    return b"".join(parts) if len(parts) > 1 else b""


def prefix_end(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string starting with ``prefix``."""
    p = prefix.rstrip(b"\xff")
    return p[:-1] + bytes([p[-1] + 1]) if p else None


_MEMDB = itertools.count(1)
_URI = apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE


def _open(path: Path | None) -> apsw.Connection:
    """The object's connection, its ``PRAGMA data_version`` at 2 as on the platform.

    workerd keeps an object's database in WAL mode, where a connection's first read
    finds the log's state new and counts that as a change, so the pragma reads 2 from the
    start and then stays put (only other connections' commits move it). Here one commit by
    a second connection (rewriting ``user_version`` unchanged) has SQLite count the same one
    change. In memory, ``memdb`` is SQLite's in-memory VFS that two connections can share.
    """
    name = str(path) if path else f"file:/wb-object-{next(_MEMDB)}?vfs=memdb"
    conn = apsw.Connection(name, flags=_URI)
    version = cast("int", conn.execute("PRAGMA user_version").fetchall()[0][0])  # first read
    other = apsw.Connection(name, flags=_URI)
    other.execute(f"PRAGMA user_version = {version:d}")
    other.close()
    if path is None:  # nobody else can open it: keep the lock (a commit costs as in :memory:)
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
    return conn


class ObjectDatabase:
    """The SQLite file (or memory) of one object, with batching and an optional change log."""

    def __init__(self, path: Path | None, *, sql: bool, clock: VirtualClock) -> None:
        self.path, self.clock = path, clock
        self.conn = _open(path)
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
        # A batch of KV writes alone is logged without a session (see _track_kv):
        # the value before the batch and the latest value of each key it wrote.
        self._kv_before: dict[bytes, bytes | None] = {}
        self._kv_after: dict[bytes, bytes | None] = {}
        self.sql_ready = False  # in a batch where any statement may run (its changes logged)
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
        """Make sure a write batch is open (and remember if its result must be confirmed).

        The batch logs KV puts and deletes by hand; any other statement must come
        through :meth:`begin_sql`, which starts the session that logs everything else.
        """
        if confirm:
            self.needs_confirm = True
        if self.in_batch:
            return
        self._c.execute("BEGIN")
        self.in_batch = True
        self.sql_ready = self.history is None
        self._alarm_ops_at = {"": self.alarm_ops}
        self.schedule_flush()

    def begin_sql(self, confirm: bool = True) -> None:
        """:meth:`begin`, and from here on every change of the batch is logged by a session."""
        self.begin(confirm)
        if self.sql_ready:
            return
        self.sql_ready = True
        # The changes logged by hand so far stay as they are: they come first in the
        # batch's record, and the session starts from the state they left.
        self._schema_version = self._one("PRAGMA main.schema_version")
        self._session = apsw.Session(self.conn, "main")
        self._session.config(apsw.SQLITE_SESSION_OBJCONFIG_ROWID, 1)
        self._session.attach()

    def _track_kv(self, pairs: Sequence[tuple[bytes, bytes | None]]) -> None:
        """Log KV writes by hand (a value None: a delete), unless the session logs them.

        A session costs about as much as a small event itself (creating it, and preparing
        a query per table for its changeset), so a batch that only puts and deletes a few
        keys keeps each key's value from before the batch (one read) and its newest one,
        and :func:`kv_changeset` writes the same changeset the session would.
        """
        before = self._kv_before
        if len(before) + len(pairs) > HAND_LOGGED_KEYS:
            self.begin_sql()  # a big batch: one session is cheaper than a read per key
            return
        after, read = self._kv_after, self._c.execute
        for key, value in pairs:
            if key not in before:
                rows = read("SELECT value FROM _cf_KV WHERE key = ?", (key,)).fetchall()
                before[key] = cast("bytes", rows[0][0]) if rows else None
            after[key] = value

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
            if self.cursors and any(c.blocks_commit() for c in self.cursors):
                # an INSERT ... RETURNING not read to the end is still a statement in
                # progress to SQLite on the platform, so the commit fails there
                raise apsw.BusyError("cannot commit transaction - SQL statements in progress")
            history = self.history
            record = None if history is None else self._record(force_checkpoint)
            self._c.execute("COMMIT")
            if history is not None:
                # The log is written once the data is safe, in one statement of its own: a
                # crash in between loses only this record, and the next checkpoint images
                # the data again.
                if record is not None:
                    history.record(*record, self.clock.now_ms(), self.size)
                history.commit()
        except Exception as exc:
            self.commits += 1
            ref = f"{self.commits:08x}"
            self.abort_batch()
            raise StorageWriteFailed(f"internal error; reference = {ref}", cause=str(exc)) from exc
        self.commits += 1
        self._end_batch()

    def _record(self, force_checkpoint: bool) -> tuple[bytes, bool] | None:
        """What the log keeps of the open batch: ``(changeset, checkpoint?)``, or None."""
        changeset, schema_changed = b"", False
        if self._session is not None:
            schema_changed = self._one("PRAGMA main.schema_version") != self._schema_version
            # a changeset is useless (and may fail) across a schema change: checkpoint instead
            if not schema_changed:
                try:
                    changeset = self._session.changeset()
                except apsw.SchemaChangeError:  # a table came and went inside the batch
                    schema_changed = True
        if self._kv_before and not schema_changed:
            # the KV writes logged by hand came first in the batch
            by_hand = kv_changeset(self._kv_before, self._kv_after)
            changeset = (
                apsw.Changeset.concat(by_hand, changeset)
                if by_hand and changeset
                else by_hand or changeset
            )
        if changeset or schema_changed or force_checkpoint:
            return changeset, schema_changed or force_checkpoint
        return None

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
        self.sql_ready = False
        self.needs_confirm = False
        if self._kv_before:
            self._kv_before, self._kv_after = {}, {}
        if self._session is not None:
            self._session.close()
            self._session = None
        if self.alarm_dirty:
            self.alarm_dirty = False
            self.on_alarm_change(self.get_alarm())

    # -- savepoints (transactions) --------------------------------------------
    def savepoint(self) -> str:
        # what a rollback to the savepoint undoes must be logged by the session, which
        # reads the rows' final values, not by hand
        self.begin_sql()
        self._savepoints += 1
        name = f"_cf_txn{self._savepoints}"
        self._c.execute(f"SAVEPOINT {name}")
        self._alarm_ops_at[name] = self.alarm_ops
        return name

    @property
    def savepoints(self) -> int:
        """How many transaction savepoints are open."""
        return self._savepoints

    @staticmethod
    def savepoint_depth(name: str) -> int:
        """The nesting depth of a savepoint :meth:`savepoint` named (1: the outermost)."""
        return int(name.removeprefix("_cf_txn"))

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
            self.begin_sql(confirm)  # a schema change: the batch is logged as a checkpoint
            self._c.execute(KV_DDL)
            self.kv_exists = True
            self.schema_epoch += 1  # the SQL API's per-text caches start again
        elif not self.sql_ready:
            self._track_kv(pairs)
        if len(pairs) == 1:
            self._c.execute("INSERT OR REPLACE INTO _cf_KV VALUES (?, ?)", pairs[0])
        else:
            self._c.executemany("INSERT OR REPLACE INTO _cf_KV VALUES (?, ?)", pairs)

    def kv_delete(self, keys: list[bytes], confirm: bool = True) -> int:
        if not self.kv_exists:
            return 0
        self.begin(confirm)
        unique = list(dict.fromkeys(keys))
        if not self.sql_ready:
            self._track_kv([(key, None) for key in unique])
        n = 0
        for key in unique:
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
        self.begin_sql()
        self._c.execute("PRAGMA defer_foreign_keys = ON")
        rows = self._all(
            "SELECT type, name FROM main.sqlite_master WHERE type IN ('table', 'view', 'trigger')"
        )
        order = {"trigger": 0, "view": 1, "table": 2}
        for kind, name in sorted(rows, key=lambda r: order[r[0]]):
            if name == "sqlite_sequence" or (name == "_cf_METADATA" and not delete_alarm):
                continue
            self._c.execute(f"DROP {kind.upper()} IF EXISTS main.{quoted(name)}")
        if self._one("SELECT 1 FROM main.sqlite_master WHERE name = 'sqlite_sequence'"):
            self._c.execute("DELETE FROM main.sqlite_sequence")
        if delete_alarm:
            self.alarm_ops += 1
        self.alarm_dirty = True
        self._refresh_tables()

    def drop_stat4(self) -> None:
        """Drop ``sqlite_stat4`` if ANALYZE made it: the platform's SQLite is built without
        STAT4 (only ``sqlite_stat1`` is listed after ANALYZE there), this one with it, so its
        samples are dropped and the planner works from ``sqlite_stat1`` alone, as there."""
        if self._one("SELECT 1 FROM main.sqlite_master WHERE name = 'sqlite_stat4'"):
            self._c.execute("DROP TABLE main.sqlite_stat4")

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
        self.begin_sql(confirm)
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
        self.history.mark_restore(self.history.last_seq, seq)

    def close(self) -> None:
        self.abort_batch()
        self.close_cursors()
        self.conn.close()
        if self.history is not None:
            self.history.close()
