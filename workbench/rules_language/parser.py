"""Parser and type checker: text in, typed syntax tree out, or the engine's error.

The parser reads the source directly (no token stream) so that every error
lands where the platform's engine puts it: expected-token errors point at the
current position and run to the end of the input, literal errors cover the
literal, type errors cover the operator or argument.

    >>> tree = parse('http.request.uri.path contains "/admin"')
    >>> tree.op, tree.lhs.name, tree.rhs.value
    ('contains', 'http.request.uri.path', b'/admin')
"""

from __future__ import annotations

import re
from typing import Any

from workbench.core.text import utf8_problem

from ._errors import ExpressionError, ParseFail
from ._literals import LiteralLexer
from ._scheme import Scheme, get_scheme
from ._wildcard import WildcardError
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
)
from .functions import ALTERNATE_ORDERS, FUNCTIONS, FunctionDef, type_accepts
from .regex import RegexSyntaxError, ReplacementError
from .types import ARRAY, BOOL, BYTES, INT, Type

#: The longest expression the language takes, in characters (filters, rules, custom rules).
MAX_LENGTH = 4096
MAX_DEPTH = 128
_LOGICAL = (
    ("&&", "and"),
    ("||", "or"),
    ("^^", "xor"),
    ("and", "and"),
    ("xor", "xor"),
    ("or", "or"),
)
_PRECEDENCE = {"or": 1, "xor": 2, "and": 3}
_COMPARISON = (
    ("strict wildcard", "strict wildcard"),
    ("bitwise_and", "bitwise_and"),
    ("contains", "contains"),
    ("wildcard", "wildcard"),
    ("matches", "matches"),
    ("==", "eq"),
    ("!=", "ne"),
    ("<=", "le"),
    (">=", "ge"),
    ("eq", "eq"),
    ("ne", "ne"),
    ("lt", "lt"),
    ("le", "le"),
    ("gt", "gt"),
    ("ge", "ge"),
    ("in", "in"),
    ("<", "lt"),
    (">", "gt"),
    ("~", "matches"),
    ("&", "bitwise_and"),
)
_ORDERING = {"eq", "ne", "lt", "le", "gt", "ge"}
#: ``any(...)`` and ``all(...)``: logical quantifiers in the engine, not functions.
QUANTIFIERS = ("any", "all")
_QUANTIFIER_CALL = re.compile(r"(?:any|all)[ \r\n]*\(")


def _field_char(c: str) -> bool:
    """A character only a name has (no digit, no hex letter): the engine's cue for a field."""
    return (c.isascii() and c.isalnum() and c not in "0123456789abcdefABCDEF") or c == "_"


def _name_char(c: str) -> bool:
    return (c.isascii() and c.isalnum()) or c == "_"


def _field_start(c: str, c2: str, c3: str) -> bool:
    """Whether an argument starting ``c c2 c3`` is surely a field or call (the engine's test)."""
    return (
        _field_char(c)
        or (_name_char(c) and bool(c2) and _field_char(c2))
        or (_name_char(c) and bool(c2) and _name_char(c2) and bool(c3) and _field_char(c3))
    )


OPERATORS_BY_TYPE = {
    "Bytes": _ORDERING | {"contains", "matches", "wildcard", "strict wildcard", "in"},
    "Int": _ORDERING | {"in", "bitwise_and"},
    "Ip": _ORDERING | {"in"},
}


class _Parser(LiteralLexer):
    def __init__(self, source: str, scheme: Scheme) -> None:
        self.src = source
        self.n = len(source)
        self.pos = 0
        self.depth = 0
        self.scheme = scheme

    # -- small helpers --------------------------------------------------------
    def enter(self, start: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.rest(f"maximum nesting depth exceeded (limit: {MAX_DEPTH})", start)

    # -- logical layer ----------------------------------------------------------
    def logical(self, min_prec: int) -> Node:
        left = self.unary()
        while True:
            save = self.pos
            self.ws()
            op = self.match_logical()
            if op is None or _PRECEDENCE[op[1]] < min_prec:
                self.pos = save
                return left
            self.pos += len(op[0])
            right = self.logical(_PRECEDENCE[op[1]] + 1)
            left = self.combine(op[1], left, right)

    def match_logical(self) -> tuple[str, str] | None:
        for text, name in _LOGICAL:
            if self.src.startswith(text, self.pos):
                return text, name
        return None

    def combine(self, op: str, left: Node, right: Node) -> Node:
        if left.type != right.type:
            odd = right if left.type == BOOL else left
            raise ParseFail(
                f"expected value of type {BOOL}, but got {odd.type}", odd.start, odd.end
            )
        if isinstance(left, Logical) and left.op == op and not left.grouped:
            left.items.append(right)
            left.end = right.end
            return left
        return Logical(left.start, right.end, left.type, op=op, items=[left, right])

    def negation(self) -> int:
        """The width of ``not`` or ``!`` here (``!`` even before ``=``, as the engine reads it),
        else 0."""
        return 3 if self.src.startswith("not", self.pos) else 1 if self.peek() == "!" else 0

    def unary(self) -> Node:
        self.ws()
        starts = []
        while True:
            width = self.negation()
            if not width:
                break
            start = self.pos
            self.enter(start)
            starts.append(start)
            self.pos += width
            self.ws()
        node = self.primary()
        for start in reversed(starts):
            node = Not(start, node.end, node.type, operand=node)
            self.depth -= 1
        return node

    def primary(self) -> Node:
        self.ws()
        if self.peek() == "(":
            return self.group()
        return self.comparison()

    def close(self) -> None:
        """The ``)`` that ends a group or a call (the nesting it opened ends too)."""
        if self.peek() != ")":
            raise self.rest('expected literal ")"')
        self.pos += 1
        self.depth -= 1

    def group(self) -> Node:
        """``( expression )`` at the current position."""
        self.enter(self.pos)
        self.pos += 1
        node = self.logical(0)
        self.ws()
        self.close()
        if isinstance(node, Logical):
            node.grouped = True  # a parenthesised chain is not extended by later operators
        return node

    # -- comparisons ---------------------------------------------------------------
    def comparison(self, lhs: Node | None = None) -> Node:
        lhs = self.value_expr() if lhs is None else lhs
        if lhs.type == BOOL or (lhs.type == ARRAY(BOOL) and not lhs.each):
            if lhs.each:
                lhs.type, lhs.each = ARRAY(BOOL), False
            return lhs
        self.ws()
        found = self.comparison_op()
        if found is None:
            raise self.rest("expected ComparisonOp")
        op_start = self.pos
        text, op = found
        self.pos += len(text)
        t = lhs.type
        if t.is_compound or op not in OPERATORS_BY_TYPE.get(t.kind, ()):
            raise ParseFail(
                f"cannot perform this operation on type {t.debug()}", op_start, self.pos
            )
        rhs = self.rhs(op, t)
        rtype = ARRAY(BOOL) if lhs.each else BOOL
        end = getattr(rhs, "end", self.pos)
        return Compare(lhs.start, end, rtype, lhs=lhs, op=op, rhs=rhs)

    def comparison_op(self) -> tuple[str, str] | None:
        """The comparison operator here as ``(text, name)``, or None (nothing consumed)."""
        return next(((t, c) for t, c in _COMPARISON if self.src.startswith(t, self.pos)), None)

    def rhs(self, op: str, t: Type) -> Any:
        self.ws()
        if op == "in":
            if self.peek() == "{":
                return self.set_literal(t)
            if self.peek() == "$":
                return self.list_ref()
            raise self.rest('expected literal "{"')
        if op == "matches":
            return self.regex_literal()
        if op in ("wildcard", "strict wildcard"):
            return self.wildcard_literal(case_sensitive=op == "strict wildcard")
        if op == "bitwise_and":
            return self.int_literal()
        if op == "contains":
            return self.bytes_value()
        return self.value_or_literal(t)

    def value_or_literal(self, t: Type) -> Node:
        c = self.peek()
        raw_string = c == "r" and self.peek(1) in ('"', "#")
        if raw_string:  # a raw string that does not lex is read as the name "r", as the engine does
            save = self.pos
            try:
                return self.literal_of(t)
            except ParseFail:
                raise ParseFail("unknown identifier", save, save + 1) from None
        if (c.isalpha() or c == "_") and not raw_string:
            save = self.pos
            try:
                node = self.value_expr()
            except ParseFail as err:
                if err.reason != "unknown identifier" or err.start != save:
                    raise
                # Not a field: a literal that starts with a letter (fe80::1, ab:cd)?
                self.pos = save
                try:
                    return self.literal_of(t)
                except ParseFail:
                    raise err from None
            if node.each or node.type != t:
                shown = ARRAY(node.type) if node.each else node.type
                raise ParseFail(
                    f"expected value of type {t}, but got {shown}", node.start, node.end
                )
            return node
        return self.literal_of(t)

    def literal_of(self, t: Type) -> Literal:
        if t == BYTES:
            return self.bytes_value()
        if t == INT:
            return self.int_literal()
        return self.ip_literal()

    # -- values: fields, calls, indexes ----------------------------------------------
    def identifier(self) -> str:
        start = self.pos
        while True:
            part = self.pos
            while self.pos < self.n and (self.src[self.pos].isalnum() or self.src[self.pos] == "_"):
                self.pos += 1
            if self.pos == part:
                raise self.rest("expected identifier character")
            if self.peek() == "." and self.peek(1) != ".":
                self.pos += 1
                continue
            if self.peek() == ".":
                self.pos += 1
                raise self.rest("expected identifier character")
            return self.src[start : self.pos]

    def value_expr(self) -> Node:
        self.ws()
        start = self.pos
        name = self.identifier()
        end = self.pos
        node: Node
        save = self.pos
        self.ws()
        if name in FUNCTIONS and (self.peek() == "(" or name not in QUANTIFIERS):
            if self.peek() != "(":  # a function's name is a call: the engine expects "(" next
                raise self.rest('expected literal "("')
            node = self.call(FUNCTIONS[name], start)
        else:
            self.pos = save
            t = self.scheme.field_type(name)
            if t is None:
                raise ParseFail("unknown identifier", start, end)
            node = FieldRef(start, end, t, name=name)
        while self.peek() == "[":
            node = self.index(node)
        return node

    def index(self, base: Node) -> Node:
        start = self.pos
        self.pos += 1
        self.ws()
        key: int | bytes | None
        c = self.peek()
        if c == "*":
            key = STAR
            self.pos += 1
        elif c == '"':
            key = self.quoted_string()
        else:  # an integer as the engine reads one (0x1 too), then it must fit a u32
            at = self.pos
            try:
                number: int = self.int_literal().value
            except ParseFail:
                raise self.rest(
                    'expected literal "expected quoted utf8 string or positive integer"', at
                ) from None
            key = number
            if not 0 <= number <= 0xFFFFFFFF:
                raise self.rest('expected literal "expected positive integer as index"', at)
        self.ws()
        if self.peek() != "]":
            raise self.rest('expected literal "]"')
        self.pos += 1
        t = base.type
        if key is STAR:
            if not t.is_compound:
                raise ParseFail(
                    f"cannot access index MapEach for type {t.debug()}", start, self.pos
                )
            return Index(base.start, self.pos, t.element_type, each=True, base=base, key=STAR)
        if isinstance(key, int):
            if t.kind != "Array":
                raise ParseFail(
                    f"cannot access index ArrayIndex({key}) for type {t.debug()}", start, self.pos
                )
        elif t.kind != "Map":
            shown = key.decode("utf-8", "replace")
            raise ParseFail(
                f'cannot access index MapKey("{shown}") for type {t.debug()}', start, self.pos
            )
        return Index(base.start, self.pos, t.element_type, each=base.each, base=base, key=key)

    def call(self, fdef: FunctionDef, start: int) -> Call:
        """A call's arguments as the engine reads them: each one, then ``,`` or ``)``."""
        self.enter(start)
        self.pos += 1  # (
        self.ws()
        if fdef.name in QUANTIFIERS:
            return self.quantifier(fdef, start)
        args: list[Node] = []
        while self.pos < self.n and self.peek() != ")":
            if args:
                if self.peek() != ",":
                    raise self.rest('expected literal ","')
                self.pos += 1
                self.ws()
            arg_start = self.pos
            arg = self.argument()
            if fdef.max_args is not None and len(args) >= fdef.max_args:
                raise self.rest("invalid number of arguments", arg_start)
            if not args and not isinstance(arg, Literal) and fdef.name in ALTERNATE_ORDERS:
                fdef = ALTERNATE_ORDERS[fdef.name]
            self.check_argument(fdef, len(args), arg)
            args.append(arg)
            self.ws()
        if len(args) < fdef.min_args:
            raise self.rest("invalid number of arguments")
        self.close()
        return self.finish_call(fdef, start, args)

    def quantifier(self, fdef: FunctionDef, start: int) -> Call:
        """``any(...)``/``all(...)``: one argument that must be an ``Array<Bool>``."""
        arg = self.argument()
        if isinstance(arg, Literal) or arg.type != ARRAY(BOOL):
            raise ParseFail(
                f"expected value of type {ARRAY(BOOL)}, but got {arg.type}", arg.start, arg.end
            )
        self.ws()
        self.close()
        return self.finish_call(fdef, start, [arg])

    def argument(self) -> Node:
        """One argument, tried in the engine's order: a string; a logical expression after
        ``(``, ``not``, ``!`` or ``any(``; a field or call (with its comparison, if one
        follows); else an IP, an integer, then a string literal."""
        c, c2, c3 = self.peek(), self.peek(1), self.peek(2)
        if c == '"' or (c == "r" and c2 in ('"', "#")):
            return self.bytes_value()
        if c == "(" or self.negation():
            return self.logical(0)
        if _QUANTIFIER_CALL.match(self.src, self.pos):
            return self.logical(0)
        if _field_start(c, c2, c3):
            return self.value_argument(self.value_expr())
        save = self.pos
        try:
            lhs = self.value_expr()
        except ParseFail:
            self.pos = save
        else:
            return self.value_argument(lhs)
        for literal in (self.ip_literal, self.int_literal, self.bytes_value):
            try:
                return literal()
            except ParseFail:
                self.pos = save
        raise self.rest("unrecognised input", save)  # the engine names none of the attempts

    def value_argument(self, lhs: Node) -> Node:
        """A field or call argument, or its comparison when a comparison operator follows."""
        save = self.pos
        self.ws()
        ahead = self.comparison_op() is not None
        self.pos = save
        return self.comparison(lhs=lhs) if ahead else lhs

    def check_argument(self, fdef: FunctionDef, i: int, arg: Node) -> None:
        param = fdef.param(i)
        if arg.each and i > 0:
            raise ParseFail(
                f"invalid kind of argument #{i}: [*] is only allowed in the first argument",
                arg.start,
                arg.end,
            )
        is_literal = isinstance(arg, Literal)
        if param.kind == "field" and is_literal:
            raise ParseFail(
                f"invalid kind of argument #{i}: expected argument of kind Field, but got Literal",
                arg.start,
                arg.end,
            )
        if param.kind == "literal" and not is_literal:
            raise ParseFail(
                f"invalid kind of argument #{i}: expected argument of kind Literal, but got Field",
                arg.start,
                arg.end,
            )
        if not any(type_accepts(spec, arg.type) for spec in param.types):
            raise ParseFail(
                f"invalid type of argument #{i}: expected value of type {param.types[0]}, "
                f"but got {arg.type}",
                arg.start,
                arg.end,
            )

    def finish_call(self, fdef: FunctionDef, start: int, args: list[Node]) -> Call:
        if fdef.reorder is not None:
            args = fdef.reorder(args)
            for arg in args:
                if isinstance(arg, FieldRef) and arg.name not in self.scheme.fields:
                    raise ParseFail(
                        f"{fdef.name}() in this argument order reads {arg.name}, "
                        "which this scheme does not have",
                        start,
                        self.pos,
                    )
        if fdef.name in ("concat", "coalesce"):
            first = args[0].type
            for i, arg in enumerate(args[1:], 1):
                same_shape = (arg.type.kind == "Array") == (first.kind == "Array")
                if (
                    not same_shape
                    or (first.kind == "Array" and arg.type != first)
                    or (fdef.name == "coalesce" and arg.type != first)
                ):
                    raise ParseFail(
                        f"invalid type of argument #{i}: expected value of type {first}, "
                        f"but got {arg.type}",
                        arg.start,
                        arg.end,
                    )
        literals = [a.value if isinstance(a, Literal) else None for a in args]
        if fdef.check is not None:
            problem = fdef.check(literals)
            if problem:
                raise ParseFail(problem, start, self.pos)
        try:
            impl = fdef.build(literals)
        except RegexSyntaxError as err:
            raise ParseFail(err.message, args[1].start, args[1].end) from None
        except WildcardError as err:
            raise ParseFail(str(err), args[1].start, args[1].end) from None
        except ReplacementError as err:
            raise ParseFail(str(err), args[2].start, args[2].end) from None
        mapped = bool(args) and args[0].each
        ret = fdef.returns([a.type for a in args])
        rtype = ARRAY(ret) if mapped else ret
        return Call(start, self.pos, rtype, name=fdef.name, args=args, mapped=mapped, impl=impl)


def parse(source: str, scheme: str | Scheme = "http") -> Node:
    """Parse and type-check ``source``; raise :class:`ExpressionError` on any problem."""
    if not isinstance(source, str):
        raise TypeError(f"expression must be a str, got {type(source).__name__}")
    sch = get_scheme(scheme) if isinstance(scheme, str) else scheme
    if len(source) > MAX_LENGTH:
        # The message shows the text up to the first character over the limit, not the whole
        # input: a 64 MB expression must not give a 128 MB error.
        raise ExpressionError.at(
            source[: MAX_LENGTH + 1],
            MAX_LENGTH,
            MAX_LENGTH + 1,
            f"expression is too long: {len(source)} characters, the limit is {MAX_LENGTH}",
        )
    text = source.strip()
    problem = utf8_problem(text)
    if problem is not None:
        # The engine reads UTF-8 text: a lone surrogate can never reach it, so refuse it here,
        # pointing at the first one, before any part of the parser tries to encode it.
        at = next(i for i, c in enumerate(text) if "\ud800" <= c <= "\udfff")
        raise ExpressionError.at(text, at, at + 1, f"expression {problem}")
    parser = _Parser(text, sch)
    try:
        if not text:
            return Empty(0, 0, BOOL)
        node = parser.logical(0)
        if parser.pos < parser.n:
            raise parser.rest("unrecognised input")
        if node.type != BOOL:
            raise ParseFail(
                f"expected value of type {BOOL}, but got {node.type}", node.start, node.end
            )
        return node
    except ParseFail as fail:
        err = ExpressionError.at(text, fail.start, fail.end, fail.reason)
        err.reason = fail.flat
        raise err from None
    except RecursionError:
        raise ExpressionError.at(
            text, 0, len(text), f"maximum nesting depth exceeded (limit: {MAX_DEPTH})"
        ) from None
