"""The ruleset engine of one Workbench: zone entry points, managed rulesets, evaluation.

Every write is all-or-nothing: a PUT body is checked in full, then the
``before_save`` hook may refuse it, and only then is the new version stored.
All methods hold one lock, so threads may share the service.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=1)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> rs = RulesetsService(wb, catalog={})
    >>> entry = rs.put_entrypoint(zone.id, "http_request_firewall_custom", {"rules": [
    ...     {"action": "block", "expression": 'http.request.uri.path contains "/admin"'}]})
    >>> entry.version, entry.kind
    ('1', 'zone')
    >>> rs.evaluate(zone.id, {"http.request.uri.path": "/admin/x"}, phase=None).action
    'block'
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..core.errors import must_exist
from ..core.security import Verdict
from ..core.text import quotable
from ._checks import invalid
from ._fields import RuleSpec, entrypoint_body
from .catalog import Catalog, default_catalog
from .engine import ChainPlan, PhasePlan, build_plan
from .errors import EntrypointNotFound, RulesetNotFound, UnknownPhase
from .models import MANAGED_PHASE, PHASES, ManagedRuleset, Rule, Ruleset

if TYPE_CHECKING:
    from datetime import datetime

    from ..core.platform import Workbench, Zone

#: A hook that may refuse a PUT (by raising) after it is checked and before it is stored.
BeforeSave = Callable[["Zone", list[Rule]], None]
Plan = PhasePlan | ChainPlan
AnyRuleset = Ruleset | ManagedRuleset


def check_phase(phase: Any) -> str:
    """``phase`` when the workbench simulates it; else the error naming the phases it does."""
    if not isinstance(phase, str) or phase not in PHASES:
        raise UnknownPhase(phase, PHASES)
    return phase


class _Zone:
    """The ruleset state of one zone: every version of each phase's entry point, oldest first."""

    def __init__(self) -> None:
        self.history: dict[str, list[Ruleset]] = {}

    def current(self, phase: str) -> Ruleset | None:
        versions = self.history.get(phase)
        return versions[-1] if versions else None


class RulesetsService:
    """Entry point rulesets of every zone of ``wb`` and the managed rulesets of ``catalog``.

    ``catalog`` defaults to the package's catalogue files; tests pass their own
    (see :func:`~workbench.rulesets.catalog.load_catalog`).
    """

    def __init__(self, wb: Workbench, catalog: Catalog | None = None) -> None:
        self.wb = wb
        self.lock = threading.RLock()
        self.catalog: Catalog = default_catalog() if catalog is None else dict(catalog)
        self._zones: dict[str, _Zone] = {}
        self._plans: dict[tuple[str, str | None], tuple[tuple[str, ...], Plan]] = {}

    def _state(self, zone_id: str) -> tuple[Zone, _Zone]:
        zone = self.wb.zone(zone_id)
        return zone, self._zones.setdefault(zone.id, _Zone())

    # -- reading -----------------------------------------------------------
    def find_entrypoint(self, zone_id: str, phase: str) -> Ruleset | None:
        """The zone's current entry point of ``phase``, or None before the first PUT."""
        check_phase(phase)
        with self.lock:
            return self._state(zone_id)[1].current(phase)

    def get_entrypoint(self, zone_id: str, phase: str) -> Ruleset:
        """The zone's current entry point of ``phase`` (10003 before the first PUT)."""
        return must_exist(self.find_entrypoint(zone_id, phase), EntrypointNotFound, phase)

    def list_rulesets(self, zone_id: str) -> list[AnyRuleset]:
        """The zone's entry points (in phase order), then the managed rulesets."""
        with self.lock:
            state = self._state(zone_id)[1]
            own = [r for p in PHASES if (r := state.current(p)) is not None]
        return [*own, *self.catalog.values()]

    def get_ruleset(self, zone_id: str, ruleset_id: str) -> AnyRuleset:
        """One of the zone's entry points or a managed ruleset, by id."""
        for ruleset in self.list_rulesets(zone_id):
            if ruleset.id == ruleset_id:
                return ruleset
        raise RulesetNotFound(f"could not find ruleset {quotable(ruleset_id)}")

    def list_versions(self, zone_id: str, ruleset_id: str) -> list[AnyRuleset]:
        """Every version of a ruleset, oldest first (a managed ruleset has one here)."""
        found = self.get_ruleset(zone_id, ruleset_id)
        if isinstance(found, ManagedRuleset):
            return [found]
        with self.lock:
            return list(self._state(zone_id)[1].history[found.phase])

    def get_version(self, zone_id: str, ruleset_id: str, version: str) -> AnyRuleset:
        """One version of a ruleset."""
        for ruleset in self.list_versions(zone_id, ruleset_id):
            if ruleset.version == version:
                return ruleset
        raise RulesetNotFound(
            f"could not find version {quotable(version)} of ruleset {quotable(ruleset_id)}"
        )

    # -- writing -----------------------------------------------------------
    def put_entrypoint(
        self,
        zone_id: str,
        phase: str,
        body: Any,
        *,
        before_save: BeforeSave | None = None,
        dry_run: bool = False,
    ) -> Ruleset:
        """Replace the entry point of ``phase`` with ``body`` (``{rules, name?, description?}``).

        Creates the entry point (version "1") on the first call; each later call
        makes the next version. Rules that name an existing rule ``id`` keep it,
        and keep their version unless their content changed. ``before_save(zone,
        rules)`` may refuse by raising; nothing is stored then (the new rules'
        ids were drawn already, so the seeded ids that follow differ). ``dry_run``
        checks everything (the hook excepted), draws no id and stores nothing.
        """
        check_phase(phase)
        spec = entrypoint_body(body, phase, self.catalog)
        with self.lock:
            zone, state = self._state(zone_id)
            current = state.current(phase)
            for i, rule in enumerate(spec.rules):
                if rule.id is not None and (current is None or current.rule(rule.id) is None):
                    raise invalid(
                        f"/rules/{i}/id",
                        f"rule {rule.id} is not in this entry point; leave id out to add a rule",
                    )
            if current is not None and spec.name not in (None, current.name):
                raise invalid(
                    "/name", f"the name of a ruleset cannot change (it is {current.name!r})"
                )
            # A dry run draws no ids, so it leaves the seeded sequence as it was.
            new_id = (lambda: "") if dry_run else self.wb.new_id
            now = self.wb.now()
            rules = tuple(_rule(r, current, now, new_id) for r in spec.rules)
            new = Ruleset(
                id=current.id if current else new_id(),
                name=spec.name or (current.name if current else "default"),
                description=(
                    spec.description
                    if spec.description is not None
                    else (current.description if current else "")
                ),
                kind="zone",
                phase=phase,
                version=str(int(current.version) + 1) if current else "1",
                last_updated=now,
                rules=rules,
            )
            if dry_run:
                return new
            if before_save is not None:
                before_save(zone, list(rules))
            state.history.setdefault(phase, []).append(new)
            for key in ((zone.id, phase), (zone.id, None)):
                self._plans.pop(key, None)
            return new

    # -- evaluation --------------------------------------------------------
    def plan(self, zone_id: str, phase: str | None = MANAGED_PHASE) -> Plan:
        """The zone's entry point of ``phase`` as a SystemPlan; ``phase=None`` chains every
        phase in request order (custom rules first). Cached until the next PUT."""
        phases = PHASES if phase is None else (check_phase(phase),)
        with self.lock:
            zone, state = self._state(zone_id)
            current = [state.current(p) for p in phases]
            stamp = tuple(c.version if c else "" for c in current)
            cached = self._plans.get((zone.id, phase))
            if cached is not None and cached[0] == stamp:
                return cached[1]
            plans = [build_plan(p, c, self.catalog) for p, c in zip(phases, current, strict=True)]
            made: Plan = plans[0] if phase is not None else ChainPlan(plans)
            self._plans[(zone.id, phase)] = (stamp, made)
            return made

    def evaluate(
        self, zone_id: str, fields: Mapping[str, Any], phase: str | None = MANAGED_PHASE
    ) -> Verdict:
        """Run one request (a mapping of field values) through :meth:`plan`."""
        plan = self.plan(zone_id, phase)
        compiled = plan.compiled
        return plan.decide(lambda key: bool(compiled[key].matches(fields)))


def _rule(
    spec: RuleSpec, current: Ruleset | None, now: datetime, new_id: Callable[[], str]
) -> Rule:
    """The stored rule for ``spec``: an existing rule keeps its id, and its version when unchanged."""
    old = current.rule(spec.id) if current is not None and spec.id is not None else None
    rule_id = old.id if old is not None else new_id()
    made = Rule(
        id=rule_id,
        version="1",
        action=spec.action,
        expression=spec.expression,
        last_updated=now,
        ref=spec.ref or (old.ref if old is not None else rule_id),
        description=spec.description,
        enabled=spec.enabled,
        action_parameters=spec.action_parameters,
        logging=spec.logging,
        compiled=spec.compiled,
    )
    if old is None:
        return made
    if old.content() == made.content():
        return old
    return dataclasses.replace(made, version=str(int(old.version) + 1))
