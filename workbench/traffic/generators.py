"""Seeded generators of labelled raw HTTP requests: benign traffic and attacks.

Every request is built from a seed alone, so the same ``(n, seed, mix)`` gives
the same list on every machine. Benign traffic imitates browsers, JSON APIs
and well-behaved bots, with the awkward but harmless text real users send
(apostrophes, quotes, SQL-ish words, code in JSON bodies). Attacks are
composed from techniques rather than copied from a list: a payload core, then
evasions (case, comments, whitespace, encodings), then a place in the request
(query, path, form or JSON body, cookie, User-Agent, Referer). The vocabulary
is data in ``tables/benign.json`` and ``tables/attacks.json``; the payload
builders are in :mod:`workbench.traffic.payloads`.

    >>> reqs = generate(4, seed=7, mix={"benign": 1, "sqli": 1})
    >>> sorted({r.label for r in reqs})
    ['benign', 'sqli']
    >>> generate(4, seed=7, mix={"benign": 1, "sqli": 1}) == reqs
    True
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

from .payloads import TABLES as ATTACK_TABLES
from .payloads import (
    cmdi_payload,
    cms_exploit,
    sqli_payload,
    traversal_payload,
    xss_payload,
)
from .payloads import token as _token

__all__ = [
    "ATTACK_LABELS",
    "BENIGN_LABELS",
    "DEFAULT_MIX",
    "LABELS",
    "RawRequest",
    "generate",
]


def _tables(name: str) -> dict[str, Any]:
    """One JSON file of ``tables/``: the vocabulary the builders draw from, kept as data."""
    text = resources.files(__package__).joinpath("tables", name).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


#: Hosts, networks, user agents, pages, form and API shapes of benign traffic.
_BENIGN = _tables("benign.json")
#: Where attacks are placed and what scanners send (``tables/attacks.json``).
_ATTACKS = ATTACK_TABLES

BENIGN_LABELS = ("benign", "api", "bot")
ATTACK_LABELS = ("sqli", "xss", "cmdi", "traversal", "scanner", "cms")
LABELS = BENIGN_LABELS + ATTACK_LABELS

#: Proportions used when ``generate`` gets no ``mix``.
DEFAULT_MIX: dict[str, float] = {
    "benign": 0.55,
    "api": 0.15,
    "bot": 0.05,
    "sqli": 0.05,
    "xss": 0.05,
    "cmdi": 0.04,
    "traversal": 0.04,
    "scanner": 0.04,
    "cms": 0.03,
}


#: The domain the builders write; :func:`generate` moves requests to another one.
DOMAIN = "example.com"
_HOST = re.compile(r"^(?:[a-z0-9-]+\.)*example\.com$")
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


@dataclass
class RawRequest:
    """One request as a client sent it, with the label of what it really is.

    ``url`` is absolute (``https://host/path?query``) and keeps the client's
    encoding; ``headers`` maps header names (as sent) to one value each;
    ``technique`` says how an attack was built (empty for benign traffic).
    """

    method: str
    url: str
    headers: dict[str, str]
    body: str
    client_ip: str
    country: str
    asn: int
    label: str
    technique: str = ""


def generate(
    n: int, seed: int = 0, mix: dict[str, float] | None = None, *, domain: str = DOMAIN
) -> list[RawRequest]:
    """``n`` labelled requests in a seeded order, proportioned by ``mix`` (label -> weight).

    Counts follow the weights exactly (largest remainder), then the labels are
    shuffled. Unknown labels or negative weights raise ``ValueError``. The
    requests go to ``domain`` and its subdomains (``www.``, ``shop.``, ``api.``...):
    pass a zone's name so that its events show its own hosts. Only where a request
    is sent changes (its URL's host and its ``Host``, ``Origin`` and ``Referer``);
    the same seed gives the same requests on any domain.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    domain = _check_domain(domain)
    weights = dict(DEFAULT_MIX if mix is None else mix)
    unknown = sorted(set(weights) - set(LABELS))
    if unknown:
        raise ValueError(f"unknown labels {unknown}; use some of {', '.join(LABELS)}")
    if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        raise ValueError("weights must be >= 0 and not all zero")
    rng = random.Random(f"workbench.traffic:{seed}")
    labels = _allocate(n, weights)
    rng.shuffle(labels)
    made = [_BUILDERS[label](rng) for label in labels]
    return made if domain == DOMAIN else [_moved(r, domain) for r in made]


def _check_domain(domain: str) -> str:
    name = domain.strip().lower().rstrip(".") if isinstance(domain, str) else ""
    if not name or len(name) > 253 or not all(_LABEL.match(p) for p in name.split(".")):
        raise ValueError(f"domain must be a host name such as 'shop.example', got {domain!r}")
    return name


#: A subdomain named like the zone's first label would read twice (``shop.shop.example``).
_OTHER_LABEL = {"shop": "store", "blog": "news", "api": "app", "www": "web", "hooks": "webhooks"}


def _moved_host(host: str, domain: str) -> str:
    if not _HOST.match(host):
        return host
    sub = host[: -len(DOMAIN)].rstrip(".")
    if sub and sub.split(".")[-1] == domain.split(".")[0]:
        sub = ".".join([*sub.split(".")[:-1], _OTHER_LABEL.get(sub.split(".")[-1], "app")])
    return f"{sub}.{domain}" if sub else domain


def _moved_url(url: str, domain: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not _HOST.match(host):
        return url
    netloc = parts.netloc.replace(host, _moved_host(host, domain), 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _moved(raw: RawRequest, domain: str) -> RawRequest:
    """``raw`` sent to ``domain``: the URL's host and the headers that name it."""
    headers = dict(raw.headers)
    for name, value in raw.headers.items():
        low = name.lower()
        if low == "host":
            headers[name] = _moved_host(value, domain)
        elif low in ("origin", "referer"):
            headers[name] = _moved_url(value, domain)
    return replace(raw, url=_moved_url(raw.url, domain), headers=headers)


def _allocate(n: int, weights: dict[str, float]) -> list[str]:
    total = sum(weights.values())
    names = [k for k in LABELS if k in weights]
    exact = {k: n * weights[k] / total for k in names}
    counts = {k: int(exact[k]) for k in names}
    rest = sorted(names, key=lambda k: (-(exact[k] - counts[k]), LABELS.index(k)))
    for k in rest[: n - sum(counts.values())]:
        counts[k] += 1
    return [k for k in names for _ in range(counts[k])]


# -- clients ------------------------------------------------------------------


def _client(rng: random.Random, kind: str) -> tuple[str, str, int]:
    prefix, country, asn = rng.choice(NETWORKS[kind])
    parts = prefix.split(".")
    while len(parts) < 4:
        parts.append(str(rng.randint(1, 254)))
    return ".".join(parts), country, asn


def _browser_headers(rng: random.Random, host: str, referer: bool = True) -> dict[str, str]:
    ua = rng.choice(BROWSER_UAS)
    h = {
        "Host": host,
        "User-Agent": ua,
        "Accept": rng.choice(ACCEPTS),
        "Accept-Language": rng.choice(LANGUAGES),
        "Accept-Encoding": "gzip, deflate, br",
    }
    if "Chrome/" in ua and "Edg/" not in ua and rng.random() < 0.8:
        v = ua.split("Chrome/")[1].split(".")[0]
        h["sec-ch-ua"] = f'"Chromium";v="{v}", "Google Chrome";v="{v}", "Not-A.Brand";v="99"'
        h["sec-ch-ua-mobile"] = "?1" if "Mobile" in ua else "?0"
        h["sec-ch-ua-platform"] = '"Android"' if "Android" in ua else '"Windows"'
        h["Sec-Fetch-Site"] = rng.choice(["same-origin", "none", "cross-site"])
        h["Sec-Fetch-Mode"] = "navigate"
    if referer and rng.random() < 0.6:
        h["Referer"] = _referer(rng, host)
    if rng.random() < 0.75:
        h["Cookie"] = _cookies(rng)
    return h


def _referer(rng: random.Random, host: str) -> str:
    r = rng.random()
    if r < 0.35:
        return f"https://{host}{_page_path(rng)}"
    if r < 0.7:
        q = quote_plus(rng.choice(SEARCHES))
        return f"https://www.google.com/search?q={q}&sourceid=chrome&ie=UTF-8"
    return rng.choice(REFERERS)


def _cookies(rng: random.Random) -> str:
    parts = [f"session={_hex(rng, 32)}"]
    if rng.random() < 0.7:
        parts.append(f"_ga=GA1.2.{rng.randint(10**8, 10**9)}.{rng.randint(1600000000, 1760000000)}")
    if rng.random() < 0.4:
        parts.append(
            f"_gid=GA1.2.{rng.randint(10**8, 10**9)}.{rng.randint(1600000000, 1760000000)}"
        )
    parts.extend(c for c in EXTRA_COOKIES if rng.random() < 0.15)
    if rng.random() < 0.2:
        cart = json.dumps({"items": rng.randint(1, 5), "note": rng.choice(SEARCHES)})
        parts.append("cart=" + quote(cart, safe=""))
    return "; ".join(parts)


def _hex(rng: random.Random, k: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(k))


def _page_path(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.2:
        return rng.choice(PAGES)
    if r < 0.4:
        return f"/products/{rng.choice(SLUGS)}-{rng.randint(100, 99999)}"
    if r < 0.55:
        return f"/blog/{rng.randint(2015, 2026)}/{rng.randint(1, 12):02d}/{rng.choice(SLUGS)}"
    if r < 0.7:
        return f"/category/{rng.choice(CATEGORIES)}"
    if r < 0.8:
        return f"/account/orders/{rng.randint(100000, 999999)}"
    return f"/{rng.choice(CATEGORIES)}/{rng.choice(SLUGS)}/"


def _url(host: str, path: str, query: str = "") -> str:
    return f"https://{host}{path}" + (f"?{query}" if query else "")


def _request(rng: random.Random, kind: str, label: str, **kw: Any) -> RawRequest:
    ip, country, asn = _client(rng, kind)
    return RawRequest(client_ip=ip, country=country, asn=asn, label=label, **kw)


# -- benign -------------------------------------------------------------------


def _benign(rng: random.Random) -> RawRequest:
    host = rng.choice(HOSTS)
    h = _browser_headers(rng, host)
    r = rng.random()
    method, body, query = "GET", "", ""
    if r < 0.3:
        path = rng.choice(ASSETS).format(h=_hex(rng, 8), n=rng.randint(1, 400))
        h["Accept"] = "*/*"
    elif r < 0.5:
        path = _page_path(rng)
        query = _tracking(rng) if rng.random() < 0.4 else ""
    elif r < 0.7:
        path = rng.choice(["/search", "/shop/search", "/help/search", "/blog/search"])
        query = _search_query(rng)
    elif r < 0.8:
        path = f"/category/{rng.choice(CATEGORIES)}"
        query = _filters(rng)
    elif r < 0.9:
        method, path = "POST", rng.choice(FORM_PATHS)
        body = _form_body(rng)
        h["Content-Type"] = "application/x-www-form-urlencoded"
        h["Origin"] = f"https://{host}"
    else:
        method, path = rng.choice(WP_BENIGN)
        if method == "POST":
            body = f"action=heartbeat&_nonce={_hex(rng, 10)}&interval=60&has_focus=true"
            h["Content-Type"] = "application/x-www-form-urlencoded; charset=UTF-8"
    return _request(
        rng, "home", "benign", method=method, url=_url(host, path, query), headers=h, body=body
    )


def _tracking(rng: random.Random) -> str:
    parts = []
    if rng.random() < 0.5:
        parts += [
            f"utm_source={rng.choice(UTM_SOURCES)}",
            "utm_medium=cpc",
            f"utm_campaign={quote_plus(rng.choice(CAMPAIGNS))}",
        ]
    if rng.random() < 0.3:
        parts.append(f"gclid={_token(rng, 40)}")
    if rng.random() < 0.2:
        parts.append(f"fbclid=IwAR{_token(rng, 50)}")
    if rng.random() < 0.2:
        nxt = rng.choice(
            ["/cart", "/account/settings?tab=billing", "https://shop.example.com/checkout"]
        )
        parts.append(f"{rng.choice(['next', 'return_to', 'redirect'])}={quote(nxt, safe='')}")
    return "&".join(parts) or f"ref={_token(rng, 8)}"


def _search_query(rng: random.Random) -> str:
    text = rng.choice(SEARCHES)
    enc = quote_plus(text) if rng.random() < 0.7 else quote(text, safe="'()!*")
    q = f"q={enc}"
    if rng.random() < 0.5:
        q += f"&page={rng.randint(1, 9)}"
    if rng.random() < 0.3:
        q += "&sort=" + rng.choice(["relevance", "price_asc", "price_desc", "newest"])
    return q


def _filters(rng: random.Random) -> str:
    parts = [f"page={rng.randint(1, 30)}", f"per_page={rng.choice([12, 24, 48])}"]
    if rng.random() < 0.5:
        parts.append(f"price_min={rng.randint(0, 50)}&price_max={rng.randint(60, 500)}")
    if rng.random() < 0.4:
        parts.append("color=" + quote(rng.choice(["#ff0000", "navy blue", "black/white"]), safe=""))
    if rng.random() < 0.3:
        parts.append("filter=" + quote(rng.choice(FILTERS), safe=""))
    if rng.random() < 0.3:
        parts.append("size[]=" + rng.choice(["S", "M", "L", "10", "10.5"]))
    return "&".join(parts)


def _form_body(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.3:
        user = rng.choice(NAMES).lower().replace(" ", ".").replace("'", "")
        return f"username={quote_plus(user + '@example.org')}&password={quote_plus(_password(rng))}&remember=1"
    if kind < 0.7:
        return "&".join(
            [
                f"name={quote_plus(rng.choice(NAMES))}",
                f"email={quote_plus('someone@example.org')}",
                f"subject={quote_plus(rng.choice(SEARCHES))}",
                f"message={quote_plus(rng.choice(MESSAGES))}",
            ]
        )
    return "&".join(
        [
            f"address1={quote_plus(rng.choice(ADDRESSES))}",
            f"city={quote_plus(rng.choice(['Dublin', 'Coeur d' + chr(39) + 'Alene', 'New York']))}",
            f"phone={quote_plus('+1 (555) 010-0' + str(rng.randint(100, 199)))}",
            f"notes={quote_plus(rng.choice(MESSAGES))}",
        ]
    )


def _password(rng: random.Random) -> str:
    alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!@#$%^&*-_=+.,?"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(10, 18)))


def _api(rng: random.Random) -> RawRequest:
    host = rng.choice(["api.example.com", "www.example.com", "hooks.example.com"])
    h = {
        "Host": host,
        "User-Agent": rng.choice(API_UAS),
        "Accept": "application/json",
        "Authorization": "Bearer " + ".".join(_token(rng, k) for k in (36, 120, 43)),
    }
    r = rng.random()
    method, body, query = "GET", "", ""
    if r < 0.3:
        path = rng.choice(API_PATHS).format(n=rng.randint(1, 99999))
        query = f"limit={rng.choice([10, 50, 100])}&cursor={_token(rng, 24)}"
        if rng.random() < 0.4:
            query += "&fields=" + quote("id,name,email,created_at", safe=",")
        if rng.random() < 0.3:
            query += "&filter=" + quote(rng.choice(FILTERS), safe="")
    elif r < 0.5:
        method, path = "POST", "/graphql"
        body = json.dumps(rng.choice(GRAPHQL))
    elif r < 0.65:
        method, path = "POST", rng.choice(["/webhooks/stripe", "/webhooks/github", "/hooks/ci"])
        body = json.dumps(WEBHOOKS[path.rsplit("/", 1)[1]](rng))
        h.pop("Authorization")
        h["X-Signature"] = "sha256=" + _hex(rng, 64)
    elif r < 0.85:
        method, path = "POST", rng.choice(["/api/v1/snippets", "/api/v1/comments", "/api/v2/notes"])
        body = json.dumps(rng.choice(SNIPPETS), ensure_ascii=rng.random() < 0.5)
    else:
        method = rng.choice(["PUT", "PATCH", "DELETE"])
        path = f"/api/v1/orders/{rng.randint(1000, 99999)}"
        if method != "DELETE":
            body = json.dumps(
                {"status": rng.choice(["paid", "shipped"]), "note": rng.choice(MESSAGES)}
            )
    if body:
        h["Content-Type"] = "application/json"
    return _request(
        rng,
        rng.choice(["home", "cloud"]),
        "api",
        method=method,
        url=_url(host, path, query),
        headers=h,
        body=body,
    )


def _bot(rng: random.Random) -> RawRequest:
    ua, kind, paths = rng.choice(BOTS)
    host = rng.choice(HOSTS)
    h = {"Host": host, "User-Agent": ua, "Accept": "*/*", "Accept-Encoding": "gzip"}
    path = rng.choice(paths) if paths else _page_path(rng)
    return _request(
        rng,
        kind,
        "bot",
        method=rng.choice(["GET", "GET", "HEAD"]) if kind == "monitor" else "GET",
        url=_url(host, path),
        headers=h,
        body="",
    )


# -- attacks ------------------------------------------------------------------


def _attack(rng: random.Random, label: str, payload: str, technique: str) -> RawRequest:
    """Put ``payload`` somewhere in an otherwise ordinary request."""
    host = rng.choice(HOSTS)
    h = _browser_headers(rng, host, referer=False)
    if rng.random() < 0.35:
        h = {"Host": host, "User-Agent": rng.choice(API_UAS + BROWSER_UAS), "Accept": "*/*"}
    place = rng.choices(PLACES, weights=PLACE_WEIGHTS)[0]
    method, body, path, query = "GET", "", _page_path(rng), ""
    name = rng.choice(PARAMS[label])
    if place == "query":
        extra = "&".join(f"{k}={v}" for k, v in rng.sample(PLAIN_ARGS, rng.randint(0, 2)))
        pair = f"{name}={_encode(rng, payload)}"
        query = "&".join(x for x in rng.sample([pair, extra], 2) if x)
    elif place == "path":
        path = rng.choice(["/products/", "/download/", "/files/", "/view/", "/api/v1/items/"])
        path += _encode(rng, payload, path=True)
    elif place == "form":
        method = "POST"
        body = f"{name}={_encode(rng, payload, form=True)}&submit=Send"
        h["Content-Type"] = "application/x-www-form-urlencoded"
    elif place == "json":
        method = rng.choice(["POST", "PUT"])
        body = _json_escape(
            rng, {name: payload, "ref" if name == "id" else "id": rng.randint(1, 9999)}
        )
        h["Content-Type"] = "application/json"
    elif place == "cookie":
        h["Cookie"] = f"session={_hex(rng, 32)}; {name}={_encode(rng, payload, cookie=True)}"
    elif place == "user-agent":
        h["User-Agent"] = rng.choice(["", "Mozilla/5.0 "]) + payload
    else:
        h["Referer"] = f"https://{host}/search?q={_encode(rng, payload)}"
    return _request(
        rng,
        "attack",
        label,
        method=method,
        url=_url(host, path, query),
        headers=h,
        body=body,
        technique=f"{technique}@{place}",
    )


_UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"


def _encode(
    rng: random.Random, s: str, path: bool = False, form: bool = False, cookie: bool = False
) -> str:
    """Percent-encode ``s`` the way one client or evasion might."""
    r = rng.random()
    must = " #&%+?\r\n\t\x0b\x0c\x00;=" + ("/" if path and rng.random() < 0.5 else "")
    if cookie:
        must += ',"'
    if r < 0.3:  # minimal: only what would break the request
        return "".join(_pct(rng, c) if c in must or ord(c) > 126 or ord(c) < 32 else c for c in s)
    if r < 0.55:
        return (
            quote_plus(s, safe="/" if path else "")
            if form or rng.random() < 0.5
            else quote(s, safe="")
        )
    if r < 0.7:  # every byte
        return "".join(_pct(rng, c) for c in s)
    if r < 0.85:  # double encoding
        once = quote(s, safe="")
        return once.replace("%", "%25")
    # random subset
    return "".join(
        _pct(rng, c)
        if (c in must or c not in _UNRESERVED and rng.random() < 0.6 or ord(c) > 126)
        else c
        for c in s
    )


def _pct(rng: random.Random, c: str) -> str:
    out = "".join(f"%{b:02X}" for b in c.encode("utf-8"))
    return out.lower() if rng.random() < 0.3 else out


def _json_escape(rng: random.Random, obj: dict[str, object]) -> str:
    text = json.dumps(obj)
    if rng.random() < 0.25:  # the escaping Go and .NET serializers apply
        for a, b in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027")):
            text = text.replace(a, b)
    return text


def _sqli(rng: random.Random) -> RawRequest:
    payload, technique = sqli_payload(rng)
    return _attack(rng, "sqli", payload, technique)


def _xss(rng: random.Random) -> RawRequest:
    payload, technique = xss_payload(rng)
    return _attack(rng, "xss", payload, technique)


def _cmdi(rng: random.Random) -> RawRequest:
    payload, technique = cmdi_payload(rng)
    return _attack(rng, "cmdi", payload, technique)


def _traversal(rng: random.Random) -> RawRequest:
    payload, technique = traversal_payload(rng)
    if rng.random() < 0.7:
        # Traversal lives mostly in file-ish parameters and paths, often pre-encoded.
        host = rng.choice(HOSTS)
        h = _browser_headers(rng, host, referer=False)
        if rng.random() < 0.5:
            path = rng.choice(FILE_PATHS)
            query = f"{rng.choice(PARAMS['traversal'])}={_encode_keep(rng, payload)}"
        else:
            path = rng.choice(["/static/", "/download/", "/images/", "/cgi-bin/", "/assets/"])
            path += _encode_keep(rng, payload, path=True)
            query = ""
        return _request(
            rng,
            "attack",
            "traversal",
            method="GET",
            url=_url(host, path, query),
            headers=h,
            body="",
            technique=technique + "@url",
        )
    return _attack(rng, "traversal", payload, technique)


def _encode_keep(rng: random.Random, s: str, path: bool = False) -> str:
    """Encode a payload whose own escapes (``%2e``, ``%c0%af``) must survive as typed."""
    if "%" in s and rng.random() < 0.8:
        return s.replace(" ", "%20").replace("#", "%23").replace("?", "%3F" if path else "?")
    return _encode(rng, s, path=path)


def _scanner(rng: random.Random) -> RawRequest:
    host = rng.choice(HOSTS)
    r = rng.random()
    h = {"Host": host, "User-Agent": rng.choice(SCANNER_UAS), "Accept": "*/*"}
    path, query, technique = rng.choice(SCANNER_PATHS), "", "scanner/ua+probe"
    if r < 0.25:  # a probe with an ordinary-looking client
        h["User-Agent"] = rng.choice(BROWSER_UAS + API_UAS)
        technique = "scanner/probe"
    elif r < 0.35:
        h.update(rng.choice(SCANNER_HEADERS))
        path, technique = _page_path(rng), "scanner/header"
    elif r < 0.45:
        h["User-Agent"] = rng.choice(GOOGLEBOT_UAS)
        path, technique = _page_path(rng), "scanner/fake-googlebot"
    elif r < 0.65:
        path, technique = _page_path(rng), "scanner/ua"
        query = f"id={rng.randint(1, 99)}"
    return _request(
        rng,
        "attack",
        "scanner",
        method=rng.choice(["GET", "GET", "HEAD"]),
        url=_url(host, path, query),
        headers=h,
        body="",
        technique=technique,
    )


def _cms(rng: random.Random) -> RawRequest:
    host = rng.choice(HOSTS)
    h = _browser_headers(rng, host, referer=False)
    spec = cms_exploit(rng)
    h.update(spec.get("headers", {}))
    if spec.get("body"):
        h.setdefault("Content-Type", "application/x-www-form-urlencoded")
    return _request(
        rng,
        "attack",
        "cms",
        method=spec["method"],
        url=_url(host, spec["path"], spec.get("query", "")),
        headers=h,
        body=spec.get("body", ""),
        technique=spec["technique"],
    )


_BUILDERS = {
    "benign": _benign,
    "api": _api,
    "bot": _bot,
    "sqli": _sqli,
    "xss": _xss,
    "cmdi": _cmdi,
    "traversal": _traversal,
    "scanner": _scanner,
    "cms": _cms,
}


# == data: clients and benign content ===========================================


HOSTS = _BENIGN["hosts"]

#: Network prefixes by kind of client: (prefix, country, ASN).
NETWORKS = _BENIGN["networks"]

BROWSER_UAS = _BENIGN["browser_uas"]
API_UAS = _BENIGN["api_uas"]
GOOGLEBOT_UAS = _BENIGN["googlebot_uas"]
#: Benign bots: (User-Agent, network kind, paths or None for site pages).
BOTS = _BENIGN["bots"]
ACCEPTS = _BENIGN["accepts"]
LANGUAGES = _BENIGN["languages"]
REFERERS = _BENIGN["referers"]
EXTRA_COOKIES = _BENIGN["extra_cookies"]
PAGES = _BENIGN["pages"]
SLUGS = _BENIGN["slugs"]
CATEGORIES = _BENIGN["categories"]
ASSETS = _BENIGN["assets"]
FORM_PATHS = _BENIGN["form_paths"]
WP_BENIGN = _BENIGN["wp_benign"]
UTM_SOURCES = _BENIGN["utm_sources"]
CAMPAIGNS = _BENIGN["campaigns"]
FILTERS = _BENIGN["filters"]
NAMES = _BENIGN["names"]
ADDRESSES = _BENIGN["addresses"]
SEARCHES = _BENIGN["searches"]
MESSAGES = _BENIGN["messages"]
API_PATHS = _BENIGN["api_paths"]
GRAPHQL = _BENIGN["graphql"]
SNIPPETS = _BENIGN["snippets"]
PLAIN_ARGS = _BENIGN["plain_args"]


def _stripe_event(rng: random.Random) -> dict[str, object]:
    return {
        "id": "evt_" + _token(rng, 24),
        "object": "event",
        "type": "payment_intent.succeeded",
        "data": {
            "object": {
                "id": "pi_" + _token(rng, 24),
                "amount": rng.randint(100, 99999),
                "currency": "usd",
                "description": "Order #" + str(rng.randint(1000, 9999)),
                "metadata": {"customer_note": rng.choice(MESSAGES)},
            }
        },
    }


def _github_event(rng: random.Random) -> dict[str, object]:
    msgs = [
        "fix: escape quotes in search box",
        "refactor: drop unused tables from schema",
        "feat: add UNION support to the query builder",
        "chore: update deps && lockfile",
        "docs: explain `select` vs `where`",
        "fix(api): handle ' in names (O'Brien)",
    ]
    return {
        "ref": "refs/heads/main",
        "after": _hex(rng, 40),
        "repository": {"full_name": "example/shop", "html_url": "https://github.com/example/shop"},
        "commits": [
            {
                "id": _hex(rng, 40),
                "message": rng.choice(msgs),
                "url": "https://github.com/example/shop/commit/" + _hex(rng, 40),
            }
        ],
    }


def _ci_event(rng: random.Random) -> dict[str, object]:
    return {
        "pipeline": "deploy",
        "status": rng.choice(["passed", "failed"]),
        "log_tail": "$ make test\n42 passed in 3.1s\n$ ./deploy.sh --env prod",
        "url": f"https://ci.example.com/builds/{rng.randint(1, 9999)}",
    }


WEBHOOKS = {"stripe": _stripe_event, "github": _github_event, "ci": _ci_event}


# == data: attacks ===============================================================

PLACES = _ATTACKS["places"]
PLACE_WEIGHTS = _ATTACKS["place_weights"]
PARAMS = _ATTACKS["params"]
FILE_PATHS = _ATTACKS["file_paths"]
SCANNER_UAS = _ATTACKS["scanner_uas"]
SCANNER_HEADERS = _ATTACKS["scanner_headers"]
SCANNER_PATHS = _ATTACKS["scanner_paths"]
