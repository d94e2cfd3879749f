"""The sample logs of ``notebooks/data``: a morning of ``shop.example``, with recorded decisions.

Three files in the platform's own formats (written by
:mod:`workbench.traffic.recorded_logs`, read by the importers):

* ``shop-http_requests.ndjson``: http_requests lines with the Security fields;
* ``shop-firewall_events.ndjson``: the Logpush firewall_events of the same requests;
* ``shop-session.har``: one visitor's browser session (four of those requests,
  with their headers, cookies and bodies; ``cf-ray`` joins them to the events).

The traffic is seeded generated traffic on the zone (only requests whose log
lines decide as the requests themselves do: nothing the log drops matters to
them), then a visitor's session, a burst of logins, a scraper and the office
editing a post. Their decisions are the demo zone's (``workbench replay``'s:
the old WAF on, both managed rulesets deployed) on each whole request, as the
real edge saw it, except three planted where the real platform decided
otherwise, each for a reason the agreement report names:

* the sixth login in a minute from one address: blocked by **rate limiting**;
* the scraper: a managed challenge from **Bot Management**;
* the office's post with a ``<script>`` tag: let through by a **custom skip rule**
  for the office's address that the demo zone does not have.

A fourth disagreement is no plant: the session's ``POST /api/cart`` hides SQL in
its JSON body, which the http_requests log does not hold; the HAR does, and
agrees. Times come from the Workbench's virtual clock (09:00 onwards, 7 s per
request); ray ids from its seeded generator. The same call gives the same bytes.

    $ python notebooks/build/write_sample_logs.py
    wrote notebooks/data/shop-http_requests.ndjson (62 lines) ...

    >>> sorted(FILES)
    ['shop-firewall_events.ndjson', 'shop-http_requests.ndjson', 'shop-session.har']
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..replay import Pipeline
from ..replay.run import demo_zone
from .decisions import Recorded, RuleMatch, replay_decisions
from .generators import generate
from .importers import read_http_requests
from .recorded_logs import firewall_events_lines, har, http_requests_lines
from .request import Request

HOST = "shop.example"
FILES = ("shop-http_requests.ndjson", "shop-firewall_events.ndjson", "shop-session.har")
#: Seconds between requests on the virtual clock.
STEP_MS = 7_000
#: The planted decisions' rules (ids as the real zone's would be: 32 hex).
RATE_LIMIT = RuleMatch(
    "5e7a94b1c0d24f36a8b2c9d10e3f4a57", "rateLimit", "block", "", "Login attempts per IP"
)
BOT = RuleMatch(
    "b07d3a1e6c5f48e29a0b1c2d3e4f5061", "botManagement", "managed_challenge", "", "Likely automated"
)
OFFICE_SKIP = RuleMatch(
    "0c9f1e2d3b4a59687766554433221100",
    "firewallCustom",
    "skip",
    "",
    "Skip managed rules for the office",
)
OFFICE_IP = "198.51.100.10"
_BROWSER = {
    "User-Agent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Safari/605.1.15",
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "en-GB,en;q=0.9",
}


@dataclass
class _Planned:
    request: Request
    plant: RuleMatch | None = None
    har: bool = False
    body_only: bool = False


def _session() -> list[_Planned]:
    """A visitor's session, as their browser's HAR holds it."""
    visitor: dict[str, Any] = {"client_ip": "203.0.113.45", "country": "GB", "asn": 2856}
    cookie = {"Cookie": "sid=4f1d2c; cart=3"}
    form = {"Content-Type": "application/x-www-form-urlencoded", "Origin": f"https://{HOST}"}
    return [
        _Planned(Request("GET", f"https://{HOST}/", {**_BROWSER}, **visitor), har=True),
        _Planned(
            Request("GET", f"https://{HOST}/account/login", {**_BROWSER, **cookie}, **visitor),
            har=True,
        ),
        _Planned(
            Request(
                "POST",
                f"https://{HOST}/account/login",
                {**_BROWSER, **cookie, **form},
                "email=ann%40example.org&password=correct+horse",
                **visitor,
            ),
            har=True,
        ),
        _Planned(
            Request(
                "POST",
                f"https://{HOST}/api/cart",
                {**_BROWSER, **cookie, "Content-Type": "application/json"},
                '{"item": "1 union select password from users--", "qty": 1}',
                **visitor,
            ),
            har=True,
            body_only=True,
        ),
    ]


def _planted() -> list[_Planned]:
    out = []
    attacker: dict[str, Any] = {"client_ip": "192.0.2.77", "country": "NL", "asn": 14061}
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    for k in range(6):
        body = f"email=admin%40{HOST}&password=guess{k}"
        out.append(
            _Planned(
                Request(
                    "POST",
                    f"https://{HOST}/account/login",
                    {**_BROWSER, **form},
                    body,
                    **attacker,
                ),
                plant=RATE_LIMIT if k == 5 else None,
            )
        )
    scraper = {"User-Agent": "python-requests/2.31.0", "Accept": "*/*"}
    out.append(
        _Planned(
            Request(
                "GET",
                f"https://{HOST}/products?page=14",
                scraper,
                client_ip="185.220.101.4",
                country="DE",
                asn=24940,
            ),
            plant=BOT,
        )
    )
    post = "content=%3Cscript%3Ealert(1)%3C/script%3E"
    out.append(
        _Planned(
            Request(
                "GET",
                f"https://{HOST}/wp-admin/post.php?action=preview&{post}",
                {**_BROWSER},
                client_ip=OFFICE_IP,
                country="GB",
                asn=5089,
            ),
            plant=OFFICE_SKIP,
        )
    )
    return out


def _same(a: Recorded, b: Recorded) -> bool:
    return a.outcome == b.outcome and [m.rule_id for m in a.rules] == [m.rule_id for m in b.rules]


def _check(plan: list[_Planned], whole: list[Recorded], seen: list[Recorded]) -> None:
    """That the sample still shows what its docstring says (the zone's rules may change)."""
    for p, full, logged in zip(plan, whole, seen, strict=True):
        wrong = ""
        if p.body_only and full.outcome == logged.outcome:
            wrong = "decides the same without its body"
        elif p.har and not p.body_only and not _same(full, logged):
            wrong = "decides otherwise without its headers"
        elif p.plant and (full.outcome == "allow") == (p.plant.action == "skip"):
            wrong = f"is decided {full.outcome} already: the plant would agree"
        if wrong:
            raise RuntimeError(f"sample log: {p.request.method} {p.request.url} {wrong}")


def _planted_decision(plant: RuleMatch, before: Recorded) -> Recorded:
    if plant.action == "skip":
        return Recorded.of([plant], origin="http_requests")
    return Recorded.of([*before.rules, plant], origin="http_requests")


def sample_logs(seed: int = 30) -> dict[str, str]:
    """The text of each of :data:`FILES` (see the module docstring)."""
    plan = [
        _Planned(Request.from_raw(r))
        for r in generate(60, seed=seed, domain=HOST)
        if r.label != "scanner"  # scanners hammer: a real zone's rate limits would answer them
    ]
    plan[5:5] = _session()
    plan[20:20] = _planted()
    requests = [p.request for p in plan]
    wb, zone_id = demo_zone(HOST)
    wb.advance(hours=9)
    run = Pipeline(wb, zone_id, step_ms=STEP_MS).replay(requests, path="request", progress=False)
    stamped = [_at(r, ms) for r, ms in zip(requests, run.times_ms, strict=True)]
    whole = replay_decisions(run)
    # What the log holds of each request, decided the same way: only the planted differ.
    logged = read_http_requests(
        http_requests_lines(stamped, run.ray_ids, [None] * len(stamped))
    ).requests
    wb2, zone2 = demo_zone(HOST)
    seen = replay_decisions(Pipeline(wb2, zone2).replay(logged, path="request", progress=False))
    keep = [
        i for i, p in enumerate(plan) if p.plant or p.body_only or p.har or _same(whole[i], seen[i])
    ]
    _check(plan, whole, seen)
    decisions = [
        _planted_decision(p.plant, whole[i]) if p.plant else whole[i] for i, p in enumerate(plan)
    ]
    decisions = [Recorded(d.outcome, d.rules, d.ending, "http_requests") for d in decisions]
    rays = run.ray_ids
    kept = ([stamped[i] for i in keep], [rays[i] for i in keep], [decisions[i] for i in keep])
    session = [i for i in keep if plan[i].har]
    document = har(
        [stamped[i] for i in session], [rays[i] for i in session], [decisions[i] for i in session]
    )
    return {
        FILES[0]: "\n".join(http_requests_lines(*kept)) + "\n",
        FILES[1]: "\n".join(firewall_events_lines(*kept)) + "\n",
        FILES[2]: json.dumps(document, indent=2) + "\n",
    }


def _at(r: Request, ms: int) -> Request:
    """``r`` sent at ``ms`` (milliseconds since the epoch)."""
    when = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return Request(
        r.method, r.url, r.headers, r.body, r.client_ip, r.country, r.asn,
        r.tls_version, r.http_version, r.label, when,
    )  # fmt: skip
