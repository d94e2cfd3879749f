"""Building a filter expression from simple conditions (what the rule builder edits).

A condition is a field, an operator allowed for the field's type and a value
typed as text; :func:`build_expression` joins conditions with ``and``/``or``
and writes each value as the Rules language's literal for that type.
:func:`field_choices` orders the fields for a picker (the common ones first,
then the rest by family), :func:`search_fields` is its type-ahead, and
:func:`value_syntax` says what the value box takes for an operator.

    >>> build_expression([
    ...     Condition("http.request.uri.path", "contains", "/admin"),
    ...     Condition("ip.src", "in", "192.0.2.0/24 198.51.100.7", join="and"),
    ... ])
    'http.request.uri.path contains "/admin" and ip.src in {192.0.2.0/24 198.51.100.7}'
    >>> [f.name for f in field_choices()][:3]
    ['http.request.uri.path', 'ip.src', 'http.host']
    >>> [f.name for f in search_fields("COUNTRY")][:2]
    ['ip.src.country', 'ip.geoip.country']
    >>> value_syntax("ip.src", "in")
    'in takes addresses, CIDR ranges (192.0.2.0/24) or ranges (192.0.2.1..192.0.2.9), separated by spaces or commas'
    >>> value_syntax("ssl", "is true")
    'is true takes no value'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

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


#: Fields most rules start from: offered first by :func:`field_choices`.
COMMON_FIELDS: tuple[str, ...] = (
    "http.request.uri.path",
    "ip.src",
    "http.host",
    "ip.src.country",
    "http.user_agent",
)

#: Families (a field name's first part) in picker order, with what each is about.
FAMILIES: dict[str, str] = {
    "http": "the HTTP request",
    "ip": "the client's IP address and location",
    "ssl": "the connection's TLS",
    "cf": "Cloudflare's signals (scores, bots, TLS details, timings)",
    "raw": "the request as received, before normalisation",
}


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


@dataclass(frozen=True)
class FieldChoice:
    """A field as a picker offers it: name, friendly type, family, and whether it is common."""

    name: str
    type: str
    family: str
    common: bool = False


def _family(name: str) -> str:
    return name.split(".", 1)[0]


def field_choices() -> list[FieldChoice]:
    """Every pickable field once, in picker order.

    :data:`COMMON_FIELDS` first, then the rest grouped by family in
    :data:`FAMILIES` order (other families after, by name), each family in its
    schema groups' order.
    """
    return list(_choices())


@cache
def _choices() -> tuple[FieldChoice, ...]:
    pickable = [(name, kind) for items in pickable_fields().values() for name, kind in items]
    found = dict(pickable)
    common = [FieldChoice(n, found[n], _family(n), True) for n in COMMON_FIELDS if n in found]
    rank = {family: i for i, family in enumerate(FAMILIES)}
    rest = [FieldChoice(n, k, _family(n)) for n, k in pickable if n not in COMMON_FIELDS]
    rest.sort(key=lambda f: (rank.get(f.family, len(rank)), f.family))  # stable: keeps groups
    return (*common, *rest)


def search_fields(text: str) -> list[FieldChoice]:
    """The fields whose name contains ``text`` (any case), in picker order; all for ``""``."""
    needle = text.strip().lower()
    return [f for f in _choices() if needle in f.name.lower()]


def is_field(name: str) -> bool:
    """Whether ``name`` is a field the builder can compare."""
    return any(f.name == name for f in _choices())


_SYNTAX: dict[tuple[str, str], str] = {
    ("Bytes", "eq"): "text, compared whole and exactly (quotes are added for you)",
    ("Bytes", "ne"): "text, compared whole and exactly (quotes are added for you)",
    ("Bytes", "contains"): "text found anywhere in the value, case-sensitive",
    ("Bytes", "matches"): (
        "a regular expression, e.g. ^/wp-(admin|login); needs the Business or Enterprise plan"
    ),
    (
        "Bytes",
        "wildcard",
    ): "a pattern for the whole value: * is any text, case ignored, e.g. /admin/*",
    ("Bytes", "strict wildcard"): (
        "a pattern for the whole value: * is any text, case-sensitive, e.g. /Admin/*"
    ),
    ("Bytes", "in"): "values separated by spaces or commas, each quoted for you, e.g. GB, FR",
    (
        "Int",
        "in",
    ): "whole numbers or ranges lo..hi, separated by spaces or commas, e.g. 80 8000..8999",
    ("Ip", "eq"): "one IP address, e.g. 192.0.2.1 or 2001:db8::1 (for a CIDR range, use in)",
    ("Ip", "ne"): "one IP address, e.g. 192.0.2.1 or 2001:db8::1 (for a CIDR range, use in)",
    ("Ip", "in"): (
        "addresses, CIDR ranges (192.0.2.0/24) or ranges (192.0.2.1..192.0.2.9), "
        "separated by spaces or commas"
    ),
}


def value_syntax(field: str, operator: str) -> str:
    """What the value box takes for ``field operator``: ``"<operator> takes ..."``, with an example."""
    kind = field_type(field)
    if operator not in OPERATORS[kind]:
        raise ValueError(f"{operator} is not offered for {field}")
    if kind == "Bool":
        takes = "no value"
    elif (kind, operator) in _SYNTAX:
        takes = _SYNTAX[kind, operator]
    elif kind == "Int":
        takes = "a whole number, e.g. 50 or -1"
    else:  # Bytes lt/le/gt/ge
        takes = "text, compared byte by byte (quotes are added for you)"
    return f"{operator} takes {takes}"


_WHOLE = re.compile(r"^[+-]?\d+$")


def whole_number(name: str, text: str) -> int | None:
    """``text`` as an integer for the input called ``name``; None when it is empty.

    Negative numbers are integers too (the API says whether it takes them);
    anything else raises a ValueError that names the input.

        >>> whole_number("priority", " -3 "), whole_number("priority", "")
        (-3, None)
        >>> whole_number("priority", "1.5")
        Traceback (most recent call last):
        ...
        ValueError: priority takes a whole number (like 1 or 100), got '1.5'
    """
    text = text.strip()
    if not text:
        return None
    if not _WHOLE.match(text):
        raise ValueError(f"{name} takes a whole number (like 1 or 100), got {text!r}")
    return int(text)


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
