"""The new WAF configuration equivalent to a zone's old one (``GET .../waf_migration/config``).

A ruleset named ``default`` whose rules carry empty ``id``, ``version``,
``ref`` and ``description``, in this order:

1. a skip rule (``{"ruleset": "current"}``) per Bypass > WAF Managed Rules
   firewall rule, in evaluation order, with its filter's expression as it is
   (a paused rule or filter gives a disabled skip rule);
2. a skip rule per page rule with Disable Security or Web Application
   Firewall: Off, in page-rule priority order, matching its URL pattern
   (a disabled page rule gives a disabled skip rule);
3. the execute rule of the Cloudflare Managed Ruleset, then the OWASP one
   (left out when the old sensitivity is off). While the old WAF's zone
   setting is off they are disabled, unless page rules turn it on somewhere:
   then they are enabled and limited to those pages' URL patterns.

What has no equivalent is listed in ``messages`` (:mod:`workbench.migration._mapping`).

    >>> from workbench import Workbench
    >>> from workbench.migration.setup import read_zone
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> proposed = propose(read_zone(wb, zone.id))
    >>> [(r["action"], r["action_parameters"]["id"][:6]) for r in proposed.rules], proposed.messages
    ([('execute', 'efb7b8'), ('execute', '481438')], [])
    >>> sorted(proposed.rules[0])
    ['action', 'action_parameters', 'description', 'enabled', 'expression', 'id', 'ref', 'version']
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..waf_legacy.urls import any_url_expression, url_pattern_expression
from ._mapping import managed_parameters, owasp_messages, owasp_parameters
from .setup import ZoneSetup

NAME = "default"
SKIP_ALL = {"ruleset": "current"}


@dataclass(frozen=True)
class ProposedConfig:
    """The generated configuration: ``rules`` (plain dicts) and ``messages`` (not migrated)."""

    rules: list[dict[str, Any]]
    messages: list[dict[str, Any]] = field(default_factory=list)
    name: str = NAME

    def result(self) -> dict[str, Any]:
        """The config response's ``result``: ``{"name", "rules"}``, a copy the caller may edit."""
        return {"name": self.name, "rules": copy.deepcopy(self.rules)}


def new_rule(
    action: str, expression: str, enabled: bool, parameters: dict[str, Any]
) -> dict[str, Any]:
    """One rule of the configuration, in the documented field order."""
    return {
        "id": "",
        "version": "",
        "action": action,
        "expression": expression,
        "description": "",
        "ref": "",
        "enabled": enabled,
        "action_parameters": parameters,
    }


def propose(setup: ZoneSetup) -> ProposedConfig:
    """The configuration for the zone in ``setup`` (see the module docstring)."""
    rules = [
        new_rule("skip", r.filter.expression, not (r.paused or r.filter.paused), dict(SKIP_ALL))
        for r in setup.bypass_rules
    ]
    rules += [
        new_rule("skip", url_pattern_expression(p.rule.value), p.active, dict(SKIP_ALL))
        for p in setup.page_rules
        if p.effect == "off"
    ]
    expression, enabled = _execute_scope(setup)
    managed, messages = managed_parameters(setup.package(anomaly=False))
    rules.append(new_rule("execute", expression, enabled, managed))
    owasp = setup.package(anomaly=True)
    owasp_params = owasp_parameters(owasp)
    if owasp_params is not None:
        rules.append(new_rule("execute", expression, enabled, owasp_params))
    return ProposedConfig(rules, messages + owasp_messages(owasp))


def _execute_scope(setup: ZoneSetup) -> tuple[str, bool]:
    """The execute rules' expression and ``enabled``: everywhere while the old WAF runs;
    else only where an active page rule turns it on; else disabled."""
    if setup.old_waf_runs:
        return "true", True
    turned_on = [p.rule.value for p in setup.page_rules if p.effect == "on" and p.active]
    if setup.has_old_waf and turned_on:
        return any_url_expression(turned_on), True
    return "true", False
