"""``rowsRead`` and ``rowsWritten``: a model of the platform's SQL billing counters.

The platform counts btree rows stepped onto and rows plus index entries
written, inside a patched SQLite. Stock SQLite exposes neither, so this module
models the rules of ``shared/facts/do-storage.md`` from what SQLite does tell:
the query plan (``EXPLAIN QUERY PLAN``), the authorizer's view of the
statement, row counts, ``changes()`` and how far the cursor has been read.
It reproduces every row of the facts' table; outside those shapes it is an
approximation (documented in ``docs/decisions.md``).

    >>> import apsw
    >>> conn = apsw.Connection(":memory:")
    >>> _ = conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, g)")
    >>> _ = conn.execute("INSERT INTO t(g) VALUES (1), (2), (3)")
    >>> Planner(conn).plan("SELECT * FROM t WHERE id = ?", (2,))[0].kind
    'rowid_eq'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import apsw

from .sql_statements import Statement

AGGREGATES = {
    "count",
    "sum",
    "total",
    "avg",
    "min",
    "max",
    "group_concat",
    "string_agg",
    "json_group_array",
    "json_group_object",
}
_LOOP = re.compile(
    r"^(?P<verb>SCAN|SEARCH) (?P<name>\S+)(?: USING (?P<how>.*?))?(?: \((?P<cons>[^)]*)\))?$"
)


@dataclass
class Loop:
    """One loop of a query plan."""

    kind: str  # scan, rowid_eq, unique_eq, range, sorter, const
    name: str = ""
    bounded: bool = False


@dataclass
class AuthInfo:
    """What the authorizer saw while a statement was prepared."""

    writes: list[tuple[str, str | None]] = field(default_factory=list)
    update_cols: set[str] = field(default_factory=set)
    functions: set[str] = field(default_factory=set)
    reads: set[str] = field(default_factory=set)
    ddl: int | None = None
    ddl_table: str | None = None


EMPTY_AUTH = AuthInfo()


class Planner:
    """Query plans and schema facts, cached until the schema changes."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self._c = conn.cursor()
        self._plans: dict[str, list[Loop]] = {}
        self._indexes: dict[str, list[tuple[str, bool, list[str]]]] = {}

    def invalidate(self) -> None:
        self._plans.clear()
        self._indexes.clear()

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Every row of ``sql`` (SQLite's own tables and plans: the column types are known)."""
        return self._c.execute(sql, args).fetchall()

    def tables(self) -> set[str]:
        return {r[0] for r in self._query("SELECT name FROM main.sqlite_master WHERE type='table'")}

    def indexes(self, table: str) -> list[tuple[str, bool, list[str]]]:
        """``(name, unique, columns)`` of each index of ``table`` (the PK of a WITHOUT ROWID table excluded)."""
        if table not in self._indexes:
            out = []
            try:
                rows = self._query(
                    'SELECT name, "unique", origin FROM pragma_index_list(?)', (table,)
                )
                for name, unique, origin in rows:
                    cols = [
                        r[0] for r in self._query("SELECT name FROM pragma_index_info(?)", (name,))
                    ]
                    without_rowid_pk = origin == "pk" and not self._has_rowid(table)
                    if not without_rowid_pk:
                        out.append((name, bool(unique), [c for c in cols if c]))
            except apsw.Error:
                pass
            self._indexes[table] = out
        return self._indexes[table]

    def _has_rowid(self, table: str) -> bool:
        sql = self._query("SELECT sql FROM main.sqlite_master WHERE name = ?", (table,))
        return not (sql and sql[0][0] and "WITHOUT ROWID" in sql[0][0].upper())

    def rows(self, table: str) -> int:
        quoted = '"' + table.replace('"', '""') + '"'
        try:
            return self._query(f"SELECT count(*) FROM main.{quoted}")[0][0]
        except apsw.Error:
            return 0

    def plan(self, text: str, bindings: tuple) -> list[Loop]:
        if text not in self._plans:
            try:
                rows = self._query("EXPLAIN QUERY PLAN " + text, bindings)
            except apsw.Error:
                rows = []
            self._plans[text] = [self._loop(r[3]) for r in rows]
        return self._plans[text]

    def _loop(self, detail: str) -> Loop:
        if detail.startswith("USE TEMP B-TREE"):
            return Loop("sorter")
        if detail == "SCAN CONSTANT ROW":
            return Loop("const")
        m = _LOOP.match(detail)
        if not m:
            return Loop("other")
        name, how, cons = m.group("name"), m.group("how") or "", m.group("cons") or ""
        if m.group("verb") == "SCAN":
            return Loop("scan", name)
        bounded = "=" in cons or "<" in cons
        eq_cols = [c.split("=")[0] for c in cons.split(" AND ") if re.match(r"^\w+=\?$", c)]
        if how.startswith("INTEGER PRIMARY KEY") and cons == "rowid=?":
            return Loop("rowid_eq", name, True)
        table = self.resolve(name, set())
        if how.startswith("PRIMARY KEY"):
            pk = [
                r[0]
                for r in self._query("SELECT name FROM pragma_table_info(?) WHERE pk > 0", (table,))
            ]
            if pk and len(eq_cols) == len(pk):
                return Loop("unique_eq", name, True)
        idx = how.split()[-1] if "INDEX" in how else ""
        for iname, unique, cols in self.indexes(table):
            if iname == idx and unique and len(eq_cols) == len(cols):
                return Loop("unique_eq", name, True)
        return Loop("range", name, bounded)

    def resolve(self, name: str, reads: set[str]) -> str:
        tables = self.tables()
        if name in tables:
            return name
        real = [t for t in reads if t in tables]
        return real[0] if len(real) == 1 else name


class StatementCounter:
    """The counters of one statement; ``reads(pulled, done)`` follows the cursor."""

    def __init__(self, planner: Planner, st: Statement, bindings: tuple) -> None:
        self.p, self.st, self.bindings = planner, st, bindings
        self.kind = st.kind
        self.written = 0
        self.fixed_reads: int | None = None
        self.auth = EMPTY_AUTH  # replaced by the authorizer or the cache
        self.changes = 0
        self.total_changes = 0
        self.before: dict[str, int] = {}
        self.loops: list[Loop] = []
        self.pulled = 0
        self.done = False
        if self.kind in ("update", "delete"):
            self.loops = planner.plan(st.text, bindings)
            for loop in self.loops:
                if loop.kind == "scan":
                    table = planner.resolve(loop.name, set())
                    self.before[loop.name] = planner.rows(table)
        elif self.kind == "drop" and st.object_after("DROP", "TABLE"):
            self.before["drop"] = planner.rows(st.object_after("DROP", "TABLE") or "")

    # -- after the first step ---------------------------------------------------
    def executed(self, schema_changed: bool) -> None:
        st, a = self.st, self.auth
        kind = self.kind
        if kind == "select":
            self.loops = self.p.plan(st.text, self.bindings)
            aggregate = bool(a.functions & AGGREGATES) and not st.has("GROUP")
            real = [
                lp for lp in self.loops if lp.kind in ("scan", "rowid_eq", "unique_eq", "range")
            ]
            sorter = any(lp.kind == "sorter" for lp in self.loops)
            if not real:
                self.fixed_reads = 0
            elif len(real) > 1 or sorter or aggregate:
                self.fixed_reads = self._nested(real, sorter, aggregate)
            self.real = real
        elif kind == "create":
            if not schema_changed:
                self.fixed_reads, self.written = 0, 0
            elif st.words[:2] == ["CREATE", "TABLE"] or a.ddl == apsw.SQLITE_CREATE_TABLE:
                self.fixed_reads, self.written = 1, 2
            elif a.ddl == apsw.SQLITE_CREATE_INDEX:
                n = self.p.rows(a.ddl_table or "")
                self.fixed_reads, self.written = 2 * n + 2, n + 1
            else:  # trigger, view, virtual table
                self.fixed_reads, self.written = 0, 1
        elif kind == "alter":
            self.fixed_reads, self.written = (6, 1) if schema_changed else (0, 0)
        elif kind == "drop":
            what = st.words[1] if len(st.words) > 1 else ""
            reads = {"TABLE": self.before.get("drop", 0), "VIEW": 6, "INDEX": 4}.get(what, 0)
            self.fixed_reads, self.written = (reads, 0) if schema_changed else (0, 0)
        elif kind not in ("insert", "update", "delete"):
            self.fixed_reads = 0

    def _nested(self, loops: list[Loop], sorter: bool, aggregate: bool) -> int:
        if aggregate and len(loops) == 1 and loops[0].kind == "range":
            return self._count_matches(loops[0])
        total, mult = 0, 1
        for loop in loops:
            if loop.kind == "scan":
                visits = self.p.rows(self.p.resolve(loop.name, self.auth.reads))
            elif loop.kind == "range":
                visits = self._count_matches(loop)
            else:
                visits = 1
            total += mult * visits
            mult *= visits
        return total + (mult if sorter else 0)

    def _count_matches(self, loop: Loop) -> int:
        text = self.st.text
        m = re.search(r"\bFROM\b", text, re.I)
        if not m:
            return 1
        try:
            tail = re.split(r"\b(?:GROUP|ORDER|LIMIT)\b", text[m.end() :], flags=re.I)[0]
            count = f"SELECT count(*) FROM {tail.rstrip().rstrip(';')}"
            return self.p._query(count, self.bindings)[0][0]
        except apsw.Error:
            return 1

    # -- at completion ------------------------------------------------------------
    def completed(self, changes: int, total_changes: int, returned: int) -> None:
        """Fix the write counts once SQLite has finished the statement."""
        kind, a = self.kind, self.auth
        if kind not in ("insert", "update", "delete"):
            return
        main = next((t for t, trig in a.writes if trig is None), None)
        trigger_tables = {t for t, trig in a.writes if trig is not None}
        trig_rows = max(total_changes - changes, 0)
        trig_mult = 1
        if len(trigger_tables) == 1:
            trig_mult += len(self.p.indexes(next(iter(trigger_tables))))
        k = changes
        ret = 2 * returned if self.st.has("RETURNING") else 0
        if kind == "insert":
            n_idx = len(self.p.indexes(main)) if main else 0
            self.written = k * (1 + n_idx) + trig_rows * trig_mult
            select = self.st.has("SELECT") or self.st.keyword == "WITH"
            self.fixed_reads = (2 * k + 1 if select else 0) + ret
            return
        reads = 0
        truncate = kind == "delete" and not self.st.has("WHERE")  # SQLite clears the table
        for loop in [] if truncate else self.loops:
            if loop.kind == "scan":
                reads += self.before.get(loop.name, 0)
            elif loop.kind == "rowid_eq":
                reads += 1
            elif loop.kind == "unique_eq":
                reads += k
            elif loop.kind == "range":
                reads += k + (1 if k and loop.bounded else 0)
        if kind == "update":
            changed = 0
            if main:
                changed = sum(1 for _, _, cols in self.p.indexes(main) if set(cols) & a.update_cols)
            reads += 2 * k * changed
            self.written = k * (1 + changed) + trig_rows * trig_mult
        else:
            self.written = k + trig_rows
        self.fixed_reads = reads + ret

    @property
    def rows_read(self) -> int:
        """rowsRead so far (final once the cursor is done)."""
        return self.reads(self.pulled, self.done)

    def reads(self, pulled: int, done: bool) -> int:
        if self.fixed_reads is not None:
            return self.fixed_reads
        if self.kind != "select":
            return 0
        loop = self.real[0]
        if loop.kind == "rowid_eq":
            return max(pulled, 1)
        if loop.kind == "unique_eq":
            return pulled
        if loop.kind == "range":
            return pulled + (1 if done and pulled and loop.bounded else 0)
        if done and self.st.has("WHERE") and not self.st.has("LIMIT"):
            self.fixed_reads = self.p.rows(self.p.resolve(loop.name, self.auth.reads))
            return self.fixed_reads
        return pulled
