"""The fast per-request evaluator: one generated Python function per expression.

The closures of :mod:`compiler` cost a Python call per node. For the shapes a
firewall rule mostly has (a field compared with a literal or a set,
``and``/``or``/``xor``/``not``, ``lower``/``upper``/``len`` of a field,
``starts_with``/``ends_with``/``contains``, an IP against an address or a set
of networks, ``any``/``all`` over ``map["key"][*]``) this module writes one
flat function instead, whose common case is a dictionary look-up and a native
string or integer operation.

Safety: the expression text is untrusted. The generated code text holds only
names this module makes up (``_c0``, ``_v1``), operators and keywords; every
field name and literal reaches the function as a value bound in its globals,
never as code text (so rules of one shape share one compiled code object).
Exactness: each generated test handles a ``str`` value inline, where Python's
string operations give the engine's byte-wise answers; any other value
(``bytes``, an ``ipaddress`` object, an absent field) goes to the closure of
the same node, and any shape not listed above is that closure outright, so
functions added later keep working unchanged.

IP comparisons keep a bounded per-comparison cache from address text to the
comparison's answer; a miss parses dotted-quad IPv4 text in C (``inet_pton``)
and hands any other text to the closure. ``matches`` and ``wildcard`` first
test literal text every match must contain (regex_required.py).

    >>> from workbench.rules_language.parser import parse
    >>> fn = generate(parse('lower(http.host) eq "a.com" and ip.src in {192.0.2.0/24}'))
    >>> fn({"http.host": "A.com", "ip.src": "192.0.2.7"}), fn({"http.host": "A.com"})
    (True, False)
"""

from __future__ import annotations

import functools
import itertools
import operator
import socket
from collections.abc import Callable
from types import CodeType
from typing import Any

from .ast import (
    STAR,
    Call,
    Compare,
    Empty,
    FieldRef,
    Index,
    Literal,
    Logical,
    Node,
    Not,
    Pattern,
    SetLiteral,
)
from .compiler import Fn, compile_node, compile_test, compile_tree
from .regex_required import required_text
from .values import MISSING, from_bytes, to_bytes

Matches = Callable[..., bool]  # matches(fields, lists=None) -> bool

# Answers kept per IP comparison; address text longer than this is never kept.
IP_CACHE_ENTRIES = 8192
IP_CACHE_TEXT_MAX = 64

_PY_OPS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_ORDER = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}
# lower()/upper() touch ASCII letters only (as function_impls.ascii_lower/ascii_upper do).
_STR_LOWER = {c: c + 32 for c in range(0x41, 0x5B)}
_STR_UPPER = {c: c - 32 for c in range(0x61, 0x7B)}
_INLINE_SPANS = 8  # integer ranges tested inline; more go through any()


def generate(node: Node) -> Matches:
    """``matches(fields, lists=None) -> bool`` for a checked tree."""
    return generate_with_source(node)[0]


def generate_with_source(node: Node) -> tuple[Matches, str]:
    """The function and the code text it was made from (the text holds no literal)."""
    gen = _Generator()
    body = gen.boolean(node)
    if gen.covered == 0:
        # Nothing to gain: the closure tree itself, behind the public signature.
        body = f"{gen.const(compile_tree(node))}(fields, lists)"
    code = f"def matches(fields, lists=None):\n    return {body}\n"
    builtins = {f.__name__: f for f in (type, len, str, dict, list, any, all)}
    namespace: dict[str, Any] = {"__builtins__": builtins}
    namespace.update(gen.consts)
    try:
        compiled = _compile_code(code)
    except (SyntaxError, RecursionError, MemoryError):
        # Nesting deeper than Python's parser takes (the language allows depth 128).
        namespace["_tree"] = compile_tree(node)
        code = "def matches(fields, lists=None):\n    return _tree(fields, lists)\n"
        compiled = _compile_code(code)
    exec(compiled, namespace)  # noqa: S102 - the code holds no literal of the expression
    fn: Matches = namespace["matches"]
    return fn, code


@functools.lru_cache(maxsize=1024)
def _compile_code(code: str) -> CodeType:
    # The text holds no literal, so rules of one shape share one code object.
    return compile(code, "<rules expression>", "exec")


class _Generator:
    def __init__(self) -> None:
        self.consts: dict[str, Any] = {}
        self._names = itertools.count()
        self.covered = 0  # nodes written as code rather than as a closure call
        self._closures: dict[int, Fn] = {}

    def const(self, value: Any) -> str:
        name = f"_c{next(self._names)}"
        self.consts[name] = value
        return name

    def var(self) -> str:
        return f"_v{next(self._names)}"

    def closure(self, node: Node) -> Fn:
        """The node's closure, built once per generation."""
        found = self._closures.get(id(node))
        if found is None:
            found = self._closures[id(node)] = compile_node(node)
        return found

    def fallback(self, node: Node) -> str:
        return f"({self.const(self.closure(node))}(fields, lists) is True)"

    def boolean(self, node: Node) -> str:
        """A Python expression that is exactly True or False, as the closure's ``is True``."""
        if node.type.kind != "Bool" or node.each:
            return self.fallback(node)
        code: str | None = None
        if isinstance(node, Empty):
            code = "False"
        elif isinstance(node, Logical):
            parts = [f"({self.boolean(i)})" for i in node.items]
            joiner = {"and": " and ", "or": " or ", "xor": " ^ "}[node.op]
            code = joiner.join(parts)
        elif isinstance(node, Not):
            if isinstance(node.operand, FieldRef) and node.operand.type.kind == "Bool":
                code = f"not fields.get({self.const(node.operand.name)})"
            else:
                code = f"not ({self.boolean(node.operand)})"
        elif isinstance(node, FieldRef):
            code = f"not not fields.get({self.const(node.name)})"
        elif isinstance(node, Compare):
            code = self._compare(node)
        elif isinstance(node, Call):
            code = self._bool_call(node)
        if code is None:
            return self.fallback(node)
        self.covered += 1
        return code

    # -- string views ---------------------------------------------------------

    def _text_view(self, node: Node, v: str) -> tuple[str, str] | None:
        """(field name const, expression of the value when the field holds a ``str`` v)."""
        if isinstance(node, FieldRef) and node.type.kind == "Bytes" and not node.each:
            return self.const(node.name), v
        if (
            isinstance(node, Call)
            and not node.mapped
            and not node.each
            and node.name in ("lower", "upper", "len")
            and len(node.args) == 1
        ):
            inner = self._text_view(node.args[0], v)
            if inner is None or inner[1] != v:
                return None
            if node.name == "len":
                # The engine counts bytes: an ASCII str has as many as characters.
                nbytes = f"len({self.const(to_bytes)}({v}))"
                return inner[0], f"(len({v}) if {v}.isascii() else {nbytes})"
            table = self.const(_STR_LOWER if node.name == "lower" else _STR_UPPER)
            method = node.name
            return inner[0], f"({v}.{method}() if {v}.isascii() else {v}.translate({table}))"
        return None

    def _guarded(self, node: Node, name: str, v: str, fast: str) -> str:
        """``fast`` when the field holds a ``str``; the node's closure otherwise."""
        return f"({fast}) if type({v} := fields.get({name})) is str else {self.fallback(node)}"

    # -- comparisons ----------------------------------------------------------

    def _compare(self, node: Compare) -> str | None:
        if isinstance(node.lhs, FieldRef) and not node.lhs.each:
            kind = node.lhs.type.kind
            if kind == "Int":
                return self._int_compare(node, f"fields.get({self.const(node.lhs.name)})")
            if kind == "Ip":
                return self._ip_compare(node)
        v = self.var()
        view = self._text_view(node.lhs, v)
        if view is None:
            return None
        name, value = view
        if isinstance(node.rhs, Pattern):
            fast = self._pattern_prefilter(node, value)
        elif node.lhs.type.kind == "Int":
            fast = self._int_compare(node, value, default_zero=False)
        else:
            fast = self._text_compare(node, value)
        if fast is None:
            return None
        return self._guarded(node, name, v, fast)

    def _text_compare(self, node: Compare, value: str) -> str | None:
        rhs, op = node.rhs, node.op
        if isinstance(rhs, SetLiteral) and not rhs.int_ranges and not rhs.ip_ranges:
            texts = [from_bytes(b) for b in rhs.strings]
            if not all(isinstance(t, str) for t in texts):
                return None  # a member that is not UTF-8: the closure compares bytes
            return f"{value} in {self.const(frozenset(texts))}"
        if not isinstance(rhs, Literal) or not isinstance(rhs.value, bytes):
            return None
        text = from_bytes(rhs.value)
        if not isinstance(text, str):
            return None
        if op == "contains":
            return f"{self.const(text)} in {value}"
        if op in _PY_OPS:
            return f"{value} {_PY_OPS[op]} {self.const(text)}"
        return None

    def _any_all(self, node: Call) -> str | None:
        """``any(m["key"][*] op literal)``: the array walked in a generator, strings tested inline."""
        (arg,) = node.args
        if not isinstance(arg, Compare) or arg.type.kind != "Array":
            return None
        source = _header_elements(arg.lhs)
        if source is None:
            return None
        field, key = source
        fast = self._text_compare(arg, "_x")
        if fast is None:
            return None
        text_key, miss = from_bytes(key), self.const(MISSING)
        m, items = self.var(), self.var()
        test = f"(_x is not {miss} and {self.const(compile_test(arg))}(_x, fields, lists) is True)"
        walk = f"{node.name}(({fast}) if type(_x) is str else {test} for _x in {items})"
        lookup = (
            f"(False if ({items} := {m}.get({self.const(text_key)}, {miss})) is {miss} "
            f"and ({items} := {m}.get({self.const(key)}, {miss})) is {miss} "
            f"else ({walk}) if type({items}) is list else {self.fallback(node)})"
        )
        if node.name == "all":
            # all() of nothing is true: an absent key is not a shortcut to False there.
            lookup = f"({walk}) if type({items} := {m}.get({self.const(text_key)}, {miss})) is list else {self.fallback(node)}"
        return f"({lookup}) if type({m} := fields.get({self.const(field)})) is dict else {self.fallback(node)}"

    def _pattern_prefilter(self, node: Compare, value: str) -> str | None:
        """Literal text every match must hold, tested before the regex engine runs."""
        compiled = node.rhs.compiled
        if node.op != "matches":
            compiled = getattr(compiled, "regex", None)  # a wildcard's equivalent regex
        regex = getattr(compiled, "tree", None)
        if regex is None:
            return None
        checks = required_text(regex)
        if not checks:
            return None
        lowered, assigned = self.var(), False
        tests = []
        for where, text, folded in checks:
            subject = value
            if folded:
                subject = lowered if assigned else f"({lowered} := {value}.lower())"
                assigned = True
            lit = self.const(text)
            if where == "prefix":
                tests.append(f"{subject}.startswith({lit})")
            elif where == "suffix":
                tests.append(f"{subject}.endswith({lit})")
            else:
                tests.append(f"{lit} in {subject}")
        # The closure's own predicate on the value's bytes (a lone surrogate as its bytes).
        test = self.const(node.rhs.compiled.test)
        utf8, keep = self.const("utf-8"), self.const("surrogatepass")
        return " and ".join([*tests, f"{test}({value}.encode({utf8}, {keep}))"])

    def _int_compare(self, node: Compare, value: str, default_zero: bool = True) -> str | None:
        rhs, op = node.rhs, node.op
        if default_zero:
            v = self.var()
            value = f"(0 if ({v} := {value}) is None else {v})"
        if isinstance(rhs, Literal) and isinstance(rhs.value, int):
            if op == "bitwise_and":
                return f"({value} & {self.const(rhs.value)}) != 0"
            if op in _PY_OPS:
                return f"{value} {_PY_OPS[op]} {self.const(rhs.value)}"
            return None
        if not isinstance(rhs, SetLiteral) or rhs.strings or rhs.ip_ranges:
            return None
        singles = frozenset(lo for lo, hi in rhs.int_ranges if lo == hi)
        spans = [(lo, hi) for lo, hi in rhs.int_ranges if lo != hi]
        if not spans:
            return f"{value} in {self.const(singles)}"
        w = self.var()
        tests = [f"({w} := {value}) in {self.const(singles)}"]
        if len(spans) <= _INLINE_SPANS:
            tests += [f"{self.const(lo)} <= {w} <= {self.const(hi)}" for lo, hi in spans]
        else:
            tests.append(f"{self.const(_any_span(tuple(spans)))}({w})")
        return " or ".join(tests)

    def _ip_compare(self, node: Compare) -> str | None:
        rhs, op = node.rhs, node.op
        field = node.lhs.name if isinstance(node.lhs, FieldRef) else ""
        v4_texts = _ipv4_texts(rhs, op)
        if v4_texts is not None:
            # IPv4 text has one accepted spelling: equal text is the only equal address.
            v = self.var()
            return self._guarded(node, self.const(field), v, f"{v} in {self.const(v4_texts)}")
        if isinstance(rhs, Literal) and op in _ORDER:
            key = (rhs.value.version, int(rhs.value))
            cmp = _ORDER[op]
            if key[0] == 4:
                n4 = key[1]

                def test4(n: int) -> bool:
                    return bool(cmp(n, n4))

            else:

                def test4(n: int) -> bool:
                    return bool(cmp((4, n), key))

        elif isinstance(rhs, SetLiteral) and not rhs.strings and not rhs.int_ranges:
            singles = frozenset(int(lo) for lo, hi in rhs.ip_ranges if lo == hi and lo.version == 4)
            spans = tuple(
                (int(lo), int(hi)) for lo, hi in rhs.ip_ranges if lo != hi and lo.version == 4
            )

            def test4(n: int) -> bool:
                if n in singles:
                    return True
                for lo, hi in spans:
                    if lo <= n <= hi:
                        return True
                return False

        else:
            return None
        closure = self.closure(node)
        cache = _IpCache(test4, lambda text: closure({field: text}, None) is True)
        v = self.var()
        return self._guarded(node, self.const(field), v, f"{self.const(cache)}[{v}]")

    # -- functions answering true or false -------------------------------------

    def _bool_call(self, node: Call) -> str | None:
        if node.name in ("any", "all"):
            return self._any_all(node)
        if node.mapped or node.name not in ("starts_with", "ends_with", "contains"):
            return None
        if len(node.args) != 2 or not isinstance(node.args[1], Literal):
            return None
        raw = node.args[1].value
        text = from_bytes(raw) if isinstance(raw, bytes) else None
        if not isinstance(text, str):
            return None
        v = self.var()
        view = self._text_view(node.args[0], v)
        if view is None or node.args[0].type.kind != "Bytes":
            return None
        name, value = view
        part = self.const(text)
        fast = {
            "starts_with": f"{value}.startswith({part})",
            "ends_with": f"{value}.endswith({part})",
            "contains": f"{part} in {value}",
        }[node.name]
        return self._guarded(node, name, v, fast)


def _ipv4_texts(rhs: Any, op: str) -> frozenset[str] | None:
    """The texts of ``eq <IPv4>`` or ``in {IPv4 addresses}`` (no networks), else None."""
    if isinstance(rhs, Literal) and op == "eq":
        addresses = [rhs.value]
    elif isinstance(rhs, SetLiteral) and rhs.ip_ranges and not rhs.strings and not rhs.int_ranges:
        addresses = [lo for lo, hi in rhs.ip_ranges if lo == hi]
        if len(addresses) < len(rhs.ip_ranges):
            return None
    else:
        return None
    if not all(a.version == 4 and ipv4_int(str(a)) == int(a) for a in addresses):
        return None
    return frozenset(str(a) for a in addresses)


def _header_elements(node: Node) -> tuple[str, bytes] | None:
    """(field, key) for ``field["key"][*]`` over a map of string arrays."""
    if not (isinstance(node, Index) and node.key is STAR and node.type.kind == "Bytes"):
        return None
    base = node.base
    if not (isinstance(base, Index) and isinstance(base.key, bytes) and not base.each):
        return None
    field = base.base
    if not (isinstance(field, FieldRef) and not field.each and field.type.kind == "Map"):
        return None
    return field.name, base.key


def _any_span(spans: tuple[tuple[int, int], ...]) -> Callable[[int], bool]:
    return lambda v: any(lo <= v <= hi for lo, hi in spans)


class _IpCache(dict[str, bool]):
    """Address text to one comparison's answer, bounded.

    At most ``IP_CACHE_ENTRIES`` answers: when full it starts again empty, so
    every step is O(1) and a working set up to that size always hits.
    """

    __slots__ = ("_test4", "_slow")

    def __init__(self, test4: Callable[[int], bool], slow: Callable[[str], bool]) -> None:
        super().__init__()
        self._test4 = test4
        self._slow = slow

    def __missing__(self, text: str) -> bool:
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


__all__ = ["Matches", "generate", "generate_with_source", "ipv4_int"]
