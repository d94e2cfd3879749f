"""Parts of many requests at once, read off each request's cached parts.

The whole-table path reads the same few parts of every request in a chunk
twice: for the request table (:mod:`workbench.traffic.table`) and for the
event rows (:mod:`workbench.traffic.events`). Each reader here is one
comprehension over the requests' cached ``_target`` and ``_header_parts``
(computed once per request, see :class:`~workbench.traffic.request.Request`):
no method call per request. Values are the raw text; each caller turns them
into its own form (field values, log text).

    >>> from workbench.traffic.request import Request
    >>> parts = Parts([Request(url="https://a.com/x", headers={"User-Agent": "ua"}),
    ...                Request(url="/y", headers=[("Host", "b.com"), ("Cookie", "a=1"),
    ...                                          ("cookie", "b=2")])])
    >>> hosts(parts), first_values(parts, "user-agent"), all_values(parts, "cookie", "; ")
    (['a.com', 'b.com'], ['ua', ''], ['', 'a=1; b=2'])
"""

from __future__ import annotations

from collections.abc import Sequence

from .request import Request


class Parts:
    """Parts of a chunk's requests that several columns read, each listed once."""

    def __init__(self, requests: Sequence[Request]) -> None:
        self.requests = requests
        self._targets: list[tuple[str, str, str, str]] | None = None
        self._headers: list[tuple[tuple[str, ...], tuple[str, ...], list[str]]] | None = None

    @property
    def targets(self) -> list[tuple[str, str, str, str]]:
        """Each request's ``(scheme, authority, path, query)``."""
        if self._targets is None:
            self._targets = [r._target for r in self.requests]
        return self._targets

    @property
    def headers(self) -> list[tuple[tuple[str, ...], tuple[str, ...], list[str]]]:
        """Each request's header names, values and lower-case names, in request order."""
        if self._headers is None:
            self._headers = [r._header_parts for r in self.requests]
        return self._headers


def first_values(parts: Parts, name: str) -> list[str]:
    """Each request's first value of header ``name`` (lower case), or ``""``."""
    return [v[k.index(name)] if name in k else "" for _, v, k in parts.headers]


def _joined(keys: list[str], values: tuple[str, ...], name: str, sep: str) -> str:
    count = keys.count(name)
    if count < 2:
        return values[keys.index(name)] if count else ""
    return sep.join([v for k, v in zip(keys, values, strict=True) if k == name])


def all_values(parts: Parts, name: str, sep: str) -> list[str]:
    """Each request's values of header ``name`` joined with ``sep`` (``""`` without one)."""
    return [_joined(k, v, name, sep) for _, v, k in parts.headers]


def hosts(parts: Parts) -> list[str]:
    """Each request's ``Host`` header, else its URL's authority (without user info)."""
    return [
        (v[k.index("host")] if "host" in k else "") or t[1].rpartition("@")[2]
        for (_, v, k), t in zip(parts.headers, parts.targets, strict=True)
    ]
