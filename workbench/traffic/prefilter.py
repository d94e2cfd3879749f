"""Literal prefilters: text a regex cannot match without, tested before the regex runs.

The managed rules run some two hundred regexes over the same decoded text,
and most rows match none of them. Most patterns cannot match unless the text
holds some literal (``union`` for ``(?i)union\\s+select``, ``<`` or ``\\u003c``
for a tag opener). :func:`required` reads such a condition from a pattern's
tree: a literal, or an ``or`` of literals one of which any match contains.
Tested with ``contains`` over the ASCII-lowered text (a byte-wise scan far
cheaper than the regex) it is a *necessary* condition: where it fails the
regex cannot match, so the whole-table path skips the regex there and the
result is unchanged. Literals are ASCII and compared lowered, so a
case-sensitive pattern gets a weaker but still necessary test.

    >>> from workbench.rules_language.regex import parse_regex
    >>> required(parse_regex("(?i)union\\\\s+(?:all\\\\s+)?select").tree)
    ['select']
    >>> required(parse_regex("(?:<|\\\\\\\\u003c)script").tree)
    ['script']
    >>> required(parse_regex("etc/(?:passwd|shadow)").tree)
    ['passwd', 'shadow']
    >>> required(parse_regex("[a-z]+").tree) is None
    True
"""

from __future__ import annotations

from typing import Any

# A condition: None (nothing known), or a list of literals one of which any match holds.
Condition = list[str] | None

_MAX_ALTERNATIVES = 8


def _char(node: Any) -> str | None:
    """The lowered ASCII character a ``set`` node stands for, if it is one (either case)."""
    if node.kind != "set":
        return None
    chars: set[int] = set()
    for lo, hi in node.ranges:
        if hi - lo > 1 or hi >= 0x80:
            return None
        chars.update(range(lo, hi + 1))
    lowered = {chr(c).lower() for c in chars}
    if len(lowered) != 1:
        return None
    ch = lowered.pop()
    if len(chars) == 2 and not ch.isalpha():
        return None
    return ch


def _exact(node: Any) -> str | None:
    """The one lowered literal ``node`` matches, or None."""
    k = node.kind
    if k == "set":
        return _char(node)
    if k == "group":
        return _exact(node.items[0])
    if k == "cat":
        parts = [_exact(i) for i in node.items]
        return None if any(p is None for p in parts) else "".join(parts)  # type: ignore[arg-type]
    if k == "rep" and node.lo == node.hi and node.lo and node.lo <= 8:
        inner = _exact(node.items[0])
        return None if inner is None else inner * node.lo
    return None


def _score(cond: Condition) -> int:
    return 0 if not cond else min(len(s) for s in cond)


def required(node: Any) -> Condition:
    """A necessary literal condition for a match of ``node`` (see the module docstring)."""
    k = node.kind
    exact = _exact(node)
    if exact:
        return [exact]
    if k == "group":
        return required(node.items[0])
    if k == "rep":
        return required(node.items[0]) if node.lo >= 1 else None
    if k == "alt":
        out: list[str] = []
        for item in node.items:
            cond = required(item)
            if not cond:
                return None
            out += [s for s in cond if s not in out]
        return out if len(out) <= _MAX_ALTERNATIVES else None
    if k == "cat":
        best: Condition = None
        run = ""
        for item in [*node.items, None]:
            piece = None if item is None else _exact(item)
            if piece:
                run += piece
                continue
            if _score([run] if run else None) > _score(best):
                best = [run]
            run = ""
            if item is not None:
                cond = required(item)
                if _score(cond) > _score(best):
                    best = cond
        return best
    return None
