"""The plan table: what each plan (free, pro, business, enterprise) allows.

One data file, ``plans.json``, holds every figure and flag; services read them
from here, so a new plan or a changed quota is one edit of that file.

    >>> from workbench.core.plans import PLANS, plan
    >>> list(PLANS)
    ['free', 'pro', 'business', 'enterprise']
    >>> plan("pro").firewall_active_rules, plan("enterprise").waf_validation_mode
    (20, True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from importlib import resources
from typing import Any

from .errors import InvalidZone


@dataclass(frozen=True)
class Plan:
    """One plan's entitlements (names as in ``plans.json``)."""

    name: str
    title: str
    firewall_active_rules: int
    firewall_log_action: bool
    matches_operator: bool
    page_rules: int
    old_waf: bool
    waf_validation_mode: bool
    enabled_managed_rules_without_migration: bool


def _load() -> dict[str, Plan]:
    raw: dict[str, Any] = json.loads(
        resources.files(__package__).joinpath("plans.json").read_text(encoding="utf-8")
    )
    wanted = {f.name for f in fields(Plan)} - {"name"}
    table = {}
    for name, row in raw["plans"].items():
        if set(row) != wanted:
            raise RuntimeError(f"plans.json: plan {name!r} must have exactly {sorted(wanted)}")
        table[name] = Plan(name=name, **row)
    return table


PLANS: dict[str, Plan] = _load()
PLAN_NAMES: tuple[str, ...] = tuple(PLANS)


def plan(name: str) -> Plan:
    """The plan called ``name``; :class:`InvalidZone` (1099) for an unknown one."""
    found = PLANS.get(name) if isinstance(name, str) else None
    if found is None:
        raise InvalidZone(f"plan must be one of {', '.join(PLAN_NAMES)}, got {name!r}")
    return found
