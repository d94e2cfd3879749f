"""Eligibility on the virtual clock: closed before 2022-05-04, phase 1, phase 2 with phase_two."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workbench import Workbench
from workbench.migration import MIGRATION_OPENS, PHASE_TWO_OPENS, assess, read_zone
from workbench.waf_legacy import OWASP_PACKAGE

BEFORE = datetime(2022, 5, 3, 23, 59, 59, tzinfo=UTC)
PHASE_ONE = datetime(2022, 6, 1, tzinfo=UTC)
PHASE_TWO = PHASE_TWO_OPENS


@pytest.fixture
def wb():
    return Workbench(seed=0, start=datetime(2022, 1, 1, tzinfo=UTC))


@pytest.fixture
def zone(wb):
    return wb.create_zone("example.com", plan="business").id


def _owasp_off(wb, zone):
    wb.waf_legacy.edit_package(zone, OWASP_PACKAGE, {"sensitivity": "off"})


def _page_rule(wb, zone, action):
    wb.firewall.page_rules.create(
        zone,
        {
            "targets": [{"target": "url", "constraint": {"value": "example.com/static/*"}}],
            "actions": [action],
            "status": "active",
        },
    )


def _blockers(wb, zone, when, phase_two):
    return assess(read_zone(wb, zone), phase_two=phase_two, now=when).blockers


def test_the_dates_are_the_seed_s():
    assert MIGRATION_OPENS == datetime(2022, 5, 4, tzinfo=UTC)
    assert PHASE_TWO_OPENS == datetime(2022, 9, 19, tzinfo=UTC)


@pytest.mark.parametrize("phase_two", [False, True])
def test_nothing_is_eligible_before_the_migration_opens(wb, zone, phase_two):
    _owasp_off(wb, zone)
    assert _blockers(wb, zone, BEFORE, phase_two) == ("not_open",)
    assert _blockers(wb, zone, MIGRATION_OPENS, phase_two) == ()


def test_phase_one_needs_the_owasp_package_off_or_the_waf_off(wb, zone):
    assert _blockers(wb, zone, PHASE_ONE, False) == ("owasp",)
    wb.waf_legacy.set_setting(zone, {"value": "off"})
    assert _blockers(wb, zone, PHASE_ONE, False) == ()
    wb.waf_legacy.set_setting(zone, {"value": "on"})
    _owasp_off(wb, zone)
    assert _blockers(wb, zone, PHASE_ONE, False) == ()


def test_phase_one_refuses_bypass_rules_paused_or_not(wb, zone):
    _owasp_off(wb, zone)
    wb.firewall.create_rules(
        zone,
        [
            {
                "action": "bypass",
                "products": ["waf"],
                "paused": True,
                "filter": {"expression": "ip.src eq 192.0.2.1"},
            }
        ],
    )
    assert _blockers(wb, zone, PHASE_ONE, False) == ("bypass_rules",)
    # Phase 2 leaves only the URI-based overrides.
    assert _blockers(wb, zone, PHASE_TWO, True) == ()


def test_bypass_of_other_products_does_not_count(wb, zone):
    _owasp_off(wb, zone)
    wb.firewall.create_rules(
        zone,
        [{"action": "bypass", "products": ["uaBlock"], "filter": {"expression": "ssl"}}],
    )
    assert _blockers(wb, zone, PHASE_ONE, False) == ()


@pytest.mark.parametrize(
    "action",
    [{"id": "disable_security"}, {"id": "waf", "value": "off"}, {"id": "waf", "value": "on"}],
)
def test_phase_one_refuses_waf_page_rules(wb, zone, action):
    _owasp_off(wb, zone)
    _page_rule(wb, zone, action)
    assert _blockers(wb, zone, PHASE_ONE, False) == ("page_rules",)
    assert _blockers(wb, zone, PHASE_TWO, True) == ()


def test_other_page_rules_do_not_count(wb, zone):
    _owasp_off(wb, zone)
    _page_rule(wb, zone, {"id": "security_level", "value": "high"})
    assert _blockers(wb, zone, PHASE_ONE, False) == ()


@pytest.mark.parametrize("paused", [False, True])
def test_uri_overrides_block_every_phase_paused_or_not(wb, zone, paused):
    _owasp_off(wb, zone)
    made = wb.waf_legacy.create_override(
        zone, {"urls": ["example.com/api/*"], "rules": {"100000": "disable"}, "paused": paused}
    )
    for when, two in ((PHASE_ONE, False), (PHASE_TWO, True)):
        found = assess(read_zone(wb, zone), phase_two=two, now=when)
        assert found.blockers == ("uri_overrides",) and found.override_ids == (made.id,)
        assert "URI-based WAF overrides" in found.refusal().message
    wb.waf_legacy.delete_override(zone, made.id)
    assert _blockers(wb, zone, PHASE_TWO, True) == ()


def test_phase_two_is_selected_only_from_its_date(wb, zone):
    # A default zone (OWASP on) fails phase 1 and passes phase 2.
    day_before = datetime(2022, 9, 18, 23, 59, 59, tzinfo=UTC)
    assert _blockers(wb, zone, day_before, True) == ("owasp",)
    assert _blockers(wb, zone, PHASE_TWO, True) == ()
    assert _blockers(wb, zone, PHASE_TWO, False) == ("owasp",)


def test_owasp_group_and_rule_modes_never_block(wb, zone):
    _owasp_off(wb, zone)
    package = wb.waf_legacy.get_package(zone, OWASP_PACKAGE).definition
    group = package.groups[0]
    wb.waf_legacy.edit_group(zone, OWASP_PACKAGE, group.id, {"mode": "off"})
    wb.waf_legacy.edit_rule(zone, OWASP_PACKAGE, package.groups[1].rules[0].id, {"mode": "off"})
    assert _blockers(wb, zone, PHASE_ONE, False) == ()
    assert _blockers(wb, zone, PHASE_TWO, True) == ()


def test_a_free_zone_meets_the_conditions_like_a_zone_with_the_waf_off(wb):
    free = wb.create_zone("free.example", plan="free").id
    assert _blockers(wb, free, PHASE_ONE, False) == ()
    assert _blockers(wb, free, PHASE_TWO, True) == ()


def test_phase_one_lists_every_failed_condition(wb, zone):
    wb.firewall.create_rules(
        zone, [{"action": "bypass", "products": ["waf"], "filter": {"expression": "ssl"}}]
    )
    _page_rule(wb, zone, {"id": "disable_security"})
    found = assess(read_zone(wb, zone), phase_two=False, now=PHASE_ONE)
    assert found.blockers == ("owasp", "bypass_rules", "page_rules")
    message = found.refusal().message
    assert "phase 1" in message and "Bypass" in message and "Disable Security" in message
