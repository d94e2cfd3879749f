"""Building a filter expression from simple conditions (what the rule builder edits).

A condition is a field, an operator allowed for the field's type and a value
typed as text; :func:`build_expression` joins conditions with ``and``/``or``
and writes each value as the Rules language's literal for that type.

    >>> build_expression([
    ...     Condition("http.request.uri.path", "contains", "/admin"),
    ...     Condition("ip.src", "in", "192.0.2.0/24 198.51.100.7", join="and"),
    ... ])
    'http.request.uri.path contains "/admin" and ip.src in {192.0.2.0/24 198.51.100.7}'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..rules_language import get_scheme

# Operators the builder offers per primitive type (rules-language facts, section 3).
OPERATORS: dict[str, tuple[str, ...]] = {
    "Bytes": (
        "eq",
        "ne",
        "contains",
        "matches",
        "wildcard",
        "strict wildcard",
        "in",
        "lt",
        "le",
        "gt",
        "ge",
    ),
    "Int": ("eq", "ne", "lt", "le", "gt", "ge", "in"),
    "Ip": ("eq", "ne", "in"),
    "Bool": ("is true", "is false"),
}
_INT = re.compile(r"^-?\d+$")
_INT_RANGE = re.compile(r"^-?\d+\.\.-?\d+$")


@dataclass
class Condition:
    """``field operator value``; ``join`` links it to the condition before it."""

    field: str
    operator: str
    value: str = ""
    join: str = "and"


def field_type(field: str) -> str:
    """The primitive type name (``Bytes``, ``Int``, ``Ip``, ``Bool``) of a pickable field."""
    found = get_scheme("http").field_type(field)
    if found is None or found.is_compound:
        raise ValueError(f"{field} is not a field the builder can compare")
    return found.kind


def pickable_fields() -> dict[str, list[tuple[str, str]]]:
    """Fields with a primitive type, by group: ``{group: [(name, "String"), ...]}``.

    Fields the engine's schema listing hides (``http.request.uri.path``, the
    ``ip.geoip.*`` aliases...) are offered too: they are documented and parse.
    """
    out: dict[str, list[tuple[str, str]]] = {}
    for info in sorted(get_scheme("http").fields.values(), key=lambda f: (f.group, f.name)):
        if not info.type.is_compound:
            out.setdefault(info.group, []).append((info.name, info.type.friendly))
    return out


def operators_for(field: str) -> tuple[str, ...]:
    """The operators the builder offers for ``field``."""
    return OPERATORS[field_type(field)]


def quote(text: str) -> str:
    """A Rules-language quoted string (only ``\\`` and ``"`` need escaping)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _regex_quote(text: str) -> str:
    # In regex context only \" is unescaped, so backslashes pass through as typed.
    return '"' + text.replace('"', '\\"') + '"'


def literal(kind: str, operator: str, value: str) -> str:
    """The right-hand side for ``operator`` on a field of type ``kind``."""
    value = value.strip()
    if operator == "in":
        items = [v for v in re.split(r"[\s,]+", value) if v]
        if not items:
            raise ValueError("in needs at least one value")
        if kind == "Bytes":
            return "{" + " ".join(quote(v) for v in items) + "}"
        if kind == "Int" and not all(_INT.match(v) or _INT_RANGE.match(v) for v in items):
            raise ValueError(f"in on an Integer field takes whole numbers, got {value!r}")
        return "{" + " ".join(items) + "}"
    if kind == "Bytes":
        return _regex_quote(value) if operator == "matches" else quote(value)
    if not value:
        raise ValueError("a value is needed")
    if kind == "Int" and not _INT.match(value):
        raise ValueError(f"an Integer field takes a whole number, got {value!r}")
    return value


def render(condition: Condition) -> str:
    """One condition as expression text."""
    kind = field_type(condition.field)
    if condition.operator not in OPERATORS[kind]:
        raise ValueError(f"{condition.operator} is not offered for {condition.field}")
    if kind == "Bool":
        return condition.field if condition.operator == "is true" else f"not {condition.field}"
    return f"{condition.field} {condition.operator} {literal(kind, condition.operator, condition.value)}"


def build_expression(conditions: list[Condition]) -> str:
    """Join rendered conditions; the first condition's ``join`` is ignored."""
    parts = []
    for i, condition in enumerate(conditions):
        if condition.join not in ("and", "or"):
            raise ValueError(f"join must be and or or, got {condition.join!r}")
        text = render(condition)
        parts.append(text if i == 0 else f"{condition.join} {text}")
    return " ".join(parts)
