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

import ipaddress
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
from .errors import ExpressionError, ParseFail
from .functions import FUNCTIONS, FunctionDef, type_accepts
from .regex import RegexSyntaxError, format_regex_error, parse_regex
from .scheme import Scheme, get_scheme
from .types import ARRAY, BOOL, BYTES, INT, IP, Type
from .wildcard import WildcardError, parse_wildcard

MAX_LENGTH = 4096
MAX_DEPTH = 128
_WS = " \n\r"
_HEX = set("0123456789abcdefABCDEF")
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
OPERATORS_BY_TYPE = {
    "Bytes": _ORDERING | {"contains", "matches", "wildcard", "strict wildcard", "in"},
    "Int": _ORDERING | {"in", "bitwise_and"},
    "Ip": _ORDERING | {"in"},
}


class _Parser:
    def __init__(self, source: str, scheme: Scheme) -> None:
        self.src = source
        self.n = len(source)
        self.pos = 0
        self.depth = 0
        self.scheme = scheme

    # -- small helpers --------------------------------------------------------
    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.src[i] if i < self.n else ""

    def ws(self) -> None:
        while self.pos < self.n and self.src[self.pos] in _WS:
            self.pos += 1

    def rest(self, reason: str, start: int | None = None) -> ParseFail:
        """An error spanning from ``start`` (default: here) to the end of the input."""
        return ParseFail(reason, self.pos if start is None else start, self.n)

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
        if isinstance(left, Logical) and left.op == op and not getattr(left, "grouped", False):
            left.items.append(right)
            left.end = right.end
            return left
        return Logical(left.start, right.end, left.type, op=op, items=[left, right])

    def unary(self) -> Node:
        self.ws()
        starts = []
        while True:
            if self.src.startswith("not", self.pos):
                width = 3
            elif self.peek() == "!" and self.peek(1) != "=":
                width = 1
            else:
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
            start = self.pos
            self.enter(start)
            self.pos += 1
            node = self.logical(0)
            self.ws()
            if self.peek() != ")":
                raise self.rest('expected literal ")"')
            self.pos += 1
            self.depth -= 1
            node.grouped = True  # a parenthesised chain is not extended by later operators
            return node
        return self.comparison(allow_value=False)

    # -- comparisons ---------------------------------------------------------------
    def comparison(self, allow_value: bool) -> Node:
        lhs = self.value_expr()
        if lhs.type == BOOL or (lhs.type == ARRAY(BOOL) and not lhs.each):
            if lhs.each:
                lhs.type, lhs.each = ARRAY(BOOL), False
                lhs.mapped_bool = True
            return lhs
        save = self.pos
        self.ws()
        if allow_value and self.peek() in (",", ")", ""):
            self.pos = save
            return lhs
        op_start = self.pos
        found = next(((t, c) for t, c in _COMPARISON if self.src.startswith(t, self.pos)), None)
        if found is None:
            raise self.rest("expected ComparisonOp")
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
        if name in FUNCTIONS and self.peek() == "(":
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
        elif c.isdigit():
            digits = self.take(lambda ch: ch.isdigit())
            key = int(digits)
            if key > 0xFFFFFFFF:
                raise ParseFail(
                    "number too large to fit in target type while parsing with radix 10",
                    start + 1,
                    self.pos,
                )
        else:
            raise self.rest('expected literal "expected positive integer as index"')
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
            return Index(base.start, self.pos, t.element, each=True, base=base, key=STAR)
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
        return Index(base.start, self.pos, t.element, each=base.each, base=base, key=key)

    def call(self, fdef: FunctionDef, start: int) -> Call:
        self.enter(start)
        self.pos += 1  # (
        args: list[Node] = []
        self.ws()
        if self.peek() != ")":
            while True:
                self.ws()
                if fdef.max_args is not None and len(args) >= fdef.max_args:
                    raise self.rest("invalid number of arguments")
                arg = self.argument()
                self.check_argument(fdef, len(args), arg)
                args.append(arg)
                self.ws()
                if self.peek() == ",":
                    self.pos += 1
                    continue
                break
        self.ws()
        if len(args) < fdef.min_args:
            raise self.rest("invalid number of arguments")
        if self.peek() != ")":
            raise self.rest('expected literal ")"')
        self.pos += 1
        self.depth -= 1
        return self.finish_call(fdef, start, args)

    def argument(self) -> Node:
        c = self.peek()
        start = self.pos
        if c == "(":
            self.enter(start)
            self.pos += 1
            node = self.logical(0)
            self.ws()
            if self.peek() != ")":
                raise self.rest('expected literal ")"')
            self.pos += 1
            self.depth -= 1
            node.grouped = True
            return node
        if c == '"' or (c == "r" and self.peek(1) in ('"', "#")):
            return self.bytes_value()
        if c.isdigit() or c == "-":
            return self.int_literal()
        if self.src.startswith("not", self.pos) or (c == "!" and self.peek(1) != "="):
            return self.unary()
        return self.comparison(allow_value=True)

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
        mapped = bool(args) and args[0].each
        ret = fdef.returns([a.type for a in args])
        node = Call(start, self.pos, ARRAY(ret) if mapped else ret, name=fdef.name, args=args)
        node.mapped = mapped
        node.impl = impl
        return node

    # -- literals ------------------------------------------------------------------------
    def take(self, pred: Any) -> str:
        start = self.pos
        while self.pos < self.n and pred(self.src[self.pos]):
            self.pos += 1
        return self.src[start : self.pos]

    def int_literal(self) -> Literal:
        start = self.pos
        if self.src.startswith("0x", self.pos):
            self.pos += 2
            digits = self.take(lambda c: c in _HEX)
            if not digits:
                raise self.rest("expected digit")
            value = int(digits, 16)
            radix = 16
        elif self.peek() == "0":
            digits = self.take(lambda c: c in _HEX)
            if any(c not in "01234567" for c in digits):
                raise ParseFail(
                    "invalid digit found in string while parsing with radix 8", start, self.pos
                )
            value, radix = int(digits, 8), 8
        else:
            negative = self.peek() == "-"
            if negative:
                self.pos += 1
            digits = self.take(lambda c: c in _HEX)
            if not digits:
                raise self.rest("expected digit")
            if not digits.isdigit():
                raise ParseFail(
                    "invalid digit found in string while parsing with radix 10", start, self.pos
                )
            value, radix = (-int(digits) if negative else int(digits)), 10
        if value > 2**63 - 1:
            raise ParseFail(
                f"number too large to fit in target type while parsing with radix {radix}",
                start,
                self.pos,
            )
        if value < -(2**63):
            raise ParseFail(
                f"number too small to fit in target type while parsing with radix {radix}",
                start,
                self.pos,
            )
        return Literal(start, self.pos, INT, value=value)

    def bytes_value(self) -> Literal:
        start = self.pos
        if self.peek() == '"':
            value = self.quoted_string()
        elif self.peek() == "r" and self.peek(1) in ('"', "#"):
            value = self.raw_string().encode("utf-8")
        else:
            value = self.hex_bytes()
        return Literal(start, self.pos, BYTES, value=value)

    def hex_bytes(self) -> bytes:
        out = bytearray()
        while True:
            chunk = self.src[self.pos : self.pos + 2]
            if len(chunk) < 2:
                raise ParseFail(
                    f"expected 2 characters, but found {len(chunk)}",
                    self.pos,
                    self.pos + len(chunk),
                )
            if not all(c in _HEX for c in chunk):
                raise ParseFail(
                    "invalid digit found in string while parsing with radix 16",
                    self.pos,
                    self.pos + 2,
                )
            out.append(int(chunk, 16))
            self.pos += 2
            if self.peek() == ":":
                self.pos += 1
                continue
            if len(out) < 2:
                raise self.rest("expected byte separator")
            return bytes(out)

    def quoted_string(self) -> bytes:
        """A ``"..."`` string with the basic escapes: \\" \\\\ \\xHH \\OOO."""
        start = self.pos
        self.pos += 1
        out = bytearray()
        while True:
            if self.pos >= self.n:
                raise ParseFail("could not find an ending quote", start + 1, self.n)
            c = self.src[self.pos]
            if c == '"':
                self.pos += 1
                return bytes(out)
            if c != "\\":
                out += c.encode("utf-8")
                self.pos += 1
                continue
            self.pos += 1
            if self.pos >= self.n:
                raise ParseFail("could not find an ending quote", start + 1, self.n)
            e = self.src[self.pos]
            if e in '"\\':
                out += e.encode()
                self.pos += 1
            elif e == "x":
                out.append(self.fixed_number(self.pos + 1, 2, 16))
                self.pos += 3
            elif e.isdigit():
                out.append(self.fixed_number(self.pos, 3, 8))
                self.pos += 3
            else:
                raise ParseFail('expected ", xHH or OOO after \\', self.pos, self.pos + 1)

    def fixed_number(self, at: int, width: int, radix: int) -> int:
        chunk = self.src[at : at + width]
        if len(chunk) < width:
            raise ParseFail(
                f"expected {width} characters, but found {len(chunk)}", at, at + len(chunk)
            )
        digits = "01234567" if radix == 8 else "0123456789abcdefABCDEF"
        if not all(c in digits for c in chunk):
            raise ParseFail(
                f"invalid digit found in string while parsing with radix {radix}", at, at + width
            )
        value = int(chunk, radix)
        if value > 0xFF:
            raise ParseFail(
                f"number too large to fit in target type while parsing with radix {radix}",
                at,
                at + width,
            )
        return value

    def raw_string(self) -> str:
        start = self.pos
        self.pos += 1  # r
        hashes = len(self.take(lambda c: c == "#"))
        if hashes > 255:
            raise ParseFail("too many # in a raw string (limit 255)", start, self.pos)
        if self.peek() != '"':
            raise self.rest('expected literal "\\""')
        self.pos += 1
        closing = '"' + "#" * hashes
        end = self.src.find(closing, self.pos)
        if end == -1:
            raise ParseFail("could not find an ending quote", self.pos, self.n)
        text = self.src[self.pos : end]
        self.pos = end + len(closing)
        return text

    def regex_literal(self) -> Pattern:
        start = self.pos
        if self.peek() == '"':
            self.pos += 1
            content_start = self.pos
            out = []
            while True:
                if self.pos >= self.n:
                    raise ParseFail("could not find an ending quote", content_start, self.n)
                c = self.src[self.pos]
                if c == '"':
                    break
                if c == "\\" and self.peek(1) == '"':
                    out.append('"')
                    self.pos += 2
                    continue
                if c == "\\" and self.pos + 1 < self.n:
                    out.append(self.src[self.pos : self.pos + 2])
                    self.pos += 2
                    continue
                out.append(c)
                self.pos += 1
            content_end = self.pos
            self.pos += 1
            text = "".join(out)
        elif self.peek() == "r" and self.peek(1) in ('"', "#"):
            hashes = 0
            while self.peek(1 + hashes) == "#":
                hashes += 1
            content_start = self.pos + 2 + hashes
            text = self.raw_string()
            content_end = content_start + len(text)
        else:
            raise self.rest('expected " or r')
        try:
            compiled = parse_regex(text)
        except RegexSyntaxError as err:
            fail = ParseFail(format_regex_error(text, err), content_start, content_end)
            fail.flat = f"regex parse error: error: {err.message}"
            if err.message.startswith("Compiled regex"):
                fail.flat = err.message
            raise fail from None
        return Pattern(start, self.pos, text=text.encode("utf-8"), compiled=compiled)

    def wildcard_literal(self, case_sensitive: bool) -> Pattern:
        start = self.pos
        if self.peek() == '"':
            value = self.quoted_string()
        elif self.peek() == "r" and self.peek(1) in ('"', "#"):
            value = self.raw_string().encode("utf-8")
        else:
            raise self.rest('expected " or r')
        try:
            compiled = parse_wildcard(value, case_sensitive)
        except WildcardError as err:
            raise ParseFail(str(err), start, self.pos) from None
        return Pattern(start, self.pos, text=value, compiled=compiled)

    def set_literal(self, t: Type) -> SetLiteral:
        start = self.pos
        self.pos += 1
        strings: set[bytes] = set()
        int_ranges: list[tuple[int, int]] = []
        ip_ranges: list[tuple[Any, Any]] = []
        while True:
            self.ws()
            if self.peek() == "}":
                self.pos += 1
                break
            if t == BYTES:
                strings.add(self.bytes_value().value)
            elif t == INT:
                el = self.pos
                lo = self.int_literal().value
                hi = lo
                if self.src.startswith("..", self.pos):
                    self.pos += 2
                    hi = self.int_literal().value
                    if lo > hi:
                        raise ParseFail("incompatible range bounds", el, self.pos)
                int_ranges.append((lo, hi))
            else:
                ip_ranges.append(self.ip_set_element())
        return SetLiteral(
            start,
            self.pos,
            strings=frozenset(strings),
            int_ranges=tuple(int_ranges),
            ip_ranges=tuple(ip_ranges),
        )

    def list_ref(self) -> ListRef:
        start = self.pos
        self.pos += 1
        name = self.take(lambda c: c.isascii() and (c.islower() or c.isdigit() or c in "_."))
        if not name:
            raise self.rest(f'invalid list name "{self.peek()}"')
        return ListRef(start, self.pos, name=name)

    def ip_literal(self) -> Literal:
        start = self.pos
        chunk = self.take(lambda c: c in _HEX or c in ":.")
        if not chunk:
            raise self.rest("expected IP address character", start)
        try:
            addr = ipaddress.ip_address(chunk)
        except ValueError:
            raise ParseFail("invalid IP address syntax", start, self.pos) from None
        return Literal(start, self.pos, IP, value=addr)

    def ip_set_element(self) -> tuple[Any, Any]:
        start = self.pos
        chunk = self.take(lambda c: c in _HEX or c in ":./")
        if not chunk:
            raise self.rest("expected IP address character", start)
        if ".." in chunk:
            left, right = chunk.split("..", 1)
            lo = _short_ip(left)
            hi = _short_ip(right)
            if lo is None or hi is None:
                where = start if lo is None else start + len(left) + 2
                text = left if lo is None else right
                raise ParseFail(
                    "couldn't parse address in range: invalid IP address syntax",
                    where,
                    where + len(text),
                )
            if lo.version != hi.version or lo > hi:
                raise ParseFail("incompatible range bounds", start, self.pos)
            return lo, hi
        if "/" in chunk:
            addr_text, length_text = chunk.split("/", 1)
            addr = _short_ip(addr_text)
            if addr is None:
                raise ParseFail(
                    "couldn't parse address in network: invalid IP address syntax",
                    start,
                    start + len(addr_text),
                )
            length_at = start + len(addr_text) + 1
            if not length_text.isdigit():
                why = (
                    "cannot parse integer from empty string"
                    if not length_text
                    else "invalid digit found in string"
                )
                raise ParseFail(
                    f"couldn't parse length in network: {why}",
                    length_at,
                    length_at + len(length_text),
                )
            length = int(length_text)
            maximum = 32 if addr.version == 4 else 128
            if length > maximum:
                family = "Ipv4" if addr.version == 4 else "Ipv6"
                raise ParseFail(
                    f"invalid length for network: Network length {length} is too long for "
                    f"{family} (maximum: {maximum})",
                    start,
                    self.pos,
                )
            network = ipaddress.ip_network(f"{addr}/{length}", strict=False)
            if network.network_address != addr:
                raise ParseFail("host part of address was not zero", start, start + len(addr_text))
            return network.network_address, network.broadcast_address
        addr = _short_ip(chunk)
        if addr is None:
            raise ParseFail("invalid IP address syntax", start, self.pos)
        return addr, addr


def _short_ip(text: str) -> Any:
    """An address as the engine reads it inside sets: short IPv4 forms (``10``, ``192.168``) too."""
    if ":" in text:
        try:
            return ipaddress.IPv6Address(text)
        except ValueError:
            return None
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or not all(p.isdigit() and int(p) <= 255 for p in parts):
        return None
    octets = [int(p) for p in parts] + [0] * (4 - len(parts))
    return ipaddress.IPv4Address(bytes(octets))


def parse(source: str, scheme: str | Scheme = "http") -> Node:
    """Parse and type-check ``source``; raise :class:`ExpressionError` on any problem."""
    if not isinstance(source, str):
        raise TypeError(f"expression must be a str, got {type(source).__name__}")
    sch = get_scheme(scheme) if isinstance(scheme, str) else scheme
    if len(source) > MAX_LENGTH:
        raise ExpressionError.at(
            source,
            MAX_LENGTH,
            len(source),
            f"expression is too long: {len(source)} characters, the limit is {MAX_LENGTH}",
        )
    text = source.strip()
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
        err.reason = getattr(fail, "flat", fail.reason)
        raise err from None
    except RecursionError:
        raise ExpressionError.at(
            text, 0, len(text), f"maximum nesting depth exceeded (limit: {MAX_DEPTH})"
        ) from None
