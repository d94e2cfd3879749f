"""Panel tabs after a browser reload, in JupyterLab (issue 28, item 3).

    python -m pytest -v -m browser tests/browser/test_browser_reload.py

A person runs a notebook, saves it, reloads the page (the kernel keeps
running, so JupyterLab restores the live widgets from it) and clicks a tab.
With ``ipywidgets.Tab`` the restored Lumino TabBar sometimes ignored every
click after a reload (in about half of the reloads tried: no message left the
page, the tab bar never saw the press) while buttons kept working, until the
cell ran again. The panels' tabs are now :class:`workbench.widgets.parts.Tabs`
(toggle buttons over a Stack), which listen to clicks like buttons do; this
test reloads several times and clicks a tab after each reload. Screenshots:
``tests/browser/screenshots/lab_reload_*.png``.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser

RELOADS = 3
SETUP = """\
from workbench.storage import DurableObject, Runtime
from workbench.widgets import StorageInspector

class Notes(DurableObject):
    async def fetch(self, request):
        await self.ctx.storage.put(request, len(request))

rt = Runtime()
ns = rt.namespace(Notes)
stub = ns.get(ns.id_from_name("notes"))
for word in ("apple", "apricot", "banana"):
    await stub.fetch(word)
panel = StorageInspector(rt)
panel"""


def test_tabs_switch_after_a_reload_in_jupyterlab(lab_notebook, browser_page, screenshot):
    from playwright.sync_api import expect

    server, url = lab_notebook("reload", SETUP)
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 800})
    idle = page.locator(".jp-StatusBar-TextItem", has_text=re.compile(r"\| Idle"))
    status = page.locator(".wb-storage-status")

    def tab(name: str):
        return page.locator(".wb-storage-tabs .wb-tabs-bar button", has_text=name)

    def shows(name: str, part: str) -> None:
        """Click tab ``name``; its page (``part`` inside it) shows, the tab is marked."""
        tab(name).click()
        expect(page.locator(part)).to_be_visible(timeout=10_000)
        expect(tab(name)).to_have_class(re.compile(r"\bmod-active\b"))

    try:
        page.goto(url)
        expect(idle).to_contain_text(re.compile(r"\(ipykernel\) \| Idle"), timeout=60_000)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        expect(status).to_contain_text("Notes / notes", timeout=60_000)
        shows("SQL", ".wb-storage-sql-text textarea")
        expect(page.locator(".wb-storage-kv-table")).to_be_hidden()
        page.keyboard.press("Control+s")
        expect(page.locator(".jp-mod-dirty")).to_have_count(0, timeout=10_000)

        for reload in range(1, RELOADS + 1):
            page.reload()
            expect(idle).to_contain_text(re.compile(r"\(ipykernel\) \| Idle"), timeout=60_000)
            # The live widgets are back, on the tab that was open.
            expect(status).to_contain_text("Notes / notes", timeout=60_000)
            expect(page.locator(".wb-storage-sql-text textarea")).to_be_visible()
            shows("Billing", ".wb-storage-billing-table")
            expect(page.locator(".wb-storage-sql-text textarea")).to_be_hidden()
            shows("KV", ".wb-storage-kv-table")
            screenshot(f"lab_reload_{reload}_kv")
            shows("SQL", ".wb-storage-sql-text textarea")  # where the next reload starts
            # The kernel heard the clicks too: a SQL run after the reload answers there.
            page.locator(".wb-storage-sql-text textarea").fill("SELECT 1 AS one")
            page.locator("button.wb-storage-sql-run").click()
            expect(page.locator(".wb-storage-sql-status")).to_contain_text("1 row")
        screenshot("lab_reload_sql")
    except Exception as err:
        raise AssertionError(f"{err}\n--- server log (tail) ---\n{server.log_tail()}") from err
