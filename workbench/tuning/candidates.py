"""The narrowest exception for requests marked as wrongly blocked, and each one's blast radius.

:func:`propose` returns candidates from narrowest to widest kind, each as the
whole managed entry point it would PUT (:attr:`Candidate.body`):

1. ``rule``: one managed rule turned off (an OWASP scoring rule) or set to
   ``log`` (any other managed rule), a rule override on its execute rule;
2. ``tag``: one category of those rules turned off, a tag override;
3. ``skip``: a skip rule limited to what the marked requests share (host,
   path or path prefix, method, query parameter names), placed before the
   first execute rule (a skip only affects execute rules after it): first
   skipping only the rules that blocked them, then their whole rulesets, then
   every remaining rule (``ruleset: "current"``);
4. ``threshold``: the OWASP score threshold just above the marked requests'.

Within a kind, the smaller blast radius comes first. Every candidate is
decided again over the whole replayed log by the ruleset engine (from the
what-if's matches, no replay): only candidates that clear every marked
request are kept, and :attr:`Candidate.blast` lists the other requests it
stops blocking or stops inspecting, attacks first.

    >>> KINDS
    ('rule', 'tag', 'skip', 'threshold')
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]

from ..rulesets import MANAGED_PHASE, OWASP_ID, OWASP_THRESHOLD_RULE_ID
from ..rulesets.engine import PhasePlan
from ..rulesets.expressions import matches_everything
from ..rulesets.overrides import effective
from ..terraform import ruleset_hcl
from ..traffic.generators import ATTACK_LABELS
from ._matches import Matches, decide_rows
from .config import NewConfig, decide_new
from .whatif import WhatIf, stops

if TYPE_CHECKING:
    from ..core.security import Verdict

KINDS = ("rule", "tag", "skip", "threshold")
STOPS_BLOCKING, STOPS_INSPECTING = "stops blocking", "stops inspecting"
#: At most this many requests may be marked at once.
MAX_MARKED = 10_000


@dataclass
class Candidate:
    """One remedy: its PUT body, its Terraform, and what it does to the whole log."""

    kind: str
    title: str
    change: dict[str, Any]
    body: dict[str, Any]
    zone_id: str
    entrypoint_id: str | None
    blast: Any = field(default=None, repr=False)  # DataFrame of other requests affected
    counts: Any = field(default=None, repr=False)  # DataFrame label x effect
    lets_attack_through: bool = False
    actions: Any = field(default=None, repr=False)  # predicted new action per request
    clears: list[str] = field(default_factory=list)  # ray ids of the marked requests it clears

    @property
    def radius(self) -> int:
        """How many other requests it affects."""
        return 0 if self.blast is None else len(self.blast)

    def to_json(self) -> str:
        """The entry point PUT body as JSON."""
        return json.dumps(self.body, indent=2)

    def hcl(self, provider: int = 5) -> str:
        """The ``cloudflare_ruleset`` resource for provider 4 or 5 (a zone without an entry
        point yet is named ``default``: import it after the migration creates it)."""
        entry = {
            "id": self.entrypoint_id or "default",
            "name": "default",
            "phase": MANAGED_PHASE,
            "rules": self.body["rules"],
        }
        return ruleset_hcl(entry, _safe(self.zone_id), provider=provider)

    def __str__(self) -> str:
        risk = "  LETS A LABELLED ATTACK THROUGH" if self.lets_attack_through else ""
        return f"[{self.kind}] {self.title}: {self.radius} other request(s) affected{risk}"


def _safe(zone_id: str) -> str:
    return zone_id if zone_id.replace("-", "").replace("_", "").isalnum() else "zone"


def marked_indexes(whatif: WhatIf, marked: Any) -> list[int]:
    """Positions of the marked requests (ray ids or indexes), each blocked on the new side."""
    items = (
        list(marked)
        if isinstance(marked, Sequence | set | np.ndarray | pd.Series)
        and not isinstance(marked, str)
        else None
    )
    if not items:
        raise ValueError("marked must be a non-empty list of ray ids or request indexes")
    if len(items) > MAX_MARKED:
        raise ValueError(f"marked: at most {MAX_MARKED} requests at once, got {len(items)}")
    b = whatif.breakdown
    out = sorted({b.index_of(m) for m in items})
    actions = whatif.requests.new_action.to_numpy()
    for i in out:
        if not stops(actions[i]) or not whatif.at_managed[i]:
            raise ValueError(
                f"marked: request {whatif.requests.ray_id[i]} is not blocked by the managed rules "
                f"of the new configuration (its action there is {actions[i]})"
            )
    return out


def predict(
    whatif: WhatIf, config: NewConfig, extra: Matches | None = None
) -> tuple[np.ndarray, list[Verdict]]:
    """Each request's new action under ``config``, and the verdict of each distinct row
    (expressions the what-if did not evaluate, a new skip rule's, are evaluated here)."""
    if extra is None:
        extra = _missing(whatif, config)
    matches = whatif.matches if extra is None else whatif.matches.with_columns(extra)
    plans = config.plans()
    verdicts = decide_rows(matches, config.keys(), lambda m: decide_new(plans, m)[0])
    per_row = np.array([v.action for v in verdicts] or [None], dtype=object)
    return per_row[matches.codes] if verdicts else np.array([], dtype=object), verdicts


def _missing(whatif: WhatIf, config: NewConfig) -> Matches | None:
    """Matches of the expressions of ``config`` the what-if has not evaluated, if any."""
    known = whatif.matches.col
    todo = [
        e
        for e in dict.fromkeys(config.keys().values())
        if e not in known and not matches_everything(e)
    ]
    return Matches.collect(todo, whatif.reqs, whatif.context) if todo else None


class Proposals(list[Candidate]):
    """The candidates of :func:`propose`, and why none clears every marked request, if so.

    ``reason`` is empty when each candidate clears every marked request. Otherwise it says
    why not, and ``groups`` holds the marked requests (ray ids) by what blocked them; each
    candidate then clears one group (:attr:`Candidate.clears`).
    """

    def __init__(
        self,
        candidates: list[Candidate] = (),  # type: ignore[assignment]
        reason: str = "",
        groups: dict[str, list[str]] | None = None,
    ) -> None:
        super().__init__(candidates)
        self.reason = reason
        self.groups = groups or {}


def propose(whatif: WhatIf, marked: Any) -> Proposals:
    """Candidates that clear every marked request, narrowest first (see the module docstring).

    When none does (the requests were blocked by different rules that no one change
    reaches), the marked requests are grouped by what blocked them and each group gets its
    own candidates; the result's ``reason`` says so. It is never empty without a reason.
    """
    idx = marked_indexes(whatif, marked)
    _, base_verdicts = predict(whatif, whatif.config)
    blocking = [base_verdicts[whatif.matches.codes[i]].events[-1] for i in idx]
    rays = whatif.requests.ray_id.to_numpy()
    made = _candidates(whatif, idx, blocking)
    for cand in made:
        cand.clears = [str(rays[i]) for i in idx]
    if made:
        return Proposals(made)
    groups: dict[str, list[int]] = {}
    for i, event in zip(idx, blocking, strict=True):
        groups.setdefault(_cause(whatif, event), []).append(i)
    by_cause = {cause: [str(rays[i]) for i in members] for cause, members in groups.items()}
    n = len(idx)
    if len(groups) == 1:
        (cause,) = groups
        return Proposals(
            [],
            f"no exception the tuning can write clears the {n} marked request"
            f"{'s' * (n != 1)}, all blocked by {cause}",
            by_cause,
        )
    out: list[Candidate] = []
    empty: list[str] = []
    for cause, members in groups.items():
        found = _candidates(whatif, members, [blocking[idx.index(i)] for i in members])
        for cand in found:
            cand.clears = [str(rays[i]) for i in members]
            cand.title = f"{cand.title} (for the {len(members)} blocked by {cause})"
        out += found
        if not found:
            empty.append(cause)
    reason = (
        f"no single exception clears all {n} marked requests: {len(groups)} different causes "
        f"blocked them ({'; '.join(f'{len(m)} by {c}' for c, m in groups.items())}). "
        "Each candidate below clears one group; apply one per group."
    )
    if empty:
        reason += f" None was found for: {'; '.join(empty)}."
    return Proposals(out, reason, by_cause)


def _cause(whatif: WhatIf, event: Any) -> str:
    """What blocked a request, in words: the OWASP score, or the rule and its ruleset."""
    catalog = whatif.config.catalog
    if event.ruleset_id == OWASP_ID and event.rule_id == OWASP_THRESHOLD_RULE_ID:
        return "the OWASP anomaly score"
    ruleset = catalog[event.ruleset_id] if event.ruleset_id in catalog else None
    rule = ruleset.rule(event.rule_id) if ruleset is not None else None
    where = ruleset.name if ruleset is not None else event.ruleset_id
    return f"rule {rule.description if rule else event.rule_id} of {where}"


def _candidates(whatif: WhatIf, idx: list[int], blocking: list[Any]) -> list[Candidate]:
    """Every draft for the requests ``idx`` that clears all of them, narrowest first."""
    rules = copy.deepcopy(whatif.config.rules)
    made: list[Candidate] = []
    scored_only = all(e.rule_id == OWASP_THRESHOLD_RULE_ID for e in blocking)
    for kind, title, change, new_rules, skip_expr in _drafts(whatif, idx, blocking, rules):
        if scored_only and skip_expr is None and not _scores_clear(whatif, idx, new_rules):
            continue  # cheap arithmetic first: the full decision is for candidates that may clear
        cand = _evaluate(whatif, idx, kind, title, change, new_rules, skip_expr)
        if cand is not None:
            made.append(cand)
    made.sort(key=lambda c: (KINDS.index(c.kind), c.lets_attack_through, c.radius))
    return made


def _scores_clear(whatif: WhatIf, idx: list[int], rules: list[dict[str, Any]]) -> bool:
    """Whether OWASP overrides ``rules`` bring every marked request under the threshold
    (the marked requests are all blocked by the OWASP score, so nothing else decides them)."""
    config = whatif.config.with_rules(rules)
    i = config.owasp_rule_index
    if i is None:
        return True  # no OWASP execute rule left: let the full decision say
    overrides = config.owasp_overrides()
    owasp = config.catalog[OWASP_ID]
    by_id = {r.id: r for r in owasp.rules}
    b = whatif.breakdown
    on = np.array([effective(by_id[r], overrides).enabled for r in b.rules.rule_id], dtype=bool)
    threshold = config.owasp_settings(overrides)["threshold"]
    weights = np.where(on, b.rules["score"].to_numpy(dtype=np.float64), 0.0)
    rows = b.rows[b.codes[idx]]
    totals, hits = rows @ weights, rows @ on
    return bool(np.all((totals < threshold) | (hits == 0)))


def _execute_index(rules: list[dict[str, Any]], ruleset_id: str) -> int | None:
    for i, rule in enumerate(rules):
        params = rule.get("action_parameters") or {}
        if (
            rule.get("action") == "execute"
            and params.get("id") == ruleset_id
            and rule.get("enabled", True)
        ):
            return i
    return None


def _with_override(
    rules: list[dict[str, Any]], ruleset_id: str, key: str, item: dict[str, Any]
) -> list[dict[str, Any]] | None:
    """``rules`` with ``item`` added to (or replacing, by id/category) an execute rule's overrides."""
    i = _execute_index(rules, ruleset_id)
    if i is None:
        return None
    out = copy.deepcopy(rules)
    params = out[i].setdefault("action_parameters", {})
    overrides = params.setdefault("overrides", {})
    name = "id" if key == "rules" else "category"
    kept = [x for x in overrides.get(key, []) if x.get(name) != item[name]]
    merged = {**next((x for x in overrides.get(key, []) if x.get(name) == item[name]), {}), **item}
    overrides[key] = [*kept, merged]
    return out


def _with_rule_overrides(
    rules: list[dict[str, Any]], ruleset_id: str, items: list[dict[str, Any]]
) -> list[dict[str, Any]] | None:
    """``rules`` with each rule override of ``items`` added (None: no execute rule to override)."""
    new: list[dict[str, Any]] | None = rules
    for item in items:
        new = _with_override(new, ruleset_id, "rules", item) if new is not None else None
    return new


def _drafts(
    whatif: WhatIf, idx: list[int], blocking: list[Any], rules: list[dict[str, Any]]
) -> list[tuple[str, str, dict[str, Any], list[dict[str, Any]], str | None]]:
    catalog = whatif.config.catalog
    out: list[tuple[str, str, dict[str, Any], list[dict[str, Any]], str | None]] = []

    def add(
        kind: str, title: str, change: dict[str, Any], new: Any, skip: str | None = None
    ) -> None:
        if new is not None:  # (None: the ruleset has no execute rule to override)
            out.append((kind, title, change, new, skip))

    owasp_rules: list[str] = []
    other: list[tuple[str, str]] = []  # (ruleset, rule) of non-scored blocks
    totals: list[int] = []
    for event in blocking:
        if event.ruleset_id == OWASP_ID and event.rule_id == OWASP_THRESHOLD_RULE_ID:
            owasp_rules += [c["rule_id"] for c in event.metadata.get("contributing", [])]
            totals.append(int(event.score or 0))
        elif event.ruleset_id in catalog:
            other.append((event.ruleset_id, event.rule_id))
    owasp_rules = list(dict.fromkeys(owasp_rules))
    other = list(dict.fromkeys(other))
    # 1. rule overrides
    for rule_id in owasp_rules:
        desc = catalog[OWASP_ID].rule(rule_id).description  # type: ignore[union-attr]
        item = {"id": rule_id, "enabled": False}
        new = _with_override(rules, OWASP_ID, "rules", item)
        add("rule", f"turn off OWASP rule {desc}", {"ruleset": OWASP_ID, "rules": [item]}, new)
    fewest = _fewest_rules(blocking)
    if len(fewest) > 1:
        items = [{"id": r, "enabled": False} for r in fewest]
        new = _with_rule_overrides(rules, OWASP_ID, items)
        add(
            "rule", f"turn off {len(items)} OWASP rules", {"ruleset": OWASP_ID, "rules": items}, new
        )
    for ruleset_id, rule_id in other:
        desc = catalog[ruleset_id].rule(rule_id).description  # type: ignore[union-attr]
        item = {"id": rule_id, "action": "log"}
        new = _with_override(rules, ruleset_id, "rules", item)
        add("rule", f"log only: {desc}", {"ruleset": ruleset_id, "rules": [item]}, new)
    # A request both rulesets stop needs both changed: the other rulesets' blocking rules to
    # log only, then the fewest OWASP rules off that the OWASP ruleset, now reached, scores.
    # Requests stopped by different rules of other rulesets need all of them logged at once.
    if other:
        logged, overrides = rules, []
        for ruleset_id, rule_id in other:
            item = {"id": rule_id, "action": "log"}
            logged = _with_override(logged, ruleset_id, "rules", item) or logged
            overrides.append({"ruleset": ruleset_id, "rules": [item]})
        if len(other) > 1:
            title = f"log only the {len(other)} rules that blocked them"
            add("rule", title, {"overrides": list(overrides)}, logged)
    if other and _execute_index(rules, OWASP_ID) is not None:
        config = whatif.config.with_rules(logged)
        extra = _missing(whatif, config)
        _, verdicts = predict(whatif, config, extra)
        codes = (whatif.matches if extra is None else whatif.matches.with_columns(extra)).codes
        scored = [
            e
            for i in idx
            for e in verdicts[codes[i]].events
            if e.ruleset_id == OWASP_ID and e.rule_id == OWASP_THRESHOLD_RULE_ID
        ]
        off = _fewest_rules(scored)
        if off:
            items = [{"id": r, "enabled": False} for r in off]
            new = _with_rule_overrides(logged, OWASP_ID, items) or logged
            overrides.append({"ruleset": OWASP_ID, "rules": items})
            title = f"log only {len(other)} blocking rule(s) and turn off {len(off)} OWASP rules"
            add("rule", title, {"overrides": overrides}, new)
    # 2. tag overrides
    tags: dict[str, list[str]] = {}
    for ruleset_id, ids in [(OWASP_ID, owasp_rules)] + [(rs, [r]) for rs, r in other]:
        for rule_id in ids:
            found = catalog[ruleset_id].rule(rule_id)
            for tag in found.categories if found else ():
                tags.setdefault(ruleset_id, [])
                if tag not in tags[ruleset_id]:
                    tags[ruleset_id].append(tag)
    for ruleset_id, names in tags.items():
        for tag in names:
            item = {"category": tag, "enabled": False}
            new = _with_override(rules, ruleset_id, "categories", item)
            title = f"turn off tag {tag} of {catalog[ruleset_id].name}"
            add("tag", title, {"ruleset": ruleset_id, "categories": [item]}, new)
    # 3. skip rules, limited to what the marked requests share
    expression = shared_expression(whatif, idx)
    if expression is not None:
        skipped: dict[str, list[str]] = {}
        if owasp_rules:
            skipped[OWASP_ID] = list(owasp_rules)
        for ruleset_id, rule_id in other:
            skipped.setdefault(ruleset_id, []).append(rule_id)
        options = [
            ("the rules that blocked them", {"rules": skipped}),
            ("their managed rulesets", {"rulesets": list(skipped)}),
            ("every remaining managed rule", {"ruleset": "current"}),
        ]
        first = next((i for i, r in enumerate(rules) if r.get("action") == "execute"), len(rules))
        for what, params in options:
            skip = {
                "action": "skip",
                "expression": expression,
                "description": f"tuning: skip {what}",
                "enabled": True,
                "action_parameters": params,
            }
            new = [*copy.deepcopy(rules[:first]), skip, *copy.deepcopy(rules[first:])]
            change = {"rule": skip, "position": first}
            add("skip", f"skip {what} where {expression}", change, new, expression)
    # 4. the threshold
    if totals:
        threshold = max(totals) + 1
        item = {"id": OWASP_THRESHOLD_RULE_ID, "score_threshold": threshold}
        new = _with_override(rules, OWASP_ID, "rules", item)
        add(
            "threshold",
            f"OWASP score threshold {threshold}",
            {"ruleset": OWASP_ID, "rules": [item]},
            new,
        )
    return out


def _fewest_rules(blocking: list[Any]) -> list[str]:
    """OWASP rules to turn off so every marked request falls under its threshold: greedily,
    the rule that takes the most score off the requests still over it."""
    # Per marked request: each contributing rule's score, and what is left to take off.
    parts: list[dict[str, int]] = []
    over: list[int] = []
    for event in blocking:
        if event.rule_id == OWASP_THRESHOLD_RULE_ID:
            contributing = event.metadata.get("contributing", [])
            parts.append({c["rule_id"]: int(c["score"] or 0) for c in contributing})
            over.append(int(event.score or 0) - int(event.metadata.get("threshold", 0)) + 1)
    chosen: list[str] = []
    while any(left > 0 for left in over):
        gain: dict[str, int] = {}
        for scores, left in zip(parts, over, strict=True):
            if left > 0:
                for rule_id, score in scores.items():
                    if rule_id not in chosen:
                        gain[rule_id] = gain.get(rule_id, 0) + score
        if not gain:
            break
        best = max(gain, key=lambda r: (gain[r], r))
        chosen.append(best)
        over = [left - scores.get(best, 0) for scores, left in zip(parts, over, strict=True)]
    return chosen


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def shared_expression(whatif: WhatIf, idx: list[int]) -> str | None:
    """An expression matching what every marked request shares, or None when they share nothing."""
    reqs = [whatif.reqs[i] for i in idx]
    parts: list[str] = []
    hosts = {r.host for r in reqs}
    if len(hosts) == 1 and (h := hosts.pop()):
        parts.append(f"http.host eq {_quote(h)}")
    paths = [r.path for r in reqs]
    if len(set(paths)) == 1:
        parts.append(f"http.request.uri.path eq {_quote(paths[0])}")
    else:
        prefix = os.path.commonprefix(paths)
        if len(prefix) > 1:
            parts.append(f"starts_with(http.request.uri.path, {_quote(prefix)})")
    methods = {r.method for r in reqs}
    if len(methods) == 1:
        parts.append(f"http.request.method eq {_quote(methods.pop())}")
    names = set.intersection(*[{k for k, _ in r.args} for r in reqs])
    for name in sorted(names)[:3]:
        parts.append(f"any(http.request.uri.args.names[*] eq {_quote(name)})")
    if not parts or (len(parts) == 1 and parts[0].startswith("http.host")):
        return None  # a whole host (or nothing) is no narrower than the ruleset-wide remedies
    return " and ".join(parts)


def _evaluate(
    whatif: WhatIf,
    idx: list[int],
    kind: str,
    title: str,
    change: dict[str, Any],
    rules: list[dict[str, Any]],
    skip_expr: str | None,
) -> Candidate | None:
    config = whatif.config.with_rules(rules)
    extra = _missing(whatif, config)
    actions, verdicts = predict(whatif, config, extra)
    if any(stops(actions[i]) for i in idx):
        return None
    before = whatif.requests.new_action.to_numpy()
    before_stops = np.array([stops(a) for a in before], dtype=bool)
    after_stops = np.array([stops(a) for a in actions], dtype=bool)
    stopped = before_stops & ~after_stops
    inspecting = _stops_inspecting(whatif, config, verdicts, extra, skip_expr) & ~stopped
    others = np.ones(len(actions), dtype=bool)
    others[idx] = False
    affected = np.flatnonzero((stopped | inspecting) & others)
    labels = whatif.requests.label.to_numpy()
    blast = pd.DataFrame(
        {
            "ray_id": whatif.requests.ray_id.to_numpy()[affected],
            "label": labels[affected],
            "attack": [lab in ATTACK_LABELS for lab in labels[affected]],
            "effect": np.where(stopped[affected], STOPS_BLOCKING, STOPS_INSPECTING),
            "before": before[affected],
            "after": [a or "pass" for a in actions[affected]],
        }
    )
    blast = blast.sort_values(
        ["attack", "effect"], ascending=[False, True], kind="stable", ignore_index=True
    )
    counts = pd.crosstab(blast.label, blast.effect) if len(blast) else pd.DataFrame()
    lets = bool(((blast.effect == STOPS_BLOCKING) & blast.attack).any())
    return Candidate(
        kind,
        title,
        change,
        {"rules": rules},
        whatif.zone_id,
        whatif.config.entrypoint_id,
        blast,
        counts,
        lets,
        np.array([a or "pass" for a in actions], dtype=object),
    )


def _stops_inspecting(
    whatif: WhatIf,
    config: NewConfig,
    verdicts: list[Any],
    extra: Matches | None,
    skip_expr: str | None,
) -> np.ndarray:
    """Requests a candidate's skip rule skips, or that matched a rule it turns off."""
    n = len(whatif.requests)
    if skip_expr is not None:
        codes = whatif.matches.codes if extra is None else whatif.matches.with_columns(extra).codes
        skipped = np.array(
            [
                any(e.action == "skip" and "tuning:" in e.description for e in v.events)
                for v in verdicts
            ]
            or [False]
        )
        return skipped[codes] if n else np.zeros(0, dtype=bool)
    base_on = _enabled(whatif.config.plans()[2])
    now_on = _enabled(config.plans()[2])
    off = base_on - now_on
    hit = np.zeros(n, dtype=bool)
    catalog = config.catalog
    for ruleset_id, rule_id in off:
        found = catalog[ruleset_id].rule(rule_id)
        if found is not None:
            hit |= whatif.matches.column(found.expression)
    return hit & whatif.at_managed


def _enabled(plan: PhasePlan) -> set[tuple[str, str]]:
    return {(run.ruleset.id, m.id) for run in plan.runs.values() for m, _ in run.rules}
