"""``wb.migration.steps``: the stage, the steps open now and why the others are closed, per plan."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workbench import Workbench
from workbench.core.errors import WorkbenchError
from workbench.migration import FINISHING_DELAY
from workbench.migration.errors import (
    MigrationFinished,
    MigrationNotOpen,
    NotEligibleInPhaseOne,
    StepOutOfOrder,
    TooManyFirewallRules,
    UriOverridesBlock,
)
from workbench.migration.remedies import remedy_for
from workbench.migration.steps import ACTIONS, STAGES
from workbench.rulesets import MANAGED_PHASE

PHASE_ONE = datetime(2022, 6, 1, tzinfo=UTC)
PHASE_TWO = datetime(2022, 9, 19, tzinfo=UTC)
DONE_WHY = "the zone already migrated: nothing left to migrate"
DIRECT = ("validation mode is for Enterprise zones: on the {} plan Deploy finishes the "
          "migration by itself")  # fmt: skip


def bench(plan, start=PHASE_TWO):
    wb = Workbench(seed=0, start=start)
    return wb, wb.create_zone(f"{plan}.example", plan=plan).id


def override(wb, zone):
    return wb.waf_legacy.create_override(
        zone, {"urls": [f"{wb.zone(zone).name}/x"], "rules": {"100000": "disable"}}
    ).id


def bypass_rules(wb, zone, count):
    made = [{"action": "bypass", "products": ["waf"],
             "filter": {"expression": f"ip.src eq 10.0.{i // 256}.{i % 256}"}}
            for i in range(count)]  # fmt: skip
    for first in range(0, count, 25):  # 25 rules per request at most
        wb.firewall.create_rules(zone, made[first : first + 25])


def deploy(wb, zone):
    return wb.migration.deploy(zone, wb.migration.review(zone).config)


def put_pending(wb, zone):
    body = wb.migration.config(zone).result()
    wb.migration.put_entrypoint(zone, MANAGED_PHASE, body, waf_migration="pending", phase_two="1")


def closed(steps):
    return {name: why for name, is_open, why in steps.table() if not is_open}


# -- a real run per plan --------------------------------------------------------------------
@pytest.mark.parametrize("plan", ["pro", "business"])
def test_pro_and_business_deploy_finishes_on_the_clock(plan):
    wb, zone = bench(plan)
    steps = wb.migration.steps(zone)
    assert (steps.stage, steps.migration_state, steps.procedure) == ("start", "start", "direct")
    assert (
        steps.open == ("review", "preview", "deploy")
        and steps.refusal is None
        and not steps.remedies
    )
    assert closed(steps) == {
        "compare": "the new version is not on yet: Deploy first",
        "ready_to_update": DIRECT.format(plan.title()),
        "turn_off_previous": DIRECT.format(plan.title()),
    }

    deploy(wb, zone)
    steps = wb.migration.steps(zone)
    # Both versions run while it finishes: the API says validation, the stage says finishing.
    assert (steps.stage, steps.migration_state) == ("finishing", "validation")
    assert steps.open == ()
    assert closed(steps)["deploy"] == "deployed already: it is finishing"
    assert closed(steps)["compare"].startswith("the deploy is finishing (a couple of minutes")

    wb.advance(FINISHING_DELAY)
    steps = wb.migration.steps(zone)
    assert (steps.stage, steps.migration_state) == ("done", "done")
    assert steps.open == ("compare",)
    assert set(closed(steps).values()) == {DONE_WHY}


def test_pro_through_the_api_is_done_at_once():
    wb, zone = bench("pro")
    put_pending(wb, zone)
    assert wb.migration.steps(zone).stage == "done"


def test_enterprise_goes_through_validation_mode():
    wb, zone = bench("enterprise")
    steps = wb.migration.steps(zone)
    assert steps.procedure == "validation" and steps.open == ("review", "preview", "deploy")
    assert (
        closed(steps)["ready_to_update"] == "Ready to update comes in validation mode, after Deploy"
    )

    deploy(wb, zone)
    steps = wb.migration.steps(zone)
    assert (steps.stage, steps.migration_state, steps.ready) == ("validation", "validation", False)
    assert steps.open == ("compare", "ready_to_update")
    assert closed(steps) == {
        "review": "the configuration is deployed already: the zone is in validation mode",
        "preview": "the new version is on already: compare both versions instead",
        "deploy": "deployed already: the zone is in validation mode",
        "turn_off_previous": "select Ready to update first",
    }

    wb.migration.ready_to_update(zone)
    steps = wb.migration.steps(zone)
    assert steps.ready and steps.open == ("compare", "turn_off_previous")
    assert closed(steps)["ready_to_update"] == "selected already: Turn off previous version is next"

    wb.migration.turn_off_previous(zone)
    steps = wb.migration.steps(zone)
    assert steps.stage == "done" and steps.open == ("compare",)


# -- not eligible, and refusals with their remedies -------------------------------------------
def test_uri_overrides_make_a_zone_not_eligible_until_deleted():
    wb, zone = bench("business")
    made = override(wb, zone)
    steps = wb.migration.steps(zone)
    assert (steps.stage, steps.migration_state) == ("not_eligible", "start")
    assert steps.open == ()
    # The closed steps say why in the check's words; the refusal is the API's, with its remedy.
    why = "the zone cannot migrate now: the zone has 1 URI-based WAF overrides"
    assert closed(steps)["review"] == closed(steps)["deploy"] == why
    assert wb.migration.check(zone, phase_two=True).reasons == (
        "the zone has 1 URI-based WAF overrides",
    )
    assert steps.refusal.code == UriOverridesBlock.code == 10703 and made in steps.refusal.message
    assert steps.remedies == (remedy_for(10703),)
    assert steps.remedies[0].startswith("delete the URI-based WAF overrides")

    wb.waf_legacy.delete_override(zone, made)
    steps = wb.migration.steps(zone)
    assert (
        steps.stage == "start"
        and steps.refusal is None
        and steps.open == ("review", "preview", "deploy")
    )


def test_review_of_a_zone_that_cannot_migrate_is_refused_as_its_steps_say():
    # It answered before, though its steps said Review was closed; now it is the refusal
    # the steps give (Deploy's, the migrating PUT's 10703), and nothing changes.
    wb, zone = bench("enterprise")
    made = override(wb, zone)
    steps = wb.migration.steps(zone)
    for step in ("review", "preview", "deploy"):
        with pytest.raises(UriOverridesBlock) as info:
            steps.require(step)
        assert info.value.to_error() == {"code": 10703, "message": steps.refusal.message}
    with pytest.raises(UriOverridesBlock) as info:
        wb.migration.review(zone)
    assert info.value.code == 10703 and made in info.value.message
    assert wb.migration.steps(zone) == steps and wb.migration.history(zone) == []


def test_before_the_migration_opens():
    wb, zone = bench("enterprise", start=datetime(2022, 1, 1, tzinfo=UTC))
    steps = wb.migration.steps(zone)
    assert steps.stage == "not_eligible"
    assert (
        closed(steps)["review"] == "the zone cannot migrate now: the migration opens on 2022-05-04"
    )
    assert steps.refusal.code == MigrationNotOpen.code
    assert "PUT /workbench/clock" in steps.remedies[0]


def test_phase_one_names_each_condition():
    wb, zone = bench("pro", start=PHASE_ONE)
    bypass_rules(wb, zone, 1)
    steps = wb.migration.steps(zone)
    assert steps.stage == "not_eligible" and steps.refusal.code == NotEligibleInPhaseOne.code
    why = closed(steps)["deploy"]
    assert "OWASP ModSecurity Core Rule Set on" in why
    assert "1 firewall rules use Bypass > WAF Managed Rules" in why
    assert steps.remedies[0].startswith("from 2022-09-19, phase_two=1")


def test_a_zone_over_the_limits_may_review_but_deploy_says_why_not():
    wb, zone = bench("enterprise")  # its plan allows 1000 active firewall rules
    bypass_rules(wb, zone, 201)
    steps = wb.migration.steps(zone)
    # Eligible (the banner shows), but Deploy would need Cloudflare Support.
    assert steps.stage == "start" and steps.open == ("review", "preview")
    assert steps.refusal.code == TooManyFirewallRules.code == 10705
    assert closed(steps)["deploy"].startswith("Deploy would be refused (10705): the zone has 201")
    assert steps.remedies == (remedy_for(10705),)
    with pytest.raises(TooManyFirewallRules):
        deploy(wb, zone)


def test_turn_off_previous_says_why_it_would_be_refused():
    wb, zone = bench("enterprise")
    deploy(wb, zone)
    wb.migration.ready_to_update(zone)
    override(wb, zone)  # added while both versions run
    steps = wb.migration.steps(zone)
    assert steps.stage == "validation" and steps.open == ("compare",)
    assert closed(steps)["turn_off_previous"].startswith(
        "Turn off previous version would be refused (10703): the zone has 1 URI-based"
    )
    with pytest.raises(UriOverridesBlock):
        wb.migration.turn_off_previous(zone)


# -- the steps agree with the state machine --------------------------------------------------------
def _at(stage):
    """A fresh zone at ``stage`` (the stage it shows, and the plan that gets there)."""
    plan = {"finishing": "business", "not_eligible": "business"}.get(stage, "enterprise")
    wb, zone = bench(plan)
    if stage == "not_eligible":
        override(wb, zone)
    elif stage in ("validation", "ready", "finishing", "done"):
        deploy(wb, zone)
        if stage in ("ready", "done"):
            wb.migration.ready_to_update(zone)
        if stage == "done":
            wb.migration.turn_off_previous(zone)
    return wb, zone


_STEP = {
    "review": lambda wb, zone: wb.migration.review(zone),
    "preview": lambda wb, zone: wb.tuning.preview(zone, 20, seed=1),
    "deploy": lambda wb, zone: wb.migration.deploy(zone, {"rules": []}),
    "ready_to_update": lambda wb, zone: wb.migration.ready_to_update(zone),
    "turn_off_previous": lambda wb, zone: wb.migration.turn_off_previous(zone),
}


@pytest.mark.parametrize(
    "stage", ["not_eligible", "start", "validation", "ready", "finishing", "done"]
)
@pytest.mark.parametrize("action", sorted(_STEP))
def test_an_open_step_goes_through_and_a_closed_one_is_refused(stage, action):
    wb, zone = _at(stage)
    steps = wb.migration.steps(zone)
    assert steps.stage in STAGES and [a.name for a in steps.actions] == list(ACTIONS)
    if action in steps.open:
        _STEP[action](wb, zone)
    else:
        assert steps.reason(action)  # a closed step always says why
        with pytest.raises(WorkbenchError) as info:
            _STEP[action](wb, zone)
        expected = {"done": MigrationFinished, "not_eligible": UriOverridesBlock}
        found = expected.get(stage, StepOutOfOrder)
        if stage == "not_eligible" and action not in ("review", "preview", "deploy"):
            found = StepOutOfOrder  # closed by the stage, not by the refusal
        assert isinstance(info.value, found)


def test_to_dict_is_the_table_with_labels():
    wb, zone = bench("enterprise")
    deploy(wb, zone)
    found = wb.migration.steps(zone).to_dict()
    assert found == {
        "stage": "validation",
        "migration_state": "validation",
        "procedure": "validation",
        "ready": False,
        "open": ["compare", "ready_to_update"],
        "actions": [
            {"action": "review", "label": "Review configuration", "open": False,
             "reason": "the configuration is deployed already: the zone is in validation mode"},
            {"action": "preview", "label": "Preview (the simulator's own)", "open": False,
             "reason": "the new version is on already: compare both versions instead"},
            {"action": "deploy", "label": "Deploy", "open": False,
             "reason": "deployed already: the zone is in validation mode"},
            {"action": "compare", "label": "Compare both versions", "open": True, "reason": None},
            {"action": "ready_to_update", "label": "Ready to update", "open": True,
             "reason": None},
            {"action": "turn_off_previous", "label": "Turn off previous version", "open": False,
             "reason": "select Ready to update first"},
        ],
        "refusal": None,
        "remedies": [],
    }  # fmt: skip


def test_an_unknown_zone_is_the_platform_error():
    wb, _ = bench("pro")
    with pytest.raises(WorkbenchError) as info:
        wb.migration.steps("0" * 32)
    assert info.value.code == 7003
