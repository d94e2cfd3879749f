"""A tiny evaluator of the managed-rule catalogues: what each system would do with one request.

It reads the JSON catalogues directly and compiles their expressions with the
Rules language, so detection quality is judged without the engines.

New system, as a migrated default zone deploys it: the Cloudflare Managed
Ruleset with every rule's default action and enabled flag, then the OWASP Core
Ruleset at paranoia level ``paranoia`` whose contributing rules add their
score; rule 949110 acts (an event, then blocks) when the score reaches
``threshold``. Previous version: the CloudFlare package with its groups' and
rules' default modes, then the OWASP CRS 2.x package whose score must reach
the sensitivity threshold (High 25, Medium 40, Low 60); its default action is
a challenge.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import workbench
from workbench.rules_language import MANAGED, Expression, compile_expression

PACKAGE = Path(workbench.__file__).resolve().parent
NEW_CATALOG = PACKAGE / "rulesets" / "catalog"
OLD_CATALOG = PACKAGE / "waf_legacy" / "catalog" / "packages.json"
SCORE_RULE_ID = "6179ae15870a4bb7b2d480d4843b323c"
SENSITIVITY = {"high": 25, "medium": 40, "low": 60}


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass
class Rule:
    """One catalogue rule with its compiled expression."""

    id: str
    description: str
    action: str
    enabled: bool
    expr: Expression
    score: int = 0
    paranoia_level: int = 0
    categories: tuple[str, ...] = ()


@dataclass
class Verdict:
    """What one system did with one request."""

    flagged: bool = False
    blocked: bool = False
    mitigated: bool = False
    hits: list[str] = field(default_factory=list)
    score: int = 0


class NewSystem:
    """Cloudflare Managed Ruleset then the OWASP Core Ruleset at ``paranoia``/``threshold``."""

    def __init__(self, paranoia: int = 2, threshold: int = 40) -> None:
        cmr = load(NEW_CATALOG / "cloudflare_managed.json")
        owasp = load(NEW_CATALOG / "owasp_core.json")
        self.paranoia, self.threshold = paranoia, threshold
        self.cmr = [
            Rule(
                r["id"],
                r["description"],
                r["action"],
                r["enabled"],
                compile_expression(r["expression"], MANAGED),
            )
            for r in cmr["rules"]
        ]
        self.owasp = [
            Rule(
                r["id"],
                r["description"],
                r["action"],
                r["enabled"],
                compile_expression(r["expression"], MANAGED),
                r["score"],
                r["paranoia_level"],
                tuple(r["categories"]),
            )
            for r in owasp["rules"]
            if r["id"] != SCORE_RULE_ID
        ]
        self.active_cmr = [r for r in self.cmr if r.enabled]
        self.blocking = [r for r in self.active_cmr if r.action == "block"]
        self.logging = [r for r in self.active_cmr if r.action != "block"]
        self.active_owasp = [r for r in self.owasp if r.enabled and r.paranoia_level <= paranoia]

    def owasp_score(self, fields: dict[str, Any]) -> tuple[int, list[str]]:
        hits = [r for r in self.active_owasp if r.expr.matches(fields)]
        return sum(r.score for r in hits), [r.description for r in hits]

    def verdict(self, fields: dict[str, Any], full: bool = False) -> Verdict:
        """The outcome; without ``full`` it stops as soon as flagged and blocked are known."""
        v = Verdict()
        for rule in self.blocking:
            if rule.expr.matches(fields):
                v.flagged = v.blocked = v.mitigated = True
                v.hits.append(rule.description)
                if not full:
                    return v
        v.score, owasp_hits = self.owasp_score(fields)
        if v.score >= self.threshold:
            v.flagged = v.blocked = v.mitigated = True
            v.hits.append("949110: Inbound Anomaly Score Exceeded")
        for rule in self.logging:
            if (full or not v.flagged) and rule.expr.matches(fields):
                v.flagged = True
                v.mitigated = v.mitigated or rule.action != "log"
                v.hits.append(rule.description)
        if full:
            v.hits.extend(owasp_hits)
        return v


class OldSystem:
    """The previous WAF with its default groups, rule modes and OWASP sensitivity."""

    def __init__(self, sensitivity: str = "high", groups_on: set[str] | None = None) -> None:
        doc = load(OLD_CATALOG)
        cloudflare, owasp = doc["packages"]
        self.threshold = SENSITIVITY[sensitivity]
        self.rules: list[Rule] = []
        self.allow: list[Rule] = []
        for group in cloudflare["groups"]:
            on = (
                group["name"] in groups_on
                if groups_on is not None
                else group["default_mode"] == "on"
            )
            for r in group["rules"]:
                rule = Rule(
                    r["id"],
                    r["description"],
                    r["default_mode"],
                    on,
                    compile_expression(r["expression"], MANAGED),
                )
                if not on or r["default_mode"] in ("disable", "off"):
                    continue
                (self.allow if r["kind"] == "allow" else self.rules).append(rule)
        self.owasp = [
            Rule(
                r["id"],
                r["description"],
                "on",
                True,
                compile_expression(r["expression"], MANAGED),
                r["score"],
            )
            for group in owasp["groups"]
            if group["default_mode"] == "on"
            for r in group["rules"]
            if r["default_mode"] == "on"
        ]

    def verdict(self, fields: dict[str, Any]) -> Verdict:
        v = Verdict()
        if not any(r.expr.matches(fields) for r in self.allow):
            for rule in self.rules:
                if rule.expr.matches(fields):
                    v.flagged = True
                    v.blocked = v.blocked or rule.action == "block"
                    v.mitigated = v.mitigated or rule.action in ("block", "challenge")
                    v.hits.append(f"{rule.id}: {rule.description}")
        v.score = sum(r.score for r in self.owasp if r.expr.matches(fields))
        if v.score >= self.threshold:
            v.flagged = v.mitigated = True  # the package action defaults to a challenge
            v.hits.append("981176: OWASP anomaly score exceeded")
        return v
