"""The pipeline's conventions: which systems run, their order, bypass, ray ids and times."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from traffic_helpers import NEW_IDS, enable_new, workbench_with_zone

from workbench.core.security import Check, SecurityEvent, StaticPlan, Verdict
from workbench.logs import EventLog
from workbench.replay import Pipeline
from workbench.rulesets import CUSTOM_PHASE
from workbench.traffic.request import Request
from workbench.traffic.zone_plan import ZonePlan, resolve_systems

UNION = "https://example.com/search?q=1+union+select+2"  # new: block (sqli), old: block (100001)
ADMIN = "https://example.com/admin/users"  # old only: block (100005)
WP = "https://example.com/wp-admin/"  # new: log (wp), old: simulate (100004) -> log


def _events(run):
    return [(e["source"], e["action"], e["rule_id"]) for e in run.events.to_dict("records")]


@pytest.mark.parametrize("path", ["table", "request"])
def test_validation_mode_runs_the_new_system_first_then_the_old_on_the_same_ray(zone_wb, path):
    wb, zid = zone_wb
    run = Pipeline(wb, zid).replay([Request("GET", WP)], path=path, progress=False)
    assert run.systems == ["fw", "new", "old"]
    assert _events(run) == [("firewallManaged", "log", NEW_IDS["wp"]), ("waf", "log", "100004")]
    assert set(run.events.ray_id) == {run.ray_ids[0]}
    assert run.events.match_index.tolist() == [1, 0]  # 0 is the request's last event
    assert run.actions == [None]


@pytest.mark.parametrize("path", ["table", "request"])
def test_when_the_new_system_ends_the_request_the_old_one_never_sees_it(zone_wb, path):
    wb, zid = zone_wb
    run = Pipeline(wb, zid).replay(
        [Request("GET", UNION), Request("GET", ADMIN)], path=path, progress=False
    )
    assert _events(run) == [
        ("firewallManaged", "block", NEW_IDS["sqli"]),
        ("waf", "block", "100005"),
    ]
    assert run.actions == ["block", "block"]


@pytest.mark.parametrize("path", ["table", "request"])
def test_a_firewall_bypass_of_waf_turns_off_the_old_system_only(zone_wb, path):
    wb, zid = zone_wb
    reqs = [
        Request("GET", "https://example.com/api/admin"),
        Request("GET", "https://example.com/api/?q=union+select"),
    ]
    run = Pipeline(wb, zid).replay(reqs, path=path, progress=False)
    ev = _events(run)
    bypass = [e for e in ev if e[1] == "bypass"]
    assert len(bypass) == 2 and all(e[0] == "firewallRules" for e in bypass)
    assert not any(e[0] == "waf" for e in ev)  # /api/admin would be blocked by the old WAF
    assert ("firewallManaged", "block", NEW_IDS["sqli"]) in ev  # the new WAF still runs
    assert run.actions == [None, "block"]


def test_firewall_terminal_actions_end_the_request_and_allow_ends_only_the_rules(zone_wb):
    wb, zid = zone_wb
    blocked = Request("GET", UNION, country="KP")
    allowed = Request("GET", "https://example.com/health?q=union+select")
    run = Pipeline(wb, zid).replay([blocked, allowed], progress=False)
    ev = run.events
    first = ev[ev.ray_id == run.ray_ids[0]]
    assert first[["source", "action"]].values.tolist() == [["firewallRules", "block"]]
    second = ev[ev.ray_id == run.ray_ids[1]]
    assert second.source.tolist()[:2] == ["firewallRules", "firewallManaged"]
    assert second.action.tolist()[0] == "allow" and run.actions == ["block", "block"]


def test_systems_are_read_from_the_zone_state_unless_overridden(zone_wb):
    wb, zid = zone_wb
    assert resolve_systems(wb, zid) == (True, True)
    wb.waf_legacy.set_setting(zid, {"value": "off"})
    assert resolve_systems(wb, zid) == (False, True)
    assert Pipeline(wb, zid).plan().systems == ["fw", "new"]
    assert Pipeline(wb, zid, systems="both").plan().systems == ["fw", "new", "old"]
    assert Pipeline(wb, zid, systems={"old"}).plan().systems == ["fw", "old"]
    assert Pipeline(wb, zid, systems="none").plan().systems == ["fw"]
    other, oid = workbench_with_zone(managed=False)
    assert resolve_systems(other, oid) == (True, False)
    with pytest.raises(ValueError, match="systems"):
        Pipeline(wb, zid, systems="everything").plan()
    with pytest.raises(ValueError, match="unknown system"):
        Pipeline(wb, zid, systems=["old", "newer"]).plan()


def test_custom_rules_run_with_the_new_system_or_alone_before_the_old_one(zone_wb):
    wb, zid = zone_wb
    wb.rulesets.put_entrypoint(
        zid,
        CUSTOM_PHASE,
        {
            "rules": [
                {
                    "action": "log",
                    "expression": 'http.request.uri.path contains "/admin"',
                    "description": "admin",
                }
            ]
        },
    )
    both = Pipeline(wb, zid).replay([Request("GET", ADMIN)], progress=False)
    assert [e[0] for e in _events(both)] == ["firewallCustom", "waf"]
    old_only = Pipeline(wb, zid, systems="old").replay([Request("GET", ADMIN)], progress=False)
    assert [e[0] for e in _events(old_only)] == ["firewallCustom", "waf"]


def test_an_empty_managed_entry_point_still_counts_as_the_new_system_on(zone_wb):
    wb, zid = workbench_with_zone(managed=False)
    enable_new(wb, zid, rules=[])
    assert Pipeline(wb, zid).plan().systems == ["fw", "new", "old"]


def test_ray_ids_are_seeded_16_hex_and_time_moves_per_request(zone_wb):
    wb, zid = zone_wb
    start = wb.clock.now_ms()
    pipe = Pipeline(wb, zid, step_ms=25)
    reqs = [Request("GET", WP) for _ in range(4)]
    run = pipe.replay(reqs, progress=False, seed=7)
    assert all(re.fullmatch(r"[0-9a-f]{16}", r) for r in run.ray_ids) and len(set(run.ray_ids)) == 4
    assert run.times_ms == [start + 25 * i for i in range(1, 5)]
    assert wb.clock.now_ms() == start + 100
    assert Pipeline(wb, zid).replay(reqs, progress=False, seed=7).ray_ids == run.ray_ids
    times = sorted(set(run.events.datetime))
    assert times[0] == datetime.fromtimestamp((start + 25) / 1000, tz=UTC).replace(tzinfo=None)
    # Without a seed, ray ids come from the Workbench's seeded ids: same seed, same ids.
    again, again_zone = workbench_with_zone()
    fresh, fresh_zone = workbench_with_zone()
    assert (
        Pipeline(again, again_zone).replay(reqs, progress=False).ray_ids
        == Pipeline(fresh, fresh_zone).replay(reqs, progress=False).ray_ids
    )


def test_an_imported_request_keeps_its_own_time(zone_wb):
    wb, zid = zone_wb
    when = datetime(2025, 11, 3, 10, 15, 30, tzinfo=UTC)
    run = Pipeline(wb, zid).replay([Request("GET", WP, timestamp=when)], progress=False)
    assert run.times_ms == [int(when.timestamp() * 1000)]
    assert run.events.datetime.iloc[0] == datetime(2025, 11, 3, 10, 15, 30)
    naive = Request("GET", WP, timestamp=when.replace(tzinfo=None))  # read as UTC
    assert Pipeline(wb, zid).replay([naive], progress=False).times_ms == run.times_ms


def test_run_one_request_and_fill_a_log(zone_wb):
    wb, zid = zone_wb
    result = Pipeline(wb, zid).run(Request("GET", UNION, label="sqli"))
    assert result.action == "block" and len(result.ray_id) == 16
    assert result.events[0]["rule_id"] == NEW_IDS["sqli"] and result.events[0]["label"] == "sqli"
    assert result.datetime.tzinfo is not None
    log = EventLog()
    run = Pipeline(wb, zid).replay([Request("GET", WP)] * 3, log=log, chunk_size=2, progress=False)
    assert log.count() == len(run.events) == 6
    assert (
        Pipeline(wb, zid)
        .replay([Request("GET", WP)], keep_events=False, progress=False)
        .events.empty
    )


def test_each_event_carries_the_request_fields(zone_wb):
    wb, zid = zone_wb
    req = Request(
        "POST",
        "https://example.com/wp-admin/x?a=1",
        headers={"User-Agent": "UA"},
        client_ip="192.0.2.5",
        country="FR",
        label="benign",
    )
    row = Pipeline(wb, zid).replay([req], progress=False).events.to_dict("records")[0]
    assert row["zone_id"] == zid and row["kind"] == "firewall"
    assert (row["client_ip"], row["country"], row["host"], row["path"], row["query"]) == (
        "192.0.2.5",
        "FR",
        "example.com",
        "/wp-admin/x",
        "a=1",
    )
    assert (row["method"], row["user_agent"], row["label"]) == ("POST", "UA", "benign")
    assert row["source"] == "firewallRules" and row["action"] == "log"  # the POST log rule


def test_the_zone_plan_shares_one_slot_per_expression():
    same = 'http.request.uri.path contains "/x"'
    fw = StaticPlan([Check("a", same)], lambda m: Verdict([]))
    old = StaticPlan(
        [Check("b", same), Check("c", "ssl")],
        lambda m: Verdict(
            [SecurityEvent("waf", "log", "b", None, "")] if m("b") and not m("c") else []
        ),
    )
    plan = ZonePlan(fw, old=old)
    assert plan.expressions == [same, "ssl"] and plan.slot == {"fw:a": 0, "old:b": 0, "old:c": 1}
    assert [e.rule_id for e in plan.decide_slots(lambda slot: slot == 0).events] == ["b"]
    assert plan.decide(lambda key: key == "fw:a").events[0].rule_id == "b"


def test_bad_arguments_are_refused(zone_wb):
    wb, zid = zone_wb
    with pytest.raises(ValueError, match="path"):
        Pipeline(wb, zid).replay([], path="fast")
    with pytest.raises(ValueError, match="chunk_size"):
        Pipeline(wb, zid).replay([], chunk_size=0)
    with pytest.raises(ValueError, match="step_ms"):
        Pipeline(wb, zid, step_ms=-1)
    assert Pipeline(wb, zid).replay([], progress=False).requests == 0
