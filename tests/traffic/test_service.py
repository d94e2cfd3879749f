"""``wb.traffic``: submitted requests, replays into the Workbench's log, the zone's events.

The zone (traffic_helpers.py) has firewall rules and both WAFs on stand-in
catalogues, so the events here do not move when the real catalogues change.
"""

from __future__ import annotations

import threading

import pytest
from traffic_helpers import NEW_IDS, workbench_with_zone

from workbench.core.errors import ValidationError
from workbench.logs import ALIASES, EventLog, to_api
from workbench.replay import Pipeline
from workbench.traffic import generate
from workbench.traffic.service import ALLOWED, TrafficService, query_filters
from workbench.traffic.submitted import MAX_REQUESTS, read_submitted

UNION = "https://example.com/search?q=1+union+select+2"  # new: block (sqli)
WP = "https://example.com/wp-admin/"  # new: log (wp), old: simulate -> log
ITEMS = [
    {"method": "GET", "url": WP, "headers": {"User-Agent": "Mozilla/5.0"}, "country": "FR"},
    {"method": "GET", "url": UNION, "client_ip": "198.51.100.7"},
    {"url": "https://example.com/"},
    {"method": "POST", "url": "https://example.com/form", "body": "a=b", "label": "benign"},
]


def test_the_service_is_made_once_per_workbench():
    wb, _ = workbench_with_zone()
    assert isinstance(wb.traffic, TrafficService) and wb.traffic is wb.traffic
    assert isinstance(wb.traffic.log, EventLog) and wb.traffic.log.count() == 0


def test_submitted_requests_get_exactly_the_per_request_paths_events():
    wb, zid = workbench_with_zone(seed=4)
    twin, twin_zid = workbench_with_zone(seed=4)
    done = wb.traffic.submit(zid, ITEMS)
    run = Pipeline(twin, twin_zid).replay(read_submitted(ITEMS), path="request", progress=False)
    assert [d.ray_id for d in done] == run.ray_ids
    assert [d.action for d in done] == [a or ALLOWED for a in run.actions]
    expected = [to_api(e) for e in run.events.to_dict("records")]
    assert [e for d in done for e in d.events] == expected
    # ... and the log holds the same events.
    assert [to_api(e) for e in wb.traffic.log.frame().to_dict("records")] == expected


def test_validation_mode_events_share_the_ray_new_first():
    wb, zid = workbench_with_zone()
    wp, union = wb.traffic.submit(zid, ITEMS[:2])
    assert [(e["source"], e["action"], e["rule_id"]) for e in wp.events] == [
        ("firewallManaged", "log", NEW_IDS["wp"]),
        ("waf", "log", "100004"),
    ]
    assert {e["rayName"] for e in wp.events} == {wp.ray_id} and wp.action == ALLOWED
    assert [e["source"] for e in union.events] == ["firewallManaged"]
    assert union.action == "block"


def test_outcomes_render_as_the_api_answers():
    wb, zid = workbench_with_zone()
    [done] = wb.traffic.submit(zid, ITEMS[:1])
    shown = done.to_dict()
    assert list(shown) == ["ray_id", "datetime", "action", "events"]
    assert shown["datetime"] == "2026-01-01T00:00:00Z"
    event = shown["events"][0]
    assert all(event[alias] == event[column] for alias, column in ALIASES.items())
    assert event["kind"] == "firewall"


def test_a_bad_item_runs_nothing():
    wb, zid = workbench_with_zone()
    with pytest.raises(ValidationError, match=r"requests\[2\]\.url must be text"):
        wb.traffic.submit(zid, [*ITEMS[:2], {"url": 1}])
    assert wb.traffic.log.count() == 0
    with pytest.raises(ValidationError, match="at most 1,000 requests"):
        wb.traffic.submit(zid, [{"url": "/"}] * (MAX_REQUESTS + 1))


def test_replays_go_into_the_same_log_and_agree_with_the_pipeline():
    wb, zid = workbench_with_zone(seed=2)
    twin, twin_zid = workbench_with_zone(seed=2)
    traffic = generate(300, seed=5)
    run = wb.traffic.replay(zid, traffic, progress=False)
    alone = Pipeline(twin, twin_zid).replay(traffic, progress=False)
    assert run.ray_ids == alone.ray_ids
    assert wb.traffic.log.count() == len(run.events) == len(alone.events)
    page = wb.traffic.events(zid, per_page=1000, order="datetime_ASC")
    assert page.result_info["total_count"] == len(run.events)
    assert {e["ray_id"] for e in page.items} <= set(run.ray_ids)


def test_events_of_a_zone_only_with_filters_by_either_name():
    wb, zid = workbench_with_zone()
    other = wb.create_zone("other.example", plan="enterprise")
    wb.firewall.create_rules(
        other.id,
        [{"filter": {"expression": "ssl or not ssl"}, "action": "log", "description": "all"}],
    )
    wb.traffic.submit(zid, ITEMS)
    wb.traffic.submit(other.id, [{"url": "https://other.example/"}])
    mine = wb.traffic.events(zid, per_page=100)
    assert {e["zone_id"] for e in mine.items} == {zid}
    theirs = wb.traffic.events(other.id)
    assert [e["source"] for e in theirs.items] == ["firewallRules"]
    by_alias = wb.traffic.events(zid, ruleId=NEW_IDS["sqli"])
    by_short = wb.traffic.events(zid, rule=NEW_IDS["sqli"])
    assert by_alias.items == by_short.items and len(by_alias.items) == 1
    assert wb.traffic.events(zid, ruleset="none").items == []
    assert len(wb.traffic.events(zid, source_in=["waf"]).items) == 1


def test_zone_log_is_a_copy_of_one_zones_events():
    wb, zid = workbench_with_zone()
    other = wb.create_zone("other.example", plan="enterprise")
    wb.firewall.create_rules(
        other.id, [{"filter": {"expression": "ssl or not ssl"}, "action": "block"}]
    )
    wb.traffic.submit(zid, ITEMS)
    wb.traffic.submit(other.id, [{"url": "https://other.example/"}])
    copy = wb.traffic.zone_log(zid)
    assert copy is not wb.traffic.log
    assert copy.count() == wb.traffic.log.count() - 1
    assert set(copy.frame().zone_id) == {zid}


@pytest.mark.parametrize(
    ("filters", "words"),
    [
        ({"since": "soon"}, "since must be an ISO 8601 time"),
        ({"score_geq": "high"}, "score_geq must be a whole number"),
        ({"zone": "x"}, "the zone is the one in the path"),
        ({"zone_id": "x"}, "the zone is the one in the path"),
        ({"colour": "red"}, "unknown event field 'colour'"),
        ({"order": "newest"}, "order must be one of"),
        ({"order": "datetime_ASC", "direction": "asc"}, "give order or direction, not both"),
    ],
)
def test_bad_filters_raise_validation_errors(filters, words):
    wb, zid = workbench_with_zone()
    with pytest.raises(ValidationError, match=words):
        wb.traffic.events(zid, **filters)


def test_query_filters_take_repeats_only_for_lists():
    assert query_filters([("source_in", "waf"), ("source_in", "firewallRules,")]) == {
        "source_in": ["waf", "firewallRules"]
    }
    with pytest.raises(ValidationError, match="action is given twice"):
        query_filters([("action", "block"), ("action", "log")])


def test_submissions_from_two_threads_are_all_logged():
    wb, zid = workbench_with_zone()
    errors: list[BaseException] = []

    def send() -> None:
        try:
            wb.traffic.submit(zid, ITEMS[:2])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    rays = {e["ray_id"] for e in wb.traffic.events(zid, per_page=100).items}
    assert len(rays) == 8
