"""A zone's firewall rules as a :class:`~workbench.core.security.SystemPlan`.

Checks are the active rules' filter expressions (a rule and its filter both
unpaused), keyed by rule id. ``decide`` walks the rules in evaluation order
(:meth:`~workbench.firewall.FirewallService.evaluation_order`): a matching
``log`` or ``bypass`` rule gives an event and evaluation goes on (``bypass``
adds its products to ``bypassed``); ``allow`` gives an event and ends the
firewall rules only (the WAF still sees the request, so the verdict's action
stays None); ``block`` and the challenges end the request.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="enterprise")
    >>> rules = wb.firewall.create_rules(zone.id, [
    ...     {"filter": {"expression": 'http.request.uri.path contains "/api"'}, "action": "bypass",
    ...      "products": ["waf"], "priority": 1},
    ...     {"filter": {"expression": 'ip.src.country eq "T1"'}, "action": "block", "priority": 2}])
    >>> plan = firewall_plan(wb, zone.id)
    >>> verdict = plan.decide(lambda key: True)
    >>> [(e.source, e.action) for e in verdict.events], verdict.action, sorted(verdict.bypassed)
    ([('firewallRules', 'bypass'), ('firewallRules', 'block')], 'block', ['waf'])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.security import FIREWALL_RULES, TERMINAL_ACTIONS, Check, SecurityEvent, Verdict

if TYPE_CHECKING:
    from ..core.platform import Workbench


@dataclass(frozen=True)
class _Rule:
    """What deciding needs of one firewall rule (a snapshot: later edits do not leak in)."""

    id: str
    action: str
    description: str
    products: tuple[str, ...]
    filter_id: str


class FirewallPlan:
    """The active firewall rules of a zone, in evaluation order, with their expressions."""

    def __init__(self, rules: list[_Rule], expressions: dict[str, str]) -> None:
        self.rules = rules
        self._checks = [Check(r.id, expressions[r.id]) for r in rules]

    @classmethod
    def from_rules(cls, rules: Sequence[Any]) -> FirewallPlan:
        """A plan from firewall rules already in evaluation order (paused ones are left out)."""
        return cls(
            [
                _Rule(
                    r.id,
                    r.action,
                    r.description or "",
                    tuple(r.products or ()),
                    r.filter.id,
                )
                for r in rules
                if not r.paused and not r.filter.paused
            ],
            expressions={r.id: r.filter.expression for r in rules},
        )

    @property
    def checks(self) -> list[Check]:
        """One check per active rule: its filter's expression, under the rule id."""
        return self._checks

    def decide(self, matched: Callable[[str], bool]) -> Verdict:
        """The firewall rules' events and final action for one request."""
        events: list[SecurityEvent] = []
        bypassed: set[str] = set()
        for rule in self.rules:
            if not matched(rule.id):
                continue
            metadata: dict[str, Any] = {"filter_id": rule.filter_id}
            if rule.action == "bypass":
                metadata["products"] = list(rule.products)
                bypassed.update(rule.products)
            events.append(
                SecurityEvent(
                    FIREWALL_RULES, rule.action, rule.id, None, rule.description, metadata=metadata
                )
            )
            if rule.action in TERMINAL_ACTIONS:
                return Verdict(events, rule.action, frozenset(bypassed))
            if rule.action == "allow":
                break  # later firewall rules do not run; the WAF still does
        return Verdict(events, None, frozenset(bypassed))


def firewall_plan(wb: Workbench, zone_id: str) -> FirewallPlan:
    """The zone's firewall rules, as they are now, as a SystemPlan."""
    return FirewallPlan.from_rules(wb.firewall.evaluation_order(zone_id))
