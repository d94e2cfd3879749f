"""Migration choices recorded in docs/decisions.md, seen through the v4 API where it reaches them.

HTTP calls go to the Workbench's app in process through ``ApiClient``; the
dashboard's steps (Ready to update, Turn off previous version) are the Python
API the wizard's buttons stand for.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from workbench import Workbench
from workbench.api import ApiClient
from workbench.core.errors import ValidationError
from workbench.migration.errors import (
    ExpressionTooLong,
    StepOutOfOrder,
    TooManyFirewallRules,
)
from workbench.rulesets import MANAGED_PHASE
from workbench.waf_legacy import OWASP_PACKAGE, url_pattern_expression
from workbench.zone_import import ZoneImportError, import_zone

PHASE_ONE = datetime(2022, 6, 1, tzinfo=UTC)
PHASE_TWO = datetime(2022, 9, 19, tzinfo=UTC)
DATA = Path(__file__).resolve().parent.parent / "zone_import" / "data"
ENTRY = f"rulesets/phases/{MANAGED_PHASE}/entrypoint"


def bench(when, plan="business"):
    wb = Workbench(seed=0, start=when)
    zone = wb.create_zone("example.com", plan=plan).id
    return wb, zone, ApiClient(wb)


def ok(exchange):
    assert exchange.status == 200 and exchange.success, exchange.response
    return exchange.response["result"]


def refused(exchange, code):
    """A v4 refusal: HTTP 400, ``success`` false, no result, ``errors[0]`` with ``code``."""
    assert exchange.status == 400, exchange.response
    assert exchange.response["success"] is False and exchange.response["result"] is None
    error = exchange.response["errors"][0]
    assert error["code"] == code, error
    return error["message"]


def page_rule(api, zone, pattern, action, *, priority=1, status="active"):
    body = {
        "targets": [{"target": "url", "constraint": {"operator": "matches", "value": pattern}}],
        "actions": [action],
        "priority": priority,
        "status": status,
    }
    return ok(api.call("POST", f"/zones/{zone}/pagerules", body))


def owasp_off(api, zone):
    ok(
        api.call(
            "PATCH", f"/zones/{zone}/firewall/waf/packages/{OWASP_PACKAGE}", {"sensitivity": "off"}
        )
    )


def bypass(api, zone, expressions):
    for start in range(0, len(expressions), 25):
        items = [
            {"action": "bypass", "products": ["waf"], "filter": {"expression": e}}
            for e in expressions[start : start + 25]
        ]
        ok(api.call("POST", f"/zones/{zone}/firewall/rules", items))


def addresses(count):
    return [f"ip.src eq 10.2.{i // 256}.{i % 256}" for i in range(count)]


def config(api, zone):
    return ok(api.call("GET", f"/zones/{zone}/waf_migration/config?phase_two=1"))


def migrate(api, zone, query="waf_migration=pending&phase_two=1", body=None):
    return api.call("PUT", f"/zones/{zone}/{ENTRY}?{query}", body or config(api, zone))


def check(api, zone, query=""):
    return ok(api.call("GET", f"/zones/{zone}/waf_migration/check{query}"))


# -- eligibility: disabled page rules block ----------------------------------------------------
@pytest.mark.parametrize(
    "action",
    [{"id": "disable_security"}, {"id": "waf", "value": "off"}, {"id": "waf", "value": "on"}],
    ids=["disable_security", "waf_off", "waf_on"],
)
def test_a_disabled_page_rule_blocks_phase_one_like_an_active_one(action):
    wb, zone, api = bench(PHASE_ONE)
    owasp_off(api, zone)
    assert check(api, zone) == {"compatible": True, "migration_state": "start"}
    page_rule(api, zone, "example.com/static/*", action, status="disabled")
    assert check(api, zone) == {"compatible": False}
    message = refused(migrate(api, zone, "waf_migration=pending"), 10704)
    assert "page rule" in message
    assert wb.migration.status(zone).migration_state == "start"
    # From 2022-09-19, phase_two=1 leaves only the URI-based overrides in the way.
    wb.advance(seconds=int((PHASE_TWO - PHASE_ONE).total_seconds()))
    assert check(api, zone, "?phase_two=1") == {"compatible": True, "migration_state": "start"}


# -- the limits at Turn off previous version ------------------------------------------------------
def _in_validation_ready():
    wb, zone, api = bench(PHASE_TWO, plan="enterprise")
    ok(migrate(api, zone, "waf_migration=validation&phase_two=1"))
    assert wb.migration.ready_to_update(zone).migration_state == "validation"
    return wb, zone, api


def test_turn_off_previous_version_refuses_201_firewall_rules():
    wb, zone, api = _in_validation_ready()
    bypass(api, zone, addresses(201))  # added while both versions run
    with pytest.raises(TooManyFirewallRules) as info:
        wb.migration.turn_off_previous(zone)
    assert info.value.code == 10705 and "201 firewall rules" in info.value.message
    assert {
        k: v
        for k, v in wb.migration.status(zone).to_dict().items()
        if k.endswith("status") or k == "migration_state"
    } == {
        "old_waf_status": "on",
        "new_waf_status": "on",
        "migration_state": "validation",
    }
    # The wizard's Turn off previous version is this PUT: refused the same way.
    entry = ok(api.call("GET", f"/zones/{zone}/{ENTRY}"))
    body = {
        "rules": [
            {k: r[k] for k in ("action", "expression", "enabled", "action_parameters")}
            for r in entry["rules"]
        ]
    }
    refused(migrate(api, zone, body=body), 10705)
    # Back to 200: the step goes through.
    rules = ok(api.call("GET", f"/zones/{zone}/firewall/rules?per_page=100"))
    ok(api.call("DELETE", f"/zones/{zone}/firewall/rules/{rules[0]['id']}"))
    assert wb.migration.turn_off_previous(zone).migration_state == "done"


def test_turn_off_previous_version_refuses_an_expression_over_4096_bytes():
    wb, zone, api = _in_validation_ready()
    text = 'http.request.uri.path eq "' + "é" * 2040 + '"'  # 4107 bytes, 2067 characters
    bypass(api, zone, [text])
    with pytest.raises(ExpressionTooLong) as info:
        wb.migration.turn_off_previous(zone)
    assert info.value.code == 10706 and f"{len(text.encode())} bytes" in info.value.message
    assert wb.migration.status(zone).migration_state == "validation"


# -- the order of several page-rule skips -------------------------------------------------------
def test_page_rule_skips_follow_the_firewall_ones_highest_priority_first():
    _wb, zone, api = bench(PHASE_ONE)
    page_rule(api, zone, "example.com/two/*", {"id": "waf", "value": "off"}, priority=2)
    page_rule(api, zone, "example.com/five/*", {"id": "disable_security"}, priority=5)
    page_rule(api, zone, "example.com/on/*", {"id": "waf", "value": "on"}, priority=4)
    page_rule(
        api, zone, "example.com/one/*", {"id": "waf", "value": "off"}, priority=1, status="disabled"
    )
    page_rule(api, zone, "example.com/two-b/*", {"id": "disable_security"}, priority=2)
    bypass(api, zone, ["ip.src eq 192.0.2.1"])
    skips = [
        (r["expression"], r["enabled"]) for r in config(api, zone)["rules"] if r["action"] == "skip"
    ]
    assert skips == [
        ("ip.src eq 192.0.2.1", True),
        (url_pattern_expression("example.com/five/*"), True),
        (url_pattern_expression("example.com/two/*"), True),  # equal priorities: creation order
        (url_pattern_expression("example.com/two-b/*"), True),
        (url_pattern_expression("example.com/one/*"), False),
    ]


# -- the migration's error codes, as a client gets them ---------------------------------------------
def test_10702_saving_enabled_rules_without_migrating_on_pro():
    _wb, zone, api = bench(PHASE_TWO, plan="pro")
    message = refused(api.call("PUT", f"/zones/{zone}/{ENTRY}", config(api, zone)), 10702)
    assert "waf_migration=pending" in message and "Pro plan" in message


def test_10704_phase_one_refusal():
    _wb, zone, api = bench(PHASE_ONE)  # the OWASP package is on
    message = refused(migrate(api, zone, "waf_migration=pending"), 10704)
    assert "phase 1" in message and "OWASP" in message


def test_10705_more_than_200_firewall_rules():
    _wb, zone, api = bench(PHASE_TWO, plan="enterprise")
    bypass(api, zone, addresses(201))
    message = refused(migrate(api, zone), 10705)
    assert "at most 200" in message and "Cloudflare Support" in message


def test_10706_an_expression_over_4096_bytes():
    _wb, zone, api = bench(PHASE_TWO)
    bypass(api, zone, ['http.request.uri.path eq "' + "é" * 2040 + '"'])
    message = refused(migrate(api, zone), 10706)
    assert "4107 bytes" in message and "4096 bytes" in message


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("waf_migration=3&phase_two=1", "waf_migration"),
        ("waf_migration=pending&phase_two=maybe", "phase_two"),
    ],
)
def test_10708_a_bad_migration_parameter(query, name):
    _wb, zone, api = bench(PHASE_TWO)
    exchange = migrate(api, zone, query, body={"rules": []})
    message = refused(exchange, 10708)
    assert message.startswith(f"{name}: ")
    assert exchange.response["errors"][0]["source"] == {"parameter": name}


def test_10708_on_the_reads_too():
    _wb, zone, api = bench(PHASE_TWO)
    refused(api.call("GET", f"/zones/{zone}/waf_migration/check?phase_two=2"), 10708)
    refused(api.call("GET", f"/zones/{zone}/waf_migration/config?phase_two=yes"), 10708)


def test_10709_a_dashboard_step_out_of_order():
    wb, zone, _api = bench(PHASE_TWO, plan="enterprise")
    for step in (wb.migration.ready_to_update, wb.migration.turn_off_previous):
        with pytest.raises(StepOutOfOrder) as info:
            step(zone)
        error = info.value.to_error()
        assert error["code"] == 10709 and "Ready to update" in error["message"]


def test_10710_nothing_left_to_migrate():
    _wb, zone, api = bench(PHASE_TWO)
    ok(migrate(api, zone))
    message = refused(api.call("GET", f"/zones/{zone}/waf_migration/config"), 10710)
    assert "nothing left to migrate" in message
    assert check(api, zone, "?phase_two=1") == {"compatible": False}


# -- the import's code ---------------------------------------------------------------------------
def test_a_folder_that_cannot_be_imported_is_code_10790(tmp_path):
    folder = tmp_path / "zone"
    shutil.copytree(DATA / "import_pro_zone", folder)
    saved = json.loads((folder / "pagerules.json").read_text())
    saved["result"][0]["status"] = "paused"
    (folder / "pagerules.json").write_text(json.dumps(saved))
    with pytest.raises(ZoneImportError) as info:
        import_zone(Workbench(seed=0), folder)
    assert isinstance(info.value, ValidationError)
    error = info.value.to_error()
    assert error["code"] == 10790
    assert error["message"].startswith("pagerules.json: /result/0/status: ")
    assert error["source"] == {"file": "pagerules.json", "pointer": "/result/0/status"}
