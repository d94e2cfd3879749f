"""The virtual clock over HTTP: GET and PUT /client/v4/workbench/clock, forward only."""

from __future__ import annotations

import httpx
import pytest

CLOCK = "/workbench/clock"


def test_get_returns_the_exact_envelope(http):
    response = http.get(CLOCK)
    assert response.status_code == 200
    assert response.json() == {
        "result": {"now": "2026-01-01T00:00:00Z"},
        "success": True,
        "errors": [],
        "messages": [],
    }


def test_put_now_and_advance_seconds_move_it_forward(wb, http):
    moved = http.put(CLOCK, json={"now": "2026-03-01T12:00:00Z"})
    assert moved.status_code == 200 and moved.json()["result"] == {"now": "2026-03-01T12:00:00Z"}
    moved = http.put(CLOCK, json={"advance_seconds": 90})
    assert moved.json()["result"] == {"now": "2026-03-01T12:01:30Z"}
    assert http.get(CLOCK).json()["result"]["now"] == "2026-03-01T12:01:30Z"
    assert wb.now().isoformat() == "2026-03-01T12:01:30+00:00"  # the same clock as the core's
    # The time read back can be sent back: no move.
    assert http.put(CLOCK, json={"now": "2026-03-01T12:01:30Z"}).status_code == 200


@pytest.mark.parametrize("body", [{"now": "2025-12-31T23:59:59Z"}, {"advance_seconds": -5}])
def test_backwards_is_a_400_envelope_and_the_clock_stays(http, body):
    response = http.put(CLOCK, json=body)
    assert response.status_code == 400
    answer = response.json()
    assert answer["success"] is False and answer["result"] is None
    assert "backwards" in answer["errors"][0]["message"]
    assert http.get(CLOCK).json()["result"]["now"] == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize("body", [{}, {"now": "soon"}, {"advance_seconds": "1"}, {"x": 1}])
def test_bad_bodies_are_400_envelopes(http, body):
    response = http.put(CLOCK, json=body)
    assert response.status_code == 400 and response.json()["success"] is False


def test_same_auth_as_the_other_calls(wb, base_url):
    with httpx.Client(base_url=base_url, timeout=10) as anonymous:
        response = anonymous.get(CLOCK)
        assert response.status_code == 400 and response.json()["errors"][0]["code"] == 9106
        wrong = anonymous.get(CLOCK, headers={"Authorization": "Bearer " + "x" * 40})
        assert wrong.status_code == 403
        scoped = wb.create_token([wb.zones[0].id])  # any valid token: the clock is the account's
        for token in (wb.account.tokens[0].value, scoped.value):
            headers = {"Authorization": f"Bearer {token}"}
            assert anonymous.get(CLOCK, headers=headers).status_code == 200
            moved = anonymous.put(CLOCK, headers=headers, json={"advance_seconds": 1})
            assert moved.status_code == 200


def test_the_openapi_document_lists_the_clock(http):
    paths = http.get("/openapi.json").json()["paths"]
    assert set(paths["/client/v4/workbench/clock"]) == {"get", "put"}
