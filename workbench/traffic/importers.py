"""Requests from logs: the platform's HTTP request logs (NDJSON) and the combined log format.

Each reader takes a path, a file, or an iterable of lines (``str`` or
``bytes``; bytes that are not UTF-8 are kept, see
:mod:`workbench.traffic.textvalues`) and returns an :class:`Imported`: the
requests, and the lines it skipped. A bad line raises :class:`LogLineError`
naming its line number and what is wrong, or, with ``skip_bad=True``, is
counted and skipped. Blank lines are ignored. Nothing else raises.

    >>> lines = ['{"ClientIP": "203.0.113.7", "ClientRequestHost": "example.com",'
    ...          ' "ClientRequestMethod": "GET", "ClientRequestURI": "/a?b=1",'
    ...          ' "ClientCountry": "fr", "ClientASN": 3215, "EdgeStartTimestamp": 1767225600000000000}',
    ...          '{"ClientRequestURI": 5}']
    >>> got = read_http_requests(lines, skip_bad=True)
    >>> [(r.host, r.uri, r.country) for r in got.requests], got.skipped
    ([('example.com', '/a?b=1', 'FR')], 1)
    >>> got.errors[0].line, got.errors[0].reason
    (2, 'ClientRequestURI must be text, got int')
    >>> apache = ('192.0.2.1 - - [10/Oct/2025:13:55:36 -0700] "GET /x.php?id=1 HTTP/1.1" 200 2326 '
    ...           '"-" "curl/8.7.1"')
    >>> r = read_combined_log([apache], host="example.com").requests[0]
    >>> r.method, r.uri, r.header("user-agent"), r.timestamp.isoformat()
    ('GET', '/x.php?id=1', 'curl/8.7.1', '2025-10-10T20:55:36+00:00')
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .request import Request
from .textvalues import as_text, field_text


class LogLineError(ValueError):
    """A log line that cannot be read: its number (from 1) and what is wrong."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


@dataclass
class Imported:
    """What a reader gave: the requests, and the errors of the lines it skipped."""

    requests: list[Request] = field(default_factory=list)
    errors: list[LogLineError] = field(default_factory=list)

    @property
    def skipped(self) -> int:
        """How many lines were skipped as bad."""
        return len(self.errors)

    def __len__(self) -> int:
        return len(self.requests)

    def __iter__(self) -> Iterator[Request]:
        return iter(self.requests)


def _lines(source: Any) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of each line: a Path, or a str naming a file, is read as bytes;
    other text is the log itself."""
    if isinstance(source, Path) or (
        isinstance(source, str) and "\n" not in source and os.path.isfile(source)
    ):
        with open(source, "rb") as f:
            for n, raw in enumerate(f, 1):
                yield n, as_text(raw).rstrip("\r\n")
        return
    if isinstance(source, str):
        source = source.splitlines()
    for n, raw in enumerate(source, 1):
        yield n, as_text(raw).rstrip("\r\n")


def _read(source: Any, parse: Any, skip_bad: bool) -> Imported:
    out = Imported()
    for n, text in _lines(source):
        if not text.strip():
            continue
        try:
            out.requests.append(parse(text))
        except _Bad as bad:
            error = LogLineError(n, str(bad))
            if not skip_bad:
                raise error from None
            out.errors.append(error)
    return out


class _Bad(Exception):
    """What is wrong with one line (the reader adds the line number)."""


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
    """
    return _read(source, lambda text: _http_request(text, label), skip_bad)


def _http_request(text: str, label: str) -> Request:
    try:
        record = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise _Bad(f"not JSON ({_short(exc)})") from None
    if not isinstance(record, dict):
        raise _Bad(f"not a JSON object (a {type(record).__name__})")
    for name in _TEXT_FIELDS:
        if name in record and record[name] is not None and not isinstance(record[name], str):
            raise _Bad(f"{name} must be text, got {type(record[name]).__name__}")
    uri = record.get("ClientRequestURI")
    if uri is None:
        path = record.get("ClientRequestPath")
        if path is None:
            raise _Bad("no ClientRequestURI (or ClientRequestPath)")
        query = record.get("ClientRequestQuery") or ""
        uri = path + (query if query.startswith("?") or not query else "?" + query)
    asn = record.get("ClientASN", 0)
    if asn is None:
        asn = 0
    if isinstance(asn, bool) or not isinstance(asn, int):
        raise _Bad(f"ClientASN must be an integer, got {type(asn).__name__}")
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
    return Request(
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


def _map_field(record: dict[str, Any], name: str) -> list[tuple[str, str]]:
    value = record.get(name)
    if value is None:
        return []
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Bad(f"{name} must be an object of text values")
    return [(str(k), v) for k, v in value.items()]


def _edge_time(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise _Bad("EdgeStartTimestamp must be a time, got a boolean")
    if isinstance(value, int | float):
        # Logpush writes Unix seconds, milliseconds or nanoseconds, by configuration.
        magnitude = abs(value)
        seconds = value / 1e9 if magnitude >= 1e17 else value / 1e3 if magnitude >= 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise _Bad(f"EdgeStartTimestamp {value!r} is out of range") from None
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise _Bad(f"EdgeStartTimestamp {_quoted(value)} is not an RFC 3339 time") from None
        return stamp.astimezone(UTC) if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    raise _Bad(f"EdgeStartTimestamp must be a time, got {type(value).__name__}")


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
    return _read(source, lambda text: _combined(text, host, scheme, label), skip_bad)


def read_log(
    path: str | Path, *, host: str = "", label: str = "", skip_bad: bool = False
) -> Imported:
    """Requests from a log file in either format, told apart by its first non-blank line.

    A line starting with ``{`` means the platform's HTTP request log (NDJSON);
    anything else is read as combined log format, with ``host`` for every request.
    """
    with open(path, encoding="utf-8", errors="replace") as f:
        first = next((line for line in f if line.strip()), "")
    if first.lstrip().startswith("{"):
        return read_http_requests(Path(path), skip_bad=skip_bad, label=label)
    return read_combined_log(Path(path), skip_bad=skip_bad, host=host, label=label)


def _combined(text: str, host: str, scheme: str, label: str) -> Request:
    m = _COMBINED.fullmatch(text)
    if m is None:
        raise _Bad(
            'not in the combined log format (client ident user [time] "request" status size)'
        )
    client, _, _, when, request, _, _, referer, agent = m.groups()
    line = _unescape(request)
    parsed = _REQUEST_LINE.fullmatch(line)
    if parsed is None:
        raise _Bad(f"request {_quoted(line)} is not METHOD TARGET PROTOCOL")
    method, target, protocol = parsed.groups()
    try:
        stamp = datetime.strptime(when, "%d/%b/%Y:%H:%M:%S %z").astimezone(UTC)
    except ValueError:
        raise _Bad(f"time {_quoted(when)} is not like 10/Oct/2025:13:55:36 -0700") from None
    headers = [("Host", host)] if host else []
    for name, value in (("Referer", referer), ("User-Agent", agent)):
        if value is not None and value != "-":
            headers.append((name, _unescape(value)))
    absolute = "://" in target.split("?", 1)[0] and not target.startswith("/")
    url = target if absolute or not host else f"{scheme}://{host}{target}"
    return Request(
        method=method,
        url=url,
        headers=headers,
        client_ip=client,
        tls_version=None if scheme == "https" else "",
        http_version=protocol or "HTTP/1.0",
        label=label,
        timestamp=stamp,
    )


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


def _short(exc: BaseException) -> str:
    return str(exc).split("\n", 1)[0][:120]


def _quoted(text: str) -> str:
    """``text`` quoted for an error message: short, and raw bytes shown as ``\\xNN``."""
    shown = text if len(text) <= 60 else text[:57] + "..."
    value = field_text(shown)
    return repr(value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else value)


def write_lines(requests: Iterable[Request]) -> list[str]:
    """HTTP request log lines (NDJSON) for ``requests``: the inverse of :func:`read_http_requests`."""
    out = []
    for r in requests:
        record: dict[str, Any] = {
            "ClientIP": r.client_ip,
            "ClientRequestHost": r.host,
            "ClientRequestMethod": r.method,
            "ClientRequestURI": r.uri,
            "ClientRequestScheme": r.scheme,
            "ClientRequestProtocol": r.http_version,
            "ClientRequestUserAgent": r.header("user-agent"),
            "ClientRequestReferer": r.header("referer"),
            "ClientCountry": r.country.lower(),
            "ClientASN": r.asn,
        }
        if r.timestamp is not None:
            record["EdgeStartTimestamp"] = r.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        # ASCII JSON: raw bytes kept as surrogate escapes survive the round trip.
        out.append(json.dumps(record))
    return out
