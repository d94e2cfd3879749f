"""A zone with firewall rules and both WAFs on small stand-in catalogues, for the traffic tests.

The catalogues are made for the generated traffic (workbench.traffic.generators):
rules that fire on its attacks and on some of its benign requests, rules that
read through url_decode (so the whole-table guards are exercised, including
overlong UTF-8 sequences that decode to bytes that are not UTF-8), scored
rules on both sides, and one rule reading url_decode's ``u`` option (``%uXXXX``,
translated to SQL by workbench.rules_language.sql_decode). They do not depend on the real catalogues, which are written apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench import Workbench
from workbench.core.security import Check, SecurityEvent, StaticPlan, Verdict
from workbench.replay._evaluate import Context, Evaluator
from workbench.rulesets import (
    CLOUDFLARE_MANAGED_ID,
    MANAGED_PHASE,
    OWASP_ID,
    OWASP_THRESHOLD_RULE_ID,
    RulesetsService,
)
from workbench.rulesets import load_catalog as load_new
from workbench.traffic.request import Request
from workbench.traffic.zone_plan import ZonePlan
from workbench.waf_legacy import CLOUDFLARE_PACKAGE, OWASP_PACKAGE, WafLegacyService
from workbench.waf_legacy import load_catalog as load_old

BOTH = 'url_decode(concat(http.request.uri, "\\x0a", http.request.body.raw), "r")'
SQLI = f'{BOTH} matches r#"(?i)union\\s+(all\\s+)?select|\\bor\\s+1\\s*=\\s*1"#'
XSS = f'{BOTH} matches r#"(?i)<script|onerror\\s*=|javascript:"#'
TRAVERSAL = (
    'url_decode(http.request.uri, "r") matches r#"(?:\\.|\\xc0\\xae){2}(?:/|\\\\|\\xc0\\xaf)"#'
)
CMDI = f'{BOTH} matches r#"(?i)(?:;|\\|\\||&&|`)\\s*(?:cat|ls|id|wget|curl|sh)\\b"#'
SCANNER = 'lower(http.user_agent) matches "(sqlmap|nikto|nmap|masscan|zgrab)"'
WP = 'http.request.uri.path contains "/wp-"'
HEADERS = 'any(url_decode(http.request.headers.values[*], "r")[*] contains "${jndi")'
NO_SQL = 'url_decode(http.request.uri.query, "u") contains "%u"'
SELECT = 'lower(url_decode(http.request.uri.query, "r")) contains "select"'
SCRIPT = 'lower(url_decode(http.request.uri, "r")) contains "script"'
DOTS = 'http.request.uri contains ".."'
CURL = 'lower(http.user_agent) contains "curl"'

NEW_IDS = {
    name: f"{i:02x}" * 16
    for i, name in enumerate(
        [
            "sqli",
            "xss",
            "traversal",
            "cmdi",
            "scanner",
            "wp",
            "jndi",
            "nosql",
            "select",
            "script",
            "dots",
            "curl",
        ],
        1,
    )
}


def _new_rule(key: str, description: str, action: str, expression: str, **extra: Any) -> dict:
    return {
        "id": NEW_IDS[key],
        "description": description,
        "categories": [key],
        "action": action,
        "enabled": True,
        "expression": expression,
        **extra,
    }


NEW_CATALOG = [
    {
        "id": CLOUDFLARE_MANAGED_ID,
        "name": "Cloudflare Managed Ruleset",
        "description": "traffic-test stand-in",
        "kind": "managed",
        "phase": MANAGED_PHASE,
        "version": "1",
        "last_updated": "2026-01-01T00:00:00Z",
        "rules": [
            _new_rule("sqli", "SQLi - union select", "block", SQLI),
            _new_rule("xss", "XSS - script", "block", XSS),
            _new_rule("traversal", "Directory traversal", "block", TRAVERSAL),
            _new_rule("cmdi", "Command injection", "block", CMDI),
            _new_rule("scanner", "Vulnerability scanner", "managed_challenge", SCANNER),
            _new_rule("wp", "WordPress probe", "log", WP),
            _new_rule("jndi", "Log4j header", "block", HEADERS),
            _new_rule("nosql", "Unicode escapes (no SQL translation)", "log", NO_SQL),
        ],
    },
    {
        "id": OWASP_ID,
        "name": "Cloudflare OWASP Core Ruleset",
        "description": "traffic-test stand-in",
        "kind": "managed",
        "phase": MANAGED_PHASE,
        "version": "1",
        "last_updated": "2026-01-01T00:00:00Z",
        "rules": [
            _new_rule(
                "select",
                "942100: SQLi select",
                "block",
                SELECT,
                score=25,
                paranoia_level=1,
                categories=["paranoia-level-1"],
            ),
            _new_rule(
                "script",
                "941100: XSS",
                "block",
                SCRIPT,
                score=30,
                paranoia_level=1,
                categories=["paranoia-level-1"],
            ),
            _new_rule(
                "dots",
                "930100: path traversal",
                "block",
                DOTS,
                score=20,
                paranoia_level=1,
                categories=["paranoia-level-1"],
            ),
            _new_rule(
                "curl",
                "913100: scanner agent",
                "block",
                CURL,
                score=5,
                paranoia_level=1,
                categories=["paranoia-level-1"],
            ),
            {
                "id": OWASP_THRESHOLD_RULE_ID,
                "description": "949110: Inbound Anomaly Score Exceeded",
                "categories": [],
                "action": "block",
                "enabled": True,
                "expression": "true",
                "score_threshold": 40,
            },
        ],
    },
]


def _deny(rule_id: str, mode: str, expression: str, new_key: str | None = None) -> dict:
    return {
        "id": rule_id,
        "description": f"old rule {rule_id}",
        "priority": "1",
        "kind": "deny",
        "default_mode": mode,
        "expression": expression,
        "new_id": NEW_IDS[new_key] if new_key else None,
    }


def _scored(rule_id: str, score: int, expression: str) -> dict:
    return {
        "id": rule_id,
        "description": f"owasp {rule_id}",
        "priority": "1",
        "default_mode": "on",
        "score": score,
        "expression": expression,
    }


OLD_CATALOG = [
    {
        "id": CLOUDFLARE_PACKAGE,
        "name": "CloudFlare",
        "description": "traffic-test stand-in",
        "detection_mode": "traditional",
        "groups": [
            {
                "id": "a1" * 16,
                "name": "Cloudflare Specials",
                "description": "",
                "default_mode": "on",
                "rules": [
                    _deny("100001", "block", SQLI, "sqli"),
                    # Old rules the new catalogue lacks or words differently.
                    _deny("100002", "challenge", 'http.request.uri.query contains "<"', None),
                    _deny("100003", "block", TRAVERSAL, "traversal"),
                    _deny("100004", "simulate", WP, "wp"),
                    _deny(
                        "100005", "block", 'lower(http.request.uri.path) contains "/admin"', None
                    ),
                    _deny("100006", "block", NO_SQL, "nosql"),
                ],
            }
        ],
    },
    {
        "id": OWASP_PACKAGE,
        "name": "OWASP ModSecurity Core Rule Set",
        "description": "traffic-test stand-in",
        "detection_mode": "anomaly",
        "groups": [
            {
                "id": "b1" * 16,
                "name": "OWASP attacks",
                "description": "",
                "default_mode": "on",
                "rules": [
                    _scored("950001", 20, SELECT),
                    _scored("958000", 30, SCRIPT),
                    _scored("958001", 10, DOTS),
                    _scored("913100", 25, CURL),
                ],
            }
        ],
    },
]

FIREWALL_RULES = [
    {
        "filter": {"expression": 'http.request.uri.path contains "/api/"'},
        "action": "bypass",
        "products": ["waf"],
        "description": "API skips the old WAF",
        "priority": 1,
    },
    {
        "filter": {"expression": 'ip.src.country in {"KP" "T1"}'},
        "action": "block",
        "description": "countries",
        "priority": 2,
    },
    {
        "filter": {"expression": 'http.request.uri.path eq "/health"'},
        "action": "allow",
        "description": "health check",
        "priority": 3,
    },
    {
        "filter": {"expression": 'http.request.method eq "POST"'},
        "action": "log",
        "description": "posts",
        "priority": 4,
    },
    {
        "filter": {"expression": 'http.user_agent contains "masscan"'},
        "action": "js_challenge",
        "description": "masscan",
        "priority": 5,
    },
    {
        "filter": {
            "expression": 'ip.src.asnum eq 14061 and http.request.uri.path contains "/wp-login"'
        },
        "action": "managed_challenge",
        "description": "hosting wp logins",
        "priority": 6,
    },
]


def workbench_with_zone(
    seed: int = 0, plan: str = "enterprise", managed: bool = True
) -> tuple[Workbench, str]:
    """A Workbench whose zone has the firewall rules and both WAFs on the stand-in catalogues."""
    wb = Workbench(seed=seed)
    wb.__dict__["_rulesets"] = RulesetsService(wb, catalog=load_new(NEW_CATALOG))
    wb.__dict__["_waf_legacy"] = WafLegacyService(wb, load_old(OLD_CATALOG))
    zone = wb.create_zone("example.com", plan=plan)
    wb.firewall.create_rules(zone.id, FIREWALL_RULES)
    if managed:
        enable_new(wb, zone.id)
    return wb, zone.id


def enable_new(wb: Workbench, zone_id: str, rules: list[dict] | None = None) -> None:
    """The managed entry point: execute both stand-in rulesets (or ``rules``)."""
    wb.rulesets.put_entrypoint(
        zone_id,
        MANAGED_PHASE,
        {
            "rules": rules
            if rules is not None
            else [
                {
                    "action": "execute",
                    "expression": "true",
                    "action_parameters": {"id": CLOUDFLARE_MANAGED_ID},
                },
                {"action": "execute", "expression": "true", "action_parameters": {"id": OWASP_ID}},
            ]
        },
    )


def log_plan(checks: Mapping[str, str]) -> ZonePlan:
    """A plan of ``checks`` (name: expression) that logs one event per check that matched."""

    def decide(match: Any) -> Verdict:
        return Verdict(
            [SecurityEvent("firewallRules", "log", k, None, "") for k in checks if match(k)]
        )

    return ZonePlan(StaticPlan([Check(k, e) for k, e in checks.items()], decide))


def matched(ev: Evaluator, ids: Any) -> list[list[str]]:
    """The checks each request matched, read from its verdict (``ids``: verdict indexes)."""
    return [[e.rule_id for e in ev.verdicts[i].events] for i in ids]


def both_paths(ev: Evaluator, requests: Sequence[Request]) -> tuple[list, list]:
    """What each request matched on the whole-table path, then on the per-request path."""
    ctx = Context.plain(len(requests))
    return matched(ev, ev.whole_table(requests, ctx)), matched(ev, ev.per_request(requests, ctx))
