"""The old WAF over HTTP: W1-W6 (packages, groups, rules), O1-O2 (overrides), the waf setting."""

from __future__ import annotations

import cloudflare
import pytest

from workbench.waf_legacy import CLOUDFLARE_PACKAGE, OWASP_PACKAGE, WafLegacyService, load_catalog

CF, OWASP = CLOUDFLARE_PACKAGE, OWASP_PACKAGE
SPECIALS, WORDPRESS, SQLI = "a1" * 16, "a2" * 16, "b1" * 16

# The SDK marks the old WAF's methods deprecated; simulating them is the point here.
pytestmark = pytest.mark.filterwarnings("ignore:deprecated:DeprecationWarning")


def _deny(rule_id, default_mode, path, priority):
    return {
        "id": rule_id,
        "description": f"blocks {path}",
        "priority": priority,
        "kind": "deny",
        "default_mode": default_mode,
        "expression": f'http.request.uri.path contains "{path}"',
        "new_id": None,
    }


# A small stand-in catalogue, so these tests do not depend on the real data file.
CATALOG = [
    {
        "id": CF,
        "name": "CloudFlare",
        "description": "Cloudflare Managed Ruleset (previous version)",
        "detection_mode": "traditional",
        "groups": [
            {
                "id": SPECIALS,
                "name": "Cloudflare Specials",
                "description": "",
                "default_mode": "on",
                "rules": [
                    _deny("100015", "block", "/admin", "1"),
                    _deny("100016", "challenge", "/login", "2"),
                ],
            },
            {
                "id": WORDPRESS,
                "name": "Cloudflare WordPress",
                "description": "",
                "default_mode": "off",
                "rules": [_deny("WP0025B", "block", "/wp-login", "1")],
            },
        ],
    },
    {
        "id": OWASP,
        "name": "OWASP ModSecurity Core Rule Set",
        "description": "",
        "detection_mode": "anomaly",
        "groups": [
            {
                "id": SQLI,
                "name": "OWASP SQL Injection Attacks",
                "description": "",
                "default_mode": "on",
                "rules": [
                    {
                        "id": "950001",
                        "description": "SQL injection",
                        "priority": "1",
                        "default_mode": "on",
                        "score": 30,
                        "expression": 'http.request.uri.query contains "select"',
                    }
                ],
            }
        ],
    },
]


@pytest.fixture(autouse=True)
def small_catalog(wb):
    # The routes read wb.waf_legacy on each request: install the one on the small catalogue.
    wb.__dict__["_waf_legacy"] = WafLegacyService(wb, load_catalog(CATALOG))


def packages(zone):
    return f"/zones/{zone}/firewall/waf/packages"


def overrides(zone):
    return f"/zones/{zone}/firewall/waf/overrides"


def _error(response, status, code):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["success"] is False and body["result"] is None
    assert body["errors"][0]["code"] == code
    return body["errors"][0]


def test_list_packages_is_paged_with_fifty_a_page(http, zones):
    zone = zones["pro"]
    body = http.get(packages(zone)).json()
    assert body["success"] is True
    assert [p["id"] for p in body["result"]] == [CF, OWASP]
    assert body["result_info"] == {
        "page": 1,
        "per_page": 50,
        "count": 2,
        "total_count": 2,
        "total_pages": 1,
    }
    assert body["result"][1] == {
        "id": OWASP,
        "name": "OWASP ModSecurity Core Rule Set",
        "description": "",
        "zone_id": zone,
        "detection_mode": "anomaly",
        "status": "active",
        "sensitivity": "high",
        "action_mode": "challenge",
    }
    named = http.get(packages(zone), params={"name": "owasp"}).json()["result"]
    assert [p["id"] for p in named] == [OWASP]


def test_sdk_reads_packages_groups_and_rules(sdk, zones):
    zone = zones["business"]
    # The SDK types listed packages as plain objects (dicts).
    assert [p["id"] for p in sdk.firewall.waf.packages.list(zone_id=zone)] == [CF, OWASP]
    groups = list(sdk.firewall.waf.packages.groups.list(package_id=CF, zone_id=zone))
    assert [(g.id, g.mode, g.rules_count) for g in groups] == [
        (SPECIALS, "on", 2),
        (WORDPRESS, "off", 1),
    ]
    rules = list(sdk.firewall.waf.packages.rules.list(package_id=CF, zone_id=zone))
    assert [r.id for r in rules] == ["100015", "100016", "WP0025B"]
    edited = sdk.firewall.waf.packages.rules.edit(
        "100015", zone_id=zone, package_id=CF, mode="simulate"
    )
    assert edited.mode == "simulate"
    group = sdk.firewall.waf.packages.groups.edit(WORDPRESS, zone_id=zone, package_id=CF, mode="on")
    # The SDK types the edited group as a plain object.
    assert group["mode"] == "on" and group["id"] == WORDPRESS


def test_patch_the_anomaly_package_and_refuse_the_traditional_one(http, zones):
    zone = zones["pro"]
    done = http.patch(
        f"{packages(zone)}/{OWASP}", json={"sensitivity": "low", "action_mode": "block"}
    )
    assert done.status_code == 200
    assert (done.json()["result"]["sensitivity"], done.json()["result"]["action_mode"]) == (
        "low",
        "block",
    )
    assert http.get(f"{packages(zone)}/{OWASP}").json()["result"]["sensitivity"] == "low"
    refused = _error(http.patch(f"{packages(zone)}/{CF}", json={"sensitivity": "low"}), 400, 10605)
    assert "anomaly" in refused["message"]
    bad = _error(
        http.patch(f"{packages(zone)}/{OWASP}", json={"sensitivity": "extreme"}), 400, 10600
    )
    assert bad["source"] == {"pointer": "/sensitivity"} and "sensitivity" in bad["message"]
    assert http.get(f"{packages(zone)}/{OWASP}").json()["result"]["sensitivity"] == "low"


def test_groups_list_filter_get_and_patch(http, zones):
    zone = zones["enterprise"]
    off = http.get(f"{packages(zone)}/{CF}/groups", params={"mode": "off"}).json()["result"]
    assert [g["id"] for g in off] == [WORDPRESS]
    done = http.patch(f"{packages(zone)}/{CF}/groups/{WORDPRESS}", json={"mode": "on"})
    assert done.json()["result"]["mode"] == "on"
    assert http.get(f"{packages(zone)}/{CF}/groups/{WORDPRESS}").json()["result"] == {
        "id": WORDPRESS,
        "name": "Cloudflare WordPress",
        "description": "",
        "rules_count": 1,
        "modified_rules_count": 0,
        "package_id": CF,
        "mode": "on",
        "allowed_modes": ["on", "off"],
    }
    bad = _error(
        http.patch(f"{packages(zone)}/{CF}/groups/{WORDPRESS}", json={"mode": "block"}), 400, 10600
    )
    assert bad["source"] == {"pointer": "/mode"}
    _error(http.get(f"{packages(zone)}/{CF}/groups/{SQLI}"), 404, 10602)
    bad_query = _error(
        http.get(f"{packages(zone)}/{CF}/groups", params={"mode": "sideways"}), 400, 10600
    )
    assert bad_query["source"] == {"parameter": "mode"}


def test_rules_list_get_patch_and_allowed_modes(http, zones, wb):
    zone = zones["pro"]
    listed = http.get(
        f"{packages(zone)}/{CF}/rules",
        params={"group_id": SPECIALS, "per_page": 5, "order": "priority", "direction": "desc"},
    ).json()
    assert [r["id"] for r in listed["result"]] == ["100016", "100015"]
    assert listed["result_info"]["per_page"] == 5
    rule = http.get(f"{packages(zone)}/{CF}/rules/100015").json()["result"]
    assert rule == {
        "id": "100015",
        "description": "blocks /admin",
        "priority": "1",
        "group": {"id": SPECIALS, "name": "Cloudflare Specials"},
        "package_id": CF,
        "allowed_modes": ["default", "disable", "simulate", "block", "challenge"],
        "mode": "default",
        "default_mode": "block",
    }
    refused = _error(
        http.patch(f"{packages(zone)}/{CF}/rules/100015", json={"mode": "on"}), 400, 10600
    )
    assert refused["source"] == {"pointer": "/mode"} and "default, disable" in refused["message"]
    owasp = _error(
        http.patch(f"{packages(zone)}/{OWASP}/rules/950001", json={"mode": "block"}), 400, 10600
    )
    assert "on, off" in owasp["message"]
    done = http.patch(f"{packages(zone)}/{CF}/rules/100015", json={"mode": "challenge"})
    assert done.json()["result"]["mode"] == "challenge"
    # The mode filter reads the configured mode (100016 is still "default").
    challenged = http.get(f"{packages(zone)}/{CF}/rules", params={"mode": "CHL"}).json()["result"]
    assert [r["id"] for r in challenged] == ["100015"]
    # The engine runs what the API stored.
    verdict = wb.waf_legacy.evaluate(
        zone,
        {
            "http.request.uri.path": "/admin",
            "http.request.full_uri": "https://pro.example.com/admin",
        },
    )
    assert [(e.rule_id, e.action) for e in verdict.events] == [("100015", "challenge")]
    _error(http.get(f"{packages(zone)}/{CF}/rules/950001"), 404, 10603)
    _error(http.get(f"{packages(zone)}/{'f' * 32}/rules"), 404, 10601)


def test_overrides_create_list_get_replace_delete(http, zones):
    zone = zones["business"]
    body = {
        "urls": ["business.example.com/api/*"],
        "rules": {"100015": "disable"},
        "rewrite_action": {"challenge": "block"},
        "priority": 3,
        "description": "api",
    }
    made = http.post(overrides(zone), json=body).json()["result"]
    assert made == {**body, "id": made["id"], "groups": {}, "paused": False}
    listed = http.get(overrides(zone)).json()
    assert [o["id"] for o in listed["result"]] == [made["id"]] and listed["result_info"][
        "total_count"
    ] == 1
    path = f"{overrides(zone)}/{made['id']}"
    assert http.get(path).json()["result"] == made
    replaced = http.put(
        path,
        json={
            "id": made["id"],
            "urls": ["business.example.com/v2/*"],
            "rules": {"100016": "simulate"},
            "rewrite_action": {},
        },
    )
    assert replaced.json()["result"]["urls"] == ["business.example.com/v2/*"]
    assert replaced.json()["result"]["rules"] == {"100016": "simulate"}
    deleted = http.delete(path)
    assert deleted.status_code == 200 and deleted.json()["result"] == {"id": made["id"]}
    _error(http.get(path), 404, 10604)
    _error(http.delete(path), 404, 10604)


def test_bad_override_bodies_are_400_naming_the_field(http, zones):
    zone = zones["pro"]
    cases = [
        ({"urls": ["pro.example.com/*"]}, "/"),
        ({"rules": {"100015": "disable"}}, "/urls"),
        ({"urls": ["pro.example.com/*"], "rules": {"nope": "disable"}}, "/rules/nope"),
        ({"urls": ["pro.example.com/*"], "groups": {SPECIALS: "fly"}}, f"/groups/{SPECIALS}"),
    ]
    for body, pointer in cases:
        error = _error(http.post(overrides(zone), json=body), 400, 10600)
        assert error["source"] == {"pointer": pointer}
    assert http.get(overrides(zone)).json()["result"] == []
    _error(
        http.post(overrides(zone), content=b"{", headers={"Content-Type": "application/json"}),
        400,
        6007,
    )


def test_the_waf_setting(http, sdk, zones, wb):
    zone = zones["pro"]
    setting = http.get(f"/zones/{zone}/settings/waf").json()["result"]
    assert setting == {"id": "waf", "value": "on", "editable": True, "modified_on": None}
    wb.advance(minutes=5)
    done = http.patch(f"/zones/{zone}/settings/waf", json={"value": "off"}).json()["result"]
    assert done == {
        "id": "waf",
        "value": "off",
        "editable": True,
        "modified_on": "2026-01-01T00:05:00Z",
    }
    assert wb.waf_legacy.enabled(zone) is False
    bad = _error(http.patch(f"/zones/{zone}/settings/waf", json={"value": "maybe"}), 400, 10600)
    assert bad["source"] == {"pointer": "/value"}
    free = zones["free"]
    assert http.get(f"/zones/{free}/settings/waf").json()["result"]["value"] == "off"
    _error(http.patch(f"/zones/{free}/settings/waf", json={"value": "on"}), 400, 10606)
    got = sdk.zones.settings.get("waf", zone_id=zone)
    assert got is not None and got.value == "off"


def test_a_migrated_zone_answers_10607_everywhere(http, zones, wb):
    zone = zones["enterprise"]
    wb.waf_legacy.disable_for_good(zone)
    for method, path, body in [
        ("GET", packages(zone), None),
        ("PATCH", f"{packages(zone)}/{OWASP}", {"sensitivity": "low"}),
        ("GET", f"{packages(zone)}/{CF}/groups", None),
        ("PATCH", f"{packages(zone)}/{CF}/rules/100015", {"mode": "block"}),
        ("GET", overrides(zone), None),
        ("POST", overrides(zone), {"urls": ["a*"], "rules": {"100015": "disable"}}),
        ("GET", f"/zones/{zone}/settings/waf", None),
    ]:
        error = _error(http.request(method, path, json=body), 400, 10607)
        assert "Rulesets API" in error["message"]
    # Other zones keep the old WAF.
    assert http.get(packages(zones["pro"])).status_code == 200


def test_unknown_zone_and_wrong_credentials(http, zones, wb):
    _error(http.get(packages("0" * 32)), 404, 7003)
    token = wb.create_token(zone_ids=[zones["pro"]])
    denied = http.get(
        packages(zones["business"]),
        headers={"Authorization": f"Bearer {token.value}", "X-Auth-Key": "", "X-Auth-Email": ""},
    )
    assert denied.status_code in (400, 403)


def test_sdk_errors_raise(sdk, zones):
    with pytest.raises(cloudflare.NotFoundError):
        sdk.firewall.waf.packages.get("f" * 32, zone_id=zones["pro"])
    with pytest.raises(cloudflare.BadRequestError):
        sdk.firewall.waf.packages.rules.edit(
            "100015", zone_id=zones["pro"], package_id=CF, mode="on"
        )
