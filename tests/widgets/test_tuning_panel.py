"""The TuningPanel, driven headlessly with ``button.click()`` and value setting.

The traffic is notebook 05's imported log (notebooks/data/pro-zone-access.log,
nginx combined format, with the team's labels): a Pro zone that has not
migrated, whose blog editors preview articles quoting SQL and HTML. Each test
reads what a person would read: status text and kind, table cells, the
confirmation step, the before/after tables.
"""

from __future__ import annotations

import csv
import html
from pathlib import Path

import pytest

from workbench import Workbench
from workbench.traffic.importers import read_combined_log
from workbench.widgets import TuningPanel
from workbench.widgets.parts import Panel

DATA = Path(__file__).resolve().parents[2] / "notebooks" / "data"
ARTICLE = "Bound+parameters"


def imported() -> list:
    """The log's requests, each labelled from the triage file."""
    reqs = read_combined_log(DATA / "pro-zone-access.log", host="blog.example").requests
    with open(DATA / "pro-zone-labels.csv", encoding="utf-8") as f:
        for req, row in zip(reqs, csv.DictReader(f), strict=True):
            req.label = row["label"]
    return reqs


def open_panel() -> tuple[Workbench, str, TuningPanel]:
    wb = Workbench(seed=0)
    zone = wb.create_zone("blog.example", plan="pro")
    return wb, zone.id, TuningPanel(wb, zone.id, imported())


def text(widget) -> str:
    return html.unescape(widget.value)


def previews(panel: TuningPanel) -> list[str]:
    """Ray ids of the editor's previews of the SQL article (the false positives)."""
    return [ray for label, ray in panel.blocked.options if ARTICLE in label]


@pytest.fixture(scope="module")
def opened():
    return open_panel()


def test_opens_on_the_whatif_the_sweep_and_the_blocked_requests(opened):
    _, _, panel = opened
    assert isinstance(panel, Panel)
    assert "603 requests replayed" in text(panel.summary)
    assert "newly blocked" in text(panel.summary)
    # The zone's proposed configuration: paranoia level 2, threshold 40.
    assert (panel.level.value, panel.threshold.value) == (2, "40")
    assert panel.sweep_status.kind == "success"
    assert panel.sweep_status.text.startswith("paranoia level 2, threshold 40: the OWASP ruleset")
    assert "<svg" in panel.chart.value and "picked: PL2, threshold 40" in text(panel.chart)
    labels = [label for label, _ in panel.blocked.options]
    # Benign requests come first: the three editor previews lead the list, attacks come last.
    assert all("· benign ·" in label for label in labels[:3])
    assert len(previews(panel)) == 2
    assert "· sqli ·" in labels[-1]
    assert "repr" not in repr(panel) and "Run this cell" in repr(panel)


def test_any_integer_threshold_and_a_clear_refusal(opened):
    _, _, panel = opened
    panel.threshold.value = "33"
    panel.sweep_button.click()
    assert panel.sweep_status.text.startswith("paranoia level 2, threshold 33:")
    assert "threshold 33" in text(panel.chart)
    panel.level.value = 4
    assert panel.sweep_status.text.startswith("paranoia level 4, threshold 33:")
    cells = text(panel.sweep_table)
    assert "<td>benign</td>" in cells and "<td>sqli</td>" in cells
    for bad in ("abc", "0", "10001", "-5"):
        panel.threshold.value = bad
        panel.sweep_button.click()
        assert panel.sweep_status.kind == "refused"
        assert panel.sweep_status.text.startswith(
            "threshold must be a whole number from 1 to 10000"
        )
    panel.threshold.value, panel.level.value = "40", 2
    assert panel.sweep_status.kind == "success"


def test_marking_shows_why_and_proposes_candidates_narrowest_first(opened):
    _, _, panel = opened
    panel.propose_button.click()
    assert panel.status.kind == "refused"
    assert panel.status.text == "mark at least one wrongly blocked request in the list first"
    panel.blocked.value = tuple(previews(panel))
    assert panel.status.kind == "stale"
    shown = text(panel.explain)
    assert shown.count("OWASP score") == 2 and "of threshold 40 at paranoia level 2" in shown
    assert "ended by firewallManaged rule" in shown and "SQLi - Tautology" in shown
    panel.propose_button.click()
    assert panel.status.kind == "success"
    assert "candidates for 2 marked requests, narrowest first" in panel.status.text
    kinds = [panel.candidates[i].kind for _, i in panel.pick.options]
    assert kinds[0] == "rule" and "skip" in kinds
    table = text(panel.candidates_table)
    assert "⚠" in table
    # The narrowest (a rule set to log) lets SQL injections through: flagged, and not the one
    # picked first, which is the narrowest that lets no labelled attack through.
    assert "⚠ lets attacks through" in panel.pick.options[0][0]
    first_safe = next(
        i for _, i in panel.pick.options if not panel.candidates[i].lets_attack_through
    )
    assert panel.pick.value == first_safe > 0
    assert "labelled attack" not in text(panel.blast)
    panel.pick.value = 0
    blast = text(panel.blast)
    assert "labelled attack" in blast and "applying it needs an explicit confirmation" in blast
    first_row = blast.split("wb-tuning-blast-rows")[1].split("<tbody>")[1].split("</tr>")[0]
    assert "⚠ attack" in first_row and "sqli" in first_row
    json_tab, v5, v4 = panel.code.pages
    assert '"action": "execute"' in text(json_tab)
    assert 'resource "cloudflare_ruleset"' in text(v5) and 'resource "cloudflare_ruleset"' in text(
        v4
    )


def test_a_risky_candidate_needs_an_explicit_confirmation():
    wb, zone_id, panel = open_panel()
    panel.blocked.value = tuple(previews(panel))
    panel.propose_button.click()
    panel.pick.value = 0
    before = wb.tuning.config(zone_id)
    assert panel.chosen().lets_attack_through
    panel.apply_button.click()
    assert panel.status.kind == "refused"
    assert panel.status.text.startswith("not applied: candidate 1 lets 6 labelled attacks through")
    assert panel.confirm.layout.display == "flex"
    assert "sqli 6" in text(panel.confirm_note)
    assert panel.before_after.value == ""
    panel.confirm_button.click()
    assert panel.status.kind == "refused"
    assert panel.status.text == "tick 'I accept letting these attacks through' first"
    assert wb.tuning.config(zone_id) == before, "nothing is applied before the confirmation"
    panel.accept.value = True
    panel.confirm_button.click()
    assert panel.status.kind == "success", panel.status.text
    assert panel.status.text.startswith("applied candidate 1 (rule) as the zone's tuning draft")
    assert panel.confirm.layout.display == "none"
    assert "as the blast radius predicted" in text(panel.before_after)


def test_apply_the_narrow_skip_and_see_before_and_after():
    wb, zone_id, panel = open_panel()
    marked = previews(panel)
    panel.blocked.value = tuple(marked)
    panel.propose_button.click()
    safe = next(i for _, i in panel.pick.options if not panel.candidates[i].lets_attack_through)
    panel.pick.value = safe
    assert panel.candidates[safe].kind == "skip"
    panel.apply_button.click()
    assert panel.status.kind == "success", panel.status.text
    assert "as the zone's tuning draft" in panel.status.text
    # The two previews and one more benign request of the editor on the same page (its blast
    # radius, which the candidate declared).
    assert "requests: 3 changed, as predicted" in panel.status.text
    shown = text(panel.before_after)
    assert "<b>before</b>" in shown and "<b>after</b>" in shown
    for ray in marked:
        assert ray in shown
    # The draft is what the migration would deploy, and the list no longer holds the previews.
    rules = wb.tuning.config(zone_id)["rules"]
    assert rules[0]["action"] == "skip"
    assert previews(panel) == []
    # Nothing of the applied candidate stays on show as if it were still to apply.
    assert panel.pick.options == () and all(box.value == "" for box in panel.code.pages)
    assert "603 requests replayed" in text(panel.summary) and "(draft)" in text(panel.summary)


def test_bad_arguments_are_named():
    wb = Workbench(seed=0)
    zone = wb.create_zone("blog.example", plan="pro")
    with pytest.raises(ValueError, match="^requests: give the traffic to replay"):
        TuningPanel(wb, zone.id)


def test_the_sweep_chart_scales_to_its_data_not_to_one_hundred_percent(opened):
    import re

    from workbench.widgets.tuning_charts import sweep_chart, sweep_points

    wb, _, panel = opened
    sweep = wb.tuning.sweep(panel.whatif, levels=[1, 2, 3, 4], thresholds=[25, 40])
    spec = sweep_chart(sweep, 2, 40).to_dict()
    scale = spec["layer"][0]["encoding"]["y"]["scale"]
    assert "domain" not in scale and scale["domainMin"] == 0
    top = max(p["share"] for p in sweep_points(sweep))
    panel.draw_sweep()
    ticks = [int(t) for t in re.findall(r">(\d+)%</text>", panel.chart.value)]
    assert ticks and max(ticks) + 10 > 100 * top  # the top tick sits near the largest share
    if top < 0.5:
        assert max(ticks) < 100, "the axis stops a little above the data"
