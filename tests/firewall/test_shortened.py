"""The shortened creation call (inline filters) and the seed's outcome table."""

import pytest

from workbench import Workbench
from workbench.core.errors import Conflict, FeatureUnavailable, QuotaExceeded, ValidationError

ADMIN = 'http.request.uri.path contains "/admin"'


@pytest.fixture
def wb():
    return Workbench(seed=0)


def counts(wb, zone):
    fw = wb.firewall
    return fw.list_filters(zone.id).total_count, fw.list_rules(zone.id).total_count


def test_both_valid_both_created(wb):
    zone = wb.create_zone("example.com", plan="free")
    [rule] = wb.firewall.create_rules(
        zone.id, [{"filter": {"expression": ADMIN, "description": "admin"}, "action": "block"}]
    )
    assert rule.filter.to_dict() == {
        "id": rule.filter.id,
        "expression": ADMIN,
        "paused": False,
        "description": "admin",
    }
    assert wb.firewall.get_filter(zone.id, rule.filter.id) is rule.filter
    assert counts(wb, zone) == (1, 1)


@pytest.mark.parametrize(
    "item",
    [
        {
            "filter": {"expression": "http.request.uri.path contains"},
            "action": "block",
        },  # bad filter
        {"filter": {"expression": ADMIN}, "action": "deny"},  # bad rule
        {"filter": {"expression": ADMIN}, "action": "block", "priority": "high"},
    ],
)
def test_filter_or_rule_invalid_nothing_created(wb, item):
    zone = wb.create_zone("example.com", plan="free")
    with pytest.raises(ValidationError):
        wb.firewall.create_rules(
            zone.id, [{"filter": {"expression": "ssl"}, "action": "block"}, item]
        )
    assert counts(wb, zone) == (0, 0)


def test_quota_exceeded_filter_created_rule_not_then_finish(wb):
    zone = wb.create_zone("example.com", plan="free")
    wb.firewall.create_rules(
        zone.id,
        [
            {"filter": {"expression": f'http.request.uri.path eq "/{i}"'}, "action": "block"}
            for i in range(5)
        ],
    )
    with pytest.raises(QuotaExceeded) as info:
        wb.firewall.create_rules(zone.id, [{"filter": {"expression": ADMIN}, "action": "block"}])
    err = info.value.to_error()
    [created] = err["meta"]["filters_created"]
    assert created["expression"] == ADMIN
    assert "were created without their rule" in err["message"]
    assert counts(wb, zone) == (6, 5)
    # Fix the quota (pause a rule), then finish with the recommended sequence.
    first = wb.firewall.list_rules(zone.id).items[0]
    wb.firewall.update_rule(zone.id, first.id, {"paused": True})
    [rule] = wb.firewall.create_rules(
        zone.id, [{"filter": {"id": created["id"]}, "action": "block"}]
    )
    assert rule.filter.id == created["id"]
    # Retrying the shortened call instead would be refused as a duplicate.
    with pytest.raises(Conflict) as dup:
        wb.firewall.create_rules(zone.id, [{"filter": {"expression": ADMIN}, "action": "block"}])
    assert dup.value.to_error()["code"] == 10202
    assert dup.value.to_error()["meta"] == {"id": created["id"]}
    assert "filter at index 0" in dup.value.message


def test_feature_unavailable_same_as_quota(wb):
    zone = wb.create_zone("example.com", plan="pro")
    with pytest.raises(FeatureUnavailable) as info:
        wb.firewall.create_rules(
            zone.id,
            [
                {
                    "filter": {"expression": 'http.request.uri.path matches "^/wp-"'},
                    "action": "block",
                }
            ],
        )
    [created] = info.value.to_error()["meta"]["filters_created"]
    assert counts(wb, zone) == (1, 0)
    wb.set_plan(zone.id, "business")
    [rule] = wb.firewall.create_rules(
        zone.id, [{"filter": {"id": created["id"]}, "action": "block"}]
    )
    assert rule.filter.expression == 'http.request.uri.path matches "^/wp-"'


def test_log_on_free_keeps_the_inline_filter(wb):
    zone = wb.create_zone("example.com", plan="free")
    with pytest.raises(FeatureUnavailable):
        wb.firewall.create_rules(zone.id, [{"filter": {"expression": ADMIN}, "action": "log"}])
    assert counts(wb, zone) == (1, 0)


def test_mixed_inline_and_reference_and_sharing(wb):
    zone = wb.create_zone("example.com", plan="free")
    [shared] = wb.firewall.create_filters(zone.id, [{"expression": "ssl"}])
    rules = wb.firewall.create_rules(
        zone.id,
        [
            {"filter": {"id": shared.id}, "action": "block"},
            {"filter": {"expression": ADMIN}, "action": "challenge"},
            {"filter": {"id": shared.id}, "action": "allow", "priority": 1},
        ],
    )
    assert [r.filter.id for r in rules] == [shared.id, rules[1].filter.id, shared.id]
    usage = wb.firewall.filter_usage(zone.id)
    assert usage[shared.id] == [rules[0].id, rules[2].id]


def test_duplicate_inline_inside_batch(wb):
    zone = wb.create_zone("example.com")
    with pytest.raises(Conflict) as info:
        wb.firewall.create_rules(
            zone.id,
            [
                {"filter": {"expression": ADMIN}, "action": "block"},
                {"filter": {"expression": ADMIN}, "action": "allow"},
            ],
        )
    assert info.value.code == 10202
    assert counts(wb, zone) == (0, 0)
