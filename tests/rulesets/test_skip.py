"""Skip rules (exceptions): each kind, their order effect, logging, custom-phase skips."""

from __future__ import annotations

import pytest
from ruleset_helpers import (
    CF,
    OWASP,
    SELECT,
    SQLI,
    STRUTS,
    THRESHOLD,
    WP_ADMIN,
    execute,
    request,
    skip,
)

from workbench.rulesets import CUSTOM_PHASE, MANAGED_PHASE

ADMIN = 'http.request.uri.path contains "/admin"'
HOT = {**request("/admin/struts", "union select", "curl")}  # matches a lot


def recorded(plan, req):
    """decide() with a matched() that records every key it is asked about."""
    asked = []
    keys = {c.key for c in plan.checks}

    def matched(key):
        assert key in keys, f"asked about {key}, which is not a check"
        asked.append(key)
        return plan.compiled[key].matches(req)

    return plan.decide(matched), asked


def put(rs, zone, rules, phase=MANAGED_PHASE):
    return rs.put_entrypoint(zone.id, phase, {"rules": rules})


def test_skip_current_skips_every_later_rule_without_evaluating_them(rs, zone):
    entry = put(rs, zone, [skip({"ruleset": "current"}, ADMIN), execute(CF), execute(OWASP)])
    verdict, asked = recorded(rs.plan(zone.id), HOT)
    [event] = verdict.events
    assert (event.action, event.rule_id, event.ruleset_id) == ("skip", entry.rules[0].id, entry.id)
    assert event.source == "firewallManaged" and verdict.action is None
    assert asked == [entry.rules[0].id]  # the skipped rules' expressions are never evaluated
    # A request the skip rule does not match meets the managed rules.
    assert rs.evaluate(zone.id, request("/", "union")).action == "block"


def test_a_skip_only_affects_execute_rules_after_it(rs, zone):
    put(rs, zone, [execute(CF), skip({"ruleset": "current"}, ADMIN), execute(OWASP)])
    verdict = rs.evaluate(zone.id, request("/admin/struts"))
    assert [(e.action, e.ruleset_id) for e in verdict.events] == [("challenge", CF)]
    put(rs, zone, [execute(CF), execute(OWASP), skip({"rulesets": [CF]})])  # last: skips nothing
    verdict = rs.evaluate(zone.id, request("/struts"))
    assert [e.rule_id for e in verdict.events] == [STRUTS]


def test_skip_rulesets_skips_only_those(rs, zone):
    entry = put(rs, zone, [skip({"rulesets": [CF]}, ADMIN), execute(CF), execute(OWASP)])
    verdict, asked = recorded(
        rs.plan(zone.id), request("/admin/etc/passwd", "select <script", "curl")
    )
    assert [(e.action, e.ruleset_id) for e in verdict.events] == [
        ("skip", entry.id),
        ("block", OWASP),
    ]
    assert not any(k.startswith(CF) for k in asked) and entry.rules[1].id not in asked


def test_skip_rules_removes_those_rules_only(rs, zone):
    put(rs, zone, [skip({"rules": {CF: [SQLI, WP_ADMIN]}}, ADMIN), execute(CF)])
    verdict, asked = recorded(rs.plan(zone.id), request("/admin/wp-admin/struts", "union"))
    assert [e.rule_id for e in verdict.events[1:]] == [STRUTS]
    assert f"{CF}:{SQLI}" not in asked


def test_skip_rules_of_owasp_lower_the_score(rs, zone):
    req = request("/admin", "select <script", "curl")  # 25 + 5 + 3 = 33
    put(rs, zone, [execute(OWASP, {"rules": [{"id": THRESHOLD, "score_threshold": 30}]})])
    assert rs.evaluate(zone.id, req).events[0].score == 33
    put(
        rs,
        zone,
        [
            skip({"rules": {OWASP: [SELECT]}}, ADMIN),
            execute(OWASP, {"rules": [{"id": THRESHOLD, "score_threshold": 30}]}),
        ],
    )
    assert [e.action for e in rs.evaluate(zone.id, req).events] == ["skip"]  # 8 < 30
    put(rs, zone, [skip({"rules": {OWASP: [THRESHOLD]}}, ADMIN), execute(OWASP)])
    assert [e.action for e in rs.evaluate(zone.id, req).events] == ["skip"]


def test_exception_kinds_combine_in_order(rs, zone):
    entry = put(
        rs,
        zone,
        [
            skip({"rules": {CF: [STRUTS]}}, ADMIN),
            skip({"rulesets": [OWASP]}, 'http.user_agent contains "curl"'),
            execute(CF),
            execute(OWASP),
        ],
    )
    verdict = rs.evaluate(zone.id, request("/admin/struts/wp-admin", "select <script", "curl"))
    assert [(e.action, e.rule_id) for e in verdict.events] == [
        ("skip", entry.rules[0].id),
        ("skip", entry.rules[1].id),
        ("log", WP_ADMIN),
    ]
    assert verdict.action is None


@pytest.mark.parametrize(
    ("logging", "logged"), [(None, True), ({"enabled": True}, True), ({"enabled": False}, False)]
)
def test_skip_logging(rs, zone, logging, logged):
    rule = skip({"ruleset": "current"}, ADMIN)
    if logging is not None:
        rule["logging"] = logging
    entry = put(rs, zone, [rule, execute(CF)])
    assert entry.rules[0].to_dict().get("logging") == logging
    verdict = rs.evaluate(zone.id, request("/admin", "union"))
    assert [e.action for e in verdict.events] == (["skip"] if logged else [])
    assert verdict.action is None


def test_custom_rules_act_with_their_own_source_and_ruleset_id(rs, zone):
    entry = put(
        rs,
        zone,
        [
            {"action": "log", "expression": ADMIN, "description": "seen"},
            {
                "action": "managed_challenge",
                "expression": 'http.request.uri.path contains "/admin/x"',
            },
            {"action": "block", "expression": ADMIN},
        ],
        CUSTOM_PHASE,
    )
    verdict = rs.evaluate(zone.id, request("/admin/x"), phase=CUSTOM_PHASE)
    assert [(e.source, e.action, e.ruleset_id) for e in verdict.events] == [
        ("firewallCustom", "log", entry.id),
        ("firewallCustom", "managed_challenge", entry.id),
    ]
    assert verdict.action == "managed_challenge" and verdict.events[0].description == "seen"


def test_custom_skip_current_products_and_phases(rs, zone):
    put(rs, zone, [execute(CF)])
    put(
        rs,
        zone,
        [
            skip({"ruleset": "current", "products": ["waf", "uaBlock"]}, ADMIN),
            {"action": "block", "expression": ADMIN},
        ],
        CUSTOM_PHASE,
    )
    verdict = rs.evaluate(zone.id, request("/admin", "union"), phase=None)
    # The custom block is skipped; the managed phase still runs and blocks.
    assert [(e.source, e.action) for e in verdict.events] == [
        ("firewallCustom", "skip"),
        ("firewallManaged", "block"),
    ]
    assert verdict.bypassed == {"waf", "uaBlock"}
    put(rs, zone, [skip({"phases": [MANAGED_PHASE], "products": ["waf"]}, ADMIN)], CUSTOM_PHASE)
    verdict, asked = recorded(rs.plan(zone.id, phase=None), request("/admin", "union"))
    assert [e.action for e in verdict.events] == ["skip"] and verdict.action is None
    assert verdict.bypassed == {"waf", MANAGED_PHASE}
    assert not any(k.startswith(CF) for k in asked)


def test_a_custom_block_ends_the_request_before_the_managed_phase(rs, zone):
    put(rs, zone, [execute(CF)])
    put(rs, zone, [{"action": "block", "expression": ADMIN}], CUSTOM_PHASE)
    verdict, asked = recorded(rs.plan(zone.id, phase=None), request("/admin", "union"))
    assert [e.source for e in verdict.events] == ["firewallCustom"] and verdict.action == "block"
    assert len(asked) == 1
