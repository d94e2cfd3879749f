r"""A payload sent three fixed ways: in a query argument, a form body and a JSON body.

This is how detection is measured on lists of public payloads (``tests/detection``
and ``tools/payload_rates.py``): each line of a list becomes these three requests
from one browser-like client, so rates from both count the same requests.

    >>> get, form, js = placements("1' OR 1=1", 7)
    >>> get.url
    'https://www.example.com/item?id=7&q=1%27%20OR%201%3D1'
    >>> form.body, js.body
    ('name=1%27+OR+1%3D1&x=1', '{"value": "1\' OR 1=1"}')
"""

from __future__ import annotations

import json
from urllib.parse import quote, quote_plus

from .generators import RawRequest

_BASE = "https://www.example.com"
_UA = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36"
)
_HEADERS = {"Host": "www.example.com", "User-Agent": _UA, "Accept": "*/*"}
_FORM = "application/x-www-form-urlencoded"


def placements(payload: str, n: int = 0, label: str = "public") -> list[RawRequest]:
    """``payload`` as query argument ``q`` (beside ``id=n``), form field ``name`` and the
    JSON string ``value``, each percent-encoded or escaped as a client would."""

    def sent(method: str, path: str, kind: str | None, body: str) -> RawRequest:
        headers = {**_HEADERS, "Content-Type": kind} if kind else dict(_HEADERS)
        return RawRequest(method, _BASE + path, headers, body, "198.51.100.7", "NL", 14061, label)

    return [
        sent("GET", f"/item?id={n}&q={quote(payload, safe='')}", None, ""),
        sent("POST", "/submit", _FORM, f"name={quote_plus(payload)}&x=1"),
        sent("POST", "/api/v1/items", "application/json", json.dumps({"value": payload})),
    ]
