"""URI-based overrides: validation, CRUD, precedence and rewrite_action on real requests."""

from __future__ import annotations

import pytest
from waf_helpers import CF, OWASP, SPECIALS, WORDPRESS, XSS, request

from workbench.waf_legacy.errors import InvalidWafInput, OverrideNotFound


def _events(waf, zone, url):
    verdict = waf.evaluate(zone, request(url))
    return [(e.rule_id, e.action) for e in verdict.events], verdict.action


def test_create_shows_the_override_with_defaults(waf, zone):
    made = waf.create_override(
        zone, {"urls": ["pro.example/api/*"], "rules": {"100015": "disable"}}
    )
    assert made.to_dict() == {
        "id": made.id,
        "description": None,
        "urls": ["pro.example/api/*"],
        "priority": 1,
        "groups": {},
        "rules": {"100015": "disable"},
        "rewrite_action": {},
        "paused": False,
    }
    assert len(made.id) == 32 and waf.get_override(zone, made.id) is made


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"rules": {"100015": "disable"}}, "/urls"),
        ({"urls": [], "rules": {"100015": "disable"}}, "/urls"),
        ({"urls": ["a.example/*"]}, "/"),
        ({"urls": ["a.example/*"], "rules": {}, "groups": {}}, "/"),
        ({"urls": [""], "rules": {"100015": "disable"}}, "/urls/0"),
        ({"urls": ["a.example/*", 7], "rules": {"100015": "disable"}}, "/urls/1"),
        ({"urls": ["a.example/*"], "rules": {"999999": "disable"}}, "/rules/999999"),
        ({"urls": ["a.example/*"], "rules": {"100015": "on"}}, "/rules/100015"),
        ({"urls": ["a.example/*"], "rules": {"950001": "block"}}, "/rules/950001"),
        ({"urls": ["a.example/*"], "groups": {"f" * 32: "disable"}}, "/groups/" + "f" * 32),
        ({"urls": ["a.example/*"], "groups": {SPECIALS: "block"}}, f"/groups/{SPECIALS}"),
        (
            {
                "urls": ["a.example/*"],
                "groups": {SPECIALS: "disable"},
                "rewrite_action": {"fly": "block"},
            },
            "/rewrite_action/fly",
        ),
        (
            {
                "urls": ["a.example/*"],
                "groups": {SPECIALS: "disable"},
                "rewrite_action": {"block": "fly"},
            },
            "/rewrite_action/block",
        ),
        ({"urls": ["a.example/*"], "groups": {SPECIALS: "disable"}, "priority": 1.5}, "/priority"),
        (
            {"urls": ["a.example/*"], "groups": {SPECIALS: "disable"}, "priority": 2_000_000_000},
            "/priority",
        ),
        ({"urls": ["a.example/*"], "groups": {SPECIALS: "disable"}, "paused": "yes"}, "/paused"),
        (
            {"urls": ["a.example/*"], "groups": {SPECIALS: "disable"}, "description": "x" * 501},
            "/description",
        ),
        ({"urls": ["a.example/*"], "groups": {SPECIALS: "disable"}, "colour": "red"}, "/colour"),
        ({"urls": ["a.example/\ud800"], "groups": {SPECIALS: "disable"}}, "/urls/0"),
    ],
)
def test_bad_override_bodies_are_refused_and_nothing_is_stored(waf, zone, body, pointer):
    with pytest.raises(InvalidWafInput) as caught:
        waf.create_override(zone, body)
    assert caught.value.extra["source"] == {"pointer": pointer}
    assert waf.list_overrides(zone).items == []


def test_replace_and_delete(waf, zone):
    made = waf.create_override(
        zone,
        {"urls": ["pro.example/a*"], "rules": {"100015": "disable"}, "priority": 5, "paused": True},
    )
    done = waf.replace_override(
        zone, made.id, {"id": made.id, "urls": ["pro.example/b*"], "groups": {WORDPRESS: "default"}}
    )
    assert done.to_dict()["urls"] == ["pro.example/b*"]
    assert (done.rules, done.groups, done.priority, done.paused) == (
        {},
        {WORDPRESS: "default"},
        1,
        False,
    )
    with pytest.raises(InvalidWafInput) as caught:
        waf.replace_override(
            zone, made.id, {"id": "x" * 32, "urls": ["a*"], "rules": {"100015": "disable"}}
        )
    assert caught.value.extra["source"] == {"pointer": "/id"}
    with pytest.raises(InvalidWafInput):
        waf.replace_override(zone, made.id, {"urls": ["pro.example/c*"]})
    assert waf.get_override(zone, made.id).urls == ["pro.example/b*"]  # nothing half-written
    assert waf.delete_override(zone, made.id) == made.id
    for call in (waf.get_override, waf.delete_override):
        with pytest.raises(OverrideNotFound) as gone:
            call(zone, made.id)
        assert gone.value.code == 10604


def test_list_is_in_precedence_order(waf, zone):
    late = waf.create_override(
        zone, {"urls": ["a*"], "rules": {"100015": "disable"}, "priority": 10}
    )
    first = waf.create_override(
        zone, {"urls": ["a*"], "rules": {"100015": "disable"}, "priority": -3}
    )
    tie = waf.create_override(
        zone, {"urls": ["a*"], "rules": {"100015": "disable"}, "priority": 10}
    )
    assert [o.id for o in waf.list_overrides(zone).items] == [first.id, late.id, tie.id]


def test_an_override_changes_rule_modes_only_for_its_urls(waf, zone):
    waf.create_override(
        zone, {"urls": ["pro.example/admin/public*"], "rules": {"100015": "disable"}}
    )
    assert _events(waf, zone, "https://pro.example/admin/public/x") == ([], None)
    assert _events(waf, zone, "https://pro.example/admin/secret") == (
        [("100015", "block")],
        "block",
    )


def test_an_override_can_turn_a_group_on_and_a_rule_back_on(waf, zone):
    waf.edit_rule(zone, CF, "100017", {"mode": "disable"})
    waf.create_override(
        zone,
        {
            "urls": ["*pro.example/blog/*"],
            "groups": {WORDPRESS: "default", SPECIALS: "on"},
            "rules": {"WP0025B": "challenge", "100017": "default"},
        },
    )
    # WordPress's catalogue default is off: "default" keeps it off, the group stays off.
    assert _events(waf, zone, "https://pro.example/blog/wp-login") == ([], None)
    waf.create_override(
        zone, {"urls": ["*pro.example/blog/*"], "groups": {WORDPRESS: "on"}, "priority": 0}
    )
    assert _events(waf, zone, "https://pro.example/blog/wp-login") == (
        [("WP0025B", "challenge")],
        "challenge",
    )
    assert _events(waf, zone, "https://pro.example/blog/probe") == ([("100017", "log")], None)
    assert _events(waf, zone, "https://pro.example/probe") == ([], None)


def test_the_higher_priority_override_wins(waf, zone):
    waf.create_override(
        zone, {"urls": ["pro.example/*"], "rules": {"100015": "challenge"}, "priority": 1}
    )
    waf.create_override(
        zone, {"urls": ["pro.example/admin*"], "rules": {"100015": "simulate"}, "priority": 5}
    )
    assert _events(waf, zone, "https://pro.example/admin") == (
        [("100015", "challenge")],
        "challenge",
    )
    strong = waf.create_override(
        zone, {"urls": ["pro.example/admin*"], "rules": {"100015": "disable"}, "priority": -1}
    )
    assert _events(waf, zone, "https://pro.example/admin") == ([], None)
    waf.replace_override(
        zone,
        strong.id,
        {"urls": ["pro.example/admin*"], "rules": {"100015": "disable"}, "paused": True},
    )
    assert _events(waf, zone, "https://pro.example/admin") == (
        [("100015", "challenge")],
        "challenge",
    )


def test_rewrite_action_replaces_the_action_of_matching_rules(waf, zone):
    waf.edit_rule(zone, CF, "100016", {"mode": "challenge"})
    waf.create_override(
        zone,
        {
            "urls": ["pro.example/*"],
            "groups": {SPECIALS: "on"},
            "rewrite_action": {"default": "simulate", "challenge": "block"},
        },
    )
    # 100015: mode default (block) -> rewritten "default" -> simulate, logged.
    assert _events(waf, zone, "https://pro.example/admin") == ([("100015", "log")], None)
    # 100016: mode challenge -> block.
    assert _events(waf, zone, "https://pro.example/login") == ([("100016", "block")], "block")
    # A rewrite can bring a disabled rule into play: 100048 is "default" (disable) -> simulate.
    assert _events(waf, zone, "https://pro.example/pad") == ([("100048", "log")], None)


def test_rewrite_of_a_resolved_default_and_the_owasp_action(waf, zone):
    waf.create_override(
        zone,
        {
            "urls": ["pro.example/*"],
            "groups": {XSS: "on"},
            "rewrite_action": {"block": "challenge", "challenge": "disable"},
        },
    )
    # 100015 has mode default and default_mode block: its action is rewritten to challenge.
    assert _events(waf, zone, "https://pro.example/admin") == (
        [("100015", "challenge")],
        "challenge",
    )
    # The OWASP package action (challenge) is rewritten to disable: no event.
    assert _events(waf, zone, "https://pro.example/?q=<script>") == ([], None)
    waf.edit_package(zone, OWASP, {"action_mode": "block"})
    assert _events(waf, zone, "https://pro.example/?q=<script>") == (
        [("981176", "challenge")],
        "challenge",
    )
