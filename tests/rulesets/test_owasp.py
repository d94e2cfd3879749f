"""The OWASP Core Ruleset: scores, thresholds, paranoia levels, the single 949110 event."""

from __future__ import annotations

from ruleset_helpers import CF, CURL, DOTS, OWASP, PASSWD, SELECT, THRESHOLD, XSS, execute, request

from workbench.rulesets import MANAGED_PHASE

# Every OWASP stand-in matches: 5 (PL1) + 3 (PL1) + 25 (PL2) + 20 (PL3) + 10 (PL4) = 63.
EVERYTHING = request("/etc/passwd/..", "select <script", "curl")


def pl(level):
    """Category overrides for paranoia level ``level`` (disable every level above it)."""
    return [{"category": f"paranoia-level-{n}", "enabled": False} for n in range(level + 1, 5)]


def owasp(rs, zone, overrides=None, *before):
    rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [*before, execute(OWASP, overrides)]})


def test_one_event_from_949110_with_the_total_and_the_contributing_rules(rs, zone):
    entry = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(OWASP)]})
    verdict = rs.evaluate(zone.id, EVERYTHING)
    [event] = verdict.events
    assert (event.source, event.rule_id, event.ruleset_id) == ("firewallManaged", THRESHOLD, OWASP)
    assert event.ruleset_id != entry.id
    assert event.action == verdict.action == "block"
    assert event.score == 63 and event.description == "949110: Inbound Anomaly Score Exceeded"
    assert event.metadata["threshold"] == 40
    assert [c["rule_id"] for c in event.metadata["contributing"]] == [
        XSS,
        CURL,
        SELECT,
        PASSWD,
        DOTS,
    ]
    assert event.metadata["contributing"][2] == {
        "rule_id": SELECT,
        "description": "942100: SQLi select",
        "score": 25,
        "paranoia_level": 2,
    }


def test_below_the_threshold_there_is_no_event(rs, zone):
    owasp(rs, zone)
    verdict = rs.evaluate(zone.id, request("/", "select <script"))  # 30 < 40
    assert verdict.events == [] and verdict.action is None
    assert rs.evaluate(zone.id, request("/etc/passwd", "select")).events[0].score == 45
    assert rs.evaluate(zone.id, request("/etc/passwd", "select <script")).events[0].score == 50


def test_the_threshold_and_action_come_from_a_rule_override(rs, zone):
    owasp(
        rs,
        zone,
        {"rules": [{"id": THRESHOLD, "score_threshold": 25, "action": "managed_challenge"}]},
    )
    verdict = rs.evaluate(zone.id, request("/", "select"))  # exactly 25
    [event] = verdict.events
    assert (event.score, event.action, event.metadata["threshold"]) == (25, "managed_challenge", 25)
    assert verdict.action == "managed_challenge"
    owasp(rs, zone, {"rules": [{"id": THRESHOLD, "score_threshold": 60}]})
    assert rs.evaluate(zone.id, request("/etc/passwd", "select <script", "curl")).events == []  # 53
    assert rs.evaluate(zone.id, EVERYTHING).events[0].score == 63


def test_paranoia_levels_through_category_overrides(rs, zone):
    scores = {}
    for level in (1, 2, 3, 4):
        overrides = {"categories": pl(level), "rules": [{"id": THRESHOLD, "score_threshold": 1}]}
        owasp(rs, zone, overrides)
        [event] = rs.evaluate(zone.id, EVERYTHING).events
        scores[level] = event.score
        assert {c["paranoia_level"] for c in event.metadata["contributing"]} == set(
            range(1, level + 1)
        )
    assert scores == {1: 8, 2: 33, 3: 53, 4: 63}
    # A disabled level's rules are not even checks of the plan.
    owasp(rs, zone, {"categories": pl(2)})
    keys = {c.key for c in rs.plan(zone.id).checks}
    assert f"{OWASP}:{SELECT}" in keys and f"{OWASP}:{PASSWD}" not in keys
    assert f"{OWASP}:{THRESHOLD}" not in keys  # "true" always matches: no check needed


def test_a_rule_override_reenables_one_rule_of_a_disabled_level(rs, zone):
    owasp(
        rs,
        zone,
        {
            "categories": pl(1),
            "rules": [{"id": PASSWD, "enabled": True}, {"id": THRESHOLD, "score_threshold": 1}],
        },
    )
    [event] = rs.evaluate(zone.id, EVERYTHING).events
    assert event.score == 5 + 3 + 20


def test_log_action_lets_the_request_through_and_later_rulesets_run(rs, zone):
    rs.put_entrypoint(
        zone.id,
        MANAGED_PHASE,
        {
            "rules": [
                execute(OWASP, {"rules": [{"id": THRESHOLD, "action": "log"}]}),
                execute(CF),
            ]
        },
    )
    verdict = rs.evaluate(zone.id, {**EVERYTHING, "http.request.uri.path": "/etc/passwd/struts"})
    assert [(e.action, e.ruleset_id) for e in verdict.events] == [("log", OWASP), ("challenge", CF)]
    assert verdict.action == "challenge"


def test_a_ruleset_level_action_reaches_the_threshold_rule(rs, zone):
    owasp(rs, zone, {"action": "js_challenge"})
    assert rs.evaluate(zone.id, EVERYTHING).action == "js_challenge"


def test_disabling_the_threshold_rule_silences_the_ruleset(rs, zone):
    owasp(rs, zone, {"rules": [{"id": THRESHOLD, "enabled": False}]})
    assert rs.evaluate(zone.id, EVERYTHING).events == []
    assert not any(c.key.startswith(OWASP) for c in rs.plan(zone.id).checks)


def test_a_cloudflare_block_first_means_owasp_never_scores(rs, zone):
    rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF), execute(OWASP)]})
    verdict = rs.evaluate(zone.id, {**EVERYTHING, "http.request.uri.query": "union select <script"})
    assert [e.ruleset_id for e in verdict.events] == [CF]
