"""What the generated per-request functions call: value helpers and leaf tests.

:mod:`.codegen` writes one Python function per expression; the parts of the
language that are not one native operation (a value of a ``[*]`` or an index,
an IP address compared with a literal or a set, a named list, a comparison of
two values, array logic) are written as calls to the helpers here, bound in
the function's globals under made-up names. None of them evaluates a tree:
each takes values and answers for one node.

Semantics kept from the platform: a missing value (absent map key, index out of
range, failed lookup) makes every comparison false, ``ne`` included; IPv4 and
IPv6 never compare equal or ordered; ``any`` of nothing is false and ``all`` of
nothing is true; an absent IP is missing.

    >>> from workbench.rules_language.parser import parse
    >>> in_set = ip_predicate(parse("ip.src in {10.0.0.0/8 192.0.2.1}").rhs)
    >>> in_set(parse_ip("10.1.2.3")), in_set(parse_ip("::1"))
    (True, False)
    >>> pick_key({"accept": ["*/*"]}, "accept", b"accept"), pick_index([], 0)
    (['*/*'], MISSING)
"""

from __future__ import annotations

import ipaddress
import operator
import socket
from collections.abc import Callable, Mapping
from typing import Any

from .ast import Literal, SetLiteral
from .values import MISSING, parse_ip, to_bytes

ORDER = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}

# Answers kept per IP comparison; address text longer than this is never kept.
IP_CACHE_ENTRIES = 8192
IP_CACHE_TEXT_MAX = 64


def ip_value(v: Any) -> Any:
    """An IP field's value: an address, or MISSING when absent or not an address."""
    return MISSING if v is None else parse_ip(v)


# -- indexes ---------------------------------------------------------------------


def elements(v: Any) -> list[Any]:
    """``v[*]``: a map's values or an array's items; anything else has none."""
    if isinstance(v, dict):
        return list(v.values())
    return list(v) if isinstance(v, list | tuple) else []


def elements_each(items: Any) -> list[Any]:
    """``x[*][*]``: the elements of every element, missing ones skipped."""
    return [x for item in items if item is not MISSING for x in elements(item)]


def pick_index(v: Any, key: int) -> Any:
    """``v[N]``, or MISSING when ``v`` is no array or too short."""
    if isinstance(v, list | tuple) and key < len(v):
        return v[key]
    return MISSING


def pick_key(v: Any, text_key: str | bytes, key: bytes) -> Any:
    """``v["key"]``: the key as text, then as bytes (a caller may key a map either way)."""
    if isinstance(v, dict):
        found = v.get(text_key, MISSING)
        if found is MISSING and isinstance(text_key, str):
            found = v.get(key, MISSING)
        return found
    return MISSING


# -- tests of one value ------------------------------------------------------------


def any_span(spans: tuple[tuple[int, int], ...]) -> Callable[[int], bool]:
    """``v`` inside one of the integer ranges (for sets with many ranges)."""
    return lambda v: any(lo <= v <= hi for lo, hi in spans)


def ip_predicate(rhs: Any, op: str = "in") -> Callable[[Any], bool]:
    """The test of an address against a literal (``op``) or a set of addresses and networks."""
    if isinstance(rhs, Literal):
        cmp, key = ORDER[op], (rhs.value.version, int(rhs.value))
        return lambda v: cmp((v.version, int(v)), key)
    assert isinstance(rhs, SetLiteral)
    singles = frozenset(lo for lo, hi in rhs.ip_ranges if lo == hi)
    spans = tuple((lo.version, int(lo), int(hi)) for lo, hi in rhs.ip_ranges if lo != hi)
    return lambda v: (
        v in singles or any(ver == v.version and lo <= int(v) <= hi for ver, lo, hi in spans)
    )


def ip_text_answer(test: Callable[[Any], bool]) -> Callable[[str], bool]:
    """The answer of ``test`` for address text (false when the text is not an address)."""

    def answer(text: str) -> bool:
        v = parse_ip(text)
        return v is not MISSING and test(v)

    return answer


def dynamic_test(kind: str, op: str) -> Callable[[Any, Any], bool]:
    """A value compared with another value of the request (both present)."""
    cmp = ORDER[op]
    if kind == "Ip":
        return lambda v, w: cmp((v.version, int(v)), (w.version, int(w)))
    if kind == "Bytes":

        def text_or_bytes(v: Any, w: Any) -> bool:
            if type(v) is not type(w):
                v, w = to_bytes(v), to_bytes(w)
            return cmp(v, w)

        return text_or_bytes
    return cmp


def list_test(kind: str, name: str) -> Callable[[Any, Mapping[str, Any] | None], bool]:
    """``v in $name``: the named list read from the request's lists, prepared once per list."""
    cache: dict[int, Any] = {}

    def prepared(lists: Mapping[str, Any] | None) -> Any:
        items = (lists or {}).get(name)
        if items is None:
            return None
        key = id(items)
        hit = cache.get(key)
        if hit is not None and hit[0] is items and hit[1] == len(items):
            return hit[2]
        if kind == "Ip":
            nets = []
            for item in items:
                net = ipaddress.ip_network(str(item), strict=False)
                nets.append((net.version, int(net.network_address), int(net.broadcast_address)))
            value: Any = nets
        elif kind == "Int":
            value = frozenset(int(i) for i in items)
        else:
            value = frozenset(to_bytes(i) for i in items)
        cache.clear()
        cache[key] = (items, len(items), value)
        return value

    def test(v: Any, lists: Mapping[str, Any] | None) -> bool:
        items = prepared(lists)
        if items is None:
            return False
        if kind == "Ip":
            n = int(v)
            return any(ver == v.version and lo <= n <= hi for ver, lo, hi in items)
        if kind == "Int":
            return v in items
        return to_bytes(v) in items

    return test


# -- array logic ---------------------------------------------------------------------


def _xor(row: tuple[Any, ...]) -> bool:
    return sum(1 for x in row if x is True) % 2 == 1


ELEMENTWISE: dict[str, Callable[[tuple[Any, ...]], bool]] = {
    "and": lambda row: all(x is True for x in row),
    "or": lambda row: any(x is True for x in row),
    "xor": _xor,
}


def elementwise(op: str) -> Callable[[list[Any]], list[bool]]:
    """``and``/``or``/``xor`` of arrays of booleans, element by element (shortest wins)."""
    combine = ELEMENTWISE[op]
    return lambda columns: [combine(row) for row in zip(*columns, strict=False)]


# -- IPv4 text --------------------------------------------------------------------------


class IpCache(dict[str, bool]):
    """Address text to one comparison's answer, bounded.

    At most ``IP_CACHE_ENTRIES`` answers: when full it starts again empty, so
    every step is O(1) and a working set up to that size always hits. A miss
    parses dotted-quad IPv4 text in C (``inet_pton``) and gives any other text
    to ``slow``.
    """

    __slots__ = ("_test4", "_slow")

    def __init__(self, test4: Callable[[int], bool], slow: Callable[[str], bool]) -> None:
        super().__init__()
        self._test4 = test4
        self._slow = slow

    def __missing__(self, text: str) -> bool:
        # ipv4_int inline: a miss is the slow step of a request from a new address.
        try:
            packed = _pton(_AF_INET, text)
        except (OSError, ValueError, UnicodeError):
            packed = None
        if packed is None or (not _CANONICAL_ONLY and _ntop(_AF_INET, packed) != text):
            answer = self._slow(text)
        else:
            answer = self._test4(int.from_bytes(packed, "big"))
        if len(text) <= IP_CACHE_TEXT_MAX:
            if len(self) >= IP_CACHE_ENTRIES:
                self.clear()
            self[text] = answer
        return answer


_AF_INET = socket.AF_INET
_pton, _ntop = socket.inet_pton, socket.inet_ntop


def _pton_refuses_leading_zeros() -> bool:
    for text in ("01.2.3.4", "1.2.3.00"):
        try:
            _pton(_AF_INET, text)
        except OSError:
            continue
        return False
    return True


# glibc's inet_pton refuses leading zeros as ipaddress does; elsewhere a round trip checks.
_CANONICAL_ONLY = _pton_refuses_leading_zeros()


def ipv4_int(text: str) -> int | None:
    """The integer of dotted-quad IPv4 text in its one accepted spelling, else None.

    ``inet_pton`` refuses short forms, hex, spaces and octets above 255; leading
    zeros, which ``ipaddress`` refuses, are refused too.

    >>> ipv4_int("192.0.2.1"), ipv4_int("192.0.2.01"), ipv4_int("::1"), ipv4_int("1.2.3")
    (3221225985, None, None, None)
    """
    try:
        packed = _pton(_AF_INET, text)
    except (OSError, ValueError, UnicodeError):
        return None
    if not _CANONICAL_ONLY and _ntop(_AF_INET, packed) != text:
        return None
    return int.from_bytes(packed, "big")
