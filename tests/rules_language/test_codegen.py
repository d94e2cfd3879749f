"""The generated per-request functions answer as recorded, and the inline shapes as the generic code.

``Expression.matches`` is a Python function generated from the typed tree
(codegen.py), with inline code for the common shapes (_codegen_fast.py) in
front of the generic code of each node. These tests check its answers on the
facts corpora and on awkward request values against the answers recorded from
the closure evaluator it replaced (evaluator_answers.py), the inline shapes
against the generic code on hypothesis-generated expressions and requests,
and that the expression text can never become code.
"""

import hashlib
import ipaddress
import json
from pathlib import Path

import evaluator_answers
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.rules_language import ExpressionError, codegen_runtime, compile_expression
from workbench.rules_language.codegen import generate_with_source
from workbench.rules_language.codegen_runtime import ipv4_int

pytestmark = pytest.mark.filterwarnings("ignore:__int__ returned non-int")
DATA = Path(__file__).parent / "data"
SHARED_EVAL = Path("/work/shared/facts/rules-eval-sample.jsonl")


def _rows(path):
    return [json.loads(line) for line in path.open(encoding="utf-8")] if path.exists() else []


CORPUS = _rows(DATA / "rules-corpus-sample.jsonl")
EVAL = _rows(DATA / "rules-eval-sample.jsonl") + _rows(SHARED_EVAL)

SAMPLES = [
    {
        "http.host": "www.example.com",
        "http.request.uri.path": "/admin/login.php",
        "http.request.uri.query": "id=1%20UNION%20SELECT",
        "http.user_agent": "Mozilla/5.0",
        "ip.src": "192.0.2.10",
        "ip.src.country": "US",
        "cf.waf.score": 15,
        "ssl": True,
        "http.request.headers": {"accept": ["application/json"]},
        "http.request.headers.names": ["Accept"],
        "cf.bot_management.detection_ids": [1, 5],
    },
    {"http.host": "API.example.org", "ip.src": "2001:db8::1", "cf.waf.score": 80, "ssl": False},
    {},
]

# Values a user or an importer may pass, including the awkward ones.
AWKWARD = [
    None,
    "",
    "a",
    "A.COM",
    "/api/x",
    "/wp-login.php",
    "é/café",
    "a\ud800b",  # a lone surrogate stands for its bytes
    b"/api/\xff",  # not UTF-8
    b"www.example.com",
    bytearray(b"/admin"),
    "192.0.2.1",
    "192.0.2.01",  # leading zero: not an address
    " 192.0.2.1",
    "::ffff:192.0.2.1",
    "2001:db8::1",
    "fe80::1%eth0",
    "10.1.0.5",
    "256.1.1.1",
    "1.2.3",
    "\x00",
    "x" * 200,
    b"192.0.2.1",
    ipaddress.ip_address("192.0.2.1"),
    ipaddress.ip_address("2001:db8::1"),
    0,
    -3,
    443,
    True,
    False,
]


def _requests_for(expr):
    """The sample requests, and each field of the expression set to each awkward value."""
    out = [dict(s) for s in SAMPLES]
    for name in expr.fields:
        for value in AWKWARD:
            out.append({**SAMPLES[0], name: value})
    return out


def _check(group, expr, cases, name=None):
    """The expression's answers to ``cases`` (request, lists) are the recorded ones."""
    evaluator_answers.check(group, name or evaluator_answers.key(expr.source), expr, cases)


def _inline_agrees_with_generic(expr, request, lists=None):
    generic, _ = generate_with_source(expr.tree, inline=False)
    try:
        want = generic(request, lists)
    except Exception as err:  # the generic code refuses a nonsensical value: so must we
        with pytest.raises(type(err)):
            expr.matches(request, lists)
        return
    got = expr.matches(request, lists)
    assert got is want, f"{expr.source!r} on {request!r}: inline {got}, generic {want}"


def _valid(rows):
    out = []
    for row in rows:
        try:
            out.append(compile_expression(row["expr"], row.get("scheme", "http")))
        except ExpressionError:
            continue
    return out


@pytest.mark.parametrize("index", range(len(EVAL)))
def test_eval_corpus_answers_as_the_facts_and_as_recorded(index):
    row = EVAL[index]
    expr = compile_expression(row["expr"])
    assert expr.matches(row["request"], row.get("lists")) is row["match"]
    lists = row.get("lists")
    digest = hashlib.sha1(json.dumps(row, sort_keys=True).encode()).hexdigest()[:12]
    name = f"{row['expr'][:60]} #{digest}"
    _check("eval", expr, [(r, lists) for r in [row["request"], *_requests_for(expr)]], name)


def test_validity_corpus_answers_as_recorded():
    exprs = _valid(CORPUS)
    assert len(exprs) > 150
    for expr in exprs:
        if expr.scheme.name != "http":
            continue
        _check("corpus", expr, [(r, None) for r in _requests_for(expr)])


# -- hypothesis ------------------------------------------------------------------

TEXT = st.text(alphabet=st.sampled_from(list("aAbB/._-é%\\\"' \x00") + ["\ud800", "ß"]), max_size=6)


def quote(value):
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


STRING_FIELDS = ["http.host", "http.request.uri.path"]
PATTERNS = ["^a", "b$", "(?i)^ab", "(?i)a.b$", "^/..", "é", "ab", "(?i)ab", "^a|b$", "aB/"]


@st.composite
def string_test(draw):
    field = draw(st.sampled_from(STRING_FIELDS))
    lhs = draw(st.sampled_from([field, f"lower({field})", f"upper({field})"]))
    op = draw(
        st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "contains", "in", "call", "matches"])
    )
    text = draw(TEXT.filter(lambda t: "\ud800" not in t and "\x00" not in t))
    if op == "in":
        items = draw(st.lists(TEXT.filter(lambda t: "\ud800" not in t), max_size=3))
        return f"{lhs} in {{{' '.join(quote(i) for i in items)}}}"
    if op == "matches":
        return f"{lhs} matches {quote(draw(st.sampled_from(PATTERNS)))}"
    if op == "call":
        name = draw(st.sampled_from(["starts_with", "ends_with", "contains"]))
        return f"{name}({lhs}, {quote(text)})"
    return f"{lhs} {op} {quote(text)}"


@st.composite
def int_test(draw):
    lhs = draw(st.sampled_from(["cf.waf.score", "len(http.host)", "len(http.request.uri.path)"]))
    op = draw(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "in", "&"]))
    if op == "in":
        lo = draw(st.integers(0, 20))
        spans = " ".join(f"{lo + 4 * i}..{lo + 4 * i + 2}" for i in range(draw(st.integers(0, 10))))
        return f"{lhs} in {{{lo} {spans}}}"
    return f"{lhs} {op} {draw(st.integers(-2, 30))}"


IPS = ["10.0.0.1", "192.0.2.255", "2001:db8::1", "::1", "0.0.0.0", "::ffff:192.0.2.1"]


@st.composite
def ip_test(draw):
    op = draw(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "in"]))
    if op == "in":
        members = draw(
            st.lists(
                st.sampled_from(
                    IPS + ["10.0.0.0/8", "192.0.2.0/24", "2001:db8::/32", "10.1.0.0..10.1.0.9"]
                ),
                min_size=1,
                max_size=4,
            )
        )
        return f"ip.src in {{{' '.join(members)}}}"
    return f"ip.src {op} {draw(st.sampled_from(IPS))}"


atoms = st.one_of(
    string_test(),
    int_test(),
    ip_test(),
    st.sampled_from(
        ["ssl", "not ssl", 'any(http.request.headers["a"][*] eq "x")', 'http.host matches "^a"']
    ),
)
expressions = st.recursive(
    atoms,
    lambda inner: st.one_of(
        inner.map(lambda e: f"not ({e})"),
        st.tuples(inner, st.sampled_from(["and", "or", "xor"]), inner).map(
            lambda t: f"({t[0]}) {t[1]} ({t[2]})"
        ),
    ),
    max_leaves=4,
)

IP_VALUES = st.one_of(
    st.sampled_from(IPS + ["192.0.2.01", "fe80::1%eth0", "1.2.3", "", "10.1.0.5"]),
    st.tuples(*[st.integers(0, 300)] * 4).map(lambda t: ".".join(map(str, t))),
    st.text(alphabet="0123456789.:abf%", max_size=12),
    st.sampled_from(IPS).map(ipaddress.ip_address),
    st.sampled_from(IPS).map(str.encode),
)
STRING_VALUES = st.one_of(
    TEXT, TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")), st.just(b"\xff")
)
requests = st.fixed_dictionaries(
    {},
    optional={
        "http.host": STRING_VALUES,
        "http.request.uri.path": STRING_VALUES,
        "cf.waf.score": st.integers(-1, 40),
        "ip.src": IP_VALUES,
        "ssl": st.booleans(),
        "http.request.headers": st.dictionaries(st.just("a"), st.lists(TEXT, max_size=2)),
    },
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, st.lists(requests, min_size=1, max_size=4))
def test_inline_shapes_answer_as_the_generic_code(source, reqs):
    expr = compile_expression(source)
    for request in reqs:
        _inline_agrees_with_generic(expr, request)


@settings(max_examples=500, deadline=None)
@given(IP_VALUES.filter(lambda v: isinstance(v, str)))
def test_fast_ipv4_parse_agrees_with_ipaddress(text):
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        address = None
    want = int(address) if address is not None and address.version == 4 else None
    assert ipv4_int(text) == want


# -- untrusted text, bounded caches, fallbacks ------------------------------------------

HOSTILE = [
    '" + __import__("os").system("echo owned") + "',
    "'''; raise systemexit; '''",
    "\n    return true\n",
    "{_c0}",
    "%s%r",
    "\\",
]


@pytest.mark.parametrize("literal", HOSTILE)
def test_hostile_literals_are_values_never_code(literal):
    source = f"http.host eq {quote(literal)} or lower(http.host) contains {quote(literal)}"
    expr = compile_expression(source)
    _, code = generate_with_source(expr.tree)
    assert literal not in code and "system" not in code and "raise" not in code
    assert code.count("\n") == 2  # one def line, one return line: nothing injected
    assert expr.matches({"http.host": literal}) is True
    assert expr.matches({"http.host": "[" + literal.upper() + "]"}) is True
    assert expr.matches({"http.host": literal[:-1]}) is False


def test_ip_comparison_cache_is_bounded_and_answers_every_address():
    expr = compile_expression("ip.src in {10.0.0.0/8} and not ip.src eq 10.0.0.7")
    count = codegen_runtime.IP_CACHE_ENTRIES * 2
    for i in range(count):
        address = f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}"
        assert expr.matches({"ip.src": address}) is (address != "10.0.0.7")
        assert expr.matches({"ip.src": f"11.0.{i >> 8 & 255}.{i & 255}"}) is False
    caches = [v for v in expr.matches.__globals__.values() if isinstance(v, dict) and v]
    assert caches and all(len(c) <= codegen_runtime.IP_CACHE_ENTRIES for c in caches)
    long_text = "1" * (codegen_runtime.IP_CACHE_TEXT_MAX + 1)
    assert expr.matches({"ip.src": long_text}) is False
    assert all(long_text not in c for c in caches)


def test_shapes_without_an_inline_form_answer_through_the_generic_code():
    expr = compile_expression(
        'any(lower(http.request.headers["accept"][*])[*] contains "json") '
        'and http.request.uri.path matches "^/api" and concat(http.host, "/") eq "a/"'
    )
    request = {
        "http.request.headers": {"accept": ["Application/JSON"]},
        "http.request.uri.path": "/api/x",
        "http.host": "a",
    }
    assert expr.matches(request) is True
    assert expr.matches({**request, "http.host": "b"}) is False


def test_matches_accepts_keywords_and_named_lists():
    expr = compile_expression("ip.src in $blocked or ip.src eq 192.0.2.1")
    assert expr.matches(fields={"ip.src": "203.0.113.9"}, lists={"blocked": ["203.0.113.0/24"]})
    assert expr.matches({"ip.src": "192.0.2.1"}) is True
    assert expr.matches({"ip.src": "203.0.113.9"}) is False


# -- every covered shape, exhaustively over small alphabets ---------------------------

LITERALS = ["", "a", "A", "ab", "é", "b/", "ß"]
STRINGS = [v for v in AWKWARD if isinstance(v, str | bytes | bytearray) or v is None]
STRINGS += ["ab", "ba", "Ab", "aB", "é", "Éa", "b/a", "xab", "ß", "ẞ"]


def _shapes():
    for field in ("http.host",):
        for lhs in (field, f"lower({field})", f"upper({field})"):
            for lit in LITERALS:
                for op in ("eq", "ne", "lt", "le", "gt", "ge", "contains"):
                    yield f"{lhs} {op} {quote(lit)}"
                for fn in ("starts_with", "ends_with", "contains"):
                    yield f"{fn}({lhs}, {quote(lit)})"
                yield f'{lhs} in {{{quote(lit)} "b/"}}'
        for op in ("eq", "ne", "lt", "gt", "&"):
            for n in (-1, 0, 2, 5):
                yield f"len({field}) {op} {n}"
        yield f"len({field}) in {{1 3..4 9..10}}"


@pytest.mark.parametrize("source", list(_shapes()))
def test_each_string_shape_answers_every_awkward_value_as_recorded(source):
    expr = compile_expression(source)
    _check("string shapes", expr, [({"http.host": value}, None) for value in STRINGS])


IP_SHAPES = [f"ip.src {op} {ip}" for op in ("eq", "ne", "lt", "le", "gt", "ge") for ip in IPS] + [
    "ip.src in {10.0.0.0/8 192.0.2.0/24 2001:db8::/32 10.1.0.0..10.1.0.9}",
    "ip.src in {192.0.2.255 ::1 0.0.0.0/32 ::ffff:192.0.2.1}",
    "not ip.src in {0.0.0.0/0}",
    "ip.src in {10.0.0.1 192.0.2.255 0.0.0.0}",
    "ip.src in {10.0.0.1 192.0.2.255/32}",
]
IP_TEXTS = [v for v in AWKWARD if v is not True and v is not False] + IPS
IP_TEXTS += ["010.0.0.1", "10.0.0.1\n", "10.0.0.01", "::ffff:10.0.0.1", "::ffff:a00:1", "0.0.0.00"]
IP_TEXTS += ["10.1.0.9", "10.1.0.10", "10.255.255.255", "11.0.0.0", "192.0.2.0", "255.255.255.255"]


@pytest.mark.parametrize("source", IP_SHAPES)
def test_each_ip_shape_answers_every_awkward_value_as_recorded(source):
    expr = compile_expression(source)
    # The second pass answers from the comparison's cache.
    _check("ip shapes", expr, [({"ip.src": value}, None) for value in IP_TEXTS * 2])


REGEXES = [
    "^/api/v[0-9]+/users/[0-9]+$",
    "(?i)union.+select",
    "(?i)^AB",
    "b/$",
    "(?m)^ab$",
    "é",
    "(?i)é.b",
    "\\xc3",
    "(?-u:\\xc3)",
    "^(?i:ab)c",
    "a|ab",
    "(?i)ß",
    "^$",
    "(?s)a.b",
]


@pytest.mark.parametrize("regex", REGEXES)
def test_regex_prefilters_never_drop_a_match(regex):
    try:
        expr = compile_expression(
            f"lower(http.host) matches {quote(regex)} or http.host matches {quote(regex)}"
        )
    except ExpressionError:
        pytest.skip("not a valid pattern here")
    values = STRINGS + ["/api/v2/users/17", "/API/v2/users/1", "id=1 UNION ALL SELECT", "ab\nab"]
    values += ["Unionselect", "xAB", "cab", "xb/", "éab", "ÉAB", "a\nb", "aXb", "abc", "İab"]
    _check("regexes", expr, [({"http.host": value}, None) for value in values])


ARRAY_SHAPES = [
    f'{fn}(http.request.headers["{key}"][*] {test})'
    for fn in ("any", "all")
    for key in ("a", "é")
    for test in ('contains "10."', 'eq "x"', 'in {"x" "10.1"}', 'lt "b"', 'matches "^1"')
]
HEADERS = [
    None,
    {},
    {"a": []},
    {"a": ["10.0.0.1", "x"]},
    {"a": ["x", "x"]},
    {"a": ["x", b"10.\xff"]},
    {"a": None},
    {"a": "10.0.0.1"},
    {b"a": ["10.0.0.1"]},
    {"a": ["y"], b"a": ["x"]},
    {"é": ["10.é"], "a": ["a\ud800"]},
    {"a": [None, "x"]},
    ["10.0.0.1"],
]


@pytest.mark.parametrize("source", ARRAY_SHAPES)
def test_any_and_all_over_header_values_answer_as_recorded(source):
    expr = compile_expression(source)
    _check("arrays", expr, [({"http.request.headers": h}, None) for h in HEADERS])


WILDCARDS = ["*.example.com/api/*", "a*", "*b/", "ab", "*", "", "a*b*c", "É*", "*é*", "\\\\*"]


@pytest.mark.parametrize("op", ["wildcard", "strict wildcard"])
@pytest.mark.parametrize("pattern", WILDCARDS)
def test_wildcard_prefilters_never_drop_a_match(op, pattern):
    expr = compile_expression(
        f"http.host {op} {quote(pattern)} or lower(http.host) {op} {quote(pattern)}"
    )
    values = STRINGS + ["https://www.Example.com/API/x", "https://a.example.com/api/", "A", "aXbYc"]
    values += ["abc", "AB", "*", "ÉAB", "éab", "xé", "b/", "xB/", "a*b", "\\*"]
    _check("wildcards", expr, [({"http.host": value}, None) for value in values])


def test_deepest_expressions_answer_as_recorded():
    nested = 'http.host eq "a"'
    for _ in range(64):
        nested = f"not (ssl and {nested})"
    chained = "(ssl and " * 120 + 'http.host contains "a"' + ")" * 120
    for source in (nested, chained):
        expr = compile_expression(source)
        requests = ({"ssl": True, "http.host": "a"}, {"ssl": True}, {})
        _check("deep", expr, [(r, None) for r in requests])
