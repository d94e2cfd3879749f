"""The event log: schema, batch appends, Parquet round trip, views."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.logs import COLUMNS, SCHEMA, SOURCE_VIEWS, VIEWS, EventLog, add_synthetic_events
from workbench.logs.schema import empty_frame, normalise


def _event(ray, source="waf", action="block", rule="100015", index=0, **extra):
    return {
        "ray_id": ray,
        "datetime": "2026-01-01T00:00:00Z",
        "zone_id": "z" * 32,
        "action": action,
        "source": source,
        "rule_id": rule,
        "match_index": index,
        "kind": "firewall",
        **extra,
    }


def test_the_table_has_the_documented_columns_and_types():
    log = EventLog()
    described = log.query("DESCRIBE security_events")
    assert (
        described.column_name.tolist()
        == list(COLUMNS)
        == [
            "ray_id",
            "datetime",
            "zone_id",
            "action",
            "source",
            "rule_id",
            "ruleset_id",
            "description",
            "client_ip",
            "country",
            "host",
            "path",
            "query",
            "method",
            "user_agent",
            "score",
            "paranoia_level",
            "label",
            "kind",
            "match_index",
            "metadata",
        ]
    )
    assert dict(zip(described.column_name, described.column_type, strict=True)) == SCHEMA
    assert SCHEMA["datetime"] == "TIMESTAMP" and SCHEMA["match_index"] == "INTEGER"


def test_batches_append_and_missing_columns_read_as_null():
    log = EventLog()
    assert log.append(pd.DataFrame([_event("a"), _event("b", score=40)])) == 2
    assert log.append([_event("c", metadata='{"k": 1}')]) == 1
    assert log.append(pd.DataFrame()) == 0
    frame = log.frame()
    assert frame.ray_id.tolist() == ["a", "b", "c"] and log.count() == 3
    assert frame.score.isna().tolist() == [True, False, True]
    assert frame.description.isna().all()
    with pytest.raises(ValueError, match="unknown event columns"):
        log.append([{"ray_id": "x", "rayName": "x"}])


def test_parquet_round_trip_keeps_every_value_and_type(tmp_path):
    log = EventLog()
    add_synthetic_events(log, 2_000, seed=5)
    log.append(
        [
            _event(
                "zz",
                source="firewallManaged",
                ruleset_id="r" * 32,
                description="é ü",
                score=41,
                paranoia_level=2,
                metadata='{"contributing": []}',
                label="sqli",
                query="a=1&b=\u00e9",
                user_agent="UA",
            )
        ]
    )
    path = log.to_parquet(tmp_path / "out" / "events.parquet")
    back = EventLog.from_parquet(path)
    assert back.count() == log.count() == 2_001
    pd.testing.assert_frame_equal(back.frame(), log.frame())
    assert back.query("DESCRIBE security_events").column_type.tolist() == list(SCHEMA.values())
    assert back.load_parquet(path) == 2_001  # appending a second copy


def test_the_canned_queries_are_named_views_too():
    log = EventLog()
    log.append(
        [_event("a", "firewallManaged", "log", "n1", 1), _event("a", "waf", "block", "1", 0)]
    )
    assert log.query("SELECT ray_id, old_rules FROM new_allows_old_blocked").values.tolist() == [
        ["a", "1"]
    ]
    assert set(VIEWS) >= {
        "new_allows_old_blocked",
        "legit_blocked_by_new",
        "rule_comparison",
        *SOURCE_VIEWS,
    }
    assert log.query("SELECT rule_id FROM rule_comparison ORDER BY rule_id").rule_id.tolist() == [
        "1",
        "n1",
    ]


def test_views_split_the_events_by_source():
    log = EventLog()
    log.append(
        [
            _event("a", "waf"),
            _event("b", "firewallManaged"),
            _event("c", "firewallRules"),
            _event("d", "firewallCustom"),
        ]
    )
    got = {view: log.query(f"select ray_id from {view}").ray_id.tolist() for view in SOURCE_VIEWS}
    assert got == {
        "firewall_rule_events": ["c"],
        "custom_rule_events": ["d"],
        "old_waf_events": ["a"],
        "new_waf_events": ["b"],
    }


def test_normalise_gives_one_dtype_per_column():
    frame = normalise(pd.DataFrame([_event("a", score=3)]))
    assert list(frame.columns) == list(COLUMNS)
    assert str(frame.score.dtype) == "Int32" and str(frame.datetime.dtype) == "datetime64[ns]"
    assert frame.datetime.iloc[0] == pd.Timestamp("2026-01-01")
    assert empty_frame().dtypes.equals(normalise(pd.DataFrame([_event("a")])).dtypes)


def test_a_log_on_a_file_keeps_its_events(tmp_path):
    import duckdb

    path = tmp_path / "events.duckdb"
    log = EventLog(duckdb.connect(str(path)))
    log.append([_event("a")])
    log.con.close()
    assert EventLog(duckdb.connect(str(path))).count() == 1


def _threshold(log):
    return log.query("SELECT current_setting('checkpoint_threshold') AS t").t[0]


def test_appending_holds_checkpoints_and_restores_the_setting_even_on_error():
    log = EventLog()
    before = _threshold(log)
    with log.appending():
        assert _threshold(log) != before
        for i in range(3):
            log.append([_event(f"r{i}")])
    assert _threshold(log) == before and log.count() == 3
    with pytest.raises(RuntimeError), log.appending():
        log.append([_event("r3")])
        raise RuntimeError("stop")
    assert _threshold(log) == before and log.count() == 4
    assert log.query("SELECT count(*) AS n FROM old_waf_events").n[0] == 4


def test_reading_the_connection_writes_what_the_feeds_buffered_first():
    log = EventLog()

    class Feed:
        def __init__(self):
            self.rows = [1, 2]

        def flush(self):
            with log.lock:
                for row in self.rows:
                    log._con.execute("INSERT INTO fed VALUES (?)", [row]).fetchall()
                self.rows = []

    log.con.execute("CREATE TABLE fed (x INTEGER)").fetchall()
    feed = Feed()
    assert log.add_feed("fed", feed) is feed and log.feed("fed") is feed
    assert log.add_feed("fed", Feed()) is feed  # the first feed of a table stays
    assert log.query("SELECT count(*) AS n FROM fed").n.tolist() == [2]
    feed.rows = [3]
    assert log.con.execute("SELECT sum(x) FROM fed").fetchall() == [(6,)]
    assert log.feed("other") is None
