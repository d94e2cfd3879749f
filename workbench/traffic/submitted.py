"""Requests submitted as JSON (the HTTP extension's body), checked and turned into Requests.

The body is a JSON array of at most :data:`MAX_REQUESTS` objects, each
``{"method", "url", "headers": {}, "client_ip", "country", "body"}`` with
``url`` required and the rest optional (``method`` defaults to ``GET``),
plus two optional extras the event log keeps: ``asn`` (a whole number) and
``label`` (what the request really is, for the canned queries about
legitimate traffic). A bad item raises one
:class:`~workbench.core.errors.ValidationError` whose message names the
item's index and the field, with a JSON pointer (``/2/headers``) as its
``source``; nothing is replayed then.

    >>> reqs = read_submitted([{"url": "https://example.com/a?b=1", "country": "fr",
    ...                         "headers": {"User-Agent": "curl/8.7"}}])
    >>> reqs[0].method, reqs[0].country, reqs[0].header("user-agent")
    ('GET', 'FR', 'curl/8.7')
    >>> read_submitted([{"url": "/"}, {"url": "/", "client_ip": "10.0.0.300"}])
    Traceback (most recent call last):
    ...
    workbench.core.errors.ValidationError: requests[1].client_ip must be an IPv4 or IPv6 address, got '10.0.0.300'
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any

from ..core.errors import ValidationError
from .request import Request

#: Most requests one call may submit (the whole array is refused beyond it).
MAX_REQUESTS = 1000
#: Longest URL accepted, in characters (the platform's documented URL limit is 16 KB).
MAX_URL = 16 * 1024
#: Fields an item may carry, in the order errors list them.
FIELDS = ("method", "url", "headers", "client_ip", "country", "body", "asn", "label")

# A method is an HTTP token (RFC 9110); the platform refuses anything else before any rule runs.
_METHOD = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}")
# Two letters or digits: ISO 3166-1 alpha-2, and the platform's XX (unknown) and T1 (Tor).
_COUNTRY = re.compile(r"[A-Za-z0-9]{2}")


def _type(value: Any) -> str:
    """A JSON value's type as JSON names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "array"
    return "object"


def _bad(index: int, name: str, message: str) -> ValidationError:
    where = f"requests[{index}]" + (f".{name}" if name else "")
    pointer = f"/{index}" + (f"/{name}" if name else "")
    return ValidationError(f"{where} {message}", source={"pointer": pointer})


def _text(item: Mapping[str, Any], index: int, name: str, default: str = "") -> str:
    value = item.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise _bad(index, name, f"must be text, got {_type(value)}")
    return value


def _headers(value: Any, index: int) -> list[tuple[str, str]]:
    """Header pairs in the order given; an array value is a repeated header."""
    if value is None:
        return []
    if not isinstance(value, dict):
        raise _bad(index, "headers", f"must be an object of header names, got {_type(value)}")
    pairs: list[tuple[str, str]] = []
    for name, given in value.items():
        if not name.strip():
            raise _bad(index, "headers", "has an empty header name")
        values = given if isinstance(given, list) else [given]
        for one in values:
            if not isinstance(one, str):
                raise _bad(
                    index,
                    "headers",
                    f"value of {name!r} must be text or an array of text, got {_type(one)}",
                )
            pairs.append((name, one))
    return pairs


def _request(item: Any, index: int) -> Request:
    if not isinstance(item, dict):
        raise _bad(index, "", f"must be an object, got {_type(item)}")
    unknown = [k for k in item if k not in FIELDS]
    if unknown:
        raise _bad(index, "", f"has unknown field {unknown[0]!r}; fields: {', '.join(FIELDS)}")
    url = _text(item, index, "url")
    if not url:
        raise _bad(index, "url", "is required: an absolute http(s) URL or a path starting with /")
    if not (url.startswith("/") or re.match(r"(?i)https?://[^/?#]", url)):
        raise _bad(index, "url", f"must be an absolute http(s) URL or start with /, got {url!r}")
    if len(url) > MAX_URL:
        raise _bad(index, "url", f"is longer than {MAX_URL} characters ({len(url)})")
    method = _text(item, index, "method", "GET")
    if not _METHOD.fullmatch(method):
        raise _bad(index, "method", f"must be an HTTP method such as GET or POST, got {method!r}")
    client_ip = _text(item, index, "client_ip").strip()
    if client_ip:
        try:
            ipaddress.ip_address(client_ip)
        except ValueError:
            raise _bad(
                index, "client_ip", f"must be an IPv4 or IPv6 address, got {client_ip!r}"
            ) from None
    country = _text(item, index, "country").strip()
    if country and not _COUNTRY.fullmatch(country):
        raise _bad(index, "country", f"must be a two-letter country code, got {country!r}")
    asn = item.get("asn")
    if asn is not None and (isinstance(asn, bool) or not isinstance(asn, int) or asn < 0):
        raise _bad(index, "asn", f"must be a whole number >= 0, got {asn!r}")
    return Request(
        method=method,
        url=url,
        headers=_headers(item.get("headers"), index),
        body=_text(item, index, "body"),
        client_ip=client_ip,
        country=country,
        asn=asn or 0,
        label=_text(item, index, "label"),
    )


def read_submitted(body: Any) -> list[Request]:
    """The Requests of a submitted body (see the module docstring); raises on the first bad item."""
    if not isinstance(body, list):
        raise ValidationError(
            f"the body must be a JSON array of requests, got {_type(body)}",
            source={"pointer": "/"},
        )
    if len(body) > MAX_REQUESTS:
        raise ValidationError(
            f"at most {MAX_REQUESTS:,} requests per call, got {len(body):,}; send them in batches",
            source={"pointer": "/"},
        )
    return [_request(item, i) for i, item in enumerate(body)]
