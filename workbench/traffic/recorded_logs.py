"""Logs in the platform's own formats, with recorded decisions: the readers' inverses.

Given requests, their ray ids and their decisions (a
:class:`~workbench.traffic.decisions.Recorded` each, for example
:func:`~workbench.traffic.decisions.replay_decisions` of a replay), these
write what the platform would have logged: http_requests NDJSON with the
Security fields, Logpush firewall_events NDJSON (one line per rule that
acted), the GraphQL ``firewallEventsAdaptive`` response, and a HAR whose
responses carry the ``cf-ray`` header. The readers read them back to the
same requests and decisions; the sample logs in ``notebooks/data`` and the
agreement's tests are written with them.

    >>> from datetime import UTC, datetime
    >>> from workbench.traffic.decisions import Recorded, RuleMatch
    >>> r = Request("GET", "https://shop.example/?q=1", client_ip="192.0.2.1",
    ...             timestamp=datetime(2026, 3, 2, 9, 0, 1, tzinfo=UTC))
    >>> decided = Recorded.of([RuleMatch("r9", "firewallCustom", "managed_challenge")])
    >>> line = json.loads(http_requests_lines([r], ["8f1c2a3b4d5e6f70"], [decided])[0])
    >>> line["SecurityAction"], line["SecuritySources"], line["EdgeResponseStatus"]
    ('managedChallenge', ['firewallCustom'], 403)
    >>> event = json.loads(firewall_events_lines([r], ["8f1c2a3b4d5e6f70"], [decided])[0])
    >>> event["Action"], event["Source"], event["ClientRequestQuery"], event["Datetime"]
    ('managedchallenge', 'firewallcustom', '?q=1', '2026-03-02T09:00:01Z')
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .decisions import CHALLENGES, Recorded, logged_spelling
from .importers import request_fields
from .importers_har import MITIGATED_CHALLENGE, MITIGATED_HEADER, RAY_HEADER
from .request import Request

#: The status the edge answers with, by outcome (a challenge page is a 403 too).
STATUS = {"allow": 200, "connection_close": 0}
#: The data center code written after ray ids (``cf-ray: <ray>-<colo>``).
COLO = "CDG"


def _time(when: datetime | None) -> str | None:
    return None if when is None else when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _status(decided: Recorded | None) -> int:
    return 200 if decided is None else STATUS.get(decided.outcome, 403)


def _response_headers(ray: str, decided: Recorded | None) -> list[dict[str, str]]:
    """The edge's headers a HAR keeps: ``cf-ray``, and ``cf-mitigated`` on a challenge page."""
    headers = [{"name": RAY_HEADER, "value": f"{ray}-{COLO}"}] if ray else []
    if decided is not None and decided.outcome in CHALLENGES:
        headers.append({"name": MITIGATED_HEADER, "value": MITIGATED_CHALLENGE})
    return headers


def http_requests_lines(
    requests: Sequence[Request],
    ray_ids: Sequence[str],
    decisions: Sequence[Recorded | None],
    *,
    custom_fields: bool = False,
) -> list[str]:
    """http_requests NDJSON lines with the Security fields (a None decision writes none).

    ``custom_fields`` adds the ``RequestHeaders`` and ``Cookies`` custom fields
    (every header but those the log has fields for, and the cookies).
    """
    out = []
    for r, ray, decided in zip(requests, ray_ids, decisions, strict=True):
        record: dict[str, Any] = {
            "RayID": ray,
            "EdgeStartTimestamp": _time(r.timestamp),
            "ClientIP": r.client_ip,
            "ClientCountry": r.country.lower(),
            "ClientASN": r.asn,
            **request_fields(r),
            "ClientSSLProtocol": r.fields(["cf.tls_version"])["cf.tls_version"] or "none",
            "EdgeResponseStatus": _status(decided),
        }
        if custom_fields:
            skip = {"host", "user-agent", "referer", "cookie"}
            record["RequestHeaders"] = {k.lower(): v for k, v in r.headers if k.lower() not in skip}
            record["Cookies"] = {
                k: v[0] for k, v in r.fields(["http.request.cookies"])[
                    "http.request.cookies"].items()
            }  # fmt: skip
        if decided is not None:
            ending = decided.ending if decided.outcome != "allow" else None
            record |= {
                "SecurityAction": logged_spelling(ending.action, "http_requests") if ending else "",
                "SecurityRuleID": ending.rule_id if ending else "",
                "SecurityRuleDescription": ending.description if ending else "",
                "SecurityActions": [
                    logged_spelling(m.action, "http_requests") for m in decided.rules
                ],
                "SecuritySources": [m.source for m in decided.rules],
                "SecurityRuleIDs": [m.rule_id for m in decided.rules],
            }
        out.append(json.dumps(record))
    return out


def _events(
    requests: Sequence[Request], ray_ids: Sequence[str], decisions: Sequence[Recorded | None]
) -> list[tuple[Request, str, Recorded, int]]:
    """``(request, ray, decision, match index)`` of every rule that acted, in log order."""
    out: list[tuple[Request, str, Recorded, int]] = []
    for r, ray, decided in zip(requests, ray_ids, decisions, strict=True):
        if decided is None:
            continue
        last = len(decided.rules) - 1
        out.extend((r, ray, decided, last - i) for i in range(len(decided.rules)))
    return out


def firewall_events_lines(
    requests: Sequence[Request], ray_ids: Sequence[str], decisions: Sequence[Recorded | None]
) -> list[str]:
    """Logpush firewall_events NDJSON: one line per rule that acted (values in lower case)."""
    out = []
    for r, ray, decided, index in _events(requests, ray_ids, decisions):
        match = decided.rules[len(decided.rules) - 1 - index]
        query = r.query
        record = {
            "Action": logged_spelling(match.action, "firewall_events"),
            "ClientASN": r.asn,
            "ClientCountry": r.country.lower(),
            "ClientIP": r.client_ip,
            "ClientRequestHost": r.host,
            "ClientRequestMethod": r.method,
            "ClientRequestPath": r.path,
            "ClientRequestProtocol": r.http_version,
            "ClientRequestQuery": f"?{query}" if query else "",
            "ClientRequestScheme": r.scheme,
            "ClientRequestUserAgent": r.header("user-agent"),
            "Datetime": _time(r.timestamp),
            "Description": match.description,
            "EdgeColoCode": COLO,
            "EdgeResponseStatus": _status(decided),
            "Kind": "firewall",
            "MatchIndex": index,
            "RayID": ray,
            "RuleID": match.rule_id,
            "Source": match.source.lower(),
        }
        out.append(json.dumps(record))
    return out


def graphql_events(
    requests: Sequence[Request], ray_ids: Sequence[str], decisions: Sequence[Recorded | None]
) -> dict[str, Any]:
    """A GraphQL response for ``firewallEventsAdaptive``, as a client would save it."""
    events = []
    for r, ray, decided, index in _events(requests, ray_ids, decisions):
        match = decided.rules[len(decided.rules) - 1 - index]
        events.append(
            {
                "action": logged_spelling(match.action, "graphql"),
                "clientAsn": str(r.asn),
                "clientCountryName": r.country,
                "clientIP": r.client_ip,
                "clientRequestHTTPHost": r.host,
                "clientRequestHTTPMethodName": r.method,
                "clientRequestPath": r.path,
                "clientRequestQuery": f"?{r.query}" if r.query else "",
                "datetime": _time(r.timestamp),
                "description": match.description,
                "kind": "firewall",
                "matchIndex": index,
                "rayName": ray,
                "ruleId": match.rule_id,
                "rulesetId": match.ruleset_id,
                "source": match.source,
                "userAgent": r.header("user-agent"),
            }
        )
    return {"data": {"viewer": {"zones": [{"firewallEventsAdaptive": events}]}}, "errors": None}


def har(
    requests: Sequence[Request],
    ray_ids: Sequence[str],
    decisions: Sequence[Recorded | None],
    *,
    creator: str = "workbench",
) -> dict[str, Any]:
    """A HAR 1.2 document: each request, and a response with its status and ``cf-ray``."""
    entries = []
    for r, ray, decided in zip(requests, ray_ids, decisions, strict=True):
        request: dict[str, Any] = {
            "method": r.method,
            "url": r.url,
            "httpVersion": r.http_version,
            "headers": [{"name": k, "value": v} for k, v in r.headers],
            "queryString": [{"name": k, "value": v} for k, v in r.args],
            "cookies": [
                {"name": k, "value": v}
                for k, values in r.fields(["http.request.cookies"])["http.request.cookies"].items()
                for v in values
            ],  # fmt: skip
            "headersSize": -1,
            "bodySize": len(r.body.encode("utf-8", "surrogateescape")),
        }
        if r.body:
            request["postData"] = {"mimeType": r.header("content-type"), "text": r.body}
        status = _status(decided)
        entries.append(
            {
                "startedDateTime": _time(r.timestamp),
                "time": 0,
                "request": request,
                "response": {
                    "status": status,
                    "statusText": "",
                    "httpVersion": r.http_version,
                    "headers": _response_headers(ray, decided),
                    "cookies": [],
                    "content": {"size": 0, "mimeType": "text/html"},
                    "redirectURL": "",
                    "headersSize": -1,
                    "bodySize": -1,
                },
                "cache": {},
                "timings": {"send": 0, "wait": 0, "receive": 0},
            }
        )
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": creator, "version": "1"},
            "entries": entries,
        }
    }
