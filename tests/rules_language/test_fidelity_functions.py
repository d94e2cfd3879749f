"""Function fidelity on both paths: trim, wildcard_replace, Unicode classes, argument checks,
hashes and HMAC, and IPv6 text with an embedded IPv4 tail."""

import base64
import hashlib
import hmac
import re
import uuid
from pathlib import Path
from urllib.parse import quote

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from regex_paths import agree as both

from workbench.rules_language import ExpressionError, compile_expression, get_scheme
from workbench.rules_language.functions import FUNCTIONS
from workbench.rules_language.hints import hint_for
from workbench.rules_language.sql_compiler import SqlTranslationError
from workbench.rules_language.table import requests_table

DECISIONS = Path(__file__).resolve().parents[2] / "docs" / "decisions.md"


def error_of(source):
    with pytest.raises(ExpressionError) as err:
        compile_expression(source)
    return str(err.value)


# -- trim, trim_start, trim_end ---------------------------------------------------------

HOSTS = [" \t example.com\r\n", "--example.com--", "éxampleé", "\x0bexample.com\x0b", "", None]


def hosts():
    return [{"http.host": h} if h is not None else {} for h in HOSTS]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # Default set: space, TAB, LF, FF, CR (ASCII whitespace); vertical tab is not in it.
        ('trim(http.host) eq "example.com"', [True, False, False, False, False, False]),
        ('trim_start(http.host) eq "example.com\r\n"', [True, False, False, False, False, False]),
        ('trim_end(http.host) eq " \t example.com"', [True, False, False, False, False, False]),
        ('trim(http.host, "\\x0b") eq "example.com"', [False, False, False, True, False, False]),
        ('trim(http.host, "-") eq "example.com"', [False, True, False, False, False, False]),
        (
            'trim_start(http.host, "-") eq "example.com--"',
            [False, True, False, False, False, False],
        ),
        ('trim_end(http.host, "-") eq "--example.com"', [False, True, False, False, False, False]),
        # Byte-wise: the set is bytes, so "é" removes its two bytes wherever they stand.
        ('trim(http.host, "é") eq "xample"', [False, False, True, False, False, False]),
        (
            'trim_end(http.host, "\\xa9") eq "\\xc3\\xa9xample\\xc3"',
            [False, False, True, False, False, False],
        ),
        ('len(trim(http.host, "")) eq 16', [True, False, False, False, False, False]),
        ('trim(http.host) eq ""', [False, False, False, False, True, True]),
    ],
)
def test_trim_functions_remove_bytes_at_either_end(source, expected):
    assert both(source, hosts()) == expected


def test_trim_characters_must_be_a_literal_and_source_a_field():
    assert "expected argument of kind Literal" in error_of('trim(http.host, http.referer) eq ""')
    assert "expected argument of kind Field" in error_of('trim("  a  ") eq "a"')


# -- wildcard_replace: the documentation's examples ------------------------------------

DOCS_WILDCARD_REPLACE = [
    (
        "http.request.full_uri",
        "https://apps.example.com/calendar/admin?expand=true",
        'wildcard_replace(http.request.full_uri, "https://*.example.com/*/*", '
        '"https://example.com/${1}/${2}/${3}")',
        "https://example.com/apps/calendar/admin?expand=true",
    ),
    (
        "http.request.full_uri",
        "https://example.com/applications/app1",
        'wildcard_replace(http.request.full_uri, "/applications/*", "/apps/${1}")',
        "https://example.com/applications/app1",
    ),
    (
        "http.request.uri.path",
        "/calendar",
        'wildcard_replace(http.request.uri.path, "/*", "/apps/${1}")',
        "/apps/calendar",
    ),
    (
        "http.request.uri.path",
        "/Apps/calendar",
        'wildcard_replace(http.request.uri.path, "/apps/*", "/${1}")',
        "/calendar",
    ),
    (
        "http.request.uri.path",
        "/Apps/calendar",
        'wildcard_replace(http.request.uri.path, "/apps/*", "/${1}", "s")',
        "/Apps/calendar",
    ),
    (
        "http.request.uri.path",
        "/apps/calendar/login",
        'wildcard_replace(http.request.uri.path, "/apps/*/login", "/${1}/login")',
        "/calendar/login",
    ),
]


@pytest.mark.parametrize(("field", "value", "call", "result"), DOCS_WILDCARD_REPLACE)
def test_wildcard_replace_gives_the_documented_results(field, value, call, result):
    assert both(f'{call} eq "{result}"', [{field: value}]) == [True]


@pytest.mark.parametrize(
    ("call", "value", "result"),
    [
        # Lazy stars: the first star takes as little as it can.
        ('wildcard_replace(http.request.uri.path, "*/*", "${1}|${2}")', "a/b/c", "a|b/c"),
        ('wildcard_replace(http.request.uri.path, "*x*", "[${2}]")', "axbxc", "[bxc]"),
        # $$ is a dollar; the match is the whole value or nothing.
        ('wildcard_replace(http.request.uri.path, "/p/*", "$$${1}")', "/p/9", "$9"),
        ('wildcard_replace(http.request.uri.path, "/p", "/q")', "/p/9", "/p/9"),
        # ASCII-only case folding, and a literal star escaped in a raw string.
        ('wildcard_replace(http.request.uri.path, "/É/*", "${1}")', "/é/x", "/é/x"),
        ('wildcard_replace(http.request.uri.path, r"/a\\*/*", "${1}")', "/a*/x", "x"),
    ],
)
def test_wildcard_replace_lazy_stars_and_references(call, value, result):
    assert both(f'{call} eq "{result}"', [{"http.request.uri.path": value}]) == [True]


# -- Unicode classes --------------------------------------------------------------------

WORDS = ["한글", "abc", "Ωmega", "123", "é", ""]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"(?u)^\p{Hangul}+$", [True, False, False, False, False, False]),
        (r"(?u)^\p{L}+$", [True, True, True, False, True, False]),
        (r"(?u)^\pL", [True, True, True, False, True, False]),
        (r"(?u)\P{L}", [False, False, False, True, False, False]),
        (r"(?u)^\p{Greek}", [False, False, True, False, False, False]),
        (r"(?u)^\p{Uppercase_Letter}", [False, False, True, False, False, False]),
        (r"(?u)^\p{sc=hangul}\p{^Greek}$", [True, False, False, False, False, False]),
        # '.' is one code point with Unicode on: "é" is one character, not two bytes.
        (r"(?u)^.$", [False, False, False, False, True, False]),
    ],
)
def test_unicode_classes_match_code_points_when_unicode_is_on(pattern, expected):
    requests = [{"http.request.uri.path": w} for w in WORDS]
    assert both(f'http.request.uri.path matches r"{pattern}"', requests) == expected


def test_the_documented_hangul_rule_runs_on_both_paths():
    requests = [{"http.request.uri.path": p} for p in ["/%ED%95%9C%EA%B8%80", "/abc"]]
    source = r'url_decode(http.request.uri.path) matches "(?u)\p{Hangul}+"'
    assert both(source, requests) == [True, False]


def test_unicode_classes_without_unicode_are_refused_with_the_engines_message():
    message = error_of(r'http.host matches "\p{Hangul}"')
    assert "regex parse error:" in message
    assert message.rstrip().endswith("error: Unicode not allowed here")
    assert "Unicode property not found" in error_of(r'http.host matches "(?u)\p{Klingon}"')
    source = r'http.host matches "\p{Hangul}"'
    with pytest.raises(ExpressionError) as err:
        compile_expression(source)
    assert "start the pattern with `(?u)`" in hint_for(source, err.value)


# -- argument checks as the engine registers them --------------------------------------


def test_hash_in_range_refuses_a_maximum_below_the_minimum():
    message = error_of("hash_in_range(10, 1, http.host) eq 1")
    assert "the maximum (1) must not be below the minimum (10)" in message
    requests = [{"http.host": h} for h in ["a", "b", "example.com", ""]]
    assert both("hash_in_range(5, 5, http.host) eq 5", requests) == [True] * 4
    assert both("hash_in_range(1, 10, http.host) in {1..10}", requests) == [True] * 4
    digest = int.from_bytes(hashlib.sha256(b"example.com").digest()[:8], "big")
    assert both(f"hash_in_range(0, 99, http.host) eq {digest % 100}", requests)[2] is True


def _token(key, message, timestamp, url_safe=False, separator=b"?verify="):
    digest = hmac.new(key, message + timestamp, hashlib.sha256).digest()
    if url_safe:
        mac = base64.urlsafe_b64encode(digest).rstrip(b"=")
    else:
        mac = quote(base64.b64encode(digest)).encode()
    return (message + separator + timestamp + b"-" + mac).decode()


ISSUED = 1484063787


def _hmac_requests():
    good = _token(b"mysecretkey", b"/download/cat.jpg", str(ISSUED).encode())
    safe = _token(b"mysecretkey", b"/download/cat.jpg", str(ISSUED).encode(), url_safe=True)
    return [
        {"http.request.uri": good, "http.request.timestamp.sec": ISSUED + 60},
        {"http.request.uri": good, "http.request.timestamp.sec": ISSUED + 100_001},
        {"http.request.uri": good.replace("cat", "dog"), "http.request.timestamp.sec": ISSUED},
        {"http.request.uri": safe, "http.request.timestamp.sec": ISSUED},
        {"http.request.uri": "/download/cat.jpg", "http.request.timestamp.sec": ISSUED},
    ]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # The documentation's order: key, MessageMAC, ttl, now, separator length, flags.
        (
            'is_timed_hmac_valid_v0("mysecretkey", http.request.uri, 100000, '
            "http.request.timestamp.sec, 8)",
            [True, False, False, False, False],
        ),
        (
            'is_timed_hmac_valid_v0("mysecretkey", http.request.uri, 100000, '
            'http.request.timestamp.sec, 8, "s")',
            [False, False, False, True, False],
        ),
        # The binding's order: MessageMAC, key, ttl[, flags[, separator length]]; now is the
        # request's http.request.timestamp.sec.
        (
            'is_timed_hmac_valid_v0(http.request.uri, "mysecretkey", 100000, "", 8)',
            [True, False, False, False, False],
        ),
        (
            'is_timed_hmac_valid_v0(http.request.uri, "mysecretkey", 100000, "s", 8)',
            [False, False, False, True, False],
        ),
    ],
)
def test_timed_hmac_in_either_argument_order(source, expected):
    assert both(source, _hmac_requests()) == expected


def test_timed_hmac_argument_errors_name_the_argument():
    assert "invalid number of arguments" in error_of('is_timed_hmac_valid_v0("k", http.host)')
    assert "ttl must not be negative" in error_of('is_timed_hmac_valid_v0(http.host, "k", -1)')
    assert "expected argument of kind Literal" in error_of(
        "is_timed_hmac_valid_v0(http.host, http.referer, 10)"
    )


# -- hashes, HMAC and uuidv4 -------------------------------------------------------------


def test_hmac_uuidv4_and_sha256_give_the_standard_digests_on_both_paths():
    requests = [{"http.host": h} for h in ["example.com", "é", ""]]
    for i, r in enumerate(requests):
        data = r["http.host"].encode()
        mac = base64.b64encode(hmac.new(b"k", data, hashlib.sha256).digest()).decode()
        want = [j == i for j in range(len(requests))]
        source = f'encode_base64(hmac(http.host, "k", "SHA256"), "p") eq "{mac}"'
        assert both(source, requests) == want
        sha1 = base64.b64encode(hmac.new(b"k" * 70, data, hashlib.sha1).digest()).decode()
        source = f'encode_base64(hmac(http.host, "{"k" * 70}", "sha1"), "p") eq "{sha1}"'
        assert both(source, requests) == want
        u = uuid.UUID(bytes=hashlib.sha256(data).digest()[:16], version=4)
        assert both(f'uuidv4(http.host) eq "{u}"', requests) == want
    assert both('hmac(http.host, "k", "md5") eq ""', requests) == [False] * 3


def test_sha512_and_hmac_sha512_give_the_standard_digests_on_both_paths():
    values = ["", "abc", "é" * 60, "x" * 300]  # 0, 1, 2 and 3 blocks of 128 bytes
    requests = [{"http.host": v} for v in values]
    for i, v in enumerate(values):
        want = [j == i for j in range(len(values))]
        digest = base64.b64encode(hashlib.sha512(v.encode()).digest()).decode()
        assert both(f'encode_base64(sha512(http.host), "p") eq "{digest}"', requests) == want
        mac = base64.b64encode(hmac.new(b"k" * 130, v.encode(), "sha512").digest()).decode()
        source = f'encode_base64(hmac(http.host, "{"k" * 130}", "sha512"), "p") eq "{mac}"'
        assert both(source, requests) == want


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("bit_slice(http.host, 0, 7) eq 97", [True, False, False, False]),
        ("bit_slice(http.host, 8, 15) eq 169", [False, True, False, False]),
        ("bit_slice(http.host, 20, 23) eq 3", [True, False, False, False]),
        # Past the end of the value: missing, so every comparison is false.
        ("bit_slice(http.host, 16, 31) ne 0", [False, False, False, False]),
    ],
)
def test_bit_slice_reads_bits_on_both_paths(source, expected):
    assert both(source, [{"http.host": h} for h in ["abc", "é", ""]] + [{}]) == expected


# -- IPv6 text with an embedded IPv4 tail -----------------------------------------------

ADDRESSES = [
    "::ffff:192.0.2.1",
    "::FFFF:192.0.2.1",
    "::ffff:c000:201",
    "192.0.2.1",
    "1:2:3:4:5:6:1.2.3.4",
    "::ffff:1.2.3.256",
    "::ffff:01.2.3.4",
    "2001:db8::1",
]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("ip.src eq ::ffff:192.0.2.1", [True, True, True, False, False, False, False, False]),
        ("ip.src eq ::ffff:c000:201", [True, True, True, False, False, False, False, False]),
        ("ip.src ne ::ffff:192.0.2.1", [False, False, False, True, True, False, False, True]),
        ("ip.src in {::ffff:192.0.2.0/120}", [True, True, True, False, False, False, False, False]),
        ("ip.src eq 1:2:3:4:5:6:102:304", [False, False, False, False, True, False, False, False]),
        ("ip.src in {192.0.2.1}", [False, False, False, True, False, False, False, False]),
        (
            'to_string(ip.src) eq "::ffff:c000:201"',
            [True, True, True, False, False, False, False, False],
        ),
        (
            'to_string(ip.src) eq "2001:db8::1"',
            [False, False, False, False, False, False, False, True],
        ),
    ],
)
def test_ipv6_with_an_ipv4_tail_reads_the_same_on_both_paths(source, expected):
    assert both(source, [{"ip.src": a} for a in ADDRESSES]) == expected


# -- every function has a translation or a documented reason ----------------------------

SAMPLE_CALLS = {
    "any": ['any(http.request.headers.names[*] eq "Accept")'],
    "all": ['all(http.request.headers.names[*] ne "Host")'],
    "lower": ['lower(http.host) eq "www.example.com"'],
    "upper": ['upper(http.host) eq "WWW.EXAMPLE.COM"'],
    "len": ["len(http.host) eq 15", "len(http.request.headers.names) eq 2"],
    "starts_with": ['starts_with(http.host, "www")'],
    "ends_with": ['ends_with(http.host, ".com")'],
    "contains": ['contains(http.host, "example")'],
    "concat": ['concat(http.host, "/", cf.waf.score) eq "www.example.com/15"'],
    "url_decode": ['url_decode(http.request.uri.query) contains " "'],
    "to_string": ['to_string(cf.waf.score) eq "15"'],
    "remove_bytes": ['remove_bytes(http.host, "w.") eq "examplecom"'],
    "substring": ['substring(http.host, 4) eq "example.com"'],
    "lookup_json_string": ['lookup_json_string(http.request.body.raw, "user", "name") eq "ann"'],
    "lookup_json_integer": ['lookup_json_integer(http.request.body.raw, "n") eq 3'],
    "regex_replace": ['regex_replace(http.host, "^www\\\\.", "") eq "example.com"'],
    "wildcard_replace": ['wildcard_replace(http.host, "*.example.*", "${2}") eq "com"'],
    "encode_base64": ['encode_base64(http.request.method) eq "UE9TVA"'],
    "decode_base64": ['decode_base64(http.request.method) eq ""'],
    "sha256": ["len(sha256(http.host)) eq 32"],
    "sha512": ["len(sha512(http.host)) eq 64"],
    "cidr": ["cidr(ip.src, 24, 32) eq 192.0.2.0"],
    "cidr6": ["cidr6(ip.src, 32) eq 2001:db8::"],
    "join": ['join(http.request.headers.names, ",") eq "Accept,X-Api-Key"'],
    "split": ['split(http.host, ".", 2)[1] eq "example.com"'],
    "remove_query_args": ['remove_query_args(http.request.uri.query, "id") eq ""'],
    "uuidv4": ["len(uuidv4(http.host)) eq 36"],
    "is_timed_hmac_valid_v0": [
        'is_timed_hmac_valid_v0("k", http.request.uri, 10, http.request.timestamp.sec)',
        'is_timed_hmac_valid_v0(http.request.uri, "k", 10)',
    ],
    "has_key": ['has_key(http.request.headers, "accept")'],
    "has_value": ['has_value(http.request.headers.names, "Accept")'],
    "hmac": ['len(hmac(http.host, "k", "sha256")) eq 32', 'hmac(http.host, "k", "sha512") eq ""'],
    "coalesce": ['coalesce(http.request.headers["x"][0], http.host) eq "www.example.com"'],
    "hash_in_range": ["hash_in_range(1, 4, http.host) le 4"],
    "ip_in_range": ['ip_in_range(ip.src, "192.0.2.0/24")'],
    "wildcard": ['wildcard(http.host, "*.EXAMPLE.com")'],
    "bit_slice": ["bit_slice(http.host, 0, 7) eq 119"],
    "is_jwt_valid": ['is_jwt_valid("config")'],
    "is_jwt_present": ['is_jwt_present("config")'],
    "trim": ['trim(http.host, "w") eq ".example.com"'],
    "trim_start": ['trim_start(http.host, "w.") eq "example.com"'],
    "trim_end": ['trim_end(http.host, "moc.") eq "www.example"'],
}


def _documented_without_sql():
    """Function names listed in the decision entry on functions with no SQL translation."""
    text = DECISIONS.read_text()
    entry = re.search(r"- \*\*No SQL translation\*\*(.*?)(?=\n- \*\*|\n## )", text, re.S)
    assert entry, "docs/decisions.md has no 'No SQL translation' entry"
    return set(re.findall(r"`(\w+)\(", entry.group(1)))


def test_every_function_has_a_sql_translation_or_a_documented_reason(samples, sample_table):
    assert set(SAMPLE_CALLS) == set(FUNCTIONS), "every function needs a sample call here"
    documented = _documented_without_sql()
    untranslated = set()
    for name, sources in SAMPLE_CALLS.items():
        for source in sources:
            expr = compile_expression(source)
            try:
                sql = expr.to_sql()
            except SqlTranslationError:
                untranslated.add(name)
                assert name in documented, f"{source}: no SQL and no documented reason"
                continue
            rows = sample_table.sql(f"select {sql} from samples").fetchall()
            assert [r[0] for r in rows] == [expr.matches(s) for s in samples], source
    assert untranslated == set()


# -- both paths agree on arbitrary values ------------------------------------------------

PROPERTY_EXPRESSIONS = [
    'trim(http.host) eq "a"',
    'trim_start(http.host, " aé") eq "b"',
    'len(trim_end(http.host, "\\xa9a")) eq 1',
    'wildcard_replace(http.host, "*a*", "${2}-${1}") eq "-"',
    'wildcard_replace(http.host, "*É*", "${1}", "s") eq ""',
    r'http.host matches "(?u)^\p{L}+$"',
    r'http.host matches "(?u)\P{Latin}"',
    r'regex_replace(http.host, "(?u)\\p{Lu}", "_") eq "_"',
    'hmac(http.host, "k", "sha1") eq hmac(http.host, "k", "SHA1")',
    'uuidv4(http.host) contains "-4"',
    "ip.src in {::ffff:0.0.0.0/96 1.0.0.0/8}",
]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "http.host": st.text(alphabet=" \t\naAbBéÉΩ한-*É\u00a9", max_size=8),
                "ip.src": st.sampled_from(
                    ["::ffff:1.2.3.4", "::FFFF:10.0.0.1", "1.2.3.4", "::1.2.3.4", "::", "x"]
                ),
            }
        ),
        min_size=1,
        max_size=6,
    )
)
def test_both_paths_agree_on_arbitrary_values(requests):
    con = duckdb.connect()
    requests_table(con, requests, name="r", fields=list(get_scheme("http").fields))
    exprs = [compile_expression(source) for source in PROPERTY_EXPRESSIONS]
    rows = con.sql("select " + ", ".join(e.to_sql() for e in exprs) + " from r").fetchall()
    for i, expr in enumerate(exprs):
        assert [row[i] for row in rows] == [expr.matches(r) for r in requests], expr.source
