"""The keys query of a compiled plan, with each shared decoded value computed once per row.

:meth:`.replay.CompiledPlan.key_sql` repeats each check's whole decoding
(``url_decode`` of the same concatenated fields) in every check that reads it:
over a hundred times per row for the managed rulesets. :class:`SharedKeys`
compiles the same checks with the whole-table path's sharing hook
(:class:`~workbench.replay._shared.SharedColumns`): the decoded values become
columns added layer after layer in narrow selects over the log, the checks
and guards read them, and regexes over them run behind their literal
prefilters. Every engine runs it (each column and check written for its
dialect); a request's key and fallback are the same as the plain query's.

    >>> from workbench.core.security import Check, StaticPlan, Verdict
    >>> from workbench.traffic.zone_plan import ZonePlan
    >>> from ._log_replay import CompiledPlan
    >>> checks = [Check(f"c{i}", f'url_decode(http.request.uri.query, "r") contains "{s}"')
    ...     for i, s in enumerate(["<", ">"])]
    >>> compiled = CompiledPlan(ZonePlan(StaticPlan(checks, lambda m: Verdict([]))), "duckdb")
    >>> keys = SharedKeys(compiled, "log")
    >>> keys.shared, compiled.key_sql().count("url_decode") > keys.key.count("url_decode")
    (1, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot.errors import SqlglotError

from ..rules_language.dialects import to_dialect
from ..rules_language.sql import SqlTranslationError
from ._shared import SharedColumns, compile_checks

if TYPE_CHECKING:
    from ._log_replay import CompiledPlan


class SharedKeys:
    """A plan's key and fallback SQL over :attr:`source`, the log with its shared columns."""

    def __init__(self, compiled: CompiledPlan, source: str) -> None:
        dialect = compiled.dialect
        share = SharedColumns()
        # Only the slots with SQL in this dialect (the others are settled per request).
        done = compile_checks(compiled.compiled, share, [s is not None for s in compiled.sql])
        checks = done.checks
        if any(c is None and s is not None for c, s in zip(checks, compiled.sql, strict=True)):
            raise SqlTranslationError("a check has SQL in the dialect but none over shared columns")
        parts = [
            "'?'" if c is None else f"CASE WHEN {to_dialect(c, dialect)} THEN '1' ELSE '0' END"
            for c in checks
        ]
        #: SQL of a request's key over :attr:`source` (as ``CompiledPlan.key_sql``).
        self.key = f"CONCAT({', '.join(parts)})" if parts else "''"
        if compiled.without_sql:
            fallback = "true"
        else:
            tests = ["raw IS NOT NULL"] + [f"NOT ({to_dialect(g, dialect)})" for g in done.guards]
            fallback = "(" + " OR ".join(tests) + ")"
        #: SQL true for a request the SQL cannot settle (as ``CompiledPlan.fallback_sql``).
        self.fallback = fallback
        #: The log's rows with every shared column added: what :attr:`key` reads.
        self.source = share.select(source, lambda sql: to_dialect(sql, dialect), compiled.quote)
        #: How many shared columns the checks read.
        self.shared = len(share.columns)

    @classmethod
    def of(cls, compiled: CompiledPlan, source: str) -> SharedKeys | None:
        """The shared form of ``compiled`` over ``source``, or None where a column has no SQL."""
        try:
            return cls(compiled, source)
        except (SqlTranslationError, SqlglotError):
            return None  # the plain key and fallback still run
