"""The start notebook in a real browser: the ExpressionChecker under Voila and JupyterLab.

Run alone; screenshots go to tests/browser/screenshots/:

    python -m pytest -v -m browser tests/browser

Skipped when /usr/bin/chromium (``apt-get install chromium``) or Playwright is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1280, "height": 800}
FRESH_STATUS = "valid — matches 1 of 5 sample requests"  # the notebook's first expression
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


def type_and_enter(page, text: str) -> None:
    """Type ``text`` into the checker's one-line box and press Enter."""
    box = page.locator(".wb-checker-text input")
    box.fill(text)
    box.press("Enter")


def save_panel(page, screenshot, name: str) -> None:
    """Screenshots: the whole page (``name``) and the panel alone (``name_panel``)."""
    whole = screenshot(name)
    panel = page.locator(".wb-expression-checker")
    panel.screenshot(path=str(whole.with_name(f"{name}_panel.png")))


def assert_match_column_in_view(page) -> None:
    """The match column (header and every row) lies inside the 1280x800 viewport."""
    panel = page.locator(".wb-expression-checker")
    panel.scroll_into_view_if_needed()
    cells = page.locator(".wb-checker-table th:first-child, .wb-checker-table td:first-child").all()
    assert len(cells) == 6
    for cell in cells:
        cell.scroll_into_view_if_needed()
        box = cell.bounding_box()
        assert box is not None
        inside = (
            box["x"] >= 0
            and box["y"] >= 0
            and box["x"] + box["width"] <= VIEWPORT["width"]
            and box["y"] + box["height"] <= VIEWPORT["height"]
        )
        assert inside, (cell.inner_text(), box)
        assert box["width"] < 80, box  # narrow
    assert page.locator(".wb-checker-table th").first.inner_text() == "match"


def test_voila_expression_checker(voila_server, browser_page, screenshot):
    from playwright.sync_api import expect

    page = browser_page
    page.set_viewport_size(VIEWPORT)
    with server_log_on_failure(voila_server):
        page.goto(f"{voila_server.base}/?token={voila_server.token}")
        status = page.locator(".wb-checker-status")
        # Voila ran the whole notebook; the demo cells drove another panel, so this one is fresh.
        expect(status).to_have_text(FRESH_STATUS, timeout=45_000)
        expect(page.locator(".wb-expression-checker")).to_have_count(1)
        expect(page.locator(".wb-checker-text input")).to_have_value(
            'http.request.uri.path contains "/admin"'
        )

        type_and_enter(page, VALID)
        expect(status).to_have_text(VALID_STATUS)
        expect(page.locator(".wb-checker-table tbody tr")).to_have_count(5)
        expect(page.locator(".wb-checker-table tr.wb-match")).to_have_count(3)
        marks = page.locator(".wb-checker-table tbody td:first-child").all_inner_texts()
        assert marks == ["✔", "✔", "–", "✔", "–"]
        assert_match_column_in_view(page)
        save_panel(page, screenshot, "voila_start_here")

        type_and_enter(page, INVALID)
        expect(status).to_contain_text("Filter parsing error (1:14):")
        expect(status).to_contain_text("^ unknown identifier")
        # The caret is drawn right under the "a" (monospace <pre>, spaces kept).
        pre = status.locator("pre")
        column, a_x, caret_x = pre.evaluate(CARET_AND_CULPRIT_X)
        assert column == 13 and abs(a_x - caret_x) < 1.5, (column, a_x, caret_x)
        # The hint, in plain words, beneath the engine's message.
        hint = page.locator(".wb-checker-hint")
        expect(hint).to_contain_text(
            'a is read as a field name. Text values go in double quotes: "a".'
        )
        assert hint.bounding_box()["y"] >= pre.bounding_box()["y"] + pre.bounding_box()["height"]
        expect(page.locator(".wb-checker-table tr.wb-match")).to_have_count(0)
        save_panel(page, screenshot, "voila_start_here_error")


def test_voila_live_check_and_stale_status(voila_server, browser_page, screenshot):
    """Typing without Enter: stale at once, checked by itself when typing pauses."""
    from playwright.sync_api import expect

    page = browser_page
    page.set_viewport_size(VIEWPORT)
    with server_log_on_failure(voila_server):
        page.goto(f"{voila_server.base}/?token={voila_server.token}")
        status = page.locator(".wb-checker-status")
        expect(status).to_have_text(FRESH_STATUS, timeout=45_000)
        box = page.locator(".wb-checker-text input")
        box.fill("")
        box.press_sequentially('cf.waf.score lt "50"', delay=20)
        expect(status).to_contain_text("Filter parsing error (1:17):")
        expect(page.locator(".wb-checker-hint")).to_contain_text("is an Integer field")
        save_panel(page, screenshot, "voila_start_here_live")
        box.press("End")
        for _ in range(4):
            box.press("Backspace")
        box.press_sequentially("50", delay=20)
        expect(status).to_have_text("valid — matches 2 of 5 sample requests")
        expect(page.locator(".wb-checker-hint")).to_have_text("")


def test_voila_enter_checks_and_undefined_list_warns(voila_panel, browser_page, screenshot):
    """With live checking off, only Enter checks; an unknown $list is a warning."""
    from playwright.sync_api import expect

    source = (
        "from workbench.widgets import ExpressionChecker\n"
        "ExpressionChecker(lists={'bad_ips': ['192.0.2.0/24']}, live_delay=None)"
    )
    url, _log = voila_panel("checker_enter", source)
    page = browser_page
    page.set_viewport_size(VIEWPORT)
    page.goto(url)
    status = page.locator(".wb-checker-status")
    expect(status).to_contain_text("not checked yet", timeout=45_000)
    box = page.locator(".wb-checker-text input")
    box.fill("ip.src in $bad_ips")
    page.wait_for_timeout(600)
    expect(status).to_contain_text("not checked yet")  # typing alone did not check
    box.press("Enter")
    expect(status).to_have_text("valid — matches 2 of 5 sample requests")

    box.fill("ip.src in $bad_ip")
    expect(status).to_contain_text("(inputs changed since: run again)")  # stale, not rechecked
    expect(page.locator(".wb-status-stale")).to_have_count(1)
    save_panel(page, screenshot, "voila_checker_stale")
    box.press("Enter")
    expect(status).to_have_text(
        "valid — matches 0 of 5 sample requests, but $bad_ip is not defined here and matches nothing"
    )
    expect(page.locator(".wb-status-partial")).to_have_count(1)
    expect(page.locator(".wb-checker-hint")).to_contain_text("lists defined here: $bad_ips")
    assert_match_column_in_view(page)
    save_panel(page, screenshot, "voila_checker_undefined_list")

    # Narrower than the table: it scrolls inside the panel, the match column pinned at the left.
    width = 700
    page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
    # The page lays itself out again after the resize (Lumino does it on the next frame).
    page.wait_for_function(
        "() => { const e = document.querySelector('.wb-checker-table .wb-scroll');"
        " return e.scrollWidth > e.clientWidth; }"
    )
    panel = page.locator(".wb-expression-checker").bounding_box()
    assert panel["x"] + panel["width"] <= width, panel
    page.locator(".wb-checker-table .wb-scroll").evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    headers = page.locator(".wb-checker-table th")
    last, first = headers.last.bounding_box(), headers.first.bounding_box()
    assert last["x"] + last["width"] <= width + 1, last  # the far end can be reached
    assert 0 <= first["x"] and first["x"] + first["width"] <= width, first  # still in view
    assert headers.first.inner_text() == "match"
    save_panel(page, screenshot, "voila_checker_narrow_scrolled")


def test_jupyterlab_run_all_then_check(lab_server, browser_page, screenshot):
    from playwright.sync_api import expect

    page = browser_page
    page.set_viewport_size(VIEWPORT)
    with server_log_on_failure(lab_server):
        page.goto(f"{lab_server.base}/lab/tree/00-start-here.ipynb?reset&token={lab_server.token}")
        # Not the execution indicator: it says idle before a kernel exists.
        kernel_status = page.locator(".jp-StatusBar-TextItem", has_text=re.compile(r"\| Idle"))
        expect(kernel_status).to_contain_text(re.compile(r"\(ipykernel\) \| Idle"), timeout=45_000)

        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

        status = page.locator(".wb-checker-status")
        expect(status).to_have_text(FRESH_STATUS, timeout=45_000)
        status.scroll_into_view_if_needed()
        type_and_enter(page, VALID)
        expect(status).to_have_text(VALID_STATUS)
        expect(page.locator(".wb-checker-table tr.wb-match")).to_have_count(3)
        assert_match_column_in_view(page)
        save_panel(page, screenshot, "jupyterlab_start_here")
