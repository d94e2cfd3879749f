"""The migration's preview: the zone now against the reviewed configuration, on every plan.

The platform has no preview; the simulator's own help replays the same requests through
both sides, answers the migration's two questions, and writes nothing.
"""

from __future__ import annotations

import copy

import pytest

from workbench import Workbench
from workbench.rulesets import MANAGED_PHASE, OWASP_ID
from workbench.tuning.preview import preview


def zone_on(plan: str):
    wb = Workbench(seed=0)
    return wb, wb.create_zone("shop.example", plan=plan)


def fingerprint(wb, zone_id):
    return (
        wb.migration.status(zone_id).to_dict(),
        wb.rulesets.find_entrypoint(zone_id, MANAGED_PHASE),
        wb.tuning.config(zone_id),
    )


@pytest.mark.parametrize("plan", ["pro", "business", "enterprise"])
def test_every_plan_gets_a_preview_that_finds_the_differences_and_writes_nothing(plan):
    wb, zone = zone_on(plan)
    before = fingerprint(wb, zone.id)
    found = wb.tuning.preview(zone.id, 600, seed=1)
    assert found.preview and found.requests == 600
    assert found.summary().startswith("previewed 600 requests (seed 1) through the zone as it is")
    allowed, legit = found.counts()
    # The old WAF challenges searches quoting code that the new rulesets let through.
    assert allowed > 0
    assert all(r["old_action"] in ("block", "challenge", "managed_challenge", "js_challenge")
               for r in found.allowed)  # fmt: skip
    assert all(r["host"].endswith("shop.example") for r in found.allowed), "the zone's hosts"
    assert legit == sum(int(r["requests"]) for r in found.legit)
    assert fingerprint(wb, zone.id) == before, "a preview deploys nothing"
    assert wb.migration.steps(zone.id).stage == "start"


def test_the_reviewed_rules_decide_the_new_side():
    wb, zone = zone_on("pro")
    rules = copy.deepcopy(wb.tuning.config(zone.id)["rules"])
    with_owasp = preview(wb, zone.id, 600, seed=1, rules=rules)
    assert with_owasp.counts()[1] > 0, "the OWASP ruleset stops a legitimate request"
    without = [r for r in rules if (r.get("action_parameters") or {}).get("id") != OWASP_ID]
    assert preview(wb, zone.id, 600, seed=1, rules=without).counts()[1] < with_owasp.counts()[1]


def test_the_same_seed_gives_the_same_preview():
    a = zone_on("business")
    b = zone_on("business")
    assert (
        preview(a[0], a[1].id, 300, seed=2).allowed == preview(b[0], b[1].id, 300, seed=2).allowed
    )


@pytest.mark.parametrize("n", [0, -1, 20_001, 2.5, True, None])
def test_a_bad_request_count_is_refused_by_name(n):
    wb, zone = zone_on("pro")
    with pytest.raises(ValueError, match="n: a whole number of requests from 1 to 20000"):
        preview(wb, zone.id, n)
