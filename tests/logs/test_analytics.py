"""Events for APIs: analytics aliases, filters by either name, time ranges, pages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from workbench.core.errors import ValidationError
from workbench.logs import ALIASES, EventLog, find_events, to_api

T0 = datetime(2026, 3, 1)


@pytest.fixture
def log():
    events = EventLog()
    rows = []
    for i in range(30):
        rows.append(
            {
                "ray_id": f"{i:016x}",
                "datetime": T0 + timedelta(seconds=i),
                "zone_id": "z" * 32,
                "source": ("waf", "firewallManaged", "firewallRules")[i % 3],
                "action": "block" if i % 2 else "log",
                "rule_id": f"r{i % 4}",
                "match_index": 0,
                "client_ip": f"192.0.2.{i}",
                "country": "FR",
                "host": "example.com",
                "path": f"/p{i}",
                "query": "a=1",
                "method": "GET",
                "user_agent": "UA",
                "label": "benign",
                "kind": "firewall",
                "metadata": '{"threshold": 25}' if i == 0 else "{}",
            }
        )
    events.append(rows)
    return events


def test_to_api_gives_table_names_and_aliases(log):
    row = log.frame().iloc[0]
    event = to_api(row)
    for alias, column in ALIASES.items():
        assert event[alias] == event[column]
    assert event["rayName"] == "0000000000000000" and event["clientIP"] == "192.0.2.0"
    assert event["clientRequestHTTPHost"] == "example.com" and event["clientRequestPath"] == "/p0"
    assert event["clientRequestHTTPMethodName"] == "GET" and event["userAgent"] == "UA"
    assert event["clientCountryName"] == "FR" and event["matchIndex"] == 0
    assert event["datetime"] == "2026-03-01T00:00:00Z" and event["metadata"] == {"threshold": 25}
    assert event["score"] is None and event["rulesetId"] is None
    assert to_api(next(log.frame().itertuples(index=False)))["rayName"] == event["rayName"]


def test_filters_accept_table_names_aliases_and_short_names(log):
    by_alias = find_events(log, ruleId="r1", per_page=100)
    by_name = find_events(log, rule_id="r1", per_page=100)
    by_short = find_events(log, rule="r1", per_page=100)
    assert (
        [e["rayName"] for e in by_alias.items]
        == [e["ray_id"] for e in by_name.items]
        == [e["ray_id"] for e in by_short.items]
    )
    assert len(by_alias.items) == 8 and all(e["ruleId"] == "r1" for e in by_alias.items)
    both = find_events(log, source_in=["waf", "firewallRules"], action="block", per_page=100)
    assert {(e["source"], e["action"]) for e in both.items} == {
        ("waf", "block"),
        ("firewallRules", "block"),
    }
    assert find_events(log, clientIP="192.0.2.7").items[0]["path"] == "/p7"
    assert find_events(log, source_in=[]).result_info["total_count"] == 0


def test_time_ranges_in_every_spelling(log):
    a = find_events(
        log, datetime_geq=T0 + timedelta(seconds=10), datetime_lt=T0 + timedelta(seconds=20)
    )
    b = find_events(
        log, since="2026-03-01T00:00:10Z", until=datetime(2026, 3, 1, 0, 0, 19, tzinfo=UTC)
    )
    assert a.result_info["total_count"] == b.result_info["total_count"] == 10
    assert [e["rayName"] for e in a.items] == [e["rayName"] for e in b.items]
    assert a.items[0]["datetime"] == "2026-03-01T00:00:19Z"  # newest first


def test_pages_count_from_one_and_cover_everything_once(log):
    seen = []
    first = find_events(log, per_page=7)
    assert first.result_info == {
        "page": 1,
        "per_page": 7,
        "count": 7,
        "total_count": 30,
        "total_pages": 5,
    }
    for page in range(1, 6):
        seen += [e["rayName"] for e in find_events(log, page=page, per_page=7).items]
    assert len(seen) == len(set(seen)) == 30
    assert find_events(log, page=9, per_page=7).items == []
    oldest = find_events(log, order="datetime_ASC", per_page=5).items[0]
    assert oldest["rayName"] == "0000000000000000"
    with pytest.raises(ValidationError):
        find_events(log, per_page=2)


def test_bad_filters_are_refused_with_the_names_known(log):
    with pytest.raises(ValueError, match="unknown event field 'colour'"):
        find_events(log, colour="red")
    with pytest.raises(ValueError, match="order"):
        find_events(log, order="rayName_DESC")


def test_the_pipeline_events_go_through_to_api(zone_events):
    events = [to_api(r) for r in zone_events.to_dict("records")]
    assert all(len(e["rayName"]) == 16 and e["datetime"].endswith("Z") for e in events)


@pytest.fixture
def zone_events():
    from workbench import Workbench
    from workbench.replay import Pipeline
    from workbench.traffic.request import Request

    wb = Workbench(seed=1)
    zone = wb.create_zone("example.com", plan="enterprise")
    wb.firewall.create_rules(zone.id, [{"filter": {"expression": "ssl"}, "action": "log"}])
    events = Pipeline(wb, zone.id, systems="none").replay([Request()] * 3, progress=False).events
    assert isinstance(events, pd.DataFrame) and len(events) == 3
    return events
