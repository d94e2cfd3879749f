"""Plain model classes of the firewall: filters, firewall rules and evaluations.

Models know how to show themselves (``to_dict``) as the v4 API does; they hold
no behaviour beyond that. The rules of the service live in ``service.py``.

    >>> from datetime import UTC, datetime
    >>> f = Filter(id="f" * 32, expression='ip.src eq 1.2.3.4')
    >>> f.to_dict()
    {'id': 'ffffffffffffffffffffffffffffffff', 'expression': 'ip.src eq 1.2.3.4', 'paused': False}
    >>> sorted(ACTIONS)[:2]
    ['allow', 'block']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..core.clock import iso
from ..rules_language.parser import MAX_LENGTH

# API action values with their precedence (a lower number is evaluated first
# among rules of equal priority). ``log`` and ``bypass`` do not stop evaluation.
ACTION_PRECEDENCE: dict[str, int] = {
    "log": 1,
    "bypass": 2,
    "allow": 3,
    "challenge": 4,
    "managed_challenge": 5,
    "js_challenge": 6,
    "block": 7,
}
ACTIONS = frozenset(ACTION_PRECEDENCE)
NON_TERMINAL_ACTIONS = frozenset({"log", "bypass"})

# Features that ``bypass`` can skip (API values).
BYPASS_PRODUCTS = ("zoneLockdown", "uaBlock", "bic", "hot", "securityLevel", "rateLimit", "waf")

#: An expression's limit is the language's own.
MAX_EXPRESSION = MAX_LENGTH
MAX_DESCRIPTION = 500
MAX_REF = 50
MAX_PRIORITY = 2_147_483_647
MAX_BATCH = 25


@dataclass
class Filter:
    """A standalone match expression; several rules (and other features) may share it."""

    id: str
    expression: str
    paused: bool = False
    description: str | None = None
    ref: str | None = None
    compiled: Any = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The filter as the API shows it; ``description``/``ref`` only once set."""
        out: dict[str, Any] = {"id": self.id, "expression": self.expression, "paused": self.paused}
        if self.description is not None:
            out["description"] = self.description
        if self.ref is not None:
            out["ref"] = self.ref
        return out


@dataclass
class FirewallRule:
    """An action applied to the requests its filter matches."""

    id: str
    filter: Filter
    action: str
    created_on: datetime
    modified_on: datetime
    paused: bool = False
    priority: int | None = None
    description: str | None = None
    ref: str | None = None
    products: list[str] | None = None
    seq: int = 0  # creation order, the final tie-breaker of evaluation

    @property
    def active(self) -> bool:
        """True when the rule counts against the quota (it is not paused)."""
        return not self.paused

    def sort_key(self) -> tuple[int, int, int, int]:
        """Evaluation order: priority (none last), then action precedence, then age."""
        unprioritised = 1 if self.priority is None else 0
        return (unprioritised, self.priority or 0, ACTION_PRECEDENCE[self.action], self.seq)

    def to_dict(self) -> dict[str, Any]:
        """The rule as the API shows it, with its full filter embedded."""
        out: dict[str, Any] = {
            "id": self.id,
            "paused": self.paused,
            "action": self.action,
            "priority": self.priority,
            "filter": self.filter.to_dict(),
            "created_on": iso(self.created_on),
            "modified_on": iso(self.modified_on),
        }
        if self.description is not None:
            out["description"] = self.description
        if self.ref is not None:
            out["ref"] = self.ref
        if self.action == "bypass":
            out["products"] = list(self.products or [])
        return out


@dataclass
class Evaluation:
    """What a zone's firewall rules do to one request."""

    action: str | None
    matched: list[tuple[str, str]]
    bypassed: frozenset[str] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        """Plain data for tables and JSON."""
        return {
            "action": self.action,
            "matched": [{"rule_id": r, "action": a} for r, a in self.matched],
            "bypassed": sorted(self.bypassed),
        }
