"""Regular expressions of ``matches``: the engine's syntax, checked and translated to RE2.

The platform compiles regexes with Rust's ``regex`` crate, byte-oriented and
with Unicode off: ``.`` is one byte, ``\\w``/``\\d``/``(?i)`` are ASCII-only,
look-around and backreferences are refused; ``(?u)`` turns Unicode on (code
point classes, ``\\p{..}``, Unicode ``\\w``/``\\d``/``\\s``, simple case folding;
``\\b`` stays ASCII here, see docs/decisions.md). This module parses that syntax
(reporting errors with the crate's messages and spans), then emits an
equivalent RE2 pattern that works byte by byte:

* for Python (google-re2 in Latin-1 mode over the value's UTF-8 bytes);
* for DuckDB (RE2 in UTF-8 mode), either directly when the pattern cannot
  tell bytes from characters, or over a "Latin-1 view" of the value in which
  each byte is one character.

Case-insensitivity is expanded by hand (``a`` becomes ``[Aa]``) so that no
engine applies Unicode case folding.

    >>> rx = parse_regex(r"(?i)union.+select")
    >>> rx.search("id=1 UNION ALL SELECT 1".encode())
    True
    >>> rx.sql_pattern() is not None   # '.' is byte-sensitive: needs the Latin-1 view
    False
"""

from __future__ import annotations

import functools
import re

import re2

from ._regex_syntax import RegexSyntaxError, _RegexParser, format_regex_error
from ._regex_unicode import utf8_sequences
from .regex_tree import Node, _fold_ascii

__all__ = [
    "Node",
    "Regex",
    "RegexSyntaxError",
    "Replacement",
    "ReplacementError",
    "_fold_ascii",
    "format_regex_error",
    "parse_regex",
]

# Rust regex's compiled-size limit, and a rough byte cost of one compiled state.
SIZE_LIMIT = 10 * 1024 * 1024
_STATE_COST = 16
# RE2 refuses counted repetitions above 1000; larger ones are unrolled.
_RE2_MAX_REPEAT = 1000


# -- emitters -----------------------------------------------------------------


def _byte_repr(b: int) -> str:
    ch = chr(b)
    if b < 0x80 and (ch.isalnum() or ch == "_"):
        return ch
    return f"\\x{{{b:02x}}}"


def _class_repr(ranges: list[tuple[int, int]]) -> str:
    if ranges == [(0, 0xFF)]:
        return "[\\x{00}-\\x{ff}]"
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _byte_repr(ranges[0][0])
    parts = []
    for lo, hi in ranges:
        parts.append(_byte_repr(lo) if lo == hi else f"{_byte_repr(lo)}-{_byte_repr(hi)}")
    return "[" + "".join(parts) + "]"


def _emit(node: Node, utf8_literals: bool, budget: int = _RE2_MAX_REPEAT) -> str:
    """RE2 syntax for ``node``; every byte is one character (Latin-1 semantics).

    With ``utf8_literals`` single-byte sets above 0x7F are refused (raise
    ``_NeedsView``) except inside literal runs that decode as UTF-8.

    RE2 refuses counted repetitions whose nested counts multiply past 1000
    (``(a{100}){20}``), which Rust accepts; ``budget`` is what the enclosing counts
    leave, and a count that does not fit is written out as repeated pieces.
    """
    k = node.kind
    if k == "empty":
        return "(?:)"
    if k == "set":
        if utf8_literals and any(hi >= 0x80 for _, hi in node.ranges):
            raise _NeedsView
        return _class_repr(node.ranges)
    if k == "uany":
        if utf8_literals:
            raise _NeedsView
        first = "[\\x{00}-\\x{7f}]" if node.name == "s" else "[\\x{00}-\\x{09}\\x{0b}-\\x{7f}]"
        cont = "[\\x{80}-\\x{bf}]"
        # Continuation bytes written out, not counted: a count here would use up the budget.
        return (
            f"(?:{first}|[\\x{{c2}}-\\x{{df}}]{cont}|[\\x{{e0}}-\\x{{ef}}]{cont * 2}"
            f"|[\\x{{f0}}-\\x{{f4}}]{cont * 3})"
        )
    if k == "uclass":
        if utf8_literals:
            return _code_point_class(node.uranges)  # RE2 in UTF-8 mode: one code point
        return _utf8_alternation(node.uranges)
    if k == "cat":
        out = []
        items = node.items
        i = 0
        while i < len(items):
            item = items[i]
            if utf8_literals and item.kind == "set" and _single(item) >= 0x80:
                j = i
                run = bytearray()
                while j < len(items) and items[j].kind == "set" and _single(items[j]) >= 0x80:
                    run.append(_single(items[j]))
                    j += 1
                try:
                    text = run.decode("utf-8")
                except UnicodeDecodeError:
                    raise _NeedsView from None
                out.append("(?:" + "".join(f"\\x{{{ord(ch):x}}}" for ch in text) + ")")
                i = j
                continue
            out.append(_emit(item, utf8_literals, budget))
            i += 1
        return "".join(out)
    if k == "alt":
        return "(?:" + "|".join(_emit(x, utf8_literals, budget) for x in node.items) + ")"
    if k == "group":
        opener = "(" if node.name == "cap" else "(?:"
        return opener + _emit(node.items[0], utf8_literals, budget) + ")"
    if k == "rep":
        lazy = "" if node.greedy else "?"
        lo, hi = node.lo, node.hi
        if (lo, hi) in ((0, None), (1, None), (0, 1)):
            inner = "(?:" + _emit(node.items[0], utf8_literals, budget) + ")"
            return inner + {(0, None): "*", (1, None): "+", (0, 1): "?"}[(lo, hi)] + lazy
        # RE2 charges a count by its upper bound (its lower one when unbounded).
        count = hi if hi is not None else lo
        if count <= budget:
            inner = "(?:" + _emit(node.items[0], utf8_literals, budget // max(count, 1)) + ")"
            return _counted(inner, lo, hi, lazy, budget)
        inner = "(?:" + _emit(node.items[0], utf8_literals, 1) + ")"
        return _counted(inner, lo, hi, lazy, budget)
    if k == "assert":
        return {
            "bot": "\\A",
            "eot": "\\z",
            "bol": "(?m:^)",
            "eol": "(?m:$)",
            "word": "\\b",
            "nonword": "\\B",
        }[node.name]
    raise AssertionError(k)


def _code_point_class(ranges: list[tuple[int, int]]) -> str:
    if not ranges:
        return "[^\\x{0}-\\x{10ffff}]"
    return "[" + "".join(f"\\x{{{lo:x}}}-\\x{{{hi:x}}}" for lo, hi in ranges) + "]"


def _utf8_alternation(ranges: list[tuple[int, int]]) -> str:
    """The UTF-8 encodings of code points in ``ranges``, byte by byte (Latin-1 semantics)."""
    branches = [
        "".join(_class_repr([r]) for r in seq)
        for lo, hi in ranges
        for seq in utf8_sequences(lo, hi)
    ]
    return "(?:" + "|".join(branches) + ")" if branches else "[^\\x{00}-\\x{ff}]"


def _counted(inner: str, lo: int, hi: int | None, lazy: str, budget: int) -> str:
    """``inner{lo,hi}`` with no single count above ``budget`` (RE2's limit left over)."""
    if lo <= budget and (hi is None or hi <= budget):
        if hi is None:
            return f"{inner}{{{lo},}}{lazy}"
        if lo == hi:
            return f"{inner}{{{lo}}}"
        return f"{inner}{{{lo},{hi}}}{lazy}"
    # RE2 refuses counts above 1000, nested products included: repeat the piece instead.
    pieces = []
    remaining = lo
    while remaining > 0:
        step = min(remaining, budget)
        pieces.append(f"{inner}{{{step}}}" if step > 1 else inner)
        remaining -= step
    if hi is None:
        pieces.append(inner + "*" + lazy)
    else:
        extra = hi - lo
        while extra > 0:
            step = min(extra, budget)
            pieces.append(f"{inner}{{0,{step}}}{lazy}" if step > 1 else f"{inner}?{lazy}")
            extra -= step
    return "".join(pieces)


def _single(node: Node) -> int:
    if len(node.ranges) == 1 and node.ranges[0][0] == node.ranges[0][1]:
        return node.ranges[0][0]
    return -1


class _NeedsView(Exception):
    """The pattern can tell a byte from a character: match over the Latin-1 view."""


def _size(node: Node) -> int:
    k = node.kind
    if k in ("cat", "alt", "group"):
        return sum(_size(x) for x in node.items) + 1
    if k == "rep":
        n = _size(node.items[0])
        copies = max(node.lo, 1) if node.hi is None else max(node.hi, 1)
        return n * copies + 1
    if k == "uany":
        return 8
    if k == "uclass":
        return 4 * len(node.uranges) + 1
    return 1


_LATIN1 = re2.Options()
_LATIN1.encoding = re2.Options.Encoding.LATIN1
_LATIN1.log_errors = False
_LATIN1.max_mem = 64 << 20
# A second compile without captures answers "does it match" with the least work.
_LATIN1_TEST = re2.Options()
_LATIN1_TEST.encoding = re2.Options.Encoding.LATIN1
_LATIN1_TEST.log_errors = False
_LATIN1_TEST.max_mem = 64 << 20
_LATIN1_TEST.never_capture = True


class Regex:
    """A checked pattern with its RE2 translations."""

    def __init__(self, pattern: str, tree: Node) -> None:
        self.pattern = pattern
        self.tree = tree
        self.latin1 = _emit(tree, utf8_literals=False)
        try:
            self._sql: str | None = _emit(tree, utf8_literals=True)
        except _NeedsView:
            self._sql = None
        latin1 = self.latin1.encode("latin-1")
        try:
            self._compiled = re2.compile(latin1, _LATIN1)
            # The low-level Match call skips building a match object on every request.
            raw = re2.compile(latin1, _LATIN1_TEST)._regexp
        except re2.error:
            # RE2 ran out of its memory budget: the pattern is too big to compile here, as
            # the engine's own size limit says for patterns of that kind.
            raise RegexSyntaxError(
                f"Compiled regex exceeds size limit of {SIZE_LIMIT} bytes.", 0, len(pattern)
            ) from None
        self.groups: int = self._compiled.groups
        match, unanchored = raw.Match, type(raw).Anchor.UNANCHORED

        def test(data: bytes) -> bool:
            return match(unanchored, data, 0, len(data))[0][0] != -1

        # The operator's predicate; Wildcard has the same attribute, so callers need no branch.
        self.test = test

    def search(self, data: bytes) -> bool:
        """True when the pattern matches somewhere in ``data`` (unanchored, as ``matches``)."""
        return self.test(data)

    def sql_pattern(self) -> str | None:
        """An RE2 pattern valid on plain UTF-8 text, or None when the Latin-1 view is needed."""
        return self._sql

    def sql_view_pattern(self) -> str:
        """The RE2 pattern to run over the Latin-1 view of the text (one character per byte)."""
        return self.latin1

    def sub_first(self, data: bytes, replacement: Replacement) -> bytes:
        """Replace the first match in ``data`` with the expanded ``replacement``."""
        m = self._compiled.search(data)
        if m is None:
            return data
        return data[: m.start()] + replacement.expand(m) + data[m.end() :]


class ReplacementError(ValueError):
    """A replacement template the engine would not accept; ``start``/``end`` are byte offsets."""

    def __init__(self, message: str, start: int, end: int) -> None:
        super().__init__(message)
        self.start = start
        self.end = end


_TEMPLATE = re.compile(rb"\$(?:\$|\{([0-9]+)\}|(\{))")


class Replacement:
    """A ``regex_replace``/``wildcard_replace`` template, parsed once at compile time.

    ``${n}`` is capture group n (empty when the pattern has no such group), ``$$`` is
    one ``$``, and any other ``$`` stands for itself. A ``${`` that is not a group
    number closed by ``}`` is refused rather than guessed at.

        >>> Replacement(b"/x/${1}/$$${9}", groups=1).pieces
        [b'/x/', 1, b'/$']
        >>> Replacement(b"/${1", groups=1)
        Traceback (most recent call last):
        ...
        workbench.rules_language.regex.ReplacementError: ...
    """

    def __init__(self, template: bytes, groups: int) -> None:
        self.template = template
        pieces: list[bytes | int] = []
        literal = bytearray()
        end = 0
        # One left-to-right pass with a regex: no loop can revisit a byte.
        for m in _TEMPLATE.finditer(template):
            literal += template[end : m.start()]
            end = m.end()
            if m.group(2) is not None:
                close = template.find(b"}", m.end())
                what = (
                    "is not closed by }"
                    if close == -1
                    else f'holds "{template[m.end() : close].decode("utf-8", "replace")}", '
                    "not a group number"
                )
                raise ReplacementError(
                    f"invalid replacement: ${{ at byte {m.start()} {what} (write $$ for a $)",
                    m.start(),
                    len(template) if close == -1 else close + 1,
                )
            if m.group(1) is None:
                literal += b"$"
                continue
            group = int(m.group(1))
            if group <= groups:
                if literal:
                    pieces.append(bytes(literal))
                    literal = bytearray()
                pieces.append(group)
        literal += template[end:]
        if literal:
            pieces.append(bytes(literal))
        self.pieces = pieces

    def is_text(self) -> bool:
        """True when every literal piece is UTF-8 text."""
        try:
            self.template.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    def expand(self, m) -> bytes:  # noqa: ANN001 - an re2 match object
        """The replacement for match ``m``: at most one copy of each piece."""
        return b"".join(p if isinstance(p, bytes) else (m.group(p) or b"") for p in self.pieces)


@functools.lru_cache(maxsize=256)
def parse_regex(pattern: str) -> Regex:
    """Check ``pattern`` with the engine's rules and translate it; raise RegexSyntaxError.

    Results are cached: the SQL translation asks again for the pattern compile time parsed.
    """
    tree = _RegexParser(pattern).parse()
    if _size(tree) * _STATE_COST > SIZE_LIMIT:
        raise RegexSyntaxError(
            f"Compiled regex exceeds size limit of {SIZE_LIMIT} bytes.", 0, len(pattern)
        )
    return Regex(pattern, tree)
