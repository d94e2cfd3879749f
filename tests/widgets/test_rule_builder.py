"""The rule builder panel, driven headlessly (button.click(), widget values).

Every test here runs with sockets forbidden: the panel's API client calls the
app in process. The assertions read what a person reads: the status line's
text and kind, the hint beside the value box, the HTTP log, the tables.
"""

import json
import socket

import ipywidgets as W
import pytest

from workbench import Workbench
from workbench.api import ApiClient, serve, stop
from workbench.firewall.builder import (
    COMMON_FIELDS,
    field_choices,
    search_fields,
    value_syntax,
    whole_number,
)
from workbench.widgets import RuleBuilder
from workbench.widgets.parts import Panel


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


def http_text(panel):
    """The HTTP log as the page shows it (one HTML widget under the log box)."""
    return "".join(child.value for child in panel.http_log.children)


# -- shape: a Panel with a title, a readable text form ------------------------------------
def test_is_a_panel_with_a_title_and_a_readable_text_form(panel):
    assert isinstance(panel, Panel)
    assert panel.title == "Rule builder"
    assert "filters and firewall rules" in panel.drives and "v4 API" in panel.drives
    text = panel._repr_mimebundle_()["text/plain"]
    assert text == repr(panel) == panel.describe()
    assert text.startswith("Rule builder panel: drives filters and firewall rules")
    assert "(zone example.com)" in text and text.endswith("Run this cell to open the panel.")
    assert panel.status in panel._walk()  # the status line is shown, under the buttons


# -- field picker -----------------------------------------------------------------------------
def test_field_picker_is_a_combobox_with_common_fields_first_then_families(panel):
    row = panel.rows[0]
    assert isinstance(row.field, W.Combobox)
    options = list(row.field.options)
    assert (
        options[:5]
        == list(COMMON_FIELDS)
        == [
            "http.request.uri.path",
            "ip.src",
            "http.host",
            "ip.src.country",
            "http.user_agent",
        ]
    )
    assert options[0] != "cf.random_seed"
    assert len(options) == len(set(options))  # each field once
    assert not any(name == "http.request.headers" for name in options)  # maps are not offered
    # The rest is grouped by family: http, ip, ssl, cf, raw; never interleaved.
    families = [name.split(".")[0] for name in options[5:]]
    runs = [f for i, f in enumerate(families) if i == 0 or families[i - 1] != f]
    assert runs == ["http", "ip", "ssl", "cf", "raw"]
    assert [f.name for f in field_choices()] == options


def test_typing_in_the_field_box_filters_and_an_unknown_field_is_named(panel):
    row = panel.rows[0]
    row.field.value = "country"
    # Not a whole name yet: the hint lists the fields that contain it, common ones first.
    assert row.syntax.startswith("field 'country' is not a whole name: 2 fields contain it")
    assert "(ip.src.country, ip.geoip.country); pick one from the list" in row.syntax
    assert [f.name for f in search_fields("country")][:2] == ["ip.src.country", "ip.geoip.country"]
    assert [f.name for f in search_fields("USER_AG")] == ["http.user_agent"]
    assert panel.error.startswith("condition 1: field 'country' is not a whole name")
    row.field.value = "ip.src.cuntry"
    assert row.syntax.startswith("field 'ip.src.cuntry' is unknown: no field name contains it")
    assert "color:#b71c1c" in row.hint.value
    assert "condition 1: field 'ip.src.cuntry' is unknown" in panel.preview.value.replace(
        "&#x27;", "'"
    )
    # Nothing half-typed is sent: the status names the condition and the field.
    panel.create_button.click()
    assert panel.status.kind == "error" and panel.exchanges == []
    assert panel.summary().startswith("not sent: condition 1: field 'ip.src.cuntry' is unknown")
    assert panel.client.history == [] and panel.filters_table() == []
    row.field.value = "ip.src.country"
    assert row.syntax.startswith("contains takes text")
    assert panel.error is None


def test_operators_follow_the_field_type(panel):
    row = panel.rows[0]
    assert "contains" in row.operator.options and "matches" in row.operator.options
    row.field.value = "cf.threat_score"
    assert "contains" not in row.operator.options and row.operator.value == "eq"
    row.field.value = "ssl"
    assert row.operator.options == ("is true", "is false") and row.value.disabled
    row.field.value = "http.host"
    assert row.operator.value == "eq" and not row.value.disabled


# -- value syntax beside the value box ------------------------------------------------------
def test_value_syntax_hint_changes_with_the_operator(panel):
    row = panel.rows[0]
    assert row.syntax == "contains takes text found anywhere in the value, case-sensitive"
    row.operator.value = "in"
    assert row.syntax.startswith("in takes values separated by spaces or commas")
    row.operator.value = "matches"
    assert row.syntax.startswith("matches takes a regular expression")
    assert "Business or Enterprise" in row.syntax
    assert "String" in row.hint.value and "matches takes a regular expression" in row.hint.value
    row.field.value = "ip.src"
    assert row.operator.value == "eq"
    assert row.syntax.startswith("eq takes one IP address, e.g. 192.0.2.1")
    row.operator.value = "in"
    assert "CIDR ranges (192.0.2.0/24)" in row.syntax and "192.0.2.1..192.0.2.9" in row.syntax
    row.field.value = "cf.threat_score"
    assert "ranges lo..hi" in row.syntax
    row.field.value = "ssl"
    assert row.syntax == "is true takes no value"
    assert value_syntax("ssl", "is false") == "is false takes no value"


# -- the preview and the samples -------------------------------------------------------------
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
    assert "<td>match</td>" in panel.matches.value and "wb-scroll" in panel.matches.value
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
    assert panel.error == (
        "condition 1 (cf.threat_score gt): an Integer field takes a whole number, got 'ten'"
    )


# -- integers typed as integers ------------------------------------------------------------
def test_priority_is_sent_as_an_integer(panel):
    panel.priority.value = " 7 "
    assert panel.rule_fields() == {"action": "block", "priority": 7}
    panel.priority.value = "-3"
    assert panel.rule_fields()["priority"] == -3  # an integer: the API decides
    assert whole_number("priority", "+4") == 4


@pytest.mark.parametrize("typed", ["high", "1.5", "3e2", "0x10", "--3"])
def test_a_priority_that_is_not_a_whole_number_is_stopped_in_the_panel(panel, typed):
    panel.priority.value = typed
    # Said beside the box while typing...
    assert "priority takes a whole number" in panel.priority_hint.value
    # ...and on the status line, naming the field, before anything is sent.
    panel.one_call_button.click()
    assert panel.status.kind == "error"
    assert panel.summary() == (
        f"not sent: priority takes a whole number (like 1 or 100), got {typed!r}. "
        "Nothing was created."
    )
    assert panel.client.history == [] and panel.filters_table() == []
    panel.priority.value = "2"
    assert panel.priority_hint.value == ""


# -- outcomes that name the objects that exist ----------------------------------------------
def test_two_calls_created_names_rule_and_filter(panel):
    first = panel.create_two_calls()
    assert [(e.method, e.path.split("/")[-1], e.status) for e in first] == [
        ("POST", "filters", 200),
        ("POST", "rules", 200),
    ]
    filter_id = first[0].response["result"][0]["id"]
    rule_id = first[1].response["result"][0]["id"]
    assert first[1].body == [{"filter": {"id": filter_id}, "action": "block"}]
    assert panel.status.kind == "success"
    assert panel.summary() == (
        f"created rule {rule_id} (block) on filter {filter_id} (created filter)"
    )
    assert "wb-status-success" in panel.status.value


def test_two_calls_rule_refused_names_the_filter_that_now_exists(wb, panel):
    panel.priority.value = "-3"
    panel.create_button.click()
    assert [e.status for e in panel.exchanges] == [200, 400]
    assert panel.exchanges[1].body[0]["priority"] == -3  # sent as an integer
    made = panel.exchanges[0].response["result"][0]["id"]
    outcome = panel.last_outcome
    assert outcome.kind == "partial" and outcome.filter_id == made and outcome.filter_created
    assert panel.status.kind == "partial"
    assert panel.summary().startswith(
        f"partial: filter {made} was created but the rule was refused (10014: "
    )
    assert panel.summary().endswith(
        "fix the rule, then 'Create filter, then rule' creates it on that filter"
    )
    assert panel.summary().count(made) == 1  # the filter is named once (issue 28, item 8)
    assert "nothing created" not in panel.status.value
    assert [fid for fid, _, rules in panel.filters_table() if rules == "(no rule)"] == [made]
    # Finishing as the status says: the existing filter is reused, the rule made on it.
    panel.priority.value = "3"
    panel.create_button.click()
    assert [e.status for e in panel.exchanges] == [400, 200]
    assert panel.status.kind == "success"
    assert panel.summary().endswith(f"on filter {made} (reused existing filter)")


def test_refused_says_nothing_created(wb, panel):
    panel.zone_picker.value = wb.zone("big.example").id
    panel.set_condition(0, "http.request.uri.path", "eq", "/x")
    panel.add_condition("ip.src", "eq", "1.2.3")  # builds, but the engine refuses it
    panel.one_call_button.click()
    assert panel.status.kind == "refused"
    # The engine's exact text, caret included, in a monospace block under the line; the line
    # itself does not repeat its first line (issue 28, item 8).
    assert panel.summary() == "refused, nothing created (10014); the API's message:"
    assert panel.status.detail.startswith("Filter parsing error (1:45):\n")
    assert panel.status.value.count("Filter parsing error") == 1
    assert "^^^^^" in panel.status.detail and "<pre" in panel.status.value
    assert panel.filters_table() == []


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
    assert panel.status.kind == "partial"
    assert panel.summary().startswith("partial: filter ") and "10200" in panel.summary()
    assert any(rules == "(no rule)" for _, _, rules in panel.filters_table())
    # Fix the quota, then finish with the recommended sequence: the existing filter is reused.
    first = wb.firewall.list_rules(zone).items[0]
    wb.firewall.update_rule(zone, first.id, {"paused": True})
    panel.create_button.click()
    assert [e.status for e in panel.exchanges] == [400, 200]
    assert panel.status.kind == "success"
    assert all(rules != "(no rule)" for _, _, rules in panel.filters_table())


def test_plan_feature_partial_then_created_on_enterprise(wb, panel):
    panel.action.value = "log"  # Enterprise only
    panel.one_call_button.click()
    assert panel.status.kind == "partial"  # feature unavailable: like the quota case
    panel.zone_picker.value = wb.zone("big.example").id
    panel.one_call_button.click()
    assert panel.status.kind == "success"
    assert panel.summary().startswith("created rule") and "(log)" in panel.summary()


# -- the HTTP log ------------------------------------------------------------------------------
def test_http_log_newest_first_collapsible_with_curl_note(panel):
    panel.create_button.click()
    panel.action.value = "challenge"
    panel.one_call_button.click()  # the expression is taken: refused
    assert panel.status.kind == "refused"
    log = panel.http_log
    assert [(e.path.split("/")[-1], e.status) for e in log.exchanges] == [
        ("rules", 400),
        ("rules", 200),
        ("filters", 200),
    ]
    text = http_text(panel)
    assert "python -m workbench serve" in text and "$CF_EMAIL" in text
    assert text.count("<details class='wb-exchange'") == 3
    assert text.count("<details class='wb-exchange' open>") == 1  # only the newest is open
    assert "(one call: refused)" in text
    assert "curl -X POST &quot;$CF_BASE/zones/" in text
    assert "&quot;success&quot;: true," in text and "&quot;code&quot;: 10202" in text
    assert "wb-rb-http" in log._dom_classes


def test_filters_view_shows_rules_sharing_a_filter(panel):
    first = panel.create_two_calls()
    filter_id = first[0].response["result"][0]["id"]
    panel.action.value = "challenge"
    panel.priority.value = "3"
    panel.create_button.click()
    assert panel.exchanges[0].response["errors"][0]["code"] == 10102
    [(fid, _expr, rules)] = panel.filters_table()
    assert fid == filter_id and rules.count(":") == 2 and "challenge" in rules
    assert "2 of 5 active rules" in panel.filters_view.value
    assert "wb-scroll" in panel.filters_view.value


# -- status goes stale; busy state; reset -----------------------------------------------------
@pytest.mark.parametrize(
    "change",
    [
        lambda p: setattr(p.rows[0].value, "value", "/login"),
        lambda p: setattr(p.rows[0].operator, "value", "eq"),
        lambda p: setattr(p.rows[0].field, "value", "http.host"),
        lambda p: p.add_button.click(),
        lambda p: setattr(p.action, "value", "challenge"),
        lambda p: setattr(p.priority, "value", "5"),
        lambda p: setattr(p.paused, "value", True),
        lambda p: setattr(p.description, "value", "why"),
    ],
    ids=["value", "operator", "field", "add", "action", "priority", "paused", "description"],
)
def test_status_goes_stale_when_an_input_changes(panel, change):
    panel.create_button.click()
    assert panel.status.kind == "success"
    text = panel.status.text
    change(panel)
    assert panel.status.kind == "stale" and panel.status.text == text
    assert "inputs changed since" in panel.status.value


def test_a_second_row_is_watched_too(panel):
    panel.add_condition("ip.src", "eq", "192.0.2.10")
    panel.create_button.click()
    assert panel.status.kind == "success"
    panel.rows[1].join.value = "or"
    assert panel.status.kind == "stale"


def test_busy_state_disables_the_buttons_during_a_call(panel):
    seen = []
    for name in ("create_filter_then_rule", "create_in_one_call"):
        real = getattr(panel.client, name)

        def spy(*args, _real=real, **kwargs):
            seen.append(
                (
                    panel.busy,
                    panel.create_button.disabled,
                    panel.one_call_button.disabled,
                    panel.add_button.disabled,
                    panel.rows[0].remove.disabled,
                )
            )
            return _real(*args, **kwargs)

        setattr(panel.client, name, spy)
    panel.create_button.click()
    panel.action.value = "allow"
    panel.one_call_button.click()
    assert seen == [(True, True, True, True, True)] * 2
    assert not panel.busy
    assert not any(
        b.disabled
        for b in (
            panel.create_button,
            panel.one_call_button,
            panel.add_button,
            panel.rows[0].remove,
        )
    )


def test_buttons_are_wide_enough_for_their_labels(panel):
    for button in (panel.create_button, panel.one_call_button, panel.add_button):
        assert button.layout.width == "auto" and button.layout.min_width == "max-content"
    assert panel.create_button.description == "Create filter, then rule"


def test_reset_returns_to_a_fresh_panel(wb, panel):
    panel.zone_picker.value = wb.zone("big.example").id
    panel.add_condition("ip.src", "eq", "192.0.2.10")
    panel.action.value = "bypass"
    panel.products.value = ("waf",)
    panel.priority.value = "4"
    panel.paused.value = True
    panel.description.value = "demo"
    panel.create_button.click()
    assert panel.status.kind == "success" and panel.http_log.exchanges
    panel.reset()
    assert [(r.field.value, r.operator.value, r.value.value) for r in panel.rows] == [
        ("http.request.uri.path", "eq", "")
    ]
    assert len(panel.rows_box.children) == 1
    assert panel.zone_id == wb.zone("example.com").id
    assert (panel.action.value, panel.products.value, panel.priority.value) == ("block", (), "")
    assert not panel.paused.value and panel.description.value == ""
    assert panel.status.kind == "empty" and panel.status.value == ""
    assert panel.summary() == "nothing sent yet"
    assert panel.http_log.exchanges == [] and panel.http_log.children == ()
    assert panel.exchanges == [] and panel.last_outcome is None
    # The world is not reset: the rule made before still exists, in its zone.
    panel.zone_picker.value = wb.zone("big.example").id
    assert len(panel.filters_table()) == 1


# -- other -----------------------------------------------------------------------------------
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


def test_panel_talks_to_a_served_workbench_when_given_its_url(wb):
    url = serve(wb)
    try:
        panel = RuleBuilder(wb, "example.com", client=ApiClient(wb, base_url=url))
        panel.set_condition(0, "http.request.uri.path", "eq", "/login")
        panel.one_call_button.click()
        assert panel.status.kind == "success"
        assert panel.summary().startswith("created rule")
        assert wb.firewall.list_rules(wb.zone("example.com").id).items
    finally:
        stop(wb)
