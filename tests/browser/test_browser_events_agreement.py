"""The events explorer's "Your traffic" tab in a real browser: files go through the file input.

    python -m pytest -v -m browser tests/browser/test_browser_events_agreement.py

Skipped when /usr/bin/chromium or Playwright is missing (``chromium_browser`` and
``browser_page`` come from conftest.py). A person's round, in Voila: open the tab
(Compare says why it cannot run yet), upload the sample http_requests log with the
upload button (its file input's chooser, as a person picks a file), compare, read the tables; upload the HAR with the
firewall events; then a bad file, whose line, field and reason replace the report.
The screenshots (tests/browser/screenshots/voila_agreement_*.png) show each step;
look at them after a layout change.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parents[2] / "notebooks" / "data"


@pytest.fixture
def voila_agreement(voila_panel, shop_events_explorer):
    """Voila serving a one-cell notebook with the panel on the sample logs' zone."""
    return voila_panel("agreement", shop_events_explorer)


def test_your_traffic_in_chromium(
    voila_agreement, browser_page, panel_shot, columns_in_view, tmp_path
):
    from playwright.sync_api import expect

    url, log = voila_agreement
    page = browser_page
    shoot = panel_shot
    status = page.locator(".wb-events-agreement-status")
    run = page.locator("button.wb-events-agreement-run")

    def upload(which: str, path: Path) -> None:
        # ipywidgets 8's upload button keeps its <input type=file> out of the page and clicks
        # it on a click of its own: the file goes through that input's file chooser.
        with page.expect_file_chooser() as chosen:
            page.locator(f"button.wb-events-agreement-{which}").click()
        chosen.value.set_files(str(path))
        expect(page.locator(".wb-events-agreement-files")).to_contain_text(path.name)

    try:
        page.goto(url)
        expect(page.locator(".wb-panel-title")).to_contain_text("Events explorer", timeout=90_000)
        page.locator(".wb-tabs-bar button", has_text="Your traffic").click()

        # Before a file: Compare is greyed out and says why
        expect(run).to_be_visible()
        expect(run).to_be_disabled()
        expect(run).to_have_attribute("title", "not available: upload a log first")
        expect(run).to_have_text("Compare with zone shop.example")

        # The http_requests log with its Security fields
        upload("log", DATA / "shop-http_requests.ndjson")
        expect(run).to_be_enabled()
        run.click()
        expect(status).to_have_text(
            "compared shop-http_requests.ndjson with zone shop.example: 58 agree, 4 disagree",
            timeout=60_000,
        )
        expect(status.locator(".wb-status-partial")).to_be_visible()
        expect(page.locator(".wb-events-agreement-summary")).to_contain_text(
            "62 requests on shop.example: 62 with a recorded decision, 58 agree, 4 disagree (93.5%)"
        )
        # The replay's events joined the panel's log: its count says so, and no longer "none"
        expect(page.locator(".wb-events-summary")).not_to_contain_text("0 events")
        expect(page.locator(".wb-events-status")).to_have_text("")
        actions = page.locator(".wb-events-agreement-actions tbody tr")
        expect(actions).to_have_count(3)
        expect(actions.first).to_have_text("allow501")
        expect(page.locator(".wb-events-agreement-rules tbody tr")).to_have_count(10)
        off = page.locator(".wb-events-agreement-disagreements tbody tr")
        expect(off).to_have_count(4)
        expect(off.nth(1)).to_contain_text("rate limiting (rateLimit rule")
        expect(off.nth(2)).to_contain_text("Bot Management")
        expect(off.nth(3)).to_contain_text("the real zone let it through")
        expect(off.nth(0)).to_contain_text("no body for this POST")
        unknown = page.locator(".wb-events-agreement-unknown tbody tr")
        expect(unknown).to_have_count(4)
        expect(unknown.first).to_contain_text("no request body")
        shoot("voila_agreement_http_requests")
        shoot("voila_agreement_http_requests_narrow", width=760)
        # What answers the question is in view without scrolling sideways, in Voila and in a
        # box as wide as JupyterLab's output (808 px).
        for width in (None, 808):
            seen = columns_in_view(
                ".wb-events-agreement-disagreements-table",
                ["line", "request", "recorded", "simulated", "why"],
                width,
            )
            assert all(visible for _, _, visible in seen.values()), (width, seen)
            seen = columns_in_view(
                ".wb-events-agreement-rules-table",
                ["rule", "source", "recorded", "simulated", "both", "agreement"],
                width,
            )
            assert all(visible for _, _, visible in seen.values()), (width, seen)

        # The HAR with the firewall events: the body-only attack now agrees
        upload("log", DATA / "shop-session.har")
        expect(status).to_contain_text("inputs changed since: run again")
        upload("events", DATA / "shop-firewall_events.ndjson")
        run.click()
        expect(status).to_have_text(
            "compared shop-session.har with zone shop.example: 1 agree, 0 disagree",
            timeout=60_000,
        )
        expect(page.locator(".wb-events-agreement-summary")).to_contain_text(
            "4 requests on shop.example: 1 with a recorded decision"
        )
        expect(status.locator(".wb-status-success")).to_be_visible()
        expect(page.locator(".wb-events-agreement-disagreements tbody tr")).to_have_count(0)
        expect(page.locator(".wb-events-agreement-rules tbody tr")).to_contain_text(
            "SQLi - UNION Based"
        )
        shoot("voila_agreement_har")

        # A bad file: its line, field and reason, and no report under them
        bad = tmp_path / "broken.ndjson"
        bad.write_text(
            '{"ClientRequestURI": "/", "ClientRequestHost": "shop.example"}\n'
            '{"ClientRequestURI": "/a", "ClientASN": "many"}\n'
        )
        upload("log", bad)
        run.click()
        expect(status).to_contain_text("cannot read broken.ndjson: line 2", timeout=60_000)
        expect(status).to_contain_text("ClientASN")
        expect(status.locator(".wb-status-error")).to_be_visible()
        for part in ("summary", "actions", "rules", "disagreements", "unknown"):
            expect(page.locator(f".wb-events-agreement-{part} table")).to_have_count(0)
        shoot("voila_agreement_bad_file")

        # Clear: both files forgotten, Compare greyed out again
        page.locator("button.wb-events-agreement-clear").click()
        expect(page.locator(".wb-events-agreement-files")).to_contain_text("log: none")
        expect(run).to_be_disabled()
        expect(status).to_have_text("")
    except Exception:
        print(log.read_text(errors="replace")[-4000:])
        raise
