"""Where the ``[NOT] EXISTS`` terms of a statement sit: the outer WHERE clause split into
its top-level terms, and each term matched to the loop of the query plan that runs it.
Text and plan only; :mod:`._counters_vm` runs the probes.

    >>> t = "SELECT * FROM t WHERE g = 1 AND EXISTS (SELECT 1 FROM u AS p WHERE a AND b)"
    >>> joiner, (a, b), spans = top_terms(t)
    >>> joiner, t[a:b], [t[i:j] for i, j in spans]
    ('AND', 't', ['g = 1', 'EXISTS (SELECT 1 FROM u AS p WHERE a AND b)'])
    >>> sub_names("SELECT 1 FROM main.u AS p WHERE a"), sub_names("SELECT 1 FROM u WHERE a")
    ({'p'}, {'u'})
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._counters import Loop

_QUOTES = {"'": "'", '"': '"', "`": "`", "[": "]"}
_WORD = re.compile(r"\w+")
_FROM = re.compile(r"\bFROM\s+(?:\w+\s*\.\s*)?([\w\"`\[\]]+)(?:\s+(?:AS\s+)?(\w+))?", re.I)
_COMPOUND = ("UNION", "INTERSECT", "EXCEPT")
_NOT_ALIAS = ("WHERE", "JOIN", "LIMIT", "ORDER", "GROUP", "INNER", "LEFT", "CROSS", "NATURAL")


def top_terms(text: str) -> tuple[str, tuple[int, int], list[tuple[int, int]]] | None:
    """The outer SELECT's WHERE clause as ``(joiner, from, terms)``: the span of its FROM
    clause and the spans of its terms, joined by top-level ``AND`` (or all by ``OR``);
    None when the clause mixes them or the statement is not a plain SELECT.

    >>> t = "SELECT * FROM t WHERE g BETWEEN 1 AND 2 AND EXISTS (SELECT 1 FROM u WHERE a AND b)"
    >>> [t[i:j] for i, j in top_terms(t)[2]]
    ['g BETWEEN 1 AND 2', 'EXISTS (SELECT 1 FROM u WHERE a AND b)']
    """
    words: list[tuple[str, int, int]] = []  # depth-0 words
    depth, i = 0, 0
    while i < len(text):
        ch = text[i]
        if ch in _QUOTES:
            end = text.find(_QUOTES[ch], i + 1)
            i = end if end >= 0 else len(text)
        elif ch in "()":
            depth += 1 if ch == "(" else -1
        elif depth == 0 and (ch.isalpha() or ch == "_"):
            m = _WORD.match(text, i)
            assert m is not None
            words.append((m.group().upper(), m.start(), m.end()))
            i = m.end() - 1
        i += 1
    if not words or words[0][0] != "SELECT" or any(w[0] in _COMPOUND for w in words):
        return None  # a WITH or a compound SELECT: the outer FROM is not the first one
    where = next((w for w in words if w[0] == "WHERE"), None)
    start = next((w for w in words if w[0] == "FROM"), None)
    if where is None or start is None or start[1] > where[1]:
        return None
    stop = next(
        (w[1] for w in words if w[1] > where[1] and w[0] in ("GROUP", "ORDER", "LIMIT", "WINDOW")),
        len(text.rstrip().rstrip(";")),
    )
    inside = [w for w in words if where[2] <= w[1] < stop]
    joins, between = [], False
    for w in inside:
        if w[0] == "BETWEEN":
            between = True
        elif w[0] == "AND" and between:
            between = False  # the AND of ``x BETWEEN a AND b``
        elif w[0] in ("AND", "OR"):
            joins.append(w)
    kinds = {w[0] for w in joins}
    if len(kinds) > 1:
        return None
    spans, last = [], where[2]
    for w in joins:
        spans.append((last, w[1]))
        last = w[2]
    spans.append((last, stop))
    joiner = kinds.pop() if kinds else "AND"
    return joiner, _strip(text, start[2], where[1]), [_strip(text, a, b) for a, b in spans]


def _strip(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def sub_names(sub: str) -> set[str]:
    """The name the plan shows for the table a subquery reads: its alias, or its name."""
    m = _FROM.search(sub)
    if not m:
        return set()
    if m.group(2) and m.group(2).upper() not in _NOT_ALIAS:
        return {m.group(2)}
    return {m.group(1).strip('"`[]')}


def owners(
    subs: list[tuple[str, bool]], joined: list[Loop], groups: dict[int, list[Loop]]
) -> list[Loop] | None:
    """The plan's loop for each ``(subquery, negated)`` term. An ``EXISTS`` the planner made
    a join loop is matched by table, a search by the columns of its key (the plan may put
    them in another order than the text); the rest are the plan's subqueries in order."""
    owner: list[Loop | None] = [None] * len(subs)
    for lp in sorted(joined, key=lambda lp: not lp.cons):
        free = [
            i
            for i, (sub, negated) in enumerate(subs)
            if owner[i] is None and not negated and lp.name in sub_names(sub)
        ]
        # a search's key columns compared for equality in the subquery's text, if any is
        keyed = [
            i
            for i in free
            if all(
                re.search(rf"\b{re.escape(col)}\s*(?:==?|\bIS\b|\bIN\b)", subs[i][0], re.I)
                for col in re.findall(r"(\w+)=\?", lp.cons)
            )
        ]
        if not free:
            return None
        owner[(keyed or free)[0]] = lp
    rest = [g[0] for g in groups.values()]
    for i in range(len(subs)):
        if owner[i] is None:
            if not rest:
                return None
            owner[i] = rest.pop(0)
    return [lp for lp in owner if lp is not None]
