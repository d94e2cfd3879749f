"""What an execute rule's overrides make of each managed rule: its effective action and state.

Three levels, field by field: a rule override beats a category (tag)
override, which beats the ruleset-level override, which beats the rule's own
default. When several overridden categories of a rule set the same field, the
last one in the ``categories`` list wins.

    >>> from datetime import UTC, datetime
    >>> from workbench.rulesets.models import ManagedRule
    >>> rule = ManagedRule(id="a" * 32, ref="a" * 32, version="1", description="probe",
    ...                    categories=("cms", "probe"), action="block", enabled=True,
    ...                    expression="true", last_updated=datetime(2026, 1, 1, tzinfo=UTC))
    >>> effective(rule, {"action": "log", "categories": [{"category": "probe", "action": "challenge"}]})
    Effective(action='challenge', enabled=True, score_threshold=None)

:func:`paranoia_categories` writes the category overrides that set the OWASP
ruleset's paranoia level (every level above it disabled):

    >>> paranoia_categories(3)
    [{'category': 'paranoia-level-4', 'enabled': False}]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .models import DEFAULT_SCORE_THRESHOLD, ManagedRule

#: The OWASP ruleset's paranoia levels; each is the category ``paranoia-level-N``.
PARANOIA_LEVELS = (1, 2, 3, 4)


def paranoia_categories(level: int) -> list[dict[str, Any]]:
    """The category overrides that run the OWASP ruleset at paranoia level ``level``."""
    return [
        {"category": f"paranoia-level-{n}", "enabled": False} for n in PARANOIA_LEVELS if n > level
    ]


@dataclass(frozen=True)
class Effective:
    """A managed rule as one execute rule runs it."""

    action: str
    enabled: bool
    score_threshold: int | None


def _pick(rule: ManagedRule, overrides: Mapping[str, Any], name: str) -> Any:
    """The value of field ``name`` for ``rule`` by precedence, or None when nothing overrides it."""
    for item in overrides.get("rules", []):
        if item["id"] == rule.id and name in item:
            return item[name]
    for item in reversed(overrides.get("categories", [])):
        if item["category"] in rule.categories and name in item:
            return item[name]
    return overrides.get(name) if name in ("action", "enabled") else None


def effective(rule: ManagedRule, overrides: Mapping[str, Any] | None) -> Effective:
    """``rule`` with ``overrides`` (checked ``action_parameters.overrides``, or None) applied."""
    overrides = overrides or {}
    action = _pick(rule, overrides, "action")
    enabled = _pick(rule, overrides, "enabled")
    threshold = _pick(rule, overrides, "score_threshold")
    if threshold is None and rule.score_threshold is not None:
        threshold = rule.score_threshold
    return Effective(
        action=rule.action if action is None else action,
        enabled=rule.enabled if enabled is None else enabled,
        score_threshold=threshold,
    )


def threshold_of(value: Effective) -> int:
    """The score a request must reach for a score-based ruleset's mitigation (40 by default)."""
    return DEFAULT_SCORE_THRESHOLD if value.score_threshold is None else value.score_threshold
