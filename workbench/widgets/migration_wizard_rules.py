"""The migration wizard's rule work as the panel shows it: the JSON editor's checks, a refusal
in words and the proposed rules as a table. The remedies themselves (the bodies they PUT,
the custom rules, what to do about a refusal code) are the core's:
:mod:`workbench.migration.remedies`, re-exported here for the wizard.

    >>> parse_body('{"rules": [}')
    (None, 'the rules JSON is not valid: line 1, column 12: Expecting value')
    >>> body, problem = parse_body('[{"action": "execute", "expression": "true"}]')
    >>> body, problem
    ({'rules': [{'action': 'execute', 'expression': 'true'}]}, None)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..migration.remedies import (
    HOW,
    MAX_EXPRESSION,
    WRITABLE,
    custom_rules_for,
    remedy_for,
    with_override,
    writable,
)

__all__ = [
    "HOW",
    "MAX_EXPRESSION",
    "WRITABLE",
    "custom_rules_for",
    "parse_body",
    "remedy_for",
    "rules_table",
    "why",
    "with_override",
    "writable",
]


def why(exchange: Any) -> str:
    """An API refusal as ``code: message`` (the message's first line), from the envelope."""
    err = exchange.error or {}
    text = str(err.get("message") or "no error message").splitlines()[0]
    return f"{err.get('code')}: {text}"


def parse_body(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The entry point body the editor holds, or the problem with it (naming where).

    An object needs a ``rules`` list; a bare list is taken as the rules.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        return None, f"the rules JSON is not valid: {where}: {exc.msg}"
    if isinstance(data, list):
        data = {"rules": data}
    if not isinstance(data, dict):
        return None, 'the JSON must be an object with a "rules" list (or the list itself)'
    rules = data.get("rules")
    if not isinstance(rules, list):
        return None, 'the JSON object needs "rules": a list of rules'
    for number, rule in enumerate(rules):
        if not isinstance(rule, dict):
            return None, f"rules[{number}] must be an object, not {type(rule).__name__}"
    return data, None


def _count(n: int, kind: str) -> str:
    """``2 rule overrides``, ``1 category override``: what an execute rule changes."""
    singular = {"rules": "rule", "categories": "category"}.get(kind, kind)
    return f"{n} {singular} override{'s' if n != 1 else ''}"


def rules_table(
    rules: Sequence[Mapping[str, Any]], names: Mapping[str, str] | None = None
) -> list[tuple[str, ...]]:
    """One row per proposed rule: number, action, enabled, what it runs or skips, overrides, expression.

    A ruleset it runs is shown by its name from ``names`` (id -> name, the API's list of
    rulesets), or by the start of its id when the name is not known.

    >>> rule = {"action": "execute", "expression": "true", "action_parameters": {"id": "e" * 32}}
    >>> rules_table([rule], {"e" * 32: "Cloudflare Managed Ruleset"})[0][3]
    'Cloudflare Managed Ruleset'
    >>> rules_table([rule])[0][3]
    'ruleset eeeeeeee…'
    """
    rows: list[tuple[str, ...]] = []
    for number, rule in enumerate(rules, start=1):
        params = rule.get("action_parameters") or {}
        ruleset = params.get("id")
        if ruleset:
            known = (names or {}).get(str(ruleset))
            target = known or f"ruleset {str(ruleset)[:8]}…"
        else:
            target = ", ".join(f"{k}: {v}" for k, v in params.items()) or "-"
        overrides = params.get("overrides") or {}
        counted = [_count(len(v), k) for k, v in overrides.items() if isinstance(v, list) and v]
        expression = str(rule.get("expression", ""))
        shown = expression if len(expression) <= 60 else expression[:59] + "…"
        rows.append((str(number), str(rule.get("action", "")), str(rule.get("enabled", True)).lower(),
                     str(target), ", ".join(counted) or "-", shown))  # fmt: skip
    return rows
