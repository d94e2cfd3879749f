"""The tree of a parsed regex and the byte-set arithmetic its nodes use.

Nodes work on bytes: a ``set`` node is a sorted list of inclusive byte ranges,
so ``(?i)``, negation and class operations are plain range arithmetic.

    >>> _negate([(0x00, 0x60), (0x7B, 0xFF)])
    [(97, 122)]
"""

from __future__ import annotations

from dataclasses import dataclass, field

_ASCII_WORD = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
_ASCII_DIGIT = [(0x30, 0x39)]
_ASCII_SPACE = [(0x09, 0x0D), (0x20, 0x20)]
_POSIX = {
    "alnum": [(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)],
    "alpha": [(0x41, 0x5A), (0x61, 0x7A)],
    "ascii": [(0x00, 0x7F)],
    "blank": [(0x09, 0x09), (0x20, 0x20)],
    "cntrl": [(0x00, 0x1F), (0x7F, 0x7F)],
    "digit": [(0x30, 0x39)],
    "graph": [(0x21, 0x7E)],
    "lower": [(0x61, 0x7A)],
    "print": [(0x20, 0x7E)],
    "punct": [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)],
    "space": [(0x09, 0x0D), (0x20, 0x20)],
    "upper": [(0x41, 0x5A)],
    "word": _ASCII_WORD,
    "xdigit": [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)],
}


def _normalize(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _negate(ranges: list[tuple[int, int]], top: int = 0xFF) -> list[tuple[int, int]]:
    # top is 0xFF for bytes, 0x10FFFF for code points (a class under (?u)).
    out, start = [], 0
    for lo, hi in _normalize(ranges):
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= top:
        out.append((start, top))
    return out


def _intersect(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for lo1, hi1 in a:
        for lo2, hi2 in b:
            lo, hi = max(lo1, lo2), min(hi1, hi2)
            if lo <= hi:
                out.append((lo, hi))
    return _normalize(out)


def _fold_ascii(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    extra = []
    for lo, hi in ranges:
        for a, b, shift in ((0x41, 0x5A, 32), (0x61, 0x7A, -32)):
            s, e = max(lo, a), min(hi, b)
            if s <= e:
                extra.append((s + shift, e + shift))
    return _normalize(ranges + extra)


@dataclass
class Node:
    """One node of a parsed pattern: kind is lit/set/cat/alt/group/rep/assert/empty/uany/uclass."""

    kind: str
    ranges: list[tuple[int, int]] = field(default_factory=list)  # set
    items: list[Node] = field(default_factory=list)  # cat, alt, group (1), rep (1)
    lo: int = 0
    hi: int | None = None
    greedy: bool = True
    name: str = ""  # assert kind
    uranges: list[tuple[int, int]] = field(default_factory=list)  # uclass: code point ranges


@dataclass
class _Flags:
    i: bool = False
    m: bool = False
    s: bool = False
    U: bool = False
    x: bool = False
    u: bool = False
