"""Types of the Rules language, named and printed as the engine prints them.

The engine calls strings ``Bytes``; arrays and maps nest (``Map<Array<Bytes>>``).
Two spellings exist in error messages: ``Array<Bytes>`` in argument errors and
the Rust debug form ``Array(CompoundType { ... })`` in operator errors.

    >>> from workbench.rules_language.types import ARRAY, BYTES, MAP
    >>> t = MAP(ARRAY(BYTES))
    >>> str(t), t.debug()
    ('Map<Array<Bytes>>', 'Map(CompoundType { layers: 0, len: 1, primitive: Bytes })')
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Type:
    """A Rules-language type: a primitive name, or ``Array``/``Map`` of an element type."""

    kind: str  # "Bytes", "Int", "Bool", "Ip", "Array", "Map"
    element: Type | None = None

    def __str__(self) -> str:
        if self.element is None:
            return self.kind
        return f"{self.kind}<{self.element}>"

    @property
    def is_compound(self) -> bool:
        """True for arrays and maps."""
        return self.element is not None

    @property
    def element_type(self) -> Type:
        """The element type of an array or map (a primitive type has none: ValueError)."""
        if self.element is None:
            raise ValueError(f"{self} has no element type")
        return self.element

    def debug(self) -> str:
        """The engine's Rust debug spelling, used in 'cannot perform this operation' errors."""
        if self.element is None:
            return self.kind
        layers, length, inner = 0, 0, self.element
        while inner.element is not None:
            if inner.kind == "Map":
                layers |= 1 << length
            length += 1
            inner = inner.element
        return (
            f"{self.kind}(CompoundType {{ layers: {layers}, len: {length}, "
            f"primitive: {inner.kind} }})"
        )

    @property
    def friendly(self) -> str:
        """The name the platform's documentation uses (String, Integer, Boolean, IP address)."""
        names = {"Bytes": "String", "Int": "Integer", "Bool": "Boolean", "Ip": "IP address"}
        if self.element is None:
            return names[self.kind]
        return f"{self.kind}<{self.element.friendly}>"


BYTES = Type("Bytes")
INT = Type("Int")
BOOL = Type("Bool")
IP = Type("Ip")


def ARRAY(element: Type) -> Type:  # noqa: N802 - reads like the type it builds
    """``Array<element>``."""
    return Type("Array", element)


def MAP(element: Type) -> Type:  # noqa: N802
    """``Map<element>`` (keys are always Bytes)."""
    return Type("Map", element)


def parse_type(text: str) -> Type:
    """Parse the facts-file spelling: ``String``, ``Integer``, ``Array<String>``, ``Map<Array<String>>``."""
    text = text.strip()
    simple = {
        "String": BYTES,
        "Bytes": BYTES,
        "Integer": INT,
        "Int": INT,
        "Boolean": BOOL,
        "Bool": BOOL,
        "IP address": IP,
        "Ip": IP,
    }
    if text in simple:
        return simple[text]
    for kind in ("Array", "Map"):
        if text.startswith(kind + "<") and text.endswith(">"):
            return Type(kind, parse_type(text[len(kind) + 1 : -1]))
    raise ValueError(f"unknown type {text!r}")


def default_value(t: Type) -> object:
    """The value a field has when a request does not set it (the platform always sets fields)."""
    if t.kind == "Bytes":
        return ""
    if t.kind == "Int":
        return 0
    if t.kind == "Bool":
        return False
    if t.kind == "Array":
        return []
    if t.kind == "Map":
        return {}
    return None  # an IP has no neutral value: it reads as missing
