"""Checks on what a client sends to the old WAF, shared by every face.

Each checker takes plain JSON-like data and returns the cleaned values, or
raises :class:`~workbench.waf_legacy.errors.InvalidWafInput` naming the body
field (``source.pointer``) or query parameter (``source.parameter``).
Text that cannot be encoded as UTF-8 is refused before anything else.

    >>> mode_body({"mode": "off"}, ("on", "off"))
    'off'
    >>> mode_body({"mode": "fly"}, ("on", "off"))
    Traceback (most recent call last):
    ...
    workbench.waf_legacy.errors.InvalidWafInput: /mode: must be one of on, off, got 'fly'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.text import quotable, unencodable_strings
from ..rules_language import ExpressionError, compile_expression
from .catalog import ON_OFF, Catalog
from .errors import InvalidWafInput
from .models import (
    ACTION_MODES,
    OVERRIDE_ACTIONS,
    OVERRIDE_GROUP_ACTIONS,
    SENSITIVITIES,
)
from .urls import url_pattern_expression

MAX_DESCRIPTION = 500
MAX_URL = 255
MAX_OVERRIDE_PRIORITY = 1_000_000_000
#: Short forms of rule modes some clients send as the ``mode`` filter of the rules list.
MODE_ALIASES = {"DIS": "disable", "CHL": "challenge", "BLK": "block", "SIM": "simulate"}
_OVERRIDE_FIELDS = (
    "id",
    "urls",
    "rules",
    "groups",
    "rewrite_action",
    "priority",
    "description",
    "paused",
)


def bad(pointer: str, message: str) -> InvalidWafInput:
    """A validation error about the body at ``pointer``."""
    return InvalidWafInput.body(pointer, message)


def shown(value: Any) -> str:
    """``repr(value)`` as a message may quote it (encodable, not huge)."""
    text = repr(value)
    text = text if len(text) <= 80 else text[:77] + "..."
    return quotable(text)


def body_object(body: Any, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    """``body`` when it is an object with only ``allowed`` keys and encodable text."""
    if not isinstance(body, Mapping):
        raise bad("", "the body must be a JSON object")
    for where, problem in unencodable_strings(dict(body)):
        raise bad(where, problem)
    for key in body:
        if key not in allowed:
            raise bad(f"/{key}", f"is not a field here; use {', '.join(allowed)}")
    return body


def one_of(value: Any, allowed: tuple[str, ...], pointer: str) -> str:
    """``value`` when it is one of ``allowed``."""
    if not isinstance(value, str) or value not in allowed:
        raise bad(pointer, f"must be one of {', '.join(allowed)}, got {shown(value)}")
    return value


def mode_body(body: Any, allowed: tuple[str, ...]) -> str:
    """The ``mode`` of a group or rule PATCH body, one of ``allowed``."""
    return _only_field(body, "mode", allowed)


def package_body(body: Any) -> dict[str, str]:
    """The ``sensitivity`` and ``action_mode`` a package PATCH changes (either may be absent)."""
    data = body_object(body, ("sensitivity", "action_mode"))
    out = {}
    if "sensitivity" in data:
        out["sensitivity"] = one_of(data["sensitivity"], SENSITIVITIES, "/sensitivity")
    if "action_mode" in data:
        out["action_mode"] = one_of(data["action_mode"], ACTION_MODES, "/action_mode")
    return out


def setting_body(body: Any) -> str:
    """The ``value`` of a ``waf`` setting PATCH."""
    return _only_field(body, "value", ON_OFF)


def _only_field(body: Any, name: str, allowed: tuple[str, ...]) -> str:
    """The one field ``name`` a body must hold (and nothing else), one of ``allowed``."""
    data = body_object(body, (name,))
    if name not in data:
        raise bad(f"/{name}", "is required")
    return one_of(data[name], allowed, f"/{name}")


def override_body(body: Any, catalog: Catalog, override_id: str | None = None) -> dict[str, Any]:
    """The fields of an override POST (or PUT of ``override_id``), checked in full.

    ``urls`` is required, and ``rules`` or ``groups``; rule and group ids must
    name catalogue rules and groups, with actions they accept. Optional fields
    left out take their defaults (``priority`` 1, not paused, no description).
    """
    data = body_object(body, _OVERRIDE_FIELDS)
    if "id" in data and (override_id is None or data["id"] != override_id):
        raise bad("/id", "does not match the override id in the path")
    out: dict[str, Any] = {"urls": _urls(data.get("urls"))}
    if not data.get("rules") and not data.get("groups"):
        raise bad("", "an override must include rules or groups (or both)")
    out["rules"] = _rule_actions(data.get("rules"), catalog)
    out["groups"] = _group_actions(data.get("groups"), catalog)
    out["rewrite_action"] = _rewrite(data.get("rewrite_action"))
    priority = data.get("priority", 1)
    if (
        not isinstance(priority, int)
        or isinstance(priority, bool)
        or not -MAX_OVERRIDE_PRIORITY <= priority <= MAX_OVERRIDE_PRIORITY
    ):
        raise bad("/priority", "must be a whole number from -1000000000 to 1000000000")
    out["priority"] = priority
    description = data.get("description")
    if description is not None and (
        not isinstance(description, str) or len(description) > MAX_DESCRIPTION
    ):
        raise bad("/description", f"must be text of at most {MAX_DESCRIPTION} characters")
    out["description"] = description
    paused = data.get("paused", False)
    if not isinstance(paused, bool):
        raise bad("/paused", "must be true or false")
    out["paused"] = paused
    return out


def _urls(value: Any) -> list[str]:
    if value is None:
        raise bad("/urls", "is required")
    if not isinstance(value, list) or not value:
        raise bad("/urls", "must be a non-empty array of URL patterns")
    for i, url in enumerate(value):
        if not isinstance(url, str) or not url.strip() or len(url) > MAX_URL:
            raise bad(f"/urls/{i}", f"must be a URL pattern of 1 to {MAX_URL} characters")
        try:
            compile_expression(url_pattern_expression(url))
        except ExpressionError as exc:
            raise bad(f"/urls/{i}", f"is not a usable URL pattern: {exc}") from None
    return list(value)


def _map(value: Any, pointer: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise bad(pointer, "must be an object")
    return value


def _rule_actions(value: Any, catalog: Catalog) -> dict[str, str]:
    out = {}
    for rule_id, action in _map(value, "/rules").items():
        pointer = f"/rules/{rule_id}"
        rules = catalog.rules_named(rule_id)
        if not rules:
            raise bad(pointer, "names no rule of any WAF package")
        for rule in rules:
            # On/off rules also take the override vocabulary's default and disable.
            allowed = (
                rule.allowed_modes if rule.kind == "deny" else ("on", "off", "default", "disable")
            )
            one_of(action, allowed, pointer)
        out[rule_id] = action
    return out


def _group_actions(value: Any, catalog: Catalog) -> dict[str, str]:
    out = {}
    for group_id, action in _map(value, "/groups").items():
        pointer = f"/groups/{group_id}"
        if not catalog.groups_named(group_id):
            raise bad(pointer, "names no group of any WAF package")
        out[group_id] = one_of(action, OVERRIDE_GROUP_ACTIONS, pointer)
    return out


def _rewrite(value: Any) -> dict[str, str]:
    out = {}
    for key, action in _map(value, "/rewrite_action").items():
        if key not in OVERRIDE_ACTIONS:
            raise bad(
                f"/rewrite_action/{key}",
                f"is not an action to rewrite; keys must be one of {', '.join(OVERRIDE_ACTIONS)}",
            )
        out[key] = one_of(action, OVERRIDE_ACTIONS, f"/rewrite_action/{key}")
    return out


# -- query parameters -------------------------------------------------------------
def query_choice(value: str | None, name: str, allowed: tuple[str, ...]) -> str | None:
    """A query value that must be one of ``allowed`` (None when absent)."""
    if value is None:
        return None
    if value not in allowed:
        raise InvalidWafInput.query(
            name, f"must be one of {', '.join(allowed)}, got {shown(value)}"
        )
    return value


def query_whole(value: str | None, name: str) -> int | None:
    """A query value that must be a whole number (None when absent)."""
    if value is None:
        return None
    if not value.isascii() or not value.isdigit() or len(value) > 12:
        raise InvalidWafInput.query(name, f"must be a whole number, got {shown(value)}")
    return int(value)
