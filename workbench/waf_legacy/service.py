"""The old WAF of one Workbench: packages, groups, rules, overrides and the ``waf`` setting.

Every zone sees the catalogue's packages (same ids everywhere) and stores
only what it changed. On a plan with the old WAF (Pro and up) the ``waf``
setting starts ``on``; on Free it starts ``off`` and cannot be turned on, the
packages can still be read and configured, and the old WAF never runs. Every
write is checked in full before anything is stored. After
:meth:`WafLegacyService.disable_for_good` (the migration) every call about the
zone's configuration raises :class:`~workbench.waf_legacy.errors.OldWafRetired`,
while :meth:`~WafLegacyService.plan` and :meth:`~WafLegacyService.evaluate`
quietly do nothing. All methods hold one lock, so threads may share it.

    >>> from workbench import Workbench
    >>> from workbench.waf_legacy.catalog import load_catalog
    >>> wb = Workbench(seed=1)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> waf = WafLegacyService(wb, load_catalog([{"id": "1" * 32, "name": "CF", "description": "",
    ...     "detection_mode": "traditional", "groups": [{"id": "2" * 32, "name": "Specials",
    ...     "description": "", "default_mode": "on", "rules": [{"id": "100001", "description": "admin",
    ...     "priority": "1", "kind": "deny", "default_mode": "block", "new_id": None,
    ...     "expression": 'http.request.uri.path contains "/admin"'}]}]}]))
    >>> waf.enabled(zone.id), waf.edit_rule(zone.id, "1" * 32, "100001", {"mode": "simulate"}).mode
    (True, 'simulate')
    >>> waf.evaluate(zone.id, {"http.request.uri.path": "/admin"}).events[0].action
    'log'
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.errors import must_exist
from ..core.paging import Page, page_args
from ..core.plans import plan as plan_of
from ..core.security import Verdict
from ..rules_language import MANAGED, Expression, compile_expression
from . import _inputs as inputs
from ._config import zone_config
from ._engine import LegacyPlan
from ._listing import contains, priority_key, select
from .catalog import ON_OFF, Catalog, GroupDef, PackageDef, RuleDef, default_catalog
from .engine_plan import page_rule_prints, zone_plan
from .errors import (
    GroupNotFound,
    OldWafNotInPlan,
    OldWafRetired,
    OverrideNotFound,
    PackageNotEditable,
    PackageNotFound,
    WafRuleNotFound,
)
from .models import Group, Override, Package, Rule, Setting, ZoneState

if TYPE_CHECKING:
    from ..core.platform import Workbench, Zone


class WafLegacyService:
    """The old WAF managed rules of every zone of ``wb``, from ``catalog`` (default: the package's)."""

    def __init__(self, wb: Workbench, catalog: Catalog | None = None) -> None:
        self.wb = wb
        self.catalog = default_catalog() if catalog is None else catalog
        self.lock = threading.RLock()
        self._zones: dict[str, ZoneState] = {}
        self._plans: dict[str, tuple[tuple[Any, ...], LegacyPlan]] = {}
        # Rule expressions come compiled with the catalogue; page rules and overrides add theirs.
        self._compiled: dict[str, Expression] = {
            r.expression: r.compiled
            for p in self.catalog.packages
            for r in p.rules
            if r.compiled is not None
        }

    # -- helpers -----------------------------------------------------------
    def _zone(self, zone_id: str, *, live: bool = True) -> tuple[Zone, ZoneState]:
        zone = self.wb.zone(zone_id)
        state = self._zones.setdefault(zone.id, ZoneState())
        if live and state.retired_on is not None:
            raise OldWafRetired(zone.id)
        return zone, state

    def _package(self, package_id: str) -> PackageDef:
        return must_exist(self.catalog.package(package_id), PackageNotFound, package_id)

    @staticmethod
    def _group(package: PackageDef, group_id: str) -> GroupDef:
        return must_exist(package.group(group_id), GroupNotFound, package.id, group_id)

    @staticmethod
    def _rule(package: PackageDef, rule_id: str) -> RuleDef:
        return must_exist(package.rule(rule_id), WafRuleNotFound, package.id, rule_id)

    @staticmethod
    def _override(state: ZoneState, override_id: str) -> Override:
        return must_exist(state.overrides.get(override_id), OverrideNotFound, override_id)

    @staticmethod
    def _rule_view(state: ZoneState, package: PackageDef, rule: RuleDef) -> Rule:
        group = package.group(rule.group_id)
        assert group is not None  # the catalogue built the rule from its group
        return state.rule(rule, group)

    # -- packages ----------------------------------------------------------
    def list_packages(
        self,
        zone_id: str,
        *,
        name: str | None = None,
        order: str | None = None,
        direction: str | None = None,
        match: str | None = None,
        page: Any = None,
        per_page: Any = None,
    ) -> Page[Package]:
        """Packages (``name``: case-insensitive substring; ``order``: name)."""
        inputs.query_choice(order, "order", ("name",))
        with self.lock:
            zone, state = self._zone(zone_id)
            items = [state.package(p, zone.id) for p in self.catalog.packages]
        return select(
            items,
            [(name, lambda p: contains(p.definition.name, name))],
            match=match,
            order=(lambda p: p.definition.name.lower()) if order else None,
            direction=direction,
            page=page,
            per_page=per_page,
        )

    def get_package(self, zone_id: str, package_id: str) -> Package:
        """One package."""
        with self.lock:
            zone, state = self._zone(zone_id)
            return state.package(self._package(package_id), zone.id)

    def edit_package(self, zone_id: str, package_id: str, body: Any) -> Package:
        """Change an anomaly package's ``sensitivity`` and/or ``action_mode``."""
        with self.lock:
            zone, state = self._zone(zone_id)
            package = self._package(package_id)
            if not package.anomaly:
                raise PackageNotEditable(package.id)
            change = inputs.package_body(body)
            sensitivity, action_mode = state.settings_of(package)
            new = (change.get("sensitivity", sensitivity), change.get("action_mode", action_mode))
            if new != (sensitivity, action_mode):
                state.anomaly[package.id] = new
                state.version += 1
            return state.package(package, zone.id)

    # -- groups ------------------------------------------------------------
    def list_groups(
        self,
        zone_id: str,
        package_id: str,
        *,
        mode: str | None = None,
        name: str | None = None,
        rules_count: str | int | None = None,
        order: str | None = None,
        direction: str | None = None,
        match: str | None = None,
        page: Any = None,
        per_page: Any = None,
    ) -> Page[Group]:
        """Groups (``mode`` on/off, ``name`` substring, exact ``rules_count``; order mode|rules_count|name)."""
        inputs.query_choice(mode, "mode", ON_OFF)
        count = (
            rules_count
            if isinstance(rules_count, int)
            else inputs.query_whole(rules_count, "rules_count")
        )
        sort = inputs.query_choice(order, "order", ("mode", "rules_count", "name"))
        with self.lock:
            _, state = self._zone(zone_id)
            items = [state.group(g) for g in self._package(package_id).groups]
        filters = [
            (mode, lambda g: g.mode == mode),
            (name, lambda g: contains(g.definition.name, name)),
            (count, lambda g: len(g.definition.rules) == count),
        ]
        keys = {
            "mode": lambda g: g.mode,
            "rules_count": lambda g: len(g.definition.rules),
            "name": lambda g: g.definition.name.lower(),
        }
        return select(
            items,
            filters,
            match=match,
            order=keys[sort] if sort else None,
            direction=direction,
            page=page,
            per_page=per_page,
        )

    def get_group(self, zone_id: str, package_id: str, group_id: str) -> Group:
        """One group."""
        with self.lock:
            _, state = self._zone(zone_id)
            return state.group(self._group(self._package(package_id), group_id))

    def edit_group(self, zone_id: str, package_id: str, group_id: str, body: Any) -> Group:
        """Turn a group ``on`` or ``off`` (body ``{"mode": ...}``)."""
        with self.lock:
            _, state = self._zone(zone_id)
            group = self._group(self._package(package_id), group_id)
            mode = inputs.mode_body(body, ON_OFF)
            if mode != state.group_mode(group):
                state.set_group_mode(group, mode)
                state.version += 1
            return state.group(group)

    # -- rules -------------------------------------------------------------
    def list_rules(
        self,
        zone_id: str,
        package_id: str,
        *,
        mode: str | None = None,
        group_id: str | None = None,
        description: str | None = None,
        priority: str | None = None,
        order: str | None = None,
        direction: str | None = None,
        match: str | None = None,
        page: Any = None,
        per_page: Any = None,
    ) -> Page[Rule]:
        """Rules (``mode`` incl. DIS/CHL/BLK/SIM, exact ``group_id`` and ``priority``,
        ``description`` substring; order priority|group_id|description)."""
        wanted = inputs.MODE_ALIASES.get(mode, mode) if mode is not None else None
        inputs.query_choice(
            wanted, "mode", ("default", "disable", "simulate", "block", "challenge", "on", "off")
        )
        sort = inputs.query_choice(order, "order", ("priority", "group_id", "description"))
        with self.lock:
            _, state = self._zone(zone_id)
            package = self._package(package_id)
            items = [self._rule_view(state, package, r) for r in package.rules]
        filters = [
            (wanted, lambda r: r.mode == wanted),
            (group_id, lambda r: r.definition.group_id == group_id),
            (description, lambda r: contains(r.definition.description, description)),
            (priority, lambda r: r.definition.priority == priority),
        ]
        keys = {
            "priority": lambda r: priority_key(r.definition.priority),
            "group_id": lambda r: r.definition.group_id,
            "description": lambda r: r.definition.description.lower(),
        }
        return select(
            items,
            filters,
            match=match,
            order=keys[sort] if sort else None,
            direction=direction,
            page=page,
            per_page=per_page,
        )

    def get_rule(self, zone_id: str, package_id: str, rule_id: str) -> Rule:
        """One rule."""
        with self.lock:
            _, state = self._zone(zone_id)
            package = self._package(package_id)
            return self._rule_view(state, package, self._rule(package, rule_id))

    def edit_rule(self, zone_id: str, package_id: str, rule_id: str, body: Any) -> Rule:
        """Change a rule's mode (body ``{"mode": ...}``, one of the rule's ``allowed_modes``)."""
        with self.lock:
            _, state = self._zone(zone_id)
            package = self._package(package_id)
            rule = self._rule(package, rule_id)
            mode = inputs.mode_body(body, rule.allowed_modes)
            if mode != state.rule_mode(rule):
                state.set_rule_mode(rule, mode)
                state.version += 1
            return self._rule_view(state, package, rule)

    # -- URI-based overrides -------------------------------------------------
    def list_overrides(
        self, zone_id: str, *, page: Any = None, per_page: Any = None
    ) -> Page[Override]:
        """Overrides in precedence order (lower ``priority`` first, then older first)."""
        page_n, per_n = page_args(page, per_page, default=50)
        with self.lock:
            _, state = self._zone(zone_id)
            items = sorted(state.overrides.values(), key=lambda o: (o.priority, o.seq))
        return Page.of(items, page_n, per_n)

    def get_override(self, zone_id: str, override_id: str) -> Override:
        """One override."""
        with self.lock:
            return self._override(self._zone(zone_id)[1], override_id)

    def create_override(self, zone_id: str, body: Any) -> Override:
        """Create an override from ``{urls, rules?, groups?, rewrite_action?, priority?, description?, paused?}``."""
        with self.lock:
            _, state = self._zone(zone_id)
            spec = inputs.override_body(body, self.catalog)
            state.seq += 1
            made = Override(id=self.wb.new_id(), seq=state.seq, **spec)
            state.overrides[made.id] = made
            state.version += 1
            return made

    def replace_override(self, zone_id: str, override_id: str, body: Any) -> Override:
        """Replace an override (PUT): the body is checked like a creation; omitted fields reset."""
        with self.lock:
            _, state = self._zone(zone_id)
            target = self._override(state, override_id)
            spec = inputs.override_body(body, self.catalog, override_id)
            for key, value in spec.items():
                setattr(target, key, value)
            state.version += 1
            return target

    def delete_override(self, zone_id: str, override_id: str) -> str:
        """Delete an override; its id."""
        with self.lock:
            _, state = self._zone(zone_id)
            self._override(state, override_id)
            del state.overrides[override_id]
            state.version += 1
            return override_id

    # -- the zone setting ------------------------------------------------------
    def get_setting(self, zone_id: str) -> Setting:
        """The ``waf`` zone setting (``on`` by default where the plan has the old WAF)."""
        with self.lock:
            zone, state = self._zone(zone_id)
            return self._setting(zone, state)

    def set_setting(self, zone_id: str, body: Any) -> Setting:
        """Turn the old WAF on or off for the zone (body ``{"value": "on"|"off"}``)."""
        with self.lock:
            zone, state = self._zone(zone_id)
            value = inputs.setting_body(body)
            if value == "on" and not plan_of(zone.plan).old_waf:
                raise OldWafNotInPlan(zone.plan)
            state.setting, state.setting_modified = value, self.wb.now()
            state.version += 1
            return self._setting(zone, state)

    @staticmethod
    def _setting(zone: Zone, state: ZoneState) -> Setting:
        has = plan_of(zone.plan).old_waf
        value = state.setting or ("on" if has else "off")
        return Setting(value, has, state.setting_modified)

    # -- the migration's view ----------------------------------------------------
    def enabled(self, zone_id: str) -> bool:
        """True when the old WAF runs for the zone (plan, setting on, not retired)."""
        with self.lock:
            zone, state = self._zone(zone_id, live=False)
            if state.retired_on is not None or not plan_of(zone.plan).old_waf:
                return False
            return self._setting(zone, state).value == "on"

    def retired(self, zone_id: str) -> bool:
        """True once :meth:`disable_for_good` ran for the zone."""
        with self.lock:
            return self._zone(zone_id, live=False)[1].retired_on is not None

    def disable_for_good(self, zone_id: str) -> None:
        """Switch the old WAF off for good (the migration; it cannot be undone). Idempotent."""
        with self.lock:
            _, state = self._zone(zone_id, live=False)
            if state.retired_on is None:
                state.retired_on = self.wb.now()
                state.version += 1

    def config(self, zone_id: str) -> dict[str, Any]:
        """Everything the migration reads, as plain data (shape: :mod:`workbench.waf_legacy._config`)."""
        with self.lock:
            zone, state = self._zone(zone_id)
            value = self._setting(zone, state).value
            return zone_config(zone, state, self.catalog, value, self.enabled(zone.id))

    # -- evaluation ------------------------------------------------------------------
    def plan(self, zone_id: str) -> LegacyPlan:
        """The zone's SystemPlan, cached until its WAF configuration or page rules change."""
        zone = self.wb.zone(zone_id)
        # Page rules live in the firewall service; read them outside this lock.
        page_rules = self.wb.firewall.page_rules.list(zone.id, status="active")
        with self.lock:
            _, state = self._zone(zone.id, live=False)
            key = (state.version, zone.plan, page_rule_prints(page_rules))
            cached = self._plans.get(zone.id)
            if cached is not None and cached[0] == key:
                return cached[1]
            setting_on = self._setting(zone, state).value == "on"
            built = zone_plan(zone, state, self.catalog, page_rules, setting_on=setting_on)
            self._plans[zone.id] = (key, built)
            return built

    def evaluate(self, zone_id: str, fields: Mapping[str, Any]) -> Verdict:
        """The old WAF's verdict on one request (field values by name), assuming no ``waf`` bypass."""
        built = self.plan(zone_id)
        sources = {c.key: c.expression for c in built.checks}
        seen: dict[str, bool] = {}

        def matched(key: str) -> bool:
            if key not in seen:
                seen[key] = self._expression(sources[key]).matches(fields)
            return seen[key]

        return built.decide(matched)

    def _expression(self, text: str) -> Expression:
        found = self._compiled.get(text)
        if found is None:
            found = self._compiled.setdefault(text, compile_expression(text, MANAGED))
        return found
