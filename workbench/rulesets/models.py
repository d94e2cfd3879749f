"""Plain models of the ruleset engine: zone entry points, their rules, managed rulesets.

Models are immutable snapshots: a PUT makes a new :class:`Ruleset` (the next
version) and the old one stays readable as a past version. They show
themselves as the Rulesets API does (``to_dict``); the rules of the engine
live in ``_fields.py``, ``_params.py``, ``engine.py`` and ``service.py``.

    >>> from datetime import UTC, datetime
    >>> when = datetime(2026, 1, 1, tzinfo=UTC)
    >>> rule = Rule(id="a" * 32, version="1", action="block", expression="true",
    ...             last_updated=when, ref="a" * 32)
    >>> rs = Ruleset(id="b" * 32, name="default", description="", kind="zone",
    ...              phase=CUSTOM_PHASE, version="1", last_updated=when, rules=(rule,))
    >>> rs.to_dict()["rules"][0]["enabled"], "rules" in rs.summary()
    (True, False)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from ..core.clock import iso

CUSTOM_PHASE = "http_request_firewall_custom"
MANAGED_PHASE = "http_request_firewall_managed"
#: The phases the workbench simulates, in the order a request meets them.
PHASES = (CUSTOM_PHASE, MANAGED_PHASE)

#: Rule actions an entry point of each phase takes. Managed rulesets run only
#: from the managed phase; custom rules act directly.
PHASE_ACTIONS: dict[str, tuple[str, ...]] = {
    CUSTOM_PHASE: ("block", "challenge", "js_challenge", "log", "managed_challenge", "skip"),
    MANAGED_PHASE: ("execute", "skip"),
}
#: Actions an override may give a managed rule.
OVERRIDE_ACTIONS = ("block", "challenge", "js_challenge", "log", "managed_challenge")
SENSITIVITY_LEVELS = ("default", "medium", "low", "eoff")
#: Products a custom-phase skip rule may skip (API values, case-sensitive).
SKIP_PRODUCTS = ("bic", "hot", "rateLimit", "securityLevel", "uaBlock", "waf", "zoneLockdown")
#: Phases a custom-phase skip rule may skip; only the managed phase is simulated.
SKIP_PHASES = ("http_ratelimit", "http_request_sbfm", MANAGED_PHASE)

CLOUDFLARE_MANAGED_ID = "efb7b8c949ac4650a09736fc376e9aee"
OWASP_ID = "4814384a9e5d4991b9815dcfc25d2f1f"
#: The OWASP ruleset's last rule, "949110: Inbound Anomaly Score Exceeded".
OWASP_THRESHOLD_RULE_ID = "6179ae15870a4bb7b2d480d4843b323c"
DEFAULT_SCORE_THRESHOLD = 40

R = TypeVar("R", "Rule", "ManagedRule")


class _RulesetView(Generic[R]):
    """What both kinds of ruleset share: their rules by id, the list view and the full view."""

    id: str
    name: str
    description: str
    kind: str
    phase: str
    version: str
    last_updated: datetime
    rules: tuple[R, ...]

    def rule(self, rule_id: str) -> R | None:
        """The rule with this id, or None."""
        return next((r for r in self.rules if r.id == rule_id), None)

    def summary(self) -> dict[str, Any]:
        """The ruleset without its rules (the list view)."""
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "kind": self.kind,
            "version": self.version,
            "last_updated": iso(self.last_updated),
            "phase": self.phase,
        }

    def to_dict(self) -> dict[str, Any]:
        """The ruleset with its rules."""
        return {**self.summary(), "rules": [r.to_dict() for r in self.rules]}


@dataclass(frozen=True)
class Rule:
    """One rule of a zone entry point ruleset."""

    id: str
    version: str
    action: str
    expression: str
    last_updated: datetime
    ref: str
    description: str = ""
    enabled: bool = True
    action_parameters: dict[str, Any] | None = None
    logging: dict[str, Any] | None = None
    compiled: Any = field(default=None, repr=False, compare=False)

    def content(self) -> tuple[Any, ...]:
        """What a client can change: a rule whose content is unchanged keeps its version."""
        return (
            self.action,
            self.expression,
            self.description,
            self.enabled,
            self.ref,
            self.action_parameters,
            self.logging,
        )

    def to_dict(self) -> dict[str, Any]:
        """The rule as the Rulesets API shows it (copies, so callers cannot edit the model)."""
        out: dict[str, Any] = {
            "id": self.id,
            "version": self.version,
            "action": self.action,
            "expression": self.expression,
            "description": self.description,
            "last_updated": iso(self.last_updated),
            "ref": self.ref,
            "enabled": self.enabled,
        }
        if self.action_parameters is not None:
            out["action_parameters"] = copy.deepcopy(self.action_parameters)
        if self.logging is not None:
            out["logging"] = dict(self.logging)
        return out


@dataclass(frozen=True)
class Ruleset(_RulesetView["Rule"]):
    """One version of a zone entry point ruleset (``kind: "zone"``)."""

    id: str
    name: str
    description: str
    kind: str
    phase: str
    version: str
    last_updated: datetime
    rules: tuple[Rule, ...]


@dataclass(frozen=True)
class ManagedRule:
    """One rule of a managed ruleset, as the catalogue defines it."""

    id: str
    ref: str
    version: str
    description: str
    categories: tuple[str, ...]
    action: str
    enabled: bool
    expression: str
    last_updated: datetime
    score: int | None = None
    paranoia_level: int | None = None
    score_threshold: int | None = None
    compiled: Any = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The rule as the API lists it; like the real API, the expression is not shown."""
        return {
            "id": self.id,
            "version": self.version,
            "action": self.action,
            "categories": list(self.categories),
            "description": self.description,
            "last_updated": iso(self.last_updated),
            "ref": self.ref,
            "enabled": self.enabled,
        }


@dataclass(frozen=True)
class ManagedRuleset(_RulesetView["ManagedRule"]):
    """A managed ruleset of the catalogue (``kind: "managed"``), the same for every zone."""

    id: str
    name: str
    description: str
    phase: str
    version: str
    last_updated: datetime
    rules: tuple[ManagedRule, ...]
    kind: str = "managed"

    @property
    def threshold_rule(self) -> ManagedRule | None:
        """The anomaly-score rule (OWASP's 949110): its presence makes the ruleset score-based."""
        return next((r for r in self.rules if r.score_threshold is not None), None)
