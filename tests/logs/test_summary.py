"""The summaries the canned queries read give the same frames as the views over the whole table."""

from __future__ import annotations

import pandas as pd

from workbench.logs import (
    EventLog,
    actions_over_time,
    add_synthetic_events,
    legit_blocked_by_new,
    new_allows_old_blocked,
    rule_comparison,
    top_rules,
)
from workbench.logs.schema import TABLE
from workbench.logs.views import VIEWS


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    # any_value(description) may pick another of a rule's descriptions; everything else is equal.
    pd.testing.assert_frame_equal(
        a.drop(columns="description", errors="ignore"),
        b.drop(columns="description", errors="ignore"),
    )


def _check(log: EventLog) -> None:
    for name, function in (
        ("new_allows_old_blocked", new_allows_old_blocked),
        ("legit_blocked_by_new", legit_blocked_by_new),
        ("rule_comparison", rule_comparison),
    ):
        _same(function(log), log.query(f"SELECT * FROM ({VIEWS[name]})"))
    by_table = log.query(
        f"""SELECT source, ruleset_id, rule_id, count(*) AS events, min(datetime) AS first_seen,
            max(datetime) AS last_seen FROM {TABLE} GROUP BY ALL
            ORDER BY events DESC, source, rule_id LIMIT 25"""
    )
    _same(top_rules(log, 25), by_table)
    by_table = log.query(
        f"""SELECT time_bucket(INTERVAL 7 SECOND, datetime) AS bucket, action, count(*) AS events
            FROM {TABLE} GROUP BY ALL ORDER BY bucket, action"""
    )
    _same(actions_over_time(log, "7 seconds"), by_table)


def test_summaries_agree_with_the_table_over_many_writes_and_split_rays() -> None:
    log = EventLog()
    for seed in range(3):
        add_synthetic_events(log, 20_000, seed=seed)
    frame = log.frame()
    # The same events again, each ray's events split over two writes in both orders.
    log2 = EventLog()
    log2.append(frame[frame.match_index == 0])
    log2.append(frame[frame.match_index == 1])
    log3 = EventLog()
    log3.append(frame[frame.match_index == 1])
    log3.append(frame[frame.match_index == 0])
    for each in (log, log2, log3):
        _check(each)
    _same(new_allows_old_blocked(log2), new_allows_old_blocked(log))
    assert len(new_allows_old_blocked(log)) > 100
    assert legit_blocked_by_new(log).requests.sum() > 1000


def test_summaries_follow_direct_inserts_and_deletes() -> None:
    log = EventLog()
    add_synthetic_events(log, 10_000, seed=4)
    log.con.execute(
        f"INSERT INTO {TABLE} SELECT * REPLACE (ray_id || 'x' AS ray_id) FROM {TABLE}"
    ).fetchall()
    _check(log)
    log.con.execute(f"DELETE FROM {TABLE} WHERE source = 'waf'").fetchall()
    _check(log)
    assert new_allows_old_blocked(log).empty


def test_legit_blocked_with_other_labels_counts_each_ray_once() -> None:
    log = EventLog()
    event = {
        "datetime": "2026-01-01T00:00:00Z",
        "source": "firewallManaged",
        "rule_id": "n1",
        "action": "block",
        "path": "/a",
    }
    log.append([{**event, "ray_id": "r1", "label": "benign", "match_index": 0}])
    log.append(
        [
            {**event, "ray_id": "r1", "label": "api", "match_index": 1},
            {**event, "ray_id": "r2", "label": "sqli", "match_index": 0},
        ]
    )
    got = legit_blocked_by_new(log, labels=["benign", "api", "sqli"])
    assert got[["rule_id", "requests", "benign", "api", "sqli"]].values.tolist() == [
        ["n1", 2, 1, 1, 1]
    ]
    assert legit_blocked_by_new(log).requests.tolist() == [1]


def test_summaries_rebuild_after_a_delete_followed_by_more_inserts() -> None:
    log = EventLog()
    add_synthetic_events(log, 10_000, seed=5)
    log.con.execute(f"DELETE FROM {TABLE} WHERE source = 'waf'").fetchall()
    add_synthetic_events(log, 20_000, seed=6)
    _check(log)


def test_batches_appended_in_a_block_are_folded_once_at_its_end_and_read_inside_it() -> None:
    frame = EventLog()
    add_synthetic_events(frame, 5_000, seed=4)
    events = frame.frame()
    log = EventLog()
    with log.appending():
        log.append(events[events.match_index == 0])
        # Nothing folded yet: the summaries still cover no event.
        assert log.con.execute("SELECT kept FROM wb_summary.state").fetchall() == [(0,)]
        _check(log)  # a canned query inside the block folds what is there first
        log.append(events[events.match_index == 1])
    assert log.con.execute("SELECT kept FROM wb_summary.state").fetchall() == [(len(events),)]
    _check(log)
    _same(new_allows_old_blocked(log), new_allows_old_blocked(frame))
