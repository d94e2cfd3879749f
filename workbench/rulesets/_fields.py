"""Checks on the body of an entry point PUT: the ruleset fields and each rule's fields.

The whole body is checked before anything is stored; the first problem
raises an error whose ``source.pointer`` names it (``/rules/0/action``).

    >>> from workbench.rulesets.models import CUSTOM_PHASE
    >>> spec = entrypoint_body({"rules": [{"action": "log", "expression": "ssl"}]}, CUSTOM_PHASE, {})
    >>> spec.rules[0].action, spec.rules[0].enabled, spec.name
    ('log', True, None)
    >>> entrypoint_body({"rules": [{"action": "execute", "expression": "true"}]}, CUSTOM_PHASE, {})
    Traceback (most recent call last):
    ...
    workbench.rulesets.errors.InvalidRulesetInput: /rules/0/action: 'execute' is not an action of the http_request_firewall_custom phase; use one of block, challenge, js_challenge, log, managed_challenge, skip
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.text import unencodable_strings
from ..rules_language import ExpressionError
from ..rules_language.parser import MAX_LENGTH
from ._checks import boolean, invalid, obj, one_of, only_keys, text
from ._params import execute_parameters, logging_field, skip_parameters
from .catalog import Catalog
from .errors import InvalidRulesetInput, UnknownField
from .expressions import compile_rule_expression
from .models import PHASE_ACTIONS

#: An expression's limit is the language's own.
MAX_EXPRESSION = MAX_LENGTH
MAX_DESCRIPTION = 500
MAX_NAME = 100
MAX_REF = 100

_BODY_KEYS = ("rules", "name", "description")
# ``version`` and ``last_updated`` are read-only: accepted and ignored, so a rule
# read from the API can be sent back as it is.
_RULE_KEYS = (
    "id",
    "version",
    "last_updated",
    "ref",
    "action",
    "expression",
    "description",
    "enabled",
    "action_parameters",
    "logging",
)


@dataclass
class RuleSpec:
    """A checked rule of a PUT body, before it has an id (``id`` names an existing rule)."""

    id: str | None
    ref: str | None
    action: str
    expression: str
    compiled: Any
    description: str
    enabled: bool
    action_parameters: dict[str, Any] | None
    logging: dict[str, Any] | None


@dataclass
class EntrypointSpec:
    """A checked PUT body: ``name``/``description`` None when not given."""

    name: str | None
    description: str | None
    rules: list[RuleSpec]


def entrypoint_body(body: Any, phase: str, catalog: Catalog) -> EntrypointSpec:
    """Check a whole PUT body ``{rules, name?, description?}`` for an entry point of ``phase``."""
    for where, problem in unencodable_strings(body):
        raise invalid(where, problem)  # before anything quotes or compiles it
    body = obj(body, "")
    for key in ("kind", "phase"):
        if key in body:
            raise UnknownField(f"/{key}", key)
    only_keys(body, _BODY_KEYS, "")
    if "rules" not in body:
        raise invalid("/rules", "is required (an empty array removes every rule)")
    if not isinstance(body["rules"], list):
        raise invalid("/rules", "must be an array of rules")
    name = text(body["name"], "/name", MAX_NAME, empty=False) if "name" in body else None
    description = (
        text(body["description"], "/description", MAX_DESCRIPTION)
        if "description" in body
        else None
    )
    rules = [rule_spec(item, f"/rules/{i}", phase, catalog) for i, item in enumerate(body["rules"])]
    _refuse_repeats(rules)
    return EntrypointSpec(name, description, rules)


def rule_spec(item: Any, pointer: str, phase: str, catalog: Catalog) -> RuleSpec:
    """Check one rule of an entry point of ``phase``."""
    item = obj(item, pointer)
    only_keys(item, _RULE_KEYS, pointer)
    if "action" not in item:
        raise invalid(f"{pointer}/action", "is required")
    action = one_of(
        item["action"], PHASE_ACTIONS[phase], f"{pointer}/action", f"an action of the {phase} phase"
    )
    if "expression" not in item:
        raise invalid(f"{pointer}/expression", "is required")
    expression = text(item["expression"], f"{pointer}/expression", MAX_EXPRESSION, empty=False)
    compiled = _compile(expression, f"{pointer}/expression")
    params: dict[str, Any] | None = None
    where = f"{pointer}/action_parameters"
    if action == "execute":
        params = execute_parameters(item.get("action_parameters"), where, phase, catalog)
    elif action == "skip":
        params = skip_parameters(item.get("action_parameters"), where, phase, catalog)
    elif "action_parameters" in item:
        raise invalid(where, f"{action} rules take no action_parameters in the workbench")
    logging = None
    if "logging" in item:
        if action != "skip":
            raise invalid(f"{pointer}/logging", "only skip rules take logging")
        logging = logging_field(item["logging"], f"{pointer}/logging")
    return RuleSpec(
        id=_blank_is_none(item, "id", pointer, 64),
        ref=_blank_is_none(item, "ref", pointer, MAX_REF),
        action=action,
        expression=expression,
        compiled=compiled,
        description=(
            text(item["description"], f"{pointer}/description", MAX_DESCRIPTION)
            if "description" in item
            else ""
        ),
        enabled=boolean(item["enabled"], f"{pointer}/enabled") if "enabled" in item else True,
        action_parameters=params,
        logging=logging,
    )


def _blank_is_none(item: Mapping[str, Any], key: str, pointer: str, limit: int) -> str | None:
    """``item[key]`` as text; absent or empty is None. The migration config sends empty
    ``id``/``ref`` for rules not saved yet: a new id, and a ref that defaults to it."""
    if key not in item:
        return None
    return text(item[key], f"{pointer}/{key}", limit) or None


def _compile(expression: str, pointer: str) -> Any:
    try:
        return compile_rule_expression(expression)
    except ExpressionError as exc:
        raise InvalidRulesetInput.at(pointer, str(exc)) from None
    except RecursionError:
        raise invalid(pointer, "the expression is nested too deeply") from None


def _refuse_repeats(rules: list[RuleSpec]) -> None:
    """One rule per id and per ref, and each managed ruleset run by one rule only."""
    ids: dict[str, int] = {}
    refs: dict[str, int] = {}
    runs: dict[str, int] = {}
    for i, rule in enumerate(rules):
        if rule.id is not None:
            if rule.id in ids:
                raise invalid(
                    f"/rules/{i}/id", f"rule {rule.id} appears twice (/rules/{ids[rule.id]})"
                )
            ids[rule.id] = i
        if rule.ref is not None:
            if rule.ref in refs:
                raise invalid(
                    f"/rules/{i}/ref", f"ref {rule.ref!r} is used by /rules/{refs[rule.ref]}"
                )
            refs[rule.ref] = i
        if rule.action == "execute" and rule.action_parameters is not None:
            target = rule.action_parameters["id"]
            if target in runs:
                # A zone deploys each managed ruleset once: overrides go in one rule.
                raise invalid(
                    f"/rules/{i}/action_parameters/id",
                    f"ruleset {target} is already run by /rules/{runs[target]}; a zone deploys "
                    "each managed ruleset once (put its overrides in that one rule)",
                )
            runs[target] = i
