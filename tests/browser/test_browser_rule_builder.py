"""The rule builder in a real browser: Voila runs a small notebook, Chromium types and clicks.

    python -m pytest -v -m browser tests/browser/test_browser_rule_builder.py

Skipped when /usr/bin/chromium or Playwright is missing (fixtures in conftest.py).
The screenshots (tests/browser/screenshots/voila_rule_builder_*.png) show the
whole panel after each step; look at them after a layout change.
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


def test_voila_rule_builder_both_sequences(voila_rule_builder, browser_page, panel_shot):
    from playwright.sync_api import expect

    url, log = voila_rule_builder
    page = browser_page

    shoot = panel_shot

    try:
        page.goto(url)
        value = page.locator(".wb-rb-value input").first
        expect(value).to_be_visible(timeout=45_000)
        expect(page.locator(".wb-panel-title")).to_contain_text("Rule builder")
        expect(page.locator(".wb-panel-title")).to_contain_text("drives filters and firewall rules")

        # The field box: a type-ahead list, the common fields first.
        field = page.locator(".wb-rb-field input").first
        options = page.locator(".wb-rb-field datalist option")
        assert options.first.get_attribute("value") == "http.request.uri.path"
        assert options.nth(1).get_attribute("value") == "ip.src"
        hint = page.locator(".wb-rb-syntax").first
        field.fill("countr")
        expect(hint).to_contain_text("'countr' is not a whole name: 2 fields contain it")
        expect(hint).to_contain_text("ip.src.country, ip.geoip.country")
        field.fill("ip.src.cuntry")
        expect(hint).to_contain_text("'ip.src.cuntry' is unknown")
        field.fill("http.request.uri.path")
        field.press("Enter")
        expect(hint).to_contain_text("eq takes text, compared whole and exactly")

        # The value syntax follows the operator.
        operator = page.locator(".wb-rb-operator select").first
        operator.select_option("in")
        expect(hint).to_contain_text("in takes values separated by spaces or commas")
        operator.select_option("eq")
        expect(hint).to_contain_text("eq takes text")

        value.fill("/admin")
        value.press("Enter")
        preview = page.locator(".wb-rb-preview")
        expect(preview).to_contain_text('http.request.uri.path eq "/admin"')
        expect(page.locator(".wb-rb-matches")).to_contain_text("match")

        # The recommended two calls: the status names the rule and the filter.
        create = page.locator("button.wb-rb-create")
        expect(create).to_have_text("Create filter, then rule")
        box = create.bounding_box()
        assert box is not None
        assert create.evaluate("b => b.scrollWidth <= b.clientWidth"), "label cut"
        create.click()
        outcome = page.locator(".wb-rb-outcome")
        expect(outcome).to_contain_text("created rule", timeout=20_000)
        expect(outcome).to_contain_text("(created filter)")
        expect(outcome.locator(".wb-status-success")).to_be_visible()
        http = page.locator(".wb-rb-http")
        newest = http.locator("details.wb-exchange").first
        expect(newest.locator("summary")).to_contain_text(
            "/firewall/rules → 200  (two calls: created)"
        )
        expect(newest).to_contain_text('curl -X POST "$CF_BASE/zones/')
        expect(http).to_contain_text("python -m workbench serve")
        expect(http.locator("details.wb-exchange")).to_have_count(2)
        expect(page.locator(".wb-rb-filters")).to_contain_text("5 of 5 active rules")
        shoot("voila_rule_builder_created")

        # A changed input greys the outcome out.
        value.fill("/login")
        value.press("Enter")
        expect(preview).to_contain_text('"/login"')
        expect(outcome).to_contain_text("inputs changed since: run again")

        # The zone is now at its quota: the one-call form leaves the filter behind.
        page.locator("button.wb-rb-one-call").click()
        expect(outcome).to_contain_text("partial: filter", timeout=20_000)
        expect(outcome).to_contain_text("was created but the rule was refused (10200")
        expect(outcome.locator(".wb-status-partial")).to_be_visible()
        expect(http.locator("details.wb-exchange").first).to_contain_text("10200")
        expect(http.locator("details.wb-exchange")).to_have_count(3)
        expect(page.locator(".wb-rb-filters")).to_contain_text("(no rule)")

        # A priority that is not a whole number is stopped in the panel, naming the field.
        priority = page.locator(".wb-rb-priority input")
        priority.fill("high")
        priority.press("Enter")
        expect(page.locator(".wb-rb-priority-hint")).to_contain_text(
            "priority takes a whole number"
        )
        create.click()
        expect(outcome).to_contain_text("not sent: priority takes a whole number")
        expect(http.locator("details.wb-exchange")).to_have_count(3)  # nothing sent

        # -3 is an integer: sent, and the API refuses the rule; the filter exists.
        priority.fill("-3")
        priority.press("Enter")
        create.click()
        expect(outcome).to_contain_text("exists but the rule was refused (10014", timeout=20_000)
        expect(outcome).to_contain_text("then 'Create filter, then rule' creates it on that filter")
        # The filter is named once in the line (issue 28, item 8).
        shown = outcome.inner_text()
        filter_id = shown.split("partial: filter ", 1)[1].split()[0]
        assert shown.count(filter_id) == 1, shown
        expect(http.locator("details.wb-exchange").first).to_contain_text('"priority": -3')
        shoot("voila_rule_builder_partial")
        shoot("voila_rule_builder_narrow", width=760)

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
