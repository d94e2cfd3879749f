"""Firewall events: Logpush NDJSON and the GraphQL export, both spellings, and the joins."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from workbench.traffic.importers import read_combined_log, read_http_requests
from workbench.traffic.importers_events import attach_events, read_firewall_events
from workbench.traffic.log_reading import LogLineError

# A Logpush firewall_events line as the platform writes it.
LOGPUSH = {
    "Action": "managedchallenge",
    "ClientASN": 7922,
    "ClientASNDescription": "COMCAST-7922",
    "ClientCountry": "us",
    "ClientIP": "203.0.113.25",
    "ClientIPClass": "noRecord",
    "ClientRefererHost": "",
    "ClientRequestHost": "www.example.com",
    "ClientRequestMethod": "GET",
    "ClientRequestPath": "/search",
    "ClientRequestProtocol": "HTTP/2",
    "ClientRequestQuery": "?q=1",
    "ClientRequestScheme": "https",
    "ClientRequestUserAgent": "Mozilla/5.0",
    "Datetime": "2026-03-02T09:00:01Z",
    "Description": "Challenge the search",
    "EdgeColoCode": "CDG",
    "EdgeResponseStatus": 403,
    "Kind": "firewall",
    "MatchIndex": 0,
    "Metadata": {},
    "OriginResponseStatus": 0,
    "RayID": "8f1c2a3b4d5e6f70",
    "RuleID": "r9",
    "Source": "firewallcustom",
}
# The same event as the GraphQL firewallEventsAdaptive dataset gives it.
GRAPHQL = {
    "action": "managed_challenge",
    "clientAsn": "7922",
    "clientCountryName": "US",
    "clientIP": "203.0.113.25",
    "clientRequestHTTPHost": "www.example.com",
    "clientRequestHTTPMethodName": "GET",
    "clientRequestPath": "/search",
    "clientRequestQuery": "?q=1",
    "datetime": "2026-03-02T09:00:01Z",
    "description": "Challenge the search",
    "kind": "firewall",
    "matchIndex": 0,
    "rayName": "8f1c2a3b4d5e6f70",
    "ruleId": "r9",
    "rulesetId": "4814384a9e5d4991b9815dcfc25d2f1f",
    "source": "firewallCustom",
    "userAgent": "Mozilla/5.0",
}


def test_a_logpush_line_and_a_graphql_event_read_the_same():
    [a] = read_firewall_events([json.dumps(LOGPUSH)])
    [b] = read_firewall_events([json.dumps(GRAPHQL)])
    for e in (a, b):
        assert (e.ray_id, e.action, e.source, e.rule_id) == (
            "8f1c2a3b4d5e6f70",
            "managed_challenge",
            "firewallCustom",
            "r9",
        )
        assert (e.path, e.query, e.method, e.host) == ("/search", "?q=1", "GET", "www.example.com")
        assert e.datetime == datetime(2026, 3, 2, 9, 0, 1, tzinfo=UTC) and e.match_index == 0
    assert (a.ruleset_id, b.ruleset_id) == ("", "4814384a9e5d4991b9815dcfc25d2f1f")


def test_a_saved_graphql_response_and_a_json_array(tmp_path):
    response = {
        "data": {
            "viewer": {
                "zones": [
                    {"firewallEventsAdaptive": [GRAPHQL, {**GRAPHQL, "rayName": "aa"}]},
                    {"firewallEventsAdaptive": [{**GRAPHQL, "rayName": "bb"}]},
                ]
            }
        },
        "errors": None,
    }
    path = tmp_path / "events.json"
    path.write_text(json.dumps(response, indent=2), encoding="utf-8")
    got = read_firewall_events(path)
    assert got.format == "graphql" and [e.ray_id for e in got] == ["8f1c2a3b4d5e6f70", "aa", "bb"]
    starts = [n for n, t in enumerate(path.read_text().splitlines(), 1) if t == " " * 12 + "{"]
    assert [e.line for e in got] == starts and len(starts) == 3
    assert len(read_firewall_events(json.dumps([GRAPHQL, GRAPHQL]))) == 2
    errors = json.dumps({"data": None, "errors": [{"message": "rate limited"}]})
    with pytest.raises(LogLineError, match="the GraphQL response holds errors: rate limited"):
        read_firewall_events(errors)


def test_missing_optional_fields_are_fine():
    [e] = read_firewall_events(['{"RayID": "ab", "Action": "block", "RuleID": 100015}'])
    assert (e.source, e.rule_id, e.datetime, e.match_index) == ("unknown", "100015", None, None)
    assert len(read_firewall_events("")) == 0


def test_a_ray_s_events_make_its_decision_in_the_order_they_acted():
    lines = [
        json.dumps({**LOGPUSH, "Action": "block", "Source": "waf", "RuleID": "100015", "MatchIndex": 0}),
        json.dumps({**LOGPUSH, "Action": "log", "Source": "firewallmanaged", "RuleID": "m1", "MatchIndex": 1}),
        json.dumps({**LOGPUSH, "RayID": "cc", "Action": "skip", "RuleID": "s1", "MatchIndex": 0}),
    ]  # fmt: skip
    decided = read_firewall_events(lines).decisions()
    first = decided["8f1c2a3b4d5e6f70"]
    assert [m.rule_id for m in first.rules] == ["m1", "100015"]
    assert (first.outcome, first.ending.source, first.origin) == ("block", "waf", "firewall_events")
    assert decided["cc"].outcome == "allow"  # a skip let the request through


BAD = [
    ("{oops", "", "not JSON"),
    ("[1]", "", "not a JSON object (an array)"),
    (json.dumps({"Action": "block"}), "RayID", "no RayID (or rayName)"),
    (json.dumps({"RayID": "a"}), "Action", "no Action (or action)"),
    (json.dumps({**LOGPUSH, "Action": "explode"}), "Action", "Action: 'explode' is not an action"),
    (json.dumps({**GRAPHQL, "action": "nope"}), "action", "action: 'nope' is not an action"),
    (json.dumps({**LOGPUSH, "MatchIndex": "0"}), "MatchIndex", "MatchIndex must be an integer"),
    (json.dumps({**LOGPUSH, "Datetime": "soon"}), "Datetime", "Datetime 'soon' is not an RFC 3339"),
    (json.dumps({**GRAPHQL, "source": 4}), "source", "source must be a string, got a number"),
]


@pytest.mark.parametrize(("bad", "field", "reason"), BAD)
def test_a_bad_line_names_its_number_field_and_reason_and_nothing_is_half_read(bad, field, reason):
    lines = [json.dumps(LOGPUSH), bad, json.dumps(GRAPHQL)]
    with pytest.raises(LogLineError) as caught:
        read_firewall_events(lines)
    assert (caught.value.line, caught.value.field) == (2, field)
    assert caught.value.reason.startswith(reason)
    got = read_firewall_events(lines, skip_bad=True)
    assert len(got) == 2 and got.skipped == 1 and [e.line for e in got] == [1, 3]


def test_a_bad_event_of_an_array_names_its_line():
    text = json.dumps([GRAPHQL, {**GRAPHQL, "matchIndex": True}], indent=1)
    with pytest.raises(LogLineError) as caught:
        read_firewall_events(text)
    assert caught.value.line == text.splitlines().index(" {", 2) + 1
    assert caught.value.field == "matchIndex"


def test_a_file_of_something_else_is_refused():
    with pytest.raises(LogLineError, match="line 1: not firewall events"):
        read_firewall_events('192.0.2.1 - - [02/Mar/2026:09:00:00 +0000] "GET / HTTP/1.1" 200 5')


def test_events_join_by_ray_id_and_replace_what_the_log_recorded():
    http = [
        json.dumps({"RayID": "8f1c2a3b4d5e6f70", "ClientRequestURI": "/search?q=1"}),
        json.dumps({"RayID": "dd", "ClientRequestURI": "/", "SecurityActions": []}),
        json.dumps({"RayID": "ee", "ClientRequestURI": "/"}),
    ]
    imported = read_http_requests(http)
    joined = attach_events(imported, read_firewall_events([json.dumps(LOGPUSH)]))
    assert [d.outcome if d else None for d in joined.recorded] == [
        "managed_challenge",
        "allow",  # no event: the line's own (empty) Security fields stand
        None,  # no event, no Security fields: no recorded decision
    ]
    assert imported.recorded[0] is None  # the import itself is left as it was


def test_a_log_without_ray_ids_joins_by_time_path_and_query():
    combined = [
        '203.0.113.25 - - [02/Mar/2026:09:00:01 +0000] "GET /search?q=1 HTTP/1.1" 403 5 "-" "-"',
        '203.0.113.25 - - [02/Mar/2026:09:00:01 +0000] "GET /search?q=2 HTTP/1.1" 200 5 "-" "-"',
        '198.51.100.1 - - [02/Mar/2026:09:00:01 +0000] "GET /search?q=1 HTTP/1.1" 200 5 "-" "-"',
        '203.0.113.25 - - [02/Mar/2026:09:00:02 +0000] "GET /search?q=1 HTTP/1.1" 200 5 "-" "-"',
    ]
    imported = read_combined_log(combined, host="www.example.com")
    joined = attach_events(imported, read_firewall_events([json.dumps(LOGPUSH)]))
    assert [m.ray_id for m in joined.logged] == ["8f1c2a3b4d5e6f70", "", "", ""]
    assert [d.outcome if d else None for d in joined.recorded] == [
        "managed_challenge",
        None,
        None,
        None,
    ]


def test_two_requests_that_fit_one_ray_equally_get_none():
    same = '192.0.2.9 - - [02/Mar/2026:09:00:01 +0000] "GET /search?q=1 HTTP/1.1" 200 5 "-" "-"'
    event = {**LOGPUSH, "ClientIP": ""}
    joined = attach_events(
        read_combined_log([same, same]), read_firewall_events([json.dumps(event)])
    )
    assert joined.recorded == [None, None]
