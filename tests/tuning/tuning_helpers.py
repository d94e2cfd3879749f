"""Zones and logs the tuning tests share."""

from __future__ import annotations

from typing import Any

from workbench import Workbench
from workbench.rulesets import MANAGED_PHASE, OWASP_ID, OWASP_THRESHOLD_RULE_ID
from workbench.rulesets.overrides import paranoia_categories

CF_MANAGED = "efb7b8c949ac4650a09736fc376e9aee"
ENTRY = f"rulesets/phases/{MANAGED_PHASE}/entrypoint"


def owasp_rule(level: int, threshold: int, action: str = "block") -> dict[str, Any]:
    """An execute rule of the OWASP ruleset at ``level`` and ``threshold``."""
    return {
        "action": "execute",
        "expression": "true",
        "action_parameters": {
            "id": OWASP_ID,
            "overrides": {
                "categories": paranoia_categories(level),
                "rules": [
                    {"id": OWASP_THRESHOLD_RULE_ID, "score_threshold": threshold, "action": action}
                ],
            },
        },
    }


def strict_body(cf: bool = True) -> dict[str, Any]:
    """A strict new configuration (PL4, threshold 25) that blocks some benign traffic."""
    rules = [{"action": "execute", "expression": "true", "action_parameters": {"id": CF_MANAGED}}]
    return {"rules": ([*rules] if cf else []) + [owasp_rule(4, 25)]}


def migrated_zone(plan: str = "pro", body: dict[str, Any] | None = None) -> tuple[Workbench, Any]:
    """A zone migrated (through the migration's PUT) to ``body`` (default :func:`strict_body`)."""
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan=plan)
    wb.migration.put_entrypoint(
        zone.id, MANAGED_PHASE, body or strict_body(), waf_migration="pending", phase_two="1"
    )
    return wb, zone
