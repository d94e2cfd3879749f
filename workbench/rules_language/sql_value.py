"""What the whole-table compiler and its function translations share.

:mod:`.sql` compiles a tree to DuckDB and hands each function call to
:mod:`._sql_calls`, which needs a few of the compiler's methods back. Both
depend on this module instead of on each other: the value type :class:`Val`,
the error, and :class:`SqlCompiler`, the part of the compiler a call may use.

    >>> from workbench.rules_language.types import INT
    >>> v = Val('"cf.waf.score"', INT, nullable=True)
    >>> v.sql, v.type.kind, v.view
    ('"cf.waf.score"', 'Int', False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .ast import Node, Pattern
from .types import Type


class SqlTranslationError(ValueError):
    """A valid expression that has no DuckDB translation in the workbench."""


@dataclass
class Val:
    """A value in SQL: its text, whether it may be NULL (missing), whether it is a byte view."""

    sql: str
    type: Type
    nullable: bool = False
    view: bool = False
    each: bool = False
    raw: str | None = None  # for an IP field: the column holding its text


class SqlCompiler(Protocol):
    """What a function translation asks of the compiler (``sql._Compiler`` provides it)."""

    def var(self) -> str:
        """A fresh lambda variable name."""
        ...

    def value(self, node: Node) -> Val:
        """The SQL value of a value node."""
        ...

    def boolean(self, node: Node) -> str:
        """A non-NULL SQL boolean (or, for ``Array<Bool>``, a list of them)."""
        ...

    def pattern(self, v: Val, op: str, rhs: Pattern) -> str:
        """``v`` tested against a ``matches`` or ``wildcard`` pattern."""
        ...
