"""A zone's entry point rulesets compiled into a :class:`~workbench.core.security.SystemPlan`.

``checks`` are every expression a request may need: the entry point's enabled
rules under their rule id, and each managed rule an execute rule may run
(enabled after overrides) under ``"<ruleset_id>:<rule_id>"``. ``decide`` walks
the entry point in order: skip rules change what later execute rules run,
execute rules run their managed ruleset, and the first terminal action ends
the request.

    >>> from datetime import UTC, datetime
    >>> from workbench.rulesets.models import CUSTOM_PHASE, Rule, Ruleset
    >>> when = datetime(2026, 1, 1, tzinfo=UTC)
    >>> rule = Rule(id="a" * 32, version="1", action="block", ref="a" * 32,
    ...             expression='http.request.uri.path contains "/admin"', last_updated=when)
    >>> entry = Ruleset(id="b" * 32, name="default", description="", kind="zone",
    ...                 phase=CUSTOM_PHASE, version="1", last_updated=when, rules=(rule,))
    >>> plan = build_plan(CUSTOM_PHASE, entry, {})
    >>> [c.key for c in plan.checks] == ["a" * 32]
    True
    >>> verdict = plan.decide(lambda key: True)
    >>> verdict.action, verdict.events[0].source
    ('block', 'firewallCustom')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.security import NEW_WAF, TERMINAL_ACTIONS, Check, SecurityEvent, Verdict
from .catalog import Catalog
from .expressions import matches_everything
from .models import CUSTOM_PHASE, MANAGED_PHASE, ManagedRule, ManagedRuleset, Ruleset
from .overrides import Effective, effective, threshold_of

#: Event source of custom rules (the analytics API's camelCase name).
CUSTOM_RULES = "firewallCustom"
SOURCES = {CUSTOM_PHASE: CUSTOM_RULES, MANAGED_PHASE: NEW_WAF}

Matched = Callable[[str], bool]


def managed_key(ruleset_id: str, rule_id: str) -> str:
    """The check key of a managed rule."""
    return f"{ruleset_id}:{rule_id}"


@dataclass(frozen=True)
class _Run:
    """What one execute rule runs: the managed rules enabled after its overrides."""

    ruleset: ManagedRuleset
    rules: tuple[tuple[ManagedRule, Effective], ...]
    threshold: tuple[ManagedRule, Effective] | None  # score-based rulesets only


@dataclass
class PhasePlan:
    """One phase's entry point, ready to decide; ``compiled`` maps each check key to its expression."""

    phase: str
    entrypoint: Ruleset | None
    checks: list[Check] = field(default_factory=list)
    compiled: dict[str, Any] = field(default_factory=dict, repr=False)
    runs: dict[str, _Run] = field(default_factory=dict, repr=False)
    #: Keys of ``true`` expressions: they match without being checks.
    always: set[str] = field(default_factory=set, repr=False)

    @property
    def source(self) -> str:
        """The event source of this phase's own rules."""
        return SOURCES[self.phase]

    def decide(self, matched: Matched) -> Verdict:
        """The events and final action for one request, given ``matched(key)``."""
        always = self.always

        def asked(key: str) -> bool:
            return key in always or matched(key)

        return self._decide(asked)

    def _decide(self, matched: Matched) -> Verdict:
        events: list[SecurityEvent] = []
        bypassed: set[str] = set()
        skipped_sets: set[str] = set()
        skipped_rules: dict[str, set[str]] = {}
        entry = self.entrypoint
        if entry is None:
            return Verdict(events)
        for rule in entry.rules:
            if not rule.enabled:
                continue
            params = rule.action_parameters or {}
            if rule.action == "execute":
                run = self.runs[rule.id]
                # A skipped ruleset's execute rule is not even evaluated.
                if run.ruleset.id in skipped_sets or not matched(rule.id):
                    continue
                skipped = skipped_rules.get(run.ruleset.id, set())
                action = _run(run, skipped, matched, events)
                if action is not None:
                    return Verdict(events, action, frozenset(bypassed))
                continue
            if not matched(rule.id):
                continue
            if rule.action == "skip":
                if (rule.logging or {}).get("enabled", True):
                    events.append(
                        SecurityEvent(self.source, "skip", rule.id, entry.id, rule.description)
                    )
                bypassed.update(params.get("products", []), params.get("phases", []))
                if params.get("ruleset") == "current":
                    break
                skipped_sets.update(params.get("rulesets", []))
                for ruleset_id, ids in params.get("rules", {}).items():
                    skipped_rules.setdefault(ruleset_id, set()).update(ids)
                continue
            events.append(
                SecurityEvent(self.source, rule.action, rule.id, entry.id, rule.description)
            )
            if rule.action in TERMINAL_ACTIONS:
                return Verdict(events, rule.action, frozenset(bypassed))
        return Verdict(events, None, frozenset(bypassed))


def _run(run: _Run, skipped: set[str], matched: Matched, events: list[SecurityEvent]) -> str | None:
    """Run one managed ruleset; append its events and return its terminal action, if any."""
    ruleset = run.ruleset
    if run.threshold is not None:
        return _run_scored(run, skipped, matched, events)
    for rule, eff in run.rules:
        if rule.id in skipped or not matched(managed_key(ruleset.id, rule.id)):
            continue
        events.append(
            SecurityEvent(
                NEW_WAF,
                eff.action,
                rule.id,
                ruleset.id,
                rule.description,
                paranoia_level=rule.paranoia_level,
            )
        )
        if eff.action in TERMINAL_ACTIONS:
            return eff.action
    return None


def _run_scored(
    run: _Run, skipped: set[str], matched: Matched, events: list[SecurityEvent]
) -> str | None:
    """Anomaly scoring (OWASP): one event from the threshold rule when the sum reaches it."""
    ruleset = run.ruleset
    assert run.threshold is not None
    last, eff = run.threshold
    if last.id in skipped:
        return None  # without its deciding rule the ruleset only scores
    total, contributing = 0, []
    for rule, _ in run.rules:
        if rule.id in skipped or not matched(managed_key(ruleset.id, rule.id)):
            continue
        total += rule.score or 0
        contributing.append(
            {
                "rule_id": rule.id,
                "description": rule.description,
                "score": rule.score,
                "paranoia_level": rule.paranoia_level,
            }
        )
    threshold = threshold_of(eff)
    if not contributing or total < threshold or not matched(managed_key(ruleset.id, last.id)):
        return None
    events.append(
        SecurityEvent(
            NEW_WAF,
            eff.action,
            last.id,
            ruleset.id,
            last.description,
            score=total,
            metadata={"contributing": contributing, "threshold": threshold},
        )
    )
    return eff.action if eff.action in TERMINAL_ACTIONS else None


def _prepare(ruleset: ManagedRuleset, overrides: Any) -> _Run:
    """The managed rules one execute rule may run, with its overrides applied."""
    enabled = [(m, e) for m in ruleset.rules if (e := effective(m, overrides)).enabled]
    scored = ruleset.threshold_rule
    if scored is None:
        return _Run(ruleset, tuple(enabled), None)
    threshold = next(((m, e) for m, e in enabled if m.id == scored.id), None)
    if threshold is None:
        return _Run(ruleset, (), None)  # its deciding rule is off: nothing can come of a score
    # In a score-based ruleset a rule without a score decides nothing, so it is not asked about.
    scoring = tuple((m, e) for m, e in enabled if m.score is not None and m.id != scored.id)
    return _Run(ruleset, scoring, threshold)


def build_plan(phase: str, entrypoint: Ruleset | None, catalog: Catalog) -> PhasePlan:
    """The plan of one phase (an empty plan when the zone has no entry point there)."""
    plan = PhasePlan(phase, entrypoint)
    for rule in entrypoint.rules if entrypoint else ():
        if not rule.enabled:
            continue
        _add(plan, rule.id, rule.expression, rule.compiled)
        if rule.action != "execute":
            continue
        params = rule.action_parameters or {}
        run = _prepare(catalog[params["id"]], params.get("overrides"))
        plan.runs[rule.id] = run
        for managed, _ in run.rules + ((run.threshold,) if run.threshold else ()):
            _add(
                plan, managed_key(run.ruleset.id, managed.id), managed.expression, managed.compiled
            )
    return plan


def _add(plan: PhasePlan, key: str, expression: str, compiled: Any) -> None:
    if matches_everything(expression):
        plan.always.add(key)
    else:
        plan.checks.append(Check(key, expression))
        plan.compiled[key] = compiled


@dataclass
class ChainPlan:
    """Several phases in request order: a terminal action ends the chain, and a phase a
    custom skip rule listed in ``phases`` does not run."""

    plans: Sequence[PhasePlan]

    @property
    def checks(self) -> list[Check]:
        """The checks of every phase."""
        return [c for p in self.plans for c in p.checks]

    @property
    def compiled(self) -> dict[str, Any]:
        """The compiled expression of every check."""
        return {k: v for p in self.plans for k, v in p.compiled.items()}

    def decide(self, matched: Matched) -> Verdict:
        """The phases' verdicts joined in order."""
        events: list[SecurityEvent] = []
        bypassed: frozenset[str] = frozenset()
        for plan in self.plans:
            if plan.phase in bypassed:
                continue
            verdict = plan.decide(matched)
            events.extend(verdict.events)
            bypassed |= verdict.bypassed
            if verdict.action is not None:
                return Verdict(events, verdict.action, bypassed)
        return Verdict(events, None, bypassed)
