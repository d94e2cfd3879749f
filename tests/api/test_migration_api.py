"""The WAF migration through the v4 API: every row of seed 002's tables, over HTTP and the SDK.

The Workbench here starts on 2022-01-01, before the migration opens; each
test moves the clock forward with ``PUT /workbench/clock`` as it needs.
"""

from __future__ import annotations

from datetime import UTC, datetime

import cloudflare
import httpx
import pytest

from workbench import Workbench
from workbench.core.plans import PLAN_NAMES
from workbench.rulesets import CLOUDFLARE_MANAGED_ID, MANAGED_PHASE, OWASP_ID
from workbench.waf_legacy import CLOUDFLARE_PACKAGE, OWASP_PACKAGE, url_pattern_expression

THRESHOLD = "6179ae15870a4bb7b2d480d4843b323c"
STRUTS_OLD, STRUTS_NEW = "100151", "23ee7cebe6e8443e99ecf932ab579455"
PHASE_ONE, PHASE_TWO = "2022-06-01T00:00:00Z", "2022-09-19T00:00:00Z"
START = {"old_waf_enabled": True, "new_waf_enabled": False, "migration_state": "start"}
VALIDATION = {"old_waf_enabled": True, "new_waf_enabled": True, "migration_state": "validation"}
DONE = {"old_waf_enabled": False, "new_waf_enabled": True, "migration_state": "done"}
RULE_KEYS = {
    "id",
    "version",
    "ref",
    "description",
    "action",
    "expression",
    "enabled",
    "action_parameters",
}


@pytest.fixture
def wb():
    bench = Workbench(seed=0, start=datetime(2022, 1, 1, tzinfo=UTC))
    for plan in PLAN_NAMES:
        bench.create_zone(f"{plan}.example.com", plan=plan)
    return bench


# -- helpers: one call each ----------------------------------------------------------
def at(http, when):
    response = http.put("/workbench/clock", json={"now": when})
    assert response.status_code == 200, response.text


def envelope_of(response, status=200):
    assert response.status_code == status, response.text
    return response.json()


def check(http, zone, phase_two=True):
    params = {"phase_two": 1} if phase_two else {}
    return envelope_of(http.get(f"/zones/{zone}/waf_migration/check", params=params))


def config(http, zone):
    return envelope_of(http.get(f"/zones/{zone}/waf_migration/config", params={"phase_two": 1}))


#: The workbench's own booleans and the state; the fields a client reads are checked apart.
OWN = ("old_waf_enabled", "new_waf_enabled", "migration_state")


def own(result):
    return {k: result[k] for k in OWN}


def status(http, zone):
    return own(envelope_of(http.get(f"/zones/{zone}/waf_migration/status"))["result"])


def entry(zone):
    return f"/zones/{zone}/rulesets/phases/{MANAGED_PHASE}/entrypoint"


def put(http, zone, body=None, mode=None, phase_two=True):
    body = body if body is not None else config(http, zone)["result"]
    params = {"waf_migration": mode} if mode is not None else {}
    if phase_two:
        params["phase_two"] = 1
    return http.put(entry(zone), params=params, json=body)


def refused(response, *words):
    """The 4xx envelope of a refusal whose message names ``words``."""
    assert 400 <= response.status_code < 500, response.text
    body = response.json()
    assert body["success"] is False and body["result"] is None
    message = body["errors"][0]["message"]
    for word in words:
        assert word in message, (word, message)
    return message


def unchanged(http, zone, before):
    """The entry point (or its absence) and the status are what they were."""
    now = http.get(entry(zone))
    assert (now.status_code, now.json()["result"], status(http, zone)) == before


def snapshot(http, zone):
    now = http.get(entry(zone))
    return now.status_code, now.json()["result"], status(http, zone)


def owasp(http, zone, **body):
    url = f"/zones/{zone}/firewall/waf/packages/{OWASP_PACKAGE}"
    envelope_of(http.patch(url, json=body))


def waf_setting(http, zone, value):
    envelope_of(http.patch(f"/zones/{zone}/settings/waf", json={"value": value}))


def bypass(http, zone, expressions, paused=False):
    made = []
    for start in range(0, len(expressions), 25):
        items = [
            {"action": "bypass", "products": ["waf"], "paused": paused, "filter": {"expression": e}}
            for e in expressions[start : start + 25]
        ]
        made += envelope_of(http.post(f"/zones/{zone}/firewall/rules", json=items))["result"]
    return made


def page_rule(http, zone, action, pattern="*example.com/static/*", status_="active"):
    body = {
        "targets": [{"target": "url", "constraint": {"operator": "matches", "value": pattern}}],
        "actions": [action],
        "status": status_,
    }
    return envelope_of(http.post(f"/zones/{zone}/pagerules", json=body))["result"]


def uri_override(http, zone, paused=False):
    body = {"urls": ["example.com/api/*"], "rules": {"100000": "disable"}, "paused": paused}
    return envelope_of(http.post(f"/zones/{zone}/firewall/waf/overrides", json=body))["result"]


COMPATIBLE = {
    "result": {"compatible": True, "migration_state": "start"},
    "success": True,
    "errors": [],
    "messages": [],
}
INCOMPATIBLE = {"result": {"compatible": False}, "success": True, "errors": [], "messages": []}


# -- eligibility ----------------------------------------------------------------------
def test_before_2022_05_04_nothing_is_compatible_and_migrating_is_refused(http, zones):
    zone = zones["business"]
    owasp(http, zone, sensitivity="off")  # phase-1 eligible, but the migration is not open
    assert check(http, zone, phase_two=False) == INCOMPATIBLE
    assert check(http, zone, phase_two=True) == INCOMPATIBLE
    before = snapshot(http, zone)
    refused(put(http, zone, mode="pending"), "2022-05-04")
    unchanged(http, zone, before)
    at(http, "2022-05-04T00:00:00Z")
    assert check(http, zone, phase_two=False) == COMPATIBLE


def test_phase_one_a_default_zone_has_the_owasp_package_on(http, zones):
    at(http, PHASE_ONE)
    zone = zones["pro"]
    assert check(http, zone, phase_two=False) == INCOMPATIBLE
    assert check(http, zone, phase_two=True) == INCOMPATIBLE  # phase 2 opens on 2022-09-19
    refused(put(http, zone, mode="pending"), "phase 1", "OWASP")
    owasp(http, zone, sensitivity="off")
    assert check(http, zone, phase_two=False) == COMPATIBLE
    owasp(http, zone, sensitivity="high")
    waf_setting(http, zone, "off")  # the old WAF off is the other way in
    assert check(http, zone, phase_two=False) == COMPATIBLE


@pytest.mark.parametrize(
    "blocker",
    ["bypass", "disable_security", "waf_off", "waf_on", "override", "paused_override"],
)
def test_phase_one_conditions(http, zones, blocker):
    at(http, PHASE_ONE)
    zone = zones["business"]
    owasp(http, zone, sensitivity="off")
    assert check(http, zone, phase_two=False) == COMPATIBLE
    if blocker == "bypass":
        bypass(http, zone, ['http.request.uri.path contains "/health"'])
    elif blocker == "disable_security":
        page_rule(http, zone, {"id": "disable_security"})
    elif blocker in ("waf_off", "waf_on"):
        page_rule(http, zone, {"id": "waf", "value": blocker[4:]})
    else:
        uri_override(http, zone, paused=blocker == "paused_override")
    assert check(http, zone, phase_two=False) == INCOMPATIBLE
    # From 2022-09-19 phase_two=1 leaves only the URI-based overrides.
    at(http, PHASE_TWO)
    expected = INCOMPATIBLE if "override" in blocker else COMPATIBLE
    assert check(http, zone, phase_two=True) == expected
    assert check(http, zone, phase_two=False) == INCOMPATIBLE


def test_phase_two_is_selected_only_from_2022_09_19(http, zones):
    zone = zones["enterprise"]
    at(http, "2022-09-18T23:59:59Z")
    assert check(http, zone) == INCOMPATIBLE
    at(http, PHASE_TWO)
    assert check(http, zone) == COMPATIBLE
    assert check(http, zone, phase_two=False) == INCOMPATIBLE


@pytest.mark.parametrize("paused", [False, True])
def test_uri_based_overrides_block_until_deleted(http, zones, paused):
    at(http, PHASE_TWO)
    zone = zones["business"]
    made = uri_override(http, zone, paused=paused)
    assert check(http, zone) == INCOMPATIBLE
    body = config(http, zone)["result"]
    before = snapshot(http, zone)
    refused(put(http, zone, body, mode="pending"), "URI-based WAF overrides")
    unchanged(http, zone, before)
    envelope_of(http.delete(f"/zones/{zone}/firewall/waf/overrides/{made['id']}"))
    assert check(http, zone) == COMPATIBLE
    assert envelope_of(put(http, zone, body, mode="pending"))["result"]["version"] == "1"


def test_owasp_group_and_rule_modes_never_block_and_are_reported(http, zones):
    at(http, PHASE_ONE)
    zone = zones["business"]
    owasp(http, zone, sensitivity="off")
    groups = envelope_of(http.get(f"/zones/{zone}/firewall/waf/packages/{OWASP_PACKAGE}/groups"))
    group = groups["result"][0]
    url = f"/zones/{zone}/firewall/waf/packages/{OWASP_PACKAGE}/groups/{group['id']}"
    envelope_of(http.patch(url, json={"mode": "off"}))
    assert check(http, zone, phase_two=False) == COMPATIBLE
    messages = config(http, zone)["messages"]
    assert [set(m) for m in messages] == [{"code", "message"}]
    assert group["name"] in messages[0]["message"] and "not migrated" in messages[0]["message"]


# -- procedure by plan -----------------------------------------------------------------
@pytest.mark.parametrize("plan", ["pro", "business"])
@pytest.mark.parametrize("mode", ["pending", "1"])
def test_pro_and_business_migrate_directly(http, zones, plan, mode):
    at(http, PHASE_TWO)
    zone = zones[plan]
    assert status(http, zone) == START
    saved = envelope_of(put(http, zone, mode=mode))["result"]
    assert saved["version"] == "1" and saved["name"] == "default"
    assert status(http, zone) == DONE
    assert check(http, zone) == INCOMPATIBLE  # nothing left to migrate, no banner
    # The old system's endpoints refuse.
    for response in (
        http.get(f"/zones/{zone}/firewall/waf/packages"),
        http.patch(f"/zones/{zone}/settings/waf", json={"value": "on"}),
        http.get(f"/zones/{zone}/firewall/waf/overrides"),
    ):
        refused(response, "new WAF Managed Rules")


@pytest.mark.parametrize("plan", ["pro", "business"])
@pytest.mark.parametrize("mode", ["validation", "2"])
def test_pro_and_business_have_no_validation_mode(http, zones, plan, mode):
    at(http, PHASE_TWO)
    zone = zones[plan]
    before = snapshot(http, zone)
    assert before[0] == 404 and before[2] == START
    refused(put(http, zone, mode=mode), "validation mode", "Enterprise")
    unchanged(http, zone, before)


@pytest.mark.parametrize("plan", ["pro", "business"])
def test_pro_and_business_save_enabled_rules_only_by_migrating(http, zones, plan):
    at(http, PHASE_TWO)
    zone = zones[plan]
    body = config(http, zone)["result"]
    before = snapshot(http, zone)
    refused(put(http, zone, body), "waf_migration", "Enterprise")
    unchanged(http, zone, before)
    for rule in body["rules"]:
        rule["enabled"] = False
    assert envelope_of(put(http, zone, body))["result"]["version"] == "1"
    assert status(http, zone) == START  # saving without waf_migration keeps the state


def test_enterprise_validation_mode_then_finish(http, zones):
    at(http, PHASE_TWO)
    zone = zones["enterprise"]
    body = config(http, zone)["result"]
    for rule in body["rules"]:  # the validation request omits id, version and ref
        for key in ("id", "version", "ref"):
            del rule[key]
    assert envelope_of(put(http, zone, body, mode="validation"))["result"]["version"] == "1"
    assert status(http, zone) == VALIDATION
    assert check(http, zone)["result"] == {"compatible": True, "migration_state": "validation"}
    # A save without waf_migration keeps validation mode.
    assert envelope_of(put(http, zone, body))["result"]["version"] == "2"
    assert status(http, zone) == VALIDATION
    assert envelope_of(put(http, zone, mode="pending"))["result"]["version"] == "3"
    assert status(http, zone) == DONE


def test_enterprise_may_migrate_directly(http, zones):
    at(http, PHASE_TWO)
    zone = zones["enterprise"]
    assert envelope_of(put(http, zone, mode="1"))["result"]["version"] == "1"
    assert status(http, zone) == DONE


def test_a_free_zone_is_eligible_and_saves_enabled_rules_only_by_migrating(http, zones):
    at(http, PHASE_ONE)
    zone = zones["free"]
    assert check(http, zone, phase_two=False) == COMPATIBLE  # the old WAF is off (not in plan)
    start = {"old_waf_enabled": False, "new_waf_enabled": False, "migration_state": "start"}
    assert status(http, zone) == start
    body = config(http, zone)["result"]
    assert [r["enabled"] for r in body["rules"]] == [False, False]  # the old WAF never ran
    body["rules"][0]["enabled"] = True
    refused(put(http, zone, body, phase_two=False), "waf_migration", "Enterprise")
    assert envelope_of(put(http, zone, body, mode="pending"))["result"]["version"] == "1"
    assert status(http, zone) == DONE


# -- sensitivity mapping ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sensitivity", "level", "threshold"),
    [("high", 2, 40), ("medium", 1, 25), ("low", 1, 40), (None, 2, 40)],
)
@pytest.mark.parametrize(
    ("action_mode", "action"), [("block", "block"), ("challenge", "challenge"), ("simulate", "log")]
)
def test_the_sensitivity_table(http, zones, sensitivity, level, threshold, action_mode, action):
    zone = zones["business"]
    if sensitivity is None:  # "Default": the package as it comes (high), action changed only
        owasp(http, zone, action_mode=action_mode)
    else:
        owasp(http, zone, sensitivity=sensitivity, action_mode=action_mode)
    found = config(http, zone)
    [rule] = [r for r in found["result"]["rules"] if r["action_parameters"]["id"] == OWASP_ID]
    assert rule["action_parameters"] == {
        "id": OWASP_ID,
        "overrides": {
            "categories": [
                {"category": f"paranoia-level-{n}", "enabled": False} for n in range(level + 1, 5)
            ],
            "rules": [{"id": THRESHOLD, "score_threshold": threshold, "action": action}],
        },
    }
    assert found["messages"] == []


def test_sensitivity_off_leaves_the_owasp_rule_out(http, zones):
    zone = zones["business"]
    owasp(http, zone, sensitivity="off")
    found = config(http, zone)
    assert [r["action_parameters"]["id"] for r in found["result"]["rules"]] == [
        CLOUDFLARE_MANAGED_ID
    ]
    assert found["messages"] == []


# -- the generated configuration ---------------------------------------------------------------
def test_the_config_body_shape_and_order(http, zones):
    zone = zones["business"]
    late, early = bypass(http, zone, ["ip.src eq 192.0.2.1", "ip.src eq 192.0.2.2"])
    envelope_of(http.patch(f"/zones/{zone}/firewall/rules/{early['id']}", json={"priority": 1}))
    page_rule(http, zone, {"id": "disable_security"}, pattern="example.com/static/*")
    rule_url = f"/zones/{zone}/firewall/waf/packages/{CLOUDFLARE_PACKAGE}/rules/{STRUTS_OLD}"
    envelope_of(http.patch(rule_url, json={"mode": "disable"}))
    found = config(http, zone)
    assert set(found) == {"result", "success", "errors", "messages"}
    assert set(found["result"]) == {"name", "rules"} and found["result"]["name"] == "default"
    rules = found["result"]["rules"]
    assert all(set(r) == RULE_KEYS for r in rules)
    assert all((r["id"], r["version"], r["ref"], r["description"]) == ("",) * 4 for r in rules)
    assert [(r["action"], r["expression"]) for r in rules] == [
        ("skip", "ip.src eq 192.0.2.2"),
        ("skip", "ip.src eq 192.0.2.1"),
        ("skip", url_pattern_expression("example.com/static/*")),
        ("execute", "true"),
        ("execute", "true"),
    ]
    assert all(r["action_parameters"] == {"ruleset": "current"} for r in rules[:3])
    assert rules[3]["action_parameters"] == {
        "id": CLOUDFLARE_MANAGED_ID,
        "overrides": {"rules": [{"id": STRUTS_NEW, "action": "log", "enabled": False}]},
    }
    assert set(rules[4]["action_parameters"]) == {"id", "overrides"}
    assert found["messages"] == []


def test_zone_setting_off_disables_the_execute_rules(http, zones):
    zone = zones["business"]
    waf_setting(http, zone, "off")
    rules = config(http, zone)["result"]["rules"]
    assert [(r["action"], r["enabled"]) for r in rules] == [("execute", False)] * 2
    page_rule(http, zone, {"id": "waf", "value": "on"}, pattern="example.com/shop/*")
    rules = config(http, zone)["result"]["rules"]
    assert [(r["enabled"], r["expression"]) for r in rules] == [
        (True, url_pattern_expression("example.com/shop/*"))
    ] * 2


# -- state transitions and irreversibility --------------------------------------------------------
def test_after_completion_nothing_goes_back_and_plain_saves_work(http, zones):
    at(http, PHASE_TWO)
    for plan in ("pro", "business", "enterprise"):
        zone = zones[plan]
        body = config(http, zone)["result"]
        assert envelope_of(put(http, zone, body, mode="pending"))["result"]["version"] == "1"
        refused(put(http, zone, body, mode="validation"), "cannot be undone")
        assert status(http, zone) == DONE
        # A plain PUT with enabled rules, on every plan.
        assert envelope_of(put(http, zone, body, phase_two=False))["result"]["version"] == "2"
        assert status(http, zone) == DONE
        refused(http.get(f"/zones/{zone}/waf_migration/config"), "nothing left to migrate")


def test_each_successful_put_adds_one_version_and_refusals_none(http, zones):
    at(http, PHASE_TWO)
    zone = zones["enterprise"]
    body = config(http, zone)["result"]
    assert envelope_of(put(http, zone, body, mode="validation"))["result"]["version"] == "1"
    twice = {"name": "default", "rules": body["rules"] + [body["rules"][0]]}
    before = snapshot(http, zone)
    refused(put(http, zone, twice, mode="pending"))  # two execute rules for one ruleset
    unchanged(http, zone, before)
    assert envelope_of(put(http, zone, body, mode="validation"))["result"]["version"] == "2"


def test_sensitivity_level_is_accepted(http, zones):
    at(http, PHASE_TWO)
    zone = zones["enterprise"]
    body = config(http, zone)["result"]
    body["rules"][0]["action_parameters"]["overrides"] = {"sensitivity_level": "low"}
    saved = envelope_of(put(http, zone, body, mode="validation"))["result"]
    assert saved["rules"][0]["action_parameters"]["overrides"] == {"sensitivity_level": "low"}


def test_bad_parameters_are_400(http, zones):
    at(http, PHASE_TWO)
    zone = zones["enterprise"]
    refused(put(http, zone, mode="3"), "waf_migration")
    response = http.get(f"/zones/{zone}/waf_migration/check", params={"phase_two": "yes"})
    refused(response, "phase_two")


def test_dashboard_deploy_completes_on_the_clock(wb, http, zones):
    at(http, PHASE_TWO)
    zone = zones["pro"]
    wb.migration.deploy(zone, wb.migration.review(zone).config)
    assert status(http, zone) == VALIDATION
    envelope_of(http.put("/workbench/clock", json={"advance_seconds": 120}))
    assert status(http, zone) == DONE


def test_no_zone_migrates_by_itself(http, zones):
    at(http, "2030-01-01T00:00:00Z")
    for zone in zones.values():
        assert status(http, zone)["migration_state"] == "start"


# -- limits -----------------------------------------------------------------------------------------
def _addresses(count):
    return [f"ip.src eq 10.2.{i // 256}.{i % 256}" for i in range(count)]


def test_200_firewall_rules_pass_201_need_support(http, zones):
    at(http, PHASE_TWO)
    zone = zones["enterprise"]  # holds 1000 active rules
    made = bypass(http, zone, _addresses(201))
    body = config(http, zone)["result"]
    assert len(body["rules"]) == 203  # config still lists them
    before = snapshot(http, zone)
    refused(put(http, zone, body, mode="pending"), "200", "Cloudflare Support")
    refused(put(http, zone, body, mode="validation"), "200", "Cloudflare Support")
    unchanged(http, zone, before)
    envelope_of(http.delete(f"/zones/{zone}/firewall/rules/{made[-1]['id']}"))
    body = config(http, zone)["result"]
    assert len(envelope_of(put(http, zone, body, mode="pending"))["result"]["rules"]) == 202
    assert status(http, zone) == DONE


def _expression(size):
    prefix = 'http.request.uri.path eq "'
    room = size - len(prefix) - 1
    made = prefix + "é" * (room // 2) + "a" * (room % 2) + '"'
    assert len(made.encode("utf-8")) == size and len(made) < 4096
    return made


def test_4096_bytes_pass_4097_need_support(http, zones):
    at(http, PHASE_TWO)
    zone = zones["business"]
    [rule] = bypass(http, zone, [_expression(4097)])  # a valid filter: 2,062 characters
    body = config(http, zone)["result"]
    assert body["rules"][0]["expression"] == _expression(4097)
    before = snapshot(http, zone)
    refused(
        put(http, zone, body, mode="pending"),
        "firewall rule expression",
        "4 KB",
        "Cloudflare Support",
    )
    unchanged(http, zone, before)
    filter_url = f"/zones/{zone}/filters/{rule['filter']['id']}"
    envelope_of(
        http.put(filter_url, json={"id": rule["filter"]["id"], "expression": _expression(4096)})
    )
    body = config(http, zone)["result"]
    assert envelope_of(put(http, zone, body, mode="pending"))["result"]["version"] == "1"


# -- authentication and the official SDK --------------------------------------------------------------
def test_bearer_tokens_work_for_every_migration_call(wb, base_url, zones):
    zone = zones["enterprise"]
    token = wb.account.tokens[0].value
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=10) as client:
        at(client, PHASE_TWO)
        assert check(client, zone) == COMPATIBLE
        body = config(client, zone)["result"]
        assert envelope_of(put(client, zone, body, mode="validation"))["result"]["version"] == "1"
        assert status(client, zone) == VALIDATION
        scoped = wb.create_token([zones["pro"]])
        other = {"Authorization": f"Bearer {scoped.value}"}
        for path in ("check", "config", "status"):
            response = client.get(f"/zones/{zone}/waf_migration/{path}", headers=other)
            assert response.status_code == 403
        assert client.put(entry(zone), headers=other, json=body).status_code == 403
        assert status(client, zone) == VALIDATION


def test_the_sdk_walks_an_enterprise_zone_through(sdk, http, zones):
    at(http, PHASE_TWO)
    zone = zones["enterprise"]
    found = sdk.get(
        f"/zones/{zone}/waf_migration/check", cast_to=object, options={"params": {"phase_two": 1}}
    )
    assert found == COMPATIBLE
    body = sdk.get(
        f"/zones/{zone}/waf_migration/config", cast_to=object, options={"params": {"phase_two": 1}}
    )
    rules = body["result"]["rules"]
    made = sdk.rulesets.phases.update(
        ruleset_phase=MANAGED_PHASE,
        zone_id=zone,
        name="default",
        rules=rules,
        extra_query={"waf_migration": "validation", "phase_two": 1},
    )
    assert made["version"] == "1"
    assert (
        own(sdk.get(f"/zones/{zone}/waf_migration/status", cast_to=object)["result"]) == VALIDATION
    )
    finished = sdk.rulesets.phases.update(
        ruleset_phase=MANAGED_PHASE,
        zone_id=zone,
        name="default",
        rules=rules,
        extra_query={"waf_migration": "pending", "phase_two": 1},
    )
    assert finished["version"] == "2"
    got = sdk.rulesets.phases.get(ruleset_phase=MANAGED_PHASE, zone_id=zone)
    assert got.version == "2" and [r.action for r in got.rules] == ["execute", "execute"]
    assert got.rules[0].action_parameters.id == CLOUDFLARE_MANAGED_ID
    assert own(sdk.get(f"/zones/{zone}/waf_migration/status", cast_to=object)["result"]) == DONE
    with pytest.raises(cloudflare.BadRequestError) as info:
        sdk.rulesets.phases.update(
            ruleset_phase=MANAGED_PHASE,
            zone_id=zone,
            rules=rules,
            extra_query={"waf_migration": "validation", "phase_two": 1},
        )
    assert "cannot be undone" in info.value.body["errors"][0]["message"]


def test_the_sdk_sees_pro_refusals(sdk, http, zones):
    at(http, PHASE_TWO)
    zone = zones["pro"]
    rules = config(http, zone)["result"]["rules"]
    with pytest.raises(cloudflare.BadRequestError) as info:
        sdk.rulesets.phases.update(
            ruleset_phase=MANAGED_PHASE,
            zone_id=zone,
            rules=rules,
            extra_query={"waf_migration": "validation", "phase_two": 1},
        )
    message = info.value.body["errors"][0]["message"]
    assert "validation mode" in message and "Enterprise" in message
    with pytest.raises(cloudflare.NotFoundError):
        sdk.rulesets.phases.get(ruleset_phase=MANAGED_PHASE, zone_id=zone)
    made = sdk.rulesets.phases.update(
        ruleset_phase=MANAGED_PHASE,
        zone_id=zone,
        name="default",
        rules=rules,
        extra_query={"waf_migration": "pending", "phase_two": 1},
    )
    assert made["version"] == "1"
    assert sdk.rulesets.phases.get(ruleset_phase=MANAGED_PHASE, zone_id=zone).version == "1"


def test_status_carries_the_fields_clients_read_on_every_state(http, zones):
    """A real client reads created, migration_state, new_waf_status, old_waf_status, source."""
    at(http, PHASE_TWO)
    zone = zones["enterprise"]

    def full():
        return envelope_of(http.get(f"/zones/{zone}/waf_migration/status"))["result"]

    first = full()
    assert {"created", "migration_state", "new_waf_status", "old_waf_status", "source"} <= set(
        first
    )
    assert (first["old_waf_status"], first["new_waf_status"]) == ("on", "off")
    assert first["created"] is None and first["source"] is None  # nothing has begun
    body = config(http, zone)["result"]
    for rule in body["rules"]:
        for key in ("id", "version", "ref"):
            del rule[key]
    envelope_of(put(http, zone, body, mode="validation"))
    during = full()
    assert (during["old_waf_status"], during["new_waf_status"]) == ("on", "on")
    assert during["migration_state"] == "validation" and during["source"] == "api"
    assert during["created"].endswith("Z")
    envelope_of(put(http, zone, mode="pending"))
    done = full()
    assert (done["old_waf_status"], done["new_waf_status"], done["migration_state"]) == (
        "off",
        "on",
        "done",
    )
    assert done["created"] == during["created"], "created is when the migration began"
