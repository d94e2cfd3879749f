"""Fuzzing the API from its own OpenAPI description: never a 5xx, never a traceback.

schemathesis generates requests for every operation; most are aimed at real
zones, filters and rules of a demo account so that they reach the core rather
than stopping at a 404. A second, schema-free test throws arbitrary bytes,
content types and paths at the app.
"""

import warnings
import zlib

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

with warnings.catch_warnings():  # starlette prefers httpx2; httpx is what we have
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from workbench.api import create_app, demo_workbench

wb = demo_workbench(seed=0)
app = create_app(wb)
AUTH = {"X-Auth-Email": wb.account.email, "X-Auth-Key": wb.account.api_key}
ZONES = [z.id for z in wb.zones]
for zone in ZONES:
    wb.firewall.create_rules(
        zone, [{"filter": {"expression": f'http.host eq "{zone[:6]}.example"'}, "action": "block"}]
    )
    wb.firewall.page_rules.create(
        zone,
        {
            "targets": [{"target": "url", "constraint": {"operator": "matches", "value": "*/x*"}}],
            "actions": [{"id": "waf", "value": "off"}],
        },
    )

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

schema = schemathesis.openapi.from_asgi("/client/v4/openapi.json", app)
FUZZ = settings(
    max_examples=90,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def _known(zone, kind):
    fw = wb.firewall
    if kind == "filter_id":
        return [f.id for f in fw.list_filters(zone, per_page=100).items]
    if kind == "rule_id":
        return [r.id for r in fw.list_rules(zone, per_page=100).items] + [
            p.id for p in fw.page_rules.list(zone)
        ]
    return []


def _aim(case):
    """Point three requests in four at existing objects (deterministically)."""
    params = case.path_parameters or {}
    if "zone_id" not in params:
        return
    roll = zlib.crc32(repr(sorted(params.items())).encode())
    if roll % 4:
        params["zone_id"] = ZONES[roll % len(ZONES)]
        for kind in ("filter_id", "rule_id"):
            known = _known(params["zone_id"], kind)
            if kind in params and known and roll % 3:
                params[kind] = known[roll % len(known)]


SEEN = {"requests": 0, "statuses": {}}


def check(response):
    SEEN["requests"] += 1
    SEEN["statuses"][response.status_code] = SEEN["statuses"].get(response.status_code, 0) + 1
    assert response.status_code < 500, response.text
    assert "Traceback" not in response.text
    body = response.json()
    assert body["success"] is (response.status_code < 400)
    if not body["success"]:
        assert body["errors"] and all({"code", "message"} <= set(e) for e in body["errors"])


@schema.parametrize()
@FUZZ
def test_generated_requests(case):
    _aim(case)
    check(case.call(headers=AUTH))


client = TestClient(app, raise_server_exceptions=True)
PATHS = [
    "/zones",
    "/zones/{z}",
    "/zones/{z}/filters",
    "/zones/{z}/firewall/rules",
    "/zones/{z}/pagerules",
    "/filters/validate-expr",
]


@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    path=st.sampled_from(PATHS),
    body=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)),
    ctype=st.sampled_from(
        ["application/json", "text/plain", "", "application/json; charset=utf-8"]
    ),
    query=st.dictionaries(
        st.sampled_from(["page", "per_page", "paused", "id", "order"]),
        st.text(max_size=8),
        max_size=3,
    ),
)
@settings(
    max_examples=600,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_arbitrary_bytes(method, path, body, ctype, query):
    url = "/client/v4" + path.replace("{z}", ZONES[len(body) % 4])
    response = client.request(
        method, url, content=body, params=query, headers={**AUTH, "Content-Type": ctype}
    )
    check(response)


def test_fuzzing_covered_thousands_of_requests():
    # Runs after the two fuzz tests in this module (file order).
    print(SEEN)
    assert SEEN["requests"] >= 3000
    assert {200, 400, 404} <= set(SEEN["statuses"])
