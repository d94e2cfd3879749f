"""Authentication failures, token scopes, zones and page rules through the SDK."""

import cloudflare
import httpx
import pytest


def client(base_url, **creds):
    return cloudflare.Cloudflare(base_url=base_url, max_retries=0, **creds)


def test_no_credentials_is_400_9106(base_url, zones):
    # The SDK refuses to send without credentials, so this one is raw HTTP.
    r = httpx.get(f"{base_url}/zones/{zones['free']}/filters")
    assert r.status_code == 400
    assert r.json() == {
        "success": False,
        "errors": [
            {"code": 9106, "message": "Missing X-Auth-Key, X-Auth-Email or Authorization headers"}
        ],
        "messages": [],
        "result": None,
    }


@pytest.mark.parametrize(
    "creds, chain",
    [
        ({"api_email": "user@example.com", "api_key": "short"}, 6103),
        ({"api_email": "not-an-email", "api_key": "a" * 37}, 6102),
        ({"api_token": "too short"}, 6111),
    ],
)
def test_malformed_credentials_are_400_6003(base_url, zones, creds, chain):
    with pytest.raises(cloudflare.BadRequestError) as info:
        client(base_url, **creds).filters.list(zone_id=zones["free"])
    [error] = info.value.body["errors"]
    assert error["code"] == 6003 and error["message"] == "Invalid request headers"
    assert error["error_chain"][0]["code"] == chain


def test_wrong_key_is_403_9103(wb, base_url, zones):
    with pytest.raises(cloudflare.PermissionDeniedError) as info:
        client(base_url, api_email=wb.account.email, api_key="b" * 37).filters.list(
            zone_id=zones["free"]
        )
    assert info.value.body["errors"] == [
        {"code": 9103, "message": "Unknown X-Auth-Key or X-Auth-Email"}
    ]


def test_unknown_token_is_403_10000(base_url, zones):
    with pytest.raises(cloudflare.PermissionDeniedError) as info:
        client(base_url, api_token="x" * 40).firewall.rules.list(zone_id=zones["free"])
    assert info.value.body["errors"] == [{"code": 10000, "message": "Authentication error"}]


def test_token_scoped_to_one_zone_gets_nothing_from_another(wb, base_url, zones):
    token = wb.create_token([zones["pro"]])
    scoped = client(base_url, api_token=token.value)
    [flt] = scoped.filters.create(zone_id=zones["pro"], body=[{"expression": "ssl"}])
    assert flt.expression == "ssl"
    for call in (
        lambda: scoped.filters.list(zone_id=zones["free"]),
        lambda: scoped.filters.get(flt.id, zone_id=zones["free"]),
        lambda: scoped.zones.get(zone_id=zones["free"]),
        lambda: scoped.page_rules.list(zone_id=zones["free"]),
    ):
        with pytest.raises(cloudflare.PermissionDeniedError):
            call()
    assert [z.id for z in scoped.zones.list()] == [zones["pro"]]
    # The account-wide token sees every zone.
    assert len(list(client(base_url, api_token=wb.account.tokens[0].value).zones.list())) == 4


def test_unknown_zone_and_unknown_ids(sdk, zones):
    with pytest.raises(cloudflare.NotFoundError) as info:
        sdk.filters.list(zone_id="0" * 32)
    assert [e["code"] for e in info.value.body["errors"]] == [7003, 7000]
    with pytest.raises(cloudflare.NotFoundError):
        sdk.firewall.rules.get("0" * 32, zone_id=zones["free"])
    with pytest.raises(cloudflare.NotFoundError):
        sdk.page_rules.get("0" * 32, zone_id=zones["free"])


def test_zones_list_get_create(wb, sdk, base_url):
    assert [z.name for z in sdk.zones.list()] == [
        "free.example.com",
        "pro.example.com",
        "business.example.com",
        "enterprise.example.com",
    ]
    created = sdk.zones.create(
        account={"id": wb.account.id}, name="new.example", extra_body={"plan": {"legacy_id": "pro"}}
    )
    assert created.name == "new.example" and created.plan.legacy_id == "pro"
    assert sdk.zones.get(zone_id=created.id).id == created.id
    assert [z.id for z in sdk.zones.list(name="new.example")] == [created.id]
    with pytest.raises(cloudflare.BadRequestError):
        sdk.zones.create(account={"id": wb.account.id}, name="new.example")
    with pytest.raises(cloudflare.BadRequestError):
        sdk.zones.create(
            account={"id": wb.account.id},
            name="bad.example",
            extra_body={"plan": {"legacy_id": "gold"}},
        )
    scoped = cloudflare.Cloudflare(
        base_url=base_url, api_token=wb.create_token([created.id]).value, max_retries=0
    )
    with pytest.raises(cloudflare.PermissionDeniedError):
        scoped.zones.create(account={"id": wb.account.id}, name="other.example")


def test_page_rules_with_security_actions(sdk, zones):
    zone = zones["pro"]
    target = [
        {
            "target": "url",
            "constraint": {"operator": "matches", "value": "*pro.example.com/admin/*"},
        }
    ]
    rule = sdk.page_rules.create(
        zone_id=zone,
        targets=target,
        actions=[{"id": "waf", "value": "off"}, {"id": "security_level", "value": "high"}],
        status="active",
    )
    assert rule.status == "active" and rule.priority == 1
    other = sdk.page_rules.create(
        zone_id=zone, targets=target, actions=[{"id": "disable_security"}], priority=3
    )
    assert [r.id for r in sdk.page_rules.list(zone_id=zone)] == [other.id, rule.id]
    assert [r.id for r in sdk.page_rules.list(zone_id=zone, status="active")] == [rule.id]
    edited = sdk.page_rules.edit(rule.id, zone_id=zone, status="disabled")
    assert edited.status == "disabled" and len(edited.actions) == 2
    replaced = sdk.page_rules.update(
        other.id, zone_id=zone, targets=target, actions=[{"id": "browser_check", "value": "on"}]
    )
    assert replaced.actions[0].id == "browser_check"
    assert sdk.page_rules.get(other.id, zone_id=zone).priority == 3
    assert sdk.page_rules.delete(rule.id, zone_id=zone).id == rule.id
    with pytest.raises(cloudflare.BadRequestError) as info:
        sdk.page_rules.create(
            zone_id=zone, targets=target, actions=[{"id": "waf", "value": "maybe"}]
        )
    assert info.value.body["errors"][0]["source"] == {"pointer": "/actions/0/value"}
