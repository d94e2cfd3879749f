"""A compiled expression: the public face of the Rules language.

>>> expr = compile_expression('http.request.uri.path contains "/admin"')
>>> expr.matches({"http.request.uri.path": "/admin/x"}), expr.fields
(True, ('http.request.uri.path',))
>>> expr.to_sql()
'contains(coalesce(CAST("http.request.uri.path" AS VARCHAR), \\'\\'), \\'/admin\\')'
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

from ._scheme import Scheme, get_scheme
from .ast import Call, Compare, FieldRef, ListRef, Node, walk
from .codegen import Matches, generate
from .parser import parse
from .sql_compiler import to_sql


class Expression:
    """An expression parsed, type-checked and compiled once, evaluated many times."""

    def __init__(self, source: str, scheme: str | Scheme = "http") -> None:
        self.source = source
        self.scheme = get_scheme(scheme) if isinstance(scheme, str) else scheme
        self.tree: Node = parse(source, self.scheme)
        self._matches: Matches = generate(self.tree)
        # Bound on the instance, the generated function (codegen.py) shadows the method
        # below: one call less per request.
        self.__dict__["matches"] = self._matches

    def __repr__(self) -> str:
        return f"Expression({self.source!r})"

    def matches(self, fields: Mapping[str, Any], lists: Mapping[str, Any] | None = None) -> bool:
        """True when a request with these field values matches.

        ``fields`` maps field names to values (String as ``str`` or ``bytes``,
        Int as ``int``, Bool as ``bool``, IP as ``str`` or an ``ipaddress``
        object, arrays as lists, maps as dicts of lists). ``lists`` maps named
        list names (without ``$``) to their items. (Each instance answers
        through its generated function directly; this method calls the same one.)
        """
        return self._matches(fields, lists)

    @cached_property
    def fields(self) -> tuple[str, ...]:
        """Names of the fields the expression reads, sorted."""
        return tuple(sorted({n.name for n in walk(self.tree) if isinstance(n, FieldRef)}))

    @cached_property
    def functions(self) -> tuple[str, ...]:
        """Names of the functions the expression calls, sorted."""
        return tuple(sorted({n.name for n in walk(self.tree) if isinstance(n, Call)}))

    @cached_property
    def operators(self) -> frozenset[str]:
        """Comparison operators used (``eq``, ``contains``, ``matches``, ``in`` ...)."""
        return frozenset(n.op for n in walk(self.tree) if isinstance(n, Compare))

    @cached_property
    def lists(self) -> tuple[str, ...]:
        """Names of the named lists (``$name``) the expression refers to."""
        return tuple(sorted({n.name for n in walk(self.tree) if isinstance(n, ListRef)}))

    def to_sql(self, lists: Mapping[str, Any] | None = None, *, dialect: str = "duckdb") -> str:
        """A DuckDB boolean expression over columns named like the fields.

        Named lists are inlined from ``lists``; a list that is not given matches nothing.
        ``dialect`` ("spark", "trino", ...) translates it (:mod:`.dialects`).
        """
        sql = to_sql(self.tree, lists or {})
        if dialect == "duckdb":
            return sql
        from .dialects import to_dialect  # sqlglot loads only when another dialect is asked for

        return to_dialect(sql, dialect)


def compile_expression(source: str, scheme: str | Scheme = "http") -> Expression:
    """Parse, check and compile ``source``; raise :class:`ExpressionError` when it is invalid."""
    return Expression(source, scheme)
