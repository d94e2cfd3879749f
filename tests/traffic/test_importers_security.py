"""The http_requests Security fields kept with each request as its recorded decision."""

from __future__ import annotations

import json

import pytest

from workbench.traffic.importers import LogLineError, read_http_requests, read_log

BASE = {
    "RayID": "8f1c2a3b4d5e6f70",
    "ClientIP": "203.0.113.25",
    "ClientRequestHost": "www.example.com",
    "ClientRequestMethod": "GET",
    "ClientRequestURI": "/search?q=1",
    "EdgeStartTimestamp": "2026-03-02T09:00:00Z",
}


def line(**fields):
    return json.dumps({**BASE, **fields})


def test_the_security_fields_are_the_recorded_decision():
    text = line(
        SecurityAction="managedChallenge",
        SecurityRuleID="r9",
        SecurityRuleDescription="Challenge the search",
        SecurityActions=["log", "managedChallenge"],
        SecuritySources=["firewallManaged", "firewallCustom"],
        SecurityRuleIDs=["r1", "r9"],
    )
    got = read_http_requests([text])
    seen = got.logged[0]
    assert (seen.line, seen.ray_id, got.format) == (1, "8f1c2a3b4d5e6f70", "http_requests")
    decided = seen.recorded
    assert (decided.outcome, decided.origin) == ("managed_challenge", "http_requests")
    assert [(m.rule_id, m.source, m.action) for m in decided.rules] == [
        ("r1", "firewallManaged", "log"),
        ("r9", "firewallCustom", "managed_challenge"),
    ]
    assert decided.ending.rule_id == "r9"
    assert decided.ending.description == "Challenge the search"
    assert got.recorded == [decided]


def test_both_spellings_give_the_same_decision():
    camel = line(
        SecurityAction="managedChallenge",
        SecurityActions=["managedChallenge"],
        SecuritySources=["firewallManaged"],
        SecurityRuleIDs=["r1"],
        SecurityRuleID="r1",
    )
    lower = line(
        SecurityAction="managedchallenge",
        SecurityActions=["managedchallenge"],
        SecuritySources=["firewallmanaged"],
        SecurityRuleIDs=["r1"],
        SecurityRuleID="r1",
    )
    a, b = read_http_requests([camel, lower]).recorded
    assert a == b and a.outcome == "managed_challenge" and a.rules[0].source == "firewallManaged"


def test_no_security_fields_means_no_recorded_decision():
    assert read_http_requests([line()]).recorded == [None]
    # null is a field left out by whatever wrote the line, not a decision.
    assert read_http_requests([line(SecurityAction=None, SecurityActions=None)]).recorded == [None]


def test_security_fields_present_but_empty_mean_the_waf_took_no_action():
    text = line(
        SecurityAction="",
        SecurityRuleID="",
        SecurityActions=[],
        SecuritySources=[],
        SecurityRuleIDs=[],
    )
    decided = read_http_requests([text]).recorded[0]
    assert (decided.outcome, decided.rules, decided.ending) == ("allow", (), None)
    # Rules that only logged: the request went on.
    logged = line(SecurityAction="", SecurityActions=["log"], SecuritySources=["waf"])
    decided = read_http_requests([logged]).recorded[0]
    assert decided.outcome == "allow" and decided.rules[0].rule_id == ""


def test_without_security_action_the_last_terminating_list_item_decides():
    text = line(
        SecurityActions=["log", "block"],
        SecuritySources=["firewallManaged", "firewallManaged"],
        SecurityRuleIDs=["r1", "r2"],
    )
    decided = read_http_requests([text]).recorded[0]
    assert (decided.outcome, decided.ending.rule_id) == ("block", "r2")


def test_the_older_firewall_matches_fields_are_read_too():
    text = line(
        FirewallMatchesActions=["jschallenge"],
        FirewallMatchesSources=["firewallrules"],
        FirewallMatchesRuleIDs=["fr1"],
    )
    decided = read_http_requests([text]).recorded[0]
    assert decided.outcome == "js_challenge" and decided.ending.source == "firewallRules"


def test_what_a_line_carries_of_its_request():
    bare = read_http_requests([line()]).logged[0]
    assert bare.parts == frozenset({"host", "client_ip"})
    full = read_http_requests(
        [
            line(
                ClientCountry="fr",
                ClientASN=3215,
                ClientSSLProtocol="TLSv1.3",
                RequestHeaders={},
                Cookies={"sid": "1"},
            )
        ]
    ).logged[0]
    assert full.parts == frozenset(
        {"host", "client_ip", "country", "asn", "tls", "headers", "cookies"}
    )
    assert "body" not in full.parts


BAD = [
    (
        line(SecurityActions="block"),
        "SecurityActions",
        "SecurityActions must be a list of text",
    ),
    (
        line(SecurityActions=["block"], SecurityRuleIDs=["a", "b"]),
        "SecurityActions",
        "the Security lists go item by item but have SecurityActions 1, SecurityRuleIDs 2 items",
    ),
    (
        line(SecurityActions=["explode"]),
        "SecurityActions",
        "SecurityActions[0]: 'explode' is not an action the platform logs",
    ),
    (line(SecurityAction="maybe"), "SecurityAction", "SecurityAction: 'maybe' is not an action"),
    (line(SecurityAction=7), "SecurityAction", "SecurityAction must be text, got int"),
    (line(RayID=12), "RayID", "RayID must be text, got int"),
    (line(ClientASN="x"), "ClientASN", "ClientASN must be an integer, got str"),
]


@pytest.mark.parametrize(("text", "field", "reason"), BAD)
def test_a_bad_line_names_its_number_field_and_reason_and_nothing_is_half_read(text, field, reason):
    with pytest.raises(LogLineError) as caught:
        read_http_requests([line(), text, line()])
    assert (caught.value.line, caught.value.field) == (2, field)
    assert caught.value.reason.startswith(reason)
    assert str(caught.value).startswith(f"line 2: {reason}")
    got = read_http_requests([line(), text, line()], skip_bad=True)
    assert len(got) == 2 and len(got.logged) == 2 and [m.line for m in got.logged] == [1, 3]
    assert got.errors[0].field == field


def test_read_log_tells_a_har_from_ndjson_and_combined(tmp_path):
    har = tmp_path / "session.har"
    har.write_text(
        '{\n  "log": {"version": "1.2", "entries": [\n'
        '    {"request": {"method": "GET", "url": "https://a.example/x"}}]}}\n',
        encoding="utf-8",
    )
    got = read_log(har)
    assert got.format == "har" and got.requests[0].url == "https://a.example/x"
    ndjson = tmp_path / "requests.ndjson"
    ndjson.write_text(line() + "\n", encoding="utf-8")
    assert read_log(ndjson).format == "http_requests"
    combined = tmp_path / "access.log"
    combined.write_text(
        '192.0.2.1 - - [02/Mar/2026:09:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "curl/8"\n',
        encoding="utf-8",
    )
    got = read_log(combined, host="a.example")
    assert got.format == "combined" and got.logged[0].parts == frozenset({"client_ip"})
    assert got.recorded == [None]
