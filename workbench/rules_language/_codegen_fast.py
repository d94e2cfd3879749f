"""Inline code for the shapes firewall rules mostly have, a ``str`` value tested natively.

:mod:`.codegen` writes every node as generic code. For a field compared with
a literal or a set, ``lower``/``upper``/``len`` of a field, ``starts_with``/
``ends_with``/``contains``, ``matches``/``wildcard``, an IP against an address
or a set of networks, and ``any``/``all`` over ``map["key"][*]`` or an integer
array, this mixin writes a test whose common case is one dictionary look-up
and one native string or integer operation, guarded by the value's type: a
``str`` (or a ``list`` for arrays) is tested inline, where Python's string
operations give the engine's byte-wise answers; any other value (``bytes``, an
``ipaddress`` object, an absent field) takes the generic code of the same node
(``slow``), so the answers are the generic code's by construction.

IP comparisons keep a bounded per-comparison cache from address text to the
comparison's answer (:class:`~.codegen_runtime.IpCache`). ``matches`` and
``wildcard`` first test literal text every match must contain
(_regex_required.py).

    >>> from workbench.rules_language.codegen import generate_with_source
    >>> from workbench.rules_language.parser import parse
    >>> code = generate_with_source(parse('http.host eq "a.com"'))[1]
    >>> code.splitlines()[1].split(" else ")[0].strip()  # then the generic code
    'return (_v0 == _c2) if type(_v0 := fields.get(_c1)) is str'
"""

from __future__ import annotations

from typing import Any

from ._regex_required import required_text
from .ast import STAR, Call, Compare, FieldRef, Index, Literal, Node, Pattern, SetLiteral
from .codegen_runtime import ORDER, IpCache, any_span, ip_predicate, ip_text_answer, ipv4_int
from .values import MISSING, from_bytes, to_bytes

PY_OPS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
# lower()/upper() touch ASCII letters only (as function_impls.ascii_lower/ascii_upper do).
_STR_LOWER = {c: c + 32 for c in range(0x41, 0x5B)}
_STR_UPPER = {c: c - 32 for c in range(0x61, 0x7B)}
INLINE_SPANS = 8  # integer ranges tested inline; more go through any_span()


class Specialised:
    """The inline shapes; :class:`~.codegen._Generator` provides the names and ``slow``."""

    def const(self, value: Any) -> str:
        """A made-up global name bound to ``value``."""
        raise NotImplementedError

    def var(self) -> str:
        """A made-up local name."""
        raise NotImplementedError

    def slow(self, node: Node) -> str:
        """The generic code of a node answering true or false."""
        raise NotImplementedError

    def specialised(self, node: Node) -> str | None:
        """Inline code for ``node`` (exactly True or False), or None when it has no such shape."""
        if isinstance(node, Compare):
            return self._compare(node)
        if isinstance(node, Call):
            return self._bool_call(node)
        return None

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

    def _guarded(self, node: Node, name: str, v: str, fast: str, kind: str = "str") -> str:
        """``fast`` when the field holds a ``str`` (or ``kind``); the generic code otherwise."""
        return f"({fast}) if type({v} := fields.get({name})) is {kind} else ({self.slow(node)})"

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
            fast: str | None = self._pattern(node, value)
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
                return None  # a member that is not UTF-8: the generic code compares bytes
            return f"{value} in {self.const(frozenset(texts))}"
        if not isinstance(rhs, Literal) or not isinstance(rhs.value, bytes):
            return None
        text = from_bytes(rhs.value)
        if not isinstance(text, str):
            return None
        if op == "contains":
            return f"{self.const(text)} in {value}"
        if op in PY_OPS:
            return f"{value} {PY_OPS[op]} {self.const(text)}"
        return None

    def _pattern(self, node: Compare, value: str) -> str:
        """The pattern's test, after literal text every match must hold (when there is some)."""
        compiled = node.rhs.compiled
        if node.op != "matches":
            compiled = getattr(compiled, "regex", None)  # a wildcard's equivalent regex
        regex = getattr(compiled, "tree", None)
        checks = required_text(regex) if regex is not None else []
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
        # The pattern's own test on the value's bytes (a lone surrogate as its bytes).
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
            if op in PY_OPS:
                return f"{value} {PY_OPS[op]} {self.const(rhs.value)}"
            return None
        if not isinstance(rhs, SetLiteral) or rhs.strings or rhs.ip_ranges:
            return None
        return self.int_in(rhs, value)

    def int_in(self, rhs: SetLiteral, value: str) -> str:
        """``value in {…}`` for a set of integers and integer ranges."""
        singles = frozenset(lo for lo, hi in rhs.int_ranges if lo == hi)
        spans = [(lo, hi) for lo, hi in rhs.int_ranges if lo != hi]
        if not spans:
            return f"{value} in {self.const(singles)}"
        w = self.var()
        tests = [f"({w} := {value}) in {self.const(singles)}"]
        if len(spans) <= INLINE_SPANS:
            tests += [f"{self.const(lo)} <= {w} <= {self.const(hi)}" for lo, hi in spans]
        else:
            tests.append(f"{self.const(any_span(tuple(spans)))}({w})")
        return " or ".join(tests)

    def _ip_compare(self, node: Compare) -> str | None:
        rhs, op = node.rhs, node.op
        field = node.lhs.name if isinstance(node.lhs, FieldRef) else ""
        v4_texts = _ipv4_texts(rhs, op)
        if v4_texts is not None:
            # IPv4 text has one accepted spelling: equal text is the only equal address.
            v = self.var()
            return self._guarded(node, self.const(field), v, f"{v} in {self.const(v4_texts)}")
        if isinstance(rhs, Literal) and op in ORDER:
            key = (rhs.value.version, int(rhs.value))
            cmp = ORDER[op]
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
        cache = IpCache(test4, ip_text_answer(ip_predicate(rhs, op)))
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

    def _any_all(self, node: Call) -> str | None:
        (arg,) = node.args
        if not isinstance(arg, Compare) or arg.type.kind != "Array":
            return None
        if (
            node.name == "any"
            and arg.op == "eq"
            and isinstance(arg.rhs, Literal)
            and isinstance(arg.lhs, Index)
            and arg.lhs.key is STAR
            and isinstance(arg.lhs.base, FieldRef)
            and arg.lhs.base.type.kind == "Array"
            and arg.lhs.type.kind == "Int"
            and not arg.lhs.base.each
        ):
            # any(array[*] eq N): ``in`` tests each item with ==, as the generic walk does.
            v = self.var()
            fast = f"{self.const(arg.rhs.value)} in {v}"
            return self._guarded(node, self.const(arg.lhs.base.name), v, fast, kind="list")
        return self._any_all_headers(node, arg)

    def _any_all_headers(self, node: Call, arg: Compare) -> str | None:
        """``any(m["key"][*] op literal)``: the array walked in a generator, ``str`` inline."""
        source = _header_elements(arg.lhs)
        if source is None:
            return None
        field, key = source
        x = self.var()
        fast = self._text_compare(arg, x)
        if fast is None:
            return None
        text_key, miss = from_bytes(key), self.const(MISSING)
        m, items = self.var(), self.var()
        each = f"({fast}) if type({x}) is str else {self.item_test(arg, x)}"
        walk = f"{node.name}({each} for {x} in {items})"
        slow = self.slow(node)
        lookup = (
            f"(False if ({items} := {m}.get({self.const(text_key)}, {miss})) is {miss} "
            f"and ({items} := {m}.get({self.const(key)}, {miss})) is {miss} "
            f"else ({walk}) if type({items}) is list else ({slow}))"
        )
        if node.name == "all":
            # all() of nothing is true: an absent key is not a shortcut to False there.
            lookup = (
                f"({walk}) if type({items} := {m}.get({self.const(text_key)}, {miss})) is list "
                f"else ({slow})"
            )
        return f"({lookup}) if type({m} := fields.get({self.const(field)})) is dict else ({slow})"

    def item_test(self, node: Compare, x: str) -> str:
        """The generic test of one element ``x`` of a ``[*]`` comparison (exactly True or False)."""
        raise NotImplementedError


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
