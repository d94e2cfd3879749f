"""A bug in a route: a 500 envelope, a logged traceback, and a connection that stays usable.

Starlette's error layer answers an unexpected exception and then re-raises it,
and uvicorn closes the connection after that: clients that reuse connections
(httpx, the official SDK) got "connection reset" on their next, valid request.
"""

import logging

import cloudflare
import httpx
import pytest

from workbench.api import create_app
from workbench.api.transport import InProcessTransport

INTERNAL = {
    "success": False,
    "errors": [{"code": 10500, "message": "internal error"}],
    "messages": [],
    "result": None,
}


@pytest.fixture
def broken_list(wb, monkeypatch):
    """Listing filters fails with a bug; everything else works."""

    def bug(*args, **kwargs):
        raise RuntimeError("a bug in list_filters")

    monkeypatch.setattr(wb.firewall, "list_filters", bug)


def local_port(response):
    """The client-side port of the connection that carried ``response``."""
    return response.extensions["network_stream"].get_extra_info("client_addr")[1]


def test_a_500_is_an_envelope_and_the_same_connection_serves_the_next_request(
    http, zones, broken_list, caplog
):
    zone = zones["free"]
    with caplog.at_level(logging.ERROR, logger="workbench.api"):
        failed = http.get(f"/zones/{zone}/filters")
    assert failed.status_code == 500
    assert failed.json() == INTERNAL
    assert "Traceback" not in failed.text and "a bug" not in failed.text
    assert failed.headers.get("connection") != "close"
    # The traceback is in the server's log instead.
    [record] = [r for r in caplog.records if r.name == "workbench.api"]
    assert record.exc_info[0] is RuntimeError
    assert f"GET /client/v4/zones/{zone}/filters" in record.getMessage()

    after = http.get(f"/zones/{zone}/firewall/rules")
    assert after.status_code == 200 and after.json()["success"] is True
    assert local_port(after) == local_port(failed)  # no reconnect: the same connection
    again = http.post(f"/zones/{zone}/filters", json=[{"expression": "ssl"}])
    assert again.status_code == 200 and local_port(again) == local_port(failed)


def test_the_sdk_gets_internal_server_error_then_carries_on(sdk, zones, broken_list):
    zone = zones["pro"]
    with pytest.raises(cloudflare.InternalServerError) as info:
        sdk.filters.list(zone_id=zone)
    assert info.value.status_code == 500 and info.value.body == INTERNAL
    # max_retries=0: a reset connection would raise APIConnectionError here.
    assert list(sdk.firewall.rules.list(zone_id=zone)) == []
    [made] = sdk.filters.create(zone_id=zone, body=[{"expression": "ssl"}])
    assert made.expression == "ssl"


def test_a_bug_while_rendering_is_caught_too(http, wb, zones, monkeypatch):
    # Not only a bug in the core: a result that cannot be rendered is a 500 envelope as well.
    zone = zones["free"]
    [flt] = wb.firewall.create_filters(zone, [{"expression": "ssl"}])
    monkeypatch.setattr(type(flt), "to_dict", lambda self: {"id": object()})
    failed = http.get(f"/zones/{zone}/filters/{flt.id}")
    assert failed.status_code == 500 and failed.json() == INTERNAL
    monkeypatch.undo()
    ok = http.get(f"/zones/{zone}/filters/{flt.id}")
    assert ok.status_code == 200 and local_port(ok) == local_port(failed)


def test_in_process_transport_gets_the_same_envelope(wb, zones, broken_list):
    headers = {"X-Auth-Email": wb.account.email, "X-Auth-Key": wb.account.api_key}
    with httpx.Client(
        transport=InProcessTransport(create_app(wb)),
        base_url="http://workbench.internal/client/v4",
        headers=headers,
    ) as client:
        failed = client.get(f"/zones/{zones['free']}/filters")
        assert failed.status_code == 500 and failed.json() == INTERNAL
        assert client.get(f"/zones/{zones['free']}/firewall/rules").status_code == 200
