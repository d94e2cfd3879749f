"""The ``action_parameters`` of execute and skip rules, and the ``logging`` of skip rules.

Each checker takes what the client sent and returns a clean copy, or raises
an error whose ``source.pointer`` names the bad part.

    >>> from workbench.rulesets.models import CUSTOM_PHASE
    >>> skip_parameters({"ruleset": "current", "products": ["waf"]}, "/rules/0/action_parameters",
    ...                 CUSTOM_PHASE, {})
    {'ruleset': 'current', 'products': ['waf']}
    >>> skip_parameters({"ruleset": "current", "phases": ["http_request_firewall_managed"]},
    ...                 "/rules/0/action_parameters", CUSTOM_PHASE, {})
    Traceback (most recent call last):
    ...
    workbench.rulesets.errors.InvalidRulesetInput: /rules/0/action_parameters/ruleset: cannot be combined with phases
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..core.errors import json_kind
from ._checks import (
    boolean,
    invalid,
    nonempty_list,
    obj,
    one_of,
    only_keys,
    pointer_to,
    text,
    whole,
)
from .catalog import Catalog
from .models import (
    MANAGED_PHASE,
    OVERRIDE_ACTIONS,
    SENSITIVITY_LEVELS,
    SKIP_PHASES,
    SKIP_PRODUCTS,
    ManagedRuleset,
)

#: The skip options of each phase: managed-phase exceptions name rulesets and
#: rules; custom-phase skips name phases and legacy products.
SKIP_OPTIONS: dict[str, tuple[str, ...]] = {
    MANAGED_PHASE: ("ruleset", "rulesets", "rules"),
    "http_request_firewall_custom": ("ruleset", "phases", "products"),
}
#: Options that cannot appear together (key: the option, value: what it excludes).
_EXCLUDES = {"ruleset": ("rulesets", "rules", "phases"), "rulesets": ("phases",)}


def managed_ruleset(catalog: Catalog, value: Any, pointer: str, phase: str) -> ManagedRuleset:
    """The managed ruleset named by ``value``, which must run in ``phase``."""
    found = catalog.get(value) if isinstance(value, str) else None
    if found is None:
        known = ", ".join(f"{r.id} ({r.name})" for r in catalog.values()) or "none"
        raise invalid(pointer, f"{value!r} is not a managed ruleset; the catalogue has {known}")
    if found.phase != phase:
        raise invalid(pointer, f"ruleset {found.id} runs in the {found.phase} phase, not {phase}")
    return found


def execute_parameters(value: Any, pointer: str, phase: str, catalog: Catalog) -> dict[str, Any]:
    """``{id, version?, overrides?, matched_data?}`` of an execute rule."""
    params = obj(value, pointer)
    only_keys(params, ("id", "version", "overrides", "matched_data"), pointer)
    if "id" not in params:
        raise invalid(f"{pointer}/id", "is required: the id of the managed ruleset to run")
    ruleset = managed_ruleset(catalog, params["id"], f"{pointer}/id", phase)
    if "version" in params:
        version = text(params["version"], f"{pointer}/version")
        if version not in ("latest", ruleset.version):
            raise invalid(
                f"{pointer}/version",
                f"ruleset {ruleset.id} has version {ruleset.version}; use it or 'latest'",
            )
    if "matched_data" in params:
        data = obj(params["matched_data"], f"{pointer}/matched_data")
        only_keys(data, ("public_key",), f"{pointer}/matched_data")
        text(data.get("public_key"), f"{pointer}/matched_data/public_key", empty=False)
    if "overrides" in params:
        _overrides(params["overrides"], f"{pointer}/overrides", ruleset)
    return copy.deepcopy(dict(params))


def _override_fields(item: Mapping[str, Any], pointer: str) -> None:
    if "action" in item:
        one_of(item["action"], OVERRIDE_ACTIONS, f"{pointer}/action", "an override action")
    if "enabled" in item:
        boolean(item["enabled"], f"{pointer}/enabled")
    if "sensitivity_level" in item:
        # Accepted for fidelity: it only tunes DDoS rulesets, so it changes nothing here.
        one_of(
            item["sensitivity_level"],
            SENSITIVITY_LEVELS,
            f"{pointer}/sensitivity_level",
            "a sensitivity level",
        )


def _array(item: Mapping[str, Any], key: str, pointer: str) -> list[Any]:
    """The array ``item[key]`` (empty when absent; an empty list overrides nothing)."""
    value = item.get(key, [])
    if not isinstance(value, list):
        raise invalid(f"{pointer}/{key}", f"must be an array, got {json_kind(value)}")
    return value


def _overrides(value: Any, pointer: str, ruleset: ManagedRuleset) -> None:
    overrides = obj(value, pointer)
    only_keys(overrides, ("action", "enabled", "sensitivity_level", "categories", "rules"), pointer)
    _override_fields(overrides, pointer)
    for i, item in enumerate(_array(overrides, "categories", pointer)):
        where = f"{pointer}/categories/{i}"
        entry = obj(item, where)
        only_keys(entry, ("category", "action", "enabled", "sensitivity_level"), where)
        # Unknown tags are accepted (no rule carries them): a catalogue may lack a level.
        text(entry.get("category"), f"{where}/category", 200, empty=False)
        _override_fields(entry, where)
    seen: set[str] = set()
    threshold = ruleset.threshold_rule
    for i, item in enumerate(_array(overrides, "rules", pointer)):
        where = f"{pointer}/rules/{i}"
        entry = obj(item, where)
        only_keys(entry, ("id", "action", "enabled", "score_threshold", "sensitivity_level"), where)
        rule_id = text(entry.get("id"), f"{where}/id", empty=False)
        if ruleset.rule(rule_id) is None:
            raise invalid(f"{where}/id", f"rule {rule_id} is not a rule of ruleset {ruleset.id}")
        if rule_id in seen:
            raise invalid(f"{where}/id", f"rule {rule_id} is overridden twice")
        seen.add(rule_id)
        _override_fields(entry, where)
        if "score_threshold" in entry:
            if threshold is None or threshold.id != rule_id:
                target = f"rule {threshold.id}" if threshold else "score-based rulesets"
                raise invalid(f"{where}/score_threshold", f"only applies to {target}")
            whole(entry["score_threshold"], f"{where}/score_threshold")


def skip_parameters(value: Any, pointer: str, phase: str, catalog: Catalog) -> dict[str, Any]:
    """The options of a skip rule, with the combinations the API allows."""
    params = obj(value, pointer)
    allowed = SKIP_OPTIONS[phase]
    for key in params:
        if key not in allowed:
            raise invalid(
                pointer_to(pointer, key),
                f"is not a skip option of the {phase} phase; use {', '.join(allowed)}",
            )
    if not params:
        raise invalid(pointer, f"a skip rule needs one of {', '.join(allowed)}")
    for key, excluded in _EXCLUDES.items():
        clash = [other for other in excluded if key in params and other in params]
        if clash:
            raise invalid(f"{pointer}/{key}", f"cannot be combined with {clash[0]}")
    if "ruleset" in params and params["ruleset"] != "current":
        raise invalid(f"{pointer}/ruleset", "must be 'current' (skip the remaining rules)")
    if "rulesets" in params:
        for i, ruleset_id in enumerate(nonempty_list(params["rulesets"], f"{pointer}/rulesets")):
            managed_ruleset(catalog, ruleset_id, f"{pointer}/rulesets/{i}", phase)
    if "rules" in params:
        rules = obj(params["rules"], f"{pointer}/rules")
        if not rules:
            raise invalid(f"{pointer}/rules", "must name at least one ruleset")
        for ruleset_id, ids in rules.items():
            where = pointer_to(f"{pointer}/rules", ruleset_id)
            ruleset = managed_ruleset(catalog, ruleset_id, where, phase)
            for j, rule_id in enumerate(nonempty_list(ids, where)):
                if not isinstance(rule_id, str) or ruleset.rule(rule_id) is None:
                    raise invalid(
                        f"{where}/{j}", f"{rule_id!r} is not a rule of ruleset {ruleset.id}"
                    )
    for key, choices in (("phases", SKIP_PHASES), ("products", SKIP_PRODUCTS)):
        if key in params:
            for i, item in enumerate(nonempty_list(params[key], f"{pointer}/{key}")):
                one_of(item, choices, f"{pointer}/{key}/{i}", f"a {key[:-1]} to skip")
    return copy.deepcopy(dict(params))


def logging_field(value: Any, pointer: str) -> dict[str, Any]:
    """``{"enabled": bool}``: whether a matching skip rule logs an event (default true)."""
    item = obj(value, pointer)
    only_keys(item, ("enabled",), pointer)
    if "enabled" not in item:
        raise invalid(f"{pointer}/enabled", "is required")
    return {"enabled": boolean(item["enabled"], f"{pointer}/enabled")}
