"""Page rules with security actions."""

import pytest

from workbench import Workbench
from workbench.core.errors import NotFound, QuotaExceeded, ValidationError


def target(value):
    return [{"target": "url", "constraint": {"operator": "matches", "value": value}}]


@pytest.fixture
def wb():
    return Workbench(seed=0)


def test_create_list_update_delete(wb):
    zone = wb.create_zone("example.com", plan="pro")
    pr = wb.firewall.page_rules
    a = pr.create(
        zone.id,
        {"targets": target("*example.com/admin*"), "actions": [{"id": "waf", "value": "off"}]},
    )
    assert a.to_dict() == {
        "id": a.id,
        "targets": target("*example.com/admin*"),
        "actions": [{"id": "waf", "value": "off"}],
        "priority": 1,
        "status": "disabled",
        "created_on": "2026-01-01T00:00:00Z",
        "modified_on": "2026-01-01T00:00:00Z",
    }
    b = pr.create(
        zone.id,
        {
            "targets": target("example.com/shop/*"),
            "actions": [{"id": "disable_security"}],
            "priority": 2,
            "status": "active",
        },
    )
    assert [r.id for r in pr.list(zone.id)] == [b.id, a.id]
    assert [r.id for r in pr.list(zone.id, direction="asc")] == [a.id, b.id]
    assert [r.id for r in pr.list(zone.id, status="active")] == [b.id]
    wb.advance(seconds=30)
    pr.update(
        zone.id,
        a.id,
        {"status": "active", "actions": [{"id": "security_level", "value": "high"}]},
        full=False,
    )
    assert a.to_dict()["modified_on"] == "2026-01-01T00:00:30Z"
    assert a.actions == [{"id": "security_level", "value": "high"}]
    assert pr.for_url(zone.id, "https://example.com/admin/x").id == a.id
    assert pr.for_url(zone.id, "http://EXAMPLE.com/shop/cart").id == b.id
    assert pr.for_url(zone.id, "https://example.com/blog") is None
    with pytest.raises(ValidationError, match="targets"):
        pr.update(zone.id, a.id, {"actions": [{"id": "waf", "value": "on"}]}, full=True)
    assert pr.delete(zone.id, a.id) == a.id
    with pytest.raises(NotFound):
        pr.get(zone.id, a.id)


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({"actions": [{"id": "waf", "value": "on"}]}, "targets"),
        ({"targets": target("x/*")}, "actions"),
        ({"targets": target("x/*"), "actions": []}, "non-empty"),
        ({"targets": target("x/*"), "actions": [{"id": "waf", "value": "maybe"}]}, "on, off"),
        (
            {"targets": target("x/*"), "actions": [{"id": "cache_level", "value": "x"}]},
            "not simulated",
        ),
        ({"targets": target("x/*"), "actions": [{"id": "waf", "value": "on"}] * 2}, "twice"),
        ({"targets": target(""), "actions": [{"id": "waf", "value": "on"}]}, "URL pattern"),
        (
            {"targets": target("x/*"), "actions": [{"id": "waf", "value": "on"}], "status": "on"},
            "status",
        ),
        (
            {"targets": target("x/*"), "actions": [{"id": "waf", "value": "on"}], "priority": 0},
            "priority",
        ),
        ([], "JSON object"),
    ],
)
def test_invalid_page_rules(wb, body, fragment):
    zone = wb.create_zone("example.com")
    with pytest.raises(ValidationError, match=fragment):
        wb.firewall.page_rules.create(zone.id, body)
    assert wb.firewall.page_rules.list(zone.id) == []


def test_page_rule_quota_per_plan(wb):
    zone = wb.create_zone("example.com", plan="free")
    for i in range(3):
        wb.firewall.page_rules.create(
            zone.id,
            {"targets": target(f"example.com/{i}*"), "actions": [{"id": "waf", "value": "off"}]},
        )
    with pytest.raises(QuotaExceeded):
        wb.firewall.page_rules.create(
            zone.id,
            {"targets": target("example.com/x*"), "actions": [{"id": "waf", "value": "off"}]},
        )
