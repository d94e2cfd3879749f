"""The Rulesets API (E1-E4, versions) through HTTP and the official SDK."""

from __future__ import annotations

import cloudflare
import pytest

from workbench.rulesets import (
    CLOUDFLARE_MANAGED_ID,
    CUSTOM_PHASE,
    MANAGED_PHASE,
    OWASP_ID,
    OWASP_THRESHOLD_RULE_ID,
    load_catalog,
)

CF, OWASP, THRESHOLD = CLOUDFLARE_MANAGED_ID, OWASP_ID, OWASP_THRESHOLD_RULE_ID
STRUTS = "23ee7cebe6e8443e99ecf932ab579455"
SQLI = "d9e350f1b72d4730899c8a420e48a85d"
XSS = "c1" * 16


def _managed(ruleset_id, name, version, rules):
    return {
        "id": ruleset_id,
        "name": name,
        "kind": "managed",
        "phase": MANAGED_PHASE,
        "version": version,
        "last_updated": "2025-06-01T00:00:00Z",
        "rules": rules,
    }


# A small stand-in catalogue with the documented ids, so these tests do not
# depend on the size or content of the real catalogue files.
CATALOG = [
    _managed(
        CF,
        "Cloudflare Managed Ruleset",
        "180",
        [
            {
                "id": STRUTS,
                "description": "Apache Struts - Open Redirect - CVE:CVE-2013-2248",
                "categories": ["struts"],
                "action": "block",
                "enabled": True,
                "expression": 'http.request.uri.path contains "/struts"',
            },
            {
                "id": SQLI,
                "description": "SQLi",
                "categories": ["sqli"],
                "action": "block",
                "enabled": True,
                "expression": 'http.request.uri.query contains "union"',
            },
        ],
    ),
    _managed(
        OWASP,
        "Cloudflare OWASP Core Ruleset",
        "35",
        [
            {
                "id": XSS,
                "description": "941100: XSS",
                "categories": ["paranoia-level-1"],
                "action": "block",
                "enabled": True,
                "score": 45,
                "expression": 'http.request.uri.query contains "<script"',
            },
            {
                "id": THRESHOLD,
                "description": "949110: Inbound Anomaly Score Exceeded",
                "categories": [],
                "action": "block",
                "enabled": True,
                "score_threshold": 40,
                "expression": "true",
            },
        ],
    ),
]


@pytest.fixture(autouse=True)
def catalog(wb):
    wb.rulesets.catalog = load_catalog(CATALOG)


def entry_path(zone, phase=MANAGED_PHASE):
    return f"/zones/{zone}/rulesets/phases/{phase}/entrypoint"


EXECUTE_CF = {"action": "execute", "expression": "true", "action_parameters": {"id": CF}}


def test_entrypoint_is_404_10003_before_the_first_put(sdk, http, zones):
    response = http.get(entry_path(zones["pro"]))
    assert response.status_code == 404
    body = response.json()
    assert body["success"] is False and body["result"] is None
    assert body["errors"] == [
        {
            "code": 10003,
            "message": "could not find entrypoint ruleset in the http_request_firewall_managed phase",
        }
    ]
    with pytest.raises(cloudflare.NotFoundError):
        sdk.rulesets.phases.get(ruleset_phase=MANAGED_PHASE, zone_id=zones["pro"])


def test_sdk_update_creates_then_versions_and_get_reads(wb, sdk, zones):
    # Enterprise: the only plan that may save enabled managed rules without migrating.
    zone = zones["enterprise"]
    first = sdk.rulesets.phases.update(
        ruleset_phase=MANAGED_PHASE,
        zone_id=zone,
        rules=[{**EXECUTE_CF, "description": "managed"}],
    )
    # update() types its result as "a ruleset or null" (dry runs), which the SDK's union
    # parsing resolves to the plain dict; get() parses the same object into models.
    assert (first["kind"], first["phase"], first["version"], first["name"]) == (
        "zone",
        MANAGED_PHASE,
        "1",
        "default",
    )
    [rule] = first["rules"]
    assert rule["action"] == "execute" and rule["action_parameters"] == {"id": CF}
    assert rule["ref"] == rule["id"] and len(rule["id"]) == 32 and rule["enabled"] is True
    wb.advance(minutes=1)
    second = sdk.rulesets.phases.update(
        ruleset_phase=MANAGED_PHASE,
        zone_id=zone,
        rules=[
            {
                "action": "skip",
                "expression": 'http.request.uri.path contains "/health"',
                "action_parameters": {"ruleset": "current"},
                "logging": {"enabled": False},
            },
            {**EXECUTE_CF, "id": rule["id"], "description": "managed"},
        ],
    )
    assert second["id"] == first["id"] and second["version"] == "2"
    assert second["rules"][1]["id"] == rule["id"] and second["rules"][1]["version"] == "1"
    assert second["rules"][0]["logging"] == {"enabled": False}
    got = sdk.rulesets.phases.get(ruleset_phase=MANAGED_PHASE, zone_id=zone)
    assert got.version == "2" and [r.action for r in got.rules] == ["skip", "execute"]
    assert got.last_updated.isoformat().startswith("2026-01-01T00:01:00")
    # And the engine runs what the API stored.
    verdict = wb.rulesets.evaluate(zone, {"http.request.uri.path": "/struts"})
    assert [(e.rule_id, e.ruleset_id) for e in verdict.events] == [(STRUTS, CF)]


def test_sdk_list_get_and_versions(sdk, zones):
    zone = zones["enterprise"]
    sdk.rulesets.phases.update(
        ruleset_phase=CUSTOM_PHASE,
        zone_id=zone,
        rules=[
            {"action": "block", "expression": "ip.src eq 192.0.2.1", "description": "one address"}
        ],
    )
    made = sdk.rulesets.phases.update(ruleset_phase=MANAGED_PHASE, zone_id=zone, rules=[EXECUTE_CF])
    sdk.rulesets.phases.update(ruleset_phase=MANAGED_PHASE, zone_id=zone, rules=[])
    listed = list(sdk.rulesets.list(zone_id=zone))
    assert [(r.kind, r.phase) for r in listed] == [
        ("zone", CUSTOM_PHASE),
        ("zone", MANAGED_PHASE),
        ("managed", MANAGED_PHASE),
        ("managed", MANAGED_PHASE),
    ]
    assert [r.id for r in listed[2:]] == [CF, OWASP]
    managed = sdk.rulesets.get(OWASP, zone_id=zone)
    assert managed.kind == "managed" and managed.rules[-1].id == THRESHOLD
    own = sdk.rulesets.get(made["id"], zone_id=zone)
    assert own.version == "2" and own.rules == []
    versions = list(sdk.rulesets.versions.list(made["id"], zone_id=zone))
    assert [v.version for v in versions] == ["1", "2"]
    old = sdk.rulesets.versions.get("1", ruleset_id=made["id"], zone_id=zone)
    assert [r.action for r in old.rules] == ["execute"]
    with pytest.raises(cloudflare.NotFoundError):
        sdk.rulesets.get("f" * 32, zone_id=zone)
    with pytest.raises(cloudflare.NotFoundError):
        sdk.rulesets.versions.get("7", ruleset_id=made["id"], zone_id=zone)


def test_the_list_has_no_rules(http, zones):
    http.put(entry_path(zones["pro"]), json={"rules": [EXECUTE_CF]})
    result = http.get(f"/zones/{zones['pro']}/rulesets").json()["result"]
    assert result and all("rules" not in r for r in result)


@pytest.mark.parametrize("field", ["kind", "phase"])
def test_kind_and_phase_are_refused(http, zones, field):
    response = http.put(entry_path(zones["pro"]), json={"rules": [], field: "zone"})
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["message"] == f'invalid JSON: unknown field "{field}"'
    assert error["source"] == {"pointer": f"/{field}"}
    assert http.get(entry_path(zones["pro"])).status_code == 404


def test_validation_errors_point_at_the_field(sdk, http, zones):
    zone = zones["pro"]
    response = http.put(
        entry_path(zone), json={"rules": [{"action": "block", "expression": "true"}]}
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["source"] == {"pointer": "/rules/0/action"}
    with pytest.raises(cloudflare.BadRequestError) as info:
        sdk.rulesets.phases.update(
            ruleset_phase=MANAGED_PHASE,
            zone_id=zone,
            rules=[{**EXECUTE_CF, "action_parameters": {"id": "f" * 32}}],
        )
    assert info.value.body["errors"][0]["source"] == {"pointer": "/rules/0/action_parameters/id"}
    with pytest.raises(cloudflare.BadRequestError) as info:
        sdk.rulesets.phases.update(
            ruleset_phase=MANAGED_PHASE,
            zone_id=zone,
            rules=[
                {
                    "action": "skip",
                    "expression": "true",
                    "action_parameters": {"rules": {CF: [THRESHOLD]}},
                }
            ],
        )
    assert info.value.body["errors"][0]["source"] == {
        "pointer": f"/rules/0/action_parameters/rules/{CF}/0"
    }
    with pytest.raises(cloudflare.BadRequestError):
        sdk.rulesets.phases.update(
            ruleset_phase=MANAGED_PHASE, zone_id=zone, rules=[EXECUTE_CF, EXECUTE_CF]
        )
    assert http.get(entry_path(zone)).status_code == 404  # nothing was stored


def test_an_unknown_phase_is_a_400_naming_the_phases(sdk, http, zones):
    with pytest.raises(cloudflare.BadRequestError) as info:
        sdk.rulesets.phases.get(ruleset_phase="http_ratelimit", zone_id=zones["pro"])
    message = info.value.body["errors"][0]["message"]
    assert CUSTOM_PHASE in message and MANAGED_PHASE in message
    response = http.put(entry_path(zones["pro"], "nope"), json={"rules": []})
    assert response.status_code == 400 and "nope" in response.json()["errors"][0]["message"]


def test_migration_query_parameters_are_accepted_for_now(sdk, zones):
    # The config shape of the migration: empty id, version and ref.
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
            "overrides": {"rules": [{"id": STRUTS, "action": "log", "enabled": False}]},
        },
    }
    saved = sdk.rulesets.phases.update(
        ruleset_phase=MANAGED_PHASE,
        zone_id=zones["pro"],
        name="default",
        rules=[rule],
        extra_query={"waf_migration": "pending", "phase_two": 1},
    )
    assert saved["version"] == "1"
    assert saved["rules"][0]["action_parameters"]["overrides"]["rules"][0]["id"] == STRUTS


def test_dry_run_answers_null_and_stores_nothing(http, zones):
    zone = zones["enterprise"]
    response = http.put(entry_path(zone), params={"dry_run": "true"}, json={"rules": [EXECUTE_CF]})
    assert response.status_code == 200 and response.json()["result"] is None
    assert http.get(entry_path(zone)).status_code == 404
    bad = http.put(entry_path(zone), params={"dry_run": "true"}, json={"rules": [{}]})
    assert bad.status_code == 400


def test_owasp_through_the_api_then_the_engine(wb, sdk, zones):
    zone = zones["enterprise"]
    sdk.rulesets.phases.update(
        ruleset_phase=MANAGED_PHASE,
        zone_id=zone,
        rules=[
            {
                "action": "execute",
                "expression": "true",
                "action_parameters": {
                    "id": OWASP,
                    "overrides": {
                        "rules": [
                            {"id": THRESHOLD, "score_threshold": 25, "action": "managed_challenge"}
                        ]
                    },
                },
            }
        ],
    )
    [event] = wb.rulesets.evaluate(zone, {"http.request.uri.query": "<script>"}).events
    assert (event.rule_id, event.ruleset_id, event.action, event.score) == (
        THRESHOLD,
        OWASP,
        "managed_challenge",
        45,
    )


def test_scoped_tokens_and_unknown_zones(wb, base_url, http, zones):
    token = wb.create_token([zones["pro"]])
    scoped = cloudflare.Cloudflare(base_url=base_url, api_token=token.value, max_retries=0)
    try:
        with pytest.raises(cloudflare.PermissionDeniedError):
            scoped.rulesets.phases.get(ruleset_phase=MANAGED_PHASE, zone_id=zones["free"])
        with pytest.raises(cloudflare.PermissionDeniedError):
            scoped.rulesets.list(zone_id=zones["free"])
    finally:
        scoped.close()
    response = http.get(f"/zones/{'0' * 32}/rulesets")
    assert response.status_code in (400, 403, 404) and response.json()["success"] is False
