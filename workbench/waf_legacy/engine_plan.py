"""One zone's stored old-WAF state and page rules, turned into the engine's plan.

The service calls :func:`zone_plan` when a zone's plan is not cached;
:func:`page_rule_prints` is the part of the cache key that page rules give
(they live in the firewall service, so any change there shows up here).

    >>> from workbench import Workbench
    >>> from workbench.waf_legacy.catalog import load_catalog
    >>> from workbench.waf_legacy.models import ZoneState
    >>> wb = Workbench(seed=4)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> wb.firewall.page_rules.create(zone.id, {"status": "active",
    ...     "targets": [{"target": "url", "constraint": {"operator": "matches", "value": "example.com/*"}}],
    ...     "actions": [{"id": "disable_security"}]}).value
    'example.com/*'
    >>> rules = wb.firewall.page_rules.list(zone.id, status="active")
    >>> catalog = load_catalog([{"id": "1" * 32, "name": "CF", "description": "",
    ...     "detection_mode": "traditional", "groups": [{"id": "2" * 32, "name": "Specials",
    ...     "description": "", "default_mode": "on", "rules": [{"id": "100001", "description": "admin",
    ...     "priority": "1", "kind": "deny", "default_mode": "block", "new_id": None,
    ...     "expression": 'http.request.uri.path contains "/admin"'}]}]}])
    >>> plan = zone_plan(zone, ZoneState(), catalog, rules, setting_on=True)
    >>> [c.key.split(":")[0] for c in plan.checks], plan.page_rules[0].effect
    (['pagerule', '11111111111111111111111111111111'], 'off')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.plans import plan as plan_of
from ._engine import LegacyPlan, OverrideRef, PackageRun, PageRuleRef, build_plan
from .catalog import ON_OFF, Catalog
from .models import ZoneState
from .urls import any_url_expression, url_pattern_expression

if TYPE_CHECKING:
    from ..core.platform import Zone
    from ..firewall.pagerules import PageRule


def page_rule_prints(page_rules: Sequence[PageRule]) -> tuple[Any, ...]:
    """What of the active page rules (in priority order) can change the plan."""
    return tuple(
        (r.id, r.value, r.priority, tuple(tuple(sorted(a.items())) for a in r.actions))
        for r in page_rules
    )


def page_rule_effect(actions: list[dict[str, Any]]) -> str | None:
    """What a page rule's actions do to the old WAF: off, on, or nothing (None)."""
    ids = {a.get("id"): a.get("value") for a in actions}
    if "disable_security" in ids:
        return "off"
    value = ids.get("waf")
    return value if value in ON_OFF else None


def zone_plan(
    zone: Zone,
    state: ZoneState,
    catalog: Catalog,
    page_rules: Sequence[PageRule],
    *,
    setting_on: bool,
) -> LegacyPlan:
    """The plan of ``zone``: empty where the plan lacks the old WAF or the zone migrated.

    ``page_rules`` are the zone's active page rules, highest priority first.
    """
    if state.retired_on is not None or not plan_of(zone.plan).old_waf:
        return build_plan([], page_rules=[], overrides=[], setting_on=False)
    runs = []
    for p in catalog.packages:
        sensitivity, action_mode = state.settings_of(p) if p.anomaly else ("off", "challenge")
        runs.append(
            PackageRun(
                p,
                {g.id: state.group_mode(g) for g in p.groups},
                {r.id: state.rule_mode(r) for r in p.rules},
                sensitivity,
                action_mode,
            )
        )
    refs = [
        PageRuleRef(
            f"pagerule:{r.id}", url_pattern_expression(r.value), page_rule_effect(r.actions)
        )
        for r in page_rules
    ]
    # The engine applies overrides from the lowest precedence to the highest: a larger
    # priority number first, and among equals the newer first (the older one wins).
    live = sorted(
        (o for o in state.overrides.values() if not o.paused),
        key=lambda o: (-o.priority, -o.seq),
    )
    overrides = [
        OverrideRef(
            f"override:{o.id}",
            any_url_expression(o.urls),
            dict(o.groups),
            dict(o.rules),
            dict(o.rewrite_action),
        )
        for o in live
    ]
    return build_plan(runs, page_rules=refs, overrides=overrides, setting_on=setting_on)
