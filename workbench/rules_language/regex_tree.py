"""The tree of a parsed regex and the byte-set arithmetic its nodes use.

Nodes work on bytes: a ``set`` node is a sorted list of inclusive byte ranges,
so ``(?i)``, negation and class operations are plain range arithmetic.

    >>> _negate([(0x00, 0x60), (0x7B, 0xFF)])
    [(97, 122)]
"""

from __future__ import annotations

from dataclasses import dataclass, field


def _normalize(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _negate(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, start = [], 0
    for lo, hi in _normalize(ranges):
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= 0xFF:
        out.append((start, 0xFF))
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
    name: str = ""  # assert kind; uclass: the RE2 class text
    uranges: list[tuple[int, int]] = field(default_factory=list)  # uclass: code point ranges


@dataclass
class _Flags:
    i: bool = False
    m: bool = False
    s: bool = False
    U: bool = False
    x: bool = False
    u: bool = False
