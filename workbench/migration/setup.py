"""What the migration reads from a zone, gathered once per call.

The old WAF's configuration (:meth:`~workbench.waf_legacy.service.WafLegacyService.config`),
the firewall rules that bypass it and the page rules that change it. The
eligibility rules, the configuration generator and the limits all work on
this one snapshot, so one request sees one consistent zone.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="business")
    >>> [made] = wb.firewall.create_rules(zone.id, [{"action": "bypass", "products": ["waf"],
    ...     "filter": {"expression": 'ip.src eq 192.0.2.1'}}])
    >>> setup = read_zone(wb, zone.id)
    >>> [r.id for r in setup.bypass_rules] == [made.id], setup.waf, setup.has_old_waf
    (True, 'on', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.plans import plan as plan_of
from ..waf_legacy.engine_plan import page_rule_effect

if TYPE_CHECKING:
    from ..core.platform import Workbench
    from ..firewall.models import FirewallRule
    from ..firewall.pagerules import PageRule


@dataclass(frozen=True)
class WafPageRule:
    """A page rule that changes the old WAF: ``effect`` ``off`` (Disable Security or
    Web Application Firewall: Off) or ``on`` (Web Application Firewall: On)."""

    rule: PageRule
    effect: str

    @property
    def active(self) -> bool:
        """True when the page rule applies (status ``active``)."""
        return self.rule.status == "active"


@dataclass(frozen=True)
class ZoneSetup:
    """One zone as the migration sees it (see :func:`read_zone`)."""

    zone_id: str
    plan: str
    legacy: dict[str, Any]
    bypass_rules: tuple[FirewallRule, ...]
    page_rules: tuple[WafPageRule, ...]

    @property
    def has_old_waf(self) -> bool:
        """True when the plan includes the previous version (Pro and up)."""
        return plan_of(self.plan).old_waf

    @property
    def waf(self) -> str:
        """The old WAF's zone setting ``waf`` (``on``/``off``)."""
        return str(self.legacy["waf"])

    @property
    def old_waf_runs(self) -> bool:
        """True when the old WAF inspects traffic (plan has it, setting on)."""
        return bool(self.legacy["enabled"])

    def package(self, anomaly: bool) -> dict[str, Any] | None:
        """The first traditional (managed) or anomaly (OWASP) package of the configuration."""
        wanted = "anomaly" if anomaly else "traditional"
        packages = self.legacy["packages"]
        return next((p for p in packages if p["detection_mode"] == wanted), None)

    @property
    def owasp_on(self) -> bool:
        """True when the OWASP package runs (its sensitivity is not ``off``)."""
        owasp = self.package(anomaly=True)
        return owasp is not None and owasp["sensitivity"] != "off"

    @property
    def overrides(self) -> list[dict[str, Any]]:
        """The URI-based WAF overrides, paused ones included."""
        return list(self.legacy["overrides"])


def read_zone(wb: Workbench, zone_id: str) -> ZoneSetup:
    """The zone's old-WAF configuration, bypass-WAF firewall rules and WAF page rules.

    Firewall rules come in evaluation order, paused ones included; page rules
    in priority order (highest first), disabled ones included. Raises the old
    WAF's retired error once the zone migrated: callers check the state first.
    """
    zone = wb.zone(zone_id)
    legacy = wb.waf_legacy.config(zone.id)
    bypass = tuple(
        r
        for r in wb.firewall.evaluation_order(zone.id)
        if r.action == "bypass" and "waf" in (r.products or [])
    )
    pages = []
    for rule in wb.firewall.page_rules.list(zone.id):
        effect = page_rule_effect(rule.actions)
        if effect is not None:
            pages.append(WafPageRule(rule, effect))
    return ZoneSetup(zone.id, zone.plan, legacy, bypass, tuple(pages))
