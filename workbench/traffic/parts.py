"""Parts of many requests at once, read off each request's cached parts, each listed once.

The whole-table path reads the same few parts of every request in a chunk
several times: for the ray ids and times, for the request table
(:mod:`workbench.replay._table`) and for the event rows
(:mod:`workbench.traffic.events`). A :class:`Parts` is made once per chunk and
lists each part once: the readers here are one comprehension over the
requests' cached ``_target`` and ``_header_parts`` (computed once per request,
see :class:`~workbench.traffic.request.Request`), and :meth:`Parts.attribute`
reads the plain attributes the pipeline needs in one pass. Each pass over a
chunk's requests costs about a third of a microsecond a request even when
nothing is computed (their dictionaries lie scattered in memory), so a list is
kept rather than read again. Values are the raw text; each caller turns them
into its own form (field values, log text).

    >>> from workbench.traffic.request import Request
    >>> parts = Parts([Request(url="https://a.com/x", headers={"User-Agent": "ua"}),
    ...                Request(url="/y", headers=[("Host", "b.com"), ("Cookie", "a=1"),
    ...                                          ("cookie", "b=2")])])
    >>> hosts(parts), first_values(parts, "user-agent"), all_values(parts, "cookie", "; ")
    (['a.com', 'b.com'], ['ua', ''], ['', 'a=1; b=2'])
    >>> parts.attribute("method"), paths(parts)
    (['GET', 'GET'], ['/x', '/y'])
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from .header_pairs import HeaderParts
from .request import Request

#: The plain attributes read in one pass, the first time one of them is asked for.
COMMON = ("method", "country", "client_ip", "asn", "label", "timestamp", "body")
_COMMON = operator.attrgetter(*COMMON)


class Parts:
    """Parts of a chunk's requests that several readers need, each listed once."""

    def __init__(self, requests: Sequence[Request]) -> None:
        self.requests = requests
        self._lists: dict[Any, list[Any]] = {}

    @property
    def targets(self) -> list[tuple[str, str, str, str]]:
        """Each request's ``(scheme, authority, path, query)``."""
        return self.kept("targets", lambda p: [r._target for r in p.requests])

    @property
    def headers(self) -> list[HeaderParts]:
        """Each request's header names, values and lower-case names, in request order."""
        return self.kept("headers", lambda p: [r._header_parts for r in p.requests])

    def attribute(self, name: str) -> list[Any]:
        """Each request's attribute ``name``; those of :data:`COMMON` are read in one pass."""
        key = ("attribute", name)  # apart from the derived lists' keys (``path``, ``host``)
        found = self._lists.get(key)
        if found is None:
            if name in COMMON:
                columns = list(zip(*map(_COMMON, self.requests), strict=True))
                for common, values in zip(COMMON, columns or [()] * len(COMMON), strict=True):
                    self._lists["attribute", common] = list(values)
                found = self._lists[key]
            else:
                found = self._lists[key] = [getattr(r, name) for r in self.requests]
        return found

    def kept(self, key: Any, make: Callable[[Parts], list[Any]]) -> list[Any]:
        """The list ``make(self)``, made the first time ``key`` is asked for."""
        found = self._lists.get(key)
        if found is None:
            found = self._lists[key] = make(self)
        return found


def paths(parts: Parts) -> list[str]:
    """Each request's URI path."""
    return parts.kept("path", lambda p: [t[2] for t in p.targets])


def queries(parts: Parts) -> list[str]:
    """Each request's query string (without the ``?``)."""
    return parts.kept("query", lambda p: [t[3] for t in p.targets])


def first_values(parts: Parts, name: str) -> list[str]:
    """Each request's first value of header ``name`` (lower case), or ``""``."""
    return parts.kept(
        ("first", name), lambda p: [v[k.index(name)] if name in k else "" for _, v, k in p.headers]
    )


def _joined(keys: list[str], values: tuple[str, ...], name: str, sep: str) -> str:
    count = keys.count(name)
    if count < 2:
        return values[keys.index(name)] if count else ""
    return sep.join([v for k, v in zip(keys, values, strict=True) if k == name])


def all_values(parts: Parts, name: str, sep: str) -> list[str]:
    """Each request's values of header ``name`` joined with ``sep`` (``""`` without one)."""
    return parts.kept(
        ("all", name, sep), lambda p: [_joined(k, v, name, sep) for _, v, k in p.headers]
    )


def hosts(parts: Parts) -> list[str]:
    """Each request's ``Host`` header, else its URL's authority (without user info)."""
    return parts.kept(
        "host",
        lambda p: [
            (v[k.index("host")] if "host" in k else "") or t[1].rpartition("@")[2]
            for (_, v, k), t in zip(p.headers, p.targets, strict=True)
        ],
    )
