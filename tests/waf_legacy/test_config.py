"""Per-zone defaults, mode changes, refusals, sensitivity/action_mode, listings, config()."""

from __future__ import annotations

import pytest
from waf_helpers import CF, OWASP, SPECIALS, SQLI, WORDPRESS, XSS

from workbench.core.errors import NotFound, ValidationError
from workbench.waf_legacy.errors import (
    GroupNotFound,
    InvalidWafInput,
    OldWafNotInPlan,
    PackageNotEditable,
    PackageNotFound,
    WafRuleNotFound,
)


@pytest.mark.parametrize("plan", ["pro", "business", "enterprise"])
def test_paid_plans_start_with_the_old_waf_on_and_catalogue_defaults(waf, zones, plan):
    zone = zones[plan]
    assert waf.enabled(zone) is True
    assert waf.get_setting(zone).to_dict() == {
        "id": "waf",
        "value": "on",
        "editable": True,
        "modified_on": None,
    }
    owasp = waf.get_package(zone, OWASP).to_dict()
    assert owasp == {
        "id": OWASP,
        "name": "OWASP ModSecurity Core Rule Set",
        "description": owasp["description"],
        "zone_id": zone,
        "detection_mode": "anomaly",
        "status": "active",
        "sensitivity": "high",
        "action_mode": "challenge",
    }
    cf = waf.get_package(zone, CF).to_dict()
    assert cf["detection_mode"] == "traditional" and "sensitivity" not in cf
    assert waf.get_group(zone, CF, SPECIALS).mode == "on"
    assert waf.get_group(zone, CF, WORDPRESS).mode == "off"
    assert waf.get_rule(zone, CF, "100015").mode == "default"
    assert waf.get_rule(zone, OWASP, "958001").mode == "off"


def test_free_zone_has_the_setting_off_but_can_list_and_configure(waf, zones):
    zone = zones["free"]
    assert waf.enabled(zone) is False
    assert waf.get_setting(zone).to_dict()["value"] == "off"
    assert waf.get_setting(zone).to_dict()["editable"] is False
    assert [p.id for p in waf.list_packages(zone).items] == [CF, OWASP]
    assert waf.edit_rule(zone, CF, "100015", {"mode": "simulate"}).mode == "simulate"
    with pytest.raises(OldWafNotInPlan) as caught:
        waf.set_setting(zone, {"value": "on"})
    assert caught.value.code == 10606 and "Pro" in caught.value.message
    assert waf.get_setting(zone).value == "off"  # nothing half-written
    assert waf.set_setting(zone, {"value": "off"}).value == "off"


def test_ids_are_the_catalogues_in_every_zone(waf, zones):
    listed = {z: [p.to_dict()["id"] for p in waf.list_packages(z).items] for z in zones.values()}
    assert all(ids == [CF, OWASP] for ids in listed.values())
    assert waf.get_package(zones["pro"], CF).to_dict()["zone_id"] == zones["pro"]


def test_group_and_rule_shapes(waf, zone):
    assert waf.get_group(zone, CF, SPECIALS).to_dict() == {
        "id": SPECIALS,
        "name": "Cloudflare Specials",
        "description": "core protections",
        "rules_count": 5,
        "modified_rules_count": 0,
        "package_id": CF,
        "mode": "on",
        "allowed_modes": ["on", "off"],
    }
    assert waf.get_rule(zone, CF, "100015").to_dict() == {
        "id": "100015",
        "description": "deny 100015",
        "priority": "10",
        "group": {"id": SPECIALS, "name": "Cloudflare Specials"},
        "package_id": CF,
        "allowed_modes": ["default", "disable", "simulate", "block", "challenge"],
        "mode": "default",
        "default_mode": "block",
    }
    owasp_rule = waf.get_rule(zone, OWASP, "950001").to_dict()
    assert owasp_rule["allowed_modes"] == ["on", "off"] and "default_mode" not in owasp_rule
    allow = waf.get_rule(zone, CF, "100100").to_dict()
    assert allow["allowed_modes"] == ["on", "off"] and allow["mode"] == "on"


def test_mode_changes_count_as_modified_and_back_to_default_does_not(waf, zone, wb):
    waf.edit_rule(zone, CF, "100015", {"mode": "challenge"})
    waf.edit_rule(zone, CF, "100016", {"mode": "disable"})
    assert waf.get_group(zone, CF, SPECIALS).modified_rules_count == 2
    waf.edit_rule(zone, CF, "100016", {"mode": "default"})
    assert waf.get_group(zone, CF, SPECIALS).modified_rules_count == 1
    assert waf.edit_group(zone, CF, WORDPRESS, {"mode": "on"}).mode == "on"
    assert waf.edit_group(zone, CF, SPECIALS, {"mode": "off"}).to_dict()["mode"] == "off"
    # Another zone is untouched.
    other = wb.create_zone("other.example", plan="business").id
    assert waf.get_rule(other, CF, "100015").mode == "default"
    assert waf.get_group(other, CF, SPECIALS).mode == "on"


@pytest.mark.parametrize(
    ("package", "rule", "mode"),
    [
        (CF, "100015", "on"),
        (OWASP, "950001", "block"),
        (CF, "100100", "default"),
        (CF, "100015", None),
    ],
)
def test_a_mode_outside_allowed_modes_is_refused_naming_the_field(waf, zone, package, rule, mode):
    before = waf.get_rule(zone, package, rule).mode
    with pytest.raises(InvalidWafInput) as caught:
        waf.edit_rule(zone, package, rule, {"mode": mode})
    assert caught.value.extra["source"] == {"pointer": "/mode"}
    assert caught.value.code == 10600 and "/mode" in caught.value.message
    assert waf.get_rule(zone, package, rule).mode == before


@pytest.mark.parametrize("body", [{}, {"mode": "maybe"}, {"mode": "on", "extra": 1}, ["on"], None])
def test_bad_group_bodies_are_refused(waf, zone, body):
    with pytest.raises(InvalidWafInput):
        waf.edit_group(zone, CF, SPECIALS, body)
    assert waf.get_group(zone, CF, SPECIALS).mode == "on"


def test_sensitivity_and_action_mode_of_the_anomaly_package(waf, zone):
    done = waf.edit_package(zone, OWASP, {"sensitivity": "low", "action_mode": "simulate"})
    assert (done.sensitivity, done.action_mode) == ("low", "simulate")
    assert waf.edit_package(zone, OWASP, {"action_mode": "block"}).sensitivity == "low"
    with pytest.raises(InvalidWafInput) as caught:
        waf.edit_package(zone, OWASP, {"sensitivity": "low", "action_mode": "fly"})
    assert caught.value.extra["source"] == {"pointer": "/action_mode"}
    assert waf.get_package(zone, OWASP).action_mode == "block"  # nothing half-written
    with pytest.raises(InvalidWafInput):
        waf.edit_package(zone, OWASP, {"sensitivity": "paranoid"})


def test_a_traditional_package_cannot_be_edited(waf, zone):
    with pytest.raises(PackageNotEditable) as caught:
        waf.edit_package(zone, CF, {"sensitivity": "low"})
    assert isinstance(caught.value, ValidationError) and caught.value.code == 10605
    assert "anomaly" in caught.value.message


def test_unknown_ids_are_not_found_with_their_own_codes(waf, zone):
    cases = [
        (lambda: waf.get_package(zone, "f" * 32), PackageNotFound, 10601),
        (lambda: waf.get_group(zone, CF, SQLI), GroupNotFound, 10602),
        (lambda: waf.get_rule(zone, OWASP, "100015"), WafRuleNotFound, 10603),
        (lambda: waf.list_rules(zone, "nope"), PackageNotFound, 10601),
    ]
    for call, cls, code in cases:
        with pytest.raises(cls) as caught:
            call()
        assert isinstance(caught.value, NotFound) and caught.value.code == code


def test_rule_listing_filters_orders_and_pages(waf, zone):
    waf.edit_rule(zone, CF, "100016", {"mode": "disable"})
    rules = waf.list_rules(zone, CF)
    assert [r.id for r in rules.items] == [
        "100015",
        "100016",
        "100017",
        "100048",
        "100100",
        "WP0025B",
    ]
    assert rules.result_info["per_page"] == 50
    assert [r.id for r in waf.list_rules(zone, CF, mode="DIS").items] == ["100016"]
    assert [r.id for r in waf.list_rules(zone, CF, group_id=WORDPRESS).items] == ["WP0025B"]
    assert [r.id for r in waf.list_rules(zone, CF, description="100017").items] == ["100017"]
    by_priority = waf.list_rules(zone, CF, order="priority", group_id=SPECIALS)
    assert [r.definition.priority for r in by_priority.items] == ["2", "3", "4", "5", "10"]
    anyof = waf.list_rules(zone, CF, mode="disable", priority="10", match="any")
    assert [r.id for r in anyof.items] == ["100015", "100016"]
    paged = waf.list_rules(zone, CF, page=2, per_page=5)
    assert [r.id for r in paged.items] == ["WP0025B"] and paged.result_info["total_pages"] == 2
    for bad in ({"mode": "sometimes"}, {"order": "name"}, {"direction": "up"}, {"match": "most"}):
        with pytest.raises(InvalidWafInput) as caught:
            waf.list_rules(zone, CF, **bad)
        assert caught.value.extra["source"] == {"parameter": next(iter(bad))}


def test_group_and_package_listing(waf, zone):
    assert [g.id for g in waf.list_groups(zone, OWASP, mode="on").items] == [SQLI, XSS]
    assert [g.id for g in waf.list_groups(zone, OWASP, rules_count="1").items] == ["b3" * 16]
    by_count = waf.list_groups(zone, OWASP, order="rules_count", direction="desc")
    assert [len(g.definition.rules) for g in by_count.items] == [2, 2, 1]
    assert [p.id for p in waf.list_packages(zone, name="owasp").items] == [OWASP]
    assert [p.id for p in waf.list_packages(zone, order="name", direction="desc").items] == [
        OWASP,
        CF,
    ]
    with pytest.raises(InvalidWafInput):
        waf.list_groups(zone, OWASP, rules_count="two")


def test_config_gives_the_migration_everything(waf, zone, wb):
    waf.edit_rule(zone, CF, "100015", {"mode": "simulate"})
    waf.edit_package(zone, OWASP, {"sensitivity": "medium"})
    made = waf.create_override(
        zone, {"urls": ["pro.example/api/*"], "rules": {"100016": "disable"}}
    )
    config = waf.config(zone)
    assert (config["zone_id"], config["plan"], config["waf"], config["enabled"]) == (
        zone,
        "pro",
        "on",
        True,
    )
    cf, owasp = config["packages"]
    assert (owasp["sensitivity"], owasp["action_mode"]) == ("medium", "challenge")
    assert cf["sensitivity"] is None
    rule = cf["groups"][0]["rules"][0]
    assert rule == {
        "id": "100015",
        "description": "deny 100015",
        "priority": "10",
        "kind": "deny",
        "mode": "simulate",
        "default_mode": "block",
        "effective_mode": "simulate",
        "modified": True,
        "score": None,
        "new_id": "c1" * 16,
    }
    assert cf["groups"][1]["mode"] == "off" and cf["groups"][1]["modified"] is False
    assert owasp["groups"][0]["rules"][0]["score"] == 20
    assert config["overrides"] == [made.to_dict()]
