"""What-if: both sides replayed, the zone untouched, on every plan."""

from __future__ import annotations

import duckdb
import pytest

from workbench import Workbench
from workbench.replay import Pipeline
from workbench.rulesets import CUSTOM_PHASE, MANAGED_PHASE
from workbench.traffic import generate
from workbench.tuning import CHANGES

COLUMNS = [
    "ray_id",
    "label",
    "method",
    "host",
    "path",
    "query",
    "old_action",
    "new_action",
    "change",
]


def _state(wb, zone):
    return (
        wb.zone(zone.id).to_dict(),
        wb.waf_legacy.config(zone.id),
        wb.rulesets.find_entrypoint(zone.id, MANAGED_PHASE),
        wb.rulesets.find_entrypoint(zone.id, CUSTOM_PHASE),
        wb.migration.status(zone.id).to_dict(),
        wb.migration.history(zone.id),
    )


@pytest.mark.parametrize("plan", ["pro", "business", "enterprise"])
def test_whatif_leaves_the_zone_untouched_on_every_plan(plan):
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan=plan)
    before = _state(wb, zone)
    w = wb.tuning.whatif(zone.id, generate(400, seed=4), progress=False)
    assert _state(wb, zone) == before
    assert list(w.requests.columns) == COLUMNS
    assert len(w.requests) == 400
    assert set(w.requests.change) <= set(CHANGES)
    # The proposed configuration blocks attacks the old WAF let through (CMS probes).
    assert (w.requests.change == "newly blocked").sum() > 0


def test_old_side_is_the_zone_as_it_runs_and_new_side_the_proposed_config():
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan="pro")
    reqs = generate(300, seed=5)
    w = wb.tuning.whatif(zone.id, reqs, progress=False)
    now = Pipeline(wb, zone.id).replay(reqs, progress=False)
    assert [a or "pass" for a in now.actions] == list(w.requests.old_action)
    # Migrating to the proposed configuration gives exactly the new side.
    wb.migration.put_entrypoint(
        zone.id,
        MANAGED_PHASE,
        wb.migration.config(zone.id).result(),
        waf_migration="pending",
        phase_two="1",
    )
    after = Pipeline(wb, zone.id).replay(reqs, progress=False)
    assert [a or "pass" for a in after.actions] == list(w.requests.new_action)


def test_summary_by_rule_and_parquet(tmp_path):
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan="business")
    w = wb.tuning.whatif(zone.id, generate(300, seed=6), progress=False)
    summary = w.summary()
    assert int(summary.loc["total", "total"]) == 300
    newly = int((w.requests.change == "newly blocked").sum())
    by_rule = w.by_rule()
    assert int(by_rule[by_rule.change == "newly blocked"].requests.sum()) == newly
    assert set(by_rule.side) <= {"new", "old"}
    path = tmp_path / "w.parquet"
    w.to_parquet(path)
    back = duckdb.sql(f"SELECT * FROM read_parquet('{path}')").df()
    assert list(back.columns) == COLUMNS and back.ray_id.tolist() == w.requests.ray_id.tolist()


def test_both_sides_share_ray_ids():
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan="pro")
    w = wb.tuning.whatif(zone.id, generate(50, seed=7), progress=False)
    assert w.old.ray_ids == w.new.ray_ids == list(w.requests.ray_id)


def test_ended_by_names_the_event_that_ended_each_request_on_each_side():
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan="enterprise")
    w = wb.tuning.whatif(zone.id, generate(400, seed=4), progress=False)
    r = w.requests
    for side, actions in (("new", r.new_action), ("old", r.old_action)):
        events = (w.new if side == "new" else w.old).events
        for ray, action in zip(r.ray_id, actions, strict=True):
            ended = w.ended_by(ray, side)
            if action in ("block", "challenge", "js_challenge", "managed_challenge"):
                source, rule_id, _ = ended
                mine = events[(events.ray_id == ray) & (events.action == action)]
                assert (source, rule_id) == (mine.source.iloc[-1], mine.rule_id.iloc[-1])
            else:
                assert ended is None
    with pytest.raises(ValueError, match='side must be "new" or "old"'):
        w.ended_by(r.ray_id.iloc[0], "both")
