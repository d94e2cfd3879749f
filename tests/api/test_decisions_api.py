"""HTTP-face choices recorded in docs/decisions.md, seen as a v4 client sees them.

Each test calls the Workbench's app in process through ``ApiClient`` (no socket).
"""

import pytest

from workbench import Workbench
from workbench.api import ApiClient, demo_workbench


@pytest.fixture
def wb():
    return Workbench(seed=0)


def refused(exchange, status, code):
    """The v4 error envelope: ``success`` false, no result, ``errors[0]`` with ``code``."""
    assert exchange.status == status, exchange.response
    assert exchange.response["success"] is False
    assert exchange.response["result"] is None
    error = exchange.response["errors"][0]
    assert error["code"] == code and error["message"]
    return error


def page_rule(pattern):
    return {
        "targets": [{"target": "url", "constraint": {"operator": "matches", "value": pattern}}],
        "actions": [{"id": "waf", "value": "off"}],
    }


def test_unknown_page_rule_is_404_10401(wb):
    zone = wb.create_zone("example.com", plan="pro").id
    api = ApiClient(wb)
    for method, body in (("GET", None), ("PATCH", {"status": "active"}), ("DELETE", None)):
        error = refused(api.call(method, f"/zones/{zone}/pagerules/{'0' * 32}", body), 404, 10401)
        assert "0" * 32 in error["message"] and "does not exist" in error["message"]


def test_page_rule_over_the_plan_quota_is_400_10400(wb):
    zone = wb.create_zone("example.com", plan="free").id
    api = ApiClient(wb)
    for i in range(3):
        assert api.call("POST", f"/zones/{zone}/pagerules", page_rule(f"example.com/{i}*")).success
    error = refused(
        api.call("POST", f"/zones/{zone}/pagerules", page_rule("example.com/x*")), 400, 10400
    )
    assert "free plan allows 3 page rules" in error["message"]
    listed = api.call("GET", f"/zones/{zone}/pagerules")
    assert len(listed.response["result"]) == 3


def test_email_is_compared_case_insensitively(wb):
    zone = wb.create_zone("example.com").id
    shouted = ApiClient(wb, email=wb.account.email.upper())
    assert shouted.call("GET", f"/zones/{zone}/filters").status == 200
    mixed = ApiClient(wb, email="User@Example.Com")
    assert mixed.call("GET", "/zones").response["result"][0]["id"] == zone
    # The key is not: a key in capitals is another key.
    wrong = ApiClient(wb, key=wb.account.api_key.upper())
    refused(wrong.call("GET", f"/zones/{zone}/filters"), 403, 9103)


def test_a_command_line_email_is_compared_case_insensitively_too():
    # What `workbench serve --email Admin@Example.ORG --key ...` builds.
    key = "0123456789abcdef0123456789abcdef01234"
    served = demo_workbench(email="Admin@Example.ORG", key=key)
    for email in ("admin@example.org", "ADMIN@EXAMPLE.ORG", "Admin@Example.ORG"):
        listed = ApiClient(served, email=email, key=key).call("GET", "/zones")
        assert listed.status == 200 and len(listed.response["result"]) == 4
    refused(ApiClient(served, email="admin@example.com", key=key).call("GET", "/zones"), 403, 9103)


def test_zones_list_pages_by_20_up_to_50(wb):
    for i in range(55):
        wb.create_zone(f"z{i:02}.example")
    api = ApiClient(wb)
    first = api.call("GET", "/zones").response
    assert len(first["result"]) == 20
    assert first["result_info"] == {
        "page": 1,
        "per_page": 20,
        "count": 20,
        "total_count": 55,
        "total_pages": 3,
    }
    assert len(api.call("GET", "/zones?per_page=50").response["result"]) == 50
    last = api.call("GET", "/zones?per_page=50&page=2").response
    assert [z["name"] for z in last["result"]] == [f"z{i}.example" for i in range(50, 55)]
    for bad in ("51", "4"):
        error = refused(api.call("GET", f"/zones?per_page={bad}"), 400, 10014)
        assert "per_page" in error["message"] and "50" in error["message"]
