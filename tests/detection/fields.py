"""The Rules-language fields the managed catalogues read, computed from a generated request.

A small stand-in for the pipeline's field extraction, so the detection tests
need no engine. It computes exactly the fields listed in README.md, with the
semantics the catalogue expressions assume: values as the client sent them
(no decoding, no path normalisation), every string field present (an empty
string when the request lacks it), header names lower-cased in the map.
"""

from __future__ import annotations

from typing import Any

from tools.crs_reference.corpus import raw_from_request
from workbench.rulesets.crs.runtime import evaluate
from workbench.rulesets.crs.runtime_crs2 import evaluate as evaluate_crs2
from workbench.traffic.generators import RawRequest

#: Every field a catalogue expression may read.
FIELDS = (
    "http.request.method",
    "http.request.uri",
    "http.request.uri.path",
    "http.request.uri.query",
    "http.request.body.raw",
    "http.cookie",
    "http.referer",
    "http.user_agent",
    "http.request.headers",
    "http.request.headers.names",
    "http.request.headers.values",
    "ip.src.asnum",
    "cf.waf.crs.rules",
    "cf.waf.crs2.rules",
)


def split_url(url: str) -> tuple[str, str, str]:
    """``(host, path, query)`` of an absolute URL, keeping the client's encoding."""
    rest = url.split("://", 1)[1] if "://" in url else url
    rest = rest.split("#", 1)[0]
    host, slash, target = rest.partition("/")
    path, _, query = ("/" + target if slash else "/").partition("?")
    return host, path, query


def request_fields(raw: RawRequest) -> dict[str, Any]:
    """The field values of ``raw``, keyed by field name."""
    _, path, query = split_url(raw.url)
    headers: dict[str, list[str]] = {}
    for name, value in raw.headers.items():
        headers.setdefault(name.lower(), []).append(value)

    def first(name: str) -> str:
        return headers.get(name, [""])[0]

    return {
        "http.request.method": raw.method,
        "http.request.uri": path + ("?" + query if query else ""),
        "http.request.uri.path": path,
        "http.request.uri.query": query,
        "http.request.body.raw": raw.body,
        "http.cookie": first("cookie"),
        "http.referer": first("referer"),
        "http.user_agent": first("user-agent"),
        "http.request.headers": headers,
        "http.request.headers.names": list(raw.headers),
        "http.request.headers.values": list(raw.headers.values()),
        "ip.src.asnum": raw.asn,
        # The OWASP ruleset's rules read what the CRS program fired on the request as sent.
        "cf.waf.crs.rules": sorted(evaluate(raw_from_request(raw)).hits),
        # The old package's OWASP rules read what the CRS 2.2.9 program fired.
        "cf.waf.crs2.rules": sorted(evaluate_crs2(raw_from_request(raw)).hits),
    }
