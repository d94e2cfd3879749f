"""The cursor of ``sql.exec``: rows as dicts or lists, stepped one row ahead, counted lazily.

A cursor holds the SQLite statement after its first step (``exec`` is eager),
and reads one row ahead, as the platform does. Rows become dicts through a
*row builder* made once per list of column names (a generated function whose
code holds only positions; the names are passed in as values):

    >>> build = row_builder(("id", "body"))
    >>> build.many([(1, "a"), (2, "b")])
    [{'id': 1, 'body': 'a'}, {'id': 2, 'body': 'b'}]
    >>> row_builder(("x", "x")).one((1, 2))   # a repeated name keeps the last value
    {'x': 2}

``rowsRead`` and ``rowsWritten`` are computed when read: from a
:class:`~workbench.storage._counters.Formula` kept with the statement's text
(the fast path) or from the statement's
:class:`~workbench.storage._counters.StatementCounter`.

A statement with ``RETURNING`` is run to its end at once and its rows kept
here, so its writes and counters are known immediately. An ``INSERT …
RETURNING`` whose rows are not all read still makes the commit fail, as on the
platform (``blocks_commit``); an ``UPDATE``/``DELETE … RETURNING`` does not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

import apsw

from ._counters import Formula, StatementCounter
from .database import ObjectDatabase
from .errors import SqlError

_BUILDERS: dict[tuple[str, ...], RowBuilder] = {}


class CursorOwner(Protocol):
    """What a cursor needs of ``ctx.storage.sql``: the database, the statement pool and
    the billing record to settle."""

    _db: ObjectDatabase

    def _release(self, cur: apsw.Cursor) -> None: ...

    def _settle(self, slot: int, counted: Any) -> None: ...


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


class RowBuilder:
    """``one(row)`` and ``many(rows)``: SQLite row tuples as dicts keyed by column name."""

    __slots__ = ("one", "many")

    def __init__(
        self,
        one: Callable[[tuple[Any, ...]], dict[str, Any]],
        many: Callable[[list[tuple[Any, ...]]], list[dict[str, Any]]],
    ) -> None:
        self.one, self.many = one, many


def row_builder(names: tuple[str, ...]) -> RowBuilder:
    """The builder for these column names (made once, then shared)."""
    built = _BUILDERS.get(names)
    if built is None:
        if len(_BUILDERS) >= 2048:  # bounded: user SQL can make any number of shapes
            _BUILDERS.clear()
        built = _BUILDERS[names] = _make(names)
    return built


def _make(names: tuple[str, ...]) -> RowBuilder:
    n = len(names)
    if n == 0:
        return RowBuilder(lambda _r: {}, lambda rows: [{} for _ in rows])
    # Only positions go into the code text; the names arrive as default values, so
    # no column name is ever parsed as code.
    defaults = ", ".join(f"k{i}=k{i}" for i in range(n))
    from_row = ", ".join(f"k{i}: r[{i}]" for i in range(n))
    from_cols = ", ".join(f"k{i}: c{i}" for i in range(n))
    cols = ", ".join(f"c{i}" for i in range(n)) + ("," if n == 1 else "")
    source = (
        f"def one(r, {defaults}):\n    return {{{from_row}}}\n"
        f"def many(rows, {defaults}):\n    return [{{{from_cols}}} for {cols} in rows]\n"
    )
    space: dict[str, Any] = {f"k{i}": name for i, name in enumerate(names)}
    exec(compile(source, "<sql row builder>", "exec"), space)  # noqa: S102 - positions only
    return RowBuilder(space["one"], space["many"])


def _one(rows: list[Any]) -> Any:
    if not rows:
        raise SqlError("Expected exactly one result from SQL query, but got no results.")
    if len(rows) > 1:
        raise SqlError("Expected exactly one result from SQL query, but got multiple results.")
    return rows[0]


class SqlStorageCursor:
    """The result of ``exec``: an iterable and an iterator of row dicts (see the seed's table)."""

    __slots__ = (
        "_owner",
        "_cur",
        "_names",
        "_rows",
        "_ahead",
        "_pulled",
        "_done",
        "_changes",
        "_formula",
        "_counter",
        "_buffered",
        "_insert_returning",
        "_slot",
        "__weakref__",
    )

    def __init__(
        self,
        owner: CursorOwner,
        cur: Any,
        names: list[str],
        rows: RowBuilder,
        formula: Formula | None,
        counter: StatementCounter | None,
        changes: int = -1,
    ) -> None:
        # ``changes`` >= 0: the statement already ran to its end (and changed that many rows)
        self._owner = owner
        self._cur = cur  # the apsw cursor, an iterator over kept rows, or None once done
        self._names = names
        self._rows = rows
        self._formula = formula
        self._counter = counter
        self._ahead: tuple[Any, ...] | None = None
        self._pulled = 0
        self._done = changes >= 0
        self._changes = changes if changes >= 0 else 0
        self._buffered = False
        self._insert_returning = False
        self._slot = -1  # the billing record to settle when done (-1: none)

    @classmethod
    def ended(
        cls, owner: CursorOwner, names: list[str], rows: RowBuilder, formula: Formula, kept: list
    ) -> SqlStorageCursor:
        """A cursor over every row of a statement that has already ended (``kept``)."""
        self = cls.__new__(cls)
        self._owner, self._names, self._rows, self._formula = owner, names, rows, formula
        self._counter, self._done, self._changes = None, True, 0
        self._insert_returning, self._slot = False, -1
        if kept:
            self._ahead = kept[0]
            it = self._cur = iter(kept)
            next(it)
            self._buffered, self._pulled = True, 1
        else:
            self._ahead = self._cur = None
            self._buffered, self._pulled = False, 0
        return self

    # -- stepping ---------------------------------------------------------------------
    def _pull(self) -> None:
        cur = self._cur
        if cur is None:
            self._ahead = None
            return
        try:
            row = next(cur, None)
        except apsw.Error as exc:
            self._finish()
            raise sql_error(exc) from None
        if row is None:
            self._finish()
            return
        self._ahead = row
        self._pulled += 1

    def _finish(self) -> None:
        if self._done:
            return
        self._done = True
        cur, self._cur, self._ahead = self._cur, None, None
        owner = self._owner
        owner._db.cursors.discard(self)
        if not self._buffered:  # (a kept statement already ended)
            if cur is not None:
                owner._release(cur)
            self._ended()
        if self._slot >= 0:
            owner._settle(self._slot, self)
            self._slot = -1

    def _ended(self) -> None:
        """The statement has run to its end: fix what depends on it."""
        conn = self._owner._db.conn
        self._changes = conn.changes()
        counter = self._counter
        if counter is not None:
            counter.completed(
                self._changes, conn.total_changes() - counter.total_changes, self._pulled
            )
            counter.done = counter.ended = True
            counter.reads(self._pulled, True)  # a filtered scan's table count, taken now

    def _keep_rows(self) -> None:
        """Run the statement to its end now and serve its rows from memory (RETURNING)."""
        cur = self._cur
        rows: list[tuple[Any, ...]] = cur.fetchall() if cur is not None else []
        if cur is not None:
            self._owner._release(cur)
        conn = self._owner._db.conn
        self._changes = conn.changes()
        counter = self._counter
        if counter is not None:
            counter.completed(
                self._changes, conn.total_changes() - counter.total_changes, len(rows)
            )
        self._buffered = True
        self._cur = iter(rows)

    def _take(self) -> tuple[Any, ...] | None:
        row = self._ahead
        if row is None:
            return None
        self._ahead = None
        self._pull()
        return row

    def blocks_commit(self) -> bool:
        """True for an ``INSERT … RETURNING`` not read to the end (its commit fails)."""
        return self._insert_returning and not self._done

    def close(self) -> None:
        """Finish the statement now (the event ended, or the object resets or restores)."""
        cur, self._cur = self._cur, None
        if cur is not None and not self._buffered:
            cur.close(True)
        self._owner._db.cursors.discard(self)
        if not self._done and self._counter is not None:
            self._counter.done = True
        self._done = True
        self._ahead = None
        if self._slot >= 0:
            self._owner._settle(self._slot, self)
            self._slot = -1

    # -- the documented members ----------------------------------------------------------
    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        row = self._take()
        if row is None:
            raise StopIteration
        return self._rows.one(row)

    def next(self) -> dict[str, Any]:
        """``{"done": False, "value": row}`` while rows remain, then ``{"done": True}``."""
        row = self._take()
        if row is None:
            return {"done": True}
        return {"done": False, "value": self._rows.one(row)}

    def _rest(self) -> list[tuple[Any, ...]]:
        """Every remaining row tuple (consumes them)."""
        first = self._ahead
        if first is None:
            return []
        self._ahead = None
        cur = self._cur
        if self._buffered:  # kept rows: no statement to step
            rest = [first, *cur]
            self._pulled += len(rest) - 1
            if not self._done:
                self._finish()
            return rest
        try:
            rest = cur.fetchall()
        except apsw.Error as exc:
            self._finish()
            raise sql_error(exc) from None
        self._pulled += len(rest)
        self._finish()
        rest.insert(0, first)
        return rest

    def toArray(self) -> list[dict[str, Any]]:  # noqa: N802
        """The remaining rows (consumes them)."""
        first = self._ahead
        if first is not None and self._done and self._buffered:  # an ended statement's rows
            self._ahead = None
            rest = [first, *self._cur]
            self._pulled += len(rest) - 1
        else:
            rest = self._rest()
        if len(rest) == 1:  # (a one-row list is built faster by hand)
            return [self._rows.one(rest[0])]
        return self._rows.many(rest)

    to_array = toArray

    def one(self) -> dict[str, Any]:
        """The only row; raises SqlError when there are none or several."""
        row = self._take()
        if row is None:
            return _one([])
        if self._ahead is not None:
            self._rest()
            return _one([row, row])
        return self._rows.one(row)

    def raw(self) -> RawIterator:
        """The same result set with rows as lists, sharing this cursor's position."""
        return RawIterator(self)

    @property
    def columnNames(self) -> list[str]:  # noqa: N802
        return list(self._names)

    column_names = columnNames

    @property
    def rowsRead(self) -> int:  # noqa: N802
        formula = self._formula
        if formula is not None:
            return formula.reads(self._pulled, self._done, self._changes)
        assert self._counter is not None
        return self._counter.reads(self._pulled, self._done)

    @property
    def rowsWritten(self) -> int:  # noqa: N802
        formula = self._formula
        if formula is not None:
            return formula.written(self._changes)
        assert self._counter is not None
        return self._counter.written

    rows_read = rowsRead
    rows_written = rowsWritten

    def __repr__(self) -> str:
        return (
            f"SqlStorageCursor(columnNames={self._names}, rowsRead={self.rowsRead}, "
            f"rowsWritten={self.rowsWritten}, done={self._done})"
        )


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
        return [list(r) for r in self._cursor._rest()]

    to_array = toArray

    def one(self) -> list[Any]:
        return list(_one(self.toArray()))

    @property
    def columnNames(self) -> list[str]:  # noqa: N802
        return self._cursor.columnNames
