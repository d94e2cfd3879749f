"""Wildcard patterns of ``wildcard`` and ``strict wildcard``.

The whole value must match; ``*`` is zero or more of any byte (it crosses
``/``); ``\\*`` is a literal star and ``\\\\`` a literal backslash; every other
character is literal. ``wildcard`` ignores ASCII case, ``strict wildcard``
does not. A pattern is translated once into a byte regex (see ``regex.py``).

    >>> w = parse_wildcard(b"*.example.com/*/page.html", case_sensitive=False)
    >>> w.match(b"https://admin.EXAMPLE.com/team/page.html")
    True
"""

from __future__ import annotations

from .regex import Node, Regex, _fold_ascii

STAR_LIMIT = 10


class WildcardError(Exception):
    """A pattern the engine refuses; the message is the engine's reason."""


def split_wildcard(pattern: bytes) -> list[bytes | None]:
    """The pattern as literal pieces and ``None`` for each star; raise WildcardError."""
    parts: list[bytes | None] = []
    literal = bytearray()
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == 0x5C:  # backslash
            nxt = pattern[i + 1 : i + 2]
            if nxt in (b"*", b"\\"):
                literal += nxt
                i += 2
                continue
            raise WildcardError(
                f"invalid wildcard: wildcard syntax error at position {i}: invalid escape sequence"
            )
        if c == 0x2A:  # star
            if pattern[i + 1 : i + 2] == b"*":
                raise WildcardError("wildcard contains a double star")
            if literal:
                parts.append(bytes(literal))
                literal = bytearray()
            parts.append(None)
            i += 1
            continue
        literal.append(c)
        i += 1
    if literal:
        parts.append(bytes(literal))
    stars = sum(1 for p in parts if p is None)
    if stars > STAR_LIMIT:
        raise WildcardError(
            f"wildcard has {stars} star metacharacters, but the limit is {STAR_LIMIT}"
        )
    return parts


def wildcard_tree(parts: list[bytes | None], case_sensitive: bool) -> Node:
    """A regex tree matching the whole value against ``parts``."""
    items: list[Node] = [Node("assert", name="bot")]
    for part in parts:
        if part is None:
            items.append(Node("rep", items=[Node("set", ranges=[(0, 0xFF)])], lo=0, hi=None))
            continue
        for b in part:
            ranges = [(b, b)]
            items.append(Node("set", ranges=ranges if case_sensitive else _fold_ascii(ranges)))
    items.append(Node("assert", name="eot"))
    return Node("cat", items=items)


class Wildcard:
    """A checked wildcard pattern."""

    def __init__(self, pattern: bytes, case_sensitive: bool) -> None:
        self.pattern = pattern
        self.case_sensitive = case_sensitive
        self.parts = split_wildcard(pattern)
        self.regex = Regex(
            pattern.decode("utf-8", "replace"), wildcard_tree(self.parts, case_sensitive)
        )
        fold = (lambda b: b) if case_sensitive else _ascii_lower
        self._fold = fold
        # Literal pieces between stars; a glob with only '*' matches greedily piece by piece.
        self._head = fold(self.parts[0]) if self.parts and self.parts[0] is not None else b""
        tail_piece = self.parts[-1] if self.parts and self.parts[-1] is not None else b""
        self._stars = any(p is None for p in self.parts)
        self._tail = fold(tail_piece) if self._stars else b""
        inner = self.parts[1:-1] if self._stars else []
        self._middle = [fold(p) for p in inner if p is not None]
        # The operator's predicate, under the same name as Regex.test.
        self.test = self.match

    def match(self, value: bytes) -> bool:
        """True when the whole ``value`` matches."""
        value = self._fold(value)
        if not self._stars:
            return value == self._head
        head, tail = self._head, self._tail
        if len(value) < len(head) + len(tail) or not value.startswith(head):
            return False
        if tail and not value.endswith(tail):
            return False
        # Leftmost placement of each middle piece is optimal for '*'-only globs.
        pos, end = len(head), len(value) - len(tail)
        for piece in self._middle:
            found = value.find(piece, pos, end)
            if found == -1:
                return False
            pos = found + len(piece)
        return True


_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


def _ascii_lower(data: bytes) -> bytes:
    return data.translate(_LOWER)


def parse_wildcard(pattern: bytes, case_sensitive: bool) -> Wildcard:
    """Check and compile a wildcard pattern (already unescaped as a string literal)."""
    return Wildcard(pattern, case_sensitive)
