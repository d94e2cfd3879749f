"""Every system that sees a zone's requests, in order, as one :class:`SystemPlan`.

Order and conventions:

1. the zone's firewall rules (:mod:`workbench.traffic.firewall_plan`); a
   terminal action ends the request, ``bypass`` with product ``waf`` turns the
   *old* WAF off for the request (only the old one);
2. the new system, when on: the ruleset engine's custom rules, then the
   managed rules (``wb.rulesets.plan(zone, phase=None)``). When the new system
   is off, custom rules that exist still run here, alone;
3. the old WAF, when on and not bypassed. In validation mode (both on) it sees
   the request only if the new system did not end it, and its events follow
   the new system's, on the same ray id.

Check keys are the systems' own keys with a prefix (``fw:``, ``new:``,
``old:``). Two checks with the same expression text share one *slot*, so an
expression the old and new catalogues share is evaluated once.

    >>> from workbench.core.security import Check, SecurityEvent, StaticPlan, Verdict
    >>> fw = StaticPlan([], lambda m: Verdict([]))
    >>> new = StaticPlan([Check("r", "ssl")], lambda m: Verdict(
    ...     [SecurityEvent("firewallManaged", "log", "r", "rs", "seen")] if m("r") else []))
    >>> old = StaticPlan([Check("100", "ssl")], lambda m: Verdict(
    ...     [SecurityEvent("waf", "block", "100", None, "old")], "block") if m("100") else Verdict([]))
    >>> plan = ZonePlan(fw, new=new, old=old)
    >>> [c.key for c in plan.checks], plan.expressions
    (['new:r', 'old:100'], ['ssl'])
    >>> verdict = plan.decide(lambda key: True)
    >>> [e.source for e in verdict.events], verdict.action
    (['firewallManaged', 'waf'], 'block')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..core.security import Check, SecurityEvent, SystemPlan, Verdict
from .firewall_plan import firewall_plan

if TYPE_CHECKING:
    from ..core.platform import Workbench

#: The values ``systems`` takes besides "auto" (read the zone's state).
SYSTEM_CHOICES = {
    "old": (True, False),
    "new": (False, True),
    "both": (True, True),
    "none": (False, False),
}


class ZonePlan:
    """The firewall rules, then the new system, then the old one (see the module docstring)."""

    def __init__(
        self,
        firewall: SystemPlan,
        new: SystemPlan | None = None,
        old: SystemPlan | None = None,
    ) -> None:
        self.stages: list[tuple[str, SystemPlan]] = [("fw", firewall)]
        if new is not None:
            self.stages.append(("new", new))
        if old is not None:
            self.stages.append(("old", old))
        self.checks: list[Check] = []
        #: Distinct expression texts; a check's slot is its index here.
        self.expressions: list[str] = []
        self.slot: dict[str, int] = {}
        slots: dict[str, int] = {}
        for prefix, plan in self.stages:
            for check in plan.checks:
                key = f"{prefix}:{check.key}"
                self.checks.append(Check(key, check.expression))
                if check.expression not in slots:
                    slots[check.expression] = len(self.expressions)
                    self.expressions.append(check.expression)
                self.slot[key] = slots[check.expression]
        first: dict[int, str] = {}
        for key, slot in self.slot.items():
            first.setdefault(slot, key)
        # A key of each slot: deciding over keys asks about one check per distinct expression.
        self._first_key = [first[i] for i in range(len(self.expressions))]
        self._slots = {
            prefix: {c.key: self.slot[f"{prefix}:{c.key}"] for c in plan.checks}
            for prefix, plan in self.stages
        }

    @property
    def systems(self) -> list[str]:
        """The stages that run: ``fw``, then ``new`` and ``old`` when on."""
        return [prefix for prefix, _ in self.stages]

    def decide(self, matched: Callable[[str], bool]) -> Verdict:
        """The request's events (every stage's, in order) and final action, from ``matched(key)``."""
        return self.decide_slots(lambda slot: matched(self._first_key[slot]))

    def decide_slots(self, has: Callable[[int], bool]) -> Verdict:
        """As :meth:`decide`, from ``has(slot)``: whether the expression of a slot matched."""
        events: list[SecurityEvent] = []
        bypassed: frozenset[str] = frozenset()
        for prefix, plan in self.stages:
            if prefix == "old" and "waf" in bypassed:
                continue  # a firewall bypass of the waf product turns the old WAF off only
            slots = self._slots[prefix]
            verdict = plan.decide(lambda key, slots=slots: has(slots[key]))  # type: ignore[misc]
            events.extend(verdict.events)
            if prefix == "fw":
                bypassed = verdict.bypassed
            if verdict.action is not None:
                return Verdict(events, verdict.action, bypassed)
        return Verdict(events, None, bypassed)


def resolve_systems(wb: Workbench, zone_id: str, systems: Any = "auto") -> tuple[bool, bool]:
    """``(old_on, new_on)``: from the zone's state for "auto", else as ``systems`` says.

    The old WAF is on when ``wb.waf_legacy.enabled(zone)``; the new system when the
    zone's ``http_request_firewall_managed`` entry point exists. ``systems`` may be
    "auto", "old", "new", "both", "none", or a collection of "old"/"new".
    """
    if systems is None or systems == "auto":
        from ..rulesets import MANAGED_PHASE

        zone = wb.zone(zone_id)
        old_on = wb.waf_legacy.enabled(zone.id)
        new_on = wb.rulesets.find_entrypoint(zone.id, MANAGED_PHASE) is not None
        return old_on, new_on
    if isinstance(systems, str):
        if systems not in SYSTEM_CHOICES:
            raise ValueError(
                f"systems must be 'auto' or one of {', '.join(SYSTEM_CHOICES)}, got {systems!r}"
            )
        return SYSTEM_CHOICES[systems]
    chosen = set(systems) if isinstance(systems, Iterable) else set()
    unknown = chosen - {"old", "new"}
    if unknown or not isinstance(systems, Iterable):
        raise ValueError(f"systems: unknown system(s) {sorted(map(str, unknown))}; use old, new")
    return "old" in chosen, "new" in chosen


def zone_plan(wb: Workbench, zone_id: str, systems: Any = "auto") -> ZonePlan:
    """The zone's plan as its configuration is now (see :func:`resolve_systems`)."""
    from ..rulesets import CUSTOM_PHASE

    zone = wb.zone(zone_id)
    old_on, new_on = resolve_systems(wb, zone.id, systems)
    new: SystemPlan | None = None
    if new_on:
        new = wb.rulesets.plan(zone.id, phase=None)
    elif wb.rulesets.find_entrypoint(zone.id, CUSTOM_PHASE) is not None:
        new = wb.rulesets.plan(zone.id, phase=CUSTOM_PHASE)
    old = wb.waf_legacy.plan(zone.id) if old_on else None
    return ZonePlan(firewall_plan(wb, zone.id), new=new, old=old)
