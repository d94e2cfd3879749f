"""The StorageInspector panel, driven headlessly with ``button.click()`` and value setting.

Each test reads what a person would read: status text and kind, table cells, labels.
"""

from __future__ import annotations

import html
import re
from types import SimpleNamespace

import pytest

from workbench.storage import DurableObject, Runtime
from workbench.widgets import StorageInspector
from workbench.widgets.parts import Panel


class Notes(DurableObject):
    async def fetch(self, request):
        await self.ctx.storage.put(request, len(request))

    async def alarm(self, info=None):
        runs = self.env.runs
        runs.append(info.retryCount)
        await self.ctx.storage.put("alarm-ran", len(runs))


class Shop(DurableObject):
    async def fetch(self, job):
        return await job(self.ctx.storage)


@pytest.fixture
def panel():
    rt = Runtime()
    ns = rt.namespace(Notes, env=SimpleNamespace(runs=[]))
    stub = ns.get(ns.id_from_name("notes"))
    for word in ("apple", "apricot", "banana"):
        rt.run(stub.fetch(word))
    kv = rt.namespace(Notes, storage="kv", name="Cache", env=SimpleNamespace(runs=[]))
    rt.run(kv.get(kv.id_from_name("c")).fetch("cached"))
    p = StorageInspector(rt, namespace="Notes")
    return p


def text_of(widget_html: str) -> str:
    """The visible text of an HTML widget's value (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", " ", widget_html))


def cells(table_html: str) -> list[list[str]]:
    """The body rows of a ``parts.scroll_table``, as text."""
    body = table_html.split("<tbody>", 1)[1]
    return [
        [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


# -- the panel's shape ------------------------------------------------------------------------
def test_is_a_panel_with_title_and_a_readable_text_form(panel):
    assert isinstance(panel, Panel)
    assert panel.title == "Storage inspector"
    text = (
        "Storage inspector panel: drives Durable Object storage of a runtime: KV, SQL, alarms, "
        "bookmarks, billing. Run this cell to open the panel."
    )
    assert panel.describe() == text == repr(panel)
    assert panel._repr_mimebundle_()["text/plain"] == text
    assert "wb-storage-inspector" in panel._dom_classes


def test_opens_on_the_namespace_asked_for_and_says_which_object(panel):
    assert panel.namespace.options == ("Cache", "Notes")
    assert panel.object.label == "notes"
    assert (panel.status.kind, panel.message) == ("info", "Notes / notes · SQLite backend")
    assert panel.kv_status.text == "3 pairs"
    first = StorageInspector(panel.rt)
    assert first.namespace.value == "Cache"
    assert first.message == "Cache / c · KV backend (no SQL, no bookmarks)"


# -- KV as JSON --------------------------------------------------------------------------------
def test_kv_values_are_shown_as_json_with_tags_for_what_json_lacks():
    from datetime import UTC, datetime

    rt = Runtime()
    ns = rt.namespace(Shop)
    stub = ns.get(ns.id_from_name("s"))
    rt.run(
        stub.fetch(
            lambda s: s.put(
                {
                    "cart": {"items": ["pen"], "total": 3.5, "paid": False, "note": None},
                    "raw": b"hi",
                    "since": datetime(2024, 5, 1, tzinfo=UTC),
                    "tags": {"b", "a"},
                }
            )
        )
    )
    panel = StorageInspector(rt)
    assert panel.kv_rows == [
        ["cart", '{"items": ["pen"], "total": 3.5, "paid": false, "note": null}'],
        ["raw", '{"$bytes": "aGk="}'],
        ["since", '{"$datetime": "2024-05-01T00:00:00+00:00"}'],
        ["tags", '{"$set": ["a", "b"]}'],
    ]
    assert cells(panel.kv_table.value)[0] == panel.kv_rows[0]  # what the table shows
    assert "{'items'" not in html.unescape(panel.kv_table.value)  # no Python repr
    panel.kv_key.value = "raw"
    panel.kv_get_button.click()
    assert panel.kv_value.value == '{\n  "$bytes": "aGk="\n}'
    assert (panel.kv_edit_status.kind, panel.kv_edit_status.text) == (
        "success",
        'loaded "raw": edit the JSON, then Put',
    )


def test_put_takes_json_and_shows_it_back_the_same_way(panel):
    panel.kv_key.value, panel.kv_value.value = "cherry", '{"n": [1, 2], "raw": {"$bytes": "AP8="}}'
    panel.kv_put_button.click()
    assert panel.kv_edit_status.kind == "success"
    assert panel.kv_edit_status.text == 'put "cherry" = {"n": [1, 2], "raw": {"$bytes": "AP8="}}'
    assert ["cherry", '{"n": [1, 2], "raw": {"$bytes": "AP8="}}'] in panel.kv_rows
    assert panel.kv_status.text == "4 pairs"
    stored = panel.host.storage().get("cherry").result()
    assert stored == {"n": [1, 2], "raw": b"\x00\xff"}
    panel.kv_value.value = ""
    panel.kv_get_button.click()
    panel.kv_put_button.click()  # Get, then Put unchanged: the same value
    assert panel.host.storage().get("cherry").result() == stored
    panel.kv_delete_button.click()
    assert (panel.kv_edit_status.kind, panel.kv_edit_status.text) == ("success", 'deleted "cherry"')
    assert panel.kv_status.text == "3 pairs"
    panel.kv_delete_button.click()
    assert (panel.kv_edit_status.kind, panel.kv_edit_status.text) == (
        "info",
        '"cherry" did not exist: nothing deleted',
    )
    panel.kv_get_button.click()
    assert panel.kv_edit_status.kind == "refused"
    assert panel.kv_edit_status.text.startswith('key "cherry" does not exist: ')


@pytest.mark.parametrize(
    ("typed", "text", "detail"),
    [
        ('{"n": 1 "m": 2}', "value (JSON), line 1, column 9: expected ',' or '}' (the object opened at line 1, column 1 is not closed)", '{"n": 1 "m": 2}\n        ^'),
        ("{'n': 1}", "value (JSON), line 1, column 2: expected a property name in double quotes", "{'n': 1}\n ^\nJSON strings use double quotes: \"name\", not 'name'"),
        ("hello", "value (JSON), line 1, column 1: expected a value: a string in double quotes, a number, true, false, null, an object {...} or an array [...]", 'hello\n^\nto store text, put it in double quotes: "hello"'),
        ("", 'value (JSON) is empty: type a JSON value, for example "text", 42, {"a": 1}, [1, 2] or null', ""),
    ],
)  # fmt: skip
def test_bad_json_gets_a_message_naming_the_field_and_nothing_is_written(
    panel, typed, text, detail
):
    seqs = len(panel.entries)
    panel.kv_key.value, panel.kv_value.value = "cherry", typed
    panel.kv_put_button.click()
    line = panel.kv_edit_status
    assert (line.kind, line.text, line.detail) == ("error", text, detail)
    shown = text_of(line.value)
    assert "JSONDecodeError" not in shown and "Expecting" not in shown and "Traceback" not in shown
    assert panel.kv_status.text == "3 pairs" and len(panel.entries) == seqs


def test_storage_refusals_are_shown_in_plain_words(panel):
    panel.kv_key.value = "x" * 3000
    panel.kv_value.value = "1"
    panel.kv_put_button.click()
    assert panel.kv_edit_status.kind == "refused"
    assert panel.kv_edit_status.text.startswith("key is 3000 bytes")
    assert "StorageLimitError" not in panel.kv_edit_status.value


def test_kv_list_options_and_a_stale_list(panel):
    panel.kv_prefix.value = "ap"  # Enter in the box lists; setting the value does the same
    assert (panel.kv_status.kind, panel.kv_status.text) == ("info", "2 pairs (prefix ap)")
    assert [k for k, _ in panel.kv_rows] == ["apple", "apricot"]
    panel.kv_reverse.value = True
    assert panel.kv_status.kind == "stale"  # the list no longer matches the options
    assert "(inputs changed since: run again)" in panel.kv_status.value
    panel.kv_prefix.value = ""
    panel.kv_limit.value = 1
    panel.kv_list_button.click()
    assert panel.kv_status.text == "1 pair (reverse True, limit 1)"
    assert panel.kv_rows == [["banana", "6"]]


def test_edit_status_goes_stale_when_key_or_value_change(panel):
    panel.kv_key.value, panel.kv_value.value = "k", "[1"
    panel.kv_put_button.click()
    assert panel.kv_edit_status.kind == "error"
    panel.kv_value.value = "[1]"
    assert panel.kv_edit_status.kind == "stale"
    panel.kv_put_button.click()
    assert (panel.kv_edit_status.kind, panel.kv_edit_status.text) == ("success", 'put "k" = [1]')


# -- SQL ------------------------------------------------------------------------------------------
def test_sql_console_shows_rows_and_counters(panel):
    panel.sql_text.value = "CREATE TABLE t(id INTEGER PRIMARY KEY, v)"
    panel.sql_run_button.click()
    assert panel.sql_status.text == "0 rows · columnNames [] · rowsRead 1 · rowsWritten 2"
    panel.sql_text.value = "INSERT INTO t(v) VALUES ('a'), (NULL), (x'00ff')"
    panel.sql_run_button.click()
    assert panel.sql_status.text.endswith("rowsRead 0 · rowsWritten 3")
    panel.sql_text.value = "SELECT id, v FROM t WHERE id BETWEEN 1 AND 2"
    panel.sql_run_button.click()
    assert (panel.sql_status.kind, panel.sql_status.text) == (
        "success",
        "2 rows · columnNames ['id', 'v'] · rowsRead 3 · rowsWritten 0",
    )
    assert "<th>id</th><th>v</th>" in panel.sql_table.value
    panel.sql_text.value = "SELECT id, v FROM t"
    panel.sql_run_button.click()
    assert cells(panel.sql_table.value) == [["1", "a"], ["2", "NULL"], ["3", "X'00FF'"]]


def test_a_sql_error_is_cleared_by_the_next_success_and_goes_stale_on_edit(panel):
    panel.sql_text.value = "SELEC 1"
    panel.sql_run_button.click()
    line = panel.sql_status
    assert (line.kind, line.text) == ("error", "SQL error (SQLITE_ERROR): the engine says")
    assert line.detail == 'near "SELEC": syntax error at offset 0: SQLITE_ERROR'
    assert "<pre" in line.value  # the engine's text, monospace
    panel.sql_text.value = "SELECT 1 AS one"
    assert line.kind == "stale"
    panel.sql_run_button.click()
    assert (line.kind, line.text) == (
        "success",
        "1 row · columnNames ['one'] · rowsRead 0 · rowsWritten 0",
    )
    assert "SELEC" not in line.value
    panel.sql_text.value = "BEGIN"
    panel.sql_run_button.click()
    assert line.kind == "error" and line.detail.startswith("To execute a transaction")


# -- alarm ------------------------------------------------------------------------------------------
def test_alarm_set_advance_log_and_delete(panel):
    now = panel.rt.now()
    panel.alarm_offset.value = 1500
    panel.alarm_set_button.click()
    assert (panel.alarm_status.kind, panel.alarm_status.text) == (
        "success",
        "alarm set for 2026-01-01T00:00:01.500Z",
    )
    assert "alarm 2026-01-01T00:00:01.500Z" in panel.alarm_state.value
    panel.advance_ms.value = 2000
    assert panel.alarm_status.kind == "stale"
    panel.advance_button.click()
    assert (
        panel.alarm_status.text == "clock at 2026-01-01T00:00:02.000Z; 1 alarm run of this object"
    )
    assert "now 2026-01-01T00:00:02.000Z · alarm none" in panel.alarm_state.value
    assert panel.rt.now() == now + 2000
    assert cells(panel.alarm_log.value) == [["2026-01-01T00:00:01.500Z", "0", "ok"]]
    panel.alarm_set_button.click()
    panel.alarm_delete_button.click()
    assert (panel.alarm_status.kind, panel.alarm_status.text) == ("success", "alarm deleted")
    panel.alarm_delete_button.click()
    assert (panel.alarm_status.kind, panel.alarm_status.text) == ("info", "there was no alarm")


# -- bookmarks -------------------------------------------------------------------------------------
def shop_panel():
    """A shop whose history has six batches at one virtual time, then more five minutes later."""
    rt = Runtime()
    ns = rt.namespace(Shop)
    stub = ns.get(ns.id_from_name("shop"))

    async def setup(s):
        s.sql.exec("CREATE TABLE orders(id INTEGER PRIMARY KEY, total REAL)")

    async def order(s):
        s.sql.exec("INSERT INTO orders(total) VALUES (3)")

    rt.run(stub.fetch(setup))
    rt.run(stub.fetch(lambda s: s.put({"cart": ["pen"], "total": 3})))
    rt.run(stub.fetch(order))
    rt.run(stub.fetch(lambda s: s.put("owner", "ada")))
    rt.run(rt.advance(301_200))

    async def mistake(s):
        s.sql.exec("DELETE FROM orders")
        await s.put("owner", "mallory")

    rt.run(stub.fetch(mistake))
    panel = StorageInspector(rt)
    panel.tabs.selected_index = 3  # the Bookmarks tab, as a person opens it
    return panel


def test_charts_are_drawn_when_their_tab_is_shown(panel):
    assert panel.timeline_html.value == ""  # the KV tab is shown: no chart drawn yet
    panel.tabs.selected_index = 3
    assert "<svg" in panel.timeline_html.value
    panel.sql_text.value = "CREATE TABLE t(x)"
    panel.sql_run_button.click()  # from Python, while the Bookmarks tab is shown
    assert "create table t" in panel.timeline_html.value
    panel.tabs.selected_index = 4
    assert "<svg" in panel.billing_chart_html.value
    panel.tabs.selected_index = 1
    panel.sql_text.value = "SELECT 1"
    panel.sql_run_button.click()
    assert panel.billing_chart_html.value == ""  # changed while hidden: redrawn when shown
    panel.tabs.selected_index = 4
    assert ">SELECT</text>" in panel.billing_chart_html.value


def test_timeline_labels_say_what_each_batch_changed():
    panel = shop_panel()
    labels = [label for label, _ in panel.bookmark_a.options]
    assert labels == [
        "seq 0 · 00:00:00.000 · empty start",
        "seq 1 · 00:00:00.000 · create table orders",
        "seq 2 · 00:00:00.000 · put cart, total",
        "seq 3 · 00:00:00.000 · orders +1 row",
        "seq 4 · 00:00:00.000 · put owner",
        "seq 5 · 00:05:01.200 · put owner · orders -1 row",
    ]
    assert [label for label, _ in panel.bookmark_b.options] == labels
    svg = panel.timeline_html.value
    assert svg.startswith("<div class='wb-chart'") and "<svg" in svg
    for label in labels:  # the chart carries the same labels
        assert html.escape(label, quote=False) in svg
    # the picker starts at the oldest ("from") and the newest ("to"), both marked on the chart
    assert panel.bookmark_a.value == panel.bookmark_a.options[0][1]
    assert panel.bookmark_b.value == panel.bookmark_b.options[-1][1]
    assert ">from</text>" in svg and ">to</text>" in svg


def dots(svg: str) -> dict[str, tuple[float, float]]:
    """Each timeline dot's row label -> its (x, y) position in the SVG."""
    found = {}
    for label, x, y in re.findall(
        r'aria-label="[^"]*row: ([^;"]*)[^"]*"[^>]*aria-roledescription="circle" '
        r'transform="translate\(([-\d.]+),([-\d.]+)\)"',
        svg,
    ):
        found[html.unescape(label)] = (float(x), float(y))
    return found


def test_points_that_share_a_time_stay_distinct():
    panel = shop_panel()
    points = dots(panel.timeline_html.value)
    assert len(points) == 6
    same_time = [p for label, p in points.items() if "· 00:00:00.000 ·" in label]
    assert len(same_time) == 5
    assert len({x for x, _ in same_time}) == 1  # one virtual time...
    assert len({y for _, y in same_time}) == 5  # ...five rows, in order of sequence
    ys = [points[label][1] for label, _ in panel.bookmark_a.options]
    assert ys == sorted(ys)
    later = points["seq 5 · 00:05:01.200 · put owner · orders -1 row"]
    assert later[0] > same_time[0][0]


def test_picking_from_redraws_the_marks_and_makes_the_diff_stale():
    panel = shop_panel()
    panel.diff_button.click()
    assert panel.diff_status.kind == "success"
    before = panel.timeline_html.value
    panel.bookmark_a.value = panel.bookmark_a.options[4][1]  # the moment before the mistake
    assert panel.diff_status.kind == "stale"
    assert panel.timeline_html.value != before
    marked = re.findall(
        r'<text aria-label="[^"]*row: ([^;"]*); mark: (\w+)"', panel.timeline_html.value
    )
    assert [(html.unescape(row), mark) for row, mark in marked] == [
        ("seq 4 · 00:00:00.000 · put owner", "from"),
        ("seq 5 · 00:05:01.200 · put owner · orders -1 row", "to"),
    ]


def test_the_diff_shows_values_before_and_after_and_rows():
    panel = shop_panel()
    panel.bookmark_a.value = panel.bookmark_a.options[4][1]
    panel.diff_button.click()
    assert (panel.diff_status.kind, panel.diff_status.text) == (
        "success",
        "from seq 4 · 00:00:00.000 to seq 5 · 00:05:01.200: 1 key and 1 table changed",
    )
    assert cells(panel.diff_html.value) == [
        ["KV", "owner", "changed", '"ada"', '"mallory"'],
        ["table orders", "-1 row", "changed", "", ""],
        ["table orders", "rowid 1", "removed", '{"id": 1, "total": 3.0}', ""],
    ]
    assert panel.diff_lines == [
        'KV "owner" changed: "ada" → "mallory"',
        "table orders: -1 row",
        '  - rowid 1: {"id": 1, "total": 3.0}',
    ]
    panel.bookmark_b.value = panel.bookmark_a.value
    panel.diff_button.click()
    assert (panel.diff_status.kind, panel.diff_status.text) == (
        "info",
        "no change from seq 4 · 00:00:00.000 to seq 4 · 00:00:00.000",
    )


def test_restore_to_from_restart_and_undo():
    panel = shop_panel()
    panel.tabs.selected_index = 3
    panel.bookmark_a.value = panel.bookmark_a.options[4][1]
    panel.restore_button.click()
    line = panel.restore_status
    assert line.kind == "info"
    assert line.text == (
        "restore to seq 4 · 00:00:00.000 is pending: it takes effect when the object "
        "restarts (press Restart object)"
    )
    undo = panel.undo_bookmark
    assert undo in line.detail
    panel.restart_button.click()
    assert (line.kind, line.text) == (
        "success",
        "restored to seq 4 · 00:00:00.000; Undo restore goes back to before it",
    )
    assert ["owner", '"ada"'] in panel.kv_rows
    assert panel.entries[-1]["summary"] == "restore to seq 4 · put owner · orders +1 row"
    panel.undo_button.click()
    assert (line.kind, line.text) == (
        "success",
        "restore undone: the object is back as it was before the restore",
    )
    assert ["owner", '"mallory"'] in panel.kv_rows
    panel.restart_button.click()
    assert (line.kind, line.text) == ("info", "restarted; no restore was pending")


def test_undo_without_a_restore_is_refused(panel):
    panel.undo_button.click()
    assert (panel.restore_status.kind, panel.restore_status.text) == (
        "refused",
        "no restore to undo yet: Restore to 'from' and Restart first",
    )


# -- billing -------------------------------------------------------------------------------------
def test_billing_table_chart_and_cost(panel):
    for statement in (
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v)",
        "INSERT INTO t(v) VALUES (1), (2), (3)",
        "SELECT * FROM t",
        "SELECT * FROM t WHERE id = 2",
    ):
        panel.sql_text.value = statement
        panel.sql_run_button.click()
    panel.tabs.selected_index = 4
    assert cells(panel.billing_table.value) == [
        ["SELECT", "2", "4", "0"],
        ["INSERT", "1", "0", "3"],
        ["CREATE TABLE", "1", "1", "2"],
        ["total", "4", "5", "5"],
    ]
    assert "<th>statement kind</th><th>statements</th><th>rowsRead</th><th>rowsWritten</th>" in (
        panel.billing_table.value
    )
    chart = panel.billing_chart_html.value
    assert chart.startswith("<div class='wb-chart'") and "<svg" in chart
    for word in ("rowsRead", "rowsWritten", "SELECT", "INSERT", "CREATE TABLE"):
        assert f">{word}</text>" in chart
    bars = re.findall(r'aria-label="statement kind: ([^;]*); rows: (\d+); counter: (\w+)"', chart)
    assert ("SELECT", "4", "rowsRead") in bars and ("INSERT", "3", "rowsWritten") in bars
    cost = text_of(panel.billing_cost.value)
    assert "estimated $0.00/month" in cost
    assert "25 billion rows read and 50 million rows written included per month" in cost


def test_given_a_workbench_it_inspects_wb_storage_and_bills_into_wb_logs():
    from workbench import Workbench

    wb = Workbench(seed=0)
    ns = wb.storage.namespace(Notes, env=SimpleNamespace(runs=[]))
    wb.storage.run(ns.get(ns.id_from_name("notes")).fetch("apple"))
    panel = StorageInspector(wb, namespace="Notes")
    assert panel.rt is wb.storage and panel.kv_status.text == "1 pair"
    panel.sql_text.value = "CREATE TABLE t(id INTEGER PRIMARY KEY, v)"
    panel.sql_run_button.click()
    panel.sql_text.value = "INSERT INTO t(v) VALUES (1), (2)"
    panel.sql_run_button.click()
    panel.tabs.selected_index = 4
    shown = cells(panel.billing_table.value)
    assert shown == [
        ["INSERT", "1", "0", "2"],
        ["CREATE TABLE", "1", "1", "2"],
        ["total", "2", "1", "4"],
    ]
    # ... which is what the Workbench's event log holds.
    logged = wb.logs.query(
        "SELECT count(*) AS n, sum(rows_written)::BIGINT AS w FROM sql_billing WHERE namespace = 'Notes'"
    )
    assert logged.values.tolist() == [[2, 4]]
    assert "the sql_billing table of wb.logs" in text_of(panel.billing_cost.value)


def test_billing_of_an_object_without_sql(panel):
    assert text_of(panel.billing_table.value).strip() == "no SQL statements yet for this object"
    assert panel.billing_chart_html.value == ""


# -- behaviour ---------------------------------------------------------------------------------
def test_buttons_are_disabled_while_an_action_runs(panel):
    seen = {}
    original = panel._storage

    def spy():
        seen["busy"] = panel.busy
        seen["disabled"] = (panel.kv_put_button.disabled, panel.sql_run_button.disabled)
        return original()

    panel._storage = spy
    panel.kv_key.value, panel.kv_value.value = "k", "1"
    panel.kv_put_button.click()
    assert seen == {"busy": True, "disabled": (True, True)}
    assert not panel.busy and not panel.kv_put_button.disabled


def test_switching_object_clears_outcomes_about_the_last_one(panel):
    panel.sql_text.value = "SELEC"
    panel.sql_run_button.click()
    panel.kv_key.value, panel.kv_value.value = "k", "1"
    panel.kv_put_button.click()
    assert panel.sql_status.kind == "error" and panel.kv_edit_status.kind == "success"
    panel.namespace.value = "Cache"
    assert panel.sql_status.kind == "empty" and panel.kv_edit_status.kind == "empty"
    assert panel.message == "Cache / c · KV backend (no SQL, no bookmarks)"
    assert panel.kv_rows == [["cached", "6"]]


def test_kv_backend_object_refuses_sql_and_bookmarks_in_words(panel):
    panel.namespace.value = "Cache"
    assert "no history: the KV backend keeps none" in panel.timeline_note.value
    assert panel.bookmark_a.options == ()
    panel.sql_text.value = "SELECT 1"
    panel.sql_run_button.click()
    assert panel.sql_status.kind == "refused"
    assert panel.sql_status.text.startswith("SQL is not enabled for this Durable Object class.")
    panel.diff_button.click()
    assert panel.diff_status.kind == "refused"
    assert panel.diff_status.text.startswith("this object keeps no history")


def test_open_by_name_and_reload(panel):
    rt = panel.rt
    panel.object_name.value = "fresh"  # Enter in the box opens it
    assert panel.object.label == "fresh" and panel.kv_status.text == "0 pairs"

    class Other(DurableObject):
        pass

    rt.namespace(Other)
    panel.refresh_button.click()
    assert "Other" in panel.namespace.options
    assert panel.namespace.value == "Notes"


def test_reset_puts_the_panel_back_as_it_opened(panel):
    panel.tabs.selected_index = 1
    panel.sql_text.value = "SELEC"
    panel.sql_run_button.click()
    panel.kv_prefix.value = "ap"
    panel.kv_key.value, panel.kv_value.value = "k", "[1"
    panel.kv_put_button.click()
    panel.bookmark_a.value = panel.bookmark_a.options[2][1]
    panel.reset()
    assert panel.tabs.selected_index == 0
    assert (panel.sql_text.value, panel.kv_prefix.value, panel.kv_key.value) == ("", "", "")
    for line in (panel.sql_status, panel.kv_edit_status, panel.diff_status, panel.restore_status):
        assert line.kind == "empty"
    assert panel.kv_status.text == "3 pairs"
    assert panel.bookmark_a.value == panel.bookmark_a.options[0][1]
    assert panel.message == "Notes / notes · SQLite backend"


def test_module_docstring_example_runs():
    import doctest

    import workbench.widgets.storage_charts as charts
    import workbench.widgets.storage_inspector as module

    assert doctest.testmod(module).failed == 0
    assert doctest.testmod(charts).failed == 0


# -- issue 28, item 6: no stale result under a new outcome ----------------------------------------
def test_a_failed_query_leaves_no_earlier_result_under_its_error(panel):
    panel.sql_text.value = "SELECT 1 AS one"
    panel.sql_run_button.click()
    assert cells(panel.sql_table.value) == [["1"]]
    panel.sql_text.value = "SELEC 2"
    panel.sql_run_button.click()
    assert panel.sql_status.kind == "error"
    assert panel.sql_table.value == "" and panel.sql_rows == []


def test_getting_a_missing_key_empties_the_editor_so_put_cannot_copy_the_last_value(panel):
    panel.kv_key.value = "apple"
    panel.kv_get_button.click()
    assert panel.kv_value.value == "5"
    panel.kv_key.value = "cherry"
    panel.kv_get_button.click()
    assert (panel.kv_edit_status.kind, panel.kv_edit_status.text) == (
        "refused",
        'key "cherry" does not exist: the value box is empty; type a value, then Put to create it',
    )
    assert panel.kv_value.value == ""
    panel.kv_put_button.click()  # nothing to write: the old value is not put under "cherry"
    assert panel.kv_edit_status.kind == "error"
    assert "cherry" not in [k for k, _ in panel.kv_rows]
