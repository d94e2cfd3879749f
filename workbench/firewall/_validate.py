"""Checks on what a client sends for filters and rules, shared by every face.

Each checker takes plain JSON-like data and returns a cleaned dict with only
the keys the client gave, or raises :class:`~workbench.core.errors.ValidationError`
whose ``source.pointer`` names the offending part of the body.

    >>> sorted(filter_fields({"expression": 'ip.src eq 1.2.3.4', "paused": False}, "/0"))
    ['compiled', 'expression', 'paused']
    >>> rule_fields({"action": "fly"}, "/0", creating=True)
    Traceback (most recent call last):
    ...
    workbench.firewall.errors.InvalidFirewallInput: /0/action: 'fly' is not an action; use one of allow, block, bypass, challenge, js_challenge, log, managed_challenge

Text that cannot be encoded as UTF-8 (a lone surrogate) is refused in every
field, and in every key, before anything else is checked or compiled:

    >>> batch([{"expression": "ssl", "description": "\\ud800"}], "filters")
    Traceback (most recent call last):
    ...
    workbench.firewall.errors.InvalidFirewallInput: /0/description: holds a lone surrogate (U+D800) at character 1, which cannot be encoded as UTF-8
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.errors import json_kind
from ..core.text import unencodable_strings, utf8_problem
from ..rules_language import ExpressionError, compile_expression
from .errors import InvalidFirewallInput
from .models import (
    ACTIONS,
    BYPASS_PRODUCTS,
    MAX_BATCH,
    MAX_DESCRIPTION,
    MAX_EXPRESSION,
    MAX_PRIORITY,
    MAX_REF,
)


def invalid(pointer: str, message: str) -> InvalidFirewallInput:
    """A validation error about the part of the body at ``pointer``."""
    return InvalidFirewallInput(pointer, message)


def refuse_unencodable(body: Any, pointer: str = "") -> None:
    """Refuse ``body`` when any string in it, or any key, cannot be encoded as UTF-8.

    Run first on everything a write receives, so such text is never stored,
    compiled or quoted in another error.
    """
    for where, problem in unencodable_strings(body, pointer):
        raise invalid(where, problem)


def encodable(value: str, pointer: str) -> str:
    """``value`` when it can be encoded as UTF-8; else the error pointing at ``pointer``."""
    problem = utf8_problem(value)
    if problem is not None:
        raise invalid(pointer, problem)
    return value


def with_path_id(item: Any, object_id: str, what: str) -> dict[str, Any]:
    """The body of a call on one object (``PUT .../{id}``) as an item of the batch call.

    It must be a JSON object with encodable text; its ``id`` may be left out but
    must not name another ``what`` (filter, rule) than the path's ``object_id``.
    """
    if not isinstance(item, Mapping):
        raise invalid("", "the body must be a JSON object")
    refuse_unencodable(dict(item))
    if "id" in item and item["id"] != object_id:
        raise invalid("/id", f"does not match the {what} id in the path")
    return {**item, "id": object_id}


def batch(body: Any, what: str) -> list[Mapping[str, Any]]:
    """The body as a list of objects, 1 to MAX_BATCH long, all of its text encodable."""
    if not isinstance(body, list):
        raise invalid("", f"the body must be a JSON array of {what}")
    if not body:
        raise invalid("", f"the array of {what} is empty")
    if len(body) > MAX_BATCH:
        raise invalid("", f"at most {MAX_BATCH} {what} per request, got {len(body)}")
    for i, item in enumerate(body):
        if not isinstance(item, Mapping):
            raise invalid(f"/{i}", f"each element must be a JSON object, got {json_kind(item)}")
        refuse_unencodable(dict(item), f"/{i}")
    return body


def _text(item: Mapping[str, Any], key: str, pointer: str, limit: int) -> str:
    value = item[key]
    if not isinstance(value, str):
        raise invalid(f"{pointer}/{key}", f"must be a string, got {json_kind(value)}")
    encodable(value, f"{pointer}/{key}")
    if len(value) > limit:
        raise invalid(f"{pointer}/{key}", f"is {len(value)} characters long; the limit is {limit}")
    return value


def _bool(item: Mapping[str, Any], key: str, pointer: str) -> bool:
    value = item[key]
    if not isinstance(value, bool):
        raise invalid(f"{pointer}/{key}", f"must be true or false, got {json_kind(value)}")
    return value


def compile_checked(expression: Any, pointer: str) -> Any:
    """Compile a filter expression or raise a ValidationError carrying the parser's message."""
    if not isinstance(expression, str):
        raise invalid(pointer, f"must be a string, got {json_kind(expression)}")
    encodable(expression, pointer)  # before the parser ever sees it
    if not expression.strip():
        raise invalid(pointer, "the expression is empty")
    if len(expression) > MAX_EXPRESSION:
        raise invalid(
            pointer, f"is {len(expression)} characters long; the limit is {MAX_EXPRESSION}"
        )
    try:
        return compile_expression(expression)
    except ExpressionError as exc:
        # The engine's own text is the message users know from the real API.
        raise InvalidFirewallInput.at(pointer, str(exc)) from None
    except RecursionError:
        raise invalid(pointer, "the expression is nested too deeply") from None


def filter_fields(item: Mapping[str, Any], pointer: str, *, creating: bool = True) -> dict:
    """The filter fields given in ``item``; ``expression`` is required when creating.

    A checked expression comes back with its compiled form under ``compiled``.
    """
    out: dict[str, Any] = {}
    if "expression" in item:
        out["compiled"] = compile_checked(item["expression"], f"{pointer}/expression")
        out["expression"] = item["expression"]
    elif creating:
        raise invalid(f"{pointer}/expression", "is required")
    out.update(_shared_fields(item, pointer))
    return out


def _shared_fields(item: Mapping[str, Any], pointer: str) -> dict[str, Any]:
    """``paused``, ``description`` and ``ref``: the same rules on filters and rules."""
    out: dict[str, Any] = {}
    if "paused" in item:
        out["paused"] = _bool(item, "paused", pointer)
    if "description" in item:
        out["description"] = _text(item, "description", pointer, MAX_DESCRIPTION)
    if "ref" in item:
        out["ref"] = _text(item, "ref", pointer, MAX_REF)
    return out


def object_id(item: Mapping[str, Any], pointer: str) -> str:
    """The ``id`` an item must carry (for updates)."""
    if "id" not in item:
        raise invalid(f"{pointer}/id", "is required")
    if not isinstance(item["id"], str) or not item["id"]:
        raise invalid(f"{pointer}/id", f"must be an identifier string, got {json_kind(item['id'])}")
    return encodable(item["id"], f"{pointer}/id")


def rule_fields(item: Mapping[str, Any], pointer: str, *, creating: bool) -> dict:
    """The rule fields given in ``item``.

    ``filter`` becomes ``{"id": ...}`` (a reference) or, when creating, the
    checked fields of an inline filter. ``action`` and ``filter`` are required
    when creating.
    """
    out: dict[str, Any] = {}
    if "action" in item:
        action = item["action"]
        if not isinstance(action, str) or action not in ACTIONS:
            shown = repr(action) if isinstance(action, str) else json_kind(action)
            raise invalid(
                f"{pointer}/action",
                f"{shown} is not an action; use one of {', '.join(sorted(ACTIONS))}",
            )
        out["action"] = action
    elif creating:
        raise invalid(f"{pointer}/action", "is required")
    if "filter" in item:
        out["filter"] = _rule_filter(item["filter"], f"{pointer}/filter", creating=creating)
    elif creating:
        raise invalid(f"{pointer}/filter", "is required")
    out.update(_shared_fields(item, pointer))
    if "priority" in item:
        out["priority"] = priority_value(item["priority"], f"{pointer}/priority")
    if "products" in item:
        out["products"] = _products(item["products"], f"{pointer}/products")
    return out


def priority_value(value: Any, pointer: str) -> int | None:
    """``null`` or a whole number 0..2147483647."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid(pointer, f"must be null or a whole number, got {json_kind(value)}")
    if not 0 <= value <= MAX_PRIORITY:
        raise invalid(pointer, f"must be between 0 and {MAX_PRIORITY}, got {value}")
    return value


def _products(value: Any, pointer: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise invalid(pointer, "must be an array of product names")
    for i, product in enumerate(value):
        encodable(product, f"{pointer}/{i}")
    unknown = [p for p in value if p not in BYPASS_PRODUCTS]
    if unknown:
        raise invalid(
            pointer, f"unknown product {unknown[0]!r}; use any of {', '.join(BYPASS_PRODUCTS)}"
        )
    return list(dict.fromkeys(value))


def _rule_filter(value: Any, pointer: str, *, creating: bool) -> dict:
    if not isinstance(value, Mapping):
        raise invalid(pointer, f"must be an object, got {json_kind(value)}")
    if "id" in value:
        # A reference to an existing filter; other fields are ignored because a
        # rule call never edits a filter.
        return {"id": object_id(value, pointer)}
    if not creating:
        raise invalid(
            f"{pointer}/id",
            "is required: a rule update only re-points the rule to a filter; "
            "change expressions with the Filters API",
        )
    return filter_fields(value, pointer, creating=True)
