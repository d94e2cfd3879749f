"""The events explorer in a real browser: Voila runs a small notebook, Chromium picks and clicks.

    python -m pytest -v -m browser tests/browser/test_browser_events_explorer.py

Skipped when /usr/bin/chromium or Playwright is missing (``chromium_browser`` and
``browser_page`` come from conftest.py). A person's round: run a canned query,
write SQL (a mistake first, then one that lists events), pick an event and read
the rules that matched it, then look at the charts and at old vs new. The
screenshots (tests/browser/screenshots/voila_events_*.png) show each step;
look at them after a layout change.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

SETUP = """\
from workbench import Workbench
from workbench.traffic import generate
from workbench.widgets import EventsExplorer

wb = Workbench(seed=0)
zone = wb.create_zone("example.com", plan="enterprise")
wb.migration.put_entrypoint(zone.id, "http_request_firewall_managed",
                            wb.migration.config(zone.id).result(),
                            waf_migration="validation", phase_two="1")
wb.traffic.replay(zone.id, generate(800, seed=1), progress=False)
panel = EventsExplorer(wb, zone.id)
panel"""

SQL = (
    "SELECT ray_id, datetime, source, action, rule_id, description, path\n"
    "FROM security_events\n"
    "WHERE ray_id IN (SELECT ray_id FROM security_events GROUP BY ray_id\n"
    "                 HAVING count(DISTINCT source) = 2)\n"
    "ORDER BY datetime, ray_id, match_index DESC\nLIMIT 30"
)


OWASP_SQL = (
    "SELECT ray_id, source, rule_id, description FROM security_events\n"
    "WHERE metadata LIKE '%\"field\"%'\nORDER BY datetime, ray_id LIMIT 5"
)


@pytest.fixture
def voila_events(voila_panel):
    """Voila serving a one-cell notebook with the panel: its URL and log."""
    return voila_panel("events", SETUP)


def test_events_explorer_in_chromium(voila_events, browser_page, panel_shot, columns_in_view):
    from playwright.sync_api import expect

    url, log = voila_events
    page = browser_page

    shoot = panel_shot

    def tab(name: str) -> None:
        page.locator(".wb-tabs-bar button", has_text=name).click()

    status = page.locator(".wb-events-status")
    try:
        page.goto(url)
        expect(page.locator(".wb-panel-title")).to_contain_text("Events explorer", timeout=90_000)
        expect(page.locator(".wb-events-summary")).to_contain_text("events of zone")

        # A canned query: the top rules fill the table
        page.locator(".wb-events-query select").select_option(label="Top rules")
        page.locator("button.wb-events-run-query").click()
        expect(status).to_have_text("Top rules: 10 rows")
        expect(status.locator(".wb-status-success")).to_be_visible()
        expect(page.locator(".wb-events-table tbody tr")).to_have_count(10)
        shoot("voila_events_canned")

        # SQL: a mistake is shown in the engine's words, then a query that lists events
        sql = page.locator(".wb-events-sql textarea")
        sql.fill("SELECT * FROM security_event")
        page.locator("button.wb-events-run-sql").click()
        expect(status).to_contain_text("SQL error: the engine says")
        expect(status.locator("pre")).to_contain_text("security_event does not exist")
        expect(status.locator(".wb-status-error")).to_be_visible()
        sql.fill(SQL)
        expect(status).to_contain_text("inputs changed since: run again")
        page.locator("button.wb-events-run-sql").click()
        expect(status).to_have_text("SQL: 30 rows")
        expect(page.locator(".wb-events-table tbody tr")).to_have_count(30)

        # Pick an event: its request and every rule that matched it, new WAF first
        picker = page.locator(".wb-events-pick select")
        first = picker.locator("option").first
        # (the list shows spaces as no-break spaces)
        ray = first.inner_text().replace("\xa0", " ").split(" · ")[0]
        assert ray == page.locator(".wb-events-table tbody td").first.inner_text()
        picker.select_option(index=0)
        detail = page.locator(".wb-events-detail-status")
        expect(detail).to_contain_text(f"ray {ray}: ")
        expect(detail.locator(".wb-status-success")).to_be_visible()
        rules = page.locator(".wb-events-rules tbody tr")
        expect(rules.first.locator("td").nth(1)).to_have_text("firewallManaged")
        expect(rules.last.locator("td").nth(1)).to_have_text("waf")
        expect(page.locator(".wb-events-request tbody tr").first).to_contain_text(ray)
        shoot("voila_events_picked")
        shoot("voila_events_picked_narrow", width=760)

        # An OWASP event: what each of its contributing rules matched, field and value
        sql.fill(OWASP_SQL)
        page.locator("button.wb-events-run-sql").click()
        expect(status).to_have_text("SQL: 5 rows")  # this query's outcome, not the last one's
        picker.select_option(index=0)
        why = page.locator(".wb-events-why tbody tr")
        expect(why.first).to_be_visible()
        expect(why.first.locator("td").nth(2)).to_contain_text(":")  # ARGS:q, REQUEST_HEADERS:...
        why.first.scroll_into_view_if_needed()
        shoot("voila_events_owasp_matched")

        # Charts: actions over time and by rule
        tab("Charts")
        charts = page.locator(".wb-events-chart svg")
        expect(charts).to_have_count(2, timeout=30_000)
        expect(charts.first).to_contain_text("actions over time")
        expect(charts.last).to_contain_text("top 10 rules, by action")
        expect(charts.last).to_contain_text("new WAF · ")
        shoot("voila_events_charts")

        # Old vs new, side by side
        tab("Old vs new")
        compare = page.locator(".wb-events-compare")
        expect(compare.locator("svg")).to_be_visible(timeout=30_000)
        expect(compare).to_contain_text("old WAF (waf)")
        expect(compare).to_contain_text("new WAF (firewallManaged)")
        expect(compare.locator(".wb-events-pairs tbody tr").first).to_be_visible()
        shoot("voila_events_compare")
        # Each rule in both: the counts are in view at 1280x800 without scrolling sideways, in
        # Voila and in a box as wide as JupyterLab's (808 px, issue 28).
        counts = ["old_rule_id", "old_events", "new_events", "both", "old_only", "new_only"]
        for width in (None, 808):
            seen = columns_in_view(".wb-events-pairs", counts, width)
            assert all(visible for _, _, visible in seen.values()), (width, seen)
    except Exception:
        print(log.read_text(errors="replace")[-4000:])
        raise
