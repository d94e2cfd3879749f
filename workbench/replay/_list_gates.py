"""Gates for ``any(...)`` over header lists: a test on the joined text instead of a lambda.

``any(http.request.headers.values[*] matches r"...")`` compiles to a DuckDB
lambda over each request's list, which costs far more per row than a test on
one text. Every element of the list is a piece of the list's joined text (the
lean table's column, see :mod:`workbench.replay._header_columns`), so:

* ``eq`` and ``in``: some element equals a literal exactly when the joined text,
  with a separator added at each end, holds the literal between separators (the
  lean table keeps no row whose headers hold one): the gate *is* the answer;
* ``contains``: likewise, the joined text holds the literal;
* ``matches``: whatever an element must hold for the pattern to match, the
  joined text holds too: the pattern's literal prefilter
  (:mod:`workbench.replay._prefilter`) over the lowered text is a *necessary*
  condition, and the exact lambda runs only on the rows it lets through (a
  ``CASE`` branch), so results are unchanged. A pattern with no literal to ask
  runs itself over the joined text first, its anchors dropped (:func:`unanchored`).

The elements may be lowered or uppercased on the way (``lower(x[*])[*]``; the
same ASCII case change is applied to the joined text). One key of the header
map (``http.request.headers["accept"][*]``) reads the text of every header
value: a necessary condition only. Any other function, operator, or a literal
that is not ASCII gets no gate.

    >>> from workbench.rules_language import compile_expression
    >>> tree = compile_expression('any(http.request.headers.names[*] in {"A" "B"})').tree
    >>> gate(tree.args[0], lambda sql: "W", None)
    ("coalesce(contains(W, chr(31) || 'A' || chr(31)) OR contains(W, chr(31) || 'B' || chr(31)), false)", True)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..rules_language.ast import STAR, Call, Compare, FieldRef, Index, Literal, Pattern, SetLiteral
from ..rules_language.regex_tree import Node as RegexNode
from ..rules_language.sql_fragments import ascii_lower, ascii_upper, ident, sql_string
from ._header_columns import HEADERS, ITEM, ITEM_SQL, LEAN_FIELDS, VALUES, joined_names
from ._prefilter import Formula, prefilter

#: Functions that only change letter case (ASCII letters, as the Rules language's do).
_CASE = {"lower": ascii_lower, "upper": ascii_upper}


@dataclass
class Joined:
    """The joined text holding every element of an ``[*]``, and how to read it."""

    #: The lean table's column.
    column: str
    #: The case functions applied to each element, innermost first.
    cases: list[str]
    #: Whether the elements are exactly the pieces between separators (a list field),
    #: not just among them (one key of the header map: its text holds every header).
    exact: bool


def joined_text(node: Any) -> Joined | None:
    """The lean table's text holding every element of ``node`` (an ``[*]``), through case
    changes only; None when there is none."""
    if not isinstance(node, Index) or node.key is not STAR:
        return None
    base = node.base
    if isinstance(base, FieldRef) and base.name in LEAN_FIELDS and base.name != HEADERS:
        return Joined(ident(joined_names(base.name)[0]), [], True)
    if (
        isinstance(base, Index)
        and isinstance(base.key, bytes)
        and isinstance(base.base, FieldRef)
        and base.base.name == HEADERS
    ):
        return Joined(ident(joined_names(VALUES)[0]), [], False)  # every header's value
    if isinstance(base, Call) and base.mapped and base.name in _CASE and len(base.args) == 1:
        inner = joined_text(base.args[0])
        if inner is not None:
            inner.cases.append(base.name)
        return inner
    return None


def unanchored(node: RegexNode) -> RegexNode:
    """``node`` with every start and end anchor (text or line) made empty: it matches
    wherever ``node`` does. Word boundaries stay: a separator is no word character."""
    if node.kind == "assert" and node.name in ("bot", "eot", "bol", "eol"):
        return RegexNode("empty")
    if not node.items:
        return node
    return dataclasses.replace(node, items=[unanchored(i) for i in node.items])


def _ascii(value: Any) -> str | None:
    if not isinstance(value, bytes) or not value.isascii() or ITEM.encode() in value:
        return None
    return value.decode()


def gate(
    compare: Any,
    column: Callable[[str], str],
    condition: Callable[[str, Formula], str],
    regex: Callable[[str, RegexNode], str] | None = None,
) -> tuple[str, bool] | None:
    """SQL true on every row where some element of ``compare`` (the argument of ``any``)
    passes, and whether it is true on those rows only (the exact answer); None when no
    gate applies. ``column(sql)`` gives a shared column computing ``sql``;
    ``condition(low, f)`` the SQL of a prefilter formula over lowered text;
    ``regex(text, tree)`` the SQL testing a pattern tree over a text's Latin-1 view."""
    if not isinstance(compare, Compare):
        return None
    joined = joined_text(compare.lhs)
    if joined is None:
        return None
    rhs = compare.rhs
    text = joined.column
    for name in joined.cases:
        text = _CASE[name](text)
    if compare.op == "matches" and isinstance(rhs, Pattern):
        tree = rhs.compiled.tree
        f = prefilter(tree)
        if f is not None:
            return condition(column(f"lower({joined.column})"), f), False
        # No literal to ask: the pattern itself over the joined text, its anchors dropped
        # (an element's start or end is not the text's), is still a necessary condition.
        return None if regex is None else (regex(text, unanchored(tree)), False)
    if compare.op == "contains" and isinstance(rhs, Literal):
        found = _ascii(rhs.value)
        if found is None:
            return None
        return f"coalesce(contains({column(text)}, {sql_string(found)}), false)", joined.exact
    if compare.op == "eq" and isinstance(rhs, Literal):
        items = [rhs.value]
    elif compare.op == "in" and isinstance(rhs, SetLiteral) and rhs.strings:
        if rhs.int_ranges or rhs.ip_ranges:
            return None
        items = sorted(rhs.strings)
    else:
        return None
    words = [_ascii(v) for v in items]
    if any(w is None for w in words):
        return None
    if not joined.exact:
        tests = [f"contains({column(text)}, {sql_string(w)})" for w in words]  # type: ignore[arg-type]
        return "coalesce(" + " OR ".join(tests) + ", false)", False
    # Between separators: the joined text begins and ends with one too.
    wrapped = column(f"({ITEM_SQL} || {text} || {ITEM_SQL})")
    tests = [f"contains({wrapped}, {ITEM_SQL} || {sql_string(w)} || {ITEM_SQL})" for w in words]  # type: ignore[arg-type]
    return "coalesce(" + " OR ".join(tests) + ", false)", True
