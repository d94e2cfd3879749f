"""What a write statement's bytecode does per row, read from ``EXPLAIN``, for the counters.

workerd's SQLite counts a row read each time the VM executes one of a few opcodes
(``Rewind``, ``Last``, a successful ``Next``/``Prev``/``SorterNext``, ``SeekRowid`` and
``NotExists``, a ``SeekGE``/``GT``/``LE``/``LT`` that lands, ``Count``, ``VNext``), on
table, index *and* ephemeral cursors alike (workerd's ``0001-row-counts-plain.patch``).
A statement with ``RETURNING``, or an ``UPDATE`` that changes a key, is not one pass
over its rows: SQLite first collects the rows (an ephemeral table it then rewinds and
steps through, or a RowSet, which is not counted), then seeks each one again, and a
``RETURNING`` clause's rows are stored in an ephemeral table that the cursor steps
through. Which of these a statement does is in its program, so it is read there, once
per statement text, rather than guessed from the text. (:class:`Formula` keeps the
counters of a statement shape that depends only on its cursor and the rows it changed.)

    >>> import apsw
    >>> conn = apsw.Connection(":memory:")
    >>> _ = conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, g); CREATE INDEX tg ON t(g)")
    >>> shape(conn.cursor(), "UPDATE t SET g = 2 WHERE g = 1", ())
    Shape(second_pass='eph', seeks=1, returning=False)
    >>> shape(conn.cursor(), "INSERT INTO t(g) VALUES (1), (2) RETURNING id", ())
    Shape(second_pass='eph', seeks=0, returning=True)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import apsw

_SEEKS = ("NotExists", "SeekRowid")  # counted per row of a second pass (NotFound is not)


class Shape(NamedTuple):
    """``second_pass``: ``eph`` (rows collected in an ephemeral table, rewound and stepped:
    one read per row, one for the ``Rewind`` even when there are none; for an ``INSERT``,
    its ``VALUES`` or ``SELECT`` rows stored before they are written), ``rowset`` (not
    counted) or None; ``seeks``: counted seeks per row in the second pass; ``returning``:
    rows are returned from an ephemeral table (one read per row stepped, one at least)."""

    second_pass: str | None
    seeks: int
    returning: bool


NO_SHAPE = Shape(None, 0, False)


def shape(cur: apsw.Cursor, text: str, bindings: tuple[Any, ...]) -> Shape:
    """The per-row structure of ``text``'s program (:data:`NO_SHAPE` if it cannot be had)."""
    try:
        ops = [(r[1], r[2]) for r in cur.execute("EXPLAIN " + text, bindings).fetchall()]
    except apsw.Error:
        return NO_SHAPE
    # (an IN list's ephemeral index is built under a Once: part of the first pass)
    eph = {
        p1
        for i, (op, p1) in enumerate(ops)
        if op == "OpenEphemeral" and not any(o == "Once" for o, _ in ops[max(i - 2, 0) : i])
    }
    first_row = next((i for i, (op, _) in enumerate(ops) if op == "ResultRow"), None)
    returning_cursor = None
    if first_row is not None:  # the cursor rewound just before the first result row
        rewinds = [p1 for op, p1 in ops[:first_row] if op == "Rewind"]
        returning_cursor = rewinds[-1] if rewinds and rewinds[-1] in eph else None
    end = next(
        (i for i, (op, p1) in enumerate(ops) if op == "Rewind" and p1 == returning_cursor),
        len(ops),
    )
    second = None
    start = end
    for i, (op, p1) in enumerate(ops[:end]):
        if op == "RowSetRead":
            second, start = "rowset", i
            break
        if op == "Rewind" and p1 in eph:
            second, start = "eph", i
            break
    seeks = sum(1 for op, _ in ops[start:end] if op in _SEEKS) if second else 0
    return Shape(second, seeks, returning_cursor is not None)


class Formula:
    """Counters of a statement shape that depend only on how far its cursor was read and
    how many rows it changed, so they can be kept with the statement's text and computed
    when read (the SQL API's fast path). ``read_kind``: ``const``, ``rowid_eq``,
    ``unique_eq``, ``range``, ``scan`` (a read loop), or ``write`` (``base`` reads, plus
    ``per_row`` for each changed row, plus ``probe`` when any row changed, else ``idle``).

    >>> f = Formula("write", base=1, per_row=0, probe=0, write_mult=2)
    >>> f.reads(0, True, 3), f.written(3)
    (1, 6)
    """

    __slots__ = ("read_kind", "bounded", "ineq", "base", "per_row", "probe", "write_mult", "idle")

    def __init__(
        self,
        read_kind: str,
        *,
        bounded: bool = False,
        ineq: bool = False,
        base: int = 0,
        per_row: int = 0,
        probe: int = 0,
        write_mult: int = 0,
        idle: int = 0,
    ) -> None:
        self.read_kind, self.bounded, self.ineq = read_kind, bounded, ineq
        self.base, self.per_row, self.probe, self.write_mult = base, per_row, probe, write_mult
        self.idle = idle  # added when no row changed (an empty ephemeral table's Rewind)

    def reads(self, pulled: int, done: bool, changes: int) -> int:
        kind = self.read_kind
        if kind == "write":
            return self.base + self.per_row * changes + (self.probe if changes else self.idle)
        if kind == "rowid_eq":
            return pulled if pulled > 1 else 1
        if kind == "range":
            if done and not pulled:
                return 1 if self.ineq else 0
            return pulled + (1 if done and self.bounded else 0)
        if kind == "const":
            return self.base
        if kind == "scan" and done and not pulled:
            return 1  # the Rewind onto an empty table still counts
        return pulled  # unique_eq, and a scan that stops where the cursor stops

    def written(self, changes: int) -> int:
        return self.write_mult * changes
