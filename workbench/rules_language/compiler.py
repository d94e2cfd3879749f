"""The per-request evaluator: a typed tree compiled once into Python closures.

Each node becomes a function ``fn(fields, lists)``. Comparisons against
literals are specialised at compile time (the literal is converted once, the
common ``str`` case is tested first), so evaluating a request costs a few
dictionary look-ups and native string operations.

Semantics kept from the platform: string comparison is case-sensitive and
byte-wise; a missing value (absent map key, index out of range, failed
lookup) makes every comparison false, ``ne`` included; IPv4 and IPv6 never
compare equal or ordered; ``any`` of nothing is false and ``all`` of nothing
is true. A field the request does not carry reads as its type's empty value
(empty string, 0, false, empty array or map); an absent IP is missing.

    >>> from workbench.rules_language.parser import parse
    >>> fn = compile_tree(parse('http.host in {"a.com" "b.com"}'))
    >>> fn({"http.host": "b.com"}, {}), fn({"http.host": "c.com"}, {})
    (True, False)
"""

from __future__ import annotations

import ipaddress
import operator
from collections.abc import Callable, Mapping
from typing import Any

from .ast import (
    STAR,
    Call,
    Compare,
    Empty,
    FieldRef,
    Index,
    ListRef,
    Literal,
    Logical,
    Node,
    Not,
    Pattern,
    SetLiteral,
)
from .types import default_value
from .values import MISSING, from_bytes, parse_ip, to_bytes

Fields = Mapping[str, Any]  # a request: field name to value
Lists = Mapping[str, Any] | None  # named list name to items (None: no lists given)
Fn = Callable[[Fields, Lists], Any]
Test = Callable[[Any, Fields, Lists], bool]  # a non-missing value tested against the right side

_ORDER = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


def compile_tree(node: Node) -> Fn:
    """Compile a checked tree into ``fn(fields, lists) -> bool``."""
    inner = _compile(node)
    if isinstance(node, Compare | Logical | Not | Empty | FieldRef):
        return inner  # these already answer True or False
    return lambda fields, lists: inner(fields, lists) is True


def compile_node(node: Node) -> Fn:
    """The closure of one node (a value, or True/False for a test), unwrapped."""
    return _compile(node) if isinstance(node, Compare | Logical | Not | Empty) else _value(node)


def compile_test(node: Compare) -> Test:
    """``test(value, fields, lists)`` of a comparison, for one non-missing left value."""
    return _test(node)


def _compile(node: Node) -> Fn:
    if isinstance(node, Empty):
        return lambda f, ls: False
    if isinstance(node, Logical):
        return _logical(node)
    if isinstance(node, Not):
        inner = _compile(node.operand)
        if node.type.kind == "Array":
            return lambda f, ls: [x is not True for x in inner(f, ls)]
        return lambda f, ls: inner(f, ls) is not True
    if isinstance(node, Compare):
        return _compare(node)
    return _value(node)


def _logical(node: Logical) -> Fn:
    items = [_compile(i) for i in node.items]
    if node.type.kind == "Array":
        combine = {"and": all, "or": any, "xor": lambda xs: sum(1 for x in xs if x) % 2 == 1}[
            node.op
        ]

        def elementwise(f: Fields, ls: Lists) -> list[bool]:
            columns = [fn(f, ls) for fn in items]
            return [combine(x is True for x in row) for row in zip(*columns, strict=False)]

        return elementwise
    if node.op == "and":
        if len(items) == 2:
            a, b = items
            return lambda f, ls: a(f, ls) is True and b(f, ls) is True
        return lambda f, ls: all(fn(f, ls) is True for fn in items)
    if node.op == "or":
        if len(items) == 2:
            a, b = items
            return lambda f, ls: a(f, ls) is True or b(f, ls) is True
        return lambda f, ls: any(fn(f, ls) is True for fn in items)
    return lambda f, ls: sum(1 for fn in items if fn(f, ls) is True) % 2 == 1


# -- values -------------------------------------------------------------------


def _value(node: Node) -> Fn:
    if isinstance(node, FieldRef):
        name, default = node.name, default_value(node.type)
        if node.type.kind == "Ip":

            def ip_field(f: Fields, ls: Lists) -> Any:
                v = f.get(name)
                return MISSING if v is None else parse_ip(v)

            return ip_field
        if node.type.kind == "Bool":
            return lambda f, ls: bool(f.get(name))

        def field(f: Fields, ls: Lists) -> Any:
            v = f.get(name)
            return default if v is None else v

        return field
    if isinstance(node, Literal):
        value = node.value
        if isinstance(value, bytes):
            value = from_bytes(value)
        return lambda f, ls: value
    if isinstance(node, Index):
        return _index(node)
    if isinstance(node, Call):
        return _call(node)
    raise TypeError(f"cannot evaluate {type(node).__name__}")


def _index(node: Index) -> Fn:
    base = _value(node.base)
    key = node.key
    if key is STAR:

        def elements(v: Any) -> list[Any]:
            if isinstance(v, dict):
                return list(v.values())
            return list(v) if isinstance(v, list | tuple) else []

        if node.base.each:
            return lambda f, ls: [
                x for item in base(f, ls) if item is not MISSING for x in elements(item)
            ]
        return lambda f, ls: elements(base(f, ls))

    if isinstance(key, int):

        def pick(v: Any) -> Any:
            if isinstance(v, list | tuple) and key < len(v):
                return v[key]
            return MISSING

    else:
        text_key = from_bytes(key)

        def pick(v: Any) -> Any:
            if isinstance(v, dict):
                found = v.get(text_key, MISSING)
                if found is MISSING and isinstance(text_key, str):
                    found = v.get(key, MISSING)
                return found
            return MISSING

    if node.base.each:
        return lambda f, ls: [pick(x) for x in base(f, ls)]
    return lambda f, ls: pick(base(f, ls))


def _call(node: Call) -> Fn:
    args = [
        _value(a) if not isinstance(a, Compare | Logical | Not) else _compile(a) for a in node.args
    ]
    if node.name in ("any", "all"):
        (arg,) = args
        if node.name == "any":
            return lambda f, ls: any(x is True for x in arg(f, ls))
        return lambda f, ls: all(x is True for x in arg(f, ls))
    impl = node.impl
    if impl is None:
        raise TypeError(f"{node.name}() was not built by the parser")
    if node.mapped:
        first, rest = args[0], args[1:]
        return lambda f, ls: [
            MISSING if x is MISSING else impl(x, *(a(f, ls) for a in rest)) for x in first(f, ls)
        ]
    if len(args) == 1:
        (a,) = args
        return lambda f, ls: impl(a(f, ls))
    if len(args) == 2:
        a, b = args
        if isinstance(node.args[1], Literal):
            const = b({}, {})
            return lambda f, ls: impl(a(f, ls), const)
        return lambda f, ls: impl(a(f, ls), b(f, ls))
    return lambda f, ls: impl(*[a(f, ls) for a in args])


# -- comparisons ----------------------------------------------------------------


def _compare(node: Compare) -> Fn:
    fused = _fused(node)
    if fused is not None:
        return fused
    lhs = _value(node.lhs)
    test = _test(node)
    if node.lhs.each:
        return lambda f, ls: [x is not MISSING and test(x, f, ls) for x in lhs(f, ls)]

    def compare(f: Fields, ls: Lists) -> bool:
        v = lhs(f, ls)
        return v is not MISSING and test(v, f, ls)

    return compare


def _fused(node: Compare) -> Fn | None:
    """One closure for the commonest shape, ``field op literal``: no nested calls."""
    lhs, rhs, op = node.lhs, node.rhs, node.op
    if not isinstance(lhs, FieldRef) or lhs.type.kind not in ("Bytes", "Int"):
        return None
    name = lhs.name
    if lhs.type.kind == "Int":
        if isinstance(rhs, Literal) and op in _ORDER:
            cmp, lit = _ORDER[op], rhs.value

            def int_cmp(f: Fields, ls: Lists) -> bool:
                v = f.get(name)
                return cmp(0 if v is None else v, lit)

            return int_cmp
        if isinstance(rhs, SetLiteral) and all(lo == hi for lo, hi in rhs.int_ranges):
            members = frozenset(lo for lo, _ in rhs.int_ranges)

            def int_in(f: Fields, ls: Lists) -> bool:
                v = f.get(name)
                return (0 if v is None else v) in members

            return int_in
        return None
    if isinstance(rhs, Pattern):
        test = rhs.compiled.test

        def pattern(f: Fields, ls: Lists) -> bool:
            v = f.get(name)
            if type(v) is str:
                try:
                    return test(v.encode())
                except UnicodeEncodeError:
                    # A lone surrogate in a value stands for its bytes (values.py).
                    return test(to_bytes(v))
            return test(b"" if v is None else to_bytes(v))

        return pattern
    if isinstance(rhs, SetLiteral):
        raw = rhs.strings
        texts = frozenset(t for t in (from_bytes(b) for b in raw) if isinstance(t, str))
        empty_in = b"" in raw
        if len(texts) < len(raw):
            # A member that is not UTF-8 can still equal a str holding a lone surrogate.
            return None

        def str_in(f: Fields, ls: Lists) -> bool:
            v = f.get(name)
            if type(v) is str:
                return v in texts
            return empty_in if v is None else to_bytes(v) in raw

        return str_in
    if not isinstance(rhs, Literal):
        return None
    raw = rhs.value
    text = from_bytes(raw)
    if not isinstance(text, str):
        return None
    if op == "contains":
        empty = text == ""

        def str_contains(f: Fields, ls: Lists) -> bool:
            v = f.get(name)
            if type(v) is str:
                return text in v
            return empty if v is None else raw in to_bytes(v)

        return str_contains
    cmp = _ORDER[op]
    empty_result = cmp("", text)

    def str_cmp(f: Fields, ls: Lists) -> bool:
        v = f.get(name)
        if type(v) is str:
            return cmp(v, text)
        return empty_result if v is None else cmp(to_bytes(v), raw)

    return str_cmp


def _test(node: Compare) -> Test:
    """A predicate ``test(value, fields, lists)`` for a non-missing left value."""
    kind = node.lhs.type.kind
    op, rhs = node.op, node.rhs
    if isinstance(rhs, Pattern):
        test = rhs.compiled.test

        def pattern_test(v: Any, f: Fields, ls: Lists) -> bool:
            if type(v) is str:
                try:
                    return test(v.encode())
                except UnicodeEncodeError:
                    pass  # a lone surrogate: to_bytes gives the bytes it stands for
            return test(to_bytes(v))

        return pattern_test
    if isinstance(rhs, SetLiteral):
        return _set_test(kind, rhs)
    if isinstance(rhs, ListRef):
        return _list_test(kind, rhs.name)
    if isinstance(rhs, Literal):
        return _literal_test(kind, op, rhs.value)
    # Field-to-field (or function result) comparison.
    other = _value(rhs)
    cmp = _ORDER[op]

    def dynamic(v: Any, f: Fields, ls: Lists) -> bool:
        w = other(f, ls)
        if w is MISSING:
            return False
        if kind == "Ip":
            return cmp((v.version, int(v)), (w.version, int(w)))
        if kind == "Bytes" and type(v) is not type(w):
            v, w = to_bytes(v), to_bytes(w)
        return cmp(v, w)

    return dynamic


def _literal_test(kind: str, op: str, value: Any) -> Test:
    if kind == "Int":
        if op == "bitwise_and":
            return lambda v, f, ls: (v & value) != 0
        cmp = _ORDER[op]
        return lambda v, f, ls: cmp(v, value)
    if kind == "Ip":
        cmp = _ORDER[op]
        key = (value.version, int(value))
        return lambda v, f, ls: cmp((v.version, int(v)), key)
    # Bytes: compare as str when both sides are text (UTF-8 keeps order and substrings).
    raw: bytes = value
    decoded = from_bytes(raw)
    text = decoded if isinstance(decoded, str) else None
    if op == "contains":
        if text is None:
            return lambda v, f, ls: raw in to_bytes(v)
        return lambda v, f, ls: (text in v) if type(v) is str else (raw in to_bytes(v))
    cmp = _ORDER[op]
    if text is None:
        return lambda v, f, ls: cmp(to_bytes(v), raw)
    return lambda v, f, ls: cmp(v, text) if type(v) is str else cmp(to_bytes(v), raw)


def _set_test(kind: str, rhs: SetLiteral) -> Test:
    if kind == "Bytes":
        raw = rhs.strings
        texts = frozenset(t for t in (from_bytes(b) for b in raw) if isinstance(t, str))
        if len(texts) < len(raw):
            # Some member is not UTF-8: compare bytes (a str may hold a lone surrogate).
            return lambda v, f, ls: to_bytes(v) in raw
        return lambda v, f, ls: (v in texts) if type(v) is str else (to_bytes(v) in raw)
    if kind == "Int":
        singles = frozenset(lo for lo, hi in rhs.int_ranges if lo == hi)
        spans = tuple((lo, hi) for lo, hi in rhs.int_ranges if lo != hi)
        return lambda v, f, ls: v in singles or any(lo <= v <= hi for lo, hi in spans)
    ranges = [(lo.version, int(lo), int(hi)) for lo, hi in rhs.ip_ranges]
    singles_ip = frozenset(lo for lo, hi in rhs.ip_ranges if lo == hi)
    spans_ip = tuple(r for r in ranges if r[1] != r[2])
    return lambda v, f, ls: (
        v in singles_ip or any(ver == v.version and lo <= int(v) <= hi for ver, lo, hi in spans_ip)
    )


def _list_test(kind: str, name: str) -> Test:
    cache: dict[int, Any] = {}

    def prepared(lists: Lists) -> Any:
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

    def test(v: Any, f: Fields, ls: Lists) -> bool:
        items = prepared(ls)
        if items is None:
            return False
        if kind == "Ip":
            n = int(v)
            return any(ver == v.version and lo <= n <= hi for ver, lo, hi in items)
        if kind == "Int":
            return v in items
        return to_bytes(v) in items

    return test
