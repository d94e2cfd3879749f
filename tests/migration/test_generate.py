"""The generated configuration: shape, order, skip rules, overrides, OWASP table, messages."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workbench import Workbench
from workbench.migration import NOT_MIGRATED, propose, read_zone
from workbench.rules_language import compile_expression
from workbench.rulesets import CLOUDFLARE_MANAGED_ID, OWASP_ID, OWASP_THRESHOLD_RULE_ID
from workbench.waf_legacy import CLOUDFLARE_PACKAGE, OWASP_PACKAGE, url_pattern_expression

STRUTS_OLD, STRUTS_NEW = "100151", "23ee7cebe6e8443e99ecf932ab579455"
APACHE_GROUP = "bf582c2e19ca444c12819adfdd4d199b"
WORDPRESS_GROUP = "f50040c10c64935119876a147e217e0e"
NO_EQUIVALENT = "100013"  # Specials, default challenge, no new rule
RULE_KEYS = {"id", "version", "ref", "description", "action", "expression", "enabled"}


@pytest.fixture
def wb():
    return Workbench(seed=0, start=datetime(2022, 10, 1, tzinfo=UTC))


@pytest.fixture
def zone(wb):
    return wb.create_zone("example.com", plan="business").id


def _config(wb, zone):
    return propose(read_zone(wb, zone))


def _managed(config):
    return next(
        r for r in config.rules if r["action_parameters"].get("id") == CLOUDFLARE_MANAGED_ID
    )


def _owasp(config):
    found = [r for r in config.rules if r["action_parameters"].get("id") == OWASP_ID]
    return found[0] if found else None


def test_defaults_give_two_bare_execute_rules_and_no_messages(wb, zone):
    config = _config(wb, zone)
    assert config.result()["name"] == "default" and set(config.result()) == {"name", "rules"}
    for rule in config.rules:
        assert set(rule) == RULE_KEYS | {"action_parameters"}
        assert (rule["id"], rule["version"], rule["ref"], rule["description"]) == ("",) * 4
        assert (rule["action"], rule["expression"], rule["enabled"]) == ("execute", "true", True)
    assert _managed(config)["action_parameters"] == {"id": CLOUDFLARE_MANAGED_ID}
    assert config.messages == []


def test_the_result_is_a_copy_the_caller_may_edit(wb, zone):
    config = _config(wb, zone)
    config.result()["rules"].clear()
    assert len(config.result()["rules"]) == 2


def test_a_disabled_rule_is_the_documented_override(wb, zone):
    wb.waf_legacy.edit_rule(zone, CLOUDFLARE_PACKAGE, STRUTS_OLD, {"mode": "disable"})
    params = _managed(_config(wb, zone))["action_parameters"]
    assert params == {
        "id": CLOUDFLARE_MANAGED_ID,
        "overrides": {"rules": [{"id": STRUTS_NEW, "action": "log", "enabled": False}]},
    }


@pytest.mark.parametrize(
    ("mode", "action"), [("simulate", "log"), ("challenge", "challenge"), ("block", None)]
)
def test_changed_rule_modes_map_their_action(wb, zone, mode, action):
    wb.waf_legacy.edit_rule(zone, CLOUDFLARE_PACKAGE, STRUTS_OLD, {"mode": mode})
    params = _managed(_config(wb, zone))["action_parameters"]
    if action is None:  # block is the rule's default: nothing changes
        assert params == {"id": CLOUDFLARE_MANAGED_ID}
    else:
        assert params["overrides"] == {
            "rules": [{"id": STRUTS_NEW, "action": action, "enabled": True}]
        }


def test_a_disabled_group_disables_each_of_its_rules_with_a_new_id(wb, zone):
    wb.waf_legacy.edit_group(zone, CLOUDFLARE_PACKAGE, APACHE_GROUP, {"mode": "off"})
    group = wb.waf_legacy.get_group(zone, CLOUDFLARE_PACKAGE, APACHE_GROUP).definition
    expected = [
        {"id": r.new_id, "action": "log", "enabled": False} for r in group.rules if r.new_id
    ]
    assert expected and _managed(_config(wb, zone))["action_parameters"]["overrides"] == {
        "rules": expected
    }


def test_a_default_off_group_adds_nothing_even_turned_on(wb, zone):
    assert _managed(_config(wb, zone))["action_parameters"] == {"id": CLOUDFLARE_MANAGED_ID}
    wb.waf_legacy.edit_group(zone, CLOUDFLARE_PACKAGE, WORDPRESS_GROUP, {"mode": "on"})
    assert _managed(_config(wb, zone))["action_parameters"] == {"id": CLOUDFLARE_MANAGED_ID}


def test_a_changed_rule_without_equivalent_is_reported_not_dropped(wb, zone):
    wb.waf_legacy.edit_rule(zone, CLOUDFLARE_PACKAGE, NO_EQUIVALENT, {"mode": "block"})
    config = _config(wb, zone)
    assert _managed(config)["action_parameters"] == {"id": CLOUDFLARE_MANAGED_ID}
    [message] = config.messages
    assert message["code"] == NOT_MIGRATED and set(message) == {"code", "message"}
    assert NO_EQUIVALENT in message["message"] and "not migrated" in message["message"]


@pytest.mark.parametrize(
    ("sensitivity", "level", "threshold"),
    [("high", 2, 40), ("medium", 1, 25), ("low", 1, 40)],
)
@pytest.mark.parametrize(
    ("action_mode", "action"),
    [("block", "block"), ("challenge", "challenge"), ("simulate", "log")],
)
def test_the_sensitivity_table(wb, zone, sensitivity, level, threshold, action_mode, action):
    body = {"sensitivity": sensitivity, "action_mode": action_mode}
    wb.waf_legacy.edit_package(zone, OWASP_PACKAGE, body)
    params = _owasp(_config(wb, zone))["action_parameters"]
    assert params == {
        "id": OWASP_ID,
        "overrides": {
            "categories": [
                {"category": f"paranoia-level-{n}", "enabled": False} for n in range(level + 1, 5)
            ],
            "rules": [
                {"id": OWASP_THRESHOLD_RULE_ID, "score_threshold": threshold, "action": action}
            ],
        },
    }


def test_default_sensitivity_is_high_pl2_40(wb, zone):
    overrides = _owasp(_config(wb, zone))["action_parameters"]["overrides"]
    assert [c["category"] for c in overrides["categories"]] == [
        "paranoia-level-3",
        "paranoia-level-4",
    ]
    assert overrides["rules"][0]["score_threshold"] == 40


def test_sensitivity_off_leaves_the_owasp_rule_out(wb, zone):
    wb.waf_legacy.edit_package(zone, OWASP_PACKAGE, {"sensitivity": "off"})
    config = _config(wb, zone)
    assert _owasp(config) is None and len(config.rules) == 1 and config.messages == []


def test_owasp_group_and_rule_modes_are_reported(wb, zone):
    package = wb.waf_legacy.get_package(zone, OWASP_PACKAGE).definition
    group, other = package.groups[0], package.groups[1]
    wb.waf_legacy.edit_group(zone, OWASP_PACKAGE, group.id, {"mode": "off"})
    wb.waf_legacy.edit_rule(zone, OWASP_PACKAGE, other.rules[0].id, {"mode": "off"})
    config = _config(wb, zone)
    texts = [m["message"] for m in config.messages]
    assert len(texts) == 2 and all("not migrated" in t for t in texts)
    assert group.name in texts[0] and other.rules[0].id in texts[1]
    # The OWASP execute rule itself is unchanged.
    assert _owasp(config)["action_parameters"]["overrides"]["rules"][0]["score_threshold"] == 40


def _bypass(wb, zone, expression, **extra):
    [rule] = wb.firewall.create_rules(
        zone,
        [{"action": "bypass", "products": ["waf"], "filter": {"expression": expression}, **extra}],
    )
    return rule


def test_bypass_rules_become_skip_rules_in_evaluation_order(wb, zone):
    late = _bypass(wb, zone, 'http.request.uri.path contains "/late"')
    early = _bypass(wb, zone, 'http.request.uri.path contains "/early"', priority=1)
    paused = _bypass(wb, zone, "ip.src eq 192.0.2.9", priority=2, paused=True)
    wb.firewall.create_rules(
        zone, [{"action": "bypass", "products": ["hot"], "filter": {"expression": "ssl"}}]
    )
    rules = _config(wb, zone).rules
    skips = [r for r in rules if r["action"] == "skip"]
    assert [r["expression"] for r in skips] == [
        early.filter.expression,
        paused.filter.expression,
        late.filter.expression,
    ]
    assert [r["enabled"] for r in skips] == [True, False, True]
    assert all(r["action_parameters"] == {"ruleset": "current"} for r in skips)
    assert [r["action"] for r in rules] == ["skip", "skip", "skip", "execute", "execute"]


def _page(wb, zone, pattern, action, status="active", priority=1):
    return wb.firewall.page_rules.create(
        zone,
        {
            "targets": [{"target": "url", "constraint": {"value": pattern}}],
            "actions": [action],
            "status": status,
            "priority": priority,
        },
    )


@pytest.mark.parametrize("action", [{"id": "disable_security"}, {"id": "waf", "value": "off"}])
def test_waf_off_page_rules_become_skip_rules_after_the_firewall_ones(wb, zone, action):
    _page(wb, zone, "example.com/static/*", action)
    _bypass(wb, zone, "ip.src eq 192.0.2.1")
    rules = _config(wb, zone).rules
    assert [(r["action"], r["expression"]) for r in rules[:2]] == [
        ("skip", "ip.src eq 192.0.2.1"),
        ("skip", url_pattern_expression("example.com/static/*")),
    ]
    compile_expression(rules[1]["expression"])


def test_zone_setting_off_disables_every_execute_rule(wb, zone):
    wb.waf_legacy.set_setting(zone, {"value": "off"})
    _bypass(wb, zone, "ip.src eq 192.0.2.1")
    rules = _config(wb, zone).rules
    assert [(r["action"], r["enabled"], r["expression"]) for r in rules] == [
        ("skip", True, "ip.src eq 192.0.2.1"),
        ("execute", False, "true"),
        ("execute", False, "true"),
    ]


def test_page_rule_waf_on_limits_the_execute_rules_to_its_pattern(wb, zone):
    wb.waf_legacy.set_setting(zone, {"value": "off"})
    _page(wb, zone, "example.com/shop/*", {"id": "waf", "value": "on"})
    _page(wb, zone, "example.com/old/*", {"id": "waf", "value": "on"}, status="disabled")
    rules = _config(wb, zone).rules
    expected = url_pattern_expression("example.com/shop/*")
    assert [(r["action"], r["enabled"], r["expression"]) for r in rules] == [
        ("execute", True, expected),
        ("execute", True, expected),
    ]


def test_page_rule_waf_on_while_the_setting_is_on_adds_nothing(wb, zone):
    _page(wb, zone, "example.com/shop/*", {"id": "waf", "value": "on"})
    assert [r["expression"] for r in _config(wb, zone).rules] == ["true", "true"]


def test_a_disabled_waf_off_page_rule_gives_a_disabled_skip_rule(wb, zone):
    _page(wb, zone, "example.com/a/*", {"id": "disable_security"}, status="disabled")
    [skip, *_] = _config(wb, zone).rules
    assert (skip["action"], skip["enabled"]) == ("skip", False)


def test_the_generated_configuration_is_accepted_by_the_ruleset_engine(wb, zone):
    _bypass(wb, zone, "ip.src eq 192.0.2.1")
    _page(wb, zone, "*example.com/static/*", {"id": "disable_security"})
    wb.waf_legacy.edit_rule(zone, CLOUDFLARE_PACKAGE, STRUTS_OLD, {"mode": "disable"})
    made = wb.rulesets.put_entrypoint(
        zone, "http_request_firewall_managed", _config(wb, zone).result(), dry_run=True
    )
    assert [r.action for r in made.rules] == ["skip", "skip", "execute", "execute"]
