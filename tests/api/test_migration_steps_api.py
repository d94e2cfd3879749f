"""The migration's steps over HTTP: ``GET .../workbench/waf_migration/steps`` and Ready to update.

Both are workbench extensions (the platform has no path for the dashboard's
steps); the answers are the standard envelope, a bad zone or a step out of
order a 4xx envelope.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from workbench import Workbench
from workbench.rulesets import MANAGED_PHASE


@pytest.fixture
def wb():
    bench = Workbench(seed=0, start=datetime(2022, 9, 19, tzinfo=UTC))
    for plan in ("pro", "business", "enterprise"):
        bench.create_zone(f"{plan}.example", plan=plan)
    return bench


def steps_of(http, zone, status=200):
    response = http.get(f"/zones/{zone}/workbench/waf_migration/steps")
    assert response.status_code == status, response.text
    return response.json()


def ready(http, zone):
    return http.post(f"/zones/{zone}/workbench/waf_migration/ready_to_update")


def migrate(http, zone, mode):
    body = http.get(f"/zones/{zone}/waf_migration/config", params={"phase_two": 1}).json()
    put = http.put(
        f"/zones/{zone}/rulesets/phases/{MANAGED_PHASE}/entrypoint",
        params={"waf_migration": mode, "phase_two": 1},
        json=body["result"],
    )
    assert put.status_code == 200, put.text


def reasons(found):
    return {a["action"]: a["reason"] for a in found["actions"] if not a["open"]}


def test_the_envelope_holds_the_core_steps(wb, http, zones):
    zone = zones["enterprise"]
    found = steps_of(http, zone)
    assert found["success"] is True and found["errors"] == [] and found["messages"] == []
    assert found["result"] == wb.migration.steps(zone).to_dict()
    assert found["result"]["stage"] == "start" and found["result"]["open"] == [
        "review",
        "preview",
        "deploy",
    ]


def test_enterprise_through_validation_mode_and_ready_to_update(wb, http, zones):
    zone = zones["enterprise"]
    migrate(http, zone, "validation")
    result = steps_of(http, zone)["result"]
    assert (result["stage"], result["ready"]) == ("validation", False)
    assert result["open"] == ["compare", "ready_to_update"]
    assert reasons(result)["turn_off_previous"] == "select Ready to update first"

    answer = ready(http, zone)
    assert answer.status_code == 200 and answer.json()["result"]["migration_state"] == "validation"
    result = steps_of(http, zone)["result"]
    assert result["ready"] and result["open"] == ["compare", "turn_off_previous"]
    again = ready(http, zone)  # closed now: the core refuses it, with the reason
    assert again.status_code == 400 and again.json()["errors"][0]["code"] == 10709

    migrate(http, zone, "pending")  # what Turn off previous version sends
    result = steps_of(http, zone)["result"]
    assert result["stage"] == "done" and result["open"] == ["compare"]


def test_a_pro_deploy_and_ready_to_update_refused_with_the_plan(http, zones):
    zone = zones["pro"]
    result = steps_of(http, zone)["result"]
    assert result["procedure"] == "direct"
    assert reasons(result)["ready_to_update"].startswith(
        "validation mode is for Enterprise zones: on the Pro plan"
    )
    refused = ready(http, zone)
    assert refused.status_code == 400 and refused.json()["success"] is False
    assert refused.json()["errors"][0]["code"] == 10709
    migrate(http, zone, "pending")
    assert steps_of(http, zone)["result"]["stage"] == "done"


def test_an_ineligible_zone_says_why_and_the_remedy(wb, http, zones):
    zone = zones["business"]
    made = http.post(
        f"/zones/{zone}/firewall/waf/overrides",
        json={"urls": ["business.example/x"], "rules": {"100015": "disable"}},
    ).json()["result"]
    result = steps_of(http, zone)["result"]
    assert result["stage"] == "not_eligible" and result["open"] == []
    assert result["refusal"]["code"] == 10703 and made["id"] in result["refusal"]["message"]
    assert result["remedies"][0].startswith("delete the URI-based WAF overrides")
    assert reasons(result)["deploy"] == (
        "the zone cannot migrate now: the zone has 1 URI-based WAF overrides"
    )


def test_a_bad_zone_is_a_4xx_envelope(wb, http, base_url, zones):
    found = steps_of(http, "0" * 32, status=404)
    assert found["success"] is False and found["errors"][0]["code"] == 7003
    assert ready(http, "0" * 32).status_code == 404
    scoped = wb.create_token([zones["pro"]])  # a token for another zone
    with httpx.Client(base_url=base_url, timeout=10) as anonymous:
        response = anonymous.get(f"/zones/{zones['pro']}/workbench/waf_migration/steps")
        assert 400 <= response.status_code < 500 and response.json()["success"] is False
        other = {"Authorization": f"Bearer {scoped.value}"}
        path = f"/zones/{zones['enterprise']}/workbench/waf_migration/steps"
        assert anonymous.get(path, headers=other).status_code == 403
        assert (
            anonymous.post(path.replace("steps", "ready_to_update"), headers=other).status_code
            == 403
        )
        path = f"/zones/{zones['pro']}/workbench/waf_migration/steps"
        assert anonymous.get(path, headers=other).status_code == 200


def test_the_openapi_document_lists_both_apart_from_the_platform_paths(http):
    paths = http.get("/openapi.json").json()["paths"]
    base = "/client/v4/zones/{zone_id}/workbench/waf_migration"
    assert set(paths[f"{base}/steps"]) == {"get"}
    assert set(paths[f"{base}/ready_to_update"]) == {"post"}
    assert "Not a platform path" in paths[f"{base}/steps"]["get"]["description"]
