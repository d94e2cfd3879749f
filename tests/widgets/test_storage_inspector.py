"""The StorageInspector panel, driven headlessly with ``button.click()`` and value setting."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from workbench.storage import DurableObject, Runtime
from workbench.widgets import StorageInspector


class Notes(DurableObject):
    async def fetch(self, request):
        await self.ctx.storage.put(request, len(request))

    async def alarm(self, info=None):
        runs = self.env.runs
        runs.append(info.retryCount)
        await self.ctx.storage.put("alarm-ran", len(runs))


@pytest.fixture
def panel():
    rt = Runtime()
    ns = rt.namespace(Notes, env=SimpleNamespace(runs=[]))
    stub = ns.get(ns.id_from_name("notes"))
    for word in ("apple", "apricot", "banana"):
        rt.run(stub.fetch(word))
    kv = rt.namespace(Notes, storage="kv", name="Cache", env=SimpleNamespace(runs=[]))
    rt.run(kv.get(kv.id_from_name("c")).fetch("cached"))
    return StorageInspector(rt)


def test_opens_on_the_first_namespace_and_object(panel):
    assert panel.namespace.options == ("Cache", "Notes")
    panel.namespace.value = "Notes"
    assert panel.object.label == "notes"
    assert panel.message == "Notes / notes (sqlite)"
    assert panel.kv_status.value == "3 pairs"


def test_kv_browser_list_options_put_and_delete(panel):
    panel.namespace.value = "Notes"
    panel.kv_prefix.value = "ap"
    panel.kv_list_button.click()
    assert panel.kv_status.value == "2 pairs" and "apricot" in panel.kv_table.value
    panel.kv_prefix.value = ""
    panel.kv_reverse.value = True
    panel.kv_limit.value = 1
    panel.kv_list_button.click()
    assert panel.kv_status.value == "1 pair" and "banana" in panel.kv_table.value
    panel.kv_reverse.value, panel.kv_limit.value = False, 0
    panel.kv_key.value, panel.kv_value.value = "cherry", '{"n": [1, 2]}'
    panel.kv_put_button.click()
    assert panel.kv_status.value == "4 pairs" and "{&#x27;n&#x27;: [1, 2]}" in panel.kv_table.value
    panel.kv_delete_button.click()
    assert panel.kv_status.value == "3 pairs" and panel.message == "deleted 'cherry'"
    panel.kv_delete_button.click()
    assert panel.message == "'cherry' did not exist"


def test_errors_show_in_the_status_line(panel):
    panel.namespace.value = "Notes"
    panel.kv_key.value = "x" * 3000
    panel.kv_value.value = "1"
    panel.kv_put_button.click()
    assert (
        panel.message
        == "StorageLimitError: key is 3000 bytes (UTF-8); the limit is 2048 bytes (UTF-8)"
    )
    assert "#b00020" in panel.status.value


def test_sql_console_shows_rows_and_counters(panel):
    panel.namespace.value = "Notes"
    panel.sql_text.value = "CREATE TABLE t(id INTEGER PRIMARY KEY, v)"
    panel.sql_run_button.click()
    assert panel.sql_status.value == "0 rows · columnNames [] · rowsRead 1 · rowsWritten 2"
    panel.sql_text.value = "INSERT INTO t(v) VALUES ('a'), ('b'), ('c')"
    panel.sql_run_button.click()
    assert panel.sql_status.value.endswith("rowsRead 0 · rowsWritten 3")
    panel.sql_text.value = "SELECT id, v FROM t WHERE id BETWEEN 1 AND 2"
    panel.sql_run_button.click()
    assert panel.sql_status.value == "2 rows · columnNames ['id', 'v'] · rowsRead 3 · rowsWritten 0"
    assert "<th>id</th><th>v</th>" in panel.sql_table.value
    assert "3 statements · rowsRead 4 · rowsWritten 5" in panel.billing_html.value
    panel.sql_text.value = "BEGIN"
    panel.sql_run_button.click()
    assert panel.message.startswith("SqlError: To execute a transaction")


def test_alarm_set_advance_log_and_delete(panel):
    panel.namespace.value = "Notes"
    now = panel.rt.now()
    panel.alarm_offset.value = 1500
    panel.alarm_set_button.click()
    assert f"alarm 2026-01-01T00:00:01Z ({now + 1500})" in panel.alarm_status.value
    panel.advance_ms.value = 2000
    panel.advance_button.click()
    assert "alarm none" in panel.alarm_status.value
    assert f"now 2026-01-01T00:00:02Z ({now + 2000})" in panel.alarm_status.value
    assert "<td>0</td><td>&#x27;ok&#x27;</td>" in panel.alarm_log.value
    panel.alarm_set_button.click()
    panel.alarm_delete_button.click()
    assert "alarm none" in panel.alarm_status.value


def test_bookmarks_timeline_diff_restore_restart_and_undo(panel):
    panel.namespace.value = "Notes"
    first = panel.bookmark_a.value
    assert first == panel.bookmark_a.options[0][1]
    panel.kv_key.value, panel.kv_value.value = "later", "1"
    panel.kv_put_button.click()
    panel.sql_text.value = "CREATE TABLE t(x)"
    panel.sql_run_button.click()
    panel.sql_text.value = "INSERT INTO t VALUES (1), (2)"
    panel.sql_run_button.click()
    assert panel.bookmark_b.value == panel.bookmark_b.options[-1][1]
    panel.diff_button.click()
    assert panel.diff_html.value == (
        "KV: 4 added [&#x27;apple&#x27;, &#x27;apricot&#x27;, &#x27;banana&#x27;, &#x27;later&#x27;], "
        "0 removed [], 0 changed []<br>table t: created, +2 rows, -0 rows"
    )
    panel.bookmark_b.value = panel.bookmark_a.options[3][1]  # after the three fetches
    panel.restore_button.click()
    assert panel.restore_status.value.startswith("restore pending to ")
    undo = panel.undo_bookmark
    assert undo in panel.restore_status.value
    panel.restart_button.click()
    assert (
        panel.restore_status.value == f"restored to {panel.bookmark_b.value} · undo bookmark {undo}"
    )
    assert panel.kv_status.value == "3 pairs"
    panel.bookmark_b.value = undo
    panel.restore_button.click()
    panel.restart_button.click()
    assert panel.kv_status.value == "4 pairs"


def test_kv_backend_object(panel):
    panel.namespace.value = "Cache"
    assert panel.message == "Cache / c (kv)"
    assert panel.timeline_html.value == "no history (the KV backend keeps none)"
    panel.sql_text.value = "SELECT 1"
    panel.sql_run_button.click()
    assert panel.message.startswith("SqlNotEnabled: SQL is not enabled")


def test_open_by_name_and_reload(panel):
    rt = panel.rt
    panel.namespace.value = "Notes"
    panel.object_name.value = "fresh"
    panel.open_button.click()
    assert panel.object.label == "fresh" and panel.kv_status.value == "0 pairs"

    class Other(DurableObject):
        pass

    rt.namespace(Other)
    panel.refresh_button.click()
    assert "Other" in panel.namespace.options


def test_module_docstring_example_runs():
    import doctest

    import workbench.widgets.storage_inspector as module

    assert doctest.testmod(module).failed == 0
