"""Zone entry points: creation, versions, listings, and every refusal changing nothing."""

from __future__ import annotations

import re

import pytest
from ruleset_helpers import CF, CMS, OWASP, SQLI, THRESHOLD, execute, skip

from workbench.core.errors import NotFound, ValidationError
from workbench.rulesets import CUSTOM_PHASE, MANAGED_PHASE
from workbench.rulesets.errors import EntrypointNotFound, RulesetNotFound, UnknownPhase

HEX32 = re.compile(r"[0-9a-f]{32}")
ADMIN = 'http.request.uri.path contains "/admin"'


def test_get_before_any_put_is_10003_naming_the_phase(rs, zone):
    with pytest.raises(EntrypointNotFound) as info:
        rs.get_entrypoint(zone.id, MANAGED_PHASE)
    assert info.value.code == 10003 and isinstance(info.value, NotFound)
    assert info.value.message == (
        "could not find entrypoint ruleset in the http_request_firewall_managed phase"
    )
    assert rs.find_entrypoint(zone.id, CUSTOM_PHASE) is None


def test_put_creates_version_1_with_rule_defaults(wb, rs, zone):
    entry = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF)]})
    shown = entry.to_dict()
    assert shown["kind"] == "zone" and shown["phase"] == MANAGED_PHASE
    assert shown["version"] == "1" and shown["name"] == "default" and shown["description"] == ""
    assert shown["last_updated"] == "2026-01-01T00:00:00Z" and HEX32.fullmatch(shown["id"])
    [rule] = shown["rules"]
    assert HEX32.fullmatch(rule["id"]) and rule["ref"] == rule["id"]
    assert rule["version"] == "1" and rule["enabled"] is True
    assert rule["action_parameters"] == {"id": CF} and "logging" not in rule
    assert rs.get_entrypoint(zone.id, MANAGED_PHASE) is entry


def test_each_put_is_a_new_version_and_only_changed_rules_move(wb, rs, zone):
    first = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF), execute(OWASP)]})
    cf_rule, owasp_rule = first.rules
    wb.advance(minutes=5)
    body = {
        "rules": [
            {**owasp_rule.to_dict(), "enabled": False},  # changed: version 2
            cf_rule.to_dict(),  # unchanged (moved): keeps version 1 and its time
            skip({"ruleset": "current"}, ADMIN),  # new
        ]
    }
    second = rs.put_entrypoint(zone.id, MANAGED_PHASE, body)
    assert second.id == first.id and second.version == "2"
    assert second.last_updated == wb.now()
    moved_owasp, kept_cf, new_skip = second.rules
    assert (moved_owasp.id, moved_owasp.version) == (owasp_rule.id, "2")
    assert moved_owasp.last_updated == wb.now()
    assert kept_cf is cf_rule
    assert new_skip.version == "1" and new_skip.id not in (cf_rule.id, owasp_rule.id)
    third = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": []})
    assert third.version == "3" and third.rules == ()


def test_the_migration_config_shape_is_accepted(rs, zone):
    # The config the migration returns carries empty id, version and ref.
    rule = {
        "id": "",
        "version": "",
        "ref": "",
        "action": "execute",
        "expression": "true",
        "description": "",
        "enabled": True,
        "action_parameters": {
            "id": CF,
            "overrides": {"rules": [{"id": SQLI, "action": "log", "enabled": False}]},
        },
    }
    entry = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"name": "default", "rules": [rule]})
    assert entry.rules[0].ref == entry.rules[0].id and entry.rules[0].version == "1"


@pytest.mark.parametrize("field", ["kind", "phase"])
def test_kind_and_phase_in_the_body_are_refused(rs, zone, field):
    with pytest.raises(ValidationError) as info:
        rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [], field: "zone"})
    assert info.value.message == f'invalid JSON: unknown field "{field}"'
    assert info.value.extra["source"] == {"pointer": f"/{field}"}


BAD_BODIES = [
    ({"rules": [{"expression": "true"}]}, MANAGED_PHASE, "/rules/0/action"),
    ({"rules": [{"action": "block", "expression": "true"}]}, MANAGED_PHASE, "/rules/0/action"),
    ({"rules": [{"action": "execute", "expression": "true"}]}, CUSTOM_PHASE, "/rules/0/action"),
    ({"rules": [execute(CF, expression="http.host eq")]}, MANAGED_PHASE, "/rules/0/expression"),
    ({"rules": [{"action": "execute"}]}, MANAGED_PHASE, "/rules/0/expression"),
    ({"rules": [execute("f" * 32)]}, MANAGED_PHASE, "/rules/0/action_parameters/id"),
    (
        {"rules": [{**execute(CF), "action_parameters": {}}]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/id",
    ),
    (
        {"rules": [execute(CF, {"rules": [{"id": "c" * 32}]})]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/overrides/rules/0/id",
    ),
    (
        {"rules": [execute(CF, {"rules": [{"id": THRESHOLD}]})]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/overrides/rules/0/id",
    ),
    (
        {"rules": [execute(CF, {"action": "execute"})]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/overrides/action",
    ),
    (
        {"rules": [execute(CF, {"categories": [{"action": "log"}]})]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/overrides/categories/0/category",
    ),
    (
        {"rules": [execute(OWASP, {"rules": [{"id": SQLI}]})]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/overrides/rules/0/id",
    ),
    (
        {"rules": [execute(CF, {"rules": [{"id": SQLI, "score_threshold": 25}]})]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/overrides/rules/0/score_threshold",
    ),
    (
        {"rules": [execute(OWASP, {"rules": [{"id": THRESHOLD, "score_threshold": -1}]})]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/overrides/rules/0/score_threshold",
    ),
    (
        {"rules": [execute(CF, {"sensitivity_level": "max"})]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/overrides/sensitivity_level",
    ),
    ({"rules": [skip({})]}, MANAGED_PHASE, "/rules/0/action_parameters"),
    ({"rules": [skip({"ruleset": "other"})]}, MANAGED_PHASE, "/rules/0/action_parameters/ruleset"),
    (
        {"rules": [skip({"ruleset": "current", "rulesets": [CF]})]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/ruleset",
    ),
    (
        {"rules": [skip({"ruleset": "current", "rules": {CF: [SQLI]}})]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/ruleset",
    ),
    (
        {"rules": [skip({"rules": {CF: [THRESHOLD]}})]},
        MANAGED_PHASE,
        f"/rules/0/action_parameters/rules/{CF}/0",
    ),
    (
        {"rules": [skip({"rules": {"e" * 32: [SQLI]}})]},
        MANAGED_PHASE,
        f"/rules/0/action_parameters/rules/{'e' * 32}",
    ),
    ({"rules": [skip({"rulesets": []})]}, MANAGED_PHASE, "/rules/0/action_parameters/rulesets"),
    (
        {"rules": [skip({"products": ["waf"]})]},
        MANAGED_PHASE,
        "/rules/0/action_parameters/products",
    ),
    ({"rules": [skip({"rulesets": [CF]})]}, CUSTOM_PHASE, "/rules/0/action_parameters/rulesets"),
    (
        {"rules": [skip({"products": ["WAF"]})]},
        CUSTOM_PHASE,
        "/rules/0/action_parameters/products/0",
    ),
    (
        {"rules": [skip({"phases": ["http_request_firewall_custom"]})]},
        CUSTOM_PHASE,
        "/rules/0/action_parameters/phases/0",
    ),
    (
        {"rules": [skip({"ruleset": "current"}, logging={"enabled": "no"})]},
        MANAGED_PHASE,
        "/rules/0/logging/enabled",
    ),
    (
        {"rules": [{**execute(CF), "logging": {"enabled": False}}]},
        MANAGED_PHASE,
        "/rules/0/logging",
    ),
    (
        {"rules": [{"action": "log", "expression": "ssl", "action_parameters": {}}]},
        CUSTOM_PHASE,
        "/rules/0/action_parameters",
    ),
    (
        {"rules": [{"action": "log", "expression": "ssl", "paused": True}]},
        CUSTOM_PHASE,
        "/rules/0/paused",
    ),
    (
        {"rules": [{"action": "log", "expression": "ssl", "enabled": "yes"}]},
        CUSTOM_PHASE,
        "/rules/0/enabled",
    ),
    (
        {"rules": [{"action": "log", "expression": "ssl", "id": "f" * 32}]},
        CUSTOM_PHASE,
        "/rules/0/id",
    ),
    (
        {"rules": [{"action": "log", "expression": "ssl", "description": "\ud800"}]},
        CUSTOM_PHASE,
        "/rules/0/description",
    ),
    ({"rules": {}}, CUSTOM_PHASE, "/rules"),
    ({}, CUSTOM_PHASE, "/rules"),
    ({"rules": [], "name": ""}, CUSTOM_PHASE, "/name"),
    ([], CUSTOM_PHASE, "/"),
]


@pytest.mark.parametrize(("body", "phase", "pointer"), BAD_BODIES)
def test_invalid_bodies_point_at_the_field_and_store_nothing(wb, rs, zone, body, phase, pointer):
    ids_before = wb.ids._rng.getstate()
    with pytest.raises(ValidationError) as info:
        rs.put_entrypoint(zone.id, phase, body)
    assert info.value.extra["source"] == {"pointer": pointer}, info.value.message
    assert rs.find_entrypoint(zone.id, phase) is None
    assert wb.ids._rng.getstate() == ids_before  # no id was drawn either


def test_a_parse_error_keeps_the_engines_message(rs, zone):
    with pytest.raises(ValidationError) as info:
        rs.put_entrypoint(
            zone.id, CUSTOM_PHASE, {"rules": [{"action": "log", "expression": "ssl eq"}]}
        )
    assert info.value.message.startswith("Filter parsing error (1:")


def test_a_managed_ruleset_runs_from_one_execute_rule_only(rs, zone):
    body = {"rules": [execute(CF), execute(OWASP), execute(CF, expression=ADMIN, enabled=False)]}
    with pytest.raises(ValidationError) as info:
        rs.put_entrypoint(zone.id, MANAGED_PHASE, body)
    assert info.value.extra["source"] == {"pointer": "/rules/2/action_parameters/id"}
    assert "already run by /rules/0" in info.value.message


def test_refusals_after_a_save_change_nothing(wb, rs, zone):
    saved = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF)]})
    for body in (
        {"rules": [execute("f" * 32)]},
        {"rules": [{**saved.rules[0].to_dict(), "id": "f" * 32}]},
        {"rules": [execute(CF), execute(CF)]},
        {"rules": [], "name": "renamed"},
        {"rules": [], "kind": "zone"},
    ):
        with pytest.raises(ValidationError):
            rs.put_entrypoint(zone.id, MANAGED_PHASE, body)
    assert rs.get_entrypoint(zone.id, MANAGED_PHASE) is saved
    assert [v.version for v in rs.list_versions(zone.id, saved.id)] == ["1"]


def test_before_save_may_refuse_and_then_nothing_is_stored(rs, zone):
    seen = []

    class Refused(ValidationError):
        pass

    def hook(z, rules):
        seen.append((z.id, [(r.action, r.enabled) for r in rules]))
        if any(r.enabled for r in rules):
            raise Refused("enabled managed rules need the migration")

    with pytest.raises(Refused):
        rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF)]}, before_save=hook)
    assert rs.find_entrypoint(zone.id, MANAGED_PHASE) is None
    saved = rs.put_entrypoint(
        zone.id, MANAGED_PHASE, {"rules": [execute(CF, enabled=False)]}, before_save=hook
    )
    assert saved.version == "1"
    assert seen == [(zone.id, [("execute", True)]), (zone.id, [("execute", False)])]


def test_a_dry_run_checks_everything_and_stores_nothing(wb, rs, zone):
    ids_before = wb.ids._rng.getstate()
    result = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF)]}, dry_run=True)
    assert result.version == "1"
    assert rs.find_entrypoint(zone.id, MANAGED_PHASE) is None
    assert wb.ids._rng.getstate() == ids_before
    with pytest.raises(ValidationError):
        rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute("f" * 32)]}, dry_run=True)


def test_an_unknown_phase_names_the_simulated_ones(rs, zone):
    with pytest.raises(UnknownPhase) as info:
        rs.get_entrypoint(zone.id, "http_ratelimit")
    assert CUSTOM_PHASE in info.value.message and MANAGED_PHASE in info.value.message
    with pytest.raises(UnknownPhase):
        rs.put_entrypoint(zone.id, "nope", {"rules": []})


def test_name_is_set_once_and_description_may_change(rs, zone):
    rs.put_entrypoint(zone.id, CUSTOM_PHASE, {"rules": [], "name": "zone", "description": "a"})
    second = rs.put_entrypoint(zone.id, CUSTOM_PHASE, {"rules": [], "description": "b"})
    assert (second.name, second.description) == ("zone", "b")
    same = rs.put_entrypoint(zone.id, CUSTOM_PHASE, {"rules": [], "name": "zone"})
    assert (same.version, same.description) == ("3", "b")


def test_refs_and_ids_are_unique_within_a_body(rs, zone):
    log = {"action": "log", "expression": "ssl"}
    with pytest.raises(ValidationError) as info:
        rs.put_entrypoint(
            zone.id, CUSTOM_PHASE, {"rules": [{**log, "ref": "r"}, {**log, "ref": "r"}]}
        )
    assert info.value.extra["source"] == {"pointer": "/rules/1/ref"}
    saved = rs.put_entrypoint(zone.id, CUSTOM_PHASE, {"rules": [log]})
    again = {**log, "id": saved.rules[0].id}
    with pytest.raises(ValidationError) as info:
        rs.put_entrypoint(zone.id, CUSTOM_PHASE, {"rules": [again, again]})
    assert info.value.extra["source"] == {"pointer": "/rules/1/id"}


def test_list_get_and_versions(wb, rs, zone):
    custom = rs.put_entrypoint(zone.id, CUSTOM_PHASE, {"rules": []})
    first = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF)]})
    wb.advance(hours=1)
    second = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(OWASP)]})
    listed = [r.summary() for r in rs.list_rulesets(zone.id)]
    assert [(r["id"], r["kind"]) for r in listed] == [
        (custom.id, "zone"),
        (second.id, "zone"),
        (CF, "managed"),
        (OWASP, "managed"),
    ]
    assert all("rules" not in r for r in listed)
    assert rs.get_ruleset(zone.id, second.id) is second
    managed = rs.get_ruleset(zone.id, CF).to_dict()
    assert managed["kind"] == "managed" and managed["version"] == "180"
    assert {r["id"] for r in managed["rules"]} >= {SQLI, CMS}
    assert "expression" not in managed["rules"][0]  # managed expressions stay hidden
    assert [v.version for v in rs.list_versions(zone.id, first.id)] == ["1", "2"]
    assert rs.get_version(zone.id, first.id, "1") is first
    assert rs.get_version(zone.id, CF, "180").id == CF
    for call in (
        lambda: rs.get_ruleset(zone.id, "f" * 32),
        lambda: rs.get_version(zone.id, first.id, "9"),
        lambda: rs.get_version(zone.id, CF, "1"),
    ):
        with pytest.raises(RulesetNotFound):
            call()


def test_zones_do_not_see_each_others_entry_points(wb, rs, zone):
    other = wb.create_zone("other.example", plan="pro")
    mine = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF)]})
    with pytest.raises(RulesetNotFound):
        rs.get_ruleset(other.id, mine.id)
    assert [r.kind for r in rs.list_rulesets(other.id)] == ["managed", "managed"]


def test_models_do_not_leak_mutable_state(rs, zone):
    entry = rs.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": [execute(CF, {"action": "log"})]})
    shown = entry.to_dict()
    shown["rules"][0]["action_parameters"]["overrides"]["action"] = "block"
    assert entry.rules[0].action_parameters == {"id": CF, "overrides": {"action": "log"}}


def test_the_workbench_has_one_rulesets_backend(wb):
    assert wb.rulesets is wb.rulesets
