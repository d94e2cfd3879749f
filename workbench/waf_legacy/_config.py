"""A zone's whole old-WAF configuration as plain data: what the migration reads.

:meth:`~workbench.waf_legacy.service.WafLegacyService.config` returns::

    {"zone_id": str, "plan": str,
     "waf": "on" | "off",            # the zone setting
     "enabled": bool,                # the old WAF runs: plan has it, setting on, not migrated
     "packages": [{"id", "name", "detection_mode",
                   "sensitivity", "action_mode",           # anomaly packages; None otherwise
                   "groups": [{"id", "name", "mode", "default_mode", "modified",
                               "rules": [{"id", "description", "priority", "kind",
                                          "mode",            # as configured (deny: may be "default")
                                          "default_mode",
                                          "effective_mode",  # deny: "default" resolved; else on/off
                                          "modified", "score", "new_id"}]}]}],
     "overrides": [override.to_dict(), ...]}   # precedence order, paused ones included

Page rules are not in it: they belong to the firewall service
(``wb.firewall.page_rules``).

    >>> from workbench import Workbench
    >>> from workbench.waf_legacy.catalog import load_catalog
    >>> from workbench.waf_legacy.models import ZoneState
    >>> wb = Workbench(seed=3)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> catalog = load_catalog([{"id": "1" * 32, "name": "CF", "description": "",
    ...     "detection_mode": "traditional", "groups": [{"id": "2" * 32, "name": "Specials",
    ...     "description": "", "default_mode": "on", "rules": [{"id": "100001", "description": "x",
    ...     "priority": "1", "kind": "deny", "default_mode": "block", "new_id": "ab" * 16,
    ...     "expression": 'http.request.uri.path contains "x"'}]}]}])
    >>> rule = zone_config(zone, ZoneState(), catalog, "on", True)["packages"][0]["groups"][0]["rules"][0]
    >>> rule["mode"], rule["effective_mode"], rule["modified"]
    ('default', 'block', False)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .catalog import Catalog, GroupDef, PackageDef, RuleDef
from .models import ZoneState

if TYPE_CHECKING:
    from ..core.platform import Zone


def zone_config(
    zone: Zone, state: ZoneState, catalog: Catalog, setting: str, enabled: bool
) -> dict[str, Any]:
    """The configuration of ``zone`` (see the module docstring for the shape)."""
    overrides = sorted(state.overrides.values(), key=lambda o: (o.priority, o.seq))
    return {
        "zone_id": zone.id,
        "plan": zone.plan,
        "waf": setting,
        "enabled": enabled,
        "packages": [_package(p, state) for p in catalog.packages],
        "overrides": [o.to_dict() for o in overrides],
    }


def _package(package: PackageDef, state: ZoneState) -> dict[str, Any]:
    sensitivity, action_mode = state.settings_of(package) if package.anomaly else (None, None)
    return {
        "id": package.id,
        "name": package.name,
        "detection_mode": package.detection_mode,
        "sensitivity": sensitivity,
        "action_mode": action_mode,
        "groups": [_group(g, state) for g in package.groups],
    }


def _group(group: GroupDef, state: ZoneState) -> dict[str, Any]:
    mode = state.group_mode(group)
    return {
        "id": group.id,
        "name": group.name,
        "mode": mode,
        "default_mode": group.default_mode,
        "modified": mode != group.default_mode,
        "rules": [_rule(r, state) for r in group.rules],
    }


def _rule(rule: RuleDef, state: ZoneState) -> dict[str, Any]:
    mode = state.rule_mode(rule)
    return {
        "id": rule.id,
        "description": rule.description,
        "priority": rule.priority,
        "kind": rule.kind,
        "mode": mode,
        "default_mode": rule.default_mode,
        "effective_mode": rule.default_mode if mode == "default" else mode,
        "modified": mode != rule.initial_mode,
        "score": rule.score,
        "new_id": rule.new_id,
    }
