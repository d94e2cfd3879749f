"""ModSecurity's ``@rx`` as libmodsecurity 3.0.15 runs it, on RE2 wherever RE2 means the same.

libmodsecurity compiles every ``@rx`` pattern with PCRE2 (10.44 in the PyPI
wheel, without JIT) and the options ``DOTALL | MULTILINE``, not in UTF mode:
the pattern and the value are bytes, ``.`` matches any byte, ``^``/``$``
work at line ends, and case folding, ``\\w``, ``\\d``, ``\\s`` and ``\\b`` know
only ASCII (``\\s`` includes VT, 0x0b). It runs one unanchored search and
reports every capture group that took part (group 0 is the whole match).

This module parses the PCRE pattern itself and writes it out again with
every byte class spelt out, so no engine's own idea of ``\\s``, case folding
or ``.`` is involved. The result runs on RE2 (Latin-1 mode: one byte, one
character) when the pattern has nothing RE2 lacks. Possessive repeats of one
byte class become greedy ones when nothing after them could start with such
a byte (then the two cannot differ). What RE2 cannot do (lookaround,
backreferences, ``\\Z``, other possessive repeats) runs on the ``regex``
package (or ``re``) behind an RE2 prefilter that accepts a superset, and is
recorded in :data:`UNSUPPORTED_BY_RE2` with the reason.

    >>> search = compile_rx(r"(?i)\\bselect\\s+(\\w+)")
    >>> search(b"1 SELECT\\x0bpassword from users").groups
    (b'SELECT\\x0bpassword', b'password')
    >>> compile_rx(r"^$")(b"a\\n") is None  # PCRE's ^ never matches after a final newline
    True
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import re2

try:  # the regex package has variable-length lookbehind and a timeout; re is the last resort
    _fallback_re: Any = importlib.import_module("regex")
except ImportError:  # pragma: no cover - regex comes with python-hcl2
    _fallback_re = importlib.import_module("re")
_TIMEOUT_ARG = _fallback_re.__name__ == "regex"


@dataclass(frozen=True)
class Match:
    """One operator match: ``data`` is what ModSecurity reports; ``groups`` is what ``capture`` stores.

    ``groups[i]`` becomes ``TX.i``; ``None`` marks a group that took no part,
    which ModSecurity leaves untouched (the old ``TX.i`` stays).
    """

    data: bytes
    groups: tuple[bytes | None, ...] = ()


#: Patterns (as given to :func:`compile_rx`) that run on the fallback engine, with the reason.
UNSUPPORTED_BY_RE2: dict[str, str] = {}

#: Patterns PCRE2 refuses, with the reason: ModSecurity loads such a rule, and it never matches.
REFUSED_BY_PCRE: dict[str, str] = {}

#: Seconds the fallback engine may spend on one value; a timeout counts as no match, as
#: PCRE's match limit does in ModSecurity (which then also sets TX.MSC_PCRE_LIMITS_EXCEEDED).
FALLBACK_TIMEOUT = 1.0


def _mask(chars: str) -> int:
    return sum(1 << c for c in set(chars.encode("latin-1")))


def _span(lo: int, hi: int) -> int:
    return ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)


# Byte sets as 256-bit integers, from PCRE2's built-in "C" locale tables: ASCII only.
ALL, NEWLINE, DIGIT = _span(0, 255), 1 << 10, _span(48, 57)
UPPER, LOWER = _span(65, 90), _span(97, 122)
WORD, SPACE = DIGIT | UPPER | LOWER | _mask("_"), _mask(" \t\n\x0b\x0c\r")
_CLASS_ESC = dict(d=DIGIT, w=WORD, s=SPACE, h=_mask("\t \xa0"), v=_mask("\n\x0b\x0c\r\x85"))
_POSIX = {
    "alpha": UPPER | LOWER, "digit": DIGIT, "alnum": UPPER | LOWER | DIGIT, "ascii": _span(0, 127),
    "blank": _mask(" \t"), "cntrl": _span(0, 31) | _mask("\x7f"), "graph": _span(33, 126),
    "lower": LOWER, "print": _span(32, 126), "punct": _span(33, 126) & ~(UPPER | LOWER | DIGIT),
    "space": SPACE, "upper": UPPER, "word": WORD, "xdigit": DIGIT | _mask("abcdefABCDEF"),
}  # fmt: skip
_CHAR_ESC = {"n": 10, "r": 13, "t": 9, "f": 12, "e": 27, "a": 7}
_I, _S, _M, _X = 1, 2, 4, 8
_FLAG_BITS = {"i": _I, "s": _S, "m": _M, "x": _X}
_HEX = "0123456789abcdefABCDEF"


def _digits(text: str) -> bool:
    return not text.strip("0123456789")


def _fold(mask: int) -> int:
    """``mask`` with the other case of its ASCII letters (PCRE's caseless class)."""
    return mask | ((mask & UPPER) << 32) | ((mask & LOWER) >> 32)


class PatternError(ValueError):
    """PCRE would refuse the pattern: ModSecurity loads the rule, and it never matches."""


class NotParsed(ValueError):
    """Valid PCRE this parser does not model (conditionals, verbs, \\p...)."""


class Unsupported(Exception):
    """RE2 has no exact equivalent of a construct in the pattern."""


# The syntax tree: tuples tagged by their first item.
#   ("chr", mask)                 one byte out of ``mask`` (case folding already applied)
#   ("cat", nodes) / ("alt", nodes) / ("from", nodes, k): nodes[k:] in sequence
#   ("grp", index or 0, node)     0 = non-capturing
#   ("rep", lo, hi or -1, mode, node)   mode: 0 greedy, 1 lazy, 2 possessive
#   ("at", kind)                  bol eol A z Z b B G K (zero-width)
#   ("look", behind, negative, node) / ("ref", index, caseless) / ("atomic", node)
Node = tuple[Any, ...]


class _Parser:
    """PCRE2's pattern syntax, for the pattern's bytes as Latin-1 text."""

    def __init__(self, text: str) -> None:
        self.s, self.i, self.groups, self.max_ref = text, 0, 0, 0

    def error(self, what: str) -> PatternError:
        return PatternError(f"{what} at offset {self.i}")

    def peek(self, k: int = 0) -> str:
        return self.s[self.i + k] if self.i + k < len(self.s) else ""

    def parse(self) -> Node:
        node = self.alt([_S | _M])
        if self.i < len(self.s):
            raise self.error("unmatched closing parenthesis")
        if self.max_ref > self.groups:
            raise self.error("reference to non-existent subpattern")
        return node

    def alt(self, flags: list[int]) -> Node:
        # ``flags`` is shared by the branches: PCRE carries (?i) on into later alternatives.
        branches = [self.seq(flags)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.seq(flags))
        return branches[0] if len(branches) == 1 else ("alt", tuple(branches))

    def quoted(self) -> str:
        """The text of ``\\Q...\\E`` (the parser is at its backslash); nothing for a lone ``\\E``."""
        if self.s.startswith("\\E", self.i):
            self.i += 2
            return ""
        end = self.s.find("\\E", self.i + 2)
        stop = len(self.s) if end < 0 else end
        text, self.i = self.s[self.i + 2 : stop], stop + 2
        return text

    def seq(self, flags: list[int]) -> Node:
        items: list[Node] = []
        while self.i < len(self.s) and self.peek() not in "|)":
            c, two = self.peek(), self.s[self.i : self.i + 2]
            if self.extended_blank(flags[0]):
                continue
            if two in ("\\Q", "\\E"):
                quoted = self.quoted()
                items.extend(self.literal(ord(ch), flags[0]) for ch in quoted)
                if items:  # a quantifier after \E repeats the last byte before it
                    items.append(self.quantified(items.pop(), flags))
            elif c in "*+?" or (c == "{" and self.quantifier(probe=True)):
                raise self.error("quantifier does not follow a repeatable item")
            elif (atom := self.atom(flags)) is not None:
                items.append(self.quantified(atom, flags))
        return items[0] if len(items) == 1 else ("cat", tuple(items))

    def extended_blank(self, flags: int) -> bool:
        """Skip one blank or ``#`` comment when (?x) is on; False when there is none here."""
        if not flags & _X or self.peek() not in tuple(" \t\n\r\x0b\x0c#"):
            return False
        end = self.s.find("\n", self.i) if self.peek() == "#" else self.i
        self.i = len(self.s) if end < 0 else end + 1
        return True

    def quantifier(self, probe: bool = False) -> tuple[int, int] | None:
        """``{n}``, ``{n,}``, ``{n,m}``, ``{,m}`` (PCRE2 10.43+, blanks around numbers), else None."""
        end = self.s.find("}", self.i)
        parts = [p.strip(" \t") for p in self.s[self.i + 1 : end].split(",")] if end > 0 else []
        if not 1 <= len(parts) <= 2 or not any(parts) or not all(map(_digits, parts)):
            return None
        lo = int(parts[0] or 0)
        hi = lo if len(parts) == 1 else int(parts[1]) if parts[1] else -1
        if not probe:
            if hi != -1 and hi < lo:
                raise self.error("numbers out of order in {} quantifier")
            self.i = end + 1
        return lo, hi

    def quantified(self, atom: Node, flags: list[int]) -> Node:
        while True:
            while self.extended_blank(flags[0]):
                pass
            c = self.peek()
            if c in ("*", "+", "?"):
                lo, hi = {"*": (0, -1), "+": (1, -1), "?": (0, 1)}[c]
                self.i += 1
            elif c == "{" and (q := self.quantifier()) is not None:
                lo, hi = q
            else:
                return atom
            if atom[0] == "at":
                raise self.error("quantifier does not follow a repeatable item")
            mode = {"?": 1, "+": 2}.get(self.peek(), 0)
            self.i += mode > 0
            atom = ("rep", lo, hi, mode, atom)

    def literal(self, byte: int, flags: int) -> Node:
        return ("chr", _fold(1 << byte) if flags & _I else 1 << byte)

    def atom(self, flags: list[int]) -> Node | None:
        c = self.peek()
        self.i += 1
        if c == "(":
            return self.group(flags)
        if c == "[":
            return ("chr", self.char_class(flags[0]))
        if c == ".":
            return ("chr", ALL if flags[0] & _S else ALL & ~NEWLINE)
        if c in "^$":
            return ("at", ("bol" if c == "^" else "eol") if flags[0] & _M else "AZ"[c == "$"])
        if c != "\\":
            return self.literal(ord(c), flags[0])
        got = self.escape(in_class=False)
        if isinstance(got, int):
            return self.literal(got, flags[0])
        if got[0] == "ref":
            return ("ref", got[1], bool(flags[0] & _I))
        return ("chr", _fold(got[1])) if got[0] == "chr" and flags[0] & _I else got

    def group(self, outer: list[int]) -> Node | None:
        flags, index, kind, s = [outer[0]], 0, "grp", self.s
        if self.peek() == "*":
            raise NotParsed("backtracking verbs")
        if self.peek() != "?":
            self.groups += 1
            index = self.groups
        elif (c := self.peek(1)) == "#":
            end = s.find(")", self.i)
            if end < 0:
                raise self.error("missing ) after comment")
            self.i = end + 1
            return None
        elif c in ":>=!":
            self.i += 2
            kind = {":": "grp", ">": "atomic", "=": "ahead", "!": "nahead"}[c]
        elif s.startswith(("?<=", "?<!"), self.i):
            kind, self.i = ("behind" if self.peek(2) == "=" else "nbehind"), self.i + 3
        elif c in "<'" or s.startswith("?P<", self.i):
            end = s.find("'" if c == "'" else ">", self.i + 2)
            if end < 0:
                raise self.error("unterminated group name")
            self.i, self.groups = end + 1, self.groups + 1
            index = self.groups
        else:
            self.i += 1
            on, bits = True, flags[0]
            while (c := self.peek()) and c not in ":)":
                if c not in "-^" and c not in _FLAG_BITS:
                    raise NotParsed(f"group syntax (?{c}")
                on = on and c != "-"
                bit = _FLAG_BITS.get(c, _I | _M | _S | _X if c == "^" else 0)
                bits = bits | bit if on and c != "^" else bits & ~bit
                self.i += 1
            if not c:
                raise self.error("missing )")
            self.i += 1
            if c == ")":  # (?i) changes the rest of the enclosing group
                outer[0] = bits
                return None
            flags[0] = bits
        body = self.alt(flags)
        if self.peek() != ")":
            raise self.error("missing )")
        self.i += 1
        if kind in ("grp", "atomic"):
            return ("grp", index, body) if kind == "grp" else ("atomic", body)
        return ("look", "behind" in kind, kind.startswith("n"), body)

    def number(self, digits: str, base: int, limit: int = 255) -> int:
        try:
            value = int(digits, base)
        except ValueError:
            raise self.error("invalid number in escape") from None
        if value > limit:
            raise self.error("character code point value is too large")
        return value

    def escape(self, in_class: bool) -> Node | int:
        """One escape after the backslash: a byte value, or a node (a class, assertion, reference)."""
        s, c = self.s, self.peek()
        self.i += 1
        if not c:
            raise self.error("\\ at end of pattern")
        if c.lower() in _CLASS_ESC:
            m = _CLASS_ESC[c.lower()]
            return ("chr", m if c.islower() else ALL & ~m)
        if c in _CHAR_ESC:
            return _CHAR_ESC[c]
        if c in "xo" and self.peek() == "{":
            end = s.find("}", self.i)
            if end < 0:
                raise self.error("missing } in escape")
            value, self.i = self.number(s[self.i + 1 : end], 16 if c == "x" else 8), end + 1
            return value
        if c == "x":
            j = self.i
            while j < self.i + 2 and s[j : j + 1] and s[j] in _HEX:
                j += 1
            value, self.i = int(s[self.i : j] or "0", 16), j
            return value
        if c == "c":
            self.i += 1
            if not self.peek(-1) or ord(self.peek(-1)) > 127:
                raise self.error("\\c must be followed by an ASCII character")
            return ord(self.peek(-1).upper()) ^ 0x40
        if c in "0123456789":
            j = self.i - 1
            while s[j : j + 1] and s[j] in "0123456789":
                j += 1
            n = int(s[self.i - 1 : j])
            if not in_class and c != "0" and (n < 10 or c in "89" or n <= self.groups):
                self.i, self.max_ref = j, max(self.max_ref, n)
                return ("ref", n, False)  # \1-\9 always; \10 and up when that many groups came
            j = self.i - 1
            while j < self.i + 2 and s[j : j + 1] and s[j] in "01234567":
                j += 1
            if j == self.i - 1:
                raise self.error("invalid escape")
            value, self.i = int(s[self.i - 1 : j], 8) & 0xFF, j
            return value
        if in_class and c == "b":
            return 8
        if not c.isascii() or not c.isalnum():
            return ord(c)
        if in_class and c in "BRXNAzZGK":
            raise self.error(f"escape \\{c} in a class")
        if c in "bBAzZGK":
            return ("at", c)
        if c == "N":
            return ("chr", ALL & ~NEWLINE)
        if c == "R":  # a newline sequence, atomically
            crlf = ("cat", (("chr", _mask("\r")), ("chr", NEWLINE)))
            return ("atomic", ("alt", (crlf, ("chr", _CLASS_ESC["v"]))))
        if c in "pPgk":
            raise NotParsed(f"escape \\{c}")
        raise self.error(f"unrecognized escape \\{c}")

    def char_class(self, flags: int) -> int:
        negate = self.peek() == "^"
        self.i += negate
        mask, first = 0, True
        while (c := self.peek()) != "]" or first:
            first = False
            if not c:
                raise self.error("missing terminating ] for character class")
            if c == "[" and self.peek(1) in (":", ".", "=") and (end := self.posix_end()) > 0:
                name = self.s[self.i + 2 : end]
                if self.peek(1) != ":" or name.lstrip("^") not in _POSIX:
                    raise self.error("unknown POSIX class name or collating element")
                m = _POSIX[name.lstrip("^")]
                mask, self.i = mask | (ALL & ~m if name.startswith("^") else m), end + 2
            elif self.s.startswith(("\\Q", "\\E"), self.i):
                mask |= _mask(self.quoted())
            else:
                lo, lo_is_class = self.class_atom()
                if self.peek() == "-" and self.peek(1) not in ("]", ""):
                    self.i += 1
                    hi, hi_is_class = self.class_atom()
                    if lo_is_class or hi_is_class or hi < lo:
                        raise self.error("invalid range in character class")
                    mask |= _span(lo, hi)
                else:
                    mask |= lo if lo_is_class else 1 << lo
        self.i += 1
        mask = _fold(mask) if flags & _I else mask
        return ALL & ~mask if negate else mask

    def posix_end(self) -> int:
        """Where ``[:name:]`` ends (its final ``:``), or -1 when this ``[`` is a plain byte (PCRE's test)."""
        s, t, j = self.s, self.s[self.i + 1], self.i + 2
        while j < len(s):
            if s[j] == "\\" and s[j + 1 : j + 2] in ("]", "\\"):
                j += 1
            elif (s[j] == "[" and s[j + 1 : j + 2] == t) or s[j] == "]":
                return -1
            elif s[j] == t and s[j + 1 : j + 2] == "]":
                return j
            j += 1
        return -1

    def class_atom(self) -> tuple[int, bool]:
        """A byte value, or a class escape's mask (\\d, \\w, ...): (value, is_mask)."""
        c = self.peek()
        self.i += 1
        if c != "\\":
            return ord(c), False
        got = self.escape(in_class=True)
        return (got, False) if isinstance(got, int) else (got[1], True)


def _class_of(mask: int) -> str:
    """A byte set as an RE2/regex class of ``\\xHH`` ranges (or one escaped byte)."""
    if mask & (mask - 1) == 0:
        return f"\\x{mask.bit_length() - 1:02x}"
    parts, b = [], 0
    while b < 256:
        if mask >> b & 1:
            e = b
            while e < 255 and mask >> (e + 1) & 1:
                e += 1
            parts.append(f"\\x{b:02x}" + (f"-\\x{e:02x}" if e > b else ""))
            b = e
        b += 1
    return "[" + "".join(parts) + "]"


# What may follow a node: a linked list of (node, rest).
Follow = tuple[Node, Any] | None


def _first(node: Node) -> tuple[int, bool, bool]:
    """(bytes a match of ``node`` can start with, can it match empty, zero-width tests on the way)."""
    tag = node[0]
    if tag == "chr":
        return node[1], False, False
    if tag in ("cat", "from", "alt"):
        items = node[1][node[2] :] if tag == "from" else node[1]
        mask, empty, tests = 0, tag != "alt", False
        for m, nullable, t in map(_first, items):
            mask, tests = mask | m, tests or t
            if tag == "alt":
                empty = empty or nullable
            elif not nullable:
                return mask, False, tests
        return mask, empty, tests
    if tag in ("grp", "atomic"):
        return _first(node[-1])
    if tag == "rep":
        m, nullable, t = _first(node[4])
        return m, nullable or node[1] == 0, t
    return (ALL if tag == "ref" else 0), True, True  # assertions, lookaround, references


def _first_of_follow(follow: Follow) -> tuple[int, bool, bool]:
    mask, tests = 0, False
    while follow is not None:
        m, nullable, t = _first(follow[0])
        mask, tests = mask | m, tests or t
        if not nullable:
            return mask, False, tests
        follow = follow[1]
    return mask, True, tests


def _has_capture(node: Node) -> bool:
    if node[0] in ("cat", "alt"):
        return any(map(_has_capture, node[1]))
    return (node[0] == "grp" and node[1] > 0) or (
        node[0] in ("grp", "rep", "atomic", "look") and _has_capture(node[-1])
    )


_RE2_AT = dict(bol="(?m:^)", eol="(?m:$)", A=r"\A", G=r"\A", z=r"\z", b=r"\b", B=r"\B")
# PCRE's ^ does not match after a newline that ends the value; \G is \A (one search from 0).
_PY_AT = dict(
    _RE2_AT, bol=r"(?:\A|(?<=\n)(?!\Z))", eol=r"(?=\n|\Z)", z=r"\Z", Z=r"(?=\n?\Z)", K=r"\K"
)
_QUANTIFIER = {(0, -1): "*", (1, -1): "+", (0, 1): "?"}


class _Emitter:
    """Writes a tree as RE2 syntax (``re2``: exact, ``relaxed``: a superset) or for ``regex`` (``py``)."""

    def __init__(self, mode: str) -> None:
        self.mode, self.out = mode, list[str]()
        self.caret_at_end = False  # RE2's (?m:^) also matches after a final newline; PCRE's not

    def unsupported(self, why: str) -> None:
        if self.mode == "re2":
            raise Unsupported(why)

    def emit(self, node: Node, follow: Follow) -> None:
        out, tag, py = self.out, node[0], self.mode == "py"
        if tag == "chr":
            out.append(_class_of(node[1]))
        elif tag in ("cat", "from"):
            items = node[1]
            for k in range(node[2] if tag == "from" else 0, len(items)):
                rest = ("from", items, k + 1) if k + 1 < len(items) else None
                self.emit(items[k], (rest, follow) if rest is not None else follow)
        elif tag == "alt":
            out.append("(?:")
            for k, branch in enumerate(node[1]):
                out.append("|" if k else "")
                self.emit(branch, follow)
            out.append(")")
        elif tag in ("grp", "atomic"):
            if tag == "atomic":
                self.unsupported("atomic group")
            out.append(
                "(?>" if tag == "atomic" and py else "(" if tag == "grp" and node[1] else "(?:"
            )
            self.emit(node[-1], follow)
            out.append(")")
        elif tag == "rep":
            self.repeat(node, follow)
        elif tag == "at":
            self.assertion(node[1], follow)
        elif tag == "look":
            self.unsupported("lookbehind" if node[1] else "lookahead")
            if py:  # relaxed: dropping a test only widens the match
                out.append("(?" + "<" * node[1] + "=!"[node[2]])
                self.emit(node[3], None)
                out.append(")")
        elif tag == "ref":
            self.unsupported("backreference")
            out.append(f"(?{'i' * node[2]}:\\{node[1]})" if py else "[\\x00-\\xff]*")

    def repeat(self, node: Node, follow: Follow) -> None:
        _, lo, hi, mode, body = node
        if mode == 2 and self.mode == "re2":
            # X*+ equals X* when X is one byte class and nothing that may come next starts
            # with such a byte: giving bytes back could then never let the rest match.
            first, _, tests = _first_of_follow(follow)
            if body[0] != "chr" or first & body[1] or tests:
                raise Unsupported("possessive repeat that backtracking would change")
            mode = 0
        if self.mode == "re2" and hi != 1 and _has_capture(body) and _first(body)[1]:
            # PCRE records one more, empty, iteration in the groups; RE2 keeps the last non-empty one.
            raise Unsupported("capture group in a repeat that can match empty")
        self.out.append("(?:")
        self.emit(body, (node, follow))
        self.out.append(")")
        self.out.append(_QUANTIFIER.get((lo, hi)) or f"{{{lo},{'' if hi == -1 else hi}}}")
        self.out.append("?" if mode == 1 else "+" if mode == 2 and self.mode == "py" else "")

    def assertion(self, kind: str, follow: Follow) -> None:
        if self.mode == "py":
            self.out.append(_PY_AT[kind])
        elif kind in ("Z", "K"):
            self.unsupported("\\Z (end or before a final newline)" if kind == "Z" else "\\K")
        else:
            self.caret_at_end |= kind == "bol" and _first_of_follow(follow)[1]
            self.out.append(_RE2_AT[kind])


def _emit(tree: Node, mode: str) -> tuple[bytes, bool]:
    e = _Emitter(mode)
    e.emit(tree, None)
    return "".join(e.out).encode("latin-1"), e.caret_at_end


_OPTIONS = re2.Options()
_OPTIONS.encoding = re2.Options.Encoding.LATIN1
_OPTIONS.max_mem = 64 << 20  # CRS's largest alternations need more than the 8 MiB default
_OPTIONS.log_errors = False
_UNANCHORED = re2._Anchor.UNANCHORED


def _never(value: bytes) -> Match | None:
    return None


def _build(value: bytes, spans: Any) -> Match:
    last = len(spans) - 1
    while spans[last][0] < 0:
        last -= 1  # PCRE reports groups up to the last one that took part
    groups = tuple(value[s:e] if s >= 0 else None for s, e in spans[: last + 1])
    return Match(value[spans[0][0] : spans[0][1]], groups)


def _python_search(source: bytes) -> Callable[[bytes], Match | None]:
    compiled = _fallback_re.compile(source)
    timeout = {"timeout": FALLBACK_TIMEOUT} if _TIMEOUT_ARG else {}

    def search(value: bytes) -> Match | None:
        try:
            m = compiled.search(value, **timeout)
        except TimeoutError:
            return None
        return None if m is None else _build(value, [m.span(k) for k in range(len(m.regs))])

    return search


@functools.lru_cache(maxsize=4096)
def compile_rx(pattern: str) -> Callable[[bytes], Match | None]:
    """The ``@rx`` operator for ``pattern`` (the rule's text; its UTF-8 bytes are what PCRE sees)."""
    raw = pattern.encode("utf-8", "surrogateescape")
    if not raw:  # only a macro can leave it empty; libmodsecurity then searches for ".*"
        return compile_rx(".*")
    try:
        tree = _Parser(raw.decode("latin-1")).parse()
    except PatternError as exc:
        REFUSED_BY_PCRE[pattern] = str(exc)
        return _never
    except NotParsed as exc:
        UNSUPPORTED_BY_RE2[pattern] = f"not modelled: {exc}; run as written"
        return _python_search(b"(?sm)" + raw)
    try:
        source, caret_at_end = _emit(tree, "re2")
        matcher = re2._re2.RE2(source, _OPTIONS)
        if not matcher.ok():
            raise Unsupported(f"RE2 refuses it: {matcher.error()}")
    except Unsupported as exc:
        UNSUPPORTED_BY_RE2[pattern] = str(exc)
        return _fallback(tree)
    match = matcher.Match
    exact = _python_search(_emit(tree, "py")[0]) if caret_at_end else None

    def search(value: bytes) -> Match | None:
        if exact is not None and value[-1:] == b"\n":
            return exact(value)
        spans = match(_UNANCHORED, value, 0, len(value))
        return None if spans[0][0] < 0 else _build(value, spans)

    return search


def _fallback(tree: Node) -> Callable[[bytes], Match | None]:
    exact = _python_search(_emit(tree, "py")[0])
    prefilter = re2._re2.RE2(_emit(tree, "relaxed")[0], _OPTIONS)
    if not prefilter.ok():
        return exact
    quick = prefilter.Match

    def search(value: bytes) -> Match | None:
        return None if quick(_UNANCHORED, value, 0, len(value))[0][0] < 0 else exact(value)

    return search


@functools.lru_cache(maxsize=4096)
def screen_source(pattern: str) -> bytes | None:
    """An RE2 source (Latin-1) that matches every value ``@rx pattern`` matches, for screening.

    It is the exact RE2 form where RE2 runs the pattern, and the relaxed prefilter where the
    pattern needs the fallback engine; None when there is neither (the caller then runs the
    operator itself). A screen may say yes where the operator says no, never the reverse.
    """
    raw = pattern.encode("utf-8", "surrogateescape")
    if not raw:
        return None
    try:
        tree = _Parser(raw.decode("latin-1")).parse()
    except (PatternError, NotParsed):
        return None
    for mode in ("re2", "relaxed"):
        try:
            source = _emit(tree, mode)[0]
        except Unsupported:
            continue
        if re2._re2.RE2(source, _OPTIONS).ok():
            return source
    return None


SCREEN_OPTIONS = _OPTIONS
