"""The EventsExplorer panel, driven headlessly with ``button.click()`` and value setting.

Traffic (generated, seeded) runs through an Enterprise zone in validation mode into
``wb.traffic.log``; each test reads what a person would read: status text and
kind, table cells, the picked event's rules, chart text.
"""

from __future__ import annotations

import html
import json
import re

import pytest

from workbench import Workbench
from workbench.logs import EventLog, add_synthetic_events, rule_comparison, top_rules
from workbench.rulesets import MANAGED_PHASE
from workbench.traffic import generate
from workbench.widgets import EventsExplorer
from workbench.widgets import events_explorer as ee
from workbench.widgets.parts import Panel

SQL_RAYS = (
    "SELECT ray_id, datetime, source, action, rule_id FROM security_events "
    "WHERE source = 'waf' ORDER BY datetime, ray_id, match_index DESC LIMIT 20"
)


def validation_zone(wb: Workbench, name: str) -> str:
    zone = wb.create_zone(name, plan="enterprise")
    body = wb.migration.config(zone.id).result()
    wb.migration.put_entrypoint(
        zone.id, MANAGED_PHASE, body, waf_migration="validation", phase_two="1"
    )
    return zone.id


@pytest.fixture(scope="module")
def bench():
    """(wb, zone id, other zone id): 600 requests in one zone, 50 in another."""
    wb = Workbench(seed=3)
    zid = validation_zone(wb, "example.com")
    other = validation_zone(wb, "other.example")
    wb.traffic.replay(zid, generate(600, seed=11), progress=False)
    wb.traffic.replay(other, generate(50, seed=12), progress=False)
    return wb, zid, other


@pytest.fixture
def panel(bench):
    wb, zid, _ = bench
    return EventsExplorer(wb, zid)


def text_of(widget_html: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", widget_html)).split())


def cells(table_html: str, cls: str = "") -> list[list[str]]:
    """The body rows of the (first, or ``cls``) table in ``table_html``, as text."""
    if cls:
        table_html = table_html.split(cls, 1)[1]
    body = table_html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


# -- shape -----------------------------------------------------------------------------------
def test_is_a_panel_with_a_title_and_a_readable_text_form(panel):
    assert isinstance(panel, Panel) and panel.title == "Events explorer"
    text = (
        "Events explorer panel: drives the security event log in DuckDB: canned queries, SQL, "
        "charts, old vs new, your traffic. Run this cell to open the panel."
    )
    assert repr(panel) == text == panel._repr_mimebundle_()["text/plain"]
    assert "wb-events-explorer" in panel._dom_classes
    assert "wb-events-status" in panel.status._dom_classes


def test_opens_on_the_zones_events_with_their_count(bench, panel):
    wb, zid, _ = bench
    mine = wb.traffic.zone_log(zid)
    summary = text_of(panel.summary.value)
    assert f"{mine.count():,} events of zone {zid}" in summary
    assert panel.status.kind == "empty" and panel.table.value == ""
    everything = EventsExplorer(wb)
    assert f"{wb.traffic.log.count():,} events from" in text_of(everything.summary.value)
    assert EventsExplorer(wb, "example.com").zone_id == zid  # a zone by name


def test_an_empty_log_says_how_to_fill_it():
    empty = EventsExplorer(EventLog())
    assert (empty.status.kind, empty.status.text) == (
        "info",
        "the log holds no events yet: replay traffic, then Reload",
    )
    empty.tabs.selected_index = ee.CHARTS_TAB
    assert "no events to chart" in empty.chart.value


# -- canned queries --------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(ee.CANNED))
def test_each_canned_query_fills_the_table(panel, name):
    label, fn = ee.CANNED[name]
    expected = fn(panel.event_log)
    panel.query.value = name
    panel.run_query_button.click()
    n = len(expected)
    assert panel.status.text == f"{label}: {n} row{'s' * (n != 1)}"
    assert panel.status.kind == ("success" if n else "info")
    assert panel.columns == [str(c) for c in expected.columns]
    assert len(cells(panel.table.value)) == min(n, ee.MAX_ROWS)


def test_top_rules_cells_match_the_query(panel):
    panel.query.value = "top_rules"
    panel.run_query_button.click()
    expected = top_rules(panel.event_log)
    shown = cells(panel.table.value)
    assert [row[2] for row in shown] == expected.rule_id.tolist()
    assert [int(row[4]) for row in shown] == expected.events.tolist()


# -- SQL ---------------------------------------------------------------------------------------
def test_sql_rows_go_to_the_table_and_ray_ids_to_the_picker(panel):
    panel.sql.value = SQL_RAYS
    panel.run_sql_button.click()
    expected = panel.event_log.query(SQL_RAYS)
    assert (panel.status.kind, panel.status.text) == ("success", f"SQL: {len(expected)} rows")
    shown = cells(panel.table.value)
    assert [row[0] for row in shown] == expected.ray_id.tolist()
    assert shown[0][1].startswith("2026-01-01 00:00:")  # times to the millisecond
    rays = list(dict.fromkeys(expected.ray_id))
    assert [value for _label, value in panel.pick.options] == rays
    assert panel.pick.value is None


def test_sql_errors_are_shown_in_the_engines_words(panel):
    panel.sql.value = "SELECT * FROM nowhere"
    panel.run_sql_button.click()
    assert (panel.status.kind, panel.status.text) == ("error", "SQL error: the engine says")
    assert "Table with name nowhere does not exist" in panel.status.detail
    assert "LINE 1: SELECT * FROM nowhere" in panel.status.detail  # with its caret line
    panel.sql.value = "SELEC 1"
    panel.run_sql_button.click()
    assert 'syntax error at or near "SELEC"' in panel.status.detail


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("DELETE FROM security_events", "only reading statements run here"),
        ("DROP VIEW new_waf_events", "not DROP: the event log is shared"),
        ("SELECT 1; SELECT 2", "one statement at a time, got 2"),
        ("   ", "write a SELECT over security_events first"),
    ],
)
def test_writing_sql_is_refused_and_the_log_is_untouched(panel, sql, words):
    before = panel.event_log.count()
    panel.sql.value = sql
    panel.run_sql_button.click()
    assert panel.status.kind == "refused" and words in panel.status.text
    assert panel.event_log.count() == before


def test_long_results_show_the_first_rows_and_say_so(panel):
    panel.sql.value = "SELECT * FROM security_events"
    panel.run_sql_button.click()
    assert panel.status.text == "SQL: more than 200 rows (the first 200 shown)"
    assert len(cells(panel.table.value)) == 200


def test_views_are_queryable_by_name(panel):
    panel.sql.value = "SELECT count(*) AS n FROM old_waf_events"
    panel.run_sql_button.click()
    n = panel.event_log.query("SELECT count(*) FROM security_events WHERE source = 'waf'")
    assert cells(panel.table.value) == [[str(n.iloc[0, 0])]]


# -- one event ---------------------------------------------------------------------------------
def test_picking_an_event_shows_its_request_and_every_rule_that_matched(panel):
    ray = panel.event_log.query(
        "SELECT ray_id FROM security_events GROUP BY ray_id "
        "HAVING count(DISTINCT source) = 2 ORDER BY ray_id LIMIT 1"
    ).ray_id[0]
    panel.sql.value = f"SELECT * FROM security_events WHERE ray_id = '{ray}'"
    panel.run_sql_button.click()
    assert [v for _label, v in panel.pick.options] == [ray]
    panel.pick.value = ray
    events = panel.event_log.query(
        "SELECT * FROM security_events WHERE ray_id = ? ORDER BY match_index DESC", [ray]
    )
    assert panel.detail_status.kind == "success"
    assert panel.detail_status.text.startswith(f"ray {ray}: {len(events)} events, ")
    request = dict(cells(panel.detail.value, "wb-events-request"))
    assert request["ray_id"] == ray
    assert (request["host"], request["path"]) == (events.host[0], events.path[0])
    rules = cells(panel.detail.value, "wb-events-rules")
    assert [(r[1], r[2], r[3]) for r in rules] == list(
        zip(events.source, events.action, events.rule_id, strict=True)
    )
    # Validation mode: the new WAF's events come first, then the old one's.
    sources = [r[1] for r in rules]
    assert sources == sorted(sources, key=lambda s: s != "firewallManaged")


def test_an_owasp_event_shows_what_each_rule_matched_in_its_request(panel):
    ray, source, metadata = panel.event_log.con.execute(
        "SELECT ray_id, source, metadata FROM security_events "
        "WHERE metadata LIKE '%\"field\"%' ORDER BY ray_id LIMIT 1"
    ).fetchone()
    panel.ray.value = ray
    why = cells(panel.detail.value, "wb-events-why")
    meta = json.loads(metadata)
    entries = meta.get("matched") or [c for c in meta["contributing"] if "field" in c]
    assert [(r[0], r[2], r[3]) for r in why] == [(source, e["field"], e["value"]) for e in entries]


def test_the_final_action_is_the_first_event_that_ended_the_request(panel):
    ray = panel.event_log.query(
        "SELECT ray_id FROM security_events WHERE action = 'block' ORDER BY ray_id LIMIT 1"
    ).ray_id[0]
    panel.ray.value = ray
    first = panel.event_log.query(
        "SELECT source, rule_id, action FROM security_events WHERE ray_id = ? "
        "AND action IN ('block', 'challenge', 'managed_challenge', 'js_challenge') "
        "ORDER BY match_index DESC LIMIT 1",
        [ray],
    ).iloc[0]
    assert panel.detail_status.text.endswith(
        f"ended by {first.action} ({first.source} rule {first.rule_id})"
    )


def test_a_ray_id_nobody_has_is_refused(panel):
    panel.ray.value = "ffffffffffffffff"
    assert (panel.detail_status.kind, panel.detail_status.text) == (
        "refused",
        "no event has ray id 'ffffffffffffffff' in this log",
    )
    assert panel.detail.value == ""


# -- charts and old vs new --------------------------------------------------------------------------
def test_charts_are_drawn_when_their_tab_is_shown(panel):
    assert panel.chart.value == ""
    panel.tabs.selected_index = ee.CHARTS_TAB
    svg = panel.chart.value
    assert "<svg" in svg and "actions over time" in svg and "top 10 rules, by action" in svg
    for action in panel.event_log.query("SELECT DISTINCT action FROM security_events").action:
        assert f">{action}<" in svg  # the legend names every action
    # The same log draws the same chart.
    again = EventsExplorer(panel.event_log)
    again.tabs.selected_index = ee.CHARTS_TAB
    assert again.chart.value == svg


def test_old_and_new_side_by_side_pair_each_old_rule_with_its_new_one(panel):
    panel.tabs.selected_index = ee.COMPARE_TAB
    shown = panel.compare.value
    assert "old WAF (waf)" in shown and "new WAF (firewallManaged)" in shown
    assert "<svg" in shown and "events by action, old and new" in shown
    old_side = cells(shown, "wb-events-side-waf")
    counts = panel.event_log.query(
        "SELECT action, count(*) AS n FROM security_events WHERE source = 'waf' GROUP BY action"
    )
    assert {r[0]: int(r[1]) for r in old_side} == dict(zip(counts.action, counts.n, strict=True))
    pairs = cells(shown, "wb-events-pairs")
    assert pairs and len(pairs[0]) == 8  # old_rule_id, new_rule_id, ... old_only, new_only
    assert "(old rule → its new rule)" in shown


def test_with_a_log_only_old_and_new_are_compared_by_rule_id():
    log = EventLog()
    add_synthetic_events(log, 60, seed=2)
    panel = EventsExplorer(log)
    panel.tabs.selected_index = ee.COMPARE_TAB
    pairs = cells(panel.compare.value, "wb-events-pairs")
    assert [r[0] for r in pairs] == rule_comparison(log).rule_id.tolist()


# -- conventions ---------------------------------------------------------------------------------
def test_buttons_are_disabled_while_a_query_runs(panel, monkeypatch):
    seen = []

    def slow(log):
        seen.append((panel.busy, panel.run_sql_button.disabled, panel.reload_button.disabled))
        return top_rules(log)

    monkeypatch.setitem(ee.CANNED, "top_rules", ("Top rules", slow))
    panel.query.value = "top_rules"
    panel.run_query_button.click()
    assert seen == [(True, True, True)]
    assert not panel.busy and not panel.run_sql_button.disabled


def test_an_outcome_goes_stale_when_its_inputs_change(panel):
    panel.run_sql_button.click()
    assert panel.status.kind == "success"
    panel.sql.value += " "
    assert panel.status.kind == "stale"
    panel.run_query_button.click()
    panel.query.value = "top_rules"
    assert panel.status.kind == "stale"


def test_reload_takes_a_fresh_copy_of_the_zone(bench):
    wb = Workbench(seed=9)
    zid = validation_zone(wb, "example.com")
    wb.firewall.create_rules(
        zid, [{"filter": {"expression": 'http.request.uri.path eq "/x"'}, "action": "block"}]
    )
    panel = EventsExplorer(wb, zid)
    assert panel.event_log.count() == 0
    wb.traffic.submit(zid, [{"url": "https://example.com/x"}])
    assert panel.event_log.count() == 0  # a copy, taken at open
    panel.reload_button.click()
    assert panel.event_log.count() == 1 and "1 event of zone" in text_of(panel.summary.value)


def test_reset_puts_the_panel_back_as_it_opened(panel):
    panel.query.value = "top_rules"
    panel.run_query_button.click()
    panel.sql.value = SQL_RAYS
    panel.run_sql_button.click()
    panel.pick.value = panel.pick.options[0][1]
    panel.tabs.selected_index = ee.CHARTS_TAB
    panel.reset()
    assert panel.query.value == "new_allows_old_blocked"
    assert panel.sql.value == ee.DEFAULT_SQL
    assert (panel.table.value, panel.detail.value, panel.chart.value) == ("", "", "")
    assert panel.pick.options == () and panel.tabs.selected_index == ee.RESULTS_TAB
    assert panel.status.kind == panel.detail_status.kind == "empty"
    panel.tabs.selected_index = ee.CHARTS_TAB
    assert "<svg" in panel.chart.value  # drawn again when shown


def test_a_log_and_a_zone_id_show_that_zones_events_only():
    log = EventLog()
    rows = [
        {"ray_id": f"{i:016x}", "datetime": "2026-01-01T00:00:00Z", "zone_id": zone,
         "source": "waf", "action": "block", "rule_id": "100000", "match_index": 0}
        for i, zone in enumerate(["a", "a", "b"])
    ]  # fmt: skip
    log.append(rows)
    panel = EventsExplorer(log, zone="a")
    assert panel.event_log.count() == 2 and log.count() == 3
    assert "2 events of zone a from 2 requests" in text_of(panel.summary.value)


def test_request_text_is_shown_as_text_never_as_markup():
    wb = Workbench(seed=5)
    zid = wb.create_zone("example.com", plan="pro").id
    rule = {"filter": {"expression": 'http.request.uri contains "<"'}, "action": "block"}
    wb.firewall.create_rules(zid, [rule])
    url = "https://example.com/<img src=x onerror=alert(1)>?q=<script>alert(2)</script>"
    [done] = wb.traffic.submit(zid, [{"url": url}])
    panel = EventsExplorer(wb, zid)
    panel.sql.value = (
        f"SELECT ray_id, path, query FROM security_events WHERE ray_id = '{done.ray_id}'"
    )
    panel.run_sql_button.click()
    panel.pick.value = done.ray_id
    for shown in (panel.table.value, panel.detail.value):
        assert "<script>" not in shown and "<img" not in shown
        assert "&lt;script&gt;alert(2)&lt;/script&gt;" in shown


# -- issue 28, item 6: no stale result under a new outcome ----------------------------------------
@pytest.mark.parametrize("bad", ["SELECT * FROM nowhere", "DELETE FROM security_events", "  "])
def test_a_failed_query_leaves_no_earlier_result_under_its_error(panel, bad):
    panel.sql.value = SQL_RAYS
    panel.run_sql_button.click()
    assert cells(panel.table.value) and panel.pick.options
    panel.pick.value = panel.pick.options[0][1]
    assert panel.detail.value
    panel.sql.value = bad
    panel.run_sql_button.click()
    assert panel.status.kind in ("error", "refused")
    assert panel.table.value == "" and panel.rows == [] and panel.columns == []
    assert panel.pick.options == () and panel.detail.value == ""
    assert panel.detail_status.kind == "empty"


# -- issue 28, item 5: the columns that answer the question come first -----------------------------
def test_each_rule_in_both_shows_its_counts_before_the_long_text(panel):
    panel.tabs.selected_index = ee.COMPARE_TAB
    table = panel.compare.value.split("wb-events-pairs", 1)[1]
    heads = re.findall(r"<th>(.*?)</th>", table)
    assert heads == ["old_rule_id", "old_events", "new_events", "both", "old_only", "new_only",
                     "description", "new_rule_id"]  # fmt: skip
    assert ".wb-events-pairs td:nth-child(7){white-space:normal" in panel.compare.value
