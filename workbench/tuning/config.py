"""The new system's configuration a tuning session works on, and its decision per request.

The managed entry point a zone would run: its current one once it has one
(migrated, or tuned with :meth:`~workbench.tuning.TuningService.apply`), else
the tuned draft the service keeps for it, else what a migration would
configure (:func:`workbench.migration.generate.propose`). It is compiled with
the ruleset engine's own :func:`~workbench.rulesets.engine.build_plan` and a
dry-run PUT (so a body the PUT refuses is refused here too), never stored.

``decide_new`` runs a request through the zone's firewall rules, its custom
rules, then this managed entry point, as the traffic pipeline does once the
new system is on (the old WAF is off there).

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> config = NewConfig.of_zone(wb, zone.id)
    >>> [r["action"] for r in config.rules], config.owasp_rule_index
    (['execute', 'execute'], 1)
    >>> config.owasp_settings()
    {'paranoia_level': 2, 'threshold': 40, 'action': 'challenge'}
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.security import SecurityEvent, Verdict
from ..migration.generate import propose
from ..migration.setup import read_zone
from ..rulesets import CUSTOM_PHASE, MANAGED_PHASE, OWASP_ID
from ..rulesets.engine import PhasePlan, build_plan, managed_key
from ..rulesets.overrides import effective, threshold_of
from ..traffic.firewall_plan import firewall_plan

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core.platform import Workbench
    from ..rulesets.models import ManagedRuleset, Ruleset

#: Fields of a stored rule that a PUT body may carry (``id`` keeps the rule's identity).
BODY_FIELDS = (
    "id",
    "action",
    "expression",
    "description",
    "enabled",
    "action_parameters",
    "logging",
    "ref",
)


def body_rule(rule: dict[str, Any]) -> dict[str, Any]:
    """A rule as a PUT body wants it: empty ids, versions and refs left out."""
    return {
        k: copy.deepcopy(v) for k, v in rule.items() if k in BODY_FIELDS and v not in ("", None)
    }


def synthetic_id(i: int) -> str:
    """A stand-in id for the ``i``-th unsaved rule (ids are drawn only when a PUT stores)."""
    return f"{i:08x}" + "0" * 24


@dataclass
class NewConfig:
    """A zone's managed entry point rules (PUT body form) and the plans around them."""

    wb: Workbench
    zone_id: str
    rules: list[dict[str, Any]]
    source: str  # "entrypoint", "draft" or "proposed"
    entrypoint_id: str | None = None
    _plans: Any = field(default=None, repr=False)

    @classmethod
    def of_zone(
        cls, wb: Workbench, zone_id: str, draft: list[dict[str, Any]] | None = None
    ) -> NewConfig:
        """The configuration the zone runs or would run (see the module docstring)."""
        zone = wb.zone(zone_id)
        entry = wb.rulesets.find_entrypoint(zone.id, MANAGED_PHASE)
        if entry is not None:
            rules = [body_rule(r.to_dict()) for r in entry.rules]
            return cls(wb, zone.id, rules, "entrypoint", entry.id)
        if draft is not None:
            return cls(wb, zone.id, [body_rule(r) for r in draft], "draft")
        proposed = propose(read_zone(wb, zone.id))
        return cls(wb, zone.id, [body_rule(r) for r in proposed.rules], "proposed")

    def with_rules(self, rules: list[dict[str, Any]]) -> NewConfig:
        """The same zone with other managed rules."""
        return NewConfig(self.wb, self.zone_id, rules, self.source, self.entrypoint_id)

    def body(self) -> dict[str, Any]:
        """The entry point PUT body (``{"rules": [...]}``)."""
        return {"rules": copy.deepcopy(self.rules)}

    @property
    def catalog(self) -> dict[str, ManagedRuleset]:
        """The managed rulesets the engine knows."""
        return self.wb.rulesets.catalog

    def ruleset(self) -> Ruleset:
        """The rules checked by a dry-run PUT, unsaved rules given stand-in ids."""
        made = self.wb.rulesets.put_entrypoint(
            self.zone_id, MANAGED_PHASE, self.body(), dry_run=True
        )
        rules = tuple(
            r if r.id else dataclasses.replace(r, id=synthetic_id(i), ref=synthetic_id(i))
            for i, r in enumerate(made.rules)
        )
        return dataclasses.replace(made, rules=rules)

    def plans(self) -> tuple[Any, PhasePlan, PhasePlan]:
        """The firewall plan, the custom phase's plan and this managed entry point's plan."""
        if self._plans is None:
            custom = self.wb.rulesets.find_entrypoint(self.zone_id, CUSTOM_PHASE)
            self._plans = (
                firewall_plan(self.wb, self.zone_id),
                build_plan(CUSTOM_PHASE, custom, self.catalog),
                build_plan(MANAGED_PHASE, self.ruleset(), self.catalog),
            )
        return self._plans

    def expressions(self) -> list[str]:
        """Every expression deciding may ask about, and every managed rule's (any state)."""
        fw, custom, managed = self.plans()
        out = [c.expression for p in (fw, custom, managed) for c in p.checks]
        out += [r.expression for rs in self.catalog.values() for r in rs.rules]
        return out

    def keys(self) -> dict[str, str]:
        """Check key (prefixed by stage) -> expression, for :func:`decide_new`."""
        fw, custom, managed = self.plans()
        keys = {f"fw:{c.key}": c.expression for c in fw.checks}
        keys |= {f"cu:{c.key}": c.expression for c in custom.checks}
        keys |= {f"mg:{c.key}": c.expression for c in managed.checks}
        for rs in self.catalog.values():
            keys |= {f"all:{managed_key(rs.id, r.id)}": r.expression for r in rs.rules}
        return keys

    # -- the OWASP execute rule ------------------------------------------------------
    @property
    def owasp_rule_index(self) -> int | None:
        """Index of the (first enabled) execute rule that runs the OWASP ruleset."""
        for i, rule in enumerate(self.rules):
            params = rule.get("action_parameters") or {}
            if (
                rule.get("action") == "execute"
                and params.get("id") == OWASP_ID
                and rule.get("enabled", True)
            ):
                return i
        return None

    def owasp_overrides(self) -> dict[str, Any]:
        """The OWASP execute rule's overrides (empty when it has none)."""
        i = self.owasp_rule_index
        if i is None:
            return {}
        return copy.deepcopy((self.rules[i].get("action_parameters") or {}).get("overrides") or {})

    def owasp_settings(self, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        """Paranoia level (the highest level with a rule left on), threshold and action."""
        owasp = self.catalog[OWASP_ID]
        ov = self.owasp_overrides() if overrides is None else overrides
        on = [
            r.paranoia_level or 0
            for r in owasp.rules
            if r.score is not None and effective(r, ov).enabled
        ]
        last = owasp.threshold_rule
        assert last is not None
        eff = effective(last, ov)
        return {
            "paranoia_level": max(on, default=0),
            "threshold": threshold_of(eff),
            "action": eff.action,
        }


def decide_new(
    plans: tuple[Any, PhasePlan, PhasePlan], matched: Callable[[str], bool]
) -> tuple[Verdict, bool]:
    """The request's verdict through firewall, custom and managed rules, and whether the
    managed phase ran for it."""
    fw, custom, managed = plans
    events: list[SecurityEvent] = []
    for prefix, plan in (("fw", fw), ("cu", custom)):
        verdict = plan.decide(lambda key, p=prefix: matched(f"{p}:{key}"))  # type: ignore[misc]
        events.extend(verdict.events)
        if verdict.action is not None:
            return Verdict(events, verdict.action), False
        if prefix == "cu" and MANAGED_PHASE in verdict.bypassed:
            return Verdict(events), False
    verdict = managed.decide(lambda key: matched(f"mg:{key}"))
    return Verdict(events + verdict.events, verdict.action), True
