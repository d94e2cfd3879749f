"""The variables (collections) ModSecurity rules read, built from a request as libmodsecurity 3.0.15 builds them.

:class:`Variables` takes a :class:`~.request.RawRequest` and answers a rule's
target list (:func:`parse_targets`) with the (name, value) pairs the engine
would hand the operator, in the engine's order, names as it logs them
(``ARGS:q``, ``REQUEST_HEADERS:User-Agent``, ``REQUEST_URI``), exclusions
(``!REQUEST_COOKIES:/__utm/``) applied and counts (``&ARGS``) as one value.
It owns the request collections CRS 3.3 and 2.2 read: ARGS and its
GET/POST/NAMES kin, headers, cookies, the request line's parts, the body
(urlencoded, JSON, XML, multipart with FILES and MULTIPART_*), the body
processor's error flags, and the connection's addresses. TX, IP and other
engine state are the caller's (see ``other`` in :meth:`Variables.resolve`).

The set-up is the oracle's (:mod:`.oracle`): bodies read, XML and JSON
processors chosen by Content-Type (rules 200000/200001), a 13 MB body limit
with partial processing and 128 KB for bodies without files. Each collection
is built on first use and kept: a replay asks for many rules' targets of
one request. Values are bytes; the request's text (target, headers) becomes
bytes as UTF-8, as the Python binding passes it; names are decoded back from
UTF-8 (odd bytes as surrogate escapes).

    >>> v = Variables(RawRequest("GET", "/a.php?q=1&Q=2&id=x", headers=(("Cookie", "s=1; __utma=2"),)))
    >>> list(v.resolve(parse_targets("ARGS:q|REQUEST_COOKIES|!REQUEST_COOKIES:/__utm/|&ARGS")))
    [('ARGS:Q', b'2'), ('ARGS:q', b'1'), ('REQUEST_COOKIES:s', b'1'), ('ARGS', b'3')]
    >>> list(v.resolve(parse_targets("REQUEST_BASENAME|ARGS_NAMES")))
    [('REQUEST_BASENAME', b'a.php'), ('ARGS_NAMES:q', b'q'), ('ARGS_NAMES:Q', b'Q'), ('ARGS_NAMES:id', b'id')]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

from .request import RawRequest
from .variables_body import parse_json, split_args, uri_decode
from .variables_multipart import parse_multipart
from .variables_order import Collection
from .variables_targets import Target, count_label, excluded, key_regex, parse_targets
from .variables_xml import parse_xml

__all__ = ["OWNED", "Target", "Variables", "parse_targets"]

#: SecRequestBodyLimit and SecRequestBodyNoFilesLimit of the oracle's set-up.
BODY_LIMIT = 13107200
NO_FILES_LIMIT = 131072


_XML_CT = re.compile(rb"^(?:application(?:/soap\+|/)|text/)xml", re.DOTALL | re.MULTILINE)
_JSON_CT = re.compile(rb"^application/json", re.DOTALL | re.MULTILINE)
_SPACE = b" \t\n\v\f\r"

# Collections of (key, value) pairs; the *_NAMES ones list their source's keys.
_SETS = {
    "ARGS": "ARGS",
    "ARGS_GET": "ARGS_GET",
    "ARGS_POST": "ARGS_POST",
    "ARGS_NAMES": "ARGS",
    "ARGS_GET_NAMES": "ARGS_GET",
    "ARGS_POST_NAMES": "ARGS_POST",
    "REQUEST_HEADERS": "REQUEST_HEADERS",
    "REQUEST_HEADERS_NAMES": "REQUEST_HEADERS",
    "REQUEST_COOKIES": "REQUEST_COOKIES",
    "REQUEST_COOKIES_NAMES": "REQUEST_COOKIES",
    "FILES": "FILES",
    "FILES_NAMES": "FILES",
    "FILES_SIZES": "FILES_SIZES",
    "MULTIPART_PART_HEADERS": "MULTIPART_PART_HEADERS",
    "MULTIPART_FILENAME": "MULTIPART_FILENAME",
    "MULTIPART_NAME": "MULTIPART_NAME",
}
_NAME_SETS = frozenset(
    "ARGS_NAMES ARGS_GET_NAMES ARGS_POST_NAMES REQUEST_HEADERS_NAMES REQUEST_COOKIES_NAMES FILES_NAMES".split()
)
# One-value variables, by what sets them.
_BODY_SCALARS = frozenset(
    """REQBODY_ERROR REQBODY_ERROR_MSG REQBODY_PROCESSOR_ERROR REQBODY_PROCESSOR_ERROR_MSG
    REQUEST_BODY REQUEST_BODY_LENGTH FILES_COMBINED_SIZE INBOUND_DATA_ERROR FULL_REQUEST
    FULL_REQUEST_LENGTH MULTIPART_BOUNDARY_QUOTED MULTIPART_BOUNDARY_WHITESPACE
    MULTIPART_CRLF_LF_LINES MULTIPART_DATA_AFTER MULTIPART_DATA_BEFORE
    MULTIPART_FILE_LIMIT_EXCEEDED MULTIPART_HEADER_FOLDING MULTIPART_INVALID_HEADER_FOLDING
    MULTIPART_INVALID_PART MULTIPART_INVALID_QUOTING MULTIPART_LF_LINE MULTIPART_MISSING_SEMICOLON
    MULTIPART_STRICT_ERROR MULTIPART_UNMATCHED_BOUNDARY""".split()
)
_LINE_SCALARS = frozenset(
    """REQUEST_METHOD REQUEST_LINE REQUEST_PROTOCOL QUERY_STRING PATH_INFO REQUEST_FILENAME
    REQUEST_BASENAME REQUEST_URI REQUEST_URI_RAW""".split()
)
_OTHER_SCALARS = frozenset(
    """REMOTE_ADDR REMOTE_HOST REMOTE_PORT SERVER_ADDR SERVER_PORT UNIQUE_ID SERVER_NAME AUTH_TYPE
    REQBODY_PROCESSOR ARGS_COMBINED_SIZE URLENCODED_ERROR""".split()
)

# Other names SecLang accepts for a variable.
_ALIASES = {"MULTIPART_SEMICOLON_MISSING": "MULTIPART_MISSING_SEMICOLON"}

#: Every collection :meth:`Variables.resolve` answers itself.
OWNED = frozenset(_SETS) | _BODY_SCALARS | _LINE_SCALARS | _OTHER_SCALARS | {"XML", *_ALIASES}

Resolved = list[tuple[str, bytes]]
Other = Callable[[Target, Sequence[Target]], Sequence[tuple[str, bytes]]]


def _c_string(s: str) -> bytes:
    """A ``const char *`` argument of the binding: UTF-8, cut at the first NUL."""
    return s.encode("utf-8", "surrogateescape").split(b"\0", 1)[0]


class Variables:
    """The request's collections, built lazily; :meth:`resolve` answers a rule's targets."""

    #: The connection the oracle reports (the server side is not in a RawRequest).
    client_port = 40000
    server_addr = "203.0.113.1"
    server_port = 80

    def __init__(self, request: RawRequest) -> None:
        self.request = request
        self._line: dict[str, bytes] | None = None
        self._headers: dict[str, Any] | None = None
        self._body: dict[str, Any] | None = None
        self._sets: dict[tuple[str, int], Collection] = {}
        self._resolved: dict[tuple[tuple[Target, ...], int], tuple[tuple[str, bytes], ...]] = {}
        self._target_values: dict[tuple[Target, tuple[Target, ...], int], Resolved] = {}
        # (id of the list, phase) -> (the list itself, which keeps the id taken; its answer)
        self._by_identity: dict[
            tuple[int, int], tuple[Sequence[Target], tuple[tuple[str, bytes], ...]]
        ] = {}

    # -- the request line -------------------------------------------------------

    def _request_line(self) -> dict[str, bytes]:
        if self._line is not None:
            return self._line
        r = self.request
        method = _c_string(r.method)
        uri = _c_string(r.uri)
        version = _c_string(r.protocol.split("/", 1)[1] if "/" in r.protocol else "1.1")
        no_fragment = uri.split(b"#", 1)[0]
        path_raw, _, query = no_fragment.partition(b"?")
        path = uri_decode(path_raw)
        decoded = uri_decode(no_fragment)
        parsed = decoded
        if decoded and decoded[0:1] != b"/":
            # An absolute-form target: REQUEST_URI drops "scheme://host".
            scheme = decoded.find(b":") + 1
            if decoded.find(b"//", scheme) == scheme and scheme > 0:
                slash = decoded.find(b"/", scheme + 2)
                if slash >= 0:
                    parsed = decoded[slash:]
        cut = max(path.rfind(b"/"), path.rfind(b"\\"))
        self._line = {
            "REQUEST_METHOD": method,
            "REQUEST_LINE": method + b" " + uri + b" HTTP/" + version,
            "REQUEST_PROTOCOL": b"HTTP/" + version,
            "QUERY_STRING": query,
            "PATH_INFO": path,
            "REQUEST_FILENAME": path,
            "REQUEST_BASENAME": path[cut + 1 :] if cut >= 0 and len(path) > cut + 1 else b"",
            "REQUEST_URI": parsed,
            "REQUEST_URI_RAW": uri,
        }
        return self._line

    def _get_args(self) -> tuple[list[tuple[bytes, bytes]], bool]:
        query = self._request_line()["QUERY_STRING"]
        return split_args(query) if query else ([], False)

    # -- headers ----------------------------------------------------------------

    def set_body_processor(self, name: str) -> None:
        """``ctl:requestBodyProcessor=NAME`` in phase 1: the body is parsed with ``name``
        (``XML``, ``JSON``, ``URLENCODED``, ``MULTIPART``) when phase 2 reads it."""
        self._request_headers()["REQBODY_PROCESSOR"] = name.strip().upper().encode()

    def _request_headers(self) -> dict[str, Any]:
        if self._headers is not None:
            return self._headers
        headers = Collection()
        cookies = Collection()
        h: dict[str, Any] = {"REQUEST_HEADERS": headers, "REQUEST_COOKIES": cookies}
        body_type = ""
        processor = b""
        for name, value in self.request.headers:
            k = name.encode("utf-8", "surrogateescape")
            v = value.encode("utf-8", "surrogateescape")
            headers.add(k, v)
            low = k.lower()
            if low == b"authorization":
                h["AUTH_TYPE"] = v.split(b" ")[0]
            elif low == b"cookie":
                _add_cookies(cookies, v)
            elif low == b"content-type":
                lv = v.lower()
                if lv.startswith(b"multipart/form-data"):
                    body_type, processor = "MULTIPART", b"MULTIPART"
                if lv.startswith(b"application/x-www-form-urlencoded"):
                    body_type, processor = "URLENCODED", b"URLENCODED"
            elif low == b"host":
                h["SERVER_NAME"] = v.split(b":")[0]
        # Rules 200000 and 200001 (phase 1) pick XML, then JSON, from any Content-Type.
        types = [v.lower() for _, v in headers.get(b"Content-Type")]
        if any(_XML_CT.search(t) for t in types):
            processor = b"XML"
        if any(_JSON_CT.search(t) for t in types):
            processor = b"JSON"
        h["body_type"] = body_type
        h["REQBODY_PROCESSOR"] = processor
        self._headers = h
        return h

    # -- the body ---------------------------------------------------------------

    def _request_body(self) -> dict[str, Any]:
        if self._body is not None:
            return self._body
        h = self._request_headers()
        raw = self.request.body
        body = raw[:BODY_LIMIT]  # SecRequestBodyLimitAction ProcessPartial
        b: dict[str, Any] = {"INBOUND_DATA_ERROR": b"1" if len(raw) > BODY_LIMIT else b"0"}
        args: list[tuple[bytes, bytes]] = []
        post: list[tuple[bytes, bytes]] = []
        processor = h["REQBODY_PROCESSOR"]
        body_type = h["body_type"]
        # Bodies without files over SecRequestBodyNoFilesLimit are refused unread.
        limited = body_type == "URLENCODED" or processor in (b"JSON", b"XML")
        too_big = limited and len(body) > NO_FILES_LIMIT
        if too_big:
            _set_too_big(b)
        if processor == b"XML":
            if not too_big:
                b["xml"] = doc = parse_xml(body)
                _set_error(
                    b, "XML parsing error: XML: Failed to parse document." if doc.error else ""
                )
        elif processor == b"JSON":
            if not too_big:
                result = parse_json(body)
                args = result.args
                _set_error(b, "JSON parsing error: " + result.error if result.error else "")
        elif body_type == "MULTIPART":
            ct = h["REQUEST_HEADERS"].first(b"Content-Type")
            m = parse_multipart(ct or b"", body)
            b.update(m.flags)
            b["MULTIPART_PART_HEADERS"] = m.part_headers
            b["MULTIPART_NAME"] = [(n, n) for n in m.names]
            b["MULTIPART_FILENAME"] = [(n, n) for n in m.filenames]
            b["FILES"] = m.files
            b["FILES_SIZES"] = m.file_sizes
            b["FILES_COMBINED_SIZE"] = m.files_combined_size
            b["multipart_args"] = m.args
            if m.error:
                _set_error(b, "Multipart parsing error: " + m.error)
            elif m.no_files_length > NO_FILES_LIMIT:
                _set_too_big(b)
            else:
                _set_error(b, "")
        elif body_type == "URLENCODED":
            if not too_big:
                post, b["urlencoded_error"] = split_args(body)
                args = post
        else:
            _set_error(b, "")
        b["body_args"] = args
        b["post_args"] = post
        if body:
            b["REQUEST_BODY"] = body
            b["REQUEST_BODY_LENGTH"] = str(len(body)).encode()
        b["body"] = body
        self._body = b
        return b

    # -- collections --------------------------------------------------------------

    def _set(self, name: str, phase: int) -> Collection:
        """A key/value collection (phase 1: before the body is read)."""
        source = _SETS[name]
        if source in ("REQUEST_HEADERS", "REQUEST_COOKIES"):
            phase = 2  # the same in both phases
        elif source in ("ARGS", "ARGS_GET") and phase == 1:
            source, phase = "ARGS_GET", 2  # only the query's arguments exist yet
        cached = self._sets.get((source, phase))
        if cached is not None:
            return cached
        c = Collection()
        if source in ("REQUEST_HEADERS", "REQUEST_COOKIES"):
            c = self._request_headers()[source]
        elif phase == 1:
            pass
        elif source == "ARGS":
            c.extend(self._get_args()[0])
            body = self._request_body()
            c.extend(body["body_args"])
            c.extend(body.get("multipart_args", ()))
        elif source == "ARGS_GET":
            c.extend(self._get_args()[0])
        elif source == "ARGS_POST":
            body = self._request_body()
            c.extend(body["post_args"])
            c.extend(body.get("multipart_args", ()))
        else:
            c.extend(self._request_body().get(source, ()))
        self._sets[(source, phase)] = c
        return c

    def scalar(self, name: str, phase: int = 2) -> bytes:
        """The value of a one-value variable ("" when the engine has not set it)."""
        name = _ALIASES.get(name, name)
        if name in _LINE_SCALARS:
            return self._request_line()[name]
        if name in _BODY_SCALARS:
            if phase == 1:
                return b""
            if name.startswith("FULL_REQUEST"):
                return self._full_request(name)
            return self._request_body().get(name, b"")
        r = self.request
        if name in ("REMOTE_ADDR", "REMOTE_HOST"):
            return r.client_ip.encode()
        if name == "REMOTE_PORT":
            return str(self.client_port).encode()
        if name == "SERVER_ADDR":
            return self.server_addr.encode()
        if name == "SERVER_PORT":
            return str(self.server_port).encode()
        if name == "UNIQUE_ID":
            return r.id.encode()  # the engine's is a timestamp and a random number
        if name in ("SERVER_NAME", "AUTH_TYPE", "REQBODY_PROCESSOR"):
            return self._request_headers().get(name, b"")
        if name == "ARGS_COMBINED_SIZE":
            pairs = self._get_args()[0] + (self._request_body()["body_args"] if phase == 2 else [])
            return b"%f" % sum(len(k) + len(v) for k, v in pairs) if pairs else b""
        if name == "URLENCODED_ERROR":
            error = self._get_args()[1] or (
                phase == 2 and self._request_body().get("urlencoded_error", False)
            )
            return b"1" if error else b"0"
        raise KeyError(name)

    def _full_request(self, name: str) -> bytes:
        """FULL_REQUEST: "name: value" lines of the headers, two newlines, the body (no request line)."""
        lines = b"".join(
            k + b": " + v + b"\n" for k, v in self._request_headers()["REQUEST_HEADERS"].items()
        )
        full = lines + b"\n\n" + self._request_body()["body"]
        return full if name == "FULL_REQUEST" else str(len(full)).encode()

    @property
    def body_error(self) -> bool:
        """REQBODY_ERROR is not 0: rule 200002 denies the request as phase 2 starts."""
        return _as_int(self.scalar("REQBODY_ERROR")) != 0

    @property
    def body_error_rule(self) -> int | None:
        """The body-processor rule that denies first (200002, 200003 or 200004), or None."""
        if self.body_error:
            return 200002
        if _as_int(self.scalar("MULTIPART_STRICT_ERROR")) != 0:
            return 200003
        if _as_int(self.scalar("MULTIPART_UNMATCHED_BOUNDARY")) == 1:
            return 200004
        return None

    def resolve(
        self, targets: Sequence[Target], phase: int = 2, other: Other | None = None
    ) -> Sequence[tuple[str, bytes]]:
        """The (name, value) pairs a rule with these targets inspects, in the engine's order.

        ``phase`` 1 answers as a phase-1 rule sees the request (no body yet);
        ``other`` answers collections this class does not own (TX, IP...): it
        gets the target and the exclusions of its collection.
        """
        phase = 1 if phase <= 1 else 2  # later phases see what phase 2 saw
        # A caller that keeps its parsed lists is answered by identity, without hashing.
        hit = self._by_identity.get((id(targets), phase))
        if hit is not None and hit[0] is targets:
            return hit[1]
        key = (tuple(targets), phase)
        cached = self._resolved.get(key)
        if cached is not None:
            self._by_identity[(id(targets), phase)] = (targets, cached)
            return cached
        out: Resolved = []
        cacheable = True
        for t, applied, mine in _plan(key[0]):
            if t.name not in OWNED:
                if other is None:
                    raise KeyError(f"{t.name} is not a request collection")
                values = list(other(t, mine))
                cacheable = False  # the caller's collections change as rules run
            else:
                vkey = (t, applied, phase)
                known = self._target_values.get(vkey)
                if known is None:
                    known = self._target_values[vkey] = self._values(t, applied, phase)
                values = known
            if t.count:
                out.append((count_label(t), str(len(values)).encode()))
            else:
                out.extend(values)
        if cacheable:
            # CRS repeats a few target lists in a hundred rules: answer them once (a tuple:
            # every rule reading the list shares it).
            kept = tuple(out)
            self._resolved[key] = kept
            self._by_identity[(id(targets), phase)] = (targets, kept)
            return kept
        return out

    def _values(self, t: Target, exclusions: Sequence[Target], phase: int) -> Resolved:
        name = t.name
        if name == "XML":
            return self._xml(t, phase)
        if name not in _SETS:
            return [(_ALIASES.get(name, name), self.scalar(name, phase))]
        c = self._set(name, phase)
        if t.key is None:
            pairs = c.items()
        elif t.is_regex:
            pairs = c.matching(key_regex(t.key))
        else:
            pairs = c.get(t.key.encode("utf-8", "surrogateescape"))
        if exclusions:
            pairs = [(k, v) for k, v in pairs if not excluded(k, exclusions)]
        prefix = name + ":"
        if name in _NAME_SETS:
            return [(prefix + k.decode("utf-8", "surrogateescape"), k) for k, _ in pairs]
        return [(prefix + k.decode("utf-8", "surrogateescape"), v) for k, v in pairs]

    def _xml(self, t: Target, phase: int) -> Resolved:
        doc = self._request_body().get("xml") if phase == 2 else None
        if doc is None:
            return []
        label = f"XML:{t.key}"
        if t.key == "/*":
            return [] if doc.root_text is None else [(label, doc.root_text)]
        if t.key == "//@*":
            return [(label, a) for a in doc.attributes]
        raise NotImplementedError(f"XPath {t.key!r} is not simulated (CRS uses /* and //@*)")


@functools.lru_cache(maxsize=4096)
def _plan(
    targets: tuple[Target, ...],
) -> tuple[tuple[Target, tuple[Target, ...], tuple[Target, ...]], ...]:
    """What :meth:`Variables.resolve` reads for a target list, worked out once per list: each
    target it keeps (not an exclusion, not excluded by name), the exclusions that narrow its
    values, and its collection's exclusions (for collections the caller owns)."""
    exclusions = [t for t in targets if t.negated]
    out = []
    for t in targets:
        if t.negated or any(e.name == t.name and e.key == t.key for e in exclusions):
            continue
        mine = tuple(e for e in exclusions if e.name == t.name)
        # Exclusions narrow whole-collection and regex targets, not a named key or a count.
        applied = mine if not t.count and (t.key is None or t.is_regex) else ()
        out.append((t, applied, mine))
    return tuple(out)


def _add_cookies(cookies: Collection, value: bytes) -> None:
    """Cookie pairs as ModSecurity splits them: ';', then the first '='; names left-trimmed."""
    pieces = value.split(b";")
    if pieces and not pieces[-1]:
        pieces.pop()
    if pieces:
        pieces[-1] = pieces[-1].rstrip(_SPACE)
    for piece in pieces:
        if not piece:
            continue
        name, _, val = piece.partition(b"=")
        name = name.lstrip(_SPACE)
        if name:
            cookies.add(name, val)


def _set_too_big(b: dict[str, Any]) -> None:
    b["REQBODY_ERROR"] = b["INBOUND_DATA_ERROR"] = b"1"
    b["REQBODY_ERROR_MSG"] = b"Request body excluding files is bigger than the maximum expected."


def _set_error(b: dict[str, Any], message: str) -> None:
    b["REQBODY_ERROR"] = b"1" if message else b"0"
    b["REQBODY_PROCESSOR_ERROR"] = b["REQBODY_ERROR"]
    if message:
        # Multipart messages quote body bytes, kept as latin-1 text.
        b["REQBODY_ERROR_MSG"] = b["REQBODY_PROCESSOR_ERROR_MSG"] = message.encode("latin-1")


def _as_int(value: bytes) -> int:
    """``@eq``'s reading of a value: its leading integer, else 0."""
    m = re.match(rb"\s*[-+]?\d+", value)
    return int(m.group()) if m else 0
