"""Literal prefilters: formulas over literals a regex cannot match without.

The managed rules run some two hundred regexes over the same decoded text,
and most rows match none of them. Most patterns cannot match unless the text
holds some literals. :func:`formula` reads that condition from a pattern's
tree as a boolean formula over literal presence: a sequence needs what each of
its items needs (``and``), an alternation needs what one of its branches needs
(``or``; a branch needing nothing makes the ``or`` true), a repeat at least once
needs its item. Tested with ``contains`` over the ASCII-lowered text (a byte
scan far cheaper than the regex) it is a *necessary* condition: where it fails
the regex cannot match, so the whole-table path skips the regex there and the
result is unchanged. Literals are ASCII and compared lowered, so a
case-sensitive pattern gets a weaker but still necessary test.

    >>> from workbench.rules_language.regex import parse_regex
    >>> str(formula(parse_regex("(?i)union\\\\s+(?:all\\\\s+)?select").tree))
    "'union' & ('\\\\t' | '\\\\n' | '\\\\x0b' | '\\\\x0c' | '\\\\r' | ' ') & 'select'"
    >>> str(formula(parse_regex("(?:<|\\\\\\\\u003c)\\\\s*script|javascript:").tree))
    "('<' | '\\\\\\\\u003c') & 'script' | 'javascript:'"
    >>> formula(parse_regex("[a-z]+|x").tree) is None
    True

:func:`prune` weakens a formula to what is worth testing (any weakening of a
necessary condition is still necessary): in an ``and`` it keeps the children
that save more regex time than their scans cost, in an ``or`` it keeps every
branch (dropping one would make the ``or`` true) but weakens each to its best
part. The cost model is explicit: :func:`scans` counts the ``contains`` scans a
harmless row costs, :func:`passes` guesses the share of harmless rows that pass,
and a regex costs :data:`REGEX_COST` scans on each row that passes.

    >>> handler = formula(parse_regex("(?i)<[a-z]+[^>]*?\\\\son[a-z]{3,30}\\\\s*=").tree)
    >>> str(prune(handler)), str(prune(handler, regex=30.0))  # the dearer the regex, the more tests
    ("'<'", "'<' & 'on' & '='")
    >>> prune(formula(parse_regex("[^a]\\\\n").tree)) is None  # every row holds a newline
    True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: A set of at most this many ASCII characters counts as an ``or`` of one-character literals.
_MAX_SET = 8
#: At most this many children of an ``and`` are tested (each only on the rows the ones before passed).
MAX_TESTS = 4
#: What a regex costs on a row, in ``contains`` scans: set by the whole query's time, not
#: by each part's. Alone, a managed-rules regex took 0.06-0.12 s per 100,000 rows and a
#: one-character ``contains`` 0.003 s (20-40 scans); but in the checks' query, with its
#: hundreds of tests a row, fewer tests paid more than they cost in regexes run. On
#: 60,000 ``benchmarks/replay.py`` requests, one DuckDB thread, the checks took 4.66
#: CPU-s at 30 (1,081 tests), 4.11 at 10, 3.97 at 7, 3.87 at 5 (181 tests), 4.03-4.13
#: at 3; the same results at each.
REGEX_COST = 5.0
#: At least this many literals of an ``or`` sharing their first two characters are tested
#: in one RE2 pass (``op == "one"``): RE2 seeks the shared prefix as fast as ``contains``
#: and runs its small DFA only from there (measured: 80 handler names ``onabort|...``
#: 0.012 s per 100,000 rows, one scan for each 0.09 s). Without a shared prefix RE2 runs
#: its DFA over every byte (0.085 s, as dear as most regexes): a scan each is cheaper.
ONE_PASS_MIN = 3


@dataclass(frozen=True)
class Formula:
    """A condition on the lowered text: a literal it holds, or an ``and``/``or`` of formulas.

    ``None`` stands for "true" (nothing known) wherever a formula is expected.
    """

    op: str  # "lit", "and", "or", or "one" (an "or" of literals tested in one pass)
    literal: str = ""
    items: tuple[Formula, ...] = ()

    def holds(self, lowered: str) -> bool:
        """Whether ``lowered`` (text already ASCII-lowered) meets the condition."""
        if self.op == "lit":
            return self.literal in lowered
        test = all if self.op == "and" else any  # "one" is an "or"
        return test(item.holds(lowered) for item in self.items)

    def __str__(self) -> str:
        if self.op == "lit":
            return repr(self.literal)
        parts = [
            f"({item})" if self.op == "and" and item.op in ("or", "one") else str(item)
            for item in self.items
        ]
        return (" & " if self.op == "and" else " | ").join(parts)


def lit(literal: str) -> Formula:
    """The condition "the lowered text holds ``literal``"."""
    return Formula("lit", literal=literal)


def _implies(a: Formula, b: Formula) -> bool:
    """True when ``a`` surely implies ``b`` (False may just mean "not known to")."""
    if a == b:
        return True
    if b.op == "and":
        return all(_implies(a, x) for x in b.items)
    if a.op in ("or", "one"):
        return all(_implies(x, b) for x in a.items)
    if a.op == "and" and any(_implies(x, b) for x in a.items):
        return True
    if b.op in ("or", "one"):
        return any(_implies(a, x) for x in b.items)
    return a.op == "lit" and b.op == "lit" and b.literal in a.literal


def all_of(items: list[Formula | None]) -> Formula | None:
    """The ``and`` of ``items`` (``None``, true, where nothing is left), simplified."""
    flat: list[Formula] = []
    for item in items:
        if item is not None:
            flat += item.items if item.op == "and" else [item]
    # A child implied by another one adds nothing.
    return _joined("and", flat, lambda x, y: _implies(y, x))


def any_of(items: list[Formula | None]) -> Formula | None:
    """The ``or`` of ``items`` (``None``, true, if any is), simplified."""
    flat: list[Formula] = []
    for item in items:
        if item is None:
            return None
        flat += item.items if item.op == "or" else [item]
    # A branch implying another one adds nothing.
    return _joined("or", flat, _implies)


def _joined(
    op: str, flat: list[Formula], needless: Callable[[Formula, Formula], bool]
) -> Formula | None:
    """``flat`` joined by ``op``, without each item another one makes ``needless`` (of two
    that make each other needless, the first is kept)."""
    kept = [
        x
        for i, x in enumerate(flat)
        if not any(
            needless(x, y) and (not needless(y, x) or j < i) for j, y in enumerate(flat) if j != i
        )
    ]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else Formula(op, items=tuple(kept))


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


def formula(node: Any) -> Formula | None:
    """What any match of the regex tree ``node`` holds (``None``: nothing known)."""
    exact = _exact(node)
    if exact:
        return lit(exact)
    k = node.kind
    if k == "set":
        chars = _small_set(node)
        return any_of([lit(c) for c in chars]) if chars else None
    if k == "group":
        return formula(node.items[0])
    if k == "rep":
        return formula(node.items[0]) if node.lo >= 1 else None
    if k == "alt":
        return any_of([formula(item) for item in node.items])
    if k == "cat":
        # Runs of exact items make one literal ("etc/" rather than "e", "t", "c", "/").
        parts: list[Formula | None] = []
        run = ""
        for item in [*node.items, None]:
            piece = None if item is None else _exact(item)
            if piece:
                run += piece
                continue
            if run:
                parts.append(lit(run))
            run = ""
            if item is not None:
                parts.append(formula(item))
        return all_of(parts + _products(node.items))
    return None


def _products(items: list[Any]) -> list[Formula | None]:
    """Literals joining an alternation's branches to the exact text around it.

    ``on(?:error|load)`` needs ``onerror`` or ``onload``: far rarer than ``on`` and
    ``error`` or ``load`` apart. Each branch gives the literal it starts with after
    the text before, or the one it ends with before the text after.
    """
    out: list[Formula | None] = []
    for j, item in enumerate(items):
        alt = _unwrap(item)
        if alt.kind != "alt":
            continue
        before = "".join(_run(reversed(items[:j])))[::-1]
        after = "".join(_run(items[j + 1 :]))
        if not before and not after:
            continue
        literals = []
        for branch in alt.items:
            exact = _exact(branch)
            if exact:
                literals.append(before + exact + after)
                continue
            first, last = before + _edge(branch, 0), _edge(branch, -1) + after
            literals.append(max(first, last, key=len))
        if all(literals):
            out.append(any_of([lit(x) for x in literals]))
    return out


def _unwrap(node: Any) -> Any:
    while node.kind == "group":
        node = node.items[0]
    return node


def _run(items: Any) -> list[str]:
    """The exact literals of ``items`` up to the first item that is not one (the
    literals of a reversed sequence come reversed, to be joined and turned back)."""
    out = []
    backwards = not isinstance(items, list)
    for item in items:
        exact = _exact(item)
        if not exact:
            break
        out.append(exact[::-1] if backwards else exact)
    return out


def _edge(node: Any, side: int) -> str:
    """The exact literal every match of ``node`` starts (side 0) or ends (side -1) with."""
    exact = _exact(node)
    if exact:
        return exact
    node = _unwrap(node)
    if node.kind == "rep" and node.lo >= 1:
        return _edge(node.items[0], side)
    if node.kind != "cat":
        return ""
    items = node.items if side == 0 else list(reversed(node.items))
    run = _run(items if side == 0 else iter(items))
    edge = "".join(run) if side == 0 else "".join(run)[::-1]
    if len(run) < len(items):
        inner = _edge(items[len(run)], side)
        edge = edge + inner if side == 0 else inner + edge
    return edge


# How often a literal is guessed to occur in harmless request text (the concatenated,
# decoded URI, body, cookies, referer and User-Agent of the benchmark traffic): only
# speed depends on the guess, never results. Measured there: letters and digits in
# nearly every row, these punctuation marks in 50-100% (paths, query strings, cookies,
# browser User-Agents), these in 20-35% (JSON bodies; ``%`` is rare in decoded text but
# common in the raw text some patterns read), the others in under 10%.
_COMMON_CHARS = frozenset(" /.=;:,-_()?&\n")
_SOMETIMES_CHARS = frozenset("\"'{}%")


def _seen(literal: str) -> float:
    """Guessed share of harmless rows whose text holds ``literal`` (lowered)."""
    if literal == "\n":
        return 1.0  # the separator of every concatenated field
    if len(literal) == 1:
        if literal.isalnum() or literal in _COMMON_CHARS:
            return 0.9
        return 0.3 if literal in _SOMETIMES_CHARS else 0.05
    if not any(c.isalnum() for c in literal):
        return 0.03
    if len(literal) == 2:
        return 0.5  # "in", "on", "or", "id": words and User-Agents hold many
    if len(literal) == 3:
        return 0.15
    return 0.02 if len(literal) < 6 else 0.005


def _scan(literal: str) -> float:
    """What one ``contains`` of ``literal`` costs, in scans of a one-character literal.

    A longer literal is sought by its first character (memchr) and compared where that
    occurs: the commoner the first character, the dearer (measured: ``'on'`` 2.5,
    ``'select'`` 4, ``'\\\\u003c'`` 1 times ``'<'``).
    """
    return 1.0 if len(literal) == 1 else 1.0 + 3.0 * _seen(literal[0])


def passes(f: Formula | None) -> float:
    """Guessed share of harmless rows that meet ``f`` (children taken as independent)."""
    if f is None:
        return 1.0
    if f.op == "lit":
        return _seen(f.literal)
    shares = [passes(item) for item in f.items]
    if f.op == "and":
        out = 1.0
        for s in shares:
            out *= s
        return out
    miss = 1.0
    for s in shares:
        miss *= 1.0 - s
    return 1.0 - miss


def scans(f: Formula | None) -> float:
    """Guessed scans ``f`` costs on a harmless row, tested in order with short cuts.

    An ``and`` tests a child only on the rows that passed the ones before, an ``or`` only
    on the rows the ones before failed.
    """
    if f is None:
        return 0.0
    if f.op == "lit":
        return _scan(f.literal)
    if f.op == "one":
        return 1.0 + _scan(_shared_prefix(f))
    total, reach = 0.0, 1.0
    for item in f.items:
        total += reach * scans(item)
        share = passes(item)
        reach *= share if f.op == "and" else 1.0 - share
    return total


def one_pass(f: Formula) -> bool:
    """Whether ``f`` is an ``or`` of literals tested as one RE2 alternation, not scan by scan."""
    return f.op == "one"


def _shared_prefix(f: Formula) -> str:
    literals = [i.literal for i in f.items]
    first, last = min(literals), max(literals)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _escape(text: str) -> str:
    return "".join(c if c.isalnum() else f"\\x{{{ord(c):02x}}}" for c in text)


def alternation(f: Formula) -> str:
    """The RE2 pattern of a :func:`one_pass` ``or``: its shared prefix first, then the rest
    of each literal (every byte but letters and digits escaped).

    >>> alternation(_grouped(any_of([lit("on="), lit("onload"), lit("on.x")])))
    'on(?:\\\\x{3d}|load|\\\\x{2e}x)'
    """
    prefix = _shared_prefix(f)
    rest = "|".join(_escape(i.literal[len(prefix) :]) for i in f.items)
    return f"{_escape(prefix)}(?:{rest})"


def _grouped(f: Formula | None) -> Formula | None:
    """``f`` (an ``or``) with the literals sharing their first two characters in one pass."""
    if f is None or f.op != "or":
        return f
    groups: dict[str, list[Formula]] = {}
    rest: list[Formula] = []
    for item in f.items:
        if item.op == "lit" and len(item.literal) >= 2:
            groups.setdefault(item.literal[:2], []).append(item)
        else:
            rest.append(item)
    for members in groups.values():
        if len(members) >= ONE_PASS_MIN:
            rest.append(Formula("one", items=tuple(members)))
        else:
            rest += members
    rest.sort(key=lambda b: scans(b) / max(passes(b), 1e-3))
    return rest[0] if len(rest) == 1 else Formula("or", items=tuple(rest))


def total_cost(f: Formula | None, regex: float | None = None) -> float:
    """Scans of ``f`` plus the regex on the rows that pass it, per harmless row
    (``regex``: :data:`REGEX_COST` as it is at the call)."""
    return scans(f) + passes(f) * (REGEX_COST if regex is None else regex)


def prune(f: Formula | None, regex: float | None = None) -> Formula | None:
    """A weakening of ``f`` (still implied by it) guessed cheapest by :func:`total_cost`."""
    if f is None:
        return None
    if regex is None:
        regex = REGEX_COST
    if f.op == "lit":
        best: Formula | None = f
    elif f.op == "or":
        # Every branch stays (or the "or" is true); the likeliest, cheapest first.
        branches = [prune(item, regex) for item in f.items]
        if any(b is None for b in branches):
            return None
        best = _grouped(any_of(branches))
        # Or each branch cut to its most selective literals, all tested in one pass
        # (then, if it pays, the branches themselves on the rows that pass it).
        cut = _grouped(any_of([_literals(b) for b in branches]))
        if cut is not None and best is not None and not _implies(cut, best):
            both = _ordered([cut, best])
            best = min((best, cut, both), key=lambda c: total_cost(c, regex))
    else:
        best = _best_conjunction([prune(item, regex) for item in f.items], regex)
    return best if total_cost(best, regex) < total_cost(None, regex) else None


def _literals(f: Formula | None) -> Formula | None:
    """The most selective literal, or ``or`` of literals, ``f`` implies (``None``: none)."""
    if f is None or f.op in ("lit", "one"):
        return f
    if f.op == "or" and all(i.op in ("lit", "one") for i in f.items):
        return f
    if f.op == "or":
        return any_of([_literals(i) for i in f.items])
    cuts = [c for c in map(_literals, f.items) if c is not None]
    return min(cuts, key=passes, default=None)


def _best_conjunction(children: list[Formula | None], regex: float) -> Formula | None:
    """The few ``children`` whose ``and`` is cheapest: added greedily while each one pays."""
    left = [c for c in children if c is not None]
    chosen: list[Formula] = []
    best = total_cost(None, regex)
    while left and len(chosen) < MAX_TESTS:
        trials = [(total_cost(_ordered(chosen + [c]), regex), i) for i, c in enumerate(left)]
        cost, i = min(trials)
        if cost >= best:
            break
        best = cost
        chosen.append(left.pop(i))
    return _ordered(chosen)


def _ordered(children: list[Formula]) -> Formula | None:
    """The ``and`` of ``children``, the best filter per scan first."""
    if not children:
        return None
    ranked = sorted(children, key=lambda c: scans(c) / max(1.0 - passes(c), 1e-3))
    return ranked[0] if len(ranked) == 1 else Formula("and", items=tuple(ranked))


def prefilter(node: Any, regex: float | None = None) -> Formula | None:
    """The pruned formula worth testing before the regex tree ``node`` (``None``: none)."""
    return prune(formula(node), regex)
