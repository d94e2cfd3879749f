"""Page rules with their security-related actions (the WAF migration reads them).

A page rule targets one URL pattern (``*`` matches any run of characters) and
carries actions. The workbench simulates the security actions only: ``waf``
on/off, ``security_level``, ``browser_check`` on/off and ``disable_security``.

    >>> from workbench import Workbench
    >>> import threading
    >>> wb = Workbench(seed=2)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> pr = PageRules(wb, threading.RLock())
    >>> rule = pr.create(zone.id, {
    ...     "targets": [{"target": "url", "constraint": {"operator": "matches", "value": "*example.com/admin*"}}],
    ...     "actions": [{"id": "waf", "value": "off"}], "status": "active"})
    >>> pr.for_url(zone.id, "https://example.com/admin/login").actions
    [{'id': 'waf', 'value': 'off'}]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.clock import iso
from ..core.errors import must_exist
from ..core.plans import plan
from ._validate import encodable, invalid, refuse_unencodable
from .errors import PageRuleNotFound, PageRuleQuotaExceeded

if TYPE_CHECKING:
    from ..core.platform import Workbench, Zone

SECURITY_ACTIONS: dict[str, tuple[str, ...] | None] = {
    "waf": ("on", "off"),
    "security_level": ("off", "essentially_off", "low", "medium", "high", "under_attack"),
    "browser_check": ("on", "off"),
    "disable_security": None,  # takes no value
}
STATUSES = ("active", "disabled")
MAX_TARGET = 255


@dataclass
class PageRule:
    """One page rule: a URL pattern and the settings applied to matching URLs."""

    id: str
    value: str
    actions: list[dict[str, Any]]
    priority: int
    status: str
    created_on: datetime
    modified_on: datetime

    @property
    def targets(self) -> list[dict[str, Any]]:
        """The v4 ``targets`` array (always one URL target)."""
        return [{"target": "url", "constraint": {"operator": "matches", "value": self.value}}]

    def matches_url(self, url: str) -> bool:
        """True when ``url`` matches the pattern (scheme optional, host case-insensitive)."""
        pattern, candidate = self.value, url
        if "://" not in pattern:
            candidate = candidate.split("://", 1)[-1]
        regex = ".*".join(re.escape(part) for part in pattern.split("*"))
        return re.fullmatch(regex, candidate, re.IGNORECASE) is not None

    def to_dict(self) -> dict[str, Any]:
        """The page rule as the API shows it."""
        return {
            "id": self.id,
            "targets": self.targets,
            "actions": [dict(a) for a in self.actions],
            "priority": self.priority,
            "status": self.status,
            "created_on": iso(self.created_on),
            "modified_on": iso(self.modified_on),
        }


class PageRules:
    """Page rules of every zone; shares the firewall's lock."""

    def __init__(self, wb: Workbench, lock: Any) -> None:
        self.wb = wb
        self.lock = lock
        self._zones: dict[str, dict[str, PageRule]] = {}

    def _rules(self, zone_id: str) -> tuple[Zone, dict[str, PageRule]]:
        zone = self.wb.zone(zone_id)
        return zone, self._zones.setdefault(zone.id, {})

    def get(self, zone_id: str, rule_id: str) -> PageRule:
        """One page rule by id."""
        with self.lock:
            found = self._rules(zone_id)[1].get(rule_id)
        missing = f"page rule {rule_id} does not exist in this zone"
        return must_exist(found, PageRuleNotFound, missing)

    def list(
        self,
        zone_id: str,
        *,
        status: str | None = None,
        order: str | None = None,
        direction: str | None = None,
        match: str | None = None,
    ) -> list[PageRule]:
        """Page rules, sorted by ``order`` (priority or status) in ``direction`` (desc)."""
        if status is not None and status not in STATUSES:
            raise invalid("", f"status must be active or disabled, got {status!r}")
        if order not in (None, "priority", "status"):
            raise invalid("", f"order must be priority or status, got {order!r}")
        if direction not in (None, "asc", "desc"):
            raise invalid("", f"direction must be asc or desc, got {direction!r}")
        if match not in (None, "any", "all"):
            raise invalid("", f"match must be any or all, got {match!r}")
        with self.lock:
            rules = [r for r in self._rules(zone_id)[1].values() if status in (None, r.status)]
        key = order or "priority"
        return sorted(rules, key=lambda r: getattr(r, key), reverse=direction != "asc")

    def create(self, zone_id: str, body: Any) -> PageRule:
        """Create a page rule from ``{targets, actions, priority?, status?}``."""
        spec = _fields(body, full=True)
        with self.lock:
            zone, rules = self._rules(zone_id)
            quota = plan(zone.plan).page_rules
            if len(rules) >= quota:
                raise PageRuleQuotaExceeded(
                    f"page rule quota exceeded: the {zone.plan} plan allows {quota} page rules",
                )
            now = self.wb.now()
            rule = PageRule(
                id=self.wb.new_id(),
                value=spec["value"],
                actions=spec["actions"],
                priority=spec.get("priority", 1),
                status=spec.get("status", "disabled"),
                created_on=now,
                modified_on=now,
            )
            rules[rule.id] = rule
            return rule

    def update(self, zone_id: str, rule_id: str, body: Any, *, full: bool) -> PageRule:
        """Replace (``full``, PUT) or edit (PATCH) a page rule; omitted fields stay."""
        spec = _fields(body, full=full)
        with self.lock:
            rule = self.get(zone_id, rule_id)
            for key, value in spec.items():
                setattr(rule, key, value)
            rule.modified_on = self.wb.now()
            return rule

    def delete(self, zone_id: str, rule_id: str) -> str:
        """Delete a page rule and return its id."""
        with self.lock:
            self.get(zone_id, rule_id)
            del self._rules(zone_id)[1][rule_id]
            return rule_id

    def for_url(self, zone_id: str, url: str) -> PageRule | None:
        """The active page rule that applies to ``url`` (highest priority wins)."""
        hits = [r for r in self.list(zone_id, status="active") if r.matches_url(url)]
        return hits[0] if hits else None


def _fields(body: Any, *, full: bool) -> dict[str, Any]:
    if not isinstance(body, Mapping):
        raise invalid("", "the body must be a JSON object")
    refuse_unencodable(dict(body))  # targets, action values, keys: never stored unencodable
    out: dict[str, Any] = {}
    if "targets" in body:
        out["value"] = _target(body["targets"])
    elif full:
        raise invalid("/targets", "is required")
    if "actions" in body:
        out["actions"] = _actions(body["actions"])
    elif full:
        raise invalid("/actions", "is required")
    if "priority" in body:
        value = body["priority"]
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 10_000:
            raise invalid("/priority", "must be a whole number from 1 to 10000")
        out["priority"] = value
    if "status" in body:
        if body["status"] not in STATUSES:
            raise invalid("/status", "must be active or disabled")
        out["status"] = body["status"]
    return out


def _target(targets: Any) -> str:
    if not isinstance(targets, list) or len(targets) != 1 or not isinstance(targets[0], Mapping):
        raise invalid("/targets", "must be an array holding one URL target")
    target = targets[0]
    constraint = target.get("constraint")
    if target.get("target") != "url" or not isinstance(constraint, Mapping):
        raise invalid("/targets/0", 'must be {"target": "url", "constraint": {...}}')
    if constraint.get("operator", "matches") != "matches":
        raise invalid("/targets/0/constraint/operator", "only matches is supported")
    value = constraint.get("value")
    if isinstance(value, str):
        encodable(value, "/targets/0/constraint/value")
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TARGET:
        raise invalid(
            "/targets/0/constraint/value", f"must be a URL pattern of 1 to {MAX_TARGET} characters"
        )
    return value


def _actions(actions: Any) -> list[dict[str, Any]]:
    if not isinstance(actions, list) or not actions:
        raise invalid("/actions", "must be a non-empty array")
    out, seen = [], set()
    for i, action in enumerate(actions):
        if not isinstance(action, Mapping) or not isinstance(action.get("id"), str):
            raise invalid(f"/actions/{i}", 'must be an object with an "id"')
        name = action["id"]
        if name not in SECURITY_ACTIONS:
            raise invalid(
                f"/actions/{i}/id",
                f"{name!r} is not simulated; use one of {', '.join(SECURITY_ACTIONS)}",
            )
        if name in seen:
            raise invalid(f"/actions/{i}/id", f"{name} appears twice")
        seen.add(name)
        allowed = SECURITY_ACTIONS[name]
        if allowed is None:
            out.append({"id": name})
            continue
        if action.get("value") not in allowed:
            raise invalid(f"/actions/{i}/value", f"{name} takes one of {', '.join(allowed)}")
        out.append({"id": name, "value": action["value"]})
    return out
