"""The ruleset engine: zone entry points, managed rulesets, overrides and exceptions.

No HTTP here: the API calls these methods and renders what they return or
raise. ``wb.rulesets`` is the one ruleset service of a Workbench; its managed
rulesets come from the catalogue files in ``catalog/``.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="business")
    >>> service = RulesetsService(wb, catalog={})
    >>> service.put_entrypoint(zone.id, CUSTOM_PHASE, {"rules": [
    ...     {"action": "log", "expression": "ssl", "description": "https seen"}]}).version
    '1'
    >>> [e.action for e in service.evaluate(zone.id, {"ssl": True}, phase=CUSTOM_PHASE).events]
    ['log']
"""

from __future__ import annotations

from .catalog import CATALOG_DIR, CATALOG_FILES, CatalogError, default_catalog, load_catalog
from .engine import CUSTOM_RULES, ChainPlan, PhasePlan, build_plan, managed_key
from .models import (
    CLOUDFLARE_MANAGED_ID,
    CUSTOM_PHASE,
    MANAGED_PHASE,
    OWASP_ID,
    OWASP_THRESHOLD_RULE_ID,
    PHASES,
    ManagedRule,
    ManagedRuleset,
    Rule,
    Ruleset,
)
from .service import RulesetsService, check_phase

__all__ = [
    "CATALOG_DIR",
    "CATALOG_FILES",
    "CLOUDFLARE_MANAGED_ID",
    "CUSTOM_PHASE",
    "CUSTOM_RULES",
    "MANAGED_PHASE",
    "OWASP_ID",
    "OWASP_THRESHOLD_RULE_ID",
    "PHASES",
    "CatalogError",
    "ChainPlan",
    "ManagedRule",
    "ManagedRuleset",
    "PhasePlan",
    "Rule",
    "Ruleset",
    "RulesetsService",
    "build_plan",
    "check_phase",
    "default_catalog",
    "load_catalog",
    "managed_key",
]
