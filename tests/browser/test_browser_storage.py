"""The storage inspector in a real browser: Voila runs a small notebook, Chromium clicks.

    python -m pytest -v -m browser tests/browser/test_browser_storage.py

Skipped when /usr/bin/chromium or Playwright is missing (``chromium_browser`` and
``browser_page`` come from conftest.py). The alarm step also checks that the
panel can run the runtime's coroutines from a widget callback inside a live
kernel, whose event loop is already running.
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


def test_storage_inspector_in_chromium(voila_storage, browser_page):
    url, log = voila_storage
    page = browser_page
    page.goto(url)
    try:
        page.get_by_text("3 pairs").wait_for(timeout=60_000)
    except Exception:
        raise AssertionError(
            "panel did not render:\n" + log.read_text(errors="replace")[-3000:]
        ) from None

    # KV browser: a prefix narrows the list
    page.locator(".widget-text", has=page.locator("label", has_text="prefix")).locator(
        "input"
    ).fill("ap")
    page.get_by_role("button", name="List", exact=True).click()
    page.get_by_text("2 pairs").wait_for()
    assert page.get_by_text("apricot").count() >= 1

    # SQL console: rows and counters
    page.locator(".lm-TabBar-tab", has_text="SQL").click()
    sql = page.locator(".widget-textarea textarea")
    sql.fill("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2); SELECT x FROM t")
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("2 rows · columnNames ['x'] · rowsRead 2 · rowsWritten 0").wait_for()

    # Alarm: set one, advance the virtual clock, see the handler's run in the log
    page.locator(".lm-TabBar-tab", has_text="Alarm").click()
    page.get_by_role("button", name="Set alarm", exact=True).click()
    page.get_by_text("alarm 2026-01-01T00:00:01Z").wait_for()
    page.get_by_role("button", name="Advance clock", exact=True).click()
    page.get_by_text("alarm none").wait_for()
    assert "ok" in page.locator(".wb-storage-inspector").inner_text()
