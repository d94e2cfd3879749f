"""Regular expressions of ``matches``: the engine's syntax, checked and translated to RE2.

The platform compiles regexes with Rust's ``regex`` crate, byte-oriented and
with Unicode off: ``.`` is one byte, ``\\w``/``\\d``/``(?i)`` are ASCII-only,
look-around and backreferences are refused. This module parses that syntax
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

import re2

from .regex_syntax import RegexSyntaxError, _RegexParser, format_regex_error
from .regex_tree import Node, _fold_ascii

__all__ = ["Node", "Regex", "RegexSyntaxError", "_fold_ascii", "format_regex_error", "parse_regex"]

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


def _emit(node: Node, utf8_literals: bool) -> str:
    """RE2 syntax for ``node``; every byte is one character (Latin-1 semantics).

    With ``utf8_literals`` single-byte sets above 0x7F are refused (raise
    ``_NeedsView``) except inside literal runs that decode as UTF-8.
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
        return (
            f"(?:{first}|[\\x{{c2}}-\\x{{df}}]{cont}|[\\x{{e0}}-\\x{{ef}}]{cont}{{2}}"
            f"|[\\x{{f0}}-\\x{{f4}}]{cont}{{3}})"
        )
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
            out.append(_emit(item, utf8_literals))
            i += 1
        return "".join(out)
    if k == "alt":
        return "(?:" + "|".join(_emit(x, utf8_literals) for x in node.items) + ")"
    if k == "group":
        opener = "(" if node.name == "cap" else "(?:"
        return opener + _emit(node.items[0], utf8_literals) + ")"
    if k == "rep":
        inner = "(?:" + _emit(node.items[0], utf8_literals) + ")"
        lazy = "" if node.greedy else "?"
        lo, hi = node.lo, node.hi
        if (lo, hi) == (0, None):
            return inner + "*" + lazy
        if (lo, hi) == (1, None):
            return inner + "+" + lazy
        if (lo, hi) == (0, 1):
            return inner + "?" + lazy
        return _counted(inner, lo, hi, lazy)
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


def _counted(inner: str, lo: int, hi: int | None, lazy: str) -> str:
    if lo <= _RE2_MAX_REPEAT and (hi is None or hi <= _RE2_MAX_REPEAT):
        if hi is None:
            return f"{inner}{{{lo},}}{lazy}"
        if lo == hi:
            return f"{inner}{{{lo}}}"
        return f"{inner}{{{lo},{hi}}}{lazy}"
    # RE2 refuses counts above 1000, nested products included: repeat the piece instead.
    pieces = []
    remaining = lo
    while remaining > 0:
        step = min(remaining, _RE2_MAX_REPEAT)
        pieces.append(f"{inner}{{{step}}}")
        remaining -= step
    if hi is None:
        pieces.append(inner + "*" + lazy)
    else:
        extra = hi - lo
        while extra > 0:
            step = min(extra, _RE2_MAX_REPEAT)
            pieces.append(f"{inner}{{0,{step}}}{lazy}")
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
        self._compiled = re2.compile(latin1, _LATIN1)
        # The low-level Match call skips building a match object on every request.
        raw = re2.compile(latin1, _LATIN1_TEST)._regexp
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

    def sub_first(self, data: bytes, replacement: bytes) -> bytes:
        """Replace the first match in ``data``; ``${n}`` are groups and ``$$`` is ``$``."""
        m = self._compiled.search(data)
        if m is None:
            return data
        return data[: m.start()] + _expand(replacement, m) + data[m.end() :]


def _expand(template: bytes, m) -> bytes:  # noqa: ANN001 - re2 match object
    out = bytearray()
    i = 0
    while i < len(template):
        c = template[i : i + 1]
        if c == b"$" and template[i + 1 : i + 2] == b"$":
            out += b"$"
            i += 2
        elif c == b"$" and template[i + 1 : i + 2] == b"{":
            close = template.find(b"}", i)
            try:
                group = m.group(int(template[i + 2 : close]))
            except (ValueError, IndexError):
                group = b""
            out += group or b""
            i = close + 1
        else:
            out += c
            i += 1
    return bytes(out)


def parse_regex(pattern: str) -> Regex:
    """Check ``pattern`` with the engine's rules and translate it; raise RegexSyntaxError."""
    tree = _RegexParser(pattern).parse()
    if _size(tree) * _STATE_COST > SIZE_LIMIT:
        raise RegexSyntaxError(
            f"Compiled regex exceeds size limit of {SIZE_LIMIT} bytes.", 0, len(pattern)
        )
    return Regex(pattern, tree)
