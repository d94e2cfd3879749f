"""The request as ModSecurity and the CRS translation see it: method, target, protocol, header pairs, body.

A :class:`RawRequest` is what a client put on the wire, before any parsing:
the request target as sent (``/path?query``), headers as ordered pairs
(repeats kept), the body as bytes. The CRS engine and the libmodsecurity
oracle both take it, so a comparison feeds them the same thing.

    >>> r = RawRequest("POST", "/login?next=%2F", headers=(("Host", "a.example"),), body=b"u=1")
    >>> r.path, r.query, r.header("host")
    ('/login', 'next=%2F', ['a.example'])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RawRequest:
    """One request as sent; ``uri`` is the request target (origin form, or absolute form)."""

    method: str = "GET"
    uri: str = "/"
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    protocol: str = "HTTP/1.1"
    client_ip: str = "198.51.100.7"
    id: str = field(default="", compare=False)

    @property
    def path(self) -> str:
        """The target before ``?``."""
        return self.uri.split("?", 1)[0]

    @property
    def query(self) -> str:
        """The target after the first ``?`` (empty when there is none)."""
        return self.uri.split("?", 1)[1] if "?" in self.uri else ""

    def header(self, name: str) -> list[str]:
        """Every value of header ``name`` (case-insensitive), in order."""
        low = name.lower()
        return [v for k, v in self.headers if k.lower() == low]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the body as latin-1 text, which keeps every byte)."""
        return {
            "id": self.id,
            "method": self.method,
            "uri": self.uri,
            "protocol": self.protocol,
            "headers": [list(p) for p in self.headers],
            "body": self.body.decode("latin-1"),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RawRequest:
        """The inverse of :meth:`to_json`."""
        body = data.get("body", "")
        return cls(
            method=str(data.get("method", "GET")),
            uri=str(data.get("uri", "/")),
            headers=tuple((str(k), str(v)) for k, v in data.get("headers", ())),
            body=body.encode("latin-1") if isinstance(body, str) else bytes(body),
            protocol=str(data.get("protocol", "HTTP/1.1")),
            id=str(data.get("id", "")),
        )


_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def raw_from_request(req: Any, id: str = "") -> RawRequest:
    """A generated request (``method``, ``url``, ``headers``, ``body``) as its client sent it.

    The target is the URL's path and query (the fragment is never sent); the
    headers keep their order, with ``Host`` first from the URL when the
    request has none, and a ``Content-Length`` at the end when there is a
    body or the method carries one and none was given (a client sends it,
    and CRS flags a POST without one). The body is UTF-8, or as carried
    when it is bytes.
    """
    url = str(getattr(req, "url", "/") or "/").split("#", 1)[0]
    authority = ""
    scheme, sep, rest = url.partition("://")
    if sep and scheme and "/" not in scheme and "?" not in scheme:
        authority, slash, target = rest.partition("/")
        authority, qmark, query = authority.partition("?")
        target = "/" + target if slash else "/"
        if qmark:
            target = "/?" + query
    else:
        target = url or "/"
    authority = authority.rpartition("@")[2]
    raw_headers = getattr(req, "headers", None) or ()
    items = raw_headers.items() if isinstance(raw_headers, Mapping) else raw_headers
    headers = [(str(k), str(v)) for k, v in items]
    names = {k.lower() for k, _ in headers}
    if "host" not in names:
        headers.insert(0, ("Host", authority or "www.example.com"))
    body = getattr(req, "body", b"") or b""
    data = (
        body
        if isinstance(body, bytes | bytearray)
        else str(body).encode("utf-8", "surrogateescape")
    )
    method = str(getattr(req, "method", "GET") or "GET")
    if "content-length" not in names and "transfer-encoding" not in names:
        if data or method.upper() in _BODY_METHODS:
            headers.append(("Content-Length", str(len(data))))
    protocol = str(getattr(req, "http_version", "") or "HTTP/1.1")
    client_ip = str(getattr(req, "client_ip", "") or "") or RawRequest.client_ip
    return RawRequest(
        method=method,
        uri=target,
        headers=tuple(headers),
        body=bytes(data),
        protocol=protocol,
        client_ip=client_ip,
        id=id,
    )
