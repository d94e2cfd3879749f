"""RE2 patterns, as the whole-table compiler writes them, as PostgreSQL regexes (AREs).

The compiler's RE2 patterns use a small set of constructs (``\\A``, ``\\z``,
``(?m:^)``, ``\\b``, ``\\x{hh}``, explicit classes, groups, counted repetitions).
:func:`are_pattern` writes each as the ARE construct of the same meaning (``\\Z``,
``^`` in the ``(?w)`` mode, ``\\y``, ``\\uhhhh``...), unrolls counts above ARE's 255
and refuses anything else, naming it (:class:`~.sql_value.SqlTranslationError`).

Whether a pattern matches is the same in both engines: they accept the same
strings, whatever order they try alternatives in. *Where* it matches is not:
RE2 takes the first match in its order of preference, PostgreSQL the longest
(the shortest for a lazy pattern). A replace or an extract is therefore
translated only when both find the same match (:meth:`_Are.one_match`).

    >>> are_pattern("\\\\Acurl\\\\x{2f}[0-9]{1,3}")
    '\\\\Acurl\\\\u002f[0-9]{1,3}'
    >>> are_pattern("(?m:^)a\\\\b")
    '(?w)^a\\\\y'
    >>> are_pattern("a\\\\pL")
    Traceback (most recent call last):
    ...
    workbench.rules_language.sql_value.SqlTranslationError: the regex escape \\p is not supported on postgres
"""

from __future__ import annotations

import re

from .sql_decode import _PERCENT_U, _PERCENT_XX
from .sql_fragments import _V4, _zero_run
from .sql_value import SqlTranslationError

__all__ = ["ARE_DUPMAX", "are_pattern", "are_replacement"]

#: ARE's largest repetition count (RE2 allows 1000).
ARE_DUPMAX = 255

# Patterns of sql_fragments with alternation whose match (and groups) PostgreSQL's
# longest-match rule finds as RE2's first-match rule does.
_ONE_MATCH = {
    # An IPv6 address's IPv4 tail: anchored at the end, each octet followed by '.' or the
    # end, so one split of the digits.
    f":({_V4})$",
    # Its head: from the start, the greedy .* and the longest match both end at the last ':'.
    "^(.*:)",
    # A run of zero groups: at each place '^' or ':' (never both, the text starts with a
    # digit), then fixed text, then ':' or the end (never both).
    *(_zero_run(n) for n in range(2, 9)),
    # URL-decoding tokens: at a '%' the escape is both the first and the longest choice,
    # elsewhere the greedy run of other characters is both.
    f"{_PERCENT_XX}|[^%]+|%",
    f"{_PERCENT_U}|[^%]+|%",
}


def _fail(what: str, why: str = "") -> SqlTranslationError:
    detail = f" ({why})" if why else ""
    return SqlTranslationError(f"{what} is not supported on postgres{detail}")


def _char(code: int) -> str:
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


_COUNT = re.compile(r"\{(\d+)(?:(,)(\d*))?\}")


_PERL = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\f\\r "}  # RE2's ASCII classes


class _Are:
    """One pass over an RE2 pattern of the compiler's dialect, writing ARE.

    Besides the text it notes what decides whether PostgreSQL's longest-match rule finds
    the same match as RE2's first-match rule (see :meth:`one_match`).
    """

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.multiline = False
        self.dotall = False
        self.alternation = False
        self.greediness: set[bool] = set()  # of repetitions with more than one count
        self.quantified_group = False
        self.unrolled = False

    def run(self) -> str:
        p = self.p
        if p.startswith("(?s)"):
            self.dotall = True
            self.i = 4
        stack: list[tuple[str, list[str]]] = [("", [])]
        while self.i < len(p):
            c = p[self.i]
            items = stack[-1][1]
            if c == "\\":
                items.append(self.escape())
            elif c == "[":
                items.append(self.klass())
            elif c == "(":
                if p.startswith("(?m:^)", self.i) or p.startswith("(?m:$)", self.i):
                    self.multiline = True
                    items.append(p[self.i + 4])
                    self.i += 6
                    continue
                if p.startswith("(?:", self.i):
                    stack.append(("(?:", []))
                    self.i += 3
                    continue
                if p.startswith("(?", self.i):
                    end = p.find(")", self.i)
                    raise _fail(f"the regex group {p[self.i : end + 1 if end > 0 else None]}")
                stack.append(("(", []))
            elif c == ")":
                if len(stack) == 1:
                    raise _fail("an unbalanced ) in a regex")
                opener, inner = stack.pop()
                stack[-1][1].append(opener + "".join(inner) + ")")
            elif c == "|":
                self.alternation = True
                items.append("|")
            elif c in "*+?":
                lazy = self.lazy(1)
                self.greediness.add(not lazy)
                self.quantify(items, c + lazy)
                continue
            elif c == "{" and _COUNT.match(p, self.i):
                self.counted(items)
                continue
            elif c == ".":
                items.append("[\\u0000-\\U0010ffff]" if self.dotall else "[^\\n]")
            elif c == "^":
                items.append("\\A")  # RE2 without (?m): the start of the text
            elif c == "$":
                items.append("\\Z")
            elif c.isalnum() or c == "_" or ord(c) > 0x7F:
                items.append(c)
            else:
                items.append("\\" + c)  # ARE: a backslash before a non-alphanumeric is literal
            self.i += 1
        if len(stack) != 1:
            raise _fail("an unclosed ( in a regex")
        self.top = stack[0][1]
        return "".join(self.top)

    def one_match(self) -> bool:
        """True when PostgreSQL and RE2 find the same match and the same groups.

        Both start at the leftmost place a match can start. From there RE2 takes the first
        match in its order of preference and PostgreSQL the longest (or, for a lazy pattern,
        the shortest). They agree when every match from a place has one length (no
        repetition or alternation), or when the pattern ends with ``\\z`` (every match from
        a place ends at the end) and has no alternation: then each group takes, in order,
        as much (as little, when lazy) as the rest allows in both engines, provided all
        repetitions are of one greediness and no group is itself repeated.
        """
        if self.alternation or self.unrolled or self.quantified_group:
            return False
        if not self.greediness:
            return True
        return len(self.greediness) == 1 and self.top[-1:] == ["\\Z"]

    def lazy(self, width: int) -> str:
        after = self.i + width
        lazy = self.p[after : after + 1] == "?"
        self.i = after + (1 if lazy else 0)
        return "?" if lazy else ""

    def quantify(self, items: list[str], q: str) -> None:
        if not items or items[-1] == "|":
            raise _fail("a regex repetition of nothing")
        if items[-1].startswith("(") and not items[-1].startswith("(?"):
            self.quantified_group = True
        items[-1] += q

    def counted(self, items: list[str]) -> None:
        m = _COUNT.match(self.p, self.i)
        assert m is not None
        lo = int(m.group(1))
        hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
        width = m.end() - m.start()
        lazy = self.lazy(width)
        if hi != lo:
            self.greediness.add(not lazy)
        if lo <= ARE_DUPMAX and (hi is None or hi <= ARE_DUPMAX):
            self.quantify(items, m.group(0) + lazy)
            return
        if not items or items[-1] == "|":
            raise _fail("a regex repetition of nothing")
        # ARE counts stop at 255: the atom repeated in pieces of at most 255.
        self.unrolled = True
        atom = "(?:" + items.pop() + ")"
        pieces, left = [], lo
        while left > 0:
            step = min(left, ARE_DUPMAX)
            pieces.append(f"{atom}{{{step}}}")
            left -= step
        if hi is None:
            pieces.append(atom + "*" + lazy)
        else:
            extra = hi - lo
            while extra > 0:
                step = min(extra, ARE_DUPMAX)
                pieces.append(f"{atom}{{0,{step}}}{lazy}")
                extra -= step
        items.append("(?:" + "".join(pieces) + ")")

    def code(self) -> int:
        """The character of ``\\x{h..}`` or ``\\xhh`` at ``self.i`` (on the backslash)."""
        p = self.p
        if p.startswith("\\x{", self.i):
            end = p.find("}", self.i)
            digits = p[self.i + 3 : end]
            self.i = end + 1
        else:
            digits = p[self.i + 2 : self.i + 4]
            self.i += 4
        try:
            return int(digits, 16)
        except ValueError:
            raise _fail(f"the regex escape \\x{digits}") from None

    def escape(self) -> str:
        """An escape outside a class; leaves ``self.i`` on its last character."""
        p = self.p
        nxt = p[self.i + 1 : self.i + 2]
        simple = {"A": "\\A", "z": "\\Z", "b": "\\y", "B": "\\Y", "n": "\\n", "t": "\\t"}
        if nxt == "x":
            code = self.code()
            self.i -= 1
            return _char(code)
        self.i += 1
        if nxt in simple:
            return simple[nxt]
        if nxt in _PERL:
            return f"[{_PERL[nxt]}]"
        if nxt and not nxt.isalnum() and nxt != "_":
            return "\\" + nxt
        raise _fail(f"the regex escape \\{nxt}")

    def klass(self) -> str:
        """A character class; leaves ``self.i`` on its closing bracket."""
        p = self.p
        out = ["["]
        self.i += 1
        if p[self.i : self.i + 1] == "^":
            out.append("^")
            self.i += 1
        first = True
        while True:
            if self.i >= len(p):
                raise _fail("an unclosed [ in a regex")
            c = p[self.i]
            if c == "]" and not first:
                out.append("]")
                return "".join(out)
            first = False
            if c == "\\":
                nxt = p[self.i + 1 : self.i + 2]
                if nxt == "x":
                    out.append(_char(self.code()))
                    continue
                if nxt in ("n", "t"):
                    out.append("\\" + nxt)
                elif nxt in _PERL:
                    out.append(_PERL[nxt])
                elif nxt and not nxt.isalnum() and nxt != "_":
                    out.append("\\" + nxt)
                else:
                    raise _fail(f"the regex escape \\{nxt} in a class")
                self.i += 2
                continue
            if c == "[":
                if p[self.i + 1 : self.i + 2] in (":", ".", "="):
                    raise _fail(f"the regex class {p[self.i : self.i + 2]}")
                out.append("\\[")
            elif c == "]":
                out.append("\\]")
            else:
                out.append(c)
            self.i += 1


def are_pattern(pattern: str, *, full: bool = False, positions: bool = False) -> str:
    """``pattern`` (RE2 as the compiler writes it) as a PostgreSQL ARE of the same meaning.

    ``full``: match the whole text (``regexp_full_match``). ``positions``: the caller uses
    where the match is and its groups (a replace, an extract); refused unless PostgreSQL
    finds the same match (:meth:`_Are.one_match`, or one of :data:`_ONE_MATCH`).
    Raises :class:`SqlTranslationError` naming what has no ARE equivalent.
    """
    are = _Are(pattern)
    body = are.run()
    if positions and not are.one_match() and pattern not in _ONE_MATCH:
        raise _fail(
            "a regex replace or extract with alternation, or repetition not anchored at the end",
            "PostgreSQL takes the longest match where RE2 takes the first",
        )
    if full:
        body = f"\\A(?:{body})\\Z"
    return ("(?w)" if are.multiline else "") + body


def are_replacement(rewrite: str) -> str:
    """An RE2 rewrite string (``\\1``, ``\\0``, ``\\\\``) as PostgreSQL's (``\\1``, ``\\&``, ``\\\\``)."""
    out, i = [], 0
    while i < len(rewrite):
        c = rewrite[i]
        if c == "\\" and i + 1 < len(rewrite):
            nxt = rewrite[i + 1]
            out.append("\\&" if nxt == "0" else "\\" + nxt)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)
