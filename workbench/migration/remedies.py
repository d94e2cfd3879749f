"""The migration's remedies: what to do about a refusal, and the entry-point bodies that fix it.

Pure functions on plain dicts (the wizard only renders and sends what they
build): a managed rule set to log or disabled through a rule override of the
entry point (:func:`with_override`), custom rules doing what the previous
version did for the requests the new one lets through (:func:`custom_rules_for`),
and the remedy for an API refusal code (:func:`remedy_for`).

    >>> rules = [{"id": "r1", "version": "2", "action": "execute", "expression": "true",
    ...           "action_parameters": {"id": "rs1"}}]
    >>> with_override(rules, "rs1", "abc", "log")[0]["action_parameters"]
    {'id': 'rs1', 'overrides': {'rules': [{'id': 'abc', 'action': 'log', 'enabled': True}]}}
    >>> remedy_for(10703)[:36]
    'delete the URI-based WAF overrides ('
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.security import TERMINAL_BY_STRENGTH
from ..firewall.builder import quote
from ..rules_language import ExpressionError, compile_expression
from ..rules_language.parser import MAX_LENGTH as MAX_EXPRESSION

#: Fields of a rule a PUT takes; the others (version, last_updated) are the API's own.
WRITABLE = ("id", "ref", "action", "expression", "description", "enabled", "action_parameters",
            "logging")  # fmt: skip
#: How the remedies change a managed rule: its override's fields.
HOW: dict[str, dict[str, Any]] = {
    "log": {"action": "log", "enabled": True},
    "disable": {"enabled": False},
}
#: Old actions that end a request, strongest first, as a custom rule's action.
_ENDING = TERMINAL_BY_STRENGTH

#: What to do about a refusal, by the API's error code (see workbench.migration.errors).
_REMEDIES = {
    10700: "advance the virtual clock to 2022-05-04 or later (PUT /workbench/clock), then "
    "Check again",
    10701: "validation mode is for Enterprise zones: deploy directly (waf_migration=pending)",
    10702: "deploy with waf_migration (the wizard's Deploy does), or save every rule disabled",
    10703: "delete the URI-based WAF overrides (DELETE "
    "/zones/{zone_id}/firewall/waf/overrides/{override_id}), then Check again",
    10704: "from 2022-09-19, phase_two=1 lets the zone migrate (the wizard sends it); before "
    "then, fix each condition named above",
    10705: "contact Cloudflare Support: the migration handles at most 200 firewall rules",
    10706: "contact Cloudflare Support, or shorten the firewall rule expression to 4 KB",
    10707: "the migration is done and cannot be undone: change the new configuration with "
    "the Rulesets API",
    10710: "nothing left to migrate: read the entry point (Terraform tab) or change it with "
    "the Rulesets API",
}


def remedy_for(code: Any) -> str:
    """What to do about an API refusal with this ``code`` ("" when the wizard knows no remedy)."""
    return _REMEDIES.get(code, "") if isinstance(code, int) else ""


def writable(rules: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``rules`` as read from the API, keeping only what a PUT takes (deep copies)."""
    return [{k: copy.deepcopy(r[k]) for k in WRITABLE if k in r} for r in rules]


def with_override(
    rules: Sequence[Mapping[str, Any]], ruleset_id: str, rule_id: str, how: str
) -> list[dict[str, Any]]:
    """The entry point's rules with managed rule ``rule_id`` set to log or disabled.

    The override goes into the (first) execute rule that runs ``ruleset_id``,
    merged into an override the rule already has (an OWASP score threshold
    stays). ``how`` is ``log`` or ``disable``.
    """
    if how not in HOW:
        raise ValueError(f"how must be one of {', '.join(HOW)}, not {how!r}")
    out = writable(rules)
    for rule in out:
        params = rule.get("action_parameters") or {}
        if rule.get("action") == "execute" and params.get("id") == ruleset_id:
            entries = params.setdefault("overrides", {}).setdefault("rules", [])
            entry = next((e for e in entries if e.get("id") == rule_id), None)
            if entry is None:
                entry = {"id": rule_id}
                entries.append(entry)
            entry.update(HOW[how])
            return out
    raise ValueError(f"no execute rule of the entry point runs ruleset {ruleset_id}")


def _strongest(actions: Iterable[str]) -> str:
    found = set(actions)
    return next((a for a in _ENDING if a in found), "block")


def _old_rule(catalog: Any, rule_id: str) -> tuple[str, str] | None:
    """``(expression, description)`` of a previous-version rule with a check of its own."""
    for rule in catalog.rules_named(rule_id) if catalog is not None else []:
        # Only deny rules stop a request by themselves: an anomaly rule adds to a score.
        if rule.kind == "deny" and rule.expression and len(rule.expression) <= MAX_EXPRESSION:
            return rule.expression, rule.description
    return None


def custom_rules_for(rows: Sequence[Mapping[str, Any]], catalog: Any) -> list[dict[str, Any]]:
    """Custom rules that stop what the previous version stopped in ``rows`` (one per old rule).

    ``rows`` are the comparison's "allowed by the new version, stopped by the
    previous one" rows (``old_rules``, ``old_action``, ``path``, ``query``). A
    row whose previous-version rule has a check of its own gets a rule with
    that check; the others (anomaly scores) a rule matching their exact URIs.
    """
    by_rule: dict[str, list[str]] = {}
    uris: dict[str, list[str]] = {}
    for row in rows:
        action = _strongest(str(row.get("old_action") or "").split(","))
        ids = [i for i in str(row.get("old_rules") or "").split(",") if i]
        known = [i for i in ids if _old_rule(catalog, i) is not None]
        if known:
            by_rule.setdefault(known[0], []).append(action)
        else:
            query = str(row.get("query") or "")
            uri = str(row.get("path") or "") + (f"?{query}" if query else "")
            if uri not in uris.setdefault(action, []):
                uris[action].append(uri)
    made: list[dict[str, Any]] = []
    for rule_id, actions in by_rule.items():
        found = _old_rule(catalog, rule_id)
        assert found is not None
        expression, description = found
        made.append(_custom(_strongest(actions), expression,
                            f"previous WAF rule {rule_id}: {description}"))  # fmt: skip
    for action, listed in uris.items():
        made.extend(_uri_rules(action, listed))
    return made


def _custom(action: str, expression: str, description: str) -> dict[str, Any]:
    return {"action": action, "expression": expression, "description": description[:120],
            "enabled": True}  # fmt: skip


def _uri_rules(action: str, uris: list[str]) -> list[dict[str, Any]]:
    """Rules matching exactly ``uris``, as many as the expression limit needs."""
    made: list[dict[str, Any]] = []
    batch: list[str] = []

    def expression(items: list[str]) -> str:
        return "http.request.uri in {" + " ".join(quote(u) for u in items) + "}"

    for uri in uris:
        if len(expression([*batch, uri])) > MAX_EXPRESSION and batch:
            made.append(_custom(action, expression(batch), "requests the previous WAF stopped"))
            batch = []
        batch.append(uri)
    if batch:
        made.append(_custom(action, expression(batch), "requests the previous WAF stopped"))
    # A URI too long for any expression, or one the language refuses, is left out.
    return [r for r in made if _compiles(r["expression"])]


def _compiles(expression: str) -> bool:
    if len(expression) > MAX_EXPRESSION:
        return False
    try:
        compile_expression(expression)
    except ExpressionError:
        return False
    return True
