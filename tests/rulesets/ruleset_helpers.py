"""A small catalogue for the ruleset tests: a managed ruleset and a score-based one.

Real catalogue ids (so execute rules look as in the docs), made-up rules.
"""

from __future__ import annotations

from typing import Any

from workbench.rulesets import (
    CLOUDFLARE_MANAGED_ID,
    CUSTOM_PHASE,
    MANAGED_PHASE,
    OWASP_ID,
    OWASP_THRESHOLD_RULE_ID,
    load_catalog,
)

CF = CLOUDFLARE_MANAGED_ID
OWASP = OWASP_ID
THRESHOLD = OWASP_THRESHOLD_RULE_ID

# Cloudflare Managed Ruleset stand-ins.
SQLI = "a1" * 16  # block, categories sqli + wordpress
WP_ADMIN = "a2" * 16  # log, category wordpress
CMS = "a3" * 16  # block, disabled by default
STRUTS = "a4" * 16  # challenge, category struts

# OWASP stand-ins: score and paranoia level.
XSS = "b1" * 16  # PL1, 5
CURL = "b2" * 16  # PL1, 3
SELECT = "b3" * 16  # PL2, 25
PASSWD = "b4" * 16  # PL3, 20
DOTS = "b5" * 16  # PL4, 10


def _path(text: str) -> str:
    return f'http.request.uri.path contains "{text}"'


def _query(text: str) -> str:
    return f'http.request.uri.query contains "{text}"'


def _rule(
    rule_id: str,
    description: str,
    categories: list[str],
    action: str,
    expression: str,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "id": rule_id,
        "ref": rule_id[::-1],
        "version": "1",
        "description": description,
        "categories": categories,
        "action": action,
        "enabled": extra.pop("enabled", True),
        "expression": expression,
        **extra,
    }


def _owasp(rule_id: str, description: str, level: int, score: int, expression: str) -> dict:
    return _rule(
        rule_id,
        description,
        [f"paranoia-level-{level}", "owasp"],
        "block",
        expression,
        score=score,
        paranoia_level=level,
    )


CATALOG_DATA: list[dict[str, Any]] = [
    {
        "id": CF,
        "name": "Cloudflare Managed Ruleset",
        "description": "test stand-in",
        "kind": "managed",
        "phase": MANAGED_PHASE,
        "version": "180",
        "last_updated": "2025-06-01T00:00:00Z",
        "rules": [
            _rule(SQLI, "SQLi - union select", ["sqli", "wordpress"], "block", _query("union")),
            _rule(WP_ADMIN, "WordPress admin probe", ["wordpress"], "log", _path("/wp-admin")),
            _rule(CMS, "CMS probe", ["cms"], "block", _path("/cms"), enabled=False),
            _rule(
                STRUTS, "Apache Struts - Open Redirect", ["struts"], "challenge", _path("/struts")
            ),
        ],
    },
    {
        "id": OWASP,
        "name": "Cloudflare OWASP Core Ruleset",
        "description": "test stand-in",
        "kind": "managed",
        "phase": MANAGED_PHASE,
        "version": "35",
        "last_updated": "2022-01-24T00:00:00Z",
        "rules": [
            _owasp(XSS, "941100: XSS", 1, 5, _query("<script")),
            _owasp(CURL, "913100: scanner user agent", 1, 3, 'http.user_agent contains "curl"'),
            _owasp(SELECT, "942100: SQLi select", 2, 25, _query("select")),
            _owasp(PASSWD, "930120: OS file access", 3, 20, _path("/etc/passwd")),
            _owasp(DOTS, "930100: path traversal", 4, 10, _path("..")),
            _rule(
                THRESHOLD,
                "949110: Inbound Anomaly Score Exceeded",
                [],
                "block",
                "true",
                score_threshold=40,
            ),
        ],
    },
]


def small_catalog():
    return load_catalog(CATALOG_DATA)


def request(path: str = "/", query: str = "", agent: str = "browser") -> dict[str, Any]:
    return {
        "http.request.uri.path": path,
        "http.request.uri.query": query,
        "http.user_agent": agent,
    }


def execute(
    ruleset_id: str, overrides: dict | None = None, expression: str = "true", **rule: Any
) -> dict:
    params: dict[str, Any] = {"id": ruleset_id}
    if overrides is not None:
        params["overrides"] = overrides
    return {"action": "execute", "expression": expression, "action_parameters": params, **rule}


def skip(params: dict, expression: str = "true", **rule: Any) -> dict:
    return {"action": "skip", "expression": expression, "action_parameters": params, **rule}


__all__ = ["CUSTOM_PHASE", "MANAGED_PHASE"]
