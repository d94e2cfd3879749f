"""The SQL API of a SQLite-backed object: ``ctx.storage.sql.exec`` and its cursor.

    >>> from workbench.storage import Runtime, DurableObject
    >>> class Notes(DurableObject):
    ...     async def fetch(self, request):
    ...         sql = self.ctx.storage.sql
    ...         sql.exec("CREATE TABLE IF NOT EXISTS n(id INTEGER PRIMARY KEY, body TEXT)")
    ...         sql.exec("INSERT INTO n(body) VALUES (?)", request)
    ...         cur = sql.exec("SELECT * FROM n")
    ...         return cur.toArray(), cur.rowsRead, cur.columnNames
    >>> rt = Runtime()
    >>> ns = rt.namespace(Notes, storage="sqlite")
    >>> rt.run(ns.get(ns.id_from_name("a")).fetch("hello"))
    ([{'id': 1, 'body': 'hello'}], 1, ['id', 'body'])

Statements run eagerly (the first step happens inside ``exec``), a string of
several statements runs them in order and the cursor shows the last one,
refused statements fail before anything runs, and every ``exec`` appends one
record to the SQL billing log. The storage's own tables are refused under every
spelling SQLite accepts for them (``_CF_KV``, ``main."_cf_kv"``...: see
:mod:`workbench.storage.names`), and SQL text or a text binding that is not
valid UTF-8 is refused with ``TextEncodingError``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import apsw

from workbench.core.text import utf8_problem

from .counters import EMPTY_AUTH, AuthInfo, Planner, StatementCounter
from .database import ObjectDatabase
from .errors import SqlError, StorageLimitError, TextEncodingError
from .names import is_hidden, is_reserved
from .sql_statements import Statement, split_sql

MAX_SQL_BYTES = 100_000
MAX_BINDINGS = 100
_INT64 = (-(2**63), 2**63 - 1)
_PLAIN = {str, float, type(None)}  # bound as they are (ints are range-checked)
_ALLOWED_PRAGMAS = {
    "table_info",
    "table_xinfo",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "quick_check",
    "optimize",
    "table_list",
    "data_version",
    "foreign_keys",
    "defer_foreign_keys",
    "case_sensitive_like",
    "legacy_alter_table",
    "recursive_triggers",
    "reverse_unordered_selects",
}
_DENIED_FUNCTIONS = {
    "sqlite_version",
    "sqlite_source_id",
    "load_extension",
    "sqlite_compileoption_get",
    "sqlite_compileoption_used",
}
_DENIED_MODULES = {"rtree", "rtree_i32", "geopoly", "fts3", "fts4"}
_CREATE = {
    apsw.SQLITE_CREATE_TABLE,
    apsw.SQLITE_CREATE_INDEX,
    apsw.SQLITE_CREATE_VIEW,
    apsw.SQLITE_CREATE_TRIGGER,
    apsw.SQLITE_CREATE_VTABLE,
}
_DROP = {
    apsw.SQLITE_DROP_TABLE,
    apsw.SQLITE_DROP_INDEX,
    apsw.SQLITE_DROP_VIEW,
    apsw.SQLITE_DROP_TRIGGER,
    apsw.SQLITE_DROP_VTABLE,
}
# Actions whose second argument names a table, an index, a trigger or a pragma's argument
# (for the others it is a column, a function or a module name).
_A2_IS_A_NAME = {
    apsw.SQLITE_CREATE_INDEX,
    apsw.SQLITE_CREATE_TRIGGER,
    apsw.SQLITE_DROP_INDEX,
    apsw.SQLITE_DROP_TRIGGER,
    apsw.SQLITE_ALTER_TABLE,
    apsw.SQLITE_PRAGMA,
}
_TEMP = {
    apsw.SQLITE_CREATE_TEMP_TABLE,
    apsw.SQLITE_CREATE_TEMP_INDEX,
    apsw.SQLITE_CREATE_TEMP_VIEW,
    apsw.SQLITE_CREATE_TEMP_TRIGGER,
    apsw.SQLITE_DROP_TEMP_TABLE,
    apsw.SQLITE_DROP_TEMP_INDEX,
    apsw.SQLITE_DROP_TEMP_VIEW,
    apsw.SQLITE_DROP_TEMP_TRIGGER,
    apsw.SQLITE_ATTACH,
    apsw.SQLITE_DETACH,
    apsw.SQLITE_TRANSACTION,
    apsw.SQLITE_SAVEPOINT,
}


def sql_error(exc: BaseException) -> SqlError:
    """Word an apsw error the way the platform does: ``<message>[ at offset N]: SQLITE_<CODE>``."""
    if isinstance(exc, apsw.BindingsError):
        return SqlError("Wrong number of parameter bindings for SQL query.")
    message = str(exc).replace("access to main.", "access to ")
    offset = getattr(exc, "error_offset", -1)
    if offset is not None and offset >= 0 and "at offset" not in message:
        message += f" at offset {offset}"
    result = getattr(exc, "result", 1) or 1
    code = str(apsw.mapping_result_codes.get(result & 0xFF, "SQLITE_ERROR"))
    extended = getattr(exc, "extendedresult", result)
    if code == "SQLITE_CONSTRAINT" and extended != result:
        ext = apsw.mapping_extended_result_codes.get(extended, str(extended))
        return SqlError(f"{message}: {code} (extended: {ext})", code)
    return SqlError(f"{message}: {code}", code)


def _plain(bindings: tuple) -> bool:
    """True when every binding can go to SQLite as it is (the common case, checked fast)."""
    for v in bindings:
        t = type(v)
        if t is int:
            if not _INT64[0] <= v <= _INT64[1]:
                return False
        elif t is str:
            if not v.isascii():  # O(1); only non-ASCII text can hold a lone surrogate
                return False
        elif t not in _PLAIN:
            return False
    return True


def check_binding(index: int, value: Any) -> Any:
    """One binding as SQLite gets it (bool as 1 or 0); TypeError names the position."""
    if isinstance(value, str):
        problem = utf8_problem(value)
        if problem is not None:
            raise TextEncodingError(
                f"SQL binding {index} {problem}; SQLite stores text as UTF-8, so it was refused"
            )
        return value
    if value is None or type(value) is float:
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise OverflowError(
                f"SQL binding {index} is {value}, outside SQLite's 64-bit integer range"
            )
        return int(value)
    if isinstance(value, float):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise TypeError(
        f"SQL binding {index} has type {type(value).__name__}; bindings must be None, int, "
        "float, str, bytes-like or bool"
    )


class SqlStorage:
    """``ctx.storage.sql``: ``exec(query, *bindings)`` and ``databaseSize``."""

    def __init__(
        self,
        db: ObjectDatabase,
        check: Callable[[], None],
        bill: Callable[[str, StatementCounter], None],
    ) -> None:
        # ``check`` raises when the storage may not run SQL (KV backend, reset instance);
        # ``bill`` records each exec. Both come from ``ctx.storage``, which owns this object.
        self._check, self._bill = check, bill
        self._db = db
        self._planner = Planner(self._db.conn)
        self._counter: StatementCounter | None = None
        self._maintenance = False
        self._authorized = False
        self._user = False
        self._names: list[str] = []
        self._pool: list[apsw.Cursor] = []
        self._auth_cache: dict[str, Any] = {}
        self._names_cache: dict[str, list[str]] = {}
        self._want_names = True
        self._epoch = self._db.schema_epoch
        # Installed once: setting an authorizer expires every prepared statement.
        self._db.conn.authorizer = self._authorize

    @property
    def databaseSize(self) -> int:  # noqa: N802 - the documented name
        """Bytes in use by the database (pages in use times 4096)."""
        self._check()
        return self._db.size()

    database_size = databaseSize

    def exec(self, query: str, *bindings: Any) -> SqlStorageCursor:
        """Run ``query`` now and return a cursor over the last statement's rows."""
        self._check()
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, not {type(query).__name__}")
        if not query.isascii():
            problem = utf8_problem(query)
            if problem is not None:
                raise TextEncodingError(
                    f"SQL text {problem}; SQLite reads SQL as UTF-8, so it was refused"
                )
        # at most 4 bytes a character: only long queries need measuring
        size = (
            len(query)
            if len(query) * 4 <= MAX_SQL_BYTES
            else len(query.encode("utf-8", "surrogatepass"))
        )
        if size > MAX_SQL_BYTES:
            raise SqlError(
                f"statement too long ({size} bytes; the limit is {MAX_SQL_BYTES}): SQLITE_TOOBIG",
                "SQLITE_TOOBIG",
            )
        if len(bindings) > MAX_BINDINGS:
            raise StorageLimitError("SQL bindings", MAX_BINDINGS, len(bindings))
        args = (
            bindings
            if _plain(bindings)
            else tuple(check_binding(i + 1, v) for i, v in enumerate(bindings))
        )
        statements = split_sql(query)
        self._db.begin()
        for st in statements[:-1]:
            cursor = SqlStorageCursor(self, st, ())
            cursor.toArray()
        cursor = SqlStorageCursor(self, statements[-1], args)
        self._bill(statements[-1].text, cursor._counter)
        return cursor

    # -- authorizer -------------------------------------------------------------
    def _authorize(
        self, action: int, a1: str | None, a2: str | None, db: str | None, trig: str | None
    ) -> int:
        if not self._user:
            return apsw.SQLITE_OK  # the runtime's own statements
        counter = self._counter
        self._authorized = True
        if counter is not None and counter.auth is EMPTY_AUTH:
            counter.auth = AuthInfo()
        if self._maintenance and action not in _TEMP:
            return apsw.SQLITE_OK  # ANALYZE and REINDEX visit every table, hidden ones too
        # Names are compared as SQLite resolves them (see names.py): "_CF_KV" is _cf_KV.
        if (
            action in _TEMP
            or is_reserved(db or "")
            or is_hidden(a1)
            or (action in _A2_IS_A_NAME and is_hidden(a2))
        ):
            return apsw.SQLITE_DENY
        if action == apsw.SQLITE_READ:
            if a1 == "dbstat":
                return apsw.SQLITE_DENY
            if counter and a1:
                counter.auth.reads.add(a1)
        elif action in (apsw.SQLITE_INSERT, apsw.SQLITE_UPDATE, apsw.SQLITE_DELETE):
            if counter and a1 and not a1.startswith("sqlite_"):
                counter.auth.writes.append((a1, trig))
                if action == apsw.SQLITE_UPDATE and a2:
                    counter.auth.update_cols.add(a2)
        elif action in _CREATE or action in _DROP or action == apsw.SQLITE_ALTER_TABLE:
            if action == apsw.SQLITE_CREATE_VTABLE and (a2 or "").lower() in _DENIED_MODULES:
                return apsw.SQLITE_DENY
            if counter and trig is None:
                counter.auth.ddl = action
                counter.auth.ddl_table = a2
        elif action == apsw.SQLITE_PRAGMA:
            if (a1 or "").lower() not in _ALLOWED_PRAGMAS:
                return apsw.SQLITE_DENY
        elif action == apsw.SQLITE_FUNCTION:
            name = (a2 or "").lower()
            if name in _DENIED_FUNCTIONS:
                return apsw.SQLITE_DENY
            if counter:
                counter.auth.functions.add(name)
        return apsw.SQLITE_OK

    def _trace(self, cur: apsw.Cursor, _sql: str, _bindings: Any) -> bool:
        if self._want_names:
            self._names = [d[0] for d in cur.get_description()]
        return True

    def _cursor(self) -> apsw.Cursor:
        if self._pool:
            return self._pool.pop()
        cur = self._db.conn.cursor()
        cur.exec_trace = self._trace
        return cur

    def _release(self, cur: apsw.Cursor) -> None:
        if len(self._pool) < 8:
            self._pool.append(cur)

    def _run(
        self, st: Statement, args: tuple, counter: StatementCounter
    ) -> tuple[apsw.Cursor, list[str]]:
        if self._epoch != self._db.schema_epoch:  # deleteAll, a restore, a rollback
            self._epoch = self._db.schema_epoch
            self._forget_schema()
        cur = self._cursor()
        cached_names = self._names_cache.get(st.text)
        self._want_names = cached_names is None
        ddl = st.kind in ("create", "drop", "alter") or st.keyword == "ANALYZE"
        version = self._schema_version() if ddl else 0
        self._counter = counter
        self._authorized = False
        self._user = True
        self._maintenance = st.keyword in ("ANALYZE", "REINDEX")
        self._names = []
        try:
            # apsw shares one statement cache with the runtime's own statements: a text
            # is taken from the cache only once it has passed the authorizer as user SQL.
            cur.execute(st.text, args, can_cache=st.text in self._auth_cache)
        except apsw.Error as exc:
            self._release(cur)
            raise sql_error(exc) from None
        finally:
            self._user = False
            self._counter = None
        # A statement reused from the statement cache is not prepared (nor authorized)
        # again, so what the authorizer saw the first time is kept with the text.
        if self._authorized:
            self._auth_cache[st.text] = counter.auth
        elif st.text in self._auth_cache:
            counter.auth = self._auth_cache[st.text]
        if cached_names is None:
            cached_names = self._names_cache[st.text] = self._names
        changed = ddl and self._schema_version() != version
        if changed:
            self._forget_schema()
        counter.executed(changed)
        return cur, cached_names

    def _forget_schema(self) -> None:
        self._planner.invalidate()
        self._auth_cache.clear()
        self._names_cache.clear()

    def _schema_version(self) -> int:
        return self._db._one("PRAGMA main.schema_version")


class SqlStorageCursor:
    """The result of ``exec``: an iterable and an iterator of row dicts (see the seed's table)."""

    def __init__(self, sql: SqlStorage, st: Statement, args: tuple) -> None:
        self._sql = sql
        self._db = sql._db
        self._total = self._db.conn.total_changes()
        self._counter = StatementCounter(sql._planner, st, args)
        self._pulled = 0
        self._done = False
        self._ahead: tuple | None = None
        self._cur: apsw.Cursor | None = None
        self._cur, self._names = sql._run(st, args, self._counter)
        self._db.cursors.add(self)
        self._pull()

    def _pull(self) -> None:
        if self._done or self._cur is None:
            return
        try:
            row = next(self._cur)
        except StopIteration:
            self._finish()
            return
        except apsw.Error as exc:
            self._finish()
            raise sql_error(exc) from None
        self._ahead = row
        self._pulled += 1
        self._counter.pulled = self._pulled

    def _finish(self) -> None:
        if self._done:
            return
        self._done = True
        self._db.cursors.discard(self)
        if self._cur is not None:
            self._sql._release(self._cur)
            self._cur = None
        self._ahead = None
        conn = self._db.conn
        self._counter.completed(conn.changes(), conn.total_changes() - self._total, self._pulled)
        self._counter.done = True
        self._counter.reads(self._pulled, True)

    def _take(self) -> tuple | None:
        row = self._ahead
        if row is None:
            return None
        self._ahead = None
        self._pull()
        return row

    def close(self) -> None:
        """Finish the statement now (used when the object resets or restores)."""
        if self._cur is not None:
            self._cur.close(True)
            self._cur = None
        self._db.cursors.discard(self)
        if not self._done:
            self._counter.done = True
        self._done = True
        self._ahead = None

    # -- the documented members ------------------------------------------------
    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        row = self._take()
        if row is None:
            raise StopIteration
        return dict(zip(self._names, row, strict=False))

    def next(self) -> dict[str, Any]:
        """``{"done": False, "value": row}`` while rows remain, then ``{"done": True}``."""
        row = self._take()
        if row is None:
            return {"done": True}
        return {"done": False, "value": dict(zip(self._names, row, strict=False))}

    def toArray(self) -> list[dict[str, Any]]:  # noqa: N802
        """The remaining rows (consumes them)."""
        return list(self)

    to_array = toArray

    def one(self) -> dict[str, Any]:
        """The only row; raises SqlError when there are none or several."""
        rows = self.toArray()
        return dict(_one(rows))

    def raw(self) -> RawIterator:
        """The same result set with rows as lists, sharing this cursor's position."""
        return RawIterator(self)

    @property
    def columnNames(self) -> list[str]:  # noqa: N802
        return list(self._names)

    column_names = columnNames

    @property
    def rowsRead(self) -> int:  # noqa: N802
        return self._counter.reads(self._pulled, self._done)

    rows_read = rowsRead

    @property
    def rowsWritten(self) -> int:  # noqa: N802
        return self._counter.written

    rows_written = rowsWritten

    def __repr__(self) -> str:
        return (
            f"SqlStorageCursor(columnNames={self._names}, rowsRead={self.rowsRead}, "
            f"rowsWritten={self.rowsWritten}, done={self._done})"
        )


def _one(rows: list) -> Any:
    if not rows:
        raise SqlError("Expected exactly one result from SQL query, but got no results.")
    if len(rows) > 1:
        raise SqlError("Expected exactly one result from SQL query, but got multiple results.")
    return rows[0]


class RawIterator:
    """``cursor.raw()``: rows as lists of column values, same position as the cursor."""

    def __init__(self, cursor: SqlStorageCursor) -> None:
        self._cursor = cursor

    def __iter__(self) -> RawIterator:
        return self

    def __next__(self) -> list[Any]:
        row = self._cursor._take()
        if row is None:
            raise StopIteration
        return list(row)

    def next(self) -> dict[str, Any]:
        row = self._cursor._take()
        return {"done": True} if row is None else {"done": False, "value": list(row)}

    def toArray(self) -> list[list[Any]]:  # noqa: N802
        return list(self)

    to_array = toArray

    def one(self) -> list[Any]:
        return list(_one(self.toArray()))

    @property
    def columnNames(self) -> list[str]:  # noqa: N802
        return self._cursor.columnNames
