"""Parser of the engine's regex syntax (Rust ``regex`` crate, bytes mode, Unicode off
unless ``(?u)`` turns it on: then classes are sets of code points, ``\\w``/``\\d``/``\\s``
are Unicode classes and ``(?i)`` is simple case folding).

It accepts what the crate accepts and refuses the rest with the crate's own
messages and spans (look-around, backreferences, ``\\Z``, bad ranges ...).

    >>> tree = _RegexParser(r"(?i)ab+").parse()
    >>> tree.kind
    'cat'
"""

from __future__ import annotations

from ._regex_unicode import fold_ranges, perl_class, unicode_class, unsupported_binary_property
from .regex_tree import (
    _ASCII_DIGIT,
    _ASCII_SPACE,
    _ASCII_WORD,
    _POSIX,
    Node,
    _Flags,
    _fold_ascii,
    _intersect,
    _negate,
    _normalize,
)

_SCALARS = [(0, 0xD7FF), (0xE000, 0x10FFFF)]
_META = set("\\.+*?()|[]{}^$#&-~")


class RegexSyntaxError(Exception):
    """A pattern the engine refuses; ``start``/``end`` index into the pattern text."""

    def __init__(self, message: str, start: int, end: int) -> None:
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = end


class _RegexParser:
    def __init__(self, pattern: str) -> None:
        self.text = pattern
        # Work on bytes: the engine is byte-oriented; keep a map back to characters.
        self.pos = 0

    def fail(self, message: str, start: int, end: int | None = None) -> RegexSyntaxError:
        return RegexSyntaxError(message, start, start + 1 if end is None else end)

    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.text[i] if i < len(self.text) else ""

    def skip_x(self, flags: _Flags) -> None:
        if not flags.x:
            return
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c in " \t\n\r\f\v":
                self.pos += 1
            elif c == "#":
                while self.pos < len(self.text) and self.text[self.pos] != "\n":
                    self.pos += 1
            else:
                break

    def parse(self) -> Node:
        flags = _Flags()
        node = self.parse_alt(flags, depth=0)
        if self.pos < len(self.text):
            # Only an unmatched ')' stops the top level early.
            raise self.fail("unopened group", self.pos)
        return node

    def parse_alt(self, flags: _Flags, depth: int) -> Node:
        branches = [self.parse_concat(flags, depth)]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.parse_concat(flags, depth))
        return branches[0] if len(branches) == 1 else Node("alt", items=branches)

    def parse_concat(self, flags: _Flags, depth: int) -> Node:
        items: list[Node] = []
        while True:
            self.skip_x(flags)
            c = self.peek()
            if c == "" or c == "|" or (c == ")" and depth > 0):
                break
            if c == ")":
                raise self.fail("unopened group", self.pos)
            start = self.pos
            if c in "*+?":
                if not items:
                    raise self.fail("repetition operator missing expression", start)
                self.pos += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
                items[-1] = self.repeat(items[-1], lo, hi, flags)
                continue
            if c == "{":
                if not items:
                    raise self.fail("repetition operator missing expression", start)
                lo, hi = self.parse_counted(flags)
                items[-1] = self.repeat(items[-1], lo, hi, flags)
                continue
            atom = self.parse_atom(flags, depth)
            if atom is not None:
                items.append(atom)
        if not items:
            return Node("empty")
        return items[0] if len(items) == 1 else Node("cat", items=items)

    def repeat(self, node: Node, lo: int, hi: int | None, flags: _Flags) -> Node:
        greedy = True
        if self.peek() == "?":
            self.pos += 1
            greedy = False
        if flags.U:
            greedy = not greedy
        if node.kind == "assert" or node.kind == "flags":
            # Rust allows repeating look-arounds/anchors; keep it as-is.
            return node
        return Node("rep", items=[node], lo=lo, hi=hi, greedy=greedy)

    def parse_counted(self, flags: _Flags) -> tuple[int, int | None]:
        start = self.pos
        self.pos += 1  # {
        end = self.text.find("}", self.pos)
        if end == -1:
            raise self.fail("unclosed counted repetition", start, len(self.text))
        body = self.text[self.pos : end].strip()
        self.pos = end + 1
        parts = [p.strip() for p in body.split(",")]
        if (
            len(parts) > 2
            or not parts[0].isdigit()
            or (len(parts) == 2 and parts[1] and not parts[1].isdigit())
        ):
            raise self.fail("repetition quantifier expects a valid decimal", start, self.pos)
        lo = int(parts[0])
        hi: int | None = lo if len(parts) == 1 else (int(parts[1]) if parts[1] else None)
        if hi is not None and lo > hi:
            raise self.fail(
                "invalid repetition count range, the start must be <= the end", start, self.pos
            )
        return lo, hi

    def parse_atom(self, flags: _Flags, depth: int) -> Node | None:
        c = self.peek()
        start = self.pos
        if c == "(":
            return self.parse_group(flags, depth)
        if c == "[":
            if flags.u:
                # With Unicode on a class is a set of code points (folded by parse_class).
                return _code_point_node(self.parse_class(flags))
            return self.set_node(self.parse_class(flags), flags)
        if c == ".":
            self.pos += 1
            if flags.u:
                return Node("uany", name="s" if flags.s else "")
            return Node("set", ranges=[(0, 0xFF)] if flags.s else [(0, 9), (11, 0xFF)])
        if c == "^":
            self.pos += 1
            return Node("assert", name="bol" if flags.m else "bot")
        if c == "$":
            self.pos += 1
            return Node("assert", name="eol" if flags.m else "eot")
        if c == "\\":
            return self.parse_escape(flags, in_class=False)
        self.pos += 1
        return self.literal(c, flags, start)

    def literal(self, ch: str, flags: _Flags, start: int) -> Node:
        if flags.u and flags.i:
            folded = fold_ranges([(ord(ch), ord(ch))])
            if folded != [(ord(ch), ord(ch))]:
                return _code_point_node(folded)
        data = ch.encode("utf-8")
        nodes = [self.set_node([(b, b)], flags) for b in data]
        return nodes[0] if len(nodes) == 1 else Node("cat", items=nodes)

    def set_node(self, ranges: list[tuple[int, int]], flags: _Flags) -> Node:
        if flags.i:
            ranges = _fold_ascii(ranges)
        return Node("set", ranges=_normalize(ranges))

    def parse_group(self, flags: _Flags, depth: int) -> Node | None:
        start = self.pos
        self.pos += 1
        inner_flags = _Flags(**vars(flags))
        capture = "cap"
        if self.peek() == "?":
            capture = ""
            if self.text.startswith(("?=", "?!", "?<=", "?<!"), self.pos):
                width = 4 if self.text.startswith("?<", self.pos) else 3
                raise self.fail(
                    "look-around, including look-ahead and look-behind, is not supported",
                    start,
                    start + width,
                )
            if self.text.startswith(("?P<", "?<"), self.pos):
                self.pos += 3 if self.peek(1) == "P" else 2
                end = self.text.find(">", self.pos)
                name = self.text[self.pos : end] if end != -1 else ""
                if end == -1:
                    raise self.fail("unclosed capture group name", self.pos, len(self.text))
                if (
                    not name
                    or not (name[0].isalpha() or name[0] == "_")
                    or not all(ch.isalnum() or ch in "_.[]" for ch in name)
                ):
                    raise self.fail("invalid capture group character", self.pos, end)
                self.pos = end + 1
                capture = "cap"
            else:
                self.pos += 1
                negate = False
                seen = False
                while True:
                    ch = self.peek()
                    if ch == "":
                        raise self.fail("expected flag but got end of regex", self.pos)
                    if ch == ")":
                        # (?flags): applies to the rest of the enclosing group.
                        if not seen and not negate:
                            raise self.fail("empty flag", self.pos)
                        self.pos += 1
                        flags.__dict__.update(vars(inner_flags))
                        return None
                    if ch == ":":
                        self.pos += 1
                        break
                    if ch == "-":
                        if negate:
                            raise self.fail("duplicate flag", self.pos)
                        negate = True
                    elif ch in "imsUuxR":
                        if ch != "R":
                            setattr(inner_flags, ch, not negate)
                        seen = True
                    else:
                        raise self.fail("unrecognized flag", self.pos)
                    self.pos += 1
        node = self.parse_alt(inner_flags, depth + 1)
        if self.peek() != ")":
            raise self.fail("unclosed group", start)
        self.pos += 1
        return Node("group", items=[node], name=capture)

    def parse_escape(self, flags: _Flags, in_class: bool) -> Node:
        start = self.pos
        self.pos += 1
        c = self.peek()
        if c == "":
            raise self.fail(
                "incomplete escape sequence, reached end of pattern prematurely", self.pos
            )
        self.pos += 1
        simple = {"a": 7, "f": 12, "t": 9, "n": 10, "r": 13, "v": 11}
        if c in simple:
            return self.set_node([(simple[c], simple[c])], flags)
        if c.isdigit():
            raise self.fail("backreferences are not supported", start, self.pos)
        if c in "xuU":
            return self.parse_hex_escape(c, start, flags)
        classes = {
            "d": _ASCII_DIGIT,
            "w": _ASCII_WORD,
            "s": _ASCII_SPACE,
        }
        if c.lower() in classes and flags.u:
            return _code_point_node(perl_class(c))
        if c.lower() in classes:
            ranges = classes[c.lower()]
            if c.isupper():
                ranges = _negate(ranges)
            return Node("set", ranges=_normalize(ranges))
        if c in "pP":
            if not flags.u:
                end = self.pos
                if self.peek() == "{":
                    close = self.text.find("}", self.pos)
                    end = close + 1 if close != -1 else len(self.text)
                else:
                    end = self.pos + 1
                raise self.fail("Unicode not allowed here", start, end)
            return self.unicode_class(c == "P", start, flags)
        if not in_class:
            if c in "bB":
                if self.peek() == "{":
                    close = self.text.find("}", self.pos)
                    name = self.text[self.pos + 1 : close] if close != -1 else ""
                    if name not in ("start", "end", "start-half", "end-half"):
                        raise self.fail("unrecognized word boundary assertion", start, self.pos)
                    self.pos = close + 1
                    return Node("assert", name="word")
                return Node("assert", name="word" if c == "b" else "nonword")
            if c == "A":
                return Node("assert", name="bot")
            if c == "z":
                return Node("assert", name="eot")
            if c in "<>":
                return Node("assert", name="word")
        if c in _META or c == " " or (c.isascii() and not c.isalnum() and c.isprintable()):
            b = ord(c)
            return self.set_node([(b, b)], flags)
        raise self.fail("unrecognized escape sequence", start, self.pos)

    def unicode_class(self, negated: bool, start: int, flags: _Flags) -> Node:
        """``\\pL`` / ``\\p{Name}`` (``\\P`` negated) with Unicode on: one code point of the class."""
        if self.peek() == "{":
            close = self.text.find("}", self.pos)
            if close == -1:
                raise self.fail("unclosed Unicode class literal", start, len(self.text))
            name, self.pos = self.text[self.pos + 1 : close], close + 1
        else:
            name = self.peek()
            if name == "":
                raise self.fail(
                    "incomplete escape sequence, reached end of pattern prematurely", self.pos
                )
            self.pos += 1
        found = unicode_class(name, negated)
        if found is None and unsupported_binary_property(name):
            raise self.fail(
                f"Unicode property {name} is not supported by the workbench "
                "(general categories, scripts and a few binary properties are)",
                start,
                self.pos,
            )
        if found is None:
            raise self.fail("Unicode property not found", start, self.pos)
        ranges = fold_ranges(found[1]) if flags.i else found[1]
        return Node("uclass", uranges=ranges)

    def parse_hex_escape(self, c: str, start: int, flags: _Flags) -> Node:
        digits = {"x": 2, "u": 4, "U": 8}[c]
        if self.peek() == "{":
            close = self.text.find("}", self.pos)
            if close == -1:
                raise self.fail(
                    "incomplete escape sequence, reached end of pattern prematurely",
                    len(self.text),
                )
            body = self.text[self.pos + 1 : close]
            self.pos = close + 1
        else:
            body = self.text[self.pos : self.pos + digits]
            if len(body) < digits:
                self.pos = len(self.text)
                raise self.fail(
                    "incomplete escape sequence, reached end of pattern prematurely",
                    len(self.text),
                )
            self.pos += digits
        try:
            value = int(body, 16)
            if not body or not all(ch in "0123456789abcdefABCDEF" for ch in body):
                raise ValueError
        except ValueError:
            raise self.fail(
                "hexadecimal literal is not a Unicode scalar value", start, self.pos
            ) from None
        if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
            raise self.fail("hexadecimal literal is not a Unicode scalar value", start, self.pos)
        if not flags.u and value <= 0xFF:
            return self.set_node([(value, value)], flags)
        return self.literal(chr(value), flags, start)

    def parse_class(self, flags: _Flags) -> list[tuple[int, int]]:
        start = self.pos
        self.pos += 1
        top = 0x10FFFF if flags.u else 0xFF
        negated = False
        if self.peek() == "^":
            negated = True
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            c = self.peek()
            if c == "":
                raise self.fail("unclosed character class", start, len(self.text))
            if c == "]" and not first:
                self.pos += 1
                break
            first = False
            if c == "[" and self.text.startswith("[:", self.pos):
                close = self.text.find(":]", self.pos)
                name = self.text[self.pos + 2 : close] if close != -1 else ""
                neg = name.startswith("^")
                if close != -1 and name.lstrip("^") in _POSIX:
                    r = _POSIX[name.lstrip("^")]
                    ranges += _negate(r, top) if neg else r
                    self.pos = close + 2
                    continue
            if c == "[":
                ranges += self.parse_class(flags)
                continue
            if self.text.startswith(("&&", "--", "~~"), self.pos):
                op = self.text[self.pos : self.pos + 2]
                self.pos += 2
                rest = self.parse_class_rest(flags)
                if op == "&&":
                    ranges = _intersect(_normalize(ranges), rest)
                elif op == "--":
                    ranges = _intersect(_normalize(ranges), _negate(rest, top))
                else:
                    a, b = _normalize(ranges), rest
                    ranges = _normalize(
                        _intersect(a, _negate(b, top)) + _intersect(b, _negate(a, top))
                    )
                continue
            lo_start = self.pos
            lo = self.class_item(flags)
            if isinstance(lo, list):
                ranges += lo
                continue
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                hi = self.class_item(flags)
                if isinstance(hi, list):
                    raise self.fail("invalid character class range", lo_start, self.pos)
                if lo > hi:
                    raise self.fail(
                        "invalid character class range, the start must be <= the end",
                        lo_start,
                        self.pos,
                    )
                ranges.append((lo, hi))
            else:
                ranges.append((lo, lo))
        if flags.i:
            ranges = fold_ranges(ranges) if flags.u else _fold_ascii(ranges)
        ranges = _normalize(ranges)
        if not flags.u:
            return _negate(ranges) if negated else ranges
        return _intersect(_negate(ranges, top) if negated else ranges, _SCALARS)

    def code_point_item(self, flags: _Flags) -> int | list[tuple[int, int]]:
        """One member of a class under ``(?u)``: a code point, or the ranges of an escape."""
        c = self.peek()
        if c != "\\":
            self.pos += 1
            return ord(c)
        # The class as a whole is case folded: its members are read without (?i).
        node = self.parse_escape(_Flags(**{**vars(flags), "i": False}), in_class=True)
        if node.kind == "uclass":
            return node.uranges
        if node.kind == "cat":  # a non-ASCII \x{..} literal, as its UTF-8 bytes
            return ord(bytes(_single_byte(item) for item in node.items).decode("utf-8"))
        if len(node.ranges) == 1 and node.ranges[0][0] == node.ranges[0][1]:
            return node.ranges[0][0]
        return node.ranges

    def parse_class_rest(self, flags: _Flags) -> list[tuple[int, int]]:
        # The right operand of a set operation runs to the closing bracket.
        saved = self.text
        ranges: list[tuple[int, int]] = []
        while self.peek() not in ("]", ""):
            if self.peek() == "[":
                ranges += self.parse_class(flags)
                continue
            item = self.class_item(flags)
            ranges += item if isinstance(item, list) else [(item, item)]
        self.text = saved
        return _normalize(ranges)

    def class_item(self, flags: _Flags) -> int | list[tuple[int, int]]:
        c = self.peek()
        if flags.u:
            return self.code_point_item(flags)
        if c == "\\":
            node = self.parse_escape(flags, in_class=True)
            if (
                node.kind == "set"
                and len(node.ranges) == 1
                and node.ranges[0][0] == node.ranges[0][1]
            ):
                return node.ranges[0][0]
            if node.kind == "set":
                return node.ranges
            # A multi-byte literal inside a class: keep its bytes as members.
            return [r for item in node.items for r in item.ranges]
        self.pos += 1
        data = c.encode("utf-8")
        if len(data) == 1:
            return data[0]
        return [(b, b) for b in data]


def _single_byte(node: Node) -> int:
    return node.ranges[0][0]


def _code_point_node(ranges: list[tuple[int, int]]) -> Node:
    # An ASCII-only class stays a byte set: the same bytes, and plain RE2 in every mode.
    if all(hi < 0x80 for _, hi in ranges) and ranges:
        return Node("set", ranges=_normalize(ranges))
    return Node("uclass", uranges=_normalize(ranges))


def format_regex_error(pattern: str, err: RegexSyntaxError) -> str:
    """The crate's multi-line message: pattern, caret under the span, reason."""
    if err.message.startswith("Compiled regex"):
        return err.message
    line_start = pattern.rfind("\n", 0, err.start) + 1
    line_end = pattern.find("\n", err.start)
    line = pattern[line_start : len(pattern) if line_end == -1 else line_end]
    col = len(pattern[line_start : err.start])
    width = max(1, min(err.end, len(pattern)) - err.start)
    return f"regex parse error:\n    {line}\n    {' ' * col}{'^' * width}\nerror: {err.message}"
