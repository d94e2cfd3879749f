"""The writers of the platform's formats read back to the same requests and decisions."""

from __future__ import annotations

import json

from workbench.replay import Pipeline
from workbench.traffic import Request, generate
from workbench.traffic.decisions import replay_decisions
from workbench.traffic.importers import read_http_requests
from workbench.traffic.importers_events import read_firewall_events
from workbench.traffic.importers_har import read_har
from workbench.traffic.recorded_logs import (
    firewall_events_lines,
    graphql_events,
    har,
    http_requests_lines,
)


def _key(decided):
    if decided is None:
        return None
    ending = decided.ending.rule_id if decided.ending and decided.outcome != "allow" else ""
    return decided.outcome, ending, [(m.rule_id, m.source, m.action) for m in decided.rules]


def test_every_format_reads_back_what_was_written(zone_wb):
    wb, zone_id = zone_wb
    requests = [Request.from_raw(r) for r in generate(200, seed=8)]
    run = Pipeline(wb, zone_id).replay(requests, progress=False)
    decided = replay_decisions(run)
    assert sum(1 for d in decided if d.rules) > 30

    log = read_http_requests(
        http_requests_lines(requests, run.ray_ids, decided, custom_fields=True)
    )
    assert [m.ray_id for m in log.logged] == run.ray_ids
    assert [_key(d) for d in log.recorded] == [_key(d) for d in decided]
    for back, r in zip(log.requests, requests, strict=True):
        assert (back.method, back.uri, back.host, back.client_ip) == (
            r.method,
            r.uri,
            r.host,
            r.client_ip,
        )
        assert back.fields(["http.request.cookies"]) == r.fields(["http.request.cookies"])

    for events in (
        read_firewall_events(firewall_events_lines(requests, run.ray_ids, decided)),
        read_firewall_events(json.dumps(graphql_events(requests, run.ray_ids, decided))),
    ):
        by_ray = events.decisions()
        assert set(by_ray) == {ray for ray, d in zip(run.ray_ids, decided, strict=True) if d.rules}
        for ray, d in zip(run.ray_ids, decided, strict=True):
            if d.rules:
                assert _key(by_ray[ray]) == _key(d)

    session = read_har(json.dumps(har(requests, run.ray_ids, decided)))
    assert [m.ray_id for m in session.logged] == run.ray_ids
    for back, r in zip(session.requests, requests, strict=True):
        assert (back.method, back.url, back.body, back.headers) == (
            r.method,
            r.url,
            r.body,
            r.headers,
        )


def test_a_request_without_a_decision_writes_no_security_fields():
    [line] = http_requests_lines([Request(url="https://a.example/")], ["ab"], [None])
    assert not any(k.startswith("Security") for k in json.loads(line))
    assert firewall_events_lines([Request(url="/")], ["ab"], [None]) == []
