"""A looser form of a regex, for RE2's fast engine: broad counted repetitions made unbounded.

RE2 runs a pattern as a DFA built state by state while it reads. A counted
repetition of a broad class that can start at many places
(``['"](?:[^<>]{0,60}?\\s)?on...``, from an XSS rule) makes the DFA follow
every window start at once; its states outgrow RE2's memory budget and RE2
falls back to a far slower engine (measured on the replay benchmark's
traffic: 22 µs a row against about 1 µs). The same pattern with ``{0,60}``
read as ``*`` matches wherever the original does (and maybe elsewhere), and
its DFA stays small. The whole-table path runs it first
(:meth:`workbench.replay._shared.SharedColumns.prefilter`), so the exact
pattern runs only on the rows the loose one matches: the result is the
exact pattern's on every row.

    >>> from workbench.rules_language.regex import parse_regex
    >>> relaxed_pattern(parse_regex("x[^<>]{0,60}?y").tree, utf8=False)
    'x(?:[\\\\x{00}-\\\\x{3b}\\\\x{3d}\\\\x{3f}-\\\\x{ff}])*?y'
    >>> relaxed_pattern(parse_regex("a{2,30}|[^<]{0,5}").tree, utf8=True) is None
    True
"""

from __future__ import annotations

import dataclasses

from .regex import _emit, _NeedsView
from .regex_tree import Node

#: A count from this high up is loosened ...
RELAX_FROM = 16
#: ... when what it repeats is a class of at least this many bytes.
BROAD_CLASS = 128


def _broad(node: Node) -> bool:
    while node.kind == "group" and node.items:
        node = node.items[0]
    return node.kind == "set" and sum(hi - lo + 1 for lo, hi in node.ranges) >= BROAD_CLASS


def relax(node: Node) -> Node | None:
    """``node`` with every broad counted repetition unbounded, or None when it has none."""
    items = [relax(item) for item in node.items]
    loosen = (
        node.kind == "rep"
        and node.hi is not None
        and node.hi >= RELAX_FROM
        and _broad(node.items[0])
    )
    if not loosen and all(i is None for i in items):
        return None
    kids = [new if new is not None else old for new, old in zip(items, node.items, strict=True)]
    return dataclasses.replace(node, items=kids, hi=None if loosen else node.hi)


def relaxed_like(pattern: str, tree: Node) -> str | None:
    """The loose form of ``pattern``, one of ``tree``'s two RE2 forms, in the same form."""
    return relaxed_pattern(tree, utf8=pattern != _emit(tree, utf8_literals=False))


def relaxed_pattern(tree: Node, *, utf8: bool) -> str | None:
    """RE2 syntax of :func:`relax` of ``tree`` (as :class:`~.regex.Regex` writes it), or None.

    ``utf8``: the form for plain UTF-8 text (``Regex.sql_pattern``), else the form for
    the Latin-1 view (``Regex.sql_view_pattern``). None when nothing is loosened or the
    form does not exist.
    """
    loose = relax(tree)
    if loose is None:
        return None
    try:
        return _emit(loose, utf8_literals=utf8)
    except _NeedsView:
        return None
