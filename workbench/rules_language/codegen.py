"""The per-request evaluator: one generated Python function per expression.

A checked tree becomes the text of a function ``matches(fields, lists=None)``,
compiled once; evaluating a request is one call of it. Every node kind of the
tree (:mod:`.ast`) is written as code here: ``and``/``or``/``xor``/``not``,
fields of every type, literals, indexes (``[0]``, ``["key"]``, ``[*]``),
function calls (the functions of :mod:`.function_impls`, bound as values),
comparisons with a literal, a set, a named list, a pattern or another value,
and the element-wise forms over ``[*]``. The shapes firewall rules mostly have
get an inline ``str`` test first (:mod:`._codegen_fast`); the parts that are
more than one native operation call the helpers of :mod:`.codegen_runtime`.

Safety: the expression text is untrusted. The generated code text holds only
names this module makes up (``_c0``, ``_v1``, ``_f2``), operators and
keywords; every field name, literal and helper reaches the function as a value
bound in its globals, never as code text (so rules of one shape share one
compiled code object). A subtree nested deeper than :data:`NEST` levels
becomes a function of its own, so the deepest expression the language allows
stays within what Python's parser takes.

Semantics kept from the platform: string comparison is case-sensitive and
byte-wise; a missing value (absent map key, index out of range, failed
lookup) makes every comparison false, ``ne`` included; IPv4 and IPv6 never
compare equal or ordered; ``any`` of nothing is false and ``all`` of nothing
is true. A field the request does not carry reads as its type's empty value
(empty string, 0, false, empty array or map); an absent IP is missing.

    >>> from workbench.rules_language.parser import parse
    >>> fn = generate(parse('lower(http.host) eq "a.com" and ip.src in {192.0.2.0/24}'))
    >>> fn({"http.host": "A.com", "ip.src": "192.0.2.7"}), fn({"http.host": "A.com"})
    (True, False)
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from types import CodeType
from typing import Any

from . import codegen_runtime as rt
from ._codegen_fast import PY_OPS, Specialised
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
from .values import MISSING, from_bytes, to_bytes

Matches = Callable[..., bool]  # matches(fields, lists=None) -> bool

NEST = 12  # node levels written inline before a subtree becomes a function of its own
_BUILTINS = {f.__name__: f for f in (type, len, str, dict, list, any, all)}


def generate(node: Node) -> Matches:
    """``matches(fields, lists=None) -> bool`` for a checked tree."""
    return generate_with_source(node)[0]


def generate_with_source(node: Node, *, inline: bool = True) -> tuple[Matches, str]:
    """The function and the code text it was made from (the text holds no literal).

    ``inline=False`` leaves out the inline shapes of :mod:`._codegen_fast`: every
    node is its generic code (the tests check both give the same answers).
    """
    gen = _Generator(inline)
    body = gen.boolean(node)
    code = "".join(gen.defs) + f"def matches(fields, lists=None):\n    return {body}\n"
    namespace: dict[str, Any] = {"__builtins__": _BUILTINS, **gen.consts}
    exec(_compile_code(code), namespace)  # noqa: S102 - the code holds no literal of the expression
    fn: Matches = namespace["matches"]
    return fn, code


@functools.lru_cache(maxsize=1024)
def _compile_code(code: str) -> CodeType:
    # The text holds no literal, so rules of one shape share one code object.
    return compile(code, "<rules expression>", "exec")


class _Generator(Specialised):
    def __init__(self, inline: bool = True) -> None:
        self.consts: dict[str, Any] = {}
        self.defs: list[str] = []
        self._names = itertools.count()
        self._depth = 0
        self._inline = inline
        self._in_iterable = False

    def const(self, value: Any) -> str:
        name = f"_c{next(self._names)}"
        self.consts[name] = value
        return name

    def var(self) -> str:
        return f"_v{next(self._names)}"

    def _function(self, code: str) -> str:
        """A call of a new generated function returning ``code``."""
        name = f"_f{next(self._names)}"
        self.defs.append(f"def {name}(fields, lists):\n    return {code}\n")
        return f"{name}(fields, lists)"

    def _nested(self, write: Callable[[Node], str], node: Node) -> str:
        if self._depth >= NEST:
            # Deep enough: the subtree starts a function of its own (Python's parser has limits).
            saved, self._depth = self._depth, 0
            code = self._function(write(node))
            self._depth = saved
            return code
        self._depth += 1
        try:
            return write(node)
        finally:
            self._depth -= 1

    def boolean(self, node: Node) -> str:
        """Code that is exactly True or False: the node's value ``is True``."""
        return self._nested(self._boolean, node)

    def value(self, node: Node) -> str:
        """Code for the node's value (MISSING when missing, a list for an array)."""
        return self._nested(self._value, node)

    def iterable(self, node: Node) -> str:
        """The node's value as a comprehension's iterable, where Python takes no ``:=``."""
        saved, self._in_iterable = self._in_iterable, True
        try:
            code = self.value(node)
        finally:
            self._in_iterable = saved
        return self._function(code) if ":=" in code else code

    # -- true or false ------------------------------------------------------------

    def _boolean(self, node: Node) -> str:
        if node.type.kind != "Bool" or node.each:
            return f"({self.value(node)}) is True"
        if self._inline:
            code = self.specialised(node)
            if code is not None:
                return code
        return self.slow(node)

    def slow(self, node: Node) -> str:
        """The generic code of a Bool node (what the inline shapes fall back to)."""
        if isinstance(node, Empty):
            return "False"
        if isinstance(node, Logical):
            joiner = {"and": " and ", "or": " or ", "xor": " ^ "}[node.op]
            return joiner.join(f"({self.boolean(i)})" for i in node.items)
        if isinstance(node, Not):
            operand = node.operand
            if isinstance(operand, FieldRef) and operand.type.kind == "Bool":
                return f"not fields.get({self.const(operand.name)})"
            return f"not ({self.boolean(operand)})"
        if isinstance(node, FieldRef):
            return f"not not fields.get({self.const(node.name)})"
        if isinstance(node, Compare):
            v, miss = self.var(), self.const(MISSING)
            return f"({v} := {self.value(node.lhs)}) is not {miss} and ({self._test(node, v)})"
        if isinstance(node, Call) and node.name in ("any", "all"):
            return self._value(node)
        return f"({self.value(node)}) is True"

    # -- values ---------------------------------------------------------------------

    def _value(self, node: Node) -> str:
        if isinstance(node, Compare | Logical | Not | Empty):
            return self._array(node) if node.type.kind == "Array" else self._boolean(node)
        if isinstance(node, FieldRef):
            name = self.const(node.name)
            if node.type.kind == "Ip":
                return f"{self.const(rt.ip_value)}(fields.get({name}))"
            if node.type.kind == "Bool":
                return f"(not not fields.get({name}))"
            default = self.const(default_value(node.type))
            if self._in_iterable:
                # Two look-ups, no ``:=``: the iterable needs no function of its own.
                return f"({default} if fields.get({name}) is None else fields.get({name}))"
            v = self.var()
            return f"({default} if ({v} := fields.get({name})) is None else {v})"
        if isinstance(node, Literal):
            value = node.value
            return self.const(from_bytes(value) if isinstance(value, bytes) else value)
        if isinstance(node, Index):
            return self._index(node)
        if isinstance(node, Call):
            return self._call(node)
        raise TypeError(f"cannot evaluate {type(node).__name__}")

    def _index(self, node: Index) -> str:
        key = node.key
        if key is STAR:
            helper = rt.elements_each if node.base.each else rt.elements
            return f"{self.const(helper)}({self.value(node.base)})"
        if isinstance(key, int):
            pick, args = self.const(rt.pick_index), self.const(key)
        else:
            pick, args = (
                self.const(rt.pick_key),
                f"{self.const(from_bytes(key))}, {self.const(key)}",
            )
        if node.base.each:
            x = self.var()
            return f"[{pick}({x}, {args}) for {x} in {self.iterable(node.base)}]"
        return f"{pick}({self.value(node.base)}, {args})"

    def _call(self, node: Call) -> str:
        if node.name in ("any", "all"):
            (arg,) = node.args
            x = self.var()
            return f"{node.name}({x} is True for {x} in {self.iterable(arg)})"
        if node.impl is None:
            raise TypeError(f"{node.name}() was not built by the parser")
        impl = self.const(node.impl)
        if node.mapped:
            x, miss = self.var(), self.const(MISSING)
            rest = "".join(f", {self.value(a)}" for a in node.args[1:])
            first = self.iterable(node.args[0])
            return f"[{miss} if {x} is {miss} else {impl}({x}{rest}) for {x} in {first}]"
        return f"{impl}({', '.join(self.value(a) for a in node.args)})"

    def _array(self, node: Compare | Logical | Not | Empty) -> str:
        """An array of booleans: a ``[*]`` comparison, or ``not``/logic of such arrays."""
        x = self.var()
        if isinstance(node, Not):
            return f"[{x} is not True for {x} in {self.iterable(node.operand)}]"
        if isinstance(node, Logical):
            columns = ", ".join(self.value(i) for i in node.items)
            return f"{self.const(rt.elementwise(node.op))}([{columns}])"
        assert isinstance(node, Compare)
        return f"[{self.item_test(node, x)} for {x} in {self.iterable(node.lhs)}]"

    # -- comparisons ------------------------------------------------------------------

    def item_test(self, node: Compare, x: str) -> str:
        return f"({x} is not {self.const(MISSING)} and ({self._test(node, x)}))"

    def _test(self, node: Compare, x: str) -> str:
        """The comparison's test of the present value ``x``."""
        kind, op, rhs = node.lhs.type.kind, node.op, node.rhs
        if isinstance(rhs, Pattern):
            test = self.const(rhs.compiled.test)
            utf8, keep, raw = self.const("utf-8"), self.const("surrogatepass"), self.const(to_bytes)
            # A str's bytes (a lone surrogate as the bytes it stands for); bytes as they are.
            return f"{test}({x}.encode({utf8}, {keep}) if type({x}) is str else {raw}({x}))"
        if isinstance(rhs, ListRef):
            return f"{self.const(rt.list_test(kind, rhs.name))}({x}, lists)"
        if isinstance(rhs, SetLiteral):
            if kind == "Int":
                return self.int_in(rhs, x)
            if kind == "Ip":
                return f"{self.const(rt.ip_predicate(rhs))}({x})"
            return self._text_test(x, "in", rhs.strings)
        if isinstance(rhs, Literal):
            if kind == "Int":
                if op == "bitwise_and":
                    return f"({x} & {self.const(rhs.value)}) != 0"
                return f"{x} {PY_OPS[op]} {self.const(rhs.value)}"
            if kind == "Ip":
                return f"{self.const(rt.ip_predicate(rhs, op))}({x})"
            return self._text_test(x, op, rhs.value)
        # Compared with another value of the request.
        w = self.var()
        other = self.value(rhs)
        dynamic = self.const(rt.dynamic_test(kind, op))
        return f"({w} := {other}) is not {self.const(MISSING)} and {dynamic}({x}, {w})"

    def _text_test(self, x: str, op: str, raw: Any) -> str:
        """A string value against text: as ``str`` when both are text (UTF-8 keeps order and
        substrings), as bytes otherwise."""
        as_bytes = f"{self.const(to_bytes)}({x})"
        is_str = f"type({x}) is str"
        if op == "in":
            texts = [from_bytes(b) for b in raw]
            if not all(isinstance(t, str) for t in texts):
                # Some member is not UTF-8: compare bytes (a str may hold a lone surrogate).
                return f"{as_bytes} in {self.const(raw)}"
            text_set = self.const(frozenset(texts))
            return f"({x} in {text_set}) if {is_str} else ({as_bytes} in {self.const(raw)})"
        text = from_bytes(raw)
        if op == "contains":
            if not isinstance(text, str):
                return f"{self.const(raw)} in {as_bytes}"
            return f"({self.const(text)} in {x}) if {is_str} else ({self.const(raw)} in {as_bytes})"
        py = PY_OPS[op]
        if not isinstance(text, str):
            return f"{as_bytes} {py} {self.const(raw)}"
        return f"({x} {py} {self.const(text)}) if {is_str} else ({as_bytes} {py} {self.const(raw)})"


__all__ = ["NEST", "Matches", "generate", "generate_with_source"]
