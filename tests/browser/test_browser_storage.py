"""The storage inspector in a real browser: Voila runs a small notebook, Chromium types and clicks.

    python -m pytest -v -m browser tests/browser/test_browser_storage.py

Skipped when /usr/bin/chromium or Playwright is missing (``chromium_browser`` and
``browser_page`` come from conftest.py). A person's round: put a JSON value (and
mistype one), run SQL (an error, then a success that clears it), make a
mistake, set an alarm and advance the clock (the panel runs the runtime's
coroutines from a widget callback inside a live kernel, whose event loop is
already running), pick the moment before the mistake on the bookmark timeline,
diff, restore, and read the bill. The screenshots
(tests/browser/screenshots/voila_storage_*.png) show each tab; look at them
after a layout change.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

SETUP = """\
from types import SimpleNamespace
from workbench.storage import DurableObject, Runtime
from workbench.widgets import StorageInspector

class Notes(DurableObject):
    async def fetch(self, request):
        await self.ctx.storage.put(request, len(request))
    async def alarm(self, info=None):
        await self.ctx.storage.put("alarm-ran", info.retryCount)

rt = Runtime()
ns = rt.namespace(Notes)
stub = ns.get(ns.id_from_name("notes"))
for word in ("apple", "apricot", "banana"):
    await stub.fetch(word)
panel = StorageInspector(rt)
panel"""


@pytest.fixture
def voila_storage(voila_panel):
    """Voila serving a one-cell notebook with the panel: its URL and log."""
    return voila_panel("storage", SETUP)


def test_storage_inspector_in_chromium(voila_storage, browser_page, panel_shot):
    from playwright.sync_api import expect

    url, log = voila_storage
    page = browser_page

    shoot = panel_shot

    def tab(name: str) -> None:
        page.locator(".wb-tabs-bar button", has_text=name).click()

    try:
        page.goto(url)
        status = page.locator(".wb-storage-status")
        expect(status).to_contain_text("Notes / notes · SQLite backend", timeout=60_000)
        expect(page.locator(".wb-panel-title")).to_contain_text("Storage inspector")
        expect(page.locator(".wb-storage-kv-status")).to_have_text("3 pairs")

        # KV: a prefix narrows the list (Enter lists)
        prefix = page.locator(".wb-storage-kv-prefix input")
        prefix.fill("ap")
        prefix.press("Enter")
        expect(page.locator(".wb-storage-kv-status")).to_have_text("2 pairs (prefix ap)")
        prefix.fill("")
        prefix.press("Enter")
        expect(page.locator(".wb-storage-kv-status")).to_have_text("3 pairs")

        # KV: put a JSON value; it is listed as the same JSON
        page.locator(".wb-storage-kv-key input").fill("cart")
        value = page.locator(".wb-storage-kv-value textarea")
        value.fill('{"items": ["pen"], "total": 3, "raw": {"$bytes": "aGk="}}')
        page.locator("button.wb-storage-kv-put").click()
        edit = page.locator(".wb-storage-kv-edit-status")
        expect(edit).to_contain_text(
            'put "cart" = {"items": ["pen"], "total": 3, "raw": {"$bytes": "aGk="}}'
        )
        expect(edit.locator(".wb-status-success")).to_be_visible()
        rows = page.locator(".wb-storage-kv-table tbody tr")
        expect(rows).to_have_count(4)
        expect(rows.filter(has_text="cart").locator("td").nth(1)).to_have_text(
            '{"items": ["pen"], "total": 3, "raw": {"$bytes": "aGk="}}'
        )
        expect(rows.filter(has_text="apple").locator("td").nth(1)).to_have_text("5")

        # KV: a typo gets a message naming the field, the place and what was expected
        value.fill('{"items": ["pen"] "total": 3}')
        page.locator("button.wb-storage-kv-put").click()
        expect(edit).to_contain_text(
            "value (JSON), line 1, column 19: expected ',' or '}' "
            "(the object opened at line 1, column 1 is not closed)"
        )
        expect(edit.locator(".wb-status-error")).to_be_visible()
        expect(edit.locator("pre")).to_contain_text("^")
        assert "Expecting" not in edit.inner_text()
        shoot("voila_storage_kv")
        value.fill('{"items": ["pen"], "total": 3}')
        expect(edit).to_contain_text("inputs changed since: run again")

        # Get loads a stored value into the editor, as JSON
        page.locator(".wb-storage-kv-key input").fill("apple")
        page.locator("button.wb-storage-kv-get").click()
        expect(edit).to_contain_text('loaded "apple"')
        expect(value).to_have_value("5")

        # SQL: an error, then a success that replaces it
        tab("SQL")
        sql = page.locator(".wb-storage-sql-text textarea")
        sql_status = page.locator(".wb-storage-sql-status")
        sql.fill("SELEC 1")
        page.locator("button.wb-storage-sql-run").click()
        expect(sql_status).to_contain_text("SQL error (SQLITE_ERROR): the engine says")
        expect(sql_status.locator("pre")).to_have_text(
            'near "SELEC": syntax error at offset 0: SQLITE_ERROR'
        )
        sql.fill(
            "CREATE TABLE orders(id INTEGER PRIMARY KEY, total REAL);"
            " INSERT INTO orders(total) VALUES (3), (4); SELECT id, total FROM orders"
        )
        page.locator("button.wb-storage-sql-run").click()
        expect(sql_status).to_have_text(
            "2 rows · columnNames ['id', 'total'] · rowsRead 2 · rowsWritten 0"
        )
        expect(sql_status.locator(".wb-status-success")).to_be_visible()
        expect(sql_status.locator(".wb-status-error")).to_have_count(0)
        expect(page.locator(".wb-storage-sql-table tbody tr")).to_have_count(2)
        shoot("voila_storage_sql")
        sql.fill("DELETE FROM orders")  # the mistake
        page.locator("button.wb-storage-sql-run").click()
        expect(sql_status).to_have_text("0 rows · columnNames [] · rowsRead 0 · rowsWritten 2")

        # Alarm: set one, advance the virtual clock, see the handler's run in the log
        tab("Alarm")
        page.locator("button.wb-storage-alarm-set").click()
        expect(page.locator(".wb-storage-alarm-status")).to_have_text(
            "alarm set for 2026-01-01T00:00:01.000Z"
        )
        page.locator("button.wb-storage-advance").click()
        expect(page.locator(".wb-storage-alarm-state")).to_contain_text("alarm none")
        expect(page.locator(".wb-storage-alarm-log tbody td").nth(2)).to_have_text("ok")
        shoot("voila_storage_alarm")

        # Bookmarks: the chart labels each batch; pick the moment before the mistake
        tab("Bookmarks")
        chart = page.locator(".wb-storage-timeline svg")
        expect(chart).to_be_visible(timeout=20_000)
        expect(chart).to_contain_text("create table orders +2 rows")
        expect(chart).to_contain_text("orders -2 rows")
        picker = page.locator(".wb-storage-bookmark-from select")
        # (the dropdown shows spaces as no-break spaces)
        labels = [t.replace("\xa0", " ") for t in picker.locator("option").all_inner_texts()]
        before = next((label for label in labels if "create table orders" in label), str(labels))
        assert before == "seq 5 · 00:00:00.000 · create table orders +2 rows"
        assert labels[labels.index(before) + 1] == "seq 6 · 00:00:00.000 · orders -2 rows"
        picker.select_option(index=labels.index(before))
        expect(chart.locator("text", has_text="from")).to_have_count(1)
        page.locator("button.wb-storage-diff").click()
        diff_status = page.locator(".wb-storage-diff-status")
        expect(diff_status).to_contain_text("from seq 5 · 00:00:00.000 to seq ")
        diff = page.locator(".wb-storage-diff tbody tr")
        expect(diff.filter(has_text="rowid 1").locator("td")).to_have_text(
            ["table orders", "rowid 1", "removed", '{"id": 1, "total": 3.0}', ""]
        )
        expect(diff.filter(has_text="alarm-ran").locator("td")).to_have_text(
            ["KV", "alarm-ran", "added", "", "0"]
        )
        shoot("voila_storage_bookmarks")
        shoot("voila_storage_bookmarks_narrow", width=760)

        # Restore to "from", restart: the orders are back
        page.locator("button.wb-storage-restore").click()
        restore = page.locator(".wb-storage-restore-status")
        expect(restore).to_contain_text("restore to seq 5 · 00:00:00.000 is pending")
        page.locator("button.wb-storage-restart").click()
        expect(restore).to_contain_text("restored to seq 5 · 00:00:00.000")
        expect(chart).to_contain_text("orders +2 rows")
        tab("SQL")
        sql.fill("SELECT count(*) AS n FROM orders")
        page.locator("button.wb-storage-sql-run").click()
        expect(page.locator(".wb-storage-sql-table tbody td")).to_have_text("2")

        # Billing: per statement kind, a table and a bar chart, and the estimate
        tab("Billing")
        table = page.locator(".wb-storage-billing-table")
        expect(table.locator("tbody tr").first.locator("td")).to_have_text(
            ["SELECT", "2", "4", "0"], timeout=20_000
        )
        expect(table.locator("tbody tr").last.locator("td").first).to_have_text("total")
        bars = page.locator(".wb-storage-billing-chart svg")
        expect(bars).to_be_visible()
        expect(bars).to_contain_text("rowsWritten")
        expect(page.locator(".wb-storage-billing-cost")).to_contain_text("estimated $0.00/month")
        shoot("voila_storage_billing")
        shoot("voila_storage_billing_narrow", width=760)
    except Exception as err:
        raise AssertionError(
            f"{err}\n--- voila log ---\n{log.read_text(errors='replace')[-3000:]}"
        ) from err
