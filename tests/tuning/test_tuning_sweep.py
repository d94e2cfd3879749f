"""The sweep from one breakdown equals a replay at each setting; explain matches the events."""

from __future__ import annotations

import numpy as np
import pytest
from tuning_helpers import migrated_zone, owasp_rule

from workbench.replay import Pipeline
from workbench.rulesets import MANAGED_PHASE, OWASP_THRESHOLD_RULE_ID
from workbench.traffic import generate

LEVELS = (1, 2, 3, 4)
THRESHOLDS = (25, 40, 60)


def test_sweep_equals_a_replay_at_each_setting_on_10000_requests():
    # The OWASP ruleset alone, as the sweep measures it.
    wb, zone = migrated_zone(body={"rules": [owasp_rule(4, 25)]})
    reqs = generate(10_000, seed=11)
    w = wb.tuning.whatif(zone.id, reqs, progress=False)
    sweep = wb.tuning.sweep(w, LEVELS, THRESHOLDS)
    assert len(sweep) == len(LEVELS) * len(THRESHOLDS) * len(set(w.requests.label))
    labels = np.array([r.label for r in reqs])
    for level in LEVELS:
        for threshold in THRESHOLDS:
            wb.migration.put_entrypoint(
                zone.id, MANAGED_PHASE, {"rules": [owasp_rule(level, threshold)]}
            )
            run = Pipeline(wb, zone.id).replay(reqs, progress=False)
            blocked = np.array([a == "block" for a in run.actions])
            got = sweep[(sweep.paranoia_level == level) & (sweep.threshold == threshold)]
            for row in got.itertuples():
                expected = int(blocked[labels == row.label].sum())
                assert row.blocked == expected, (level, threshold, row.label)
                assert row.total == int((labels == row.label).sum())
    # Something differs between settings, or the comparison proves little.
    assert sweep.blocked.nunique() > 3


def test_sweep_refuses_bad_settings(strict):
    _, _, w = strict
    with pytest.raises(ValueError, match="levels must be"):
        w.breakdown.sweep(levels=[5])
    with pytest.raises(ValueError, match="thresholds must be"):
        w.breakdown.sweep(thresholds=[0])
    with pytest.raises(ValueError, match="thresholds must be"):
        w.breakdown.sweep(thresholds=[2.5])
    assert set(w.breakdown.sweep(thresholds=[33]).threshold) == {33}


def test_explain_matches_the_replayed_score(strict, false_positives):
    wb, _, w = strict
    ray = false_positives[0]
    e = wb.tuning.explain(w, ray)
    event = w.new.events[
        (w.new.events.ray_id == ray) & (w.new.events.rule_id == OWASP_THRESHOLD_RULE_ID)
    ]
    assert e.blocked and e.reached
    assert e.total == int(event.score.iloc[0]) and e.threshold == 25 and e.paranoia_level == 4
    assert set(e.rules.columns) >= {"rule_id", "description", "score", "paranoia_level", "counted"}
    assert int(e.rules.score[e.rules.counted].sum()) == e.total
    assert any(c["change"].startswith("score threshold") for c in e.changes)
    assert "threshold 25" in str(e)


def test_explain_names_a_bad_request(strict):
    wb, _, w = strict
    with pytest.raises(ValueError, match="no replayed request has ray id"):
        wb.tuning.explain(w, "nope")
    with pytest.raises(ValueError, match="request index must be"):
        wb.tuning.explain(w, 10**6)
