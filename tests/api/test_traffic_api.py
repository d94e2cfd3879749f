"""The traffic extensions over HTTP: POST .../workbench/requests and GET .../workbench/events.

A real uvicorn server per test (tests/api/conftest.py). Requests run through the
zone's systems (firewall rules, then the new and the old WAF as the zone is set
up); every event carries the events table's names and the analytics API's.
"""

from __future__ import annotations

import httpx
import pytest

from workbench.logs import ALIASES
from workbench.rulesets import CLOUDFLARE_MANAGED_ID, MANAGED_PHASE

TABLE_NAMES = (
    "ray_id",
    "datetime",
    "action",
    "source",
    "rule_id",
    "ruleset_id",
    "client_ip",
    "country",
    "host",
    "path",
    "query",
    "method",
    "user_agent",
    "kind",
    "match_index",
    "description",
    "score",
    "metadata",
)
SQLI = {
    "method": "GET",
    "url": "https://enterprise.example.com/products?id=1%20UNION%20SELECT%20username,password"
    "%20FROM%20users--",
    "headers": {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64)"},
    "client_ip": "198.51.100.7",
    "country": "DE",
}
PLAIN = {
    "method": "GET",
    "url": "https://enterprise.example.com/about",
    "headers": {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64)"},
    "client_ip": "203.0.113.5",
    "country": "FR",
}


# -- helpers: one call each -----------------------------------------------------------
def ok(response: httpx.Response) -> dict:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["success"] is True and body["errors"] == []
    return body


def submit(http, zone, items) -> list[dict]:
    return ok(http.post(f"/zones/{zone}/workbench/requests", json=items))["result"]


def events(http, zone, **params) -> dict:
    return ok(http.get(f"/zones/{zone}/workbench/events", params=params))


def refused(response: httpx.Response, status: int, *words: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["success"] is False and body["result"] is None
    message = body["errors"][0]["message"]
    for word in words:
        assert word in message, (word, message)
    return message


def block_rule(http, zone, path="/admin", action="block"):
    rule = {"filter": {"expression": f'http.request.uri.path eq "{path}"'}, "action": action}
    return ok(http.post(f"/zones/{zone}/firewall/rules", json=[rule]))["result"][0]


def validation_mode(http, zone, new_only_logs=False):
    """Put the Enterprise zone in validation mode (both WAFs on), over the API."""
    ok(http.put("/workbench/clock", json={"now": "2026-01-01T00:00:00Z"}))
    body = ok(http.get(f"/zones/{zone}/waf_migration/config", params={"phase_two": 1}))["result"]
    if new_only_logs:
        # The Cloudflare Managed Ruleset alone, every rule logging: the new WAF ends nothing.
        body["rules"] = [
            r for r in body["rules"] if r["action_parameters"]["id"] == CLOUDFLARE_MANAGED_ID
        ]
        body["rules"][0]["action_parameters"]["overrides"] = {"action": "log"}
    url = f"/zones/{zone}/rulesets/phases/{MANAGED_PHASE}/entrypoint"
    ok(http.put(url, params={"waf_migration": "validation", "phase_two": 1}, json=body))
    status = ok(http.get(f"/zones/{zone}/waf_migration/status"))["result"]
    assert status["migration_state"] == "validation"


def sources(result: dict) -> list[str]:
    return [e["source"] for e in result["events"]]


# -- the requests endpoint ----------------------------------------------------------------
def test_each_request_answers_ray_id_action_and_events_with_both_name_sets(http, zones):
    zone = zones["free"]
    rule = block_rule(http, zone)
    blocked, passed = submit(
        http,
        zone,
        [
            {
                "method": "POST",
                "url": "https://free.example.com/admin?x=1",
                "headers": {"User-Agent": "curl/8.7.1", "X-Many": ["a", "b"]},
                "client_ip": "192.0.2.1",
                "country": "gb",
                "body": "a=b",
            },
            {"url": "/"},  # defaults: GET, no headers
        ],
    )
    assert set(blocked) == {"ray_id", "datetime", "action", "events"}
    assert blocked["action"] == "block" and len(blocked["ray_id"]) == 16
    [event] = blocked["events"]
    for name in TABLE_NAMES:
        assert name in event, name
    for alias, column in ALIASES.items():
        assert event[alias] == event[column], alias
    assert {k: event[k] for k in ("source", "action", "rule_id", "ruleset_id", "kind")} == {
        "source": "firewallRules",
        "action": "block",
        "rule_id": rule["id"],
        "ruleset_id": None,
        "kind": "firewall",
    }
    assert (event["rayName"], event["clientIP"], event["clientCountryName"]) == (
        blocked["ray_id"],
        "192.0.2.1",
        "GB",
    )
    assert (event["clientRequestHTTPHost"], event["clientRequestPath"]) == (
        "free.example.com",
        "/admin",
    )
    assert (event["clientRequestQuery"], event["clientRequestHTTPMethodName"]) == ("x=1", "POST")
    assert (event["userAgent"], event["matchIndex"], event["datetime"]) == (
        "curl/8.7.1",
        0,
        blocked["datetime"],
    )
    # Nothing ended the second request: its action is "allow".
    assert passed == {
        "ray_id": passed["ray_id"],
        "datetime": passed["datetime"],
        "action": "allow",
        "events": [],
    }
    assert passed["ray_id"] != blocked["ray_id"]


def test_the_answer_and_the_events_list_give_the_same_events(http, zones):
    zone = zones["enterprise"]
    validation_mode(http, zone, new_only_logs=True)
    [done] = submit(http, zone, [SQLI])
    listed = events(http, zone, ray=done["ray_id"], order="datetime_ASC")["result"]
    # The list orders a ray's events as the request met them (the same time for all).
    assert listed == done["events"]


def test_validation_mode_runs_the_new_waf_first_then_the_old_on_the_same_ray(http, zones):
    zone = zones["enterprise"]
    validation_mode(http, zone, new_only_logs=True)
    [done] = submit(http, zone, [SQLI])
    seen = sources(done)
    assert seen[0] == "firewallManaged" and "waf" in seen
    first_old = seen.index("waf")
    assert set(seen[:first_old]) == {"firewallManaged"} and set(seen[first_old:]) == {"waf"}
    assert {e["ray_id"] for e in done["events"]} == {done["ray_id"]}
    new = [e for e in done["events"] if e["source"] == "firewallManaged"]
    assert {e["action"] for e in new} == {"log"}
    assert {e["ruleset_id"] for e in new} == {CLOUDFLARE_MANAGED_ID}
    old = [e for e in done["events"] if e["source"] == "waf"]
    assert {e["ruleset_id"] for e in old} == {None}
    # match_index counts back from the request's last event (0).
    assert [e["match_index"] for e in done["events"]] == list(range(len(seen)))[::-1]
    assert done["action"] in ("block", "challenge", "managed_challenge", "js_challenge")


def test_validation_mode_the_old_waf_never_sees_what_the_new_one_ended(http, zones):
    zone = zones["enterprise"]
    ok(http.put("/workbench/clock", json={"now": "2026-01-01T00:00:00Z"}))
    # Before the migration only the old WAF runs, and it acts on this request.
    [before] = submit(http, zone, [SQLI])
    assert "waf" in sources(before) and "firewallManaged" not in sources(before)
    validation_mode(http, zone)
    [during] = submit(http, zone, [SQLI])
    assert during["action"] == "block"
    assert set(sources(during)) == {"firewallManaged"}
    assert during["events"][-1]["action"] == "block"
    assert not events(http, zone, ray=during["ray_id"], source="waf")["result"]


def test_requests_are_dated_by_the_virtual_clock(http, zones):
    zone = zones["pro"]
    block_rule(http, zone)
    ok(http.put("/workbench/clock", json={"now": "2026-03-01T12:00:00Z"}))
    [first] = submit(http, zone, [{"url": "https://pro.example.com/admin"}])
    ok(http.put("/workbench/clock", json={"advance_seconds": 3600}))
    [second] = submit(http, zone, [{"url": "https://pro.example.com/admin"}])
    assert (first["datetime"], second["datetime"]) == (
        "2026-03-01T12:00:00Z",
        "2026-03-01T13:00:00Z",
    )
    assert first["events"][0]["datetime"] == first["datetime"]
    now = ok(http.get("/workbench/clock"))["result"]["now"]
    assert now >= second["datetime"]  # the clock moved on with the requests


def test_an_empty_array_runs_nothing(http, zones):
    assert submit(http, zones["free"], []) == []
    assert events(http, zones["free"])["result_info"]["total_count"] == 0


# -- bad bodies ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"url": "/"}, ["the body must be a JSON array of requests, got object"]),
        ([{"url": "/"}, "GET /"], ["requests[1] must be an object, got text"]),
        ([{"method": "GET"}], ["requests[0].url is required"]),
        ([{"url": 5}], ["requests[0].url must be text, got number"]),
        ([{"url": "example.com/x"}], ["requests[0].url must be an absolute http(s) URL"]),
        ([{"url": "/", "method": "GE T"}], ["requests[0].method must be an HTTP method"]),
        ([{"url": "/", "headers": ["a"]}], ["requests[0].headers must be an object"]),
        ([{"url": "/", "headers": {"a": 1}}], ["requests[0].headers value of 'a'"]),
        ([{"url": "/", "client_ip": "1.2.3"}], ["requests[0].client_ip must be an IPv4 or IPv6"]),
        ([{"url": "/", "country": "France"}], ["requests[0].country must be a two-letter"]),
        ([{"url": "/", "body": {"a": 1}}], ["requests[0].body must be text, got object"]),
        ([{"url": "/", "asn": -1}], ["requests[0].asn must be a whole number"]),
        ([{"url": "/", "headrs": {}}], ["requests[0] has unknown field 'headrs'", "headers"]),
        ([{"url": "/"}] * 1001, ["at most 1,000 requests per call, got 1,001"]),
    ],
)
def test_a_bad_body_is_a_400_naming_the_item_and_field_and_runs_nothing(http, zones, body, words):
    zone = zones["free"]
    block_rule(http, zone, path="/")
    response = http.post(f"/zones/{zone}/workbench/requests", json=body)
    refused(response, 400, *words)
    assert response.json()["errors"][0]["code"] == 10014
    assert events(http, zone)["result_info"]["total_count"] == 0


def test_the_error_points_at_the_field(http, zones):
    response = http.post(
        f"/zones/{zones['free']}/workbench/requests",
        json=[{"url": "/"}, {"url": "/", "country": "France"}],
    )
    assert response.json()["errors"][0]["source"] == {"pointer": "/1/country"}


def test_malformed_json_and_wrong_content_type_are_refused(http, zones):
    url = f"/zones/{zones['free']}/workbench/requests"
    bad = http.post(url, content=b"[{", headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and bad.json()["success"] is False
    text = http.post(url, content=b"[]", headers={"Content-Type": "text/plain"})
    assert text.status_code == 400 and text.json()["success"] is False


# -- the events list -----------------------------------------------------------------------
@pytest.fixture
def logged(http, zones):
    """Twelve requests to the Pro zone, two rules, three minutes: (zone, results, rule ids)."""
    zone = zones["pro"]
    admin = block_rule(http, zone, "/admin")["id"]
    login = block_rule(http, zone, "/login", action="challenge")["id"]
    ok(http.put("/workbench/clock", json={"now": "2026-02-01T10:00:00Z"}))
    results = []
    for minute in range(3):
        items = [
            {"url": "https://pro.example.com/admin", "client_ip": "192.0.2.1", "country": "US"},
            {"url": "https://pro.example.com/admin?q=1", "client_ip": "192.0.2.2"},
            {"url": "https://pro.example.com/login", "client_ip": "192.0.2.3", "country": "FR"},
            {"url": "https://pro.example.com/", "client_ip": "192.0.2.4"},
        ]
        results += submit(http, zone, items)
        if minute < 2:
            ok(http.put("/workbench/clock", json={"advance_seconds": 60}))
    return zone, results, {"admin": admin, "login": login}


def test_pages_newest_first_by_default(http, logged):
    zone, results, _ = logged
    ended = [r for r in results if r["events"]]
    assert len(ended) == 9
    first = events(http, zone, per_page=5)
    assert first["result_info"] == {
        "page": 1,
        "per_page": 5,
        "count": 5,
        "total_count": 9,
        "total_pages": 2,
    }
    second = events(http, zone, per_page=5, page=2)
    assert second["result_info"]["count"] == 4
    listed = first["result"] + second["result"]
    times = [e["datetime"] for e in listed]
    assert times == sorted(times, reverse=True)
    assert {e["ray_id"] for e in listed} == {r["ray_id"] for r in ended}
    assert listed[0]["ray_id"] == ended[-1]["ray_id"]
    assert events(http, zone, per_page=5, page=3)["result"] == []
    oldest = events(http, zone, per_page=5, order="datetime_ASC")["result"]
    assert oldest[0]["ray_id"] == ended[0]["ray_id"]
    assert events(http, zone, per_page=5, direction="asc")["result"] == oldest


@pytest.mark.parametrize("name", ["rule", "rule_id", "ruleId"])
def test_filter_by_rule_under_each_name(http, logged, name):
    zone, _, rules = logged
    found = events(http, zone, **{name: rules["login"]})
    assert found["result_info"]["total_count"] == 3
    assert {(e["ruleId"], e["action"]) for e in found["result"]} == {(rules["login"], "challenge")}


@pytest.mark.parametrize("name", ["ray", "ray_id", "rayName"])
def test_filter_by_ray_under_each_name(http, logged, name):
    zone, results, _ = logged
    ray = results[5]["ray_id"]
    assert [e["rayName"] for e in events(http, zone, **{name: ray})["result"]] == [ray]


@pytest.mark.parametrize(
    ("params", "count"),
    [
        ({"source": "firewallRules"}, 9),
        ({"source": "waf"}, 0),
        ({"source_in": "waf,firewallRules"}, 9),
        ({"action": "block"}, 6),
        ({"action": "challenge"}, 3),
        ({"ruleset": "none"}, 0),
        ({"clientIP": "192.0.2.2"}, 3),
        ({"client_ip": "192.0.2.2"}, 3),
        ({"clientCountryName": "FR"}, 3),
        ({"country": "FR"}, 3),
        ({"clientRequestPath": "/admin"}, 6),
        ({"clientRequestQuery": "q=1"}, 3),
        ({"matchIndex": "0"}, 9),
        ({"kind": "firewall"}, 9),
        ({"since": "2026-02-01T10:01:00Z"}, 6),
        ({"datetime_geq": "2026-02-01T10:01:00Z"}, 6),
        ({"until": "2026-02-01T10:00:59Z"}, 3),
        ({"datetime_leq": "2026-02-01T10:00:59Z"}, 3),
        ({"since": "2026-02-01T10:01:00Z", "until": "2026-02-01T10:01:59Z"}, 3),
        ({"datetime_geq": "2026-02-01T11:01:00+01:00", "datetime_leq": "2026-02-01T10:01:59Z"}, 3),
        ({"action": "block", "clientIP": "192.0.2.1", "since": "2026-02-01T10:02:00Z"}, 1),
    ],
)
def test_each_filter_and_its_alias(http, logged, params, count):
    zone, _, _ = logged
    found = events(http, zone, per_page=50, **params)
    assert found["result_info"]["total_count"] == count
    assert len(found["result"]) == count


def test_filter_by_ruleset_under_each_name(http, zones):
    zone = zones["enterprise"]
    validation_mode(http, zone, new_only_logs=True)
    submit(http, zone, [SQLI, PLAIN])
    counts = {
        name: events(http, zone, **{name: CLOUDFLARE_MANAGED_ID})["result_info"]["total_count"]
        for name in ("ruleset", "ruleset_id", "rulesetId")
    }
    assert len(set(counts.values())) == 1 and counts["ruleset"] > 0
    managed = events(http, zone, ruleset=CLOUDFLARE_MANAGED_ID)["result"]
    assert {e["source"] for e in managed} == {"firewallManaged"}


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ({"since": "yesterday"}, ["since must be an ISO 8601 time"]),
        ({"datetime_leq": "2026-13-01"}, ["datetime_leq must be an ISO 8601 time"]),
        ({"matchIndex": "x"}, ["matchIndex must be a whole number"]),
        ({"colour": "red"}, ["unknown event field 'colour'"]),
        ({"zone_id": "x"}, ["the zone is the one in the path"]),
        ({"order": "newest"}, ["order must be one of datetime_DESC, datetime_ASC"]),
        ({"direction": "up"}, ["direction must be asc or desc"]),
        ({"per_page": "2"}, ["per_page must be between 5 and 1000"]),
        ({"page": "0"}, ["page must be 1 or more"]),
    ],
)
def test_bad_filters_are_400(http, zones, query, words):
    refused(http.get(f"/zones/{zones['pro']}/workbench/events", params=query), 400, *words)


def test_a_filter_given_twice_is_refused(http, zones):
    response = http.get(f"/zones/{zones['pro']}/workbench/events?source=waf&source=firewallRules")
    refused(response, 400, "source is given twice", "source_in")


# -- zones and credentials -----------------------------------------------------------------------
def test_each_zone_lists_its_own_events_only(http, zones):
    for plan in ("free", "pro"):
        block_rule(http, zones[plan])
    [free] = submit(http, zones["free"], [{"url": "https://free.example.com/admin"}])
    [pro] = submit(http, zones["pro"], [{"url": "https://pro.example.com/admin"}])
    assert [e["ray_id"] for e in events(http, zones["free"])["result"]] == [free["ray_id"]]
    assert [e["ray_id"] for e in events(http, zones["pro"])["result"]] == [pro["ray_id"]]
    assert events(http, zones["free"], ray=pro["ray_id"])["result"] == []


def test_a_zone_scoped_token_reaches_its_zone_only(wb, base_url, zones):
    token = wb.create_token([zones["pro"]])
    headers = {"Authorization": f"Bearer {token.value}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=10) as scoped:
        assert submit(scoped, zones["pro"], [{"url": "/"}])[0]["action"] == "allow"
        assert events(scoped, zones["pro"])["success"] is True
        for response in (
            scoped.post(f"/zones/{zones['free']}/workbench/requests", json=[{"url": "/"}]),
            scoped.get(f"/zones/{zones['free']}/workbench/events"),
        ):
            assert response.status_code == 403, response.text
            assert response.json()["success"] is False
    # Nothing ran in the other zone.
    with httpx.Client(base_url=base_url, timeout=10) as anonymous:
        response = anonymous.get(f"/zones/{zones['free']}/workbench/events")
        assert response.status_code == 400
        assert response.json()["errors"][0]["code"] == 9106


def test_an_unknown_zone_is_404(http):
    response = http.post(f"/zones/{'0' * 32}/workbench/requests", json=[{"url": "/"}])
    refused(response, 404, "Could not route")
    refused(http.get(f"/zones/{'0' * 32}/workbench/events"), 404, "Could not route")


def test_the_routes_are_described_apart_from_the_platform_paths(http):
    paths = ok_json(http.get("/openapi.json"))["paths"]
    assert "post" in paths["/client/v4/zones/{zone_id}/workbench/requests"]
    assert "get" in paths["/client/v4/zones/{zone_id}/workbench/events"]


def ok_json(response: httpx.Response) -> dict:
    assert response.status_code == 200, response.text
    return response.json()
