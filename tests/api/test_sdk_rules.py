"""The Firewall Rules API driven by the official SDK against a running server."""

import cloudflare
import pytest
from cloudflare.pagination import SyncSinglePage
from cloudflare.types.firewall import FirewallRule

ADMIN = 'http.request.uri.path contains "/admin"'


def rules_path(zone):
    return f"/zones/{zone}/firewall/rules"


def post_rules(sdk, zone, body):
    """The documented array POST (the SDK's typed create sends one object)."""
    return list(
        sdk.get_api_list(
            rules_path(zone),
            model=FirewallRule,
            page=SyncSinglePage[FirewallRule],
            body=body,
            method="post",
        )
    )


def test_recommended_sequence_and_documented_delete_order(sdk, zones):
    zone = zones["free"]
    [flt] = sdk.filters.create(zone_id=zone, body=[{"expression": ADMIN}])
    [rule] = post_rules(
        sdk, zone, [{"filter": {"id": flt.id}, "action": "block", "description": "no admin"}]
    )
    assert rule.filter.id == flt.id and rule.filter.expression == ADMIN
    assert rule.action == "block" and rule.priority is None and rule.paused is False
    # A filter still used by a rule cannot go; the rule goes first and leaves the filter.
    with pytest.raises(cloudflare.BadRequestError) as info:
        sdk.filters.delete(flt.id, zone_id=zone)
    assert info.value.body["errors"][0]["code"] == 10103
    deleted = sdk.firewall.rules.delete(rule.id, zone_id=zone)
    assert deleted.id == rule.id
    assert sdk.filters.get(flt.id, zone_id=zone).id == flt.id
    assert sdk.filters.delete(flt.id, zone_id=zone).id == flt.id


def test_sdk_typed_create_sends_one_object(sdk, zones):
    zone = zones["pro"]
    [flt] = sdk.filters.create(zone_id=zone, body=[{"expression": ADMIN}])
    page = sdk.firewall.rules.create(zone_id=zone, action="challenge", filter={"id": flt.id})
    [rule] = list(page)
    assert rule.action == "challenge" and rule.filter.id == flt.id


def test_list_paginates_get_update_pause_priority(wb, sdk, zones):
    zone = zones["business"]
    filters = list(
        sdk.filters.create(
            zone_id=zone, body=[{"expression": f"ip.src eq 192.0.2.{i}"} for i in range(12)]
        )
    )
    made = post_rules(sdk, zone, [{"filter": {"id": f.id}, "action": "block"} for f in filters])
    assert [r.id for r in sdk.firewall.rules.list(zone_id=zone, per_page=5)] == [r.id for r in made]
    target = made[3]
    assert (
        sdk.firewall.rules.get(target.id, zone_id=zone).filter.expression == "ip.src eq 192.0.2.3"
    )
    wb.advance(minutes=1)
    paused = sdk.firewall.rules.update(
        target.id,
        zone_id=zone,
        action="js_challenge",
        filter={"id": filters[0].id},
        extra_body={"id": target.id, "paused": True, "description": "paused for now"},
    )
    assert (paused.action, paused.paused, paused.filter.id) == ("js_challenge", True, filters[0].id)
    assert str(paused.modified_on) in ("2026-01-01T00:01:00Z", "2026-01-01 00:01:00+00:00")
    assert [r.id for r in sdk.firewall.rules.list(zone_id=zone, paused=True)] == [target.id]
    assert [r.id for r in sdk.firewall.rules.list(zone_id=zone, action="js_challenge")] == [
        target.id
    ]
    # Single PATCH returns an array; the SDK's body-less call changes nothing.
    [same] = sdk.firewall.rules.edit(target.id, zone_id=zone)
    assert same.priority is None
    [prio] = sdk.firewall.rules.edit(
        target.id, zone_id=zone, extra_body={"id": target.id, "priority": 5}
    )
    assert prio.priority == 5
    [bulk] = sdk.firewall.rules.bulk_edit(zone_id=zone, id=made[0].id, extra_body={"priority": 1})
    assert bulk.priority == 1
    # The PUT never changed a filter.
    assert sdk.filters.get(filters[3].id, zone_id=zone).expression == "ip.src eq 192.0.2.3"


def test_bulk_delete_keeps_filters(sdk, zones):
    zone = zones["free"]
    rules = post_rules(
        sdk,
        zone,
        [
            {"filter": {"expression": f"ip.src eq 198.51.100.{i}"}, "action": "block"}
            for i in range(3)
        ],
    )
    gone = sdk.firewall.rules.bulk_delete(
        zone_id=zone, extra_query={"id": [rules[0].id, rules[1].id]}
    )
    assert sorted(r.id for r in gone) == sorted(r.id for r in rules[:2])
    assert len(list(sdk.filters.list(zone_id=zone))) == 3


def test_shortened_call_partial_outcome_at_the_quota_then_finish(sdk, zones):
    zone = zones["free"]
    post_rules(
        sdk,
        zone,
        [
            {"filter": {"expression": f"ip.src eq 203.0.113.{i}"}, "action": "block"}
            for i in range(5)
        ],
    )
    with pytest.raises(cloudflare.BadRequestError) as info:
        post_rules(sdk, zone, [{"filter": {"expression": ADMIN}, "action": "block"}])
    body = info.value.body
    assert body["success"] is False and body["result"] is None
    [error] = body["errors"]
    assert error["code"] == 10200
    [created] = error["meta"]["filters_created"]
    assert created["expression"] == ADMIN
    assert body["messages"][0]["message"].startswith(
        f"filter {created['id']} was created; its rule was not"
    )
    # Fix the quota, then finish with the recommended sequence against the existing filter.
    first = next(iter(sdk.firewall.rules.list(zone_id=zone)))
    sdk.firewall.rules.delete(first.id, zone_id=zone)
    [rule] = post_rules(sdk, zone, [{"filter": {"id": created["id"]}, "action": "block"}])
    assert rule.filter.id == created["id"]


def test_shortened_call_invalid_creates_nothing(sdk, zones):
    zone = zones["free"]
    with pytest.raises(cloudflare.BadRequestError):
        post_rules(
            sdk,
            zone,
            [
                {"filter": {"expression": ADMIN}, "action": "block"},
                {"filter": {"expression": "ssl"}, "action": "nope"},
            ],
        )
    assert list(sdk.filters.list(zone_id=zone)) == []
    assert list(sdk.firewall.rules.list(zone_id=zone)) == []


def test_feature_unavailable_on_the_plan(sdk, zones):
    with pytest.raises(cloudflare.BadRequestError) as info:
        post_rules(
            sdk,
            zones["pro"],
            [{"filter": {"expression": 'http.request.uri.path matches "^/wp"'}, "action": "block"}],
        )
    assert info.value.body["errors"][0]["code"] == 10201
    assert len(list(sdk.filters.list(zone_id=zones["pro"]))) == 1
    [rule] = post_rules(
        sdk, zones["enterprise"], [{"filter": {"expression": ADMIN}, "action": "log"}]
    )
    assert rule.action == "log"


def test_duplicate_inline_filter_is_10202(sdk, zones):
    zone = zones["free"]
    post_rules(sdk, zone, [{"filter": {"expression": ADMIN}, "action": "block"}])
    with pytest.raises(cloudflare.BadRequestError) as info:
        post_rules(sdk, zone, [{"filter": {"expression": ADMIN}, "action": "allow"}])
    assert info.value.body["errors"][0]["code"] == 10202
    assert "filter at index 0" in info.value.body["errors"][0]["message"]


def test_sdk_bulk_update_sends_one_object(sdk, zones):
    zone = zones["free"]
    [rule] = post_rules(sdk, zone, [{"filter": {"expression": ADMIN}, "action": "block"}])
    [same] = sdk.firewall.rules.bulk_update(zone_id=zone, id=rule.id, extra_body={"paused": True})
    assert same.id == rule.id and same.paused is True
    with pytest.raises(cloudflare.NotFoundError):
        sdk.firewall.rules.bulk_update(zone_id=zone, id="0" * 32)
