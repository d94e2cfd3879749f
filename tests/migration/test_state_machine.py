"""The state machine by plan, refusals that change nothing, and the dashboard's steps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from workbench import Workbench
from workbench.core.errors import WorkbenchError
from workbench.migration import FINISHING_DELAY
from workbench.migration.errors import (
    InvalidMigrationInput,
    MigrationFinished,
    MigrationIrreversible,
    MigrationNotOpen,
    MigrationRequired,
    StepOutOfOrder,
    TooManyFirewallRules,
    UriOverridesBlock,
    ValidationModeNotInPlan,
)
from workbench.rulesets import CUSTOM_PHASE, MANAGED_PHASE
from workbench.waf_legacy.errors import OldWafRetired

PHASE_TWO = datetime(2022, 9, 19, tzinfo=UTC)


@pytest.fixture
def wb():
    return Workbench(seed=0, start=PHASE_TWO)


@pytest.fixture
def zones(wb):
    return {p: wb.create_zone(f"{p}.example", plan=p).id for p in ("pro", "business", "enterprise")}


def _put(wb, zone, mode=None, body=None, **extra):
    body = body if body is not None else wb.migration.config(zone).result()
    return wb.migration.put_entrypoint(
        zone, MANAGED_PHASE, body, waf_migration=mode, phase_two="1", **extra
    )


def _own(status):
    """The workbench's booleans and the state (the fields a client reads are tested apart)."""
    result = status.to_dict()
    return {k: result[k] for k in ("old_waf_enabled", "new_waf_enabled", "migration_state")}


def _status(wb, zone):
    return _own(wb.migration.status(zone))


def _snapshot(wb, zone):
    entry = wb.rulesets.find_entrypoint(zone, MANAGED_PHASE)
    return (entry and entry.version, _status(wb, zone), wb.waf_legacy.enabled(zone))


START = {"old_waf_enabled": True, "new_waf_enabled": False, "migration_state": "start"}
VALIDATION = {"old_waf_enabled": True, "new_waf_enabled": True, "migration_state": "validation"}
DONE = {"old_waf_enabled": False, "new_waf_enabled": True, "migration_state": "done"}


@pytest.mark.parametrize("plan", ["pro", "business", "enterprise"])
@pytest.mark.parametrize("mode", ["pending", "1"])
def test_pending_migrates_directly_on_every_plan(wb, zones, plan, mode):
    zone = zones[plan]
    assert _status(wb, zone) == START
    assert _put(wb, zone, mode).version == "1"
    assert _status(wb, zone) == DONE
    with pytest.raises(OldWafRetired):
        wb.waf_legacy.list_packages(zone)


@pytest.mark.parametrize("plan", ["pro", "business"])
@pytest.mark.parametrize("mode", ["validation", "2"])
def test_validation_is_refused_on_pro_and_business_and_changes_nothing(wb, zones, plan, mode):
    zone = zones[plan]
    before = _snapshot(wb, zone)
    with pytest.raises(ValidationModeNotInPlan) as info:
        _put(wb, zone, mode)
    assert "validation mode" in info.value.message and "Enterprise" in info.value.message
    assert _snapshot(wb, zone) == before == (None, START, True)


def test_enterprise_validation_then_pending(wb, zones):
    zone = zones["enterprise"]
    assert _put(wb, zone, "validation").version == "1"
    assert _status(wb, zone) == VALIDATION
    assert wb.migration.check(zone, phase_two=True).to_dict() == {
        "compatible": True,
        "migration_state": "validation",
    }
    assert _put(wb, zone, "2").version == "2"  # validation again: stays there
    assert _status(wb, zone) == VALIDATION
    assert _put(wb, zone, "pending").version == "3"
    assert _status(wb, zone) == DONE
    assert wb.migration.check(zone, phase_two=True).to_dict() == {"compatible": False}


@pytest.mark.parametrize("plan", ["pro", "business"])
def test_pro_and_business_save_enabled_rules_only_by_migrating(wb, zones, plan):
    zone = zones[plan]
    with pytest.raises(MigrationRequired) as info:
        _put(wb, zone)
    assert "waf_migration" in info.value.message and "Enterprise" in info.value.message
    assert _snapshot(wb, zone) == (None, START, True)
    body = wb.migration.config(zone).result()
    for rule in body["rules"]:
        rule["enabled"] = False
    assert _put(wb, zone, body=body).version == "1"
    assert _status(wb, zone) == START  # saving without waf_migration keeps the state
    assert _put(wb, zone, body={"rules": []}).version == "2"


def test_enterprise_may_save_enabled_rules_without_migrating(wb, zones):
    zone = zones["enterprise"]
    assert _put(wb, zone).version == "1"
    status = _status(wb, zone)
    assert status["migration_state"] == "start" and status["new_waf_enabled"] is True


def test_after_completion_validation_is_refused_and_plain_saves_work(wb, zones):
    for plan, zone in zones.items():
        body = wb.migration.config(zone).result()
        _put(wb, zone, "pending", body=body)
        with pytest.raises(MigrationIrreversible) as info:
            _put(wb, zone, "validation", body=body)
        assert "cannot be undone" in info.value.message, plan
        assert _status(wb, zone) == DONE
        assert _put(wb, zone, body=body).version == "2"  # enabled rules, no waf_migration
        assert _status(wb, zone) == DONE
        with pytest.raises(MigrationFinished):
            wb.migration.config(zone)


def test_a_second_turn_off_after_completion_is_refused_and_keeps_the_version(wb, zones):
    """A waf_migration=pending PUT on a zone that finished its migration (a second *Turn off
    previous version*) is refused with 10710, and the entry point keeps its version."""
    for plan, zone in zones.items():
        body = wb.migration.config(zone).result()
        assert _put(wb, zone, "pending", body=body).version == "1"
        before = _snapshot(wb, zone)
        for dry_run in (True, False):
            with pytest.raises(MigrationFinished) as info:
                _put(wb, zone, "pending", body=body, dry_run=dry_run)
            assert info.value.code == 10710, plan
            assert info.value.message.startswith("waf_migration=pending: the zone already "), plan
            assert "without waf_migration" in info.value.message, plan
        assert _snapshot(wb, zone) == before == ("1", DONE, False)
        assert _put(wb, zone, body=body).version == "2"  # the way to change it: a plain save


def test_ineligible_zones_are_refused_and_nothing_changes(wb, zones):
    zone = zones["business"]
    body = wb.migration.config(zone).result()
    wb.waf_legacy.create_override(
        zone, {"urls": ["business.example/x"], "rules": {"100000": "disable"}, "paused": True}
    )
    with pytest.raises(UriOverridesBlock) as info:
        _put(wb, zone, "pending", body=body)
    assert "URI-based WAF overrides" in info.value.message
    assert _snapshot(wb, zone) == (None, START, True)


def test_a_refusal_keeps_the_version(wb, zones):
    zone = zones["enterprise"]
    _put(wb, zone, "validation")
    for i in range(201):
        wb.firewall.create_rules(
            zone,
            [
                {
                    "action": "bypass",
                    "products": ["waf"],
                    "filter": {"expression": f"ip.src eq 10.0.{i // 256}.{i % 256}"},
                }
            ],
        )
    before = _snapshot(wb, zone)
    with pytest.raises(TooManyFirewallRules):
        _put(wb, zone, "pending")
    assert _snapshot(wb, zone) == before == ("1", VALIDATION, True)


def test_the_migration_is_closed_before_2022_05_04():
    wb = Workbench(seed=0, start=datetime(2022, 5, 3, tzinfo=UTC))
    zone = wb.create_zone("early.example", plan="enterprise").id
    with pytest.raises(MigrationNotOpen) as info:
        _put(wb, zone, "validation")
    assert "2022-05-04" in info.value.message
    assert wb.migration.check(zone, phase_two=True).to_dict() == {"compatible": False}


def test_bad_parameters_are_refused(wb, zones):
    zone = zones["pro"]
    for bad in ({"waf_migration": "3"}, {"phase_two": "maybe"}):
        with pytest.raises(InvalidMigrationInput):
            wb.migration.put_entrypoint(zone, MANAGED_PHASE, {"rules": []}, **bad)
    with pytest.raises(InvalidMigrationInput):
        wb.migration.put_entrypoint(zone, CUSTOM_PHASE, {"rules": []}, waf_migration="pending")
    custom = {"rules": [{"action": "block", "expression": "ip.src eq 192.0.2.1"}]}
    assert wb.migration.put_entrypoint(zone, CUSTOM_PHASE, custom).version == "1"


def test_a_dry_run_applies_the_same_refusals_and_stores_nothing(wb, zones):
    zone = zones["pro"]
    with pytest.raises(ValidationModeNotInPlan):
        _put(wb, zone, "validation", dry_run=True)
    assert _put(wb, zone, "pending", dry_run=True).version == "1"
    assert _snapshot(wb, zone) == (None, START, True)


def test_two_execute_rules_for_one_ruleset_are_refused(wb, zones):
    zone = zones["enterprise"]
    body = wb.migration.config(zone).result()
    body["rules"].append(dict(body["rules"][0]))
    with pytest.raises(WorkbenchError):
        _put(wb, zone, "validation", body=body)
    assert _snapshot(wb, zone) == (None, START, True)


def test_sensitivity_level_is_accepted_with_no_effect(wb, zones):
    zone, other = zones["enterprise"], wb.create_zone("other.example", plan="enterprise").id
    body = wb.migration.config(zone).result()
    _put(wb, other, "validation", body=body)
    body["rules"][0]["action_parameters"]["overrides"] = {"sensitivity_level": "low"}
    assert _put(wb, zone, "validation", body=body).version == "1"

    def verdict(zone_id, hit):
        found = wb.rulesets.plan(zone_id).decide(lambda key: hit)
        return found.action, [(e.rule_id, e.action) for e in found.events]

    for hit in (True, False):
        assert verdict(zone, hit) == verdict(other, hit)


def test_the_new_system_is_stored_before_the_old_one_goes_off(wb, zones, monkeypatch):
    zone = zones["business"]
    seen = []
    real = wb.waf_legacy.disable_for_good

    def spy(zone_id):
        entry = wb.rulesets.find_entrypoint(zone_id, MANAGED_PHASE)
        seen.append((entry is not None and entry.version, wb.waf_legacy.enabled(zone_id)))
        real(zone_id)

    monkeypatch.setattr(wb.waf_legacy, "disable_for_good", spy)
    _put(wb, zone, "pending")
    assert seen == [("1", True)]  # both on at the switch: protection never lapses


def test_no_zone_migrates_by_itself(wb, zones):
    wb.advance(days=3650)
    for zone in zones.values():
        assert _status(wb, zone) == START


# -- the dashboard's steps -------------------------------------------------------
def test_pro_deploy_finishes_after_a_couple_of_minutes_of_clock_time(wb, zones):
    zone = zones["pro"]
    review = wb.migration.review(zone)
    assert review.procedure == "direct" and review.check.compatible
    review.config["rules"][0]["action_parameters"]["overrides"] = {
        "rules": [{"id": "23ee7cebe6e8443e99ecf932ab579455", "action": "log", "enabled": False}]
    }
    status = wb.migration.deploy(zone, review.config)
    # Both systems run while it finishes (shown as validation).
    assert _status(wb, zone) == VALIDATION and status.finish_at == wb.now() + FINISHING_DELAY
    entry = wb.rulesets.get_entrypoint(zone, MANAGED_PHASE)
    assert entry.version == "1" and entry.rules[0].action_parameters["overrides"]["rules"]
    with pytest.raises(StepOutOfOrder):
        wb.migration.deploy(zone, review.config)
    wb.advance(FINISHING_DELAY - timedelta(seconds=1))
    assert _status(wb, zone) == VALIDATION
    wb.advance(seconds=1)
    assert wb.waf_legacy.retired(zone)  # the clock finished it, before any read
    assert _status(wb, zone) == DONE
    assert [stage for _, stage in wb.migration.history(zone)] == ["finishing", "done"]


def test_an_api_pending_during_the_deploy_finishes_at_once(wb, zones):
    zone = zones["business"]
    wb.migration.deploy(zone, wb.migration.review(zone).config)
    _put(wb, zone, "pending")
    assert _status(wb, zone) == DONE


def test_enterprise_deploy_ready_to_update_turn_off_previous(wb, zones):
    zone = zones["enterprise"]
    review = wb.migration.review(zone)
    assert review.procedure == "validation"
    with pytest.raises(StepOutOfOrder):
        wb.migration.ready_to_update(zone)
    assert _own(wb.migration.deploy(zone, review.config)) == VALIDATION
    with pytest.raises(StepOutOfOrder):
        wb.migration.turn_off_previous(zone)
    assert _own(wb.migration.ready_to_update(zone)) == VALIDATION
    assert _own(wb.migration.turn_off_previous(zone)) == DONE
    for step in (wb.migration.review, wb.migration.ready_to_update, wb.migration.turn_off_previous):
        with pytest.raises(MigrationFinished):
            step(zone)
    with pytest.raises(MigrationFinished):
        wb.migration.deploy(zone, review.config)


def test_deploy_refuses_what_the_zone_cannot_do(wb, zones):
    zone = zones["pro"]
    wb.waf_legacy.create_override(zone, {"urls": ["pro.example/x"], "rules": {"100000": "disable"}})
    assert not wb.migration.check(zone, phase_two=True).compatible
    with pytest.raises(UriOverridesBlock):
        wb.migration.review(zone)  # the steps close Review too, with the same refusal
    with pytest.raises(UriOverridesBlock):
        wb.migration.deploy(zone, wb.migration.config(zone).result())
    assert _snapshot(wb, zone) == (None, START, True)
