"""Requests from a HAR file (HTTP Archive 1.2), as browsers and proxies save them.

Each entry's ``request`` gives the method, URL, ``httpVersion``, headers,
cookies, ``queryString`` and ``postData`` (its ``mimeType`` and ``text``, or
its ``params``); ``startedDateTime`` gives the time. A HAR is the one request
log that holds bodies and every header, but it knows nothing of the client as
the edge sees it (no client IP, country or ASN) nor of the TLS version. Its
responses may carry the platform's ``cf-ray`` header: the entry's ray id, by
which recorded firewall events are joined to it; and ``cf-mitigated:
challenge``, which the platform sets on every challenge page: the entry's
recorded decision is then a challenge page of unknown kind
(:data:`~workbench.traffic.decisions.CHALLENGE_PAGE`). Any other response
records nothing (a 403 may be the origin's), so firewall events give the rest.

A bad entry raises :class:`~workbench.traffic.log_reading.LogLineError` with
the line it starts on and the field at fault (``log.entries[2].request.url``),
or with ``skip_bad=True`` is counted and skipped; a file that is not JSON, or
not a HAR, cannot be read at all.

    >>> har = '''{"log": {"version": "1.2", "entries": [
    ...   {"startedDateTime": "2026-03-02T09:00:00.000Z",
    ...    "request": {"method": "POST", "url": "https://shop.example/login?next=%2F",
    ...      "httpVersion": "h2", "headers": [{"name": ":authority", "value": "shop.example"},
    ...        {"name": "user-agent", "value": "Mozilla/5.0"}],
    ...      "cookies": [{"name": "sid", "value": "1"}],
    ...      "queryString": [{"name": "next", "value": "/"}],
    ...      "postData": {"mimeType": "application/x-www-form-urlencoded",
    ...        "params": [{"name": "user", "value": "ann o'neil"}]}},
    ...    "response": {"status": 200, "headers": [{"name": "cf-ray", "value": "8f1c2a3b4d5e6f70-CDG"}]}}
    ... ]}}'''
    >>> got = read_har(har)
    >>> r = got.requests[0]
    >>> r.method, r.host, r.http_version, r.body, r.header("cookie"), r.header("content-type")
    ('POST', 'shop.example', 'HTTP/2', 'user=ann+o%27neil', 'sid=1', 'application/x-www-form-urlencoded')
    >>> got.logged[0].ray_id, got.logged[0].line, got.format
    ('8f1c2a3b4d5e6f70', 2, 'har')
    >>> read_har('{"log": {"entries": [\\n{"request": {"method": "GET", "url": 7}}]}}')
    Traceback (most recent call last):
    ...
    workbench.traffic.log_reading.LogLineError: line 2: log.entries[0].request.url must be a string, got a number
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote, quote_plus

from ..core.errors import json_kind
from .bodies import media_type
from .decisions import CHALLENGE_PAGE, Recorded
from .log_reading import (
    BadValue,
    Imported,
    Logged,
    LogLineError,
    each_item,
    element_lines,
    json_document,
    log_time,
    source_text,
)
from .request import Request

#: What a HAR carries of each request (see ``log_reading.PARTS``).
HAR_PARTS = frozenset({"host", "headers", "cookies", "body"})
#: ``httpVersion`` as browsers write it -> as the Rules language's ``http.request.version`` reads.
HTTP_VERSIONS = {
    "h2": "HTTP/2",
    "http/2": "HTTP/2",
    "http/2.0": "HTTP/2",
    "h3": "HTTP/3",
    "http/3": "HTTP/3",
    "http/3.0": "HTTP/3",
    "http/1.1": "HTTP/1.1",
    "http/1.0": "HTTP/1.0",
}
#: The boundary of a multipart body rebuilt from ``params`` whose ``mimeType`` names none.
BOUNDARY = "workbench-har-boundary"
#: The response header that carries the platform's ray id (``<ray id>-<colo>``).
RAY_HEADER = "cf-ray"
#: The response header the platform sets on a challenge page, and its one value.
MITIGATED_HEADER, MITIGATED_CHALLENGE = "cf-mitigated", "challenge"


def read_har(source: Any, *, skip_bad: bool = False, label: str = "") -> Imported:
    """Requests from a HAR file: a path, or its text (see the module docstring).

    ``label`` is given to every request. Each request's
    :class:`~workbench.traffic.log_reading.Logged` has the line its entry
    starts on and the ray id of its response's ``cf-ray`` header (``""``
    when there is none); its recorded decision is a challenge page when the
    response says ``cf-mitigated: challenge``, else none.
    """
    text = source_text(source)
    document = json_document(text, "the HAR file")
    log = document.get("log") if isinstance(document, dict) else None
    if not isinstance(log, dict):
        raise LogLineError(1, "not a HAR: the file is no object with a log object", "log")
    entries = log.get("entries")
    if not isinstance(entries, list):
        raise LogLineError(
            1, f"log.entries must be an array, got {json_kind(entries)}", "log.entries"
        )
    lines = element_lines(text.lstrip("\ufeff"), ["log", "entries"])
    if len(lines) != len(entries):  # duplicate keys: the parser kept the last, name no line
        lines = [1] * len(entries)
    out = Imported(format="har")
    at = ((lines[k], (entry, f"log.entries[{k}]")) for k, entry in enumerate(entries))
    for line, (request, ray, recorded) in each_item(
        at, lambda e: _entry(*e, label), skip_bad, out.errors
    ):
        out.requests.append(request)
        out.logged.append(Logged(line, ray, recorded, HAR_PARTS))
    return out


def _entry(entry: Any, at: str, label: str) -> tuple[Request, str, Recorded | None]:
    entry = _object(entry, at)
    request = _object(entry.get("request"), f"{at}.request")
    at_r = f"{at}.request"
    method = _text(request, "method", at_r, required=True)
    url = _text(request, "url", at_r, required=True).split("#", 1)[0]
    version = _text(request, "httpVersion", at_r)
    headers = [
        (name, value)
        for name, value in _pairs(request, "headers", at_r)
        if not name.startswith(":")  # HTTP/2 pseudo-headers: the URL says the same
    ]
    names = {name.lower() for name, _ in headers}
    cookies = _pairs(request, "cookies", at_r)
    if cookies and "cookie" not in names:
        headers.append(("Cookie", "; ".join(f"{name}={value}" for name, value in cookies)))
    query = _pairs(request, "queryString", at_r)
    if query and "?" not in url:
        url += "?" + "&".join(f"{quote(n, safe='')}={quote(v, safe='')}" for n, v in query)
    body = ""
    if request.get("postData") is not None:
        body, mime = _post_data(request["postData"], f"{at_r}.postData")
        if mime and "content-type" not in names:
            headers.append(("Content-Type", mime))
    started = entry.get("startedDateTime")
    when: datetime | None = log_time(started, f"{at}.startedDateTime") if started else None
    return (
        Request(
            method=method,
            url=url,
            headers=headers,
            body=body,
            http_version=HTTP_VERSIONS.get(version.lower(), version or "HTTP/1.1"),
            label=label,
            timestamp=when,
        ),
        *_response(entry.get("response"), f"{at}.response"),
    )


def _post_data(data: Any, at: str) -> tuple[str, str]:
    """``(body, mimeType)``: ``text`` when given, else the body ``params`` make."""
    data = _object(data, at)
    mime = _text(data, "mimeType", at)
    if data.get("text") is not None:
        return _text(data, "text", at), mime
    params = data.get("params") or []
    if not isinstance(params, list):
        raise BadValue(f"{at}.params must be an array, got {json_kind(params)}", f"{at}.params")
    items = [_object(p, f"{at}.params[{i}]") for i, p in enumerate(params)]
    fields = [
        (
            _text(p, "name", f"{at}.params[{i}]", required=True),
            _text(p, "value", f"{at}.params[{i}]"),
            _text(p, "fileName", f"{at}.params[{i}]"),
            _text(p, "contentType", f"{at}.params[{i}]"),
        )
        for i, p in enumerate(items)
    ]
    kind, options = media_type(mime)
    if kind.strip().lower() != "multipart/form-data":
        return "&".join(f"{quote_plus(n)}={quote_plus(v)}" for n, v, _, _ in fields), mime
    boundary = options.get("boundary") or BOUNDARY
    if "boundary" not in options:
        mime = f"multipart/form-data; boundary={boundary}"
    parts = []
    for name, value, file_name, content_type in fields:
        disposition = f'form-data; name="{name}"' + (
            f'; filename="{file_name}"' if file_name else ""
        )
        head = f"Content-Disposition: {disposition}\r\n"
        if content_type:
            head += f"Content-Type: {content_type}\r\n"
        parts.append(f"--{boundary}\r\n{head}\r\n{value}\r\n")
    return "".join(parts) + f"--{boundary}--\r\n", mime


def _response(response: Any, at: str) -> tuple[str, Recorded | None]:
    """The ray id of a response's ``cf-ray`` header (``""`` without one), and a challenge
    page as its recorded decision when it says ``cf-mitigated: challenge``."""
    if response is None:
        return "", None
    headers = {n.lower(): v.strip() for n, v in _pairs(_object(response, at), "headers", at)}
    challenged = headers.get(MITIGATED_HEADER, "").lower() == MITIGATED_CHALLENGE
    recorded = Recorded(CHALLENGE_PAGE, origin="har") if challenged else None
    return headers.get(RAY_HEADER, "").split("-", 1)[0], recorded


def _object(value: Any, at: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadValue(f"{at} must be an object, got {json_kind(value)}", at)
    return value


def _text(obj: dict[str, Any], name: str, at: str, *, required: bool = False) -> str:
    value = obj.get(name)
    if value is None:
        if required:
            raise BadValue(f"{at}.{name} is missing", f"{at}.{name}")
        return ""
    if not isinstance(value, str):
        raise BadValue(f"{at}.{name} must be a string, got {json_kind(value)}", f"{at}.{name}")
    return value


def _pairs(obj: dict[str, Any], name: str, at: str) -> list[tuple[str, str]]:
    """``[(name, value)]`` of a HAR list of name/value objects (missing: empty)."""
    items = obj.get(name)
    if items is None:
        return []
    if not isinstance(items, list):
        raise BadValue(f"{at}.{name} must be an array, got {json_kind(items)}", f"{at}.{name}")
    out = []
    for i, item in enumerate(items):
        where = f"{at}.{name}[{i}]"
        item = _object(item, where)
        out.append((_text(item, "name", where, required=True), _text(item, "value", where)))
    return out
