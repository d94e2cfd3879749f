"""Firewall rules: the two-call sequence, updates, quotas, features, ordering."""

import threading

import pytest

from workbench import Workbench
from workbench.core.errors import (
    Conflict,
    FeatureUnavailable,
    NotFound,
    QuotaExceeded,
    ValidationError,
)

ADMIN = 'http.request.uri.path contains "/admin"'


@pytest.fixture
def wb():
    return Workbench(seed=0)


def zone_on(wb, plan):
    return wb.create_zone(f"{plan}.example", plan=plan)


def one_filter(wb, zone, expression=ADMIN):
    return wb.firewall.create_filters(zone.id, [{"expression": expression}])[0]


def test_two_call_sequence_and_shared_filter(wb):
    zone = zone_on(wb, "free")
    flt = one_filter(wb, zone)
    a, b = wb.firewall.create_rules(
        zone.id,
        [
            {"filter": {"id": flt.id}, "action": "block", "description": "no admin"},
            {"filter": {"id": flt.id}, "action": "challenge", "priority": 3, "ref": "R2"},
        ],
    )
    assert a.to_dict() == {
        "id": a.id,
        "paused": False,
        "action": "block",
        "priority": None,
        "filter": flt.to_dict(),
        "created_on": "2026-01-01T00:00:00Z",
        "modified_on": "2026-01-01T00:00:00Z",
        "description": "no admin",
    }
    assert b.filter is a.filter
    assert wb.firewall.filter_usage(zone.id) == {flt.id: [a.id, b.id]}


def test_delete_order_rules_then_filter(wb):
    zone = zone_on(wb, "free")
    flt = one_filter(wb, zone)
    [rule] = wb.firewall.create_rules(zone.id, [{"filter": {"id": flt.id}, "action": "block"}])
    with pytest.raises(Conflict) as info:
        wb.firewall.delete_filter(zone.id, flt.id)
    assert info.value.to_error()["meta"] == {"id": flt.id, "rule_ids": [rule.id]}
    assert "delete the rules first" in info.value.message
    with pytest.raises(Conflict):
        wb.firewall.delete_filters(zone.id, [flt.id])
    wb.firewall.delete_rule(zone.id, rule.id)
    assert wb.firewall.get_filter(zone.id, flt.id) is flt  # deleting a rule keeps its filter
    assert wb.firewall.delete_filter(zone.id, flt.id) == flt.id


def test_rule_validation(wb):
    zone = zone_on(wb, "free")
    flt = one_filter(wb, zone)
    cases = [
        ({"filter": {"id": flt.id}}, "/0/action: is required"),
        ({"action": "block"}, "/0/filter: is required"),
        ({"filter": {"id": flt.id}, "action": "deny"}, "'deny' is not an action"),
        ({"filter": {"id": "0" * 32}, "action": "block"}, "does not exist"),
        ({"filter": {"id": flt.id}, "action": "block", "priority": -1}, "between 0"),
        ({"filter": {"id": flt.id}, "action": "block", "priority": True}, "whole number"),
        ({"filter": {"id": flt.id}, "action": "block", "priority": 2**31}, "between 0"),
        ({"filter": {"id": flt.id}, "action": "bypass"}, "needs at least one product"),
        ({"filter": {"id": flt.id}, "action": "block", "products": ["waf"]}, "only allowed with"),
        ({"filter": {"id": flt.id}, "action": "bypass", "products": ["cdn"]}, "unknown product"),
        ({"filter": "x", "action": "block"}, "must be an object"),
        ({"filter": {}, "action": "block"}, "/0/filter/expression: is required"),
    ]
    for body, fragment in cases:
        with pytest.raises(ValidationError, match=fragment):
            wb.firewall.create_rules(zone.id, [body])
    assert wb.firewall.list_rules(zone.id).items == []


def test_bypass_products(wb):
    zone = zone_on(wb, "pro")
    flt = one_filter(wb, zone)
    [rule] = wb.firewall.create_rules(
        zone.id,
        [{"filter": {"id": flt.id}, "action": "bypass", "products": ["waf", "waf", "uaBlock"]}],
    )
    assert rule.to_dict()["products"] == ["waf", "uaBlock"]
    wb.firewall.update_rule(zone.id, rule.id, {"action": "block"})
    assert "products" not in rule.to_dict()


def test_quota_counts_active_rules_only(wb):
    zone = zone_on(wb, "free")
    filters = wb.firewall.create_filters(
        zone.id, [{"expression": f'http.request.uri.path eq "/{i}"'} for i in range(7)]
    )
    rules = wb.firewall.create_rules(
        zone.id, [{"filter": {"id": f.id}, "action": "block"} for f in filters[:5]]
    )
    with pytest.raises(QuotaExceeded) as info:
        wb.firewall.create_rules(zone.id, [{"filter": {"id": filters[5].id}, "action": "block"}])
    assert info.value.to_error()["code"] == 10200
    assert "free plan allows 5 active rules" in info.value.message
    # A paused rule does not count, and unpausing it at the quota is refused.
    [paused] = wb.firewall.create_rules(
        zone.id, [{"filter": {"id": filters[5].id}, "action": "block", "paused": True}]
    )
    with pytest.raises(QuotaExceeded):
        wb.firewall.update_rule(zone.id, paused.id, {"paused": False})
    assert paused.paused is True
    wb.firewall.update_rule(zone.id, rules[0].id, {"paused": True})
    wb.firewall.update_rule(zone.id, paused.id, {"paused": False})
    assert wb.firewall.usage(zone.id) == {"plan": "free", "active_rules": 5, "quota": 5}


@pytest.mark.parametrize("plan, quota", [("pro", 20), ("business", 100)])
def test_quota_per_plan(wb, plan, quota):
    zone = zone_on(wb, plan)
    filters = wb.firewall.create_filters(
        zone.id, [{"expression": f'http.request.uri.path eq "/{i}"'} for i in range(25)]
    )
    for start in range(0, quota, 25):
        chunk = filters[: min(25, quota - start)]
        wb.firewall.create_rules(
            zone.id, [{"filter": {"id": f.id}, "action": "block"} for f in chunk]
        )
    with pytest.raises(QuotaExceeded):
        wb.firewall.create_rules(zone.id, [{"filter": {"id": filters[0].id}, "action": "allow"}])
    assert wb.firewall.usage(zone.id)["active_rules"] == quota


def test_a_batch_over_the_quota_creates_no_rule(wb):
    zone = zone_on(wb, "free")
    filters = wb.firewall.create_filters(
        zone.id, [{"expression": f'http.request.uri.path eq "/{i}"'} for i in range(6)]
    )
    with pytest.raises(QuotaExceeded):
        wb.firewall.create_rules(
            zone.id, [{"filter": {"id": f.id}, "action": "block"} for f in filters]
        )
    assert wb.firewall.list_rules(zone.id).total_count == 0


@pytest.mark.parametrize(
    "plan, allowed", [("free", False), ("pro", False), ("business", False), ("enterprise", True)]
)
def test_log_action_is_enterprise_only(wb, plan, allowed):
    zone = zone_on(wb, plan)
    flt = one_filter(wb, zone)
    body = [{"filter": {"id": flt.id}, "action": "log"}]
    if allowed:
        assert wb.firewall.create_rules(zone.id, body)[0].action == "log"
    else:
        with pytest.raises(FeatureUnavailable, match="Enterprise"):
            wb.firewall.create_rules(zone.id, body)


@pytest.mark.parametrize(
    "plan, allowed", [("free", False), ("pro", False), ("business", True), ("enterprise", True)]
)
def test_matches_operator_is_business_and_up(wb, plan, allowed):
    zone = zone_on(wb, plan)
    flt = one_filter(wb, zone, 'http.request.uri.path matches "^/wp-"')  # any plan may hold it
    body = [{"filter": {"id": flt.id}, "action": "block"}]
    if allowed:
        assert wb.firewall.create_rules(zone.id, body)
    else:
        with pytest.raises(FeatureUnavailable, match="matches operator") as info:
            wb.firewall.create_rules(zone.id, body)
        assert info.value.to_error()["code"] == 10201


def test_filter_edit_cannot_sneak_in_matches_under_a_rule(wb):
    zone = zone_on(wb, "pro")
    flt = one_filter(wb, zone)
    wb.firewall.create_rules(zone.id, [{"filter": {"id": flt.id}, "action": "block"}])
    with pytest.raises(FeatureUnavailable):
        wb.firewall.update_filter(zone.id, flt.id, {"expression": 'http.host matches "x"'})
    assert flt.expression == ADMIN


def test_rule_update_repoints_filter_without_editing_it(wb):
    zone = zone_on(wb, "free")
    a = one_filter(wb, zone)
    b = one_filter(wb, zone, "ssl")
    [rule] = wb.firewall.create_rules(zone.id, [{"filter": {"id": a.id}, "action": "block"}])
    wb.advance(minutes=5)
    updated = wb.firewall.update_rule(
        zone.id,
        rule.id,
        {"action": "challenge", "filter": {"id": b.id, "expression": "ignored eq 1"}},
    )
    assert updated.filter is b and b.expression == "ssl"
    assert updated.to_dict()["modified_on"] == "2026-01-01T00:05:00Z"
    assert updated.to_dict()["created_on"] == "2026-01-01T00:00:00Z"
    with pytest.raises(ValidationError, match="Filters API"):
        wb.firewall.update_rule(zone.id, rule.id, {"filter": {"expression": ADMIN}})
    with pytest.raises(ValidationError, match="does not match"):
        wb.firewall.update_rule(zone.id, rule.id, {"id": "0" * 32, "action": "block"})
    with pytest.raises(NotFound) as info:
        wb.firewall.update_rule(zone.id, "0" * 32, {"action": "block"})
    assert info.value.code == 10301


def test_bulk_update_and_priorities_are_transactions(wb):
    zone = zone_on(wb, "free")
    flt = one_filter(wb, zone)
    a, b = wb.firewall.create_rules(
        zone.id,
        [
            {"filter": {"id": flt.id}, "action": "block"},
            {"filter": {"id": flt.id}, "action": "allow"},
        ],
    )
    with pytest.raises(ValidationError):
        wb.firewall.update_rules(
            zone.id, [{"id": a.id, "priority": 1}, {"id": b.id, "priority": -5}]
        )
    assert a.priority is None
    out = wb.firewall.set_priorities(
        zone.id, [{"id": a.id, "priority": 1, "action": "allow"}, {"id": b.id, "priority": 2}]
    )
    assert [(r.priority, r.action) for r in out] == [(1, "block"), (2, "allow")]
    with pytest.raises(ValidationError, match="twice"):
        wb.firewall.set_priorities(
            zone.id, [{"id": a.id, "priority": 1}, {"id": a.id, "priority": 2}]
        )


def test_evaluation_order_priority_then_precedence(wb):
    zone = zone_on(wb, "enterprise")
    flt = one_filter(wb, zone)
    specs = [
        ("block", None),
        ("allow", None),
        ("log", None),
        ("js_challenge", 10),
        ("challenge", 10),
        ("bypass", 10),
        ("managed_challenge", 2),
        ("block", 2),
    ]
    body = [
        {"filter": {"id": flt.id}, "action": a, "priority": p}
        | ({"products": ["waf"]} if a == "bypass" else {})
        for a, p in specs
    ]
    wb.firewall.create_rules(zone.id, body)
    order = [(r.priority, r.action) for r in wb.firewall.evaluation_order(zone.id)]
    assert order == [
        (2, "managed_challenge"),
        (2, "block"),
        (10, "bypass"),
        (10, "challenge"),
        (10, "js_challenge"),
        (None, "log"),
        (None, "allow"),
        (None, "block"),
    ]


def test_evaluate_stops_at_first_terminal_action(wb):
    zone = zone_on(wb, "enterprise")
    admin = one_filter(wb, zone)
    login = one_filter(wb, zone, 'http.request.uri.path eq "/login"')
    wb.firewall.create_rules(
        zone.id,
        [
            {"filter": {"id": admin.id}, "action": "log", "priority": 1},
            {"filter": {"id": admin.id}, "action": "bypass", "products": ["waf"], "priority": 2},
            {"filter": {"id": admin.id}, "action": "block", "priority": 3},
            {"filter": {"id": admin.id}, "action": "allow", "priority": 4},
            {"filter": {"id": login.id}, "action": "challenge", "paused": True},
        ],
    )
    result = wb.firewall.evaluate(zone.id, {"http.request.uri.path": "/admin/users"})
    assert result.action == "block"
    assert [a for _, a in result.matched] == ["log", "bypass", "block"]
    assert result.bypassed == frozenset({"waf"})
    assert wb.firewall.evaluate(zone.id, {"http.request.uri.path": "/login"}).action is None
    wb.firewall.update_filter(zone.id, admin.id, {"paused": True})
    assert wb.firewall.evaluate(zone.id, {"http.request.uri.path": "/admin"}).matched == []


def test_list_rules_query(wb):
    zone = zone_on(wb, "free")
    flt = one_filter(wb, zone)
    a, b, c = wb.firewall.create_rules(
        zone.id,
        [
            {"filter": {"id": flt.id}, "action": "block", "description": "Block admin"},
            {"filter": {"id": flt.id}, "action": "allow", "paused": True},
            {"filter": {"id": flt.id}, "action": "block"},
        ],
    )
    fw = wb.firewall
    assert fw.list_rules(zone.id, action="block").items == [a, c]
    assert fw.list_rules(zone.id, description="ADMIN").items == [a]
    assert fw.list_rules(zone.id, paused=True).items == [b]
    assert fw.list_rules(zone.id, id=c.id).items == [c]
    assert fw.delete_rules(zone.id, [a.id, "0" * 32]) == [a.id]
    assert fw.list_rules(zone.id).total_count == 2


def test_eight_threads_never_exceed_the_quota(wb):
    zone = zone_on(wb, "pro")
    filters = wb.firewall.create_filters(
        zone.id, [{"expression": f'http.request.uri.path eq "/{i}"'} for i in range(8)]
    )
    made, refused, barrier = [], [], threading.Barrier(8)

    def worker(flt):
        barrier.wait()
        for _ in range(10):
            try:
                made.extend(
                    wb.firewall.create_rules(
                        zone.id, [{"filter": {"id": flt.id}, "action": "block"}]
                    )
                )
            except QuotaExceeded:
                refused.append(1)

    threads = [threading.Thread(target=worker, args=(f,)) for f in filters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 20 and len(refused) == 60
    assert {r.id for r in wb.firewall.list_rules(zone.id, per_page=100).items} == {
        r.id for r in made
    }
