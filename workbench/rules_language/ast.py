"""The typed syntax tree the parser builds and both evaluators walk.

Every node records where it came from (``start``/``end`` character offsets)
and its type. A value node with ``each`` set stands for "every element"
(``[*]``): comparing it gives ``Array<Bool>``, usable only inside any()/all().

    >>> from workbench.rules_language.parser import parse
    >>> tree = parse('http.host eq "a" and not ssl')
    >>> type(tree).__name__, [type(i).__name__ for i in tree.items]
    ('Logical', ['Compare', 'Not'])
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .types import Type

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
STAR = None  # the key of a [*] index


@dataclass(eq=False)
class Node:
    """Base of all nodes: source span and type."""

    start: int
    end: int
    type: Type
    each: bool = False


@dataclass(eq=False)
class FieldRef(Node):
    """A scheme field, by name."""

    name: str = ""


@dataclass(eq=False)
class Literal(Node):
    """A literal: ``bytes`` for strings, ``int``, or an IP address."""

    value: Any = None


@dataclass(eq=False)
class Index(Node):
    """``base[N]``, ``base["key"]`` or ``base[*]`` (key is int, bytes or STAR)."""

    base: Node = field(kw_only=True)
    key: int | bytes | None = None


@dataclass(eq=False)
class Call(Node):
    """A function call. ``mapped``: the first argument was ``[*]``, so the call maps over it."""

    name: str = ""
    args: list[Node] = field(default_factory=list)
    mapped: bool = False
    impl: Callable[..., Any] | None = None  # the per-request function, built by the parser


@dataclass(eq=False)
class SetLiteral:
    """``{...}``: strings as bytes, ints as (lo, hi) ranges, IPs as networks and ranges."""

    start: int
    end: int
    strings: frozenset[bytes] = frozenset()
    int_ranges: tuple[tuple[int, int], ...] = ()
    ip_ranges: tuple[tuple[IPAddress, IPAddress], ...] = ()


@dataclass(eq=False)
class ListRef:
    """``$name``: a named list, resolved at evaluation time."""

    start: int
    end: int
    name: str = ""


@dataclass(eq=False)
class Pattern:
    """The right side of ``matches`` or ``wildcard``: source text and compiled form."""

    start: int
    end: int
    text: bytes = b""
    compiled: Any = None


@dataclass(eq=False)
class Compare(Node):
    """``lhs op rhs``. ``rhs`` is a value node, a SetLiteral, a ListRef or a Pattern."""

    lhs: Node = field(kw_only=True)
    op: str = ""
    rhs: Any = None


@dataclass(eq=False)
class Not(Node):
    """``not x``."""

    operand: Node = field(kw_only=True)


@dataclass(eq=False)
class Logical(Node):
    """A flat chain of ``and``, ``or`` or ``xor``."""

    op: str = ""
    items: list[Node] = field(default_factory=list)
    grouped: bool = False  # in parentheses: later operators do not extend the chain


@dataclass(eq=False)
class Empty(Node):
    """The empty expression (accepted by the engine; matches nothing here)."""


def walk(node: Any) -> Iterator[Any]:
    """Yield ``node`` and every node below it."""
    yield node
    children: list[Any] = []
    if isinstance(node, Index):
        children = [node.base]
    elif isinstance(node, Call):
        children = node.args
    elif isinstance(node, Compare):
        children = [node.lhs, node.rhs]
    elif isinstance(node, Not):
        children = [node.operand]
    elif isinstance(node, Logical):
        children = node.items
    for child in children:
        if child is not None:
            yield from walk(child)
