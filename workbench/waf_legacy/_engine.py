"""A zone's old-WAF configuration compiled into a :class:`~workbench.core.security.SystemPlan`.

The plan's checks are every rule that can run (key ``"<package_id>:<rule_id>"``),
the URL patterns of the page rules that decide the WAF (``pagerule:<id>``),
of the zone's live URI-based overrides (``override:<id>``), and whether the
request is AJAX (``ajax``). :meth:`LegacyPlan.decide` then runs, in order:

1. page rules: the highest-priority matching active page rule applies (only
   one page rule applies to a URL). ``disable_security`` or ``waf: off`` turns
   the old WAF off for the request; ``waf: on`` turns it on even when the
   zone setting is off; with no matching rule the zone setting decides.
2. overrides that match, from the lowest precedence to the highest (a lower
   ``priority`` number wins, then the older one), each overwriting the group
   and rule modes and the ``rewrite_action`` map for this request.
3. traditional packages: a matching allow rule (mode on, group on) lets the
   request through that package (one ``allow`` event); else each matching deny
   rule whose action (its mode, ``default`` meaning its default mode, rewritten
   once by ``rewrite_action``) is not ``disable`` gives one event.
4. anomaly packages (sensitivity not off): the scores of the matching rules
   (mode on, group on) add up; at the sensitivity's threshold (higher for AJAX
   requests) one event with rule id ``981176`` and the package action.

Actions: ``block`` and ``challenge`` end the request (block is stronger);
``simulate`` is shown as ``log`` and lets it through. A firewall rule that
bypasses the ``waf`` product is applied by the pipeline: ``decide`` assumes
the request was not bypassed.

    >>> from workbench.waf_legacy.catalog import load_catalog
    >>> catalog = load_catalog([{"id": "1" * 32, "name": "CF", "description": "",
    ...     "detection_mode": "traditional", "groups": [{"id": "2" * 32, "name": "Specials",
    ...     "description": "", "default_mode": "on", "rules": [{"id": "100001", "description": "admin",
    ...     "priority": "1", "kind": "deny", "default_mode": "challenge", "new_id": None,
    ...     "expression": 'http.request.uri.path contains "/admin"'}]}]}])
    >>> package = catalog.packages[0]
    >>> plan = build_plan([PackageRun(package, {"2" * 32: "on"}, {"100001": "default"})],
    ...                   page_rules=[], overrides=[], setting_on=True)
    >>> [c.key for c in plan.checks]
    ['11111111111111111111111111111111:100001']
    >>> verdict = plan.decide(lambda key: True)
    >>> verdict.action, verdict.events[0].rule_id, verdict.events[0].ruleset_id
    ('challenge', '100001', None)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..core.security import OLD_WAF, Check, SecurityEvent, Verdict
from .catalog import GroupDef, PackageDef, RuleDef
from .models import AJAX_THRESHOLDS, OWASP_RULE_ID, THRESHOLDS

AJAX_KEY = "ajax"
AJAX_EXPRESSION = 'any(lower(http.request.headers["x-requested-with"][*])[*] eq "xmlhttprequest")'
#: The event action of each rule action (``simulate`` lets the request through, logged).
EVENT_ACTIONS = {"block": "block", "challenge": "challenge", "simulate": "log"}
_STRENGTH = {"block": 2, "challenge": 1}


@dataclass(frozen=True)
class PackageRun:
    """One package as a zone configured it: every group's mode, every rule's configured mode."""

    definition: PackageDef
    group_modes: Mapping[str, str]
    rule_modes: Mapping[str, str]
    sensitivity: str = "off"
    action_mode: str = "challenge"


@dataclass(frozen=True)
class PageRuleRef:
    """An active page rule, in priority order; ``effect`` is on, off or None (no WAF action)."""

    key: str
    expression: str
    effect: str | None


@dataclass(frozen=True)
class OverrideRef:
    """A live URI-based override: its URL check and what it changes."""

    key: str
    expression: str
    groups: Mapping[str, str]
    rules: Mapping[str, str]
    rewrite_action: Mapping[str, str]


def rule_key(rule: RuleDef) -> str:
    """The check key of a rule."""
    return f"{rule.package_id}:{rule.id}"


def group_mode_of(action: str, group: GroupDef) -> str:
    """A group's mode under an override's group action (default: the catalogue's mode)."""
    if action == "default":
        return group.default_mode
    return "off" if action in ("off", "disable") else "on"


def rule_mode_of(action: str, rule: RuleDef) -> str:
    """A rule's configured mode under an override's rule action."""
    if rule.kind == "deny":
        return action
    if action == "default":
        return rule.default_mode
    return "off" if action in ("off", "disable") else "on"


def deny_action(mode: str, rule: RuleDef, rewrite: Mapping[str, str]) -> str:
    """A deny rule's action: its mode (``default`` = its default mode), rewritten once."""
    if mode in rewrite:
        mode = rewrite[mode]
        return rule.default_mode if mode == "default" else mode
    if mode == "default":
        mode = rule.default_mode
        if mode in rewrite:
            mode = rewrite[mode]
            return rule.default_mode if mode == "default" else mode
    return mode


@dataclass
class LegacyPlan:
    """The compiled plan: :attr:`checks` and :meth:`decide` (the SystemPlan contract)."""

    checks: list[Check]
    packages: list[PackageRun] = field(default_factory=list)
    page_rules: list[PageRuleRef] = field(default_factory=list)
    overrides: list[OverrideRef] = field(default_factory=list)
    setting_on: bool = False

    def decide(self, matched: Callable[[str], bool]) -> Verdict:
        """The old WAF's verdict, given which checks matched (see the module docstring)."""
        keys = {c.key for c in self.checks}
        if not keys:
            return Verdict([])

        def m(key: str) -> bool:
            if key not in keys:  # the contract: never ask about a key not in checks
                raise KeyError(f"the plan has no check {key!r}")
            return bool(matched(key))

        effect = next((pr.effect for pr in self.page_rules if m(pr.key)), None)
        if effect == "off" or not (self.setting_on or effect == "on"):
            return Verdict([])
        groups = {p.definition.id: dict(p.group_modes) for p in self.packages}
        rules = {p.definition.id: dict(p.rule_modes) for p in self.packages}
        rewrite: dict[str, str] = {}
        for ov in self.overrides:
            if m(ov.key):
                _apply(ov, self.packages, groups, rules)
                rewrite.update(ov.rewrite_action)
        events: list[SecurityEvent] = []
        for run in self.packages:
            pid = run.definition.id
            if run.definition.anomaly:
                events += _anomaly(run, groups[pid], rules[pid], rewrite, m)
            else:
                events += _traditional(run, groups[pid], rules[pid], rewrite, m)
        strongest = max((e.action for e in events), key=lambda a: _STRENGTH.get(a, 0), default=None)
        return Verdict(events, strongest if strongest in _STRENGTH else None)


def _apply(
    ov: OverrideRef,
    packages: Sequence[PackageRun],
    groups: dict[str, dict[str, str]],
    rules: dict[str, dict[str, str]],
) -> None:
    for run in packages:
        d = run.definition
        for group_id, action in ov.groups.items():
            if (group := d.group(group_id)) is not None:
                groups[d.id][group_id] = group_mode_of(action, group)
        for rule_id, action in ov.rules.items():
            if (rule := d.rule(rule_id)) is not None:
                rules[d.id][rule_id] = rule_mode_of(action, rule)


def _traditional(
    run: PackageRun,
    groups: Mapping[str, str],
    modes: Mapping[str, str],
    rewrite: Mapping[str, str],
    m: Callable[[str], bool],
) -> list[SecurityEvent]:
    live = [g for g in run.definition.groups if groups[g.id] == "on"]
    for group in live:
        for rule in group.rules:
            if rule.kind == "allow" and modes[rule.id] == "on" and m(rule_key(rule)):
                return [_event("allow", rule)]
    events = []
    for group in live:
        for rule in group.rules:
            if rule.kind != "deny":
                continue
            action = deny_action(modes[rule.id], rule, rewrite)
            if action in EVENT_ACTIONS and m(rule_key(rule)):
                events.append(_event(EVENT_ACTIONS[action], rule))
    return events


def _event(action: str, rule: RuleDef) -> SecurityEvent:
    return SecurityEvent(
        OLD_WAF,
        action,
        rule.id,
        None,
        rule.description,
        metadata={"package_id": rule.package_id, "group_id": rule.group_id},
    )


def _anomaly(
    run: PackageRun,
    groups: Mapping[str, str],
    modes: Mapping[str, str],
    rewrite: Mapping[str, str],
    m: Callable[[str], bool],
) -> list[SecurityEvent]:
    if run.sensitivity not in THRESHOLDS:
        return []
    action = rewrite.get(run.action_mode, run.action_mode)
    action = run.action_mode if action == "default" else action
    if action not in EVENT_ACTIONS:
        return []
    contributing: list[str] = []
    total = 0
    for group in run.definition.groups:
        if groups[group.id] != "on":
            continue
        for rule in group.rules:
            if modes[rule.id] == "on" and m(rule_key(rule)):
                contributing.append(rule.id)
                total += rule.score or 0
    # AJAX thresholds are higher, so a score under the normal one never needs the AJAX check.
    if total < THRESHOLDS[run.sensitivity]:
        return []
    threshold = (AJAX_THRESHOLDS if m(AJAX_KEY) else THRESHOLDS)[run.sensitivity]
    if total < threshold:
        return []
    return [
        SecurityEvent(
            OLD_WAF,
            EVENT_ACTIONS[action],
            OWASP_RULE_ID,
            None,
            f"{run.definition.name}: inbound anomaly score {total} reached the "
            f"{run.sensitivity} sensitivity threshold {threshold}",
            score=total,
            metadata={"contributing": contributing, "threshold": threshold},
        )
    ]


def build_plan(
    packages: Sequence[PackageRun],
    *,
    page_rules: Sequence[PageRuleRef],
    overrides: Sequence[OverrideRef],
    setting_on: bool,
) -> LegacyPlan:
    """The plan of one zone (pass no packages for a zone where the old WAF cannot run).

    ``page_rules`` are the active ones, highest priority first; ``overrides``
    the live ones, lowest precedence first.
    """
    if not packages or not (setting_on or any(p.effect == "on" for p in page_rules)):
        return LegacyPlan([])
    # Only page rules up to the last one with a WAF action can change the outcome.
    last = max((i for i, p in enumerate(page_rules) if p.effect is not None), default=-1)
    ranked = list(page_rules[: last + 1])
    checks = [Check(p.key, p.expression) for p in ranked]
    checks += [Check(o.key, o.expression) for o in overrides]
    if any(p.definition.anomaly and p.sensitivity in THRESHOLDS for p in packages):
        checks.append(Check(AJAX_KEY, AJAX_EXPRESSION))
    checks += [
        Check(rule_key(rule), rule.expression)
        for run in packages
        for rule in _candidates(run, overrides)
    ]
    return LegacyPlan(checks, list(packages), ranked, list(overrides), setting_on)


def _candidates(run: PackageRun, overrides: Sequence[OverrideRef]) -> list[RuleDef]:
    """The rules that may run for some request: configured on, or turned on by an override."""
    d = run.definition
    if d.anomaly and run.sensitivity not in THRESHOLDS:
        return []
    rewrites: list[Mapping[str, str]] = [{}] + [o.rewrite_action for o in overrides]
    out = []
    for group in d.groups:
        group_modes = {run.group_modes[group.id]}
        group_modes |= {
            group_mode_of(o.groups[group.id], group) for o in overrides if group.id in o.groups
        }
        if "on" not in group_modes:
            continue
        for rule in group.rules:
            modes = {run.rule_modes[rule.id]}
            modes |= {rule_mode_of(o.rules[rule.id], rule) for o in overrides if rule.id in o.rules}
            if rule.kind != "deny":
                runs = "on" in modes
            else:
                runs = any(
                    deny_action(mo, rule, rw) in EVENT_ACTIONS for mo in modes for rw in rewrites
                )
            if runs:
                out.append(rule)
    return out
