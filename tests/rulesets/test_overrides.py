"""Execute-rule overrides: rule > category > ruleset, the last category wins, events carry
the managed ruleset's id."""

from __future__ import annotations

import pytest
from ruleset_helpers import CF, CMS, OWASP, SQLI, STRUTS, WP_ADMIN, execute, request

from workbench.rulesets import MANAGED_PHASE

UNION_WP = request("/wp-admin/x", "id=1 union select")  # SQLI and WP_ADMIN match


def run(rs, zone, rules, req):
    rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": rules})
    return rs.evaluate(zone.id, req)


def actions(verdict):
    return [(e.rule_id, e.action) for e in verdict.events]


def test_managed_events_carry_the_managed_ruleset_id_and_the_first_block_ends(rs, zone):
    entry = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF), execute(OWASP)]})
    verdict = rs.evaluate(zone.id, {**UNION_WP, "http.user_agent": "curl"})
    [event] = verdict.events  # SQLI blocks first: WP_ADMIN and OWASP never run
    assert (event.source, event.action, event.rule_id) == ("firewallManaged", "block", SQLI)
    assert event.ruleset_id == CF != entry.id
    assert event.description == "SQLi - union select" and verdict.action == "block"


def test_log_rules_log_and_let_later_rules_run(rs, zone):
    verdict = run(rs, zone, [execute(CF)], request("/wp-admin/struts"))
    assert actions(verdict) == [(WP_ADMIN, "log"), (STRUTS, "challenge")]
    assert verdict.action == "challenge"


def test_rule_beats_category_beats_ruleset(rs, zone):
    overrides = {
        "action": "managed_challenge",
        "categories": [{"category": "wordpress", "action": "js_challenge"}],
        "rules": [{"id": SQLI, "action": "log"}],
    }
    verdict = run(
        rs,
        zone,
        [execute(CF, overrides)],
        {**UNION_WP, "http.request.uri.path": "/wp-admin/struts"},
    )
    # SQLI: rule override; WP_ADMIN: its category; STRUTS: only the ruleset level.
    assert actions(verdict) == [(SQLI, "log"), (WP_ADMIN, "js_challenge")]
    assert verdict.action == "js_challenge"
    verdict = rs.evaluate(zone.id, request("/struts"))
    assert actions(verdict) == [(STRUTS, "managed_challenge")]


@pytest.mark.parametrize(
    ("categories", "expected"),
    [
        (
            [
                {"category": "sqli", "action": "challenge"},
                {"category": "wordpress", "action": "log"},
            ],
            "log",
        ),
        (
            [
                {"category": "wordpress", "action": "log"},
                {"category": "sqli", "action": "challenge"},
            ],
            "challenge",
        ),
        # The later override sets no action, so the earlier one's action stands.
        (
            [{"category": "sqli", "action": "log"}, {"category": "wordpress", "enabled": True}],
            "log",
        ),
    ],
)
def test_the_last_overridden_category_wins(rs, zone, categories, expected):
    verdict = run(rs, zone, [execute(CF, {"categories": categories})], request("/", "union"))
    assert actions(verdict) == [(SQLI, expected)]


def test_enabled_follows_the_same_precedence(rs, zone):
    overrides = {
        "enabled": False,
        "categories": [{"category": "struts", "enabled": True}],
        "rules": [{"id": CMS, "enabled": True}],
    }
    rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF, overrides)]})
    assert actions(rs.evaluate(zone.id, request("/cms", "union"))) == [(CMS, "block")]
    assert actions(rs.evaluate(zone.id, request("/struts"))) == [(STRUTS, "challenge")]
    assert rs.evaluate(zone.id, request("/wp-admin", "union")).events == []
    keys = {c.key for c in rs.plan(zone.id).checks}
    assert f"{CF}:{SQLI}" not in keys and f"{CF}:{CMS}" in keys  # disabled rules are not checks


def test_a_rule_disabled_by_default_stays_off_without_an_override(rs, zone):
    assert run(rs, zone, [execute(CF)], request("/cms")).events == []


def test_sensitivity_level_is_accepted_and_changes_nothing(rs, zone):
    overrides = {
        "sensitivity_level": "low",
        "categories": [{"category": "sqli", "sensitivity_level": "eoff"}],
        "rules": [{"id": SQLI, "sensitivity_level": "medium"}],
    }
    verdict = run(rs, zone, [execute(CF, overrides)], request("/", "union"))
    assert actions(verdict) == [(SQLI, "block")]


def test_a_disabled_or_unmatched_execute_rule_runs_nothing(rs, zone):
    admin = 'http.request.uri.path contains "/admin"'
    assert run(rs, zone, [execute(CF, enabled=False)], request("/", "union")).events == []
    assert run(rs, zone, [execute(CF, expression=admin)], request("/", "union")).events == []
    assert actions(rs.evaluate(zone.id, request("/admin", "union"))) == [(SQLI, "block")]
