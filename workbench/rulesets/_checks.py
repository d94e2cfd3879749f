"""Small checks on JSON-like input, each raising an error that points at the bad part.

>>> only_keys({"rules": [], "kind": "zone"}, ("rules",), "")
Traceback (most recent call last):
...
workbench.rulesets.errors.UnknownField: invalid JSON: unknown field "kind"
>>> pointer_to("/rules", "a/b")
'/rules/a~1b'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core.errors import json_kind
from .errors import InvalidRulesetInput, UnknownField


def invalid(pointer: str, message: str) -> InvalidRulesetInput:
    """A validation error about the part of the body at ``pointer``."""
    return InvalidRulesetInput(pointer, message)


def pointer_to(pointer: str, key: object) -> str:
    """``pointer`` extended by one key, escaped as JSON Pointer requires (``~0``, ``~1``)."""
    return f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"


def obj(value: Any, pointer: str) -> Mapping[str, Any]:
    """``value`` when it is a JSON object."""
    if not isinstance(value, Mapping):
        raise invalid(pointer, f"must be an object, got {json_kind(value)}")
    return value


def only_keys(value: Mapping[str, Any], allowed: Iterable[str], pointer: str) -> None:
    """Refuse the first key of ``value`` that is not ``allowed`` (the API's unknown-field error)."""
    known = set(allowed)
    for key in value:
        if key not in known:
            raise UnknownField(pointer_to(pointer, key), str(key))


def text(value: Any, pointer: str, limit: int | None = None, *, empty: bool = True) -> str:
    """A string, at most ``limit`` characters, empty only when ``empty``."""
    if not isinstance(value, str):
        raise invalid(pointer, f"must be a string, got {json_kind(value)}")
    if not empty and not value:
        raise invalid(pointer, "must not be empty")
    if limit is not None and len(value) > limit:
        raise invalid(pointer, f"is {len(value)} characters long; the limit is {limit}")
    return value


def boolean(value: Any, pointer: str) -> bool:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise invalid(pointer, f"must be true or false, got {json_kind(value)}")
    return value


def whole(value: Any, pointer: str, low: int = 0) -> int:
    """A whole number not below ``low`` (``40.0`` counts as 40)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid(pointer, f"must be a whole number, got {json_kind(value)}")
    if value < low:
        raise invalid(pointer, f"must be at least {low}, got {value}")
    return value


def one_of(value: Any, choices: Iterable[str], pointer: str, what: str) -> str:
    """A string among ``choices``; the error lists them."""
    options = list(choices)
    if not isinstance(value, str) or value not in options:
        shown = repr(value) if isinstance(value, str) else json_kind(value)
        raise invalid(pointer, f"{shown} is not {what}; use one of {', '.join(options)}")
    return value


def nonempty_list(value: Any, pointer: str) -> list[Any]:
    """A JSON array with at least one element."""
    if not isinstance(value, list):
        raise invalid(pointer, f"must be an array, got {json_kind(value)}")
    if not value:
        raise invalid(pointer, "must not be empty")
    return value
