"""Literal lexing for the parser: strings, raw strings, bytes, integers, IPs, sets, lists.

Each method reads one literal at the parser's position and moves past it, or
raises ParseFail with the engine's reason and span (a quoted string that
never ends, a bad escape, an octal 09, a CIDR with host bits set ...).

    >>> from workbench.rules_language.parser import parse
    >>> parse("cf.edge.server_port in {0443 8000..8999}").rhs.int_ranges
    ((291, 291), (8000, 8999))
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ._errors import ParseFail
from ._wildcard import WildcardError, parse_wildcard
from .ast import ListRef, Literal, Pattern, SetLiteral
from .regex import RegexSyntaxError, format_regex_error, parse_regex
from .types import BYTES, INT, IP, Type

_HEX = set("0123456789abcdefABCDEF")
_WS = " \n\r"
_BYTE_SEPARATORS = ":"  # the engine the facts were observed with reads ":" only


class LiteralLexer:
    """Base of the parser: the cursor (``src``, ``n``, ``pos``, set by the parser) and literals."""

    src: str
    n: int
    pos: int

    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.src[i] if i < self.n else ""

    def ws(self) -> None:
        while self.pos < self.n and self.src[self.pos] in _WS:
            self.pos += 1

    def rest(self, reason: str, start: int | None = None) -> ParseFail:
        """An error spanning from ``start`` (default: here) to the end of the input."""
        return ParseFail(reason, self.pos if start is None else start, self.n)

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

    def string_value(self) -> bytes | None:
        """A quoted or raw string at the current position, or None when there is none."""
        if self.peek() == '"':
            return self.quoted_string()
        if self.peek() == "r":  # the engine reads any r here as a raw string's start
            return self.raw_string().encode("utf-8")
        return None

    def bytes_value(self) -> Literal:
        start = self.pos
        self.not_at_end()
        value = self.string_value()
        if value is None:
            value = self.hex_bytes()
        return Literal(start, self.pos, BYTES, value=value)

    def not_at_end(self) -> None:
        """A value must follow: at the end of the input the engine says "unrecognised input"."""
        if self.pos >= self.n:
            raise ParseFail("unrecognised input", self.pos, self.pos)

    def hex_bytes(self) -> bytes:
        """Bytes as hex pairs: two at least, separated by ``:``."""
        out = bytearray([self.hex_byte()])
        if self.pos >= self.n:
            raise ParseFail("expected 1 characters, but found 0", self.pos, self.pos)
        if self.peek() not in _BYTE_SEPARATORS:
            raise ParseFail("expected byte separator", self.pos, self.pos + 1)
        self.pos += 1
        while True:
            out.append(self.hex_byte())
            if not self.peek() or self.peek() not in _BYTE_SEPARATORS:
                return bytes(out)
            self.pos += 1

    def hex_byte(self) -> int:
        """Two characters read as Rust's ``u8::from_str_radix(.., 16)`` reads them."""
        chunk = self.src[self.pos : self.pos + 2]
        if len(chunk) < 2:
            raise ParseFail(f"expected 2 characters, but found {len(chunk)}", self.pos, self.n)
        digits = chunk[1:] if chunk[0] == "+" else chunk
        if not all(c in _HEX for c in digits):
            raise ParseFail(
                "invalid digit found in string while parsing with radix 16", self.pos, self.pos + 2
            )
        self.pos += 2
        return int(digits, 16)

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
        """``r"..."`` or ``r#"..."#``, refused in the engine's words (spans start after ``r``)."""
        self.pos += 1  # r
        after_r = self.pos
        hashes = len(self.take(lambda c: c == "#"))
        if hashes > 255:
            raise self.rest(
                "invalid raw string hash count, there can't be more than 255 #s", after_r
            )
        if self.peek() != '"':
            raise self.rest('expected " or #')
        self.pos += 1
        closing = '"' + "#" * hashes
        end = self.src.find(closing, self.pos)
        if end == -1:
            raise self.rest("could not find an ending quote", after_r)
        text = self.src[self.pos : end]
        self.pos = end + len(closing)
        return text

    def regex_literal(self) -> Pattern:
        start = self.pos
        self.not_at_end()
        if self.peek() == '"':
            self.pos += 1
            content_start = self.pos
            out = []
            in_class = False  # a '"' inside [...] is the class's, as the engine lexes it
            while True:
                if self.pos >= self.n:
                    raise ParseFail("could not find an ending quote", content_start, self.n)
                c = self.src[self.pos]
                if c == '"' and not in_class:
                    break
                if c == "\\":
                    if self.pos + 1 < self.n:
                        escaped = self.src[self.pos + 1]
                        out.append(escaped if escaped == '"' and not in_class else c + escaped)
                    self.pos += 2
                    continue
                if c == "[" and not in_class:
                    in_class = True
                elif c == "]" and in_class:
                    in_class = False
                out.append(c)
                self.pos += 1
            content_end = self.pos
            self.pos += 1
            text = "".join(out)
        elif self.peek() == "r":
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
        self.not_at_end()
        value = self.string_value()
        if value is None:
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
        # The engine reads an address as it reads a network: "/" belongs to the chunk.
        chunk = self.take(lambda c: c in _HEX or c in ":./")
        if not chunk:
            raise self.rest("expected IP address character", start)
        try:
            addr = ipaddress.ip_address(chunk)
        except ValueError:
            raise ParseFail(_BAD_ADDRESS, start, self.pos) from None
        return Literal(start, self.pos, IP, value=addr)

    def ip_set_element(self) -> tuple[Any, Any]:
        start = self.pos
        chunk = self.take(lambda c: c in _HEX or c in ":./")
        if not chunk:
            raise self.rest("expected IP address character", start)
        if ".." in chunk:
            # A range's bounds are whole addresses (no short forms, no lengths).
            left, right = chunk.split("..", 1)
            lo, hi = _strict_ip(left), _strict_ip(right)
            if lo is None or hi is None:
                where = start if lo is None else start + len(left) + 2
                raise ParseFail(_BAD_ADDRESS, where, where + len(left if lo is None else right))
            if lo.version != hi.version or lo > hi:
                raise ParseFail("incompatible range bounds", start, self.pos)
            return lo, hi
        if "/" in chunk:
            addr_text, length_text = chunk.split("/", 1)
            addr = _short_ip(addr_text)
            if addr is None or "/" in length_text:  # a second "/": the engine blames the address
                raise ParseFail(_BAD_ADDRESS, start, start + len(addr_text))
            length_at = start + len(addr_text) + 1
            why = _u8_refusal(length_text)
            if why:
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
            raise ParseFail(_BAD_ADDRESS, start, self.pos)
        return addr, addr


def _u8_refusal(text: str) -> str:
    """Why Rust's ``u8::from_str`` refuses ``text`` ("" when it reads it): digit by digit,
    so ``426e`` overflows before its ``e`` is seen."""
    if not text:
        return "cannot parse integer from empty string"
    value = 0
    for c in text:
        if not ("0" <= c <= "9"):
            return "invalid digit found in string"
        value = value * 10 + ord(c) - 48
        if value > 255 and len(text) > 1:
            return "number too large to fit in target type"
    return ""


#: How the engine refuses an address, whether it stands alone, in a range or in a network.
_BAD_ADDRESS = "couldn't parse address in network: invalid IP address syntax"


def _strict_ip(text: str) -> Any:
    """A whole address (as a range bound must be), or None."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


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
