"""The tuning panel in a real browser: Voila runs a small notebook, Chromium marks and applies.

    python -m pytest -v -p no:randomly -m browser tests/browser/test_browser_tuning_panel.py

Skipped when /usr/bin/chromium or Playwright is missing (``chromium_browser`` and
``browser_page`` come from conftest.py). A person's round over notebook 05's
imported log (a Pro zone not migrated yet): read the sweep, type another
threshold, mark the two previews of the blog's SQL article, read why they are
blocked, propose exceptions (the panel shows the narrowest safe one first), try the narrowest (it lets SQL injections through:
the panel asks to confirm), pick the narrow skip instead, apply, and read
before and after. The screenshots (tests/browser/screenshots/voila_tuning_*.png)
show each step; look at them after a layout change.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parents[2] / "notebooks" / "data"
SETUP = f"""\
import csv
from workbench import Workbench
from workbench.traffic.importers import read_combined_log
from workbench.widgets import TuningPanel

reqs = read_combined_log({str(DATA / "pro-zone-access.log")!r}, host="blog.example").requests
with open({str(DATA / "pro-zone-labels.csv")!r}) as f:
    for req, row in zip(reqs, csv.DictReader(f)):
        req.label = row["label"]
wb = Workbench(seed=0)
zone = wb.create_zone("blog.example", plan="pro")
panel = TuningPanel(wb, zone.id, reqs)
panel"""


@pytest.fixture
def voila_tuning(voila_panel):
    """Voila serving a one-cell notebook with the panel: its URL and log."""
    return voila_panel("tuning", SETUP)


def test_tuning_panel_in_chromium(voila_tuning, browser_page, panel_shot):
    from playwright.sync_api import expect

    url, log = voila_tuning
    page = browser_page

    shoot = panel_shot

    status = page.locator(".wb-tuning-status")
    sweep = page.locator(".wb-tuning-sweep-status")
    try:
        page.goto(url)
        expect(page.locator(".wb-panel-title")).to_contain_text("Tuning", timeout=120_000)
        expect(page.locator(".wb-tuning-summary")).to_contain_text("603 requests replayed")
        expect(sweep).to_contain_text("paranoia level 2, threshold 40: the OWASP ruleset blocks")
        expect(page.locator(".wb-tuning-chart svg")).to_be_visible()
        shoot("voila_tuning_opened")

        # Any whole-number threshold; a bad one is refused in words
        threshold = page.locator(".wb-tuning-threshold input")
        threshold.fill("abc")
        threshold.press("Enter")
        expect(sweep).to_contain_text("threshold must be a whole number from 1 to 10000, got abc")
        threshold.fill("33")
        threshold.press("Enter")
        expect(sweep).to_contain_text("paranoia level 2, threshold 33:")
        expect(page.locator(".wb-tuning-chart svg")).to_contain_text("threshold 33")
        threshold.fill("40")
        threshold.press("Enter")
        expect(sweep).to_contain_text("paranoia level 2, threshold 40:")

        # Mark the two previews of the SQL article: their breakdowns show
        blocked = page.locator(".wb-tuning-blocked select")
        options = blocked.locator("option")
        labels = [t.replace("\xa0", " ") for t in options.all_inner_texts()]
        previews = [i for i, t in enumerate(labels) if "Bound+parameters" in t]
        assert len(previews) == 2, labels[:5]
        blocked.select_option(index=previews)
        explain = page.locator(".wb-tuning-explain")
        expect(explain.locator(".wb-tuning-explain-one")).to_have_count(2)
        expect(explain).to_contain_text("of threshold 40 at paranoia level 2")
        expect(explain).to_contain_text("SQLi - Tautology")

        # Candidates, narrowest first: the first lets SQL injections through, so the panel
        # shows the narrowest one that lets no labelled attack through; pick the first to see why
        page.locator("button.wb-tuning-propose").click()
        expect(status).to_contain_text("candidates for 2 marked requests, narrowest first")
        expect(page.locator(".wb-tuning-candidates tbody tr").first).to_contain_text("⚠")
        expect(page.locator(".wb-tuning-blast")).not_to_contain_text("labelled attack")
        page.locator(".wb-tuning-pick select").select_option(index=0)
        expect(page.locator(".wb-tuning-blast")).to_contain_text("labelled attack")
        first_row = page.locator(".wb-tuning-blast-rows tbody tr").first
        expect(first_row).to_contain_text("⚠ attack")
        shoot("voila_tuning_candidates")

        # Apply the risky one: refused until confirmed
        page.locator("button.wb-tuning-apply").click()
        expect(status).to_contain_text("not applied: candidate 1 lets 6 labelled attacks through")
        expect(page.locator(".wb-tuning-confirm")).to_be_visible()
        expect(page.locator("button.wb-tuning-confirm-apply")).to_be_visible()
        shoot("voila_tuning_confirm")

        # Pick the narrow skip instead (it lets no attack through) and apply it
        picker = page.locator(".wb-tuning-pick select")
        picks = [t.replace("\xa0", " ") for t in picker.locator("option").all_inner_texts()]
        safe = next(i for i, t in enumerate(picks) if "skip" in t and "⚠" not in t)
        picker.select_option(index=safe)
        expect(page.locator(".wb-tuning-confirm")).to_be_hidden()
        expect(page.locator(".wb-tuning-code")).to_contain_text('"action": "skip"')
        page.locator("button.wb-tuning-apply").click()
        expect(status).to_contain_text(
            f"applied candidate {safe + 1} (skip) as the zone's tuning draft", timeout=90_000
        )
        expect(status).to_contain_text("3 changed, as predicted")
        expect(status.locator(".wb-status-success")).to_be_visible()
        after = page.locator(".wb-tuning-before-after")
        expect(after.locator(".wb-tuning-before")).to_be_visible()
        expect(after.locator(".wb-tuning-after")).to_be_visible()
        expect(after.locator(".wb-tuning-changed tbody tr")).to_have_count(3)
        shoot("voila_tuning_applied")
        shoot("voila_tuning_applied_narrow", width=760)
    except Exception:
        print(log.read_text(errors="replace")[-4000:])
        raise
