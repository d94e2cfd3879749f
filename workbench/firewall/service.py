"""The firewall service of one Workbench: filters and firewall rules per zone.

Every write is all-or-nothing: a batch is checked in full before anything is
stored. The one exception is the seed's shortened creation call (rules with
inline filters): when the quota or a plan feature stops the rules, the filters
stay created and the error says which, so the client can finish with the
recommended sequence. All methods hold one lock, so threads may share it.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=1)
    >>> zone = wb.create_zone("example.com", plan="free")
    >>> fw = FirewallService(wb)
    >>> [f] = fw.create_filters(zone.id, [{"expression": 'http.request.uri.path contains "/admin"'}])
    >>> [rule] = fw.create_rules(zone.id, [{"filter": {"id": f.id}, "action": "block"}])
    >>> fw.evaluate(zone.id, {"http.request.uri.path": "/admin/x"}).action
    'block'
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..core.errors import must_exist
from ..core.paging import Page, page_args
from ..core.plans import plan
from ._policy import (
    check_plan,
    check_products,
    contains,
    no_matches,
    refuse_duplicates,
    uses_matches,
)
from ._validate import (
    batch,
    compile_checked,
    invalid,
    object_id,
    refuse_unencodable,
    rule_fields,
    with_path_id,
)
from ._validate import filter_fields as _filter_fields
from .errors import (
    DuplicateFilter,
    DuplicateInlineFilter,
    FilterInUse,
    FilterNotFound,
    RuleNotFound,
)
from .models import NON_TERMINAL_ACTIONS, Evaluation, Filter, FirewallRule
from .pagerules import PageRules

if TYPE_CHECKING:
    from ..core.platform import Workbench, Zone


class _Zone:
    """The firewall state of one zone (insertion-ordered dicts keep listings stable)."""

    def __init__(self) -> None:
        self.filters: dict[str, Filter] = {}
        self.rules: dict[str, FirewallRule] = {}
        self.by_expression: dict[str, str] = {}


class FirewallService:
    """Filters, firewall rules and page rules of every zone of ``wb``."""

    def __init__(self, wb: Workbench) -> None:
        self.wb = wb
        self.lock = threading.RLock()
        self._zones: dict[str, _Zone] = {}
        self._seq = 0
        self.page_rules = PageRules(wb, self.lock)

    # -- helpers -----------------------------------------------------------
    def _state(self, zone_id: str) -> tuple[Zone, _Zone]:
        zone = self.wb.zone(zone_id)
        return zone, self._zones.setdefault(zone.id, _Zone())

    @staticmethod
    def _filter(state: _Zone, filter_id: str) -> Filter:
        return must_exist(state.filters.get(filter_id), FilterNotFound, _no_filter(filter_id))

    @staticmethod
    def _rule(state: _Zone, rule_id: str) -> FirewallRule:
        missing = f"firewall rule {rule_id} does not exist in this zone"
        return must_exist(state.rules.get(rule_id), RuleNotFound, missing)

    @staticmethod
    def _named_filter(state: _Zone, filter_id: str, pointer: str) -> Filter:
        """The existing filter a rule names by id (a validation error at ``pointer`` if none)."""
        return must_exist(state.filters.get(filter_id), invalid, pointer, _no_filter(filter_id))

    # -- filters -----------------------------------------------------------
    def get_filter(self, zone_id: str, filter_id: str) -> Filter:
        """One filter by id."""
        with self.lock:
            return self._filter(self._state(zone_id)[1], filter_id)

    def list_filters(
        self,
        zone_id: str,
        *,
        id: str | None = None,
        description: str | None = None,
        expression: str | None = None,
        ref: str | None = None,
        paused: bool | None = None,
        page: Any = None,
        per_page: Any = None,
    ) -> Page:
        """Filters matching the query (exact ``id``/``ref``, case-insensitive substrings)."""
        page_n, per_n = page_args(page, per_page)
        with self.lock:
            items = [
                f
                for f in self._state(zone_id)[1].filters.values()
                if (id is None or f.id == id)
                and (ref is None or f.ref == ref)
                and (paused is None or f.paused == paused)
                and contains(f.description, description)
                and contains(f.expression, expression)
            ]
        return Page.of(items, page_n, per_n)

    def create_filters(self, zone_id: str, items: Any) -> list[Filter]:
        """Create filters from a list of ``{expression, paused?, description?, ref?}``.

        One transaction: an invalid or duplicate item creates nothing.
        """
        items = batch(items, "filters")
        specs = [_filter_fields(item, f"/{i}") for i, item in enumerate(items)]
        with self.lock:
            _, state = self._state(zone_id)
            refuse_duplicates(state.by_expression, specs, DuplicateFilter, inline=False)
            return [self._add_filter(state, spec) for spec in specs]

    def _add_filter(self, state: _Zone, spec: Mapping[str, Any]) -> Filter:
        new = Filter(
            id=self.wb.new_id(),
            expression=spec["expression"],
            paused=spec.get("paused", False),
            description=spec.get("description"),
            ref=spec.get("ref"),
            compiled=spec["compiled"],
        )
        state.filters[new.id] = new
        state.by_expression[new.expression] = new.id
        return new

    def update_filters(self, zone_id: str, items: Any) -> list[Filter]:
        """Update filters from a list of objects that each carry ``id`` (one transaction)."""
        items = batch(items, "filters")
        with self.lock:
            zone, state = self._state(zone_id)
            changes = []
            for i, item in enumerate(items):
                target = self._filter(state, object_id(item, f"/{i}"))
                changes.append((target, _filter_fields(item, f"/{i}", creating=False)))
            ids = [t.id for t, _ in changes]
            if len(set(ids)) != len(ids):
                raise invalid("", "the same filter id appears twice in the request")
            moved = [
                (t, spec)
                for t, spec in changes
                if spec.get("expression", t.expression) != t.expression
            ]
            refuse_duplicates(
                state.by_expression,
                [s for _, s in moved],
                DuplicateFilter,
                inline=False,
                moving=[t.id for t, _ in moved],
            )
            limits = plan(zone.plan)
            for target, spec in moved:
                users = [r for r in state.rules.values() if r.filter is target]
                if users and not limits.matches_operator and uses_matches(spec["compiled"]):
                    raise no_matches(zone.plan, f"filter {target.id} is used by rules")
            for target, spec in changes:
                if "expression" in spec:
                    state.by_expression.pop(target.expression, None)
                    target.expression, target.compiled = spec["expression"], spec["compiled"]
                    state.by_expression[target.expression] = target.id
                for key in ("paused", "description", "ref"):
                    if key in spec:
                        setattr(target, key, spec[key])
            return [t for t, _ in changes]

    def update_filter(self, zone_id: str, filter_id: str, item: Any) -> Filter:
        """Update one filter; ``item`` may omit ``id`` but must not name another one."""
        return self.update_filters(zone_id, [with_path_id(item, filter_id, "filter")])[0]

    def delete_filters(self, zone_id: str, ids: Iterable[str]) -> list[str]:
        """Delete the filters named (unknown ids are skipped); refused while a rule uses one."""
        with self.lock:
            _, state = self._state(zone_id)
            known = [i for i in dict.fromkeys(ids) if i in state.filters]
            for filter_id in known:
                users = [r.id for r in state.rules.values() if r.filter.id == filter_id]
                if users:
                    raise FilterInUse(
                        f"filter {filter_id} is still used by firewall rule(s) {', '.join(users)}; "
                        "delete the rules first, then the filter",
                        meta={"id": filter_id, "rule_ids": users},
                    )
            for filter_id in known:
                gone = state.filters.pop(filter_id)
                state.by_expression.pop(gone.expression, None)
            return known

    def delete_filter(self, zone_id: str, filter_id: str) -> str:
        """Delete one filter by id (NotFound when unknown)."""
        with self.lock:
            self._filter(self._state(zone_id)[1], filter_id)
            return self.delete_filters(zone_id, [filter_id])[0]

    def filter_usage(self, zone_id: str) -> dict[str, list[str]]:
        """For each filter of the zone, the ids of the rules that use it."""
        with self.lock:
            state = self._state(zone_id)[1]
            usage: dict[str, list[str]] = {f: [] for f in state.filters}
            for rule in state.rules.values():
                usage[rule.filter.id].append(rule.id)
            return usage

    def validate_expression(self, expression: Any) -> None:
        """Refuse an expression that does not parse (the validate-expr check); stores nothing."""
        if expression is None:
            raise invalid("", "expression is required")
        compile_checked(expression, "/expression")

    def validate_expression_body(self, body: Any) -> None:
        """:meth:`validate_expression` for a ``{"expression": ...}`` body."""
        if not isinstance(body, Mapping) or "expression" not in body:
            raise invalid("", 'the body must be {"expression": "..."}')
        refuse_unencodable(dict(body))
        self.validate_expression(body["expression"])

    # -- rules -------------------------------------------------------------
    def get_rule(self, zone_id: str, rule_id: str) -> FirewallRule:
        """One firewall rule by id."""
        with self.lock:
            return self._rule(self._state(zone_id)[1], rule_id)

    def list_rules(
        self,
        zone_id: str,
        *,
        id: str | None = None,
        action: str | None = None,
        description: str | None = None,
        paused: bool | None = None,
        page: Any = None,
        per_page: Any = None,
    ) -> Page:
        """Rules in creation order matching the query (exact ``id``/``action``)."""
        page_n, per_n = page_args(page, per_page)
        with self.lock:
            items = [
                r
                for r in self._state(zone_id)[1].rules.values()
                if (id is None or r.id == id)
                and (action is None or r.action == action)
                and (paused is None or r.paused == paused)
                and contains(r.description, description)
            ]
        return Page.of(items, page_n, per_n)

    def create_rules(self, zone_id: str, items: Any) -> list[FirewallRule]:
        """Create rules; each ``filter`` is ``{"id"}`` or an inline ``{"expression", ...}``.

        Invalid input creates nothing. When the quota or a plan feature stops
        the rules, inline filters are kept and the error's ``meta`` lists them.
        """
        items = batch(items, "rules")
        specs = [rule_fields(item, f"/{i}", creating=True) for i, item in enumerate(items)]
        for i, spec in enumerate(specs):
            check_products(spec["action"], spec.get("products"), f"/{i}")
        with self.lock:
            zone, state = self._state(zone_id)
            inline = [s["filter"] for s in specs if "id" not in s["filter"]]
            for i, spec in enumerate(specs):
                if "id" in spec["filter"]:
                    self._named_filter(state, spec["filter"]["id"], f"/{i}/filter/id")
            refuse_duplicates(state.by_expression, inline, DuplicateInlineFilter, inline=True)
            # Step 1 of the shortened call: the inline filters.
            created = [self._add_filter(state, f) for f in inline]
            made = iter(created)
            filters = [
                state.filters[s["filter"]["id"]] if "id" in s["filter"] else next(made)
                for s in specs
            ]
            # Step 2: the rules, which the plan may refuse (the filters stay).
            check_plan(
                zone.plan,
                _active(state),
                [
                    (s["action"], f, s.get("paused", False), None)
                    for s, f in zip(specs, filters, strict=True)
                ],
                created,
            )
            now = self.wb.now()
            rules = []
            for spec, flt in zip(specs, filters, strict=True):
                self._seq += 1
                rule = FirewallRule(
                    id=self.wb.new_id(),
                    filter=flt,
                    action=spec["action"],
                    created_on=now,
                    modified_on=now,
                    paused=spec.get("paused", False),
                    priority=spec.get("priority"),
                    description=spec.get("description"),
                    ref=spec.get("ref"),
                    products=spec.get("products") if spec["action"] == "bypass" else None,
                    seq=self._seq,
                )
                state.rules[rule.id] = rule
                rules.append(rule)
            return rules

    def update_rules(self, zone_id: str, items: Any) -> list[FirewallRule]:
        """Update rules from objects that each carry ``id`` (one transaction).

        Fields left out keep their values. ``filter`` may only re-point the
        rule to another existing filter: a rule update never edits a filter.
        """
        items = batch(items, "rules")
        with self.lock:
            zone, state = self._state(zone_id)
            plans = []
            for i, item in enumerate(items):
                rule = self._rule(state, object_id(item, f"/{i}"))
                spec = rule_fields(item, f"/{i}", creating=False)
                if "filter" in spec:
                    spec["filter"] = self._named_filter(
                        state, spec["filter"]["id"], f"/{i}/filter/id"
                    )
                action = spec.get("action", rule.action)
                products = spec.get("products", rule.products if action == "bypass" else None)
                check_products(action, products, f"/{i}")
                plans.append((rule, spec, action, products))
            ids = [r.id for r, *_ in plans]
            if len(set(ids)) != len(ids):
                raise invalid("", "the same rule id appears twice in the request")
            check_plan(
                zone.plan,
                _active(state),
                [
                    (a, s.get("filter", r.filter), s.get("paused", r.paused), r)
                    for r, s, a, _ in plans
                ],
            )
            now = self.wb.now()
            for rule, spec, action, products in plans:
                for key in ("filter", "paused", "description", "ref", "priority"):
                    if key in spec:
                        setattr(rule, key, spec[key])
                rule.action = action
                rule.products = products if action == "bypass" else None
                rule.modified_on = now
            return [r for r, *_ in plans]

    def update_rule(self, zone_id: str, rule_id: str, item: Any) -> FirewallRule:
        """Update one rule; ``item`` may omit ``id`` but must not name another rule."""
        return self.update_rules(zone_id, [with_path_id(item, rule_id, "rule")])[0]

    def set_priorities(self, zone_id: str, items: Any) -> list[FirewallRule]:
        """Change only the ``priority`` of rules given as ``[{id, priority}, ...]``."""
        items = batch(items, "rules")
        trimmed = [{k: v for k, v in item.items() if k in ("id", "priority")} for item in items]
        return self.update_rules(zone_id, trimmed)

    def set_priority(self, zone_id: str, rule_id: str, item: Any) -> list[FirewallRule]:
        """Change one rule's ``priority``; ``item`` (or no body) may omit ``id`` but not name another."""
        item = {} if item is None else item
        return self.set_priorities(zone_id, [with_path_id(item, rule_id, "rule")])

    def delete_rules(self, zone_id: str, ids: Iterable[str]) -> list[str]:
        """Delete the rules named (unknown ids are skipped); their filters stay."""
        with self.lock:
            state = self._state(zone_id)[1]
            known = [i for i in dict.fromkeys(ids) if i in state.rules]
            for rule_id in known:
                del state.rules[rule_id]
            return known

    def delete_rule(self, zone_id: str, rule_id: str) -> FirewallRule:
        """Delete one rule (NotFound when unknown); its filter stays."""
        with self.lock:
            rule = self._rule(self._state(zone_id)[1], rule_id)
            self.delete_rules(zone_id, [rule_id])
            return rule

    def usage(self, zone_id: str) -> dict[str, Any]:
        """The zone's plan, active rules and quota."""
        with self.lock:
            zone, state = self._state(zone_id)
            return {
                "plan": zone.plan,
                "active_rules": _active(state),
                "quota": plan(zone.plan).firewall_active_rules,
            }

    # -- evaluation --------------------------------------------------------
    def evaluation_order(self, zone_id: str) -> list[FirewallRule]:
        """All rules in the order they run: priority (none last), action precedence, age."""
        with self.lock:
            return sorted(self._state(zone_id)[1].rules.values(), key=FirewallRule.sort_key)

    def evaluate(self, zone_id: str, request: Mapping[str, Any]) -> Evaluation:
        """Run the zone's active rules over one request (a mapping of field values)."""
        matched: list[tuple[str, str]] = []
        bypassed: set[str] = set()
        for rule in self.evaluation_order(zone_id):
            if rule.paused or rule.filter.paused or not rule.filter.compiled.matches(request):
                continue
            matched.append((rule.id, rule.action))
            if rule.action == "bypass":
                bypassed.update(rule.products or [])
            if rule.action not in NON_TERMINAL_ACTIONS:
                return Evaluation(rule.action, matched, frozenset(bypassed))
        return Evaluation(None, matched, frozenset(bypassed))


def _active(state: _Zone) -> int:
    return sum(1 for r in state.rules.values() if r.active)


def _no_filter(filter_id: str) -> str:
    return f"filter {filter_id} does not exist in this zone"
