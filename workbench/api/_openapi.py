"""OpenAPI pieces for the routes: query parameters, request bodies, envelopes.

The routes read their input themselves (so every error is a v4 envelope);
these helpers only describe that input in ``/client/v4/openapi.json``.

    >>> [p["name"] for p in query("page", "per_page")["parameters"]]
    ['page', 'per_page']
"""

from __future__ import annotations

from typing import Any

from ..firewall.models import (
    ACTIONS,
    BYPASS_PRODUCTS,
    MAX_DESCRIPTION,
    MAX_EXPRESSION,
    MAX_PRIORITY,
    MAX_REF,
)
from ..firewall.pagerules import SECURITY_ACTIONS, STATUSES

_STR = {"type": "string"}
_QUERY: dict[str, dict[str, Any]] = {
    "id": _STR,
    "ids": {"type": "array", "items": _STR},
    "description": _STR,
    "expression": _STR,
    "ref": _STR,
    "action": {"type": "string", "enum": sorted(ACTIONS)},
    "paused": {"type": "boolean"},
    "page": {"type": "integer", "minimum": 1},
    "per_page": {"type": "integer", "minimum": 5, "maximum": 100},
    "zones_per_page": {"type": "integer", "minimum": 5, "maximum": 50},
    "name": _STR,
    "status": {"type": "string", "enum": list(STATUSES)},
    "order": {"type": "string", "enum": ["priority", "status"]},
    "direction": {"type": "string", "enum": ["asc", "desc"]},
    "match": {"type": "string", "enum": ["any", "all"]},
}
_RENAMED = {"ids": "id", "zones_per_page": "per_page"}


def query(
    *names: str, schemas: dict[str, dict[str, Any]] = _QUERY, required: bool = False
) -> dict[str, Any]:
    """``openapi_extra`` declaring query parameters by name (optional unless ``required``),
    their schemas from ``schemas`` (by default ``_QUERY``: Filters, Firewall Rules, zones)."""
    params = []
    for name in names:
        param = {"name": _RENAMED.get(name, name), "in": "query", "required": required}
        param["schema"] = schemas[name]
        if name == "ids":
            param.update(style="form", explode=True)
        params.append(param)
    return {"parameters": params}


def body(schema: dict[str, Any], *, required: bool = True) -> dict[str, Any]:
    """``openapi_extra`` declaring a JSON request body."""
    return {
        "requestBody": {
            "required": required,
            "content": {"application/json": {"schema": schema}},
        }
    }


def merge(*parts: dict[str, Any]) -> dict[str, Any]:
    """Combine several ``openapi_extra`` dicts."""
    out: dict[str, Any] = {}
    for part in parts:
        out.update(part)
    return out


FILTER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "expression": {"type": "string", "maxLength": MAX_EXPRESSION},
        "paused": {"type": "boolean"},
        "description": {"type": "string", "maxLength": MAX_DESCRIPTION},
        "ref": {"type": "string", "maxLength": MAX_REF},
    },
}
NEW_FILTER = {**FILTER, "required": ["expression"]}
FILTER_UPDATE = {**FILTER, "properties": {"id": _STR, **FILTER["properties"]}, "required": ["id"]}
_RULE_PROPS = {
    "action": {"type": "string", "enum": sorted(ACTIONS)},
    "paused": {"type": "boolean"},
    "description": {"type": "string", "maxLength": MAX_DESCRIPTION},
    "ref": {"type": "string", "maxLength": MAX_REF},
    "priority": {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_PRIORITY},
    "products": {"type": "array", "items": {"type": "string", "enum": list(BYPASS_PRODUCTS)}},
}
FILTER_REF = {"type": "object", "properties": {"id": _STR}, "required": ["id"]}
NEW_RULE = {
    "type": "object",
    "properties": {"filter": {"anyOf": [FILTER_REF, NEW_FILTER]}, **_RULE_PROPS},
    "required": ["action", "filter"],
}
RULE_UPDATE = {
    "type": "object",
    "properties": {"id": _STR, "filter": FILTER_REF, **_RULE_PROPS},
    "required": ["id"],
}
PRIORITY = {
    "type": "object",
    "properties": {"id": _STR, "priority": _RULE_PROPS["priority"]},
}
_TARGET = {
    "type": "object",
    "properties": {
        "target": {"type": "string", "enum": ["url"]},
        "constraint": {
            "type": "object",
            "properties": {
                "operator": {"type": "string", "enum": ["matches"]},
                "value": {"type": "string", "maxLength": 255},
            },
            "required": ["value"],
        },
    },
    "required": ["target", "constraint"],
}
_PAGE_ACTION = {
    "type": "object",
    "properties": {"id": {"type": "string", "enum": list(SECURITY_ACTIONS)}, "value": _STR},
    "required": ["id"],
}
PAGE_RULE = {
    "type": "object",
    "properties": {
        "targets": {"type": "array", "items": _TARGET, "minItems": 1, "maxItems": 1},
        "actions": {"type": "array", "items": _PAGE_ACTION, "minItems": 1},
        "priority": {"type": "integer", "minimum": 1},
        "status": {"type": "string", "enum": list(STATUSES)},
    },
}
NEW_PAGE_RULE = {**PAGE_RULE, "required": ["targets", "actions"]}
NEW_ZONE = {
    "type": "object",
    "properties": {
        "name": _STR,
        "plan": {
            "type": "object",
            "properties": {
                "legacy_id": {"type": "string", "enum": ["free", "pro", "business", "enterprise"]}
            },
        },
    },
    "required": ["name"],
}
VALIDATE = {"type": "object", "properties": {"expression": _STR}, "required": ["expression"]}


def array(item: dict[str, Any], most: int = 25) -> dict[str, Any]:
    """A JSON array schema of 1..``most`` items."""
    return {"type": "array", "items": item, "minItems": 1, "maxItems": most}


_MESSAGE = {
    "type": "object",
    "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
    "required": ["code", "message"],
}
ENVELOPE = {
    "type": "object",
    "properties": {
        "success": {"type": "boolean"},
        "errors": {"type": "array", "items": _MESSAGE},
        "messages": {"type": "array", "items": _MESSAGE},
        "result": {},
        "result_info": {"type": "object"},
    },
    "required": ["success", "errors", "messages", "result"],
}
RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "success envelope",
        "content": {"application/json": {"schema": ENVELOPE}},
    },
    "4XX": {
        "description": "failure envelope (success is false, errors holds code and message)",
        "content": {"application/json": {"schema": ENVELOPE}},
    },
}
