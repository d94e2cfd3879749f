"""The firewall-rules SystemPlan: order, actions, bypass products, events."""

from __future__ import annotations

from workbench import Workbench
from workbench.core.security import FIREWALL_RULES
from workbench.rules_language import compile_expression
from workbench.traffic.firewall_plan import FirewallPlan, firewall_plan
from workbench.traffic.request import Request


def _zone():
    wb = Workbench(seed=3)
    zone = wb.create_zone("example.com", plan="enterprise")
    return wb, zone.id


def _rules(wb, zone_id, specs):
    return wb.firewall.create_rules(
        zone_id,
        [{"filter": {"expression": e}, "action": a, **extra} for e, a, extra in specs],
    )


def test_checks_are_the_active_rules_filters_in_evaluation_order():
    wb, zid = _zone()
    rules = _rules(
        wb,
        zid,
        [
            ('http.host eq "b"', "block", {"priority": 5}),
            ('http.host eq "a"', "log", {"priority": 1}),
            ('http.host eq "c"', "challenge", {"priority": 9, "paused": True}),
            ('http.host eq "d"', "allow", {}),  # no priority: last
        ],
    )
    plan = firewall_plan(wb, zid)
    assert [c.key for c in plan.checks] == [rules[1].id, rules[0].id, rules[3].id]
    assert [c.expression for c in plan.checks] == [
        'http.host eq "a"',
        'http.host eq "b"',
        'http.host eq "d"',
    ]
    assert [r.id for r in wb.firewall.evaluation_order(zid) if not r.paused] == [
        c.key for c in plan.checks
    ]


def test_log_and_bypass_continue_allow_ends_the_rules_terminal_ends_the_request():
    wb, zid = _zone()
    log, bypass, allow, block = _rules(
        wb,
        zid,
        [
            ("ssl", "log", {"priority": 1, "description": "seen"}),
            ("(ssl)", "bypass", {"priority": 2, "products": ["waf", "uaBlock"]}),
            ('http.request.uri.path eq "/ok"', "allow", {"priority": 3}),
            ("((ssl))", "block", {"priority": 4}),
        ],
    )
    plan = firewall_plan(wb, zid)
    blocked = plan.decide(lambda key: key != allow.id)
    assert [(e.action, e.rule_id) for e in blocked.events] == [
        ("log", log.id),
        ("bypass", bypass.id),
        ("block", block.id),
    ]
    assert blocked.action == "block" and blocked.bypassed == frozenset({"waf", "uaBlock"})
    allowed = plan.decide(lambda key: True)
    assert [e.action for e in allowed.events] == ["log", "bypass", "allow"]
    assert allowed.action is None  # allow ends the firewall rules only: the WAF still runs
    event = blocked.events[0]
    assert (event.source, event.ruleset_id, event.description) == (FIREWALL_RULES, None, "seen")
    assert event.metadata == {"filter_id": log.filter.id}
    assert blocked.events[1].metadata["products"] == ["waf", "uaBlock"]
    assert plan.decide(lambda key: False).events == []


def test_every_terminal_action_ends_the_request():
    for action in ("block", "challenge", "js_challenge", "managed_challenge"):
        wb, zid = _zone()
        _rules(wb, zid, [("ssl", action, {"priority": 1}), ("(ssl)", "log", {"priority": 2})])
        verdict = firewall_plan(wb, zid).decide(lambda key: True)
        assert verdict.action == action and len(verdict.events) == 1


def test_a_paused_filter_leaves_its_rule_out():
    wb, zid = _zone()
    [rule] = _rules(wb, zid, [("ssl", "block", {})])
    wb.firewall.update_filter(
        zid, rule.filter.id, {"id": rule.filter.id, "expression": "ssl", "paused": True}
    )
    assert firewall_plan(wb, zid).checks == []


def test_the_plan_agrees_with_the_firewall_service_on_generated_traffic(traffic):
    wb, zid = _zone()
    _rules(
        wb,
        zid,
        [
            (
                'http.request.uri.path contains "/api/"',
                "bypass",
                {"products": ["waf"], "priority": 1},
            ),
            ('http.request.method eq "POST"', "log", {"priority": 2}),
            ('http.request.uri.path contains "/wp-"', "allow", {"priority": 3}),
            ('http.user_agent contains "curl"', "managed_challenge", {"priority": 4}),
            ('ip.src.country in {"CN" "RU"}', "block", {}),
        ],
    )
    plan = firewall_plan(wb, zid)
    compiled = {c.key: compile_expression(c.expression) for c in plan.checks}
    for raw in traffic[:400]:
        fields = Request.from_raw(raw).fields()
        verdict = plan.decide(lambda key, f=fields: compiled[key].matches(f))
        service = wb.firewall.evaluate(zid, fields)
        assert [(e.rule_id, e.action) for e in verdict.events] == service.matched
        assert verdict.bypassed == service.bypassed
        ending = service.action if service.action != "allow" else None
        assert verdict.action == ending


def test_from_rules_takes_rules_in_the_order_given():
    wb, zid = _zone()
    a, b = _rules(wb, zid, [("ssl", "log", {"priority": 2}), ("(ssl)", "log", {"priority": 1})])
    plan = FirewallPlan.from_rules([a, b])
    assert [c.key for c in plan.checks] == [a.id, b.id]
