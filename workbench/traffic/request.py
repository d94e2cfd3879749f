"""One HTTP request and every Rules-language field it carries.

A :class:`Request` is built from what a client sent (method, URL, headers,
body) and what the edge knows of the connection (client IP, country, ASN,
TLS version). :meth:`Request.fields` computes the field values the http
scheme defines (``workbench/rules_language/schemes.json``), as the Rules
language takes them: values as sent (no URL decoding, no path
normalisation; only cookie names are decoded, as on the platform), header
map keys in lower case, repeated headers and arguments kept in order.

    >>> req = Request("POST", "https://Example.com/login.PHP?next=%2Fhome&x",
    ...               headers={"Host": "example.com", "User-Agent": "curl/8.7",
    ...                        "Content-Type": "application/x-www-form-urlencoded",
    ...                        "Cookie": "sid=1; theme=dark"},
    ...               body="user=ann&pass=x+y", client_ip="203.0.113.9", country="FR", asn=3215)
    >>> f = req.fields()
    >>> f["http.request.uri"], f["http.request.uri.path.extension"], f["http.request.uri.args"]
    ('/login.PHP?next=%2Fhome&x', 'php', {'next': ['%2Fhome'], 'x': ['']})
    >>> f["http.request.headers"]["user-agent"], f["http.request.cookies"]["theme"]
    (['curl/8.7'], ['dark'])
    >>> f["http.request.body.form"], f["http.request.body.size"], f["ip.src.continent"]
    ({'user': ['ann'], 'pass': ['x+y']}, 17, 'EU')
    >>> req.fields(["ssl", "cf.ray_id"], ray_id="7d0a2b6c1e3f4a59")
    {'ssl': True, 'cf.ray_id': '7d0a2b6c1e3f4a59'}

Nothing here raises on odd input: bytes that are not UTF-8 become ``bytes``
field values (see :mod:`workbench.traffic.textvalues`), a URL without a
scheme is read as a path, a bad client IP leaves ``ip.src`` missing.
"""

from __future__ import annotations

import inspect
import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from typing import Any, Generic, TypeVar

from ..rules_language import MANAGED, get_scheme
from .bodies import Part, cookies, grouped, media_type, multipart, pairs, sniff_mime
from .geo import continent, in_eu
from .header_pairs import HeaderParts, Headers, dict_parts, lower_names, text_pairs
from .textvalues import as_text, ascii_lower, byte_length, field_text

#: How much of a body the edge inspects (``http.request.body.raw`` beyond it is cut and
#: ``http.request.body.truncated`` is true); 128 KB, the documented Enterprise limit.
BODY_LIMIT = 128 * 1024

#: Values of ``cf.*`` fields the workbench does not simulate: WAF attack scores read
#: 100 ("not scored", as the platform documents), every other field its type's empty value.
CF_DEFAULTS: dict[str, Any] = {
    "cf.waf.score": 100,
    "cf.waf.score.sqli": 100,
    "cf.waf.score.xss": 100,
    "cf.waf.score.rce": 100,
}

T = TypeVar("T")


class _once(Generic[T]):  # noqa: N801 - used like functools.cached_property
    """A value computed on first read, then stored on the instance.

    ``functools.cached_property`` takes a lock on every first read in Python 3.11,
    which costs more than most of these parts; a replay reads them millions of times.
    """

    def __init__(self, fn: Callable[[Any], T]) -> None:
        self.fn = fn
        self.name = fn.__name__

    def __get__(self, obj: Any, owner: Any = None) -> T:
        value = self.fn(obj)
        obj.__dict__[self.name] = value
        return value


class Request:
    """A request as the edge sees it; fields are computed on demand and cached per part.

    ``url`` is absolute (``https://host/path?query``) or a request target
    (``/path?query``, the host then comes from the ``Host`` header).
    ``headers`` is a mapping or a list of ``(name, value)`` pairs (repeated
    headers). ``tls_version`` defaults to ``TLSv1.3`` for ``https`` and
    ``""`` for ``http``. ``label`` is what the request really is (traffic
    generators set it; it is no field). ``timestamp``, when set, is when the
    request happened (imported logs; a time without a zone is UTC); the pipeline
    uses it for the event time.
    """

    def __init__(
        self,
        method: Any = "GET",
        url: Any = "/",
        headers: Headers = None,
        body: Any = "",
        client_ip: Any = "",
        country: Any = "",
        asn: Any = 0,
        tls_version: Any = None,
        http_version: Any = "HTTP/1.1",
        label: Any = "",
        timestamp: datetime | None = None,
    ) -> None:
        # Plain str and int (the common case) are kept as they are, without a call: this
        # runs once per replayed request.
        self.method = method if type(method) is str else as_text(method)
        self.url = url if type(url) is str else as_text(url)
        if type(headers) is dict and (parts := dict_parts(headers)) is not None:
            # A dict of text (what generators give): its names and values are at hand here,
            # so the parts every replay reads are made now, without a pass over the pairs.
            self.headers: list[tuple[str, str]] = list(headers.items())
            self.__dict__["_header_parts"] = parts
        else:
            self.headers = text_pairs(headers)
        self.body = body if type(body) is str else as_text(body)
        self.client_ip = (client_ip if type(client_ip) is str else as_text(client_ip)).strip()
        self.country = (country if type(country) is str else as_text(country)).strip().upper()
        self.asn = asn if type(asn) is int else _int(asn)
        self.tls_version = (
            tls_version if tls_version is None or type(tls_version) is str else as_text(tls_version)
        )
        version = http_version if type(http_version) is str else as_text(http_version)
        self.http_version = version or "HTTP/1.1"
        self.label = label if type(label) is str else as_text(label)
        self.timestamp = timestamp

    @classmethod
    def from_raw(cls, raw: Any) -> Request:
        """A Request from any object with the attributes of one (a generator's ``RawRequest``)."""
        if isinstance(raw, Request):
            return raw
        # A plain object keeps its attributes in __dict__: reading them there skips the
        # class look-up of getattr, once per attribute of every replayed request.
        found = getattr(raw, "__dict__", None)
        if type(found) is dict and not _has_properties(type(raw)):
            get = found.get
        else:

            def get(name: str, default: Any = None) -> Any:
                return getattr(raw, name, default)

        return cls(
            get("method", "GET"),
            get("url", "/"),
            get("headers"),
            get("body", ""),
            get("client_ip", ""),
            get("country", ""),
            get("asn", 0),
            get("tls_version"),
            get("http_version", "HTTP/1.1"),
            get("label", ""),
            get("timestamp"),
        )

    def __repr__(self) -> str:
        return f"Request({self.method!r}, {self.url!r}, label={self.label!r})"

    # -- parsed parts (each computed once) ---------------------------------------
    @_once
    def _target(self) -> tuple[str, str, str, str]:
        """``(scheme, authority, path, query)`` of the URL; the fragment is dropped."""
        url = self.url.split("#", 1)[0]
        scheme, sep, rest = url.partition("://")
        if sep and scheme and "/" not in scheme and "?" not in scheme:
            authority, slash, target = rest.partition("/")
            authority, qmark, query = authority.partition("?")  # "https://a.com?x" has no path
            if qmark:
                return ascii_lower(scheme), authority, "/", query
            path, _, query = ("/" + target if slash else "/").partition("?")
            return ascii_lower(scheme), authority, path, query
        path, _, query = url.partition("?")
        scheme = "https" if self.tls_version is None or self.tls_version else "http"
        return scheme, "", path or "/", query

    @_once
    def _header_parts(self) -> HeaderParts:
        """Header names, values and lower-case names (ASCII letters only), in request order."""
        if not self.headers:
            return (), (), []
        names, values = zip(*self.headers, strict=True)
        return names, values, lower_names(names)

    @_once
    def header_map(self) -> dict[str, list[str]]:
        """Header values by lower-case name, in request order."""
        _, values, keys = self._header_parts
        out = dict(zip(keys, [[v] for v in values], strict=True))
        if len(out) == len(keys):
            return out  # no repeated name: the common case
        out = {}
        for key, value in zip(keys, values, strict=True):
            out.setdefault(key, []).append(value)
        return out

    def header(self, name: str) -> str:
        """The first value of header ``name`` (lower case), or ``""``."""
        _, values, keys = self._header_parts
        # Two scans of a few names in C: cheaper than building the map for one look-up.
        return values[keys.index(name)] if name in keys else ""

    @property
    def scheme(self) -> str:
        """``https`` or ``http``."""
        return self._target[0]

    @property
    def host(self) -> str:
        """The ``Host`` header, else the URL's authority (without user info)."""
        return self.header("host") or self._target[1].rpartition("@")[2]

    @property
    def path(self) -> str:
        """The URI path as sent."""
        return self._target[2]

    @property
    def query(self) -> str:
        """The query string as sent, without the ``?``."""
        return self._target[3]

    @property
    def uri(self) -> str:
        """Path and query (``/a?b=1``)."""
        return self.path + ("?" + self.query if self.query else "")

    @_once
    def args(self) -> list[tuple[str, str]]:
        """The query's ``name=value`` pairs, undecoded."""
        return pairs(self.query)

    @_once
    def _body_type(self) -> tuple[str, dict[str, str]]:
        return media_type(self.header("content-type"))

    @_once
    def _inspected_body(self) -> tuple[str, bool]:
        """The body as far as the edge inspects it, and whether it was cut."""
        if byte_length(self.body) <= BODY_LIMIT:
            return self.body, False
        data = field_text(self.body)
        raw = data if isinstance(data, bytes) else data.encode("utf-8")
        return as_text(raw[:BODY_LIMIT]), True

    @_once
    def form(self) -> list[tuple[str, str]]:
        """The form fields of an ``application/x-www-form-urlencoded`` body, undecoded."""
        if self._body_type[0] != "application/x-www-form-urlencoded":
            return []
        return pairs(self._inspected_body[0])

    @_once
    def parts(self) -> list[Part]:
        """The parts of a ``multipart/form-data`` body."""
        kind, params = self._body_type
        if kind != "multipart/form-data":
            return []
        return multipart(self._inspected_body[0], params.get("boundary", ""))

    @_once
    def _ip(self) -> str | None:
        return _valid_ip(self.client_ip)

    @_once
    def _ascii(self) -> bool:
        """True when every text of the request is ASCII: its parts are field values as they are."""
        names, values, _ = self._header_parts
        return (
            self.url.isascii()
            and self.body.isascii()
            and "".join(names).isascii()
            and "".join(values).isascii()
        )

    # -- fields ------------------------------------------------------------------
    def fields(
        self,
        names: Iterable[str] | None = None,
        *,
        ray_id: str = "",
        timestamp_ms: int | None = None,
        zone_name: str = "",
        zone_plan: str = "",
    ) -> dict[str, Any]:
        """Field values by name: ``names`` only, or every field the request can carry.

        ``ray_id``, ``timestamp_ms`` and the zone come from the pipeline: they are not
        part of the request itself (``cf.ray_id``, ``http.request.timestamp.*``,
        ``cf.zone.*``). A name the scheme does not know raises ``KeyError``. Values
        may share lists with the request: read them, do not change them.
        """
        context = {
            "cf.ray_id": ray_id,
            "http.request.timestamp.sec": None if timestamp_ms is None else timestamp_ms // 1000,
            "http.request.timestamp.msec": timestamp_ms,
            "cf.zone.name": zone_name,
            "cf.zone.plan": zone_plan,
        }
        out: dict[str, Any] = {}
        for name in FIELD_NAMES if names is None else names:
            compute = _FIELDS.get(name)
            out[name] = compute(self) if compute is not None else _fixed(name, context)
        return out


def field_column(
    requests: Sequence[Request],
    name: str,
    *,
    ray_ids: Sequence[str] | None = None,
    times_ms: Sequence[int | None] | None = None,
    zone_name: str = "",
    zone_plan: str = "",
) -> list[Any]:
    """The values of field ``name`` for each request: :meth:`Request.fields`, a column at a time.

    The whole-table path builds its table this way: one loop per field is much
    cheaper than a dict per request.
    """
    compute = _FIELDS.get(name)
    if compute is not None:
        return [compute(r) for r in requests]
    n = len(requests)
    if name == "cf.ray_id":
        return list(ray_ids) if ray_ids is not None else [""] * n
    if name in ("http.request.timestamp.sec", "http.request.timestamp.msec"):
        if times_ms is None:
            return [None] * n
        if name.endswith(".msec"):
            return list(times_ms)
        return [None if t is None else t // 1000 for t in times_ms]
    return [_fixed(name, {"cf.zone.name": zone_name, "cf.zone.plan": zone_plan})] * n


def _fixed(name: str, context: Mapping[str, Any]) -> Any:
    """A field that is not computed from the request: the pipeline's context, or a default."""
    if name in context:
        return context[name]
    if name in CF_DEFAULTS:
        return CF_DEFAULTS[name]
    if _known(name):
        return None  # not simulated: the field reads as its empty value
    raise KeyError(f"unknown field {name!r}")


def bodies_as_sent(bodies: Sequence[str]) -> bool:
    """Whether each of ``bodies`` is its own inspected body (see ``Request._inspected_body``),
    told for all at once: all ASCII (a character a byte) and none over :data:`BODY_LIMIT`."""
    return all(map(str.isascii, bodies)) and max(map(len, bodies), default=0) <= BODY_LIMIT


def _has_properties(kind: type) -> bool:
    """Whether a class gives attributes some other way than its instances' __dict__."""
    found = _PROPERTIES.get(kind)
    if found is None:
        found = _PROPERTIES[kind] = hasattr(kind, "__getattr__") or any(
            hasattr(kind, name) for name in _RAW_NAMES
        )
    return found


_PROPERTIES: dict[type, bool] = {}


#: The attributes :meth:`Request.from_raw` reads, in the order of the constructor's arguments.
_RAW_NAMES = tuple(inspect.signature(Request.__init__).parameters)[1:]


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


@cache
def _known(name: str) -> bool:
    return get_scheme(MANAGED).field_type(name) is not None


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_CANONICAL_V4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")


def _valid_ip(text: str) -> str | None:
    """The canonical text of an IP address, or None when ``text`` is not one."""
    if _CANONICAL_V4.fullmatch(text):
        return text  # the common case, without ipaddress's slower parser
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


def _texts(values: list[str], ascii: bool = False) -> list[Any]:
    if ascii:
        return values  # nothing to convert: the common case, and the hot one
    return [v if v.isascii() else field_text(v) for v in values]


def _map(groups: dict[str, list[str]], ascii: bool = False) -> dict[Any, list[Any]]:
    if ascii:
        return groups
    return {(k if k.isascii() else field_text(k)): _texts(v) for k, v in groups.items()}


def epoch_ms(when: datetime) -> int:
    """Milliseconds since the epoch; a time without a zone is read as UTC (logs are)."""
    aware = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return int(aware.timestamp() * 1000)


def path_extension(path: str) -> str:
    """The extension of a URL path's last segment, ASCII-lowered ("" for none)."""
    last = path.rpartition("/")[2]
    return ascii_lower(last.rpartition(".")[2]) if "." in last else ""


def _accepted_languages(header: str) -> list[str | bytes]:
    """Language tags of Accept-Language, by quality (highest first, ties in order)."""
    tags = []
    for i, piece in enumerate(header.split(",")):
        tag, _, params = piece.partition(";")
        tag = tag.strip()
        if not tag:
            continue
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        tags.append((-q, i, tag))
    return [field_text(tag) for _, _, tag in sorted(tags)]


def _full_uri(r: Request) -> str | bytes:
    return field_text(f"{r.scheme}://{r.host}{r.uri}")


def _tls(r: Request) -> str | bytes:
    if r.tls_version is not None:
        return field_text(r.tls_version)
    return "TLSv1.3" if r.scheme == "https" else ""


def _parts_list(pick: Callable[[Part], list[str]]) -> Callable[[Request], Any]:
    return lambda r: [_texts(pick(p)) for p in r.parts]


# The fields a request carries, each computed from the request alone.
_FIELDS: dict[str, Callable[[Request], Any]] = {
    "http.request.method": lambda r: field_text(r.method),
    "http.request.version": lambda r: field_text(r.http_version),
    "http.request.uri": lambda r: field_text(r.uri),
    "http.request.uri.path": lambda r: field_text(r.path),
    "http.request.uri.path.extension": lambda r: field_text(path_extension(r.path)),
    "http.request.uri.query": lambda r: field_text(r.query),
    "http.request.uri.args": lambda r: _map(grouped(r.args), r._ascii),
    "http.request.uri.args.names": lambda r: _texts([n for n, _ in r.args], r._ascii),
    "http.request.uri.args.values": lambda r: _texts([v for _, v in r.args], r._ascii),
    "http.request.full_uri": _full_uri,
    "http.host": lambda r: field_text(r.host),
    "http.user_agent": lambda r: field_text(r.header("user-agent")),
    "http.referer": lambda r: field_text(r.header("referer")),
    "http.cookie": lambda r: field_text("; ".join(r.header_map.get("cookie", []))),
    "http.x_forwarded_for": lambda r: field_text(
        ", ".join(r.header_map.get("x-forwarded-for", []))
    ),
    "http.request.cookies": lambda r: _map(cookies(r.header_map.get("cookie", []))),
    "http.request.accepted_languages": lambda r: _accepted_languages(r.header("accept-language")),
    "http.request.headers": lambda r: _map(r.header_map, r._ascii),
    "http.request.headers.names": lambda r: _texts(list(r._header_parts[0]), r._ascii),
    "http.request.headers.values": lambda r: _texts(list(r._header_parts[1]), r._ascii),
    "http.request.headers.truncated": lambda r: False,
    "http.request.body.raw": lambda r: field_text(r._inspected_body[0]),
    "http.request.body.size": lambda r: byte_length(r.body),
    "http.request.body.truncated": lambda r: r._inspected_body[1],
    "http.request.body.mime": lambda r: sniff_mime(r._inspected_body[0]),
    "http.request.body.form": lambda r: _map(grouped(r.form), r._ascii),
    "http.request.body.form.names": lambda r: _texts([n for n, _ in r.form], r._ascii),
    "http.request.body.form.values": lambda r: _texts([v for _, v in r.form], r._ascii),
    "http.request.body.multipart": lambda r: _map(
        grouped([(n, p.value) for p in r.parts for n in p.names[:1]])
    ),
    "http.request.body.multipart.values": lambda r: _texts([p.value for p in r.parts]),
    "http.request.body.multipart.names": _parts_list(lambda p: p.names),
    "http.request.body.multipart.filenames": _parts_list(lambda p: p.filenames),
    "http.request.body.multipart.content_types": _parts_list(lambda p: p.content_types),
    "http.request.body.multipart.content_dispositions": _parts_list(lambda p: p.dispositions),
    "http.request.body.multipart.content_transfer_encodings": _parts_list(
        lambda p: p.transfer_encodings
    ),
    "ip.src": lambda r: r._ip,
    "ip.src.country": lambda r: field_text(r.country),
    "ip.src.asnum": lambda r: r.asn,
    "ip.src.continent": lambda r: continent(r.country),
    "ip.src.is_in_european_union": lambda r: in_eu(r.country),
    "ssl": lambda r: r.scheme == "https",
    "cf.tls_version": _tls,
    "cf.edge.server_port": lambda r: 443 if r.scheme == "https" else 80,
    "cf.client.bot": lambda r: False,
    "cf.bot_management.verified_bot": lambda r: False,
}
# The platform's legacy names read the same values; raw.* fields are the values before
# any rewrite, and the workbench rewrites nothing.
for _old, _new in [
    ("ip.geoip.country", "ip.src.country"),
    ("ip.geoip.asnum", "ip.src.asnum"),
    ("ip.geoip.continent", "ip.src.continent"),
    ("ip.geoip.is_in_european_union", "ip.src.is_in_european_union"),
    ("raw.http.request.full_uri", "http.request.full_uri"),
    ("raw.http.request.uri", "http.request.uri"),
    ("raw.http.request.uri.path", "http.request.uri.path"),
    ("raw.http.request.uri.path.extension", "http.request.uri.path.extension"),
    ("raw.http.request.uri.query", "http.request.uri.query"),
    ("raw.http.request.uri.args", "http.request.uri.args"),
    ("raw.http.request.uri.args.names", "http.request.uri.args.names"),
    ("raw.http.request.uri.args.values", "http.request.uri.args.values"),
]:
    _FIELDS[_old] = _FIELDS[_new]

#: Every request field :meth:`Request.fields` computes by default (context fields included).
FIELD_NAMES: tuple[str, ...] = (
    *_FIELDS,
    "cf.ray_id",
    "http.request.timestamp.sec",
    "http.request.timestamp.msec",
    "cf.zone.name",
    "cf.zone.plan",
    *CF_DEFAULTS,
)


def _crs_rules(r: Request) -> list[int]:
    # Deferred: the CRS program loads its catalogue on first use, and most replays never
    # run a managed OWASP rule.
    from ..rulesets.crs.runtime import fired_ids

    return fired_ids(r)


# Managed-only (the http_managed scheme), and computed only when a plan's rule reads it:
# not part of FIELD_NAMES, so ``fields()`` without names does not run the CRS program.
_FIELDS["cf.waf.crs.rules"] = _crs_rules


def _crs2_rules(r: Request) -> list[int]:
    # Deferred as _crs_rules: the old OWASP package's CRS 2.2.9 program, its run kept on the
    # request (_crs2_result) beside the CRS 3 one.
    from ..rulesets.crs.runtime_crs2 import fired_ids

    return fired_ids(r)


_FIELDS["cf.waf.crs2.rules"] = _crs2_rules

#: The managed-only fields a request carries: what replays over stored logs need stored.
MANAGED_FIELD_NAMES: tuple[str, ...] = ("cf.waf.crs.rules", "cf.waf.crs2.rules")
