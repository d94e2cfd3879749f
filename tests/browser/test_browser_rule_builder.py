"""The rule builder in a real browser: Voila runs a small notebook, Chromium clicks.

    python -m pytest -v -m browser tests/browser/test_browser_rule_builder.py

Skipped when /usr/bin/chromium or Playwright is missing (fixtures in conftest.py).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

SETUP = """\
from workbench import Workbench
from workbench.widgets import RuleBuilder

wb = Workbench(seed=0)
zone = wb.create_zone("shop.example", plan="free")
wb.firewall.create_rules(zone.id, [
    {"filter": {"expression": f'http.host eq "h{i}.shop.example"'}, "action": "block"} for i in range(4)])
panel = RuleBuilder(wb, zone.id)
panel"""


@pytest.fixture
def voila_rule_builder(voila_panel):
    """Voila serving a one-cell notebook with the panel: its URL and log."""
    return voila_panel("rule_builder", SETUP)


def test_voila_rule_builder_both_sequences(voila_rule_builder, browser_page, screenshot):
    from playwright.sync_api import expect

    url, log = voila_rule_builder
    page = browser_page
    try:
        page.goto(url)
        value = page.locator(".wb-rb-value input").first
        expect(value).to_be_visible(timeout=45_000)
        value.fill("/admin")
        value.press("Enter")
        preview = page.locator(".wb-rb-preview")
        expect(preview).to_contain_text('http.request.uri.path eq "/admin"')
        expect(page.locator(".wb-rb-matches")).to_contain_text("match")

        page.locator("button.wb-rb-create").click()
        outcome = page.locator(".wb-rb-outcome")
        expect(outcome).to_contain_text("created rule", timeout=20_000)
        http = page.locator(".wb-rb-http")
        expect(http).to_contain_text('curl -X POST "$CF_BASE/zones/')
        expect(http).to_contain_text("POST /zones/")
        expect(page.locator(".wb-rb-filters")).to_contain_text("5 of 5 active rules")
        screenshot("voila_rule_builder_created")

        # The zone is now at its quota: the one-call form leaves the filter behind.
        value.fill("/login")
        value.press("Enter")
        expect(preview).to_contain_text('"/login"')
        page.locator("button.wb-rb-one-call").click()
        expect(outcome).to_contain_text("partial: filter", timeout=20_000)
        expect(http).to_contain_text("10200")
        expect(page.locator(".wb-rb-filters")).to_contain_text("(no rule)")

        screenshot("voila_rule_builder_partial")

        # A second condition joins with "and" in the preview.
        page.locator("button.wb-rb-add").click()
        second = page.locator(".wb-rb-value input").nth(1)
        second.fill("/x")
        second.press("Enter")
        expect(preview).to_contain_text('"/login" and http.request.uri.path eq "/x"')
    except Exception as err:
        raise AssertionError(
            f"{err}\n--- voila log ---\n{log.read_text(errors='replace')[-3000:]}"
        ) from err
