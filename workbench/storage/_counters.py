"""``rowsRead`` and ``rowsWritten``: a model of the platform's SQL billing counters.

The platform counts btree rows stepped onto and rows plus index entries
written, inside a patched SQLite. Stock SQLite exposes neither, so this module
models the rules of ``shared/facts/do-storage.md`` from what SQLite does tell:
the query plan (``EXPLAIN QUERY PLAN``), the authorizer's view of the
statement, row counts, ``changes()`` and how far the cursor has been read.
It reproduces every row of the facts' table; where the count depends on where
the data lies (a filtered scan read partway, ``IN`` lists driving key lookups,
``EXISTS``), :mod:`._counters_vm` measures it with probe queries. Outside those
shapes it is an approximation (documented in ``docs/decisions.md``).

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
from typing import Any, Protocol

import apsw

from ._counters_program import Formula, Shape, shape
from ._counters_vm import exists_reads, filtered_scan_reads, in_list_reads
from ._sql_statements import Statement
from .names import quoted

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
    r"^(?P<verb>SCAN|SEARCH) (?P<name>\S+)(?P<exists> EXISTS)?(?: USING (?P<how>.*?))?"
    r"(?: \((?P<cons>[^)]*)\))?$"
)
_SUBQUERY = re.compile(r"^(?P<correlated>CORRELATED )?(?:SCALAR|LIST) SUBQUERY")
_REAL = ("scan", "rowid_eq", "unique_eq", "range")
_LOOKUP = ("rowid_eq", "unique_eq", "range")


class Counted(Protocol):
    """What the billing log reads of a statement: its counters, final once it is done."""

    @property
    def rows_read(self) -> int: ...

    @property
    def rows_written(self) -> int: ...


@dataclass
class Loop:
    """One loop of a query plan (``group`` > 0: inside that subquery of the plan)."""

    kind: str  # scan, rowid_eq, unique_eq, range, sorter, const
    name: str = ""
    bounded: bool = False
    ineq: bool = False  # a range by < or >: its seek counts even when it finds nothing
    group: int = 0
    correlated: bool = False
    cons: str = ""  # the plan's constraint text, such as ``g=?``
    exists: bool = False  # the loop of an EXISTS subquery turned into a join
    auto: bool = False  # a search through an automatic index, built once per statement


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
_LIKE_A_TABLE = {apsw.SQLITE_CREATE_TABLE, apsw.SQLITE_CREATE_VIEW, apsw.SQLITE_CREATE_VTABLE}


class Planner:
    """Query plans and schema facts, cached until the schema changes."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self._c = conn.cursor()
        self._plans: dict[str, list[Loop]] = {}
        self._indexes: dict[str, list[tuple[str, bool, list[str]]]] = {}
        self._shapes: dict[str, Shape] = {}

    def invalidate(self) -> None:
        self._plans.clear()
        self._indexes.clear()
        self._shapes.clear()

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

    def shape(self, text: str, bindings: tuple) -> Shape:
        """What the statement's program does per row (:mod:`._counters_program`), cached."""
        found = self._shapes.get(text)
        if found is None:
            found = self._shapes[text] = shape(self._c, text, bindings)
        return found

    def rows(self, table: str) -> int:
        try:
            return self._query(f"SELECT count(*) FROM main.{quoted(table)}")[0][0]
        except apsw.Error:
            return 0

    def plan(self, text: str, bindings: tuple) -> list[Loop]:
        if text not in self._plans:
            try:
                rows = self._query("EXPLAIN QUERY PLAN " + text, bindings)
            except apsw.Error:
                rows = []
            parents = {r[0]: r[1] for r in rows}
            details = {r[0]: r[3] for r in rows}
            loops = []
            for node, _parent, _, detail in rows:
                if _SUBQUERY.match(detail):
                    continue
                loop = self._loop(detail)
                up = parents.get(node, 0)
                while up:  # the nearest enclosing subquery, if any
                    m = _SUBQUERY.match(details.get(up, ""))
                    if m:
                        loop.group, loop.correlated = up, bool(m.group("correlated"))
                        break
                    up = parents.get(up, 0)
                loops.append(loop)
            self._plans[text] = loops
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
        loop = self._kind(m.group("verb"), name, how, cons)
        loop.exists, loop.auto = bool(m.group("exists")), how.startswith("AUTOMATIC")
        loop.cons = cons
        return loop

    def _kind(self, verb: str, name: str, how: str, cons: str) -> Loop:
        if verb == "SCAN":
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
        return Loop("range", name, bounded, ineq="<" in cons or ">" in cons)

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
        self.returned: int | None = None  # rows a RETURNING clause produced, once known
        self.real: list[Loop] = []
        self.ended = False  # the statement ran to its end (not merely closed)
        self.positions: dict[int, int] = {}  # filtered scan: rows stepped per pull
        self.in_first: int | None = None  # an IN list's lookups, counted before they run
        if self.kind in ("update", "delete"):
            self.loops = planner.plan(st.text, bindings)
            for loop in self.loops:
                if loop.kind == "scan":
                    table = planner.resolve(loop.name, set())
                    self.before[loop.name] = planner.rows(table)
            lookups = [lp for lp in self.loops if lp.kind in _LOOKUP and not lp.group]
            if st.has("IN") and len(lookups) == 1:
                self.in_first = in_list_reads(self, lookups[0])
        elif self.kind == "drop" and st.object_after("DROP", "TABLE"):
            # DROP TABLE reads as many rows as the table holds (the facts' 10-row case)
            self.before["drop"] = planner.rows(st.object_after("DROP", "TABLE") or "")

    # -- after the first step ---------------------------------------------------
    def executed(self, schema_changed: bool) -> None:
        st, a = self.st, self.auth
        kind = self.kind
        if kind == "select":
            self.loops = self.p.plan(st.text, self.bindings)
            aggregate = bool(a.functions & AGGREGATES) and not st.has("GROUP")
            outer = [lp for lp in self.loops if lp.kind in _REAL and not lp.group]
            real = [lp for lp in outer if not lp.exists]
            subqueries = [lp for lp in self.loops if lp.kind in _REAL and lp.group]
            sorter = any(lp.kind == "sorter" and not lp.group for lp in self.loops)
            # (an aggregate over an IN list's lookups steps the same rows)
            in_list = aggregate and not sorter and self.st.has("IN")
            if self._stepped(outer, real, subqueries, sorter or (aggregate and not in_list)):
                return
            if not real and not subqueries:
                self.fixed_reads = 0
            elif len(real) != 1 or sorter or aggregate or subqueries:
                self.fixed_reads = self._nested(real, sorter, aggregate) + self._subqueries(
                    real, subqueries
                )
            self.real = real
        elif kind == "create":
            if not schema_changed:
                self.fixed_reads, self.written = 0, 0
            elif self._creates() in ("TABLE", "VIEW", "VIRTUAL") or a.ddl in _LIKE_A_TABLE:
                # a view or a virtual table is made like a table: a placeholder row in
                # sqlite_master, then that row rewritten (one seek, two writes)
                self.fixed_reads, self.written = 1, 2
            elif a.ddl == apsw.SQLITE_CREATE_INDEX:
                n = self.p.rows(a.ddl_table or "")
                self.fixed_reads, self.written = 2 * n + 2, n + 1
            else:  # a trigger: one row inserted into sqlite_master
                self.fixed_reads, self.written = 0, 1
        elif kind == "alter":
            self.fixed_reads, self.written = (6, 1) if schema_changed else (0, 0)
        elif kind == "drop":
            what = st.words[1] if len(st.words) > 1 else ""
            reads = {"TABLE": self.before.get("drop", 0), "VIEW": 6, "INDEX": 4}.get(what, 0)
            self.fixed_reads, self.written = (reads, 0) if schema_changed else (0, 0)
        elif kind not in ("insert", "update", "delete"):
            self.fixed_reads = 0

    def _stepped(
        self, outer: list[Loop], real: list[Loop], subqueries: list[Loop], plain: bool
    ) -> bool:
        """Counts that depend on where the data lies (``EXISTS``, an ``IN`` list driving a
        key lookup): measured by :mod:`._counters_vm`, True when it could."""
        if plain:
            return False
        fixed = None
        if self.st.has("EXISTS") and (len(outer) != len(real) or subqueries):
            fixed = exists_reads(self, outer)
        elif self.st.has("IN") and len(real) == 1 and real[0].kind in _LOOKUP:
            fixed = in_list_reads(self, real[0])
            groups = {lp.group for lp in subqueries}
            if fixed is not None and len(groups) > 1:  # (the list's own subquery is counted)
                fixed += self._subqueries(real, subqueries) - self._subqueries(
                    real, [lp for lp in subqueries if lp.group == min(groups)]
                )
        if fixed is None:
            return False
        self.fixed_reads, self.real = fixed, real
        return True

    def _creates(self) -> str:
        """``TABLE``, ``INDEX``, ``VIEW``, ``TRIGGER`` or ``VIRTUAL``: what a CREATE makes
        (a virtual table's module may create tables of its own while it runs)."""
        for word in self.st.words[1:4]:
            if word in ("TABLE", "INDEX", "VIEW", "TRIGGER", "VIRTUAL"):
                return word
        return ""

    def _subqueries(self, outer: list[Loop], loops: list[Loop]) -> int:
        """Reads of the plan's subqueries: once each, or once per outer row if correlated."""
        if not loops:
            return 0
        outer_rows = 1
        for loop in outer:
            outer_rows *= self._visits(loop) if loop.kind != "range" else self._count_matches(loop)
        total = 0
        for group in dict.fromkeys(lp.group for lp in loops):
            members = [lp for lp in loops if lp.group == group]
            reads, mult = 0, 1
            for loop in members:
                visits = self._visits(loop)
                reads += mult * visits
                mult *= visits
            total += reads * (outer_rows if members[0].correlated else 1)
        return total

    def _visits(self, loop: Loop) -> int:
        """Rows one pass of a loop visits (a range inside a subquery: its whole table)."""
        if loop.kind in ("scan", "range"):
            return self.p.rows(self.p.resolve(loop.name, self.auth.reads))
        return 1

    def _nested(self, loops: list[Loop], sorter: bool, aggregate: bool) -> int:
        if not loops:
            return 0
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
        returning = self.st.has("RETURNING")
        if returning:  # its rows are stepped through from an ephemeral table (see reads)
            self.returned = returned
        shape = self.p.shape(self.st.text, self.bindings) if returning else None
        if kind == "insert":
            n_idx = len(self.p.indexes(main)) if main else 0
            self.written = k * (1 + n_idx) + trig_rows * trig_mult
            select = self.st.has("SELECT") or self.st.keyword == "WITH"
            # RETURNING stores several VALUES rows in an ephemeral table first: one read each
            stored = k if shape is not None and shape.second_pass == "eph" else 0
            self.fixed_reads = 2 * k + 1 if select else stored
            return
        reads = 0
        # SQLite clears the table (no row read), unless RETURNING needs each row
        truncate = kind == "delete" and not self.st.has("WHERE") and not returning
        if self.in_first is not None:
            reads = self.in_first
        for loop in [] if truncate or self.in_first is not None else self.loops:
            if loop.kind == "scan":
                reads += self.before.get(loop.name, 0)
            elif loop.kind == "rowid_eq":
                reads += 1
            elif loop.kind == "unique_eq":
                reads += k
            elif loop.kind == "range":
                reads += k + (1 if k and loop.bounded else 0) + (1 if not k and loop.ineq else 0)
        changed = 0
        if kind == "update" and main:
            changed = sum(1 for _, _, cols in self.p.indexes(main) if set(cols) & a.update_cols)
        if shape is None and (changed or self.in_first is not None):
            shape = self.p.shape(self.st.text, self.bindings)
        if shape is not None:
            # a second pass over the collected rows (read from the program): stepping an
            # ephemeral table (its Rewind counts even when empty), then a seek per row
            if shape.second_pass == "eph":
                reads += max(k, 1)
            if shape.second_pass is not None:
                reads += shape.seeks * k
        if kind == "update":
            self.written = k * (1 + changed) + trig_rows * trig_mult
        else:
            self.written = k + trig_rows
        self.fixed_reads = reads

    @property
    def rows_read(self) -> int:
        """rowsRead so far (final once the cursor is done)."""
        return self.reads(self.pulled, self.done)

    @property
    def rows_written(self) -> int:
        return self.written

    def formula(self) -> Formula | None:
        """The counters as a :class:`Formula` when they depend only on the cursor's progress
        and the rows changed (no table counts, no triggers, no RETURNING), else None."""
        kind, a, st = self.kind, self.auth, self.st
        if st.has("RETURNING") or any(trig is not None for _, trig in a.writes):
            return None
        if kind == "select":
            if self.fixed_reads == 0 and not self.real:
                return Formula("const")
            if self.fixed_reads is not None or len(self.real) != 1:
                return None
            loop = self.real[0]
            if loop.kind == "scan" and st.has("WHERE"):
                return None  # a filtered scan reads as far as its last match: counted by query
            return Formula(loop.kind, bounded=loop.bounded, ineq=loop.ineq)
        main = next((t for t, trig in a.writes if trig is None), None)
        if main is None or self.fixed_reads is None:
            return None
        n_idx = len(self.p.indexes(main))
        if kind == "insert":
            if st.has("SELECT") or st.keyword == "WITH":
                return None
            return Formula("write", write_mult=1 + n_idx)
        if kind not in ("update", "delete") or any(lp.kind == "scan" for lp in self.loops):
            return None
        if self.in_first is not None:
            return None  # an IN list's lookups: counted by query
        if kind == "delete" and not st.has("WHERE"):
            return Formula("write", write_mult=1)
        base = sum(1 for lp in self.loops if lp.kind == "rowid_eq")
        per_row = sum(1 for lp in self.loops if lp.kind in ("unique_eq", "range"))
        probe = sum(1 for lp in self.loops if lp.kind == "range" and lp.bounded)
        missed = sum(1 for lp in self.loops if lp.kind == "range" and lp.ineq)
        if kind == "delete":
            return Formula(
                "write", base=base, per_row=per_row, probe=probe, write_mult=1, idle=missed
            )
        changed = sum(1 for _, _, cols in self.p.indexes(main) if set(cols) & a.update_cols)
        idle = missed
        if changed:  # the second pass the program makes (see completed)
            shape = self.p.shape(st.text, self.bindings)
            eph = shape.second_pass == "eph"
            per_row += (1 if eph else 0) + (shape.seeks if shape.second_pass else 0)
            idle += 1 if eph else 0
        return Formula(
            "write", base=base, per_row=per_row, probe=probe, write_mult=1 + changed, idle=idle
        )

    def reads(self, pulled: int, done: bool) -> int:
        if self.fixed_reads is not None:
            if self.returned is not None:
                # the RETURNING rows' ephemeral table: its Rewind, then one Next per row
                return self.fixed_reads + max(pulled, 1)
            return self.fixed_reads
        if self.kind != "select":
            return 0
        loop = self.real[0]
        if loop.kind == "rowid_eq":
            return max(pulled, 1)
        if loop.kind == "unique_eq":
            return pulled
        if loop.kind == "range":
            if done and not pulled:
                return 1 if loop.ineq else 0
            return pulled + (1 if done and loop.bounded else 0)
        if not self.st.has("WHERE"):
            return 1 if done and not pulled else pulled  # (an empty table's Rewind counts)
        return filtered_scan_reads(self, loop, pulled)
