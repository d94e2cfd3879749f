"""A log over the Jupyter server's default 10 MB message limit reaches the kernel in JupyterLab.

    python -m pytest -v -m browser tests/browser/test_browser_large_upload.py

The Your traffic tab's upload travels to the kernel in one websocket message, and a
Jupyter server drops a message over ``websocket_max_message_size`` (10 MB unless set).
``make lab`` and ``python -m workbench lab`` start JupyterLab with the limit raised
(:data:`workbench.lab.LAB_SERVER_OPTIONS`), as the JupyterLab of these tests does; a
12 MB http_requests log then arrives: the panel names it with its size and Compare opens.
Skipped when /usr/bin/chromium or Playwright is missing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parents[2] / "notebooks" / "data"


def big_log(path: Path, size: int) -> Path:
    """The sample http_requests log repeated to ``size`` bytes, each copy with its own ray ids."""
    lines = (DATA / "shop-http_requests.ndjson").read_text(encoding="utf-8").splitlines()
    with path.open("w", encoding="utf-8") as out:
        copy = 0
        while out.tell() < size:
            for line in lines:
                out.write(re.sub(r'"RayID": ?"([0-9a-f]+)"', rf'"RayID":"\g<1>{copy:x}"', line))
                out.write("\n")
            copy += 1
    return path


def test_a_12_mb_log_reaches_the_kernel_in_jupyterlab(
    lab_notebook, shop_events_explorer, browser_page, screenshot, tmp_path
):
    from playwright.sync_api import expect

    log = big_log(tmp_path / "big-http_requests.ndjson", 12_000_000)
    server, url = lab_notebook("upload", shop_events_explorer)
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 800})
    idle = page.locator(".jp-StatusBar-TextItem", has_text=re.compile(r"\| Idle"))
    run = page.locator("button.wb-events-agreement-run")
    try:
        page.goto(url)
        expect(idle).to_contain_text(re.compile(r"\(ipykernel\) \| Idle"), timeout=60_000)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        expect(page.locator(".wb-panel-title")).to_contain_text("Events explorer", timeout=90_000)
        page.locator(".wb-tabs-bar button", has_text="Your traffic").click()
        expect(run).to_be_disabled()
        with page.expect_file_chooser() as chosen:
            page.locator("button.wb-events-agreement-log").click()
        chosen.value.set_files(str(log))
        # The kernel got the bytes: the panel names the file with the size it received.
        files = page.locator(".wb-events-agreement-files")
        expect(files).to_contain_text("big-http_requests.ndjson", timeout=60_000)
        expect(files).to_contain_text(re.compile(r"1[12]\.\d MB"))
        expect(run).to_be_enabled()
        screenshot("lab_agreement_large_upload")
    except Exception as err:
        raise AssertionError(f"{err}\n--- server log (tail) ---\n{server.log_tail()}") from err
