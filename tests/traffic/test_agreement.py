"""The agreement: full on a log the workbench's own replay recorded, and each planted difference
found and explained."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from workbench import Workbench
from workbench.replay import Pipeline
from workbench.traffic import Request, generate
from workbench.traffic.agreement import VERDICTS, Agreement
from workbench.traffic.decisions import Recorded, RuleMatch, replay_decisions
from workbench.traffic.importers import read_combined_log, read_http_requests
from workbench.traffic.importers_events import read_firewall_events
from workbench.traffic.importers_har import read_har
from workbench.traffic.recorded_logs import (
    firewall_events_lines,
    graphql_events,
    har,
    http_requests_lines,
)
from workbench.zone_import import import_zone

CONFIG = Path(__file__).resolve().parent.parent / "zone_import" / "data"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def stamped(requests, step_s=1):
    """The requests, one a second from 09:00 (so a combined log's times tell them apart)."""
    out = []
    for i, r in enumerate(requests):
        when = datetime.fromtimestamp(START.timestamp() + i * step_s, tz=UTC)
        out.append(
            Request(
                r.method,
                r.url,
                r.headers,
                r.body,
                r.client_ip,
                r.country,
                r.asn,
                r.tls_version,
                r.http_version,
                r.label,
                when,
            )  # fmt: skip
        )
    return out


def record(wb, zone_id, requests):
    """``(ray ids, decisions)`` as the zone decides ``requests`` (the "real" platform here)."""
    run = Pipeline(wb, zone_id).replay(requests, progress=False)
    return run.ray_ids, replay_decisions(run)


@pytest.fixture
def logged(zone_wb):
    """The zone, and 300 generated requests as an http_requests log keeps them (no bodies)."""
    wb, zone_id = zone_wb
    full = stamped([Request.from_raw(r) for r in generate(300, seed=30)])
    view = read_http_requests(http_requests_lines(full, [""] * 300, [None] * 300)).requests
    return wb, zone_id, full, view


def test_a_log_the_replay_recorded_agrees_fully(logged):
    wb, zone_id, _, view = logged
    rays, decided = record(wb, zone_id, view)
    log = read_http_requests(http_requests_lines(view, rays, decided))
    done = wb.traffic.agreement(zone_id, log)
    s = done.summary
    assert (s["requests"], s["compared"], s["agree"], s["disagree"]) == (300, 300, 300, 0)
    assert s["agreement"] == 1.0 and s["recorded_from"] == {"http_requests": 300}
    outcomes = {d.outcome for d in decided}
    assert len(outcomes) >= 4  # the comparison is about something: several outcomes
    assert set(s["by_action"]) == outcomes
    assert all(list(row) == [rec] for rec, row in s["by_action"].items())
    assert len(done.by_rule) >= 5 and (done.by_rule["agreement"] == 1.0).all()
    assert done.disagreements.empty and set(done.frame["verdict"]) == {"agree"}
    assert (done.frame["ray_id"] == rays).all() and list(done.frame["line"]) == list(range(1, 301))


def test_firewall_events_joined_by_ray_agree_fully_and_requests_without_events_are_not_compared(
    logged,
):
    wb, zone_id, _, view = logged
    rays, decided = record(wb, zone_id, view)
    plain = read_http_requests(http_requests_lines(view, rays, [None] * len(view)))
    for events in (
        firewall_events_lines(view, rays, decided),
        json.dumps(graphql_events(view, rays, decided)),
    ):
        done = wb.traffic.agreement(zone_id, plain, events=read_firewall_events(events))
        with_events = sum(1 for d in decided if d.rules)
        s = done.summary
        assert (s["compared"], s["agree"], s["disagree"]) == (with_events, with_events, 0)
        assert s["not_compared"] == 300 - with_events
        assert s["recorded_from"] == {"firewall_events": with_events}
        assert done.cannot_tell.set_index("what").loc["decision", "requests"] == 300 - with_events


def test_a_combined_log_joins_events_by_time_and_path(zone_wb):
    wb, zone_id = zone_wb
    view = stamped(
        [
            Request("GET", "https://example.com/?q=1%20union%20select%201"),
            Request("GET", "https://example.com/wp-login.php"),
            Request("GET", "https://example.com/about"),
        ]
    )
    rays, decided = record(wb, zone_id, view)
    lines = [
        f'192.0.2.1 - - [{r.timestamp:%d/%b/%Y:%H:%M:%S +0000}] "GET {r.uri} HTTP/1.1" 200 1 "-" "-"'
        for r in view
    ]
    events = read_firewall_events(firewall_events_lines(view, rays, decided))
    done = wb.traffic.agreement(
        zone_id, read_combined_log(lines, host="example.com"), events=events
    )
    assert done.summary["agree"] == sum(1 for d in decided if d.rules) >= 2
    assert done.summary["disagree"] == 0
    assert list(done.frame["ray_id"]) == [
        ray if d.rules else "" for ray, d in zip(rays, decided, strict=True)
    ]


def test_a_har_joins_events_by_its_cf_ray_and_keeps_its_bodies(zone_wb):
    wb, zone_id = zone_wb
    posted = Request(
        "POST",
        "https://example.com/comment",
        {"Content-Type": "application/x-www-form-urlencoded"},
        "text=1 union select password from users",
    )
    view = stamped([posted, Request("GET", "https://example.com/")])
    rays, decided = record(wb, zone_id, view)
    assert decided[0].outcome == "block"  # on the body alone
    imported = read_har(json.dumps(har(view, rays, decided)))
    events = read_firewall_events(firewall_events_lines(view, rays, decided))
    done = wb.traffic.agreement(zone_id, imported, events=events)
    assert (done.summary["compared"], done.summary["agree"]) == (1, 1)
    assert "body" not in set(done.cannot_tell["what"])
    assert {"client_ip", "country", "asn"} <= set(done.cannot_tell["what"])


def test_a_har_alone_compares_its_challenge_pages(logged):
    wb, zone_id, _, view = logged
    rays, decided = record(wb, zone_id, view)
    challenged = [d.outcome in {"challenge", "js_challenge", "managed_challenge"} for d in decided]
    assert sum(challenged) >= 5  # the zone challenges some of the generated traffic
    done = wb.traffic.agreement(zone_id, read_har(json.dumps(har(view, rays, decided))))
    s = done.summary
    assert (s["compared"], s["agree"], s["disagree"]) == (sum(challenged), sum(challenged), 0)
    assert s["recorded_from"] == {"har": sum(challenged)}
    assert set(s["by_action"]) == {"challenge_page"}
    assert "the HAR's cf-mitigated headers" in done.provenance()
    # A challenge page where the zone here lets the request through: told apart, and said why.
    page = {"name": "cf-mitigated", "value": "challenge"}
    document = har(stamped([Request("GET", "https://example.com/about")]), ["ab12"], [None])
    document["log"]["entries"][0]["response"]["headers"].append(page)
    done = wb.traffic.agreement(zone_id, read_har(json.dumps(document)))
    (row,) = done.disagreements.itertuples()
    assert (row.recorded, row.simulated) == ("challenge_page", "allow")
    assert "challenge page (cf-mitigated: challenge)" in row.reason
    assert "nothing acted here" in row.reason


# -- planted differences -------------------------------------------------------------


def test_each_planted_difference_is_found_and_explained(zone_wb):
    wb, zone_id = zone_wb
    sqli_body = Request(
        "POST",
        "https://example.com/comment",
        {"Content-Type": "application/x-www-form-urlencoded"},
        "text=1 union select password from users",
    )
    full = stamped(
        [
            Request("GET", "https://example.com/login"),  # 0: rate limited for real
            Request("GET", "https://example.com/?q=1%20union%20select%201"),  # 1: excepted for real
            sqli_body,  # 2: blocked on its body
            Request("GET", "https://example.com/?q=<x>"),  # 3: the real zone blocks, not challenges
            Request("GET", "https://example.com/shop"),  # 4: a custom rule the zone here lacks
            Request("GET", "https://example.com/admin"),  # 5: the real zone only logs
            Request("GET", "https://example.com/"),  # 6: agrees
        ]
    )
    rays, whole = record(wb, zone_id, full)
    assert [d.outcome for d in whole] == [
        "allow",
        "block",
        "block",
        "challenge",
        "allow",
        "block",
        "allow",
    ]
    sqli_rule = whole[1].ending
    challenged = whole[3].ending
    planted = list(whole)
    planted[0] = Recorded.of([RuleMatch("rl1", "rateLimit", "block", "", "login rate")])
    planted[1] = Recorded.of([RuleMatch("sk1", "firewallCustom", "skip", "", "office")])
    planted[3] = Recorded.of([replace(challenged, action="block")])
    planted[4] = Recorded.of([RuleMatch("c1", "firewallCustom", "block", "", "shop closed")])
    planted[5] = Recorded.of([replace(m, action="log") for m in whole[5].rules])
    log = read_http_requests(http_requests_lines(full, rays, planted))
    done = wb.traffic.agreement(zone_id, log)

    assert done.summary["disagree"] == 6 and done.summary["agree"] == 1
    reasons = dict(zip(done.disagreements["line"], done.disagreements["reason"], strict=True))
    assert reasons[1] == (
        "recorded block by rate limiting (rateLimit rule rl1), which the workbench does not simulate"
    )
    assert reasons[2].startswith("the real zone let it through (firewallCustom sk1 skip);")
    assert f"so {sqli_rule.text()} gave block" in reasons[2]
    assert reasons[3] == (
        f"recorded block by {sqli_rule.source} rule {sqli_rule.rule_id}, which did not match here: "
        "the log holds no body for this POST, and the rule most likely matched there"
    )
    assert reasons[4].startswith(
        f"{challenged.source} rule {challenged.rule_id} matched here too, but with action "
        "challenge where the log has block"
    )
    assert reasons[5] == (
        "recorded block by firewallCustom rule c1, which did not match here: the log holds no "
        "headers or cookies for this request, and the rule most likely matched there"
    )
    assert "gave block here, but the real WAF took no action" in reasons[6]
    row = done.disagreements.set_index("line").loc[3]
    assert (row.recorded, row.simulated) == ("block", "allow")
    assert sqli_rule.rule_id in row.recorded_rules and sqli_rule.rule_id not in row.simulated_rules
    assert row.simulated_rules.endswith("log (posts)")  # the rules on each side
    by_rule = done.by_rule.set_index("rule_id")
    assert "rl1" not in by_rule.index  # rate limiting is no simulated source
    assert by_rule.loc["c1", "agreement"] == 0.0
    cannot = done.cannot_tell.set_index("what")
    assert cannot.loc["body", "requests"] == 7 and "POST 1" in cannot.loc["body", "note"]
    assert (
        cannot.loc["source", "requests"] == 1
        and "rate limiting (rateLimit) 1" in cannot.loc["source", "note"]
    )


def test_a_zone_with_every_part_of_the_request_tells_the_zone_differs(zone_wb):
    wb, zone_id = zone_wb
    view = stamped([Request("GET", "https://example.com/shop", {"Cookie": "a=1"})])
    rays = ["ab"]
    imported = read_har(json.dumps(har(view, rays, [None])))
    events = read_firewall_events(
        firewall_events_lines(
            view, rays, [Recorded.of([RuleMatch("c1", "firewallCustom", "block")])]
        )
    )
    done = wb.traffic.agreement(zone_id, imported, events=events)
    assert done.disagreements["reason"].iloc[0] == (
        "recorded block by firewallCustom rule c1, which did not match here: the zone set up "
        "here differs from the real one (the rule is missing, off, or matches otherwise)"
    )


def test_an_imported_zone_s_new_rule_ids_are_mapped_back_to_the_log_s():
    real = Workbench(seed=1)
    done = import_zone(real, CONFIG / "import_enterprise_zone")
    ids = done.ids["firewall_rules"]
    assert ids and all(old != new for old, new in ids.items())
    requests = stamped([Request.from_raw(r) for r in generate(200, seed=4)])
    view = read_http_requests(http_requests_lines(requests, [""] * 200, [None] * 200)).requests
    rays, decided = record(real, done.zone.id, view)
    back = {new: old for old, new in ids.items()}
    as_logged = [
        Recorded.of(
            [replace(m, rule_id=back.get(m.rule_id, m.rule_id)) for m in d.rules], origin="x"
        )
        for d in decided
    ]
    assert any(m.rule_id in ids for d in as_logged for m in d.rules)  # the log speaks real ids
    log = read_http_requests(http_requests_lines(view, rays, as_logged))
    wb = Workbench(seed=2)
    zone = import_zone(wb, CONFIG / "import_enterprise_zone")
    agreed = wb.traffic.agreement(zone.zone.id, log, rule_ids=zone.ids["firewall_rules"])
    assert agreed.summary["disagree"] == 0 and agreed.summary["agree"] == 200
    fw = agreed.by_rule[agreed.by_rule["source"] == "firewallRules"]
    assert len(fw) and set(fw["rule_id"]) <= set(ids) and (fw["agreement"] == 1.0).all()
    unmapped = wb.traffic.agreement(zone.zone.id, log)
    assert (unmapped.by_rule[unmapped.by_rule["source"] == "firewallRules"]["agreement"] == 0).all()


# -- the result object ------------------------------------------------------------------


def test_the_result_reads_as_text_html_and_json(zone_wb):
    wb, zone_id = zone_wb
    view = stamped(
        [Request("GET", "https://example.com/login"), Request("GET", "https://example.com/")]
    )
    decided = [
        Recorded.of([RuleMatch("rl1", "rateLimit", "block")]),
        None,
    ]
    done = wb.traffic.agreement(
        zone_id, read_http_requests(http_requests_lines(view, ["a", "b"], decided))
    )
    assert isinstance(done, Agreement)
    text = done.text()
    assert text.splitlines()[0] == (
        "2 requests on example.com: 1 with a recorded decision, 0 agree, 1 disagree (0.0%)"
    )
    assert "recorded (rows) against simulated (columns):" in text
    assert "line 1 ray a: GET /login" in text and "recorded rules: rateLimit rl1 block" in text
    assert "- 1 of 2: no recorded decision" in text
    assert repr(done).startswith("<Agreement: 2 requests on example.com")
    page = done._repr_html_()
    assert page.count("<table") == 3 and "Disagreements" in page
    dumped = json.loads(json.dumps(done.to_json()))
    assert dumped["by_action"] == {"block": {"allow": 1}}
    assert dumped["disagreements"][0]["ray_id"] == "a"
    assert [v for v in VERDICTS if v in set(done.frame["verdict"])] == [
        "disagree",
        "no recorded decision",
    ]


def test_plain_requests_have_no_recorded_decision(zone_wb):
    wb, zone_id = zone_wb
    done = wb.traffic.agreement(zone_id, [Request(url="/")])
    assert done.summary["compared"] == 0 and done.summary["agreement"] is None
    assert done.by_action.empty and "0 with a recorded decision" in done.text()


def test_a_decision_made_by_hand_without_rules_is_still_explained():
    from workbench.traffic.agreement import explain

    reason = explain(Recorded("block"), Recorded("allow"), Request(), frozenset())
    assert reason == "recorded block, simulated allow; neither side names a rule"
