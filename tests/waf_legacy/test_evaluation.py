"""The old WAF as a SystemPlan: events, actions, OWASP scoring, page rules, the setting."""

from __future__ import annotations

import duckdb
import pytest
from waf_helpers import AJAX, CF, OWASP, OWASP_OFF, SPECIALS, XSS, page_rule, request

from workbench.core.security import TERMINAL_ACTIONS, SecurityEvent
from workbench.rules_language import compile_expression
from workbench.rules_language.table import requests_table


def _verdict(waf, zone, url, headers=None):
    return waf.evaluate(zone, request(url, headers))


def _events(waf, zone, url, headers=None):
    verdict = _verdict(waf, zone, url, headers)
    return [(e.rule_id, e.action) for e in verdict.events], verdict.action


def test_a_traditional_event_has_the_documented_shape(waf, zone):
    verdict = _verdict(waf, zone, "https://pro.example/admin")
    assert verdict.events == [
        SecurityEvent(
            "waf",
            "block",
            "100015",
            None,
            "deny 100015",
            metadata={"package_id": CF, "group_id": SPECIALS},
        )
    ]
    assert verdict.action == "block" and verdict.bypassed == frozenset()


def test_modes_map_to_actions_and_the_strongest_ends_the_request(waf, zone):
    assert _events(waf, zone, "https://pro.example/login") == (
        [("100016", "challenge")],
        "challenge",
    )
    assert _events(waf, zone, "https://pro.example/probe") == ([("100017", "log")], None)
    assert _events(waf, zone, "https://pro.example/pad") == ([], None)  # default mode disable
    both = _events(waf, zone, "https://pro.example/login/probe/admin")
    assert both == ([("100015", "block"), ("100016", "challenge"), ("100017", "log")], "block")
    waf.edit_rule(zone, CF, "100015", {"mode": "simulate"})
    assert _events(waf, zone, "https://pro.example/login/admin") == (
        [("100015", "log"), ("100016", "challenge")],
        "challenge",
    )
    waf.edit_rule(zone, CF, "100015", {"mode": "disable"})
    assert _events(waf, zone, "https://pro.example/admin") == ([], None)


def test_a_group_that_is_off_runs_none_of_its_rules(waf, zone):
    assert _events(waf, zone, "https://pro.example/wp-login") == ([], None)
    waf.edit_group(zone, "1e334934fd7ae32ad705667f8c1057aa", "a2" * 16, {"mode": "on"})
    assert _events(waf, zone, "https://pro.example/wp-login") == ([("WP0025B", "block")], "block")
    waf.edit_group(zone, CF, SPECIALS, {"mode": "off"})
    assert _events(waf, zone, "https://pro.example/admin") == ([], None)


def test_an_allow_rule_lets_the_request_through_the_package(waf, zone):
    assert _events(waf, zone, "https://pro.example/admin/health") == ([("100100", "allow")], None)
    waf.edit_rule(zone, CF, "100100", {"mode": "off"})
    assert _events(waf, zone, "https://pro.example/admin/health") == (
        [("100015", "block")],
        "block",
    )


@pytest.mark.parametrize(
    ("sensitivity", "query", "fires"),
    [
        ("high", "select", False),  # 20 < 25
        ("high", "select union", True),  # 30 >= 25
        ("medium", "select union", False),  # 30 < 40
        ("medium", "select <script", True),  # 50 >= 40
        ("low", "select <script", False),  # 50 < 60
        ("low", "select union <script", True),  # 60 >= 60
        ("off", "select union <script", False),
    ],
)
def test_owasp_thresholds_by_sensitivity(waf, zone, sensitivity, query, fires):
    waf.edit_package(zone, OWASP, {"sensitivity": sensitivity})
    events, _ = _events(waf, zone, f"https://pro.example/?q={query}")
    assert events == ([("981176", "challenge")] if fires else [])


@pytest.mark.parametrize(
    ("sensitivity", "below", "at"),
    [
        ("high", "select union <script", "select <script onerror"),  # 60 < 65 <= 100
        ("medium", "select <script", "select union <script onerror"),  # 50 < 80 <= 110
        ("low", "select union <script onerror", "onerror"),  # 110 < 120 <= 150 (with /bad)
    ],
)
def test_ajax_requests_have_higher_thresholds(waf, zone, sensitivity, below, at):
    waf.edit_package(zone, OWASP, {"sensitivity": sensitivity})
    waf.edit_rule(zone, OWASP, "958001", {"mode": "on"})  # onerror: +50
    waf.edit_group(zone, OWASP, OWASP_OFF, {"mode": "on"})  # /bad: +100
    assert _events(waf, zone, f"https://pro.example/?q={below}")[0] == [("981176", "challenge")]
    assert _events(waf, zone, f"https://pro.example/?q={below}", AJAX) == ([], None)
    path = "/bad" if sensitivity == "low" else "/"
    fired = _verdict(waf, zone, f"https://pro.example{path}?q={at}", AJAX)
    assert [e.rule_id for e in fired.events] == ["981176"]
    assert (
        fired.events[0].metadata["threshold"] == {"high": 65, "medium": 80, "low": 120}[sensitivity]
    )


def test_the_owasp_event_shape_and_action_modes(waf, zone):
    verdict = _verdict(waf, zone, "https://pro.example/?q=select+union")
    [event] = verdict.events
    assert (event.source, event.action, event.rule_id, event.ruleset_id) == (
        "waf",
        "challenge",
        "981176",
        None,
    )
    assert event.score == 30 and event.metadata == {
        "contributing": ["950001", "950002"],
        "threshold": 25,
    }
    assert verdict.action == "challenge"
    waf.edit_package(zone, OWASP, {"action_mode": "simulate"})
    logged = _verdict(waf, zone, "https://pro.example/?q=select+union")
    assert [(e.rule_id, e.action) for e in logged.events] == [
        ("981176", "log")
    ] and logged.action is None
    waf.edit_package(zone, OWASP, {"action_mode": "block"})
    assert _verdict(waf, zone, "https://pro.example/?q=select+union").action == "block"


def test_owasp_rules_and_groups_that_are_off_do_not_count(waf, zone):
    waf.edit_rule(zone, OWASP, "950002", {"mode": "off"})
    assert _events(waf, zone, "https://pro.example/?q=select+union") == ([], None)
    waf.edit_group(zone, OWASP, XSS, {"mode": "off"})
    assert _events(waf, zone, "https://pro.example/?q=<script>") == ([], None)
    assert _events(waf, zone, "https://pro.example/bad") == ([], None)  # its group is off


def test_both_packages_report_and_block_beats_challenge(waf, zone):
    events, action = _events(waf, zone, "https://pro.example/admin?q=select+union")
    assert events == [("100015", "block"), ("981176", "challenge")] and action == "block"


def test_the_setting_off_stops_the_old_waf_and_free_zones_never_run_it(waf, zones):
    zone = zones["business"]
    waf.set_setting(zone, {"value": "off"})
    assert waf.enabled(zone) is False and waf.get_setting(zone).modified_on is not None
    assert _events(waf, zone, "https://business.example/admin") == ([], None)
    assert waf.plan(zone).checks == []
    free = zones["free"]
    page_rule(waf.wb, free, "free.example/*", [{"id": "waf", "value": "on"}])
    assert _events(waf, free, "https://free.example/admin") == ([], None)
    assert waf.plan(free).checks == []


def test_page_rules_turn_the_waf_off_or_on_for_their_urls(waf, wb, zone):
    page_rule(wb, zone, "pro.example/admin/*", [{"id": "waf", "value": "off"}])
    page_rule(wb, zone, "*pro.example/login*", [{"id": "disable_security"}])
    assert _events(waf, zone, "https://pro.example/admin/x") == ([], None)
    assert _events(waf, zone, "http://pro.example/login") == ([], None)
    assert _events(waf, zone, "https://pro.example/admin") == ([("100015", "block")], "block")
    waf.set_setting(zone, {"value": "off"})
    page_rule(wb, zone, "https://pro.example/probe*", [{"id": "waf", "value": "on"}])
    assert _events(waf, zone, "https://pro.example/probe") == ([("100017", "log")], None)
    assert _events(waf, zone, "http://pro.example/probe") == ([], None)  # the pattern has a scheme
    assert _events(waf, zone, "https://pro.example/admin") == ([], None)


def test_the_highest_priority_matching_page_rule_decides(waf, wb, zone):
    on = page_rule(wb, zone, "pro.example/admin*", [{"id": "waf", "value": "on"}], priority=1)
    page_rule(wb, zone, "pro.example/*", [{"id": "waf", "value": "off"}], priority=2)
    assert _events(waf, zone, "https://pro.example/admin") == ([], None)
    wb.firewall.page_rules.update(zone, on.id, {"priority": 3}, full=False)
    assert _events(waf, zone, "https://pro.example/admin") == ([("100015", "block")], "block")
    # A higher page rule without a WAF action still is the one that applies.
    page_rule(wb, zone, "pro.example/admin*", [{"id": "browser_check", "value": "off"}], priority=9)
    waf.set_setting(zone, {"value": "off"})
    assert _events(waf, zone, "https://pro.example/admin") == ([], None)
    # Disabled page rules do nothing.
    page_rule(
        wb,
        zone,
        "pro.example/admin*",
        [{"id": "waf", "value": "off"}],
        priority=50,
        status="disabled",
    )
    waf.set_setting(zone, {"value": "on"})
    assert _events(waf, zone, "https://pro.example/admin") == ([("100015", "block")], "block")


def test_the_plan_checks_and_decide_asks_only_about_them(waf, wb, zone):
    page_rule(wb, zone, "pro.example/admin/*", [{"id": "waf", "value": "off"}])
    made = waf.create_override(zone, {"urls": ["pro.example/x*"], "rules": {"100015": "disable"}})
    paused = waf.create_override(
        zone, {"urls": ["pro.example/y*"], "rules": {"100015": "disable"}, "paused": True}
    )
    plan = waf.plan(zone)
    keys = [c.key for c in plan.checks]
    assert keys[0].startswith("pagerule:") and f"override:{made.id}" in keys
    assert f"override:{paused.id}" not in keys and "ajax" in keys
    assert f"{CF}:100015" in keys and f"{OWASP}:950001" in keys
    assert (
        f"{CF}:100048" not in keys and f"{CF}:WP0025B" not in keys and f"{OWASP}:958001" not in keys
    )
    for check in plan.checks:
        compile_expression(check.expression).to_sql()
    asked = []
    plan.decide(lambda key: asked.append(key) or True)
    assert set(asked) <= set(keys)


def test_the_plan_is_cached_until_something_changes(waf, wb, zone):
    first = waf.plan(zone)
    assert waf.plan(zone) is first
    waf.edit_rule(zone, CF, "100015", {"mode": "block"})
    second = waf.plan(zone)
    assert second is not first and waf.plan(zone) is second
    rule = page_rule(wb, zone, "pro.example/*", [{"id": "waf", "value": "off"}])
    third = waf.plan(zone)
    assert third is not second
    wb.firewall.page_rules.update(zone, rule.id, {"status": "disabled"}, full=False)
    assert waf.plan(zone) is not third
    waf.edit_rule(zone, CF, "100015", {"mode": "block"})  # no change: same plan
    assert waf.plan(zone) is waf.plan(zone)


def test_the_whole_table_path_agrees_with_the_per_request_path(waf, wb, zone):
    page_rule(wb, zone, "pro.example/admin/off*", [{"id": "waf", "value": "off"}])
    waf.create_override(
        zone,
        {
            "urls": ["pro.example/login/*"],
            "rewrite_action": {"challenge": "block"},
            "groups": {SPECIALS: "on"},
        },
    )
    urls = [
        ("https://pro.example/admin", None),
        ("https://pro.example/admin/off/x", None),
        ("https://pro.example/login", None),
        ("https://pro.example/login/x", None),
        ("https://pro.example/?q=select+union", None),
        ("https://pro.example/?q=select+union", {"X-Requested-With": "XMLHttpRequest"}),
        ("https://pro.example/probe?q=<script>", None),
    ]
    rows = [request(u, h) for u, h in urls]
    plan = waf.plan(zone)
    con = duckdb.connect()
    requests_table(con, rows, name="r")
    columns = ", ".join(
        f"({compile_expression(c.expression).to_sql()}) AS c{i}" for i, c in enumerate(plan.checks)
    )
    table = con.sql(f"SELECT {columns} FROM r").fetchall()
    index = {c.key: i for i, c in enumerate(plan.checks)}
    for row, values in zip(rows, table, strict=True):
        by_sql = plan.decide(lambda key, v=values: bool(v[index[key]]))
        assert by_sql == waf.evaluate(zone, row)
    assert any(v.action in TERMINAL_ACTIONS for v in (waf.evaluate(zone, r) for r in rows))
