"""Requests from logs: the platform's HTTP request logs (NDJSON) and the combined log format.

Each reader takes a path, a file, or an iterable of lines (``str`` or
``bytes``; bytes that are not UTF-8 are kept, see
:mod:`workbench.traffic.textvalues`) and returns an :class:`Imported`: the
requests, what the log said of each besides (its line, ray id, recorded
decision and the parts it carries: :class:`~workbench.traffic.log_reading.Logged`),
and the lines it skipped. A bad line raises :class:`LogLineError` naming its
line number, the field and what is wrong, or, with ``skip_bad=True``, is
counted and skipped. Blank lines are ignored. Nothing else raises. HAR files
are read by :mod:`workbench.traffic.importers_har`, firewall events by
:mod:`workbench.traffic.importers_events`; :func:`read_log` tells all three
request logs apart.

    >>> lines = ['{"ClientIP": "203.0.113.7", "ClientRequestHost": "example.com",'
    ...          ' "ClientRequestMethod": "GET", "ClientRequestURI": "/a?b=1",'
    ...          ' "ClientCountry": "fr", "ClientASN": 3215, "EdgeStartTimestamp": 1767225600000000000}',
    ...          '{"ClientRequestURI": 5}']
    >>> got = read_http_requests(lines, skip_bad=True)
    >>> [(r.host, r.uri, r.country) for r in got.requests], got.skipped
    ([('example.com', '/a?b=1', 'FR')], 1)
    >>> got.errors[0].line, got.errors[0].field, got.errors[0].reason
    (2, 'ClientRequestURI', 'ClientRequestURI must be text, got int')
    >>> waf = ('{"RayID": "8f1c2a3b4d5e6f70", "ClientRequestURI": "/?q=1", "SecurityAction": "managedChallenge",'
    ...        ' "SecurityRuleID": "r9", "SecurityActions": ["log", "managedChallenge"],'
    ...        ' "SecuritySources": ["firewallManaged", "firewallCustom"], "SecurityRuleIDs": ["r1", "r9"]}')
    >>> seen = read_http_requests([waf]).logged[0]
    >>> seen.ray_id, seen.recorded.outcome, seen.recorded.ending.text()
    ('8f1c2a3b4d5e6f70', 'managed_challenge', 'firewallCustom r9 managed_challenge')
    >>> apache = ('192.0.2.1 - - [10/Oct/2025:13:55:36 -0700] "GET /x.php?id=1 HTTP/1.1" 200 2326 '
    ...           '"-" "curl/8.7.1"')
    >>> r = read_combined_log([apache], host="example.com").requests[0]
    >>> r.method, r.uri, r.header("user-agent"), r.timestamp.isoformat()
    ('GET', '/x.php?id=1', 'curl/8.7.1', '2025-10-10T20:55:36+00:00')
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .decisions import Recorded, RuleMatch, action_spelling, source_spelling
from .importers_events import FirewallEvents, attach_events, read_firewall_events
from .importers_har import read_har
from .log_reading import (
    BadValue,
    Imported,
    Logged,
    LogLineError,
    json_object,
    log_time,
    quoted,
    read_lines,
)
from .request import Request
from .textvalues import as_text

__all__ = [
    "FirewallEvents",
    "Imported",
    "LogLineError",
    "attach_events",
    "content_format",
    "log_format",
    "read_combined_log",
    "read_firewall_events",
    "read_har",
    "read_http_requests",
    "read_log",
    "read_log_bytes",
    "write_lines",
]

# -- the platform's HTTP request logs (Logpush http_requests, NDJSON) ------------------

_TEXT_FIELDS = (
    "ClientIP",
    "ClientRequestHost",
    "ClientRequestURI",
    "ClientRequestPath",
    "ClientRequestQuery",
    "ClientRequestMethod",
    "ClientRequestUserAgent",
    "ClientRequestReferer",
    "ClientRequestScheme",
    "ClientRequestProtocol",
    "ClientCountry",
    "ClientSSLProtocol",
)


def read_http_requests(source: Any, *, skip_bad: bool = False, label: str = "") -> Imported:
    """Requests from HTTP request log lines (one JSON object per line).

    Reads ``ClientIP``, ``ClientRequestHost``, ``ClientRequestURI`` (or
    ``ClientRequestPath`` and ``ClientRequestQuery``), ``ClientRequestMethod``,
    ``ClientRequestUserAgent``, ``ClientRequestReferer``, ``ClientCountry``,
    ``ClientASN``, ``ClientRequestScheme``, ``ClientRequestProtocol``,
    ``ClientSSLProtocol``, ``EdgeStartTimestamp`` (RFC 3339 text, or Unix
    seconds, milliseconds or nanoseconds), and the custom-field maps
    ``RequestHeaders`` and ``Cookies`` when present. ``label`` is given to every
    request (the logs do not say what traffic is).

    Each request's :class:`~workbench.traffic.log_reading.Logged` has its
    ``RayID`` and, from the Security fields (``SecurityAction``,
    ``SecurityActions``, ``SecurityRuleID``, ``SecurityRuleIDs``,
    ``SecuritySources``, ``SecurityRuleDescription``; or the older
    ``FirewallMatchesActions``, ``FirewallMatchesSources``,
    ``FirewallMatchesRuleIDs``), its recorded decision: None when the line has
    none of them, ``allow`` when they are there but empty (the WAF took no
    action). A field that is ``null`` counts as absent.
    """
    return read_lines(source, lambda text: _http_request(text, label), skip_bad, "http_requests")


def _http_request(text: str, label: str) -> tuple[Request, Logged]:
    record = json_object(text, lambda value: f"a {type(value).__name__}")
    for name in _TEXT_FIELDS:
        if name in record and record[name] is not None and not isinstance(record[name], str):
            raise BadValue(f"{name} must be text, got {type(record[name]).__name__}", name)
    uri = record.get("ClientRequestURI")
    if uri is None:
        path = record.get("ClientRequestPath")
        if path is None:
            raise BadValue("no ClientRequestURI (or ClientRequestPath)", "ClientRequestURI")
        query = record.get("ClientRequestQuery") or ""
        uri = path + (query if query.startswith("?") or not query else "?" + query)
    asn = record.get("ClientASN", 0)
    if asn is None:
        asn = 0
    if isinstance(asn, bool) or not isinstance(asn, int):
        raise BadValue(f"ClientASN must be an integer, got {type(asn).__name__}", "ClientASN")
    headers: list[tuple[str, str]] = []
    host = record.get("ClientRequestHost") or ""
    if host:
        headers.append(("Host", host))
    for name, key in (
        ("User-Agent", "ClientRequestUserAgent"),
        ("Referer", "ClientRequestReferer"),
    ):
        if record.get(key):
            headers.append((name, record[key]))
    headers += _map_field(record, "RequestHeaders")
    cookies = _map_field(record, "Cookies")
    if cookies:
        headers.append(("Cookie", "; ".join(f"{k}={v}" for k, v in cookies)))
    scheme = (record.get("ClientRequestScheme") or "https").lower()
    tls = record.get("ClientSSLProtocol")
    tls_version = "" if scheme == "http" else (None if tls in (None, "", "none") else tls)
    request = Request(
        method=record.get("ClientRequestMethod") or "GET",
        url=f"{scheme}://{host}{uri}" if host else uri,
        headers=headers,
        client_ip=record.get("ClientIP") or "",
        country=record.get("ClientCountry") or "",
        asn=asn,
        tls_version=tls_version,
        http_version=record.get("ClientRequestProtocol") or "HTTP/1.1",
        label=label,
        timestamp=_edge_time(record.get("EdgeStartTimestamp")),
    )
    ray = record.get("RayID")
    if ray is not None and not isinstance(ray, str):
        raise BadValue(f"RayID must be text, got {type(ray).__name__}", "RayID")
    get = record.get
    present = (
        bool(host),
        get("RequestHeaders") is not None,  # a custom field: an empty map still says it is on
        get("Cookies") is not None,
        bool(get("ClientIP")),
        bool(get("ClientCountry")),
        get("ClientASN") is not None,
        bool(tls) or scheme == "http",  # plain http: no TLS, and that is known
    )
    return request, Logged(0, ray or "", _security(record), _parts(present))


#: The part of a request (see ``log_reading.PARTS``) each http_requests field carries, in
#: the order :func:`_http_request` tells them.
_PARTS = (
    ("host", "ClientRequestHost"),
    ("headers", "RequestHeaders"),
    ("cookies", "Cookies"),
    ("client_ip", "ClientIP"),
    ("country", "ClientCountry"),
    ("asn", "ClientASN"),
    ("tls", "ClientSSLProtocol"),
)


@functools.cache
def _parts(present: tuple[bool, ...]) -> frozenset[str]:
    """The parts a line carries, from which of :data:`_PARTS` it has (one set per pattern)."""
    return frozenset(part for (part, _), there in zip(_PARTS, present, strict=True) if there)


#: The Security fields' three lists (one item per rule that acted), and their older names.
SECURITY_LISTS = (
    ("SecurityActions", "SecuritySources", "SecurityRuleIDs"),
    ("FirewallMatchesActions", "FirewallMatchesSources", "FirewallMatchesRuleIDs"),
)
#: The terminating action, its rule and that rule's description.
SECURITY_FINAL = ("SecurityAction", "SecurityRuleID", "SecurityRuleDescription")
_SECURITY_NAMES = frozenset([*SECURITY_LISTS[0], *SECURITY_LISTS[1], *SECURITY_FINAL])


def _security(record: dict[str, Any]) -> Recorded | None:
    """The decision the Security fields record (see :func:`read_http_requests`)."""
    if _SECURITY_NAMES.isdisjoint(record):
        return None  # the common case of request logs: no Security field at all
    lists = next(
        (names for names in SECURITY_LISTS if any(record.get(n) is not None for n in names)),
        SECURITY_LISTS[0],
    )
    present = [n for n in (*lists, *SECURITY_FINAL) if record.get(n) is not None]
    if not present:
        return None
    actions, sources, rule_ids = (_text_list(record, name) for name in lists)
    counts = {
        name: len(items) for name, items in zip(lists, (actions, sources, rule_ids), strict=True)
    }
    given = {name: n for name, n in counts.items() if record.get(name) is not None}
    if len(set(given.values())) > 1:
        shown = ", ".join(f"{name} {n}" for name, n in given.items())
        raise BadValue(f"the Security lists go item by item but have {shown} items", lists[0])
    rules = []
    for i in range(max(counts.values())):
        try:
            action = action_spelling(actions[i]) if i < len(actions) else "unknown"
        except ValueError as exc:
            raise BadValue(f"{lists[0]}[{i}]: {exc}", lists[0]) from None
        source = source_spelling(sources[i]) if i < len(sources) else "unknown"
        rules.append(RuleMatch(rule_ids[i] if i < len(rule_ids) else "", source, action))
    final, final_rule, description = (_text(record, name) for name in SECURITY_FINAL)
    try:
        decided = Recorded.of(rules, final, final_rule or "", origin="http_requests")
    except ValueError as exc:
        raise BadValue(f"SecurityAction: {exc}", "SecurityAction") from None
    if description and decided.ending is not None and not decided.ending.description:
        ending = replace(decided.ending, description=description)
        kept = tuple(ending if r is decided.ending else r for r in decided.rules)
        decided = replace(decided, rules=kept, ending=ending)
    return decided


def _text(record: dict[str, Any], name: str) -> str | None:
    value = record.get(name)
    if value is not None and not isinstance(value, str):
        raise BadValue(f"{name} must be text, got {type(value).__name__}", name)
    return value


def _text_list(record: dict[str, Any], name: str) -> list[str]:
    value = record.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadValue(f"{name} must be a list of text", name)
    return value


def _map_field(record: dict[str, Any], name: str) -> list[tuple[str, str]]:
    value = record.get(name)
    if value is None:
        return []
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise BadValue(f"{name} must be an object of text values", name)
    return [(str(k), v) for k, v in value.items()]


def _edge_time(value: Any) -> datetime | None:
    return log_time(value, "EdgeStartTimestamp")


# -- nginx / Apache combined log format ---------------------------------------------------

_QUOTED = r'"((?:[^"\\]|\\.)*)"'
_COMBINED = re.compile(
    rf"(\S+) (\S+) (\S+) \[([^\]]*)\] {_QUOTED} (\d{{3}}|-) (\d+|-)(?: {_QUOTED} {_QUOTED})?(?: .*)?"
)
_REQUEST_LINE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*) (\S+)(?: (HTTP/\d(?:\.\d)?))?")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|.)")


def read_combined_log(
    source: Any,
    *,
    skip_bad: bool = False,
    host: str = "",
    scheme: str = "https",
    label: str = "",
) -> Imported:
    """Requests from combined (or common) log format lines, as nginx and Apache write them.

    ``%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"``; the last two
    may be missing (common log format) and extra fields after them are
    ignored. Escapes in quoted fields (``\\"``, ``\\\\``, ``\\xHH``) are undone.
    The log has no host, country or ASN: ``host`` is used for every request.
    """
    return read_lines(
        source, lambda text: _combined(text, host, scheme, label), skip_bad, "combined"
    )


#: How a HAR file starts: one JSON object whose first key is ``log``.
_HAR_START = re.compile(r'\A\ufeff?\s*\{\s*"log"\s*:')


def log_format(path: str | Path) -> str:
    """The format of a log file, from its start: ``har``, ``http_requests`` or ``combined``.

    A JSON object whose first key is ``log`` is a HAR; a first non-blank line
    starting with ``{`` the platform's HTTP request log (NDJSON); anything else
    the combined log format.
    """
    with open(path, encoding="utf-8", errors="replace") as f:
        start = f.read(4096)
        if _HAR_START.match(start):
            return "har"
        f.seek(0)
        first = next((line for line in f if line.strip()), "")
    return "http_requests" if first.lstrip().startswith("{") else "combined"


def content_format(content: bytes) -> str:
    """The format of a log given as its bytes, told apart as :func:`log_format` does.

    >>> content_format(b'{"log": {"entries": []}}'), content_format(b'\\n{"RayID": "a"}\\n')
    ('har', 'http_requests')
    >>> content_format(b'192.0.2.1 - - [02/Mar/2026:09:00:00 +0000] "GET / HTTP/1.1" 200 9')
    'combined'
    """
    if _HAR_START.match(bytes(content[:4096]).decode("utf-8", "replace")):
        return "har"
    first = next((line for line in bytes(content).splitlines() if line.strip()), b"")
    return "http_requests" if first.lstrip().startswith(b"{") else "combined"


def read_log(
    path: str | Path, *, host: str = "", label: str = "", skip_bad: bool = False
) -> Imported:
    """Requests from a log file in any of the three formats, told apart by :func:`log_format`.

    A combined log is read with ``host`` for every request; a HAR with
    :func:`workbench.traffic.importers_har.read_har`.
    """
    found = log_format(path)
    if found == "har":
        return read_har(Path(path), skip_bad=skip_bad, label=label)
    if found == "http_requests":
        return read_http_requests(Path(path), skip_bad=skip_bad, label=label)
    return read_combined_log(Path(path), skip_bad=skip_bad, host=host, label=label)


def read_log_bytes(
    content: bytes, *, host: str = "", label: str = "", skip_bad: bool = False
) -> Imported:
    """Requests from a log given as its bytes (a file uploaded in a browser), as :func:`read_log`.

    The format is told apart by :func:`content_format`; lines are split at
    ``\\n``, ``\\r\\n`` or ``\\r`` only.

    >>> got = read_log_bytes(b'192.0.2.1 - - [02/Mar/2026:09:00:00 +0000] "GET /a HTTP/1.1" 200 9\\n',
    ...                      host="shop.example")
    >>> got.format, got.requests[0].url
    ('combined', 'https://shop.example/a')
    """
    found = content_format(content)
    if found == "har":
        return read_har(bytes(content), skip_bad=skip_bad, label=label)
    lines = bytes(content).splitlines()
    if found == "http_requests":
        return read_http_requests(lines, skip_bad=skip_bad, label=label)
    return read_combined_log(lines, skip_bad=skip_bad, host=host, label=label)


#: What a combined log line carries of a request (see ``log_reading.PARTS``).
_COMBINED_PARTS = frozenset({"client_ip"})


def _combined(text: str, host: str, scheme: str, label: str) -> tuple[Request, Logged]:
    m = _COMBINED.fullmatch(text)
    if m is None:
        raise BadValue(
            'not in the combined log format (client ident user [time] "request" status size)'
        )
    client, _, _, when, request, _, _, referer, agent = m.groups()
    line = _unescape(request)
    parsed = _REQUEST_LINE.fullmatch(line)
    if parsed is None:
        raise BadValue(f"request {quoted(line)} is not METHOD TARGET PROTOCOL")
    method, target, protocol = parsed.groups()
    try:
        stamp = datetime.strptime(when, "%d/%b/%Y:%H:%M:%S %z").astimezone(UTC)
    except ValueError:
        raise BadValue(f"time {quoted(when)} is not like 10/Oct/2025:13:55:36 -0700") from None
    headers = [("Host", host)] if host else []
    for name, value in (("Referer", referer), ("User-Agent", agent)):
        if value is not None and value != "-":
            headers.append((name, _unescape(value)))
    absolute = "://" in target.split("?", 1)[0] and not target.startswith("/")
    url = target if absolute or not host else f"{scheme}://{host}{target}"
    request = Request(
        method=method,
        url=url,
        headers=headers,
        client_ip=client,
        tls_version=None if scheme == "https" else "",
        http_version=protocol or "HTTP/1.0",
        label=label,
        timestamp=stamp,
    )
    return request, Logged(0, parts=_COMBINED_PARTS)


def _unescape(text: str) -> str:
    """Undo the log's escapes; ``\\xHH`` gives the raw byte (kept as inner text)."""
    if "\\" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        body = m.group(1)
        if body[0] == "x" and len(body) == 3:
            return as_text(bytes([int(body[1:], 16)]))
        return body

    return _ESCAPE.sub(one, text)


def write_lines(requests: Iterable[Request]) -> list[str]:
    """HTTP request log lines (NDJSON) for ``requests``: the inverse of :func:`read_http_requests`."""
    out = []
    for r in requests:
        record: dict[str, Any] = {
            "ClientIP": r.client_ip,
            **request_fields(r),
            "ClientCountry": r.country.lower(),
            "ClientASN": r.asn,
        }
        if r.timestamp is not None:
            record["EdgeStartTimestamp"] = r.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        # ASCII JSON: raw bytes kept as surrogate escapes survive the round trip.
        out.append(json.dumps(record))
    return out


def request_fields(r: Request) -> dict[str, str]:
    """The http_requests fields host to referer, as both writers of the log write them."""
    return {
        "ClientRequestHost": r.host,
        "ClientRequestMethod": r.method,
        "ClientRequestURI": r.uri,
        "ClientRequestScheme": r.scheme,
        "ClientRequestProtocol": r.http_version,
        "ClientRequestUserAgent": r.header("user-agent"),
        "ClientRequestReferer": r.header("referer"),
    }
