"""The start notebook in a real browser: the ExpressionChecker under Voila and JupyterLab.

Run alone with screenshots in test-artifacts/:

    python -m pytest -v -m browser tests/browser

Skipped when /usr/bin/chromium (``apt-get install chromium``) or Playwright is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

pytestmark = pytest.mark.browser

VALID = 'http.host eq "example.com"'
VALID_STATUS = "valid — matches 3 of 5 sample requests"
INVALID = "http.host eq a"

# The caret's index in line 3, and the screen x of the character above it and of the caret.
CARET_AND_CULPRIT_X = """(pre) => {
  const node = pre.firstChild;
  const lines = node.textContent.split("\\n");
  const start = (i) => lines.slice(0, i).reduce((n, line) => n + line.length + 1, 0);
  const x = (offset) => {
    const range = document.createRange();
    range.setStart(node, offset);
    range.setEnd(node, offset + 1);
    return range.getBoundingClientRect().left;
  };
  const caret = lines[2].indexOf("^");
  return [caret, x(start(1) + caret), x(start(2) + caret)];
}"""


@contextmanager
def server_log_on_failure(server) -> Iterator[None]:
    """Add the server's log to any failure, so a broken kernel shows why."""
    try:
        yield
    except Exception as err:
        raise AssertionError(f"{err}\n--- server log (tail) ---\n{server.log_tail()}") from err


def check_expression(page, text: str) -> None:
    """Type ``text`` into the checker's box and press Check."""
    box = page.locator(".wb-checker-text textarea")
    box.fill(text)
    page.locator("button.wb-checker-button").click()


def test_voila_expression_checker(voila_server, browser_page, screenshot):
    from playwright.sync_api import expect

    page = browser_page
    with server_log_on_failure(voila_server):
        page.goto(f"{voila_server.base}/?token={voila_server.token}")
        status = page.locator(".wb-checker-status")
        # Voila ran the whole notebook: the last cell left a parse error in the panel.
        expect(status).to_contain_text("Filter parsing error", timeout=45_000)
        expect(page.locator("button.wb-checker-button")).to_have_count(1)

        check_expression(page, VALID)
        expect(status).to_have_text(VALID_STATUS)
        rows = page.locator(".wb-checker-table tbody tr")
        expect(rows).to_have_count(5)
        expect(page.locator(".wb-checker-table tr.wb-match")).to_have_count(3)
        screenshot("voila_start_here")

        check_expression(page, INVALID)
        expect(status).to_contain_text("Filter parsing error (1:14):")
        expect(status).to_contain_text("^ unknown identifier")
        # The caret is drawn right under the "a" (monospace <pre>, spaces kept).
        column, a_x, caret_x = status.locator("pre").evaluate(CARET_AND_CULPRIT_X)
        assert column == 13 and abs(a_x - caret_x) < 1.5, (column, a_x, caret_x)
        expect(page.locator(".wb-checker-table tr.wb-match")).to_have_count(0)
        screenshot("voila_start_here_error")


def test_jupyterlab_run_all_then_check(lab_server, browser_page, screenshot):
    from playwright.sync_api import expect

    page = browser_page
    with server_log_on_failure(lab_server):
        page.goto(f"{lab_server.base}/lab/tree/00-start-here.ipynb?reset&token={lab_server.token}")
        # Not the execution indicator: it says idle before a kernel exists.
        kernel_status = page.locator(".jp-StatusBar-TextItem", has_text=re.compile(r"\| Idle"))
        expect(kernel_status).to_contain_text(re.compile(r"\(ipykernel\) \| Idle"), timeout=45_000)

        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

        status = page.locator(".wb-checker-status")
        expect(status).to_contain_text("Filter parsing error", timeout=45_000)
        check_expression(page, VALID)
        expect(status).to_have_text(VALID_STATUS)
        expect(page.locator(".wb-checker-table tr.wb-match")).to_have_count(3)
        screenshot("jupyterlab_start_here")
