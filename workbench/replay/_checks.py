"""The one entry point of the replay's optimiser: a plan's checks compiled to one query.

Every backend that runs checks in SQL (DuckDB over a chunk's in-memory table,
DuckDB over a Parquet log, Spark) calls :func:`compile_checks` and reads the
:class:`CheckQuery` it gives; none reaches into the optimiser's modules. The
query is each slot's check over the *shared columns*
(:class:`~._shared.SharedColumns`: each decoding or text function the checks
repeat, computed once a row, layer after layer), regexes behind their literal
prefilters and loose forms, header lists behind their gates, and the guards
(:mod:`._guards`) that say where a check's SQL may not be trusted for a row.

* ``table="lean"``: the in-memory table of a chunk (header lists kept as joined
  text, :mod:`._header_columns`); ``and``/``or`` are ``CASE`` chains. DuckDB only.
* ``table="typed"``: a Parquet log (a column per field, typed for the scheme),
  written for ``dialect`` (``duckdb`` or ``spark``, through sqlglot). A slot whose
  check has no SQL in the dialect gets None; where the shared form cannot be
  written in the dialect, the query is each check's plain SQL (no shared column).

A request's *key* is the vector of its slots' matches. The in-memory backend
fetches it as one boolean column per slot (:meth:`CheckQuery.projection`: its
rows come back to Python anyway, and a failed guard sends one cell, not the
row, to the per-request path); a log backend keeps it in the engine as one text
per row (:meth:`CheckQuery.key`, ``1``/``0`` per slot), since only the distinct
keys and their counts may come back. Both decide each distinct key once
(:mod:`._decide`).

    >>> from workbench.rules_language import compile_expression
    >>> checks = [compile_expression(f'url_decode(http.request.uri.query) contains "{s}"')
    ...           for s in ("<", ">")]
    >>> lean = compile_checks(checks)
    >>> len(lean.columns), [s.count("url_decode") for s in lean.checks]  # decoded once, as a column
    (1, [0, 0])
    >>> log = compile_checks(checks, "spark", table="typed", quote=lambda n: f"`{n}`")
    >>> log.key().startswith("CONCAT(CASE WHEN"), log.fallback()
    (True, '(raw IS NOT NULL)')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot.errors import SqlglotError

from ..rules_language import MANAGED, Expression, ExpressionError, compile_expression
from ..rules_language.ast import Compare, Pattern, walk
from ..rules_language.dialects import to_dialect
from ..rules_language.sql_compiler import SqlTranslationError, to_sql
from ..rules_language.sql_fragments import ident, sql_string
from ._guards import guards
from ._header_columns import lean_fields, lean_sql
from ._shared import Column, SharedColumns

TABLES = ("lean", "typed")


@dataclass
class CheckQuery:
    """A plan's checks as SQL over one table; see the module docstring."""

    #: The SQL dialect of :attr:`checks` and :attr:`guards`.
    dialect: str
    #: Each slot's check; None where it has no SQL (settled per request).
    checks: list[str | None]
    #: The distinct guards (true where a check's SQL can be trusted for the row).
    guards: list[str]
    #: The indexes in :attr:`guards` of each slot's guards.
    slot_guards: list[list[int]]
    #: The shared columns the checks read (in :attr:`dialect`).
    columns: list[Column] = field(default_factory=list)
    #: The table's fields the SQL reads (the lean table's, with its header forms).
    fields: list[str] = field(default_factory=list)
    quote: Callable[[str], str] = ident

    @property
    def without_sql(self) -> int:
        """How many slots have no SQL (each is settled per request, on every row)."""
        return sum(s is None for s in self.checks)

    def select(self, source: str) -> str:
        """A FROM clause: the rows of ``source`` with every shared column added, layer
        after layer (narrow selects, so each column is computed once a row)."""
        levels = max((c.level for c in self.columns), default=0)
        for level in range(1, levels + 1):
            added = [f"{c.sql} AS {self.quote(c.name)}" for c in self.columns if c.level == level]
            source = f"(SELECT *, {', '.join(added)} FROM {source})"
        return source

    def projection(self) -> list[str]:
        """One boolean column per slot with SQL (``b<slot>``) and per guard (``g<index>``)."""
        out = [f"{s} AS b{i}" for i, s in enumerate(self.checks) if s is not None]
        return out + [f"{g} AS g{j}" for j, g in enumerate(self.guards)]

    def key(self) -> str:
        """SQL of a request's key: ``1``/``0`` per slot (``?`` where it has no SQL)."""
        parts = [
            "'?'" if s is None else f"CASE WHEN {s} THEN '1' ELSE '0' END" for s in self.checks
        ]
        return f"CONCAT({', '.join(parts)})" if parts else "''"

    def fallback(self, raw: str = "raw") -> str:
        """SQL true for a log row the SQL cannot settle: every row when a slot has no SQL,
        else a row held as JSON (``raw``, text that is not UTF-8) or a failed guard."""
        if self.without_sql:
            return "true"
        tests = [f"{raw} IS NOT NULL"] + [f"NOT ({g})" for g in self.guards]
        return "(" + " OR ".join(tests) + ")"


def compile_checks(
    compiled: Sequence[Expression],
    dialect: str = "duckdb",
    *,
    table: str = "lean",
    quote: Callable[[str], str] = ident,
) -> CheckQuery:
    """The checks of ``compiled`` (a plan's slots, in order) as one query over ``table``."""
    if table not in TABLES:
        raise ValueError(f"table must be one of {', '.join(TABLES)}, got {table!r}")
    if table == "lean":
        if dialect != "duckdb":
            raise ValueError("the lean table is DuckDB's (an in-memory chunk)")
        share = SharedColumns(lean=True)
        checks, guard_sql, slot_guards = _over_shared(compiled, share)
        written = [s for s in checks if s] + guard_sql + [c.sql for c in share.columns]
        fields = lean_fields(sorted({f for c in compiled for f in c.fields}), written)
        return CheckQuery(dialect, checks, guard_sql, slot_guards, share.columns, fields, quote)
    plain = plain_checks(compiled, dialect, quote)
    try:
        return _typed(compiled, dialect, quote, [s is not None for s in plain.checks])
    except (SqlTranslationError, SqlglotError):
        return plain  # a shared column has no SQL in the dialect: each check's own SQL


def _typed(
    compiled: Sequence[Expression], dialect: str, quote: Callable[[str], str], only: list[bool]
) -> CheckQuery:
    """The shared form over a typed table (a log), in ``dialect``; only the slots of ``only``
    (those with SQL in the dialect: the others are settled per request)."""
    share = SharedColumns()
    checks, guard_sql, slot_guards = _over_shared(compiled, share, only)
    if any(c is None and o for c, o in zip(checks, only, strict=True)):
        raise SqlTranslationError("a check has SQL in the dialect but none over shared columns")
    written = [None if c is None else to_dialect(c, dialect) for c in checks]
    guard_sql = [to_dialect(g, dialect) for g in guard_sql]
    columns = [dataclasses.replace(c, sql=to_dialect(c.sql, dialect)) for c in share.columns]
    return CheckQuery(dialect, written, guard_sql, slot_guards, columns, [], quote)


def plain_checks(
    compiled: Sequence[Expression], dialect: str, quote: Callable[[str], str] = ident
) -> CheckQuery:
    """Each check's own SQL in ``dialect`` (no shared column), with its guards: what a typed
    table's query falls back to, and what its shared form must agree with."""
    checks: list[str | None] = []
    known: dict[str, int] = {}
    guard_sql: list[str] = []
    slot_guards: list[list[int]] = []
    for expr in compiled:
        indexes: list[int] = []
        try:
            sql: str | None = expr.to_sql(dialect=dialect)
            for text in guards(expr):
                if text not in known:
                    known[text] = len(guard_sql)
                    guard_sql.append(compile_expression(text, MANAGED).to_sql(dialect=dialect))
                indexes.append(known[text])
        except (SqlTranslationError, ExpressionError):
            sql, indexes = None, []  # evaluated per request, on every row
        checks.append(sql)
        slot_guards.append(indexes)
    return CheckQuery(dialect, checks, guard_sql, slot_guards, [], [], quote)


def _over_shared(
    compiled: Sequence[Expression], share: SharedColumns, only: Sequence[bool] | None = None
) -> tuple[list[str | None], list[str], list[list[int]]]:
    """Each expression's SQL and guards over ``share``'s columns, then the prefilters.

    A slot with no SQL translation (or a guard without one) gets None: it is settled
    per request. ``only``: the slots to compile (the others get None).
    """
    checks: list[str | None] = []
    known: dict[str, int] = {}
    guard_sql: list[str] = []
    slot_guards: list[list[int]] = []
    for i, expr in enumerate(compiled):
        sql: str | None = None
        indexes: list[int] = []
        if only is None or only[i]:
            try:
                sql = to_sql(expr.tree, {}, share, share.lean)
                for text in guards(expr):
                    if text not in known:
                        known[text] = len(guard_sql)
                        tree = compile_expression(text, MANAGED).tree
                        guard_sql.append(to_sql(tree, {}, share, share.lean))
                    indexes.append(known[text])
            except (SqlTranslationError, ExpressionError):
                sql, indexes = None, []  # no SQL, or no way to know when to trust it
        checks.append(sql)
        slot_guards.append(indexes)
    checks = share.prefilter(checks, {**regex_patterns(compiled), **share.gate_patterns})
    if share.lean:
        checks = [None if s is None else lean_sql(s) for s in checks]
        guard_sql = [lean_sql(s) for s in guard_sql]
        for c in share.columns:
            c.sql = lean_sql(c.sql)
    return checks, guard_sql, slot_guards


def regex_patterns(compiled: Sequence[Expression]) -> dict[str, Any]:
    """Each ``matches`` pattern's SQL literals (plain and byte view) mapped to its parsed
    tree: what :meth:`SharedColumns.prefilter` reads the patterns of a plan's checks from."""
    out: dict[str, Any] = {}
    for expr in compiled:
        for node in walk(expr.tree):
            if isinstance(node, Compare) and node.op == "matches" and isinstance(node.rhs, Pattern):
                regex = node.rhs.compiled
                for text in (regex.sql_pattern(), regex.sql_view_pattern()):
                    if text is not None:
                        out[sql_string(text)] = regex.tree
    return out
