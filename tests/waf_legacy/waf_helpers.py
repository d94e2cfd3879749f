"""A small stand-in old-WAF catalogue and a request builder for the waf_legacy tests.

The real catalogue (workbench/waf_legacy/catalog/packages.json) is written
apart; these tests use their own so they do not depend on its content.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from workbench.waf_legacy import CLOUDFLARE_PACKAGE, OWASP_PACKAGE, load_catalog

CF, OWASP = CLOUDFLARE_PACKAGE, OWASP_PACKAGE
SPECIALS = "a1" * 16  # Cloudflare Specials (on)
WORDPRESS = "a2" * 16  # WordPress (off by default)
SQLI = "b1" * 16  # OWASP SQL injection group (on)
XSS = "b2" * 16  # OWASP XSS group (on)
OWASP_OFF = "b3" * 16  # an OWASP group that is off by default


def _path(text):
    return f'http.request.uri.path contains "{text}"'


def _query(text):
    return f'lower(http.request.uri.query) contains "{text}"'


def deny(rule_id, default_mode, expression, priority="1", new_id=None):
    return {
        "id": rule_id,
        "description": f"deny {rule_id}",
        "priority": priority,
        "kind": "deny",
        "default_mode": default_mode,
        "expression": expression,
        "new_id": new_id,
    }


def scored(rule_id, score, expression, default_mode="on", priority="1"):
    return {
        "id": rule_id,
        "description": f"owasp {rule_id}",
        "priority": priority,
        "default_mode": default_mode,
        "score": score,
        "expression": expression,
    }


CATALOG_DATA = [
    {
        "id": CF,
        "name": "CloudFlare",
        "description": "Covers OWASP Top 10 vulnerabilities, and more.",
        "detection_mode": "traditional",
        "groups": [
            {
                "id": SPECIALS,
                "name": "Cloudflare Specials",
                "description": "core protections",
                "default_mode": "on",
                "rules": [
                    deny("100015", "block", _path("/admin"), "10", "c1" * 16),
                    deny("100016", "challenge", _path("/login"), "2"),
                    deny("100017", "simulate", _path("/probe"), "3"),
                    deny("100048", "disable", _path("/pad"), "4"),
                    {
                        "id": "100100",
                        "description": "allow the health check",
                        "priority": "5",
                        "kind": "allow",
                        "default_mode": "on",
                        "expression": 'http.request.uri.path eq "/admin/health"',
                        "new_id": None,
                    },
                ],
            },
            {
                "id": WORDPRESS,
                "name": "Cloudflare WordPress",
                "description": "WordPress",
                "default_mode": "off",
                "rules": [deny("WP0025B", "block", _path("/wp-login"))],
            },
        ],
    },
    {
        "id": OWASP,
        "name": "OWASP ModSecurity Core Rule Set",
        "description": "OWASP Core Ruleset (2013) provides protection against common attack categories.",
        "detection_mode": "anomaly",
        "groups": [
            {
                "id": SQLI,
                "name": "OWASP SQL Injection Attacks",
                "description": "",
                "default_mode": "on",
                "rules": [
                    scored("950001", 20, _query("select"), priority="1"),
                    scored("950002", 10, _query("union"), priority="2"),
                ],
            },
            {
                "id": XSS,
                "name": "OWASP XSS Attacks",
                "description": "",
                "default_mode": "on",
                "rules": [
                    scored("958000", 30, _query("<script")),
                    scored("958001", 50, _query("onerror"), default_mode="off"),
                ],
            },
            {
                "id": OWASP_OFF,
                "name": "OWASP Bad Robots",
                "description": "",
                "default_mode": "off",
                "rules": [scored("960000", 100, _path("/bad"))],
            },
        ],
    },
]


def small_catalog():
    return load_catalog(CATALOG_DATA)


def request(url, headers=None):
    """The fields of a request to ``url`` (absolute), with lower-case header names."""
    parts = urlsplit(url)
    return {
        "http.request.full_uri": url,
        "http.host": parts.hostname or "",
        "http.request.uri.path": parts.path or "/",
        "http.request.uri.query": parts.query,
        "http.request.headers": {k.lower(): [v] for k, v in (headers or {}).items()},
    }


AJAX = {"X-Requested-With": "XMLHttpRequest"}


def page_rule(wb, zone_id, pattern, actions, priority=1, status="active"):
    return wb.firewall.page_rules.create(
        zone_id,
        {
            "targets": [{"target": "url", "constraint": {"operator": "matches", "value": pattern}}],
            "actions": actions,
            "priority": priority,
            "status": status,
        },
    )
