"""Fuzzing the API from its own OpenAPI description: never a 5xx, never a traceback.

schemathesis generates requests for every operation; most are aimed at real
zones, filters and rules of a demo account so that they reach the core rather
than stopping at a 404. A second, schema-free test throws arbitrary bytes,
content types and paths at the app. A third walks the same description itself
and puts odd text in every string it sends (body fields and keys, query values
and names, path ids): lone surrogates, bidi controls, NUL and other controls,
combining marks, astral characters and 4 KB strings; after every write that
succeeds, every list of the zone must still answer 200.

Every answer must be a v4 envelope. The run is bounded and derandomized, the
same locally and in CI (well under three minutes on two cores); ``FUZZ_LONG=1``
runs the longer fuzz (90 generated requests per operation, 600 arbitrary ones,
30 odd-text inputs per operation) and ``FUZZ_EXAMPLES=n`` sets the examples per
operation of the odd-text test for a bigger run, whose figures (inputs, 5xx,
slowest request) the last test prints.
"""

import itertools
import json
import os
import time
import warnings
import zlib
from urllib.parse import quote, urlencode

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

with warnings.catch_warnings():  # starlette prefers httpx2; httpx is what we have
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from workbench.api import create_app, demo_workbench
from workbench.api.transport import InProcessTransport

wb = demo_workbench(seed=0)
app = create_app(wb)
AUTH = {"X-Auth-Email": wb.account.email, "X-Auth-Key": wb.account.api_key}
ZONES = [z.id for z in wb.zones]
for zone in ZONES:
    wb.firewall.create_rules(
        zone, [{"filter": {"expression": f'http.host eq "{zone[:6]}.example"'}, "action": "block"}]
    )
    wb.firewall.page_rules.create(
        zone,
        {
            "targets": [{"target": "url", "constraint": {"operator": "matches", "value": "*/x*"}}],
            "actions": [{"id": "waf", "value": "off"}],
        },
    )

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

schema = schemathesis.openapi.from_asgi("/client/v4/openapi.json", app)
# Bounded (examples per operation) and derandomized, well under three minutes on two cores,
# locally as in CI; FUZZ_LONG=1 for the longer run.
CI = bool(os.environ.get("CI"))
LONG = bool(os.environ.get("FUZZ_LONG"))
ODD_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "30" if LONG else "20"))
FUZZ = settings(
    max_examples=90 if LONG else 40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def _known(zone, kind):
    fw = wb.firewall
    if kind == "filter_id":
        return [f.id for f in fw.list_filters(zone, per_page=100).items]
    if kind == "rule_id":
        return [r.id for r in fw.list_rules(zone, per_page=100).items] + [
            p.id for p in fw.page_rules.list(zone)
        ]
    return []


def _aim(case):
    """Point three requests in four at existing objects (deterministically)."""
    params = case.path_parameters or {}
    if "zone_id" not in params:
        return
    roll = zlib.crc32(repr(sorted(params.items())).encode())
    if roll % 4:
        params["zone_id"] = ZONES[roll % len(ZONES)]
        for kind in ("filter_id", "rule_id"):
            known = _known(params["zone_id"], kind)
            if kind in params and known and roll % 3:
                params[kind] = known[roll % len(known)]


SEEN = {"requests": 0, "statuses": {}, "5xx": 0, "slowest": (0.0, ""), "times": []}


def timed(label, send):
    """``send()``'s response, keeping the slowest request of the module."""
    started = time.perf_counter()
    response = send()
    took = time.perf_counter() - started
    SEEN["times"].append(took)
    if took > SEEN["slowest"][0]:
        SEEN["slowest"] = (took, label[:160])
    return response


def check(response):
    """One answer: never a 5xx, never a traceback, always a v4 envelope."""
    SEEN["requests"] += 1
    SEEN["statuses"][response.status_code] = SEEN["statuses"].get(response.status_code, 0) + 1
    if response.status_code >= 500:
        SEEN["5xx"] += 1
    assert response.status_code < 500, response.text
    assert "Traceback" not in response.text
    content_type = response.headers["content-type"]  # schemathesis gives lists of values
    assert (content_type[0] if isinstance(content_type, list) else content_type) == (
        "application/json"
    )
    body = response.json()
    assert {"success", "errors", "messages", "result"} <= set(body)
    assert body["success"] is (response.status_code < 400)
    assert isinstance(body["errors"], list) and isinstance(body["messages"], list)
    if body["success"]:
        assert body["errors"] == []
    else:
        assert body["errors"] and body["result"] is None
        for error in body["errors"]:
            assert isinstance(error["code"], int) and isinstance(error["message"], str)


@schema.parametrize()
@FUZZ
def test_generated_requests(case):
    _aim(case)
    check(timed(f"{case.method} {case.formatted_path}", lambda: case.call(headers=AUTH)))


client = TestClient(app, raise_server_exceptions=True)
PATHS = [
    "/zones",
    "/zones/{z}",
    "/zones/{z}/filters",
    "/zones/{z}/firewall/rules",
    "/zones/{z}/pagerules",
    "/filters/validate-expr",
]


@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    path=st.sampled_from(PATHS),
    body=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)),
    ctype=st.sampled_from(
        ["application/json", "text/plain", "", "application/json; charset=utf-8"]
    ),
    query=st.dictionaries(
        st.sampled_from(["page", "per_page", "paused", "id", "order"]),
        st.text(max_size=8),
        max_size=3,
    ),
)
@settings(
    max_examples=600 if LONG else 400,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_arbitrary_bytes(method, path, body, ctype, query):
    url = "/client/v4" + path.replace("{z}", ZONES[len(body) % 4])
    response = timed(
        f"{method} {url}",
        lambda: client.request(
            method, url, content=body, params=query, headers={**AUTH, "Content-Type": ctype}
        ),
    )
    check(response)


# -- odd text in every string of every operation ---------------------------------
odd_wb = demo_workbench(seed=1)
odd_app = create_app(odd_wb)
ODD_AUTH = {"X-Auth-Email": odd_wb.account.email, "X-Auth-Key": odd_wb.account.api_key}
ODD_ZONES = [z.id for z in odd_wb.zones]
odd_client = httpx.Client(
    transport=InProcessTransport(odd_app), base_url="http://workbench.internal", headers=ODD_AUTH
)
SPEC = odd_app.openapi()
OPERATIONS = [
    (method.upper(), path, op) for path, ops in SPEC["paths"].items() for method, op in ops.items()
]
ODD = {"inputs": 0, "writes_ok": 0, "operations": {}}

# Pieces of odd text; hypothesis' own characters() leaves surrogates out, so they come here.
SURROGATE = st.integers(0xD800, 0xDFFF).map(chr)
BIDI = st.sampled_from(
    list("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
)
CONTROL = st.sampled_from(list("\x00\x01\x1b\x7f\x85\u2028\u2029\ufeff\ufffe\uffff\ufffd"))
COMBINING = st.sampled_from(list("\u0301\u0300\u0336\u0489\u20dd\u1ab0\ufe0f"))
ASTRAL = st.integers(0x10000, 0x10FFFF).map(chr)
ENCODABLE = st.one_of(BIDI, CONTROL, COMBINING, ASTRAL, st.characters(), st.text(max_size=4))
# Odd but encodable text: what a write may store, and every list must then still render.
ODD_VALID = st.lists(ENCODABLE, max_size=10).map("".join)
ODD_TEXT = st.one_of(
    ODD_VALID,
    st.lists(st.one_of(SURROGATE, ENCODABLE), min_size=1, max_size=10).map("".join),
    # 4 KB strings, and lengths at the limits (expression 4096, description 500, ref 50, target 255)
    st.builds(
        lambda piece, n: (piece * n)[:n],
        st.one_of(SURROGATE, BIDI, CONTROL, COMBINING, ASTRAL, st.just("a")),
        st.sampled_from([4096, 4097, 500, 501, 50, 51, 255, 256]),
    ),
    st.builds(lambda a, b: a + "a" * 4096 + b, ENCODABLE, st.one_of(SURROGATE, ENCODABLE)),
)

EXPRESSIONS = st.one_of(
    st.integers(0, 10**6).map(lambda n: f'http.host eq "h{n}.example"'),
    st.integers(0, 10**6).map(lambda n: f'http.host eq "h{n}.example"'),
    st.tuples(st.integers(0, 10**6), ODD_VALID).map(
        lambda nt: f"http.request.uri.path contains {json.dumps(f'{nt[0]}{nt[1]}')}"
    ),
    ODD_TEXT.map(lambda t: f'http.host eq "{t}"'),
    ODD_TEXT.map(lambda t: f'http.host matches "{t}"'),
    ODD_TEXT,
)


def _ids(kind):
    """The ids of one kind (filter, rule, page_rule) that exist now, in every zone."""
    fw = odd_wb.firewall
    ids = []
    for zone in ODD_ZONES:
        if kind == "filter":
            ids += [f.id for f in fw.list_filters(zone, per_page=100).items][:3]
        elif kind == "rule":
            ids += [r.id for r in fw.list_rules(zone, per_page=100).items][:3]
        else:
            ids += [p.id for p in fw.page_rules.list(zone)][:3]
    return ids or ["0" * 32]


def existing(kind):
    """An id that exists when the example runs (deletes and creates change them)."""
    return st.integers(0, 10**6).map(lambda i: (ids := _ids(kind))[i % len(ids)])


def good_string(name, schema):
    """A string for the field ``name`` that gets far: an enum value, a fresh expression, an id..."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    return {
        "expression": EXPRESSIONS,
        "id": st.one_of(existing("filter"), existing("rule")),
        # A page rule's target, or an action's value: "off" is both (waf, security_level...).
        "value": st.one_of(st.just("off"), ODD_VALID.map(lambda t: f"*{t}*")),
        "name": st.integers(0, 10**6).map(lambda n: f"z{n}.example"),
        "phase": st.sampled_from(["http_request_firewall_custom", "http_request_firewall_managed"]),
    }.get(name, ODD_VALID)


def string_for(name, schema):
    """A string for the field ``name``: a value that gets far, odd but valid text, or odd text."""
    good = good_string(name, schema)
    return st.one_of(good, good, ODD_VALID, ODD_TEXT)


def from_schema(schema, name="", *, odd=True):
    """Values for a JSON schema: with ``odd``, every string (and some keys) odd now and then;
    without, values the schema allows (odd but encodable text included)."""
    if "anyOf" in schema:
        return st.one_of([from_schema(s, name, odd=odd) for s in schema["anyOf"]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([from_schema({**schema, "type": k}, name, odd=odd) for k in kind])
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        fixed = st.fixed_dictionaries(
            {k: from_schema(v, k, odd=odd) for k, v in props.items() if k in required},
            optional={k: from_schema(v, k, odd=odd) for k, v in props.items() if k not in required},
        )
        if not odd:
            return fixed
        extra = st.dictionaries(ODD_TEXT, ODD_TEXT, max_size=2)
        return st.builds(lambda a, b: {**b, **a}, fixed, st.one_of(st.just({}), st.just({}), extra))
    if kind == "array":
        items = from_schema(schema.get("items", {}), name, odd=odd)
        return st.lists(items, min_size=1, max_size=3 if odd else 1)
    if kind == "string":
        return string_for(name, schema) if odd else good_string(name, schema)
    if kind == "integer":
        low = schema.get("minimum", 0)
        fits = st.integers(low, min(schema.get("maximum", low + 100), low + 100))
        return st.one_of(fits, st.integers(-5, 2**31), ODD_TEXT) if odd else fits
    if kind == "boolean":
        return st.booleans() | ODD_TEXT if odd else st.booleans()
    if kind == "null":
        return st.none()
    return ODD_TEXT | st.integers() | st.none() if odd else st.just({})


def _strings(value, where=()):
    """Where the strings of ``value`` are (key paths), and where objects are (a key can go there)."""
    if isinstance(value, str):
        yield "string", where
    elif isinstance(value, dict):
        yield "object", where
        for key, inner in value.items():
            yield from _strings(inner, (*where, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _strings(inner, (*where, i))


def _one_odd(args):
    """A body the schema allows with one string (or one new key) made odd."""
    body, pick, text = args
    spots = list(_strings(body))
    if not spots:
        return body
    kind, where = spots[pick % len(spots)]
    if kind == "object":
        target = body
        for step in where:
            target = target[step]
        target[text] = "x"
    elif where:
        target = body
        for step in where[:-1]:
            target = target[step]
        target[where[-1]] = text
    else:
        return text
    return body


def bodies(schema):
    """Bodies for an operation: odd anywhere, or allowed with exactly one odd string or key."""
    return st.one_of(
        from_schema(schema),
        st.tuples(
            from_schema(schema, odd=False), st.integers(0, 50), st.one_of(ODD_VALID, ODD_TEXT)
        ).map(_one_odd),
    )


def _param_value(param, path, *, odd=True):
    """A query or path value as text: with ``odd``, odd text now and then."""
    schema = param.get("schema", {})
    name = param["name"]
    if param["in"] == "path":
        kind = {"filter_id": "filter", "rule_id": "page_rule" if "/pagerules/" in path else "rule"}
        if name == "zone_id":
            good = st.sampled_from(ODD_ZONES)
        elif name in kind:
            good = existing(kind[name])
        else:
            good = good_string(name, schema)
        return st.one_of(good, good, good, ODD_TEXT) if odd else good
    if schema.get("type") == "array":
        items = schema.get("items", {})
        return st.lists(string_for(name, items) if odd else good_string(name, items), max_size=3)
    if schema.get("type") == "boolean":
        good = st.sampled_from(["true", "false"])
    elif schema.get("type") == "integer":
        low = schema.get("minimum", 1)
        good = st.integers(low, schema.get("maximum", low + 20)).map(str) | st.just(f"{low}.0")
    else:
        return string_for(name, schema) if odd else good_string(name, schema)
    return st.one_of(good, st.integers(-3, 200).map(str), ODD_TEXT) if odd else good


MAX_URL = 16_000  # uvicorn (h11) takes request lines up to 16 KB


def _url(path, values):
    """The URL with every value percent-encoded as sent (surrogates as their UTF-8 bytes).

    Values are halved, longest first, until the URL fits a request line.
    """
    parts = {("path", k): v for k, v in values["path"].items()}
    parts |= {("query", k): v for k, v in values["query"].items()}
    odd = dict(values["odd_query"])

    def encode(text):
        return quote(text, safe="", errors="surrogatepass")

    while True:
        url = path
        for (where, name), value in parts.items():
            if where == "path":
                url = url.replace("{" + name + "}", encode(value))
        pairs = [(n, v) for (w, n), v in parts.items() if w == "query"] + list(odd.items())
        query = urlencode(pairs, doseq=True, errors="surrogatepass")
        url += "?" + query if query else ""
        if len(url) <= MAX_URL:
            return url
        key = max(parts, key=lambda k: len(str(parts[k])), default=None)
        if key is None or len(str(parts[key])) < len(str(odd)):
            odd = {k[: len(k) // 2]: v[: len(v) // 2] for k, v in odd.items()}
        elif isinstance(parts[key], list):
            parts[key] = [v[: len(v) // 2] for v in parts[key]]
        else:
            parts[key] = parts[key][: len(parts[key]) // 2]


RESEEDS = itertools.count()


def _ensure_objects():
    """Deletes in the fuzz remove the seed objects; put some back so requests reach the core."""
    fw = odd_wb.firewall
    for zone in ODD_ZONES:
        try:
            if not fw.list_rules(zone).items:
                expression = f'http.host eq "seed{next(RESEEDS)}.example"'
                fw.create_rules(zone, [{"filter": {"expression": expression}, "action": "block"}])
            if not fw.page_rules.list(zone):
                fw.page_rules.create(
                    zone,
                    {
                        "targets": [{"target": "url", "constraint": {"value": "*example.com/*"}}],
                        "actions": [{"id": "waf", "value": "off"}],
                    },
                )
        except Exception:  # a quota reached: the zone keeps what it has
            pass


def _timed(method, url, **kwargs):
    response = timed(f"{method} {url}", lambda: odd_client.request(method, url, **kwargs))
    check(response)
    return response


def _lists_still_answer(zone):
    for path in ("filters?per_page=100", "firewall/rules?per_page=100", "pagerules"):
        r = _timed("GET", f"/client/v4/zones/{zone}/{path}")
        assert r.status_code == 200, r.text
    assert _timed("GET", "/client/v4/zones?per_page=50").status_code == 200


def _one_odd_spot(args):
    """A request the description allows, with one path value, query value or name, body
    string or body key made odd (odd but encodable text, or not)."""
    values, pick, text = args
    spots = [("path", n) for n in values["path"]] + [("query", n) for n in values["query"]]
    spots.append(("odd_query", None))
    if values["body"] is not None:
        spots.append(("body", None))
    where, name = spots[pick % len(spots)]
    if where == "odd_query":
        values["odd_query"] = {text: "1"}
    elif where == "body":
        values["body"] = _one_odd((values["body"], pick // len(spots), text))
    elif isinstance(values[where][name], list):
        values[where][name] = [*values[where][name], text]
    else:
        values[where][name] = text
    return values


ODD_SETTINGS = settings(
    max_examples=ODD_EXAMPLES,
    deadline=None,
    derandomize=CI or not os.environ.get("FUZZ_RANDOM"),
    database=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.mark.parametrize(
    "method, path, op", OPERATIONS, ids=[f"{m} {p[len('/client/v4') :]}" for m, p, _ in OPERATIONS]
)
def test_odd_text_everywhere(method, path, op):
    params = op.get("parameters", [])
    body_schema = (
        op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    )

    def request(odd):
        return st.fixed_dictionaries(
            {
                "path": st.fixed_dictionaries(
                    {p["name"]: _param_value(p, path, odd=odd) for p in params if p["in"] == "path"}
                ),
                "query": st.fixed_dictionaries(
                    {},
                    optional={
                        p["name"]: _param_value(p, path, odd=odd)
                        for p in params
                        if p["in"] == "query"
                    },
                ),
                "odd_query": (
                    st.one_of(*[st.just({})] * 3, st.dictionaries(ODD_TEXT, ODD_TEXT, max_size=1))
                    if odd
                    else st.just({})
                ),
                "body": (
                    (bodies(body_schema) if odd else from_schema(body_schema, odd=False))
                    if body_schema
                    else st.none()
                ),
            }
        )

    values = st.one_of(
        # odd text anywhere, in any number of places
        request(odd=True),
        # what the description allows, with one path value, query value or name, body string
        # or body key made odd
        st.tuples(request(odd=False), st.integers(0, 100), st.one_of(ODD_VALID, ODD_TEXT)).map(
            _one_odd_spot
        ),
        # what the description allows; free text (descriptions, refs, targets) is odd but
        # encodable, so it is stored, and every list must still render it
        request(odd=False),
    )

    @given(values=values)
    @ODD_SETTINGS
    def run(values):
        _ensure_objects()
        ODD["inputs"] += 1
        stats = ODD["operations"].setdefault(f"{method} {path}", {"sent": 0, "2xx": 0})
        stats["sent"] += 1
        kwargs = {}
        if values["body"] is not None:
            # json.dumps writes surrogates as \ud800 escapes, as a client would send them.
            kwargs = {
                "content": json.dumps(values["body"]).encode("ascii"),
                "headers": {"Content-Type": "application/json"},
            }
        response = _timed(method, _url(path, values), **kwargs)
        if response.status_code < 300:
            stats["2xx"] += 1
            if method != "GET":
                ODD["writes_ok"] += 1
                zone = values["path"].get("zone_id")
                for z in [zone] if zone in ODD_ZONES else ODD_ZONES:
                    _lists_still_answer(z)

    run()


def test_fuzzing_covered_thousands_of_requests():
    # Runs after the fuzz tests in this module (file order).
    slowest, request = SEEN["slowest"]
    times = sorted(SEEN["times"])
    median, p99 = (times[len(times) // 2], times[len(times) * 99 // 100]) if times else (0, 0)
    print(
        f"\nfuzz: {SEEN['requests']} requests, {ODD['inputs']} of them odd-text inputs over "
        f"{len(ODD['operations'])} operations ({ODD['writes_ok']} writes accepted, each followed "
        f"by the zone's lists); 5xx: {SEEN['5xx']}; slowest request: {slowest * 1000:.1f} ms "
        f"({request}), median {median * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms; "
        f"statuses: {dict(sorted(SEEN['statuses'].items()))}"
    )
    for operation, stats in ODD["operations"].items():
        print(f"  {operation}: {stats}")
    assert SEEN["5xx"] == 0
    assert SEEN["requests"] >= 3000
    assert {200, 400, 404} <= set(SEEN["statuses"])
    # Every operation was hit, and odd but valid text got through the writes that store it.
    assert len(ODD["operations"]) == len(OPERATIONS)
    stored = [
        ODD["operations"][f"POST /client/v4/zones/{{zone_id}}/{kind}"]["2xx"]
        for kind in ("filters", "firewall/rules", "pagerules")
    ]
    assert ODD["writes_ok"] >= 10 and sum(stored) > 0, ODD["operations"]
    for zone in ODD_ZONES:
        _lists_still_answer(zone)
