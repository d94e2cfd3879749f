"""From the old packages' settings to the new execute rules' ``action_parameters``.

Two mappings, both from seed 002 and the facts (3.5):

- the Cloudflare Managed Ruleset: only what differs from the old catalogue's
  defaults becomes a rule override. An old rule set to Disable gives
  ``{"id": <new id>, "action": "log", "enabled": false}`` (the documented
  example); Block, Challenge and Simulate give ``block``, ``challenge`` and
  ``log`` with ``enabled: true``; a group turned off gives that override for
  each of its rules that has a new id (rule overrides, not tags: the old
  groups and the new tags do not line up one to one). A changed rule with no
  new equivalent is reported, not dropped.
- the OWASP package: sensitivity to paranoia level and score threshold (the
  seed's table), action mode to action (Simulate becomes Log). Changed group
  and rule modes of the old core rule set have no counterpart: reported.

    >>> owasp_parameters({"sensitivity": "medium", "action_mode": "simulate"})["overrides"]
    {'categories': [{'category': 'paranoia-level-2', 'enabled': False}, {'category': 'paranoia-level-3', 'enabled': False}, {'category': 'paranoia-level-4', 'enabled': False}], 'rules': [{'id': '6179ae15870a4bb7b2d480d4843b323c', 'score_threshold': 25, 'action': 'log'}]}
    >>> owasp_parameters({"sensitivity": "off", "action_mode": "block"}) is None
    True
"""

from __future__ import annotations

from typing import Any

from ..rulesets.models import CLOUDFLARE_MANAGED_ID, OWASP_ID, OWASP_THRESHOLD_RULE_ID
from ..rulesets.overrides import paranoia_categories
from .errors import not_migrated

#: Old OWASP sensitivity -> (paranoia level, score threshold). "Default" is the
#: old API's default sensitivity, ``high``, so it needs no row of its own.
SENSITIVITY_TABLE: dict[str, tuple[int, int]] = {
    "high": (2, 40),
    "medium": (1, 25),
    "low": (1, 40),
}
#: Old actions (rule modes and the OWASP action mode) -> new rule actions.
ACTIONS = {"block": "block", "challenge": "challenge", "simulate": "log"}


def _disabled(new_id: str) -> dict[str, Any]:
    return {"id": new_id, "action": "log", "enabled": False}


def managed_parameters(package: dict[str, Any] | None) -> tuple[dict[str, Any], list[dict]]:
    """The managed execute rule's ``action_parameters`` and the ``messages`` of what is left out.

    ``package`` is the traditional package of the old configuration (None: none).
    """
    rules: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    name = "Cloudflare Managed Ruleset (previous version)"
    for group in package["groups"] if package else []:
        if group["mode"] == "off":
            if group["default_mode"] == "on":
                # The group is off: every rule of it that exists in the new ruleset is too.
                rules.extend(_disabled(r["new_id"]) for r in group["rules"] if r["new_id"])
            continue
        for rule in group["rules"]:
            if rule["effective_mode"] == rule["default_mode"]:
                continue  # a default mode (or one set to its default) adds nothing
            if not rule["new_id"]:
                messages.append(
                    not_migrated(
                        f"{name}: rule {rule['id']} ({rule['description']}) set to "
                        f"{rule['effective_mode']} has no equivalent in the new Cloudflare "
                        "Managed Ruleset"
                    )
                )
                continue
            mode = rule["effective_mode"]
            if mode in ("disable", "off"):
                rules.append(_disabled(rule["new_id"]))
            elif mode in ACTIONS:
                rules.append({"id": rule["new_id"], "action": ACTIONS[mode], "enabled": True})
            else:  # an allow rule turned on: the new ruleset runs the rule at its default
                rules.append({"id": rule["new_id"], "enabled": True})
    params: dict[str, Any] = {"id": CLOUDFLARE_MANAGED_ID}
    if rules:
        params["overrides"] = {"rules": rules}
    return params, messages


def owasp_parameters(package: dict[str, Any] | None) -> dict[str, Any] | None:
    """The OWASP execute rule's ``action_parameters``; None when the package is off (or absent)."""
    if package is None or package["sensitivity"] not in SENSITIVITY_TABLE:
        return None
    level, threshold = SENSITIVITY_TABLE[package["sensitivity"]]
    return {
        "id": OWASP_ID,
        "overrides": {
            "categories": paranoia_categories(level),
            "rules": [
                {
                    "id": OWASP_THRESHOLD_RULE_ID,
                    "score_threshold": threshold,
                    "action": ACTIONS[package["action_mode"]],
                }
            ],
        },
    }


def owasp_messages(package: dict[str, Any] | None) -> list[dict[str, Any]]:
    """What the OWASP core rule set changed from its defaults, which the migration leaves out."""
    messages: list[dict[str, Any]] = []
    name = "OWASP ModSecurity Core Rule Set (previous version)"
    advice = "recreate it with tag or rule overrides of the Cloudflare OWASP Core Ruleset"
    for group in package["groups"] if package else []:
        if group["modified"]:
            messages.append(
                not_migrated(f"{name}: group {group['name']!r} set to {group['mode']} ({advice})")
            )
        for rule in group["rules"]:
            if rule["modified"]:
                messages.append(
                    not_migrated(
                        f"{name}: rule {rule['id']} ({rule['description']}) set to "
                        f"{rule['mode']} ({advice})"
                    )
                )
    return messages
