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
    ['union']
    >>> required(parse_regex("(?:<|\\\\\\\\u003c)script").tree)
    ['script']
    >>> required(parse_regex("(?:passwd|shadow)").tree)
    ['passwd', 'shadow']
    >>> required(parse_regex("[a-z]+").tree) is None
    True

:func:`requirements` reads every such condition a match must meet at once
(a conjunction of ``or`` groups): a row must pass them all, so a tag opener
*and* an ``on`` handler name *and* an ``=`` are asked of an event-handler
pattern, where ``on`` alone would let most text through.

    >>> requirements(parse_regex("(?i)<[a-z]+[^>]*?\\son[a-z]{3,30}\\s*=").tree)
    [['<'], ['on'], ['='], ['\\t', '\\n', '\\x0b', '\\x0c', '\\r', ' ']]
"""

from __future__ import annotations

from typing import Any

# A condition: None (nothing known), or a list of literals one of which any match holds.
Condition = list[str] | None

#: An ``or`` group of more literals costs more scans than the regex it guards saves.
_MAX_ALTERNATIVES = 8
#: A set of at most this many ASCII characters counts as that many one-character literals.
_MAX_SET = 8
#: At most this many groups are asked of a row; the strongest (longest literals) first.
MAX_GROUPS = 4


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


def _small_set(node: Any) -> list[str] | None:
    """The lowered ASCII characters of a small ``set`` node (one of which any match holds)."""
    if node.kind != "set":
        return None
    chars: list[str] = []
    for lo, hi in node.ranges:
        if hi >= 0x80 or hi - lo >= _MAX_SET:
            return None
        chars += [c for c in map(chr, range(lo, hi + 1)) if c.lower() not in chars]
        if len(chars) > _MAX_SET:
            return None
    return sorted({c.lower() for c in chars}) or None


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


# How often a literal is guessed to occur in harmless request text: a rough model, used
# only to order the groups and drop those nearly every row passes (any subset of
# necessary groups is still necessary, so the guess changes speed, never results).
_COMMON_CHARS = frozenset(" /&=;.-_:,?%+")


def _seen(literal: str) -> float:
    """Guessed chance that harmless text holds ``literal`` (lowered)."""
    if literal == "\n":
        return 1.0  # the separator of every concatenated field
    if len(literal) == 1:
        return 0.9 if literal.isalnum() or literal in _COMMON_CHARS else 0.05
    if len(literal) == 2:
        return 0.3 if literal.isalpha() else 0.05
    return 0.05 if len(literal) == 3 else 0.01


def _passes(group: list[str]) -> float:
    """Guessed chance that harmless text holds one of ``group``'s literals."""
    miss = 1.0
    for literal in group:
        miss *= 1.0 - _seen(literal)
    return 1.0 - miss


#: Groups guessed to pass more rows than this cost a scan and filter nothing: left out.
USELESS = 0.95


def required(node: Any) -> Condition:
    """The strongest single group of :func:`requirements` (see the module docstring)."""
    groups = requirements(node)
    return groups[0] if groups else None


def requirements(node: Any) -> list[list[str]]:
    """Every ``or`` group of literals a match of ``node`` must hold, strongest first.

    A sequence needs what each of its items needs (and the literal runs between
    them); an alternation needs one group from each branch (:func:`required`).
    Groups implied by a stronger one are dropped; the rest are ordered by how
    few harmless rows they are guessed to let through; at most :data:`MAX_GROUPS`.
    The caller drops those guessed :data:`USELESS` (:func:`useful`).
    """
    groups: list[list[str]] = []
    for group in _needs(node):
        if group and group not in groups:
            groups.append(group)
    # A group holding every literal of another is implied by it.
    kept = [g for g in groups if not any(o is not g and set(o) < set(g) for o in groups)]
    kept.sort(key=_passes)
    return kept[:MAX_GROUPS]


def useful(groups: list[list[str]]) -> list[list[str]]:
    """The groups worth a scan: those not guessed to pass nearly every row."""
    return [g for g in groups if _passes(g) <= USELESS]


def _needs(node: Any) -> list[list[str]]:
    exact = _exact(node)
    if exact:
        return [[exact]]
    k = node.kind
    if k == "set":
        chars = _small_set(node)
        return [chars] if chars else []
    if k == "group":
        return _needs(node.items[0])
    if k == "rep":
        return _needs(node.items[0]) if node.lo >= 1 else []
    if k == "alt":
        # One group from each branch, ORed, is needed; pair the branches' groups rank by rank.
        branches = [requirements(item) for item in node.items]
        if not all(branches):
            return []
        out: list[list[str]] = []
        for rank in range(max(len(b) for b in branches)):
            union: list[str] = []
            for b in branches:
                union += [s for s in b[min(rank, len(b) - 1)] if s not in union]
            if len(union) <= _MAX_ALTERNATIVES:
                out.append(union)
        return out
    if k == "cat":
        out = []
        run = ""
        for item in [*node.items, None]:
            piece = None if item is None else _exact(item)
            if piece:
                run += piece
                continue
            if run:
                out.append([run])
            run = ""
            if item is not None:
                out += _needs(item)
        return out
    return []
