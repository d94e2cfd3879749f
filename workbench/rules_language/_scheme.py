"""Schemes: the fields an expression may name, with their types.

Two schemes ship with the workbench: ``http`` (firewall rules, WAF, rulesets)
and ``magic_firewall`` (packet fields). The field tables are data
(``schemes.json``), taken from the engine's registration list.

    >>> from workbench.rules_language import get_scheme
    >>> http = get_scheme("http")
    >>> str(http.field_type("http.request.headers")), http.field_type("nope") is None
    ('Map<Array<Bytes>>', True)
    >>> http.field_type("cf.waf.crs.rules") is None, str(get_scheme(MANAGED).field_type("cf.waf.crs.rules"))
    (True, 'Array<Int>')
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from .types import Type, parse_type


@dataclass(frozen=True)
class FieldInfo:
    """One field: its name, type, documentation group and whether the schema lists it."""

    name: str
    type: Type
    group: str
    hidden: bool


class Scheme:
    """A named set of fields."""

    def __init__(self, name: str, fields: dict[str, FieldInfo]) -> None:
        self.name = name
        self.fields = fields

    def field_type(self, name: str) -> Type | None:
        """The type of ``name``, or None when the scheme has no such field."""
        info = self.fields.get(name)
        return None if info is None else info.type

    def __repr__(self) -> str:
        return f"Scheme({self.name!r}, {len(self.fields)} fields)"


#: The scheme of managed rulesets' expressions: ``http`` plus the fields only managed rules
#: may read (the CRS program's results). A user's rule is compiled with ``http`` and never
#: sees them: naming one is an unknown identifier, as on the platform.
MANAGED = "http_managed"


@cache
def get_scheme(name: str = "http") -> Scheme:
    """The scheme called ``name`` (``http``, ``magic_firewall``, or :data:`MANAGED`)."""
    data = json.loads(resources.files(__package__).joinpath("schemes.json").read_text("utf-8"))
    if name not in data:
        raise ValueError(f"unknown scheme {name!r}; known: {', '.join(sorted(data))}")
    specs = {**data["http"], **data[name]} if name == MANAGED else data[name]
    fields = {
        fname: FieldInfo(fname, parse_type(spec["type"]), spec["group"], spec["hidden"])
        for fname, spec in specs.items()
    }
    return Scheme(name, fields)
