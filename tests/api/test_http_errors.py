"""Raw HTTP: envelopes and statuses for malformed input, limits and routing."""

import http.client
import json
from urllib.parse import urlsplit

import httpx
import pytest

from workbench.api.request import MAX_BODY


def errors(r):
    body = r.json()
    assert body["success"] is False and body["result"] is None
    assert "Traceback" not in r.text
    return [e["code"] for e in body["errors"]]


def test_malformed_json_is_6007(http, zones):
    r = http.post(
        f"/zones/{zones['free']}/filters",
        content=b"[{",
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 400 and errors(r) == [6007]
    assert r.json()["errors"][0]["message"] == "Malformed JSON in request body"


@pytest.mark.parametrize("ctype", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_wrong_content_type_is_9207(http, zones, ctype):
    headers = {"Content-Type": ctype} if ctype else {}
    r = http.post(
        f"/zones/{zones['free']}/filters", content=b'[{"expression": "ssl"}]', headers=headers
    )
    assert r.status_code == 400 and errors(r) == [9207]
    assert r.json()["errors"][0]["message"] == "Content-type must be application/json."


def test_content_type_with_charset_is_fine(http, zones):
    r = http.post(
        f"/zones/{zones['free']}/filters",
        content=b'[{"expression": "ssl"}]',
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert r.status_code == 200 and r.json()["result"][0]["expression"] == "ssl"


def test_empty_bodied_delete_and_patch_with_json_type_are_fine(http, zones):
    zone = zones["free"]
    [rule] = http.post(
        f"/zones/{zone}/firewall/rules", json=[{"filter": {"expression": "ssl"}, "action": "block"}]
    ).json()["result"]
    r = http.patch(
        f"/zones/{zone}/firewall/rules/{rule['id']}",
        headers={"Content-Type": "application/json", "Content-Length": "0"},
    )
    assert r.status_code == 200 and r.json()["result"][0]["id"] == rule["id"]
    r = http.request(
        "DELETE",
        f"/zones/{zone}/firewall/rules/{rule['id']}",
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 200 and r.json()["result"]["id"] == rule["id"]
    r = http.request(
        "DELETE", f"/zones/{zone}/filters", headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 200 and r.json()["result"] == []  # no ids: nothing deleted
    assert len(http.get(f"/zones/{zone}/filters").json()["result"]) == 1


def test_body_over_the_limit_is_413(http, zones):
    big = json.dumps([{"expression": "ssl", "description": "x" * MAX_BODY}])
    r = http.post(
        f"/zones/{zones['free']}/filters", content=big, headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 413 and errors(r) == [9210]


def test_expression_over_4096_characters(http, zones):
    long = 'http.host eq "' + "a" * 4100 + '"'
    r = http.post(f"/zones/{zones['free']}/filters", json=[{"expression": long}])
    assert r.status_code == 400 and errors(r) == [10014]
    assert "limit is 4096" in r.json()["errors"][0]["message"]


def test_validation_errors_point_at_the_field(http, zones):
    r = http.post(
        f"/zones/{zones['free']}/firewall/rules",
        json=[{"filter": {"expression": "ssl"}, "action": "block", "priority": "x"}],
    )
    assert r.status_code == 400
    assert r.json()["errors"][0]["source"] == {"pointer": "/0/priority"}
    r = http.post(f"/zones/{zones['free']}/filters", json={"expression": "ssl"})
    assert r.status_code == 400 and "JSON array" in r.json()["errors"][0]["message"]


def test_unknown_route_and_wrong_method(http, zones):
    r = http.get("/nowhere")
    assert r.status_code == 400 and errors(r) == [7000]
    r = http.post(f"/zones/{zones['free']}/filters/{'0' * 32}", json={})
    assert r.status_code == 405 and errors(r) == [7001]


def test_page_past_the_end_is_empty_200(http, zones):
    r = http.get(f"/zones/{zones['free']}/firewall/rules", params={"page": 9, "per_page": 5})
    assert r.status_code == 200
    assert r.json()["result"] == []
    assert r.json()["result_info"] == {
        "page": 9,
        "per_page": 5,
        "count": 0,
        "total_count": 0,
        "total_pages": 0,
    }


@pytest.mark.parametrize(
    "params",
    [{"per_page": 4}, {"per_page": 101}, {"page": 0}, {"page": "two"}, {"paused": "maybe"}],
)
def test_bad_query_values(http, zones, params):
    r = http.get(f"/zones/{zones['free']}/filters", params=params)
    assert r.status_code == 400 and errors(r) == [10014]


def test_sdk_float_per_page_is_accepted(http, zones):
    assert (
        http.get(f"/zones/{zones['free']}/filters", params={"per_page": "5.0"}).status_code == 200
    )


def test_validate_expr(http):
    ok = http.get("/filters/validate-expr", params={"expression": "ssl"})
    assert ok.status_code == 200 and ok.json()["success"] is True
    bad = http.post("/filters/validate-expr", json={"expression": "http.host eq"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["message"].startswith(
        "Filter parsing error"
    )


def test_openapi_description(base_url):
    spec = httpx.get(f"{base_url}/openapi.json").json()
    paths = spec["paths"]
    assert set(paths["/client/v4/zones/{zone_id}/firewall/rules"]) == {
        "get",
        "post",
        "put",
        "patch",
        "delete",
    }
    assert set(paths["/client/v4/zones/{zone_id}/firewall/rules/{rule_id}"]) == {
        "get",
        "put",
        "patch",
        "delete",
    }
    assert set(paths["/client/v4/zones/{zone_id}/filters"]) == {"get", "post", "put", "delete"}
    assert set(paths["/client/v4/zones/{zone_id}/filters/{filter_id}"]) == {"get", "put", "delete"}
    assert set(paths["/client/v4/zones/{zone_id}/pagerules/{rule_id}"]) == {
        "get",
        "put",
        "patch",
        "delete",
    }
    assert "post" in paths["/client/v4/zones"]


def test_rule_put_never_changes_the_filter(http, zones):
    zone = zones["free"]
    [rule] = http.post(
        f"/zones/{zone}/firewall/rules", json=[{"filter": {"expression": "ssl"}, "action": "block"}]
    ).json()["result"]
    body = {
        "id": rule["id"],
        "action": "allow",
        "filter": {"id": rule["filter"]["id"], "expression": 'http.host eq "x"'},
    }
    r = http.put(f"/zones/{zone}/firewall/rules/{rule['id']}", json=body)
    assert r.status_code == 200 and r.json()["result"]["filter"]["expression"] == "ssl"
    r = http.put(
        f"/zones/{zone}/firewall/rules", json=[{"id": rule["id"], "filter": {"expression": "ssl"}}]
    )
    assert r.status_code == 400
    r = http.delete(f"/zones/{zone}/firewall/rules", params={"id": rule["id"]})
    assert r.json()["result"] == [{"id": rule["id"]}]
    assert http.get(f"/zones/{zone}/filters/{rule['filter']['id']}").status_code == 200


@pytest.mark.parametrize("method", ["OPTIONS", "HEAD", "TRACE"])
def test_other_methods_get_an_envelope_or_nothing(http, zones, method):
    r = http.request(method, f"/zones/{zones['free']}/filters")
    assert r.status_code < 500
    if method != "HEAD":
        assert r.json()["success"] is False


def raw_get(base_url, path, headers):
    """GET ``path`` exactly as written (httpx would normalise dot segments first)."""
    url = urlsplit(base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    "path",
    [
        "/zones/%2F",
        "/zones/",
        "/zones/{z}/",
        "/zones/{z}/filters/",
        "//zones",
        "/zones//{z}",
        "/zones/{z}/./filters",
        "/zones/{z}/../{z}",
        "/./zones",
        "/zones/%2e%2E",
        "/zones/{z}%2Ffilters",
        "/zones/{z}/filters/%2f",
        "/zones/{z}/firewall//rules",
        "/",
    ],
)
def test_odd_paths_get_the_no_route_envelope_never_a_redirect(wb, base_url, zones, path):
    headers = {"X-Auth-Email": wb.account.email, "X-Auth-Key": wb.account.api_key}
    prefix = urlsplit(base_url).path
    status, got, body = raw_get(base_url, prefix + path.format(z=zones["free"]), headers)
    assert status == 400 and "location" not in {k.lower() for k in got}
    assert json.loads(body) == {
        "success": False,
        "errors": [{"code": 7000, "message": "No route for that URI"}],
        "messages": [],
        "result": None,
    }


@pytest.mark.parametrize(
    "path, status, code",
    [
        ("/zones/" + "a" * 4000, 404, 7003),
        ("/zones/not-hex", 404, 7003),
        ("/zones/{z}/filters/" + "f" * 4000, 404, 10101),
        ("/zones/{z}/filters/xyz", 404, 10101),
        ("/zones/{z}/firewall/rules/%00", 404, 10301),
        ("/zones/{z}/pagerules/" + "\u202e".encode().hex(), 404, 10401),
    ],
)
def test_long_and_non_hex_ids_get_an_envelope(wb, base_url, zones, path, status, code):
    headers = {"X-Auth-Email": wb.account.email, "X-Auth-Key": wb.account.api_key}
    prefix = urlsplit(base_url).path
    got_status, _, body = raw_get(base_url, prefix + path.format(z=zones["free"]), headers)
    assert got_status == status
    envelope = json.loads(body)
    assert envelope["success"] is False and envelope["errors"][0]["code"] == code


NOT_ASCII_DIGITS = ["1_000", "５", "١", "٥", " 5", "+5", "5 ", "0x10", "1e1", "5.5", "5\n"]


@pytest.mark.parametrize("path", ["/zones", "/zones/{z}/filters", "/zones/{z}/firewall/rules"])
def test_paging_takes_ascii_digits_only(http, zones, path):
    for name in ("page", "per_page"):
        for value in NOT_ASCII_DIGITS:
            r = http.get(path.format(z=zones["free"]), params={name: value})
            assert r.status_code == 400 and errors(r) == [10014], (name, value)
            message = r.json()["errors"][0]["message"]
            assert message == f"{name} must be a whole number, got {value!r}"


def test_a_raw_plus_in_the_query_is_a_space_and_refused(http, zones):
    r = http.get(f"/zones/{zones['free']}/filters?per_page=+5")
    assert r.status_code == 400
    assert r.json()["errors"][0]["message"] == "per_page must be a whole number, got ' 5'"


@pytest.mark.parametrize("path", ["/zones", "/zones/{z}/filters", "/zones/{z}/firewall/rules"])
def test_sdk_floats_stay_accepted(http, zones, path):
    r = http.get(path.format(z=zones["free"]), params={"page": "2.0", "per_page": "5.0"})
    assert r.status_code == 200
    assert {k: r.json()["result_info"][k] for k in ("page", "per_page")} == {
        "page": 2,
        "per_page": 5,
    }
