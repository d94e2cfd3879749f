"""The rule builder panel, driven headlessly (button.click(), widget values).

Every test here runs with sockets forbidden: the panel's API client calls the
app in process.
"""

import json
import socket

import pytest

from workbench import Workbench
from workbench.api import ApiClient, serve, stop
from workbench.widgets import RuleBuilder


@pytest.fixture
def no_sockets(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a headless panel test opened a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def wb():
    wb = Workbench(seed=0)
    wb.create_zone("example.com", plan="free")
    wb.create_zone("big.example", plan="enterprise")
    return wb


@pytest.fixture
def panel(wb, no_sockets):
    p = RuleBuilder(wb, "example.com")
    p.set_condition(0, "http.request.uri.path", "contains", "/admin")
    return p


def test_fields_are_grouped_with_their_type_and_operators_follow_the_type(panel):
    row = panel.rows[0]
    labels = [label for label, _ in row.field.options]
    assert "http.request.uri › http.request.uri.path (String)" in labels
    assert "ip › ip.src (IP address)" in labels
    assert "cf › cf.threat_score (Integer)" in labels
    assert not any("headers (" in label for label in labels)  # maps/arrays are not offered
    assert "contains" in row.operator.options and "matches" in row.operator.options
    row.field.value = "cf.threat_score"
    assert "contains" not in row.operator.options and row.operator.value == "eq"
    row.field.value = "ssl"
    assert row.operator.options == ("is true", "is false") and row.value.disabled


def test_preview_updates_and_shows_parse_errors_with_caret(panel):
    assert panel.expression == 'http.request.uri.path contains "/admin"'
    assert "http.request.uri.path contains &quot;/admin&quot;" in panel.preview.value
    panel.add_button.click()
    panel.set_condition(1, "ip.src", "eq", "1.2.3", join="or")
    assert panel.error.startswith("Filter parsing error (1:54):")
    assert "^^^^^" in panel.error and "^^^^^" in panel.preview.value
    assert [r[3] for r in panel.match_table()] == ["-", "-", "-"]
    panel.rows[1].value.value = "203.0.113.9"
    assert panel.error is None
    assert panel.expression == 'http.request.uri.path contains "/admin" or ip.src eq 203.0.113.9'
    assert [r[3] for r in panel.match_table()] == ["match", "no match", "match"]
    assert "<b>match</b>" in panel.matches.value
    panel.rows[1].remove.click()
    assert len(panel.rows) == 1 and panel.expression == 'http.request.uri.path contains "/admin"'
    panel.rows[0].remove.click()  # the last row stays
    assert len(panel.rows) == 1


def test_values_are_written_as_literals(panel):
    panel.set_condition(0, "http.user_agent", "eq", 'say "hi" \\o/')
    assert panel.expression == 'http.user_agent eq "say \\"hi\\" \\\\o/"'
    assert panel.error is None
    panel.set_condition(0, "ip.src.country", "in", "GB, FR")
    assert panel.expression == 'ip.src.country in {"GB" "FR"}'
    assert [r[3] for r in panel.match_table()] == ["match", "match", "no match"]
    panel.set_condition(0, "cf.threat_score", "gt", "ten")
    assert "whole number" in panel.error


def test_two_calls_then_shared_filter_view(panel):
    first = panel.create_two_calls()
    assert [(e.method, e.path.split("/")[-1], e.status) for e in first] == [
        ("POST", "filters", 200),
        ("POST", "rules", 200),
    ]
    filter_id = first[0].response["result"][0]["id"]
    assert first[1].body == [{"filter": {"id": filter_id}, "action": "block"}]
    assert "curl -X POST &quot;$CF_BASE/zones/" in panel.http_log.value
    assert "&quot;success&quot;: true" in panel.http_log.value
    assert panel.summary().startswith("created rule ")
    # Same expression again with another action: the filter exists (10102), the rule shares it.
    panel.action.value = "challenge"
    panel.priority.value = "3"
    panel.create_button.click()
    codes = [e.status for e in panel.exchanges]
    assert codes == [400, 200]
    assert panel.exchanges[0].response["errors"][0]["code"] == 10102
    [(fid, expr, rules)] = panel.filters_table()
    assert fid == filter_id and rules.count(":") == 2 and "challenge" in rules
    assert "2 of 5 active rules" in panel.filters_view.value


def test_one_call_partial_at_the_quota_then_finish(wb, panel):
    zone = wb.zone("example.com").id
    wb.firewall.create_rules(
        zone,
        [
            {"filter": {"expression": f'http.host eq "h{i}.example"'}, "action": "block"}
            for i in range(5)
        ],
    )
    panel.one_call_button.click()
    [ex] = panel.exchanges
    assert ex.status == 400 and ex.body == [
        {"filter": {"expression": panel.expression}, "action": "block"}
    ]
    assert panel.summary().startswith("partial: filter ")
    assert "10200" in panel.outcome.value
    assert any(rules == "(no rule)" for _, _, rules in panel.filters_table())
    # Fix the quota, then finish with the recommended sequence: the existing filter is reused.
    first = wb.firewall.list_rules(zone).items[0]
    wb.firewall.update_rule(zone, first.id, {"paused": True})
    panel.create_button.click()
    assert [e.status for e in panel.exchanges] == [400, 200]
    assert all(rules != "(no rule)" for _, _, rules in panel.filters_table())


def test_invalid_rule_refused_nothing_created(wb, panel):
    panel.action.value = "log"  # Enterprise only
    panel.one_call_button.click()
    assert "partial" in panel.summary()  # feature unavailable: like the quota case
    panel.zone_picker.value = wb.zone("big.example").id
    panel.priority.value = "high"
    panel.one_call_button.click()
    assert panel.summary().startswith("refused, nothing created (10014)")
    assert panel.filters_table() == []
    panel.priority.value = ""
    panel.one_call_button.click()
    assert panel.summary().startswith("created rule") and "(log)" in panel.summary()


def test_bypass_needs_products(panel):
    assert panel.products.disabled
    panel.action.value = "bypass"
    assert not panel.products.disabled
    panel.products.value = ("waf", "uaBlock")
    panel.paused.value = True
    panel.description.value = "skip WAF for admins"
    assert panel.rule_fields() == {
        "action": "bypass",
        "products": ["waf", "uaBlock"],
        "paused": True,
        "description": "skip WAF for admins",
    }
    panel.action.value = "allow"
    assert panel.products.value == () and panel.products.disabled
    assert json.loads(panel.to_json()) == []


def test_two_calls_rule_refused_names_the_filter_that_now_exists(wb, panel):
    panel.priority.value = "-3"
    panel.create_button.click()
    assert [e.status for e in panel.exchanges] == [200, 400]
    made = panel.exchanges[0].response["result"][0]["id"]
    outcome = panel.last_outcome
    assert outcome.kind == "partial" and outcome.filter_id == made and outcome.filter_created
    assert panel.summary().startswith(
        f"partial: filter {made} was created but the rule was refused"
    )
    assert "nothing created" not in panel.outcome.value
    assert [fid for fid, _, rules in panel.filters_table() if rules == "(no rule)"] == [made]


def test_panel_talks_to_a_served_workbench_when_given_its_url(wb):
    url = serve(wb)
    try:
        panel = RuleBuilder(wb, "example.com", client=ApiClient(wb, base_url=url))
        panel.set_condition(0, "http.request.uri.path", "eq", "/login")
        panel.one_call_button.click()
        assert panel.summary().startswith("created rule")
        assert wb.firewall.list_rules(wb.zone("example.com").id).items
    finally:
        stop(wb)
