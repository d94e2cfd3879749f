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
refused statements fail before anything runs, and every statement appends one
record to the SQL billing log (each statement of a multi-statement string too).

The first run of a text is fully checked (split, refused statements, the
authorizer, the counter model). When its counters depend only on the cursor's
progress, what that run learned (column names, row builder, counter formula)
is kept under the text, per connection, and later runs of the same text skip
straight to SQLite; the cache is cleared whenever the schema changes. The storage's own tables are refused under every
spelling SQLite accepts for them (``_CF_KV``, ``main."_cf_kv"``...: see
:mod:`workbench.storage.names`), and SQL text or a text binding that is not
valid UTF-8 is refused with ``TextEncodingError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import apsw

from workbench.core.text import utf8_problem

from ._counters import EMPTY_AUTH, AuthInfo, Formula, Planner, StatementCounter
from ._sql_cursor import RawIterator, RowBuilder, SqlStorageCursor, row_builder, sql_error
from ._sql_statements import Statement, refusal, split_sql
from .billing import BillSink
from .database import ObjectDatabase
from .errors import SqlError, StorageLimitError, TextEncodingError
from .names import is_hidden, is_reserved

__all__ = ["RawIterator", "SqlStorage", "SqlStorageCursor", "check_binding", "sql_error"]

MAX_SQL_BYTES = 100_000
#: A first statement to offer someone exploring an object's SQL: its tables.
EXAMPLE_QUERY = "SELECT name FROM sqlite_master WHERE type = 'table'"
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
# dbstat too: a virtual table USING dbstat would read what SELECT FROM dbstat may not
_DENIED_MODULES = {"rtree", "rtree_i32", "geopoly", "fts3", "fts4", "dbstat"}
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
        sink: BillSink,
    ) -> None:
        # ``check`` raises when the storage may not run SQL (KV backend, reset instance);
        # ``sink`` bills each statement. Both come from ``ctx.storage``, which owns this.
        self._check = check
        self._final, self._open, self._settle = sink.final, sink.open, sink.settle
        self._append, self._ns, self._oid, self._now = (
            sink.append,
            sink.namespace,
            sink.object_id,
            sink.now,
        )
        self._db = db
        self._planner = Planner(self._db.conn)
        self._counter: StatementCounter | None = None
        self._maintenance = False
        self._authorized = False
        self._user = False
        self._names: list[str] = []
        self._pool: list[apsw.Cursor] = []
        self._const_cur = self._db.conn.cursor()  # for statements that read no table
        self._auth_cache: dict[str, Any] = {}
        self._names_cache: dict[str, list[str]] = {}
        # text -> (column names, row builder, formula, finished cursors by rows changed):
        # the hot path (see the module doc)
        self._fast: dict[
            str, tuple[list[str], RowBuilder, Formula, dict[int, tuple[SqlStorageCursor, int, int]]]
        ] = {}
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
        fast = self._fast.get(query) if type(query) is str else None
        if fast is None or self._epoch != self._db.schema_epoch:
            return self._exec_checked(query, bindings)
        # The hot path: a text whose first run was fully checked goes straight to SQLite.
        if len(bindings) > MAX_BINDINGS:
            raise StorageLimitError("SQL bindings", MAX_BINDINGS, len(bindings))
        names, rows, formula, finished = fast
        if formula.read_kind == "const":
            # No table is read (a plan without loops: a bounded list of rows, and a SELECT,
            # so it writes nothing), so every row is taken now and the statement ends here:
            # a finished cursor, billed once, nothing left open, no batch needed.
            cur = self._const_cur
            self._user = True  # (a statement SQLite prepares again is authorized again)
            try:
                cur.execute(query, bindings)
                kept = cur.fetchall()
            except apsw.Error as exc:
                raise sql_error(exc) from None
            except (TypeError, ValueError, OverflowError):
                return self._exec_checked(query, self._args(bindings))
            finally:
                self._user = False
            self._append((self._ns, self._oid, query, formula.base, 0, self._now()))
            return SqlStorageCursor.ended(self, names, rows, formula, kept)
        db = self._db
        db.needs_confirm = True
        if not db.sql_ready:
            db.begin_sql()
        pool = self._pool
        cur = pool.pop() if pool else db.conn.cursor()
        # Should SQLite prepare the text again (a schema change), the authorizer checks it.
        self._user = True
        try:
            cur.execute(query, bindings)
            row = next(cur, None)
        except apsw.Error as exc:
            self._user = False
            cur.close(True)
            raise sql_error(exc) from None
        except (TypeError, ValueError, OverflowError):
            # apsw refused a binding before running anything (it binds the same types
            # check_binding accepts): word the refusal the storage's way, or run the
            # converted bindings the checked way
            self._user = False
            cur.close(True)
            return self._exec_checked(query, self._args(bindings))
        self._user = False
        if row is None:
            if len(pool) < 8:
                pool.append(cur)
            changes = db.conn.changes()
            done = finished.get(changes)
            if done is None:
                # A finished cursor can no longer change, so one per row count is shared.
                done = finished[changes] = (
                    SqlStorageCursor(self, None, names, rows, formula, None, changes),
                    formula.reads(0, True, changes),
                    formula.written(changes),
                )
            self._append((self._ns, self._oid, query, done[1], done[2], self._now()))
            return done[0]
        else:
            cursor = SqlStorageCursor(self, cur, names, rows, formula, None)
            cursor._ahead = row
            cursor._pulled = 1
            db.cursors.add(cursor)
            cursor._slot = self._open(query, cursor)
        return cursor

    def _charge(self, text: str, cursor: SqlStorageCursor) -> None:
        """Bill one statement: its final counters, or its cursor until that is done."""
        if cursor._done:
            self._final(text, cursor.rowsRead, cursor.rowsWritten)
        else:
            cursor._slot = self._open(text, cursor)

    def _exec_checked(self, query: str, bindings: tuple) -> SqlStorageCursor:
        """The first run of a text (or any text that cannot take the hot path)."""
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
        args = self._args(bindings)
        statements = split_sql(query)
        self._db.begin_sql()
        for st in statements[:-1]:
            # Only the last statement may have parameters (split_sql checks), and the
            # cursor shows only the last one, but every statement runs and is billed.
            cursor = self._checked(st, ())
            cursor._rest()
            self._charge(st.text.strip(), cursor)
        if statements[-1].refused is not None:
            # refused when the platform comes to prepare it: the ones before it stay run
            raise refusal(statements[-1])
        cursor = self._checked(statements[-1], args)
        self._charge(query if len(statements) == 1 else statements[-1].text.strip(), cursor)
        if len(statements) == 1 and cursor._formula is not None:
            self._fast[query] = (cursor._names, cursor._rows, cursor._formula, {})
        return cursor

    def _args(self, bindings: tuple) -> tuple:
        if len(bindings) > MAX_BINDINGS:
            raise StorageLimitError("SQL bindings", MAX_BINDINGS, len(bindings))
        if _plain(bindings):
            return bindings
        return tuple(check_binding(i + 1, v) for i, v in enumerate(bindings))

    def _checked(self, st: Statement, args: tuple) -> SqlStorageCursor:
        """Run one statement with every check, and build its counter model."""
        db = self._db
        if st.kind == "drop" and any(c._buffered and not c._done for c in db.cursors):
            # a statement whose rows are kept still holds its table, as an open one does
            raise SqlError("database table is locked: SQLITE_LOCKED", "SQLITE_LOCKED")
        counter = StatementCounter(self._planner, st, args)
        counter.total_changes = db.conn.total_changes()
        cur, names = self._run(st, args, counter)
        cursor = SqlStorageCursor(self, cur, names, row_builder(tuple(names)), None, counter)
        db.cursors.add(cursor)
        if st.has("RETURNING") and st.kind in ("insert", "update", "delete"):
            cursor._insert_returning = st.kind == "insert"
            cursor._keep_rows()
        cursor._pull()
        if cursor._done or st.kind == "select":
            cursor._formula = counter.formula()
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
        self._names = [d[0] for d in cur.get_description()]
        return True

    def _cursor(self) -> apsw.Cursor:
        return self._pool.pop() if self._pool else self._db.conn.cursor()

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
        if cached_names is None:  # the names are only known before the first step
            cur.exec_trace = self._trace
        analyze = st.keyword == "ANALYZE" or (st.keyword == "PRAGMA" and st.has("OPTIMIZE"))
        ddl = st.kind in ("create", "drop", "alter") or analyze
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
            cur.exec_trace = None
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
        if analyze:
            self._db.drop_stat4()
        changed = ddl and self._schema_version() != version
        if changed:
            self._forget_schema()
        counter.executed(changed)
        return cur, cached_names

    def _forget_schema(self) -> None:
        self._planner.invalidate()
        self._auth_cache.clear()
        self._names_cache.clear()
        self._fast.clear()

    def _schema_version(self) -> int:
        return self._db._one("PRAGMA main.schema_version")
