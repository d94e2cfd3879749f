"""url_decode and decode_base64 in SQL give the bytes the per-request path gives, UTF-8 or not.

The SQL decoders return the Latin-1 view of the decoded bytes, so the checks
over them (comparisons, matches, lower, len, concat...) need no per-request
fallback: each test compares ``expr.matches`` with the SQL over DuckDB.
"""

from __future__ import annotations

import base64
import random

import duckdb
import pytest

from workbench.rules_language import compile_expression, get_scheme
from workbench.rules_language.ast import Call, walk
from workbench.rules_language.function_impls import _decode_base64, _url_decode_build
from workbench.rules_language.sql_compiler import value_sql
from workbench.rules_language.table import requests_table
from workbench.rules_language.values import MISSING

Q = "http.request.uri.query"
BODY = "http.request.body.raw"

# Pieces of queries: escapes of bytes that are not UTF-8 alone (%c0%ae and %c0%af are
# overlong dots and slashes, %e0%80%ae a three-byte overlong dot), %uXXXX escapes (a lone
# surrogate too), escapes of escapes, and plain text around them.
PIECES = [
    "%c0%ae",
    "%C0%AF",
    "%e0%80%ae",
    "%ff",
    "%fe%ff",
    "%c3%a9",
    "%u00e9",
    "%uD800",
    "%u0025",
    "%25ff",
    "%2525c0%2525ae",
    "%2B",
    "+",
    "%",
    "%zz",
    "%00",
    "a",
    "AB",
    "é",
    "/",
    "..",
    "<script>",
]


def _queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6))) for _ in range(n)]


def _base64_bodies(n: int, seed: int) -> list[str]:
    """Base64 of random bytes: standard and URL-safe, padded or not, white space around."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 9)))
        text = (base64.urlsafe_b64encode if rng.random() < 0.5 else base64.b64encode)(data)
        word = text.decode()
        if rng.random() < 0.5:
            word = word.rstrip("=")
        if rng.random() < 0.2:
            word = f" \t{word}\n"
        if rng.random() < 0.1:
            word = word[:-1] + "!" + word[-1:]
        out.append(word)
    return out


def _requests() -> list[dict]:
    queries = _queries(150, seed=11) + ["%c0%ae%c0%ae/", "%ff", "a%ffb", "%25ff", "%c0%ae"]
    bodies = _base64_bodies(len(queries), seed=12)
    bodies[:4] = ["/w==", "wK4", "Rg=A", "QBYW="]
    return [
        {
            Q: q,
            BODY: b,
            "http.host": "h",
            "http.request.headers": {"x-a": [q, "%ff"], "x-b": ["%c0%ae"]},
        }
        for q, b in zip(queries, bodies, strict=True)
    ]


EXPRESSIONS = [
    f'url_decode({Q}) contains "\\xc0\\xae"',
    f'url_decode({Q}, "r") matches "(?:\\\\.|\\xc0\\xae){{2}}/"',
    f'url_decode({Q}) eq "\\xff"',
    f'url_decode({Q}, "r") eq "\\xff"',
    f'url_decode({Q}) ne "\\xff"',
    f'len(url_decode({Q}, "r")) eq 3',
    f'len(url_decode({Q}, "ur")) gt 4',
    f'lower(url_decode({Q})) contains "\\xc0\\xaeab"',
    f'lower(url_decode({Q}, "ur")) contains "\\xc3\\xa9"',
    f'upper(url_decode({Q}, "u")) contains "\\xed\\xa0\\x80"',
    f'starts_with(url_decode({Q}), "\\xc0")',
    f'ends_with(url_decode({Q}, "r"), "\\xff")',
    f'concat(url_decode({Q}), "-", http.host) eq "\\xff-h"',
    f'len(concat(url_decode({Q}), http.host, url_decode({Q}, "r"))) eq 5',
    f'url_decode({Q}) in {{"\\xff" "\\xc0\\xae" "a"}}',
    f'url_decode({Q}) matches "^.$"',
    f'url_decode({Q}) matches "^(?:[^a]){{2}}$"',
    f'url_decode({Q}) matches "(?i)\\xc0\\xae<SCRIPT>"',
    f'url_decode({Q}) wildcard "*\\xc0*"',
    f"url_decode({Q}) eq http.host",
    f'url_decode({Q}) eq url_decode({Q}, "r")',
    f'substring(url_decode({Q}), 1) eq "\\xae"',
    f'regex_replace(url_decode({Q}), "\\\\xc0", "x") contains "x\\xae"',
    f'remove_bytes(url_decode({Q}), "\\xc0") eq "\\xae"',
    f'trim(url_decode({Q}, "r"), "\\xff") eq ""',
    f'encode_base64(url_decode({Q})) eq "wK4"',
    f'sha256(url_decode({Q})) eq sha256(url_decode({Q}, "r"))',
    f'url_decode(url_decode({Q})) eq "\\xff"',
    f'lookup_json_string(url_decode({Q}), "a") eq "b"',
    'any(url_decode(http.request.headers.values[*])[*] eq "\\xff")',
    'any(url_decode(http.request.headers.values[*], "r")[*] contains "\\xc0\\xae")',
    f'decode_base64({BODY}) contains "\\xff"',
    f"len(decode_base64({BODY})) eq 4",
    f"len(decode_base64({BODY})) ge 0",
    f'decode_base64({BODY}) matches "^[\\\\x00-\\\\x7f]*$"',
    f"lower(decode_base64({BODY})) eq lower(url_decode({Q}))",
    f'decode_base64(url_decode({Q})) eq "\\xff"',
    f'url_decode(decode_base64({BODY})) contains "\\xff"',
    f'encode_base64(decode_base64({BODY}), "p") eq trim({BODY})',
]


@pytest.fixture(scope="module")
def table():
    requests = _requests()
    con = duckdb.connect()
    requests_table(con, requests, name="r", fields=list(get_scheme("http").fields))
    return con, requests


@pytest.mark.parametrize("source", EXPRESSIONS)
def test_checks_over_decoded_bytes_agree_on_both_paths(source, table):
    con, requests = table
    expr = compile_expression(source)
    per_request = [expr.matches(r) for r in requests]
    rows = con.sql(f"select {expr.to_sql()} from r").fetchall()
    assert [row[0] for row in rows] == per_request
    # The cases are not trivial: somewhere they match, unless a test of absence.
    assert any(per_request) or "eq" in source


def _decoded(source: str, text: str) -> bytes | None:
    """The bytes the SQL of the decoder call in ``source`` gives for ``text`` (None: missing)."""
    call = next(n for n in walk(compile_expression(source).tree) if isinstance(n, Call))
    # A connection of its own, read to the end: a result left open on DuckDB's default
    # connection would block every later user of it (doctests, other tests).
    with duckdb.connect() as con:
        sql = f'SELECT {value_sql(call, {}).sql} FROM (SELECT ? AS "{Q}")'
        value = con.execute(sql, [text]).fetchall()[0][0]
    return None if value is None else value.encode("latin-1")


@pytest.mark.parametrize("options", ["", "r", "u", "ur"])
@pytest.mark.parametrize(
    "text",
    [
        "%c0%ae%c0%ae%c0%af",
        "%ff%fe",
        "%e0%80%ae",
        "a%ffb+c",
        "%25ff",
        "%2525c0%2525ae",
        "%u0025u0041",
        "%u0025ff",
        "%uD800%u00e9",
        "caf\u00e9%ff%zz%",
        "%00%",
        "",
    ],
)
def test_url_decode_sql_gives_the_decoded_bytes(text, options):
    expected = _url_decode_build([None, options.encode()])(text)
    if isinstance(expected, str):
        expected = expected.encode("utf-8", "surrogatepass")
    assert _decoded(f'url_decode({Q}, "{options}") eq ""', text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "/w==",
        "wK4",
        "_-8",
        " \t/+/+\n",
        "\x0bwK4=\x0c",
        "Rg=A",
        "QBYW=",
        "QBYW====",
        "Y===",
        "====",
        "YW==YWJj",
        "YW-J!",
        "=YW-J",
        "Y-W=J",
        "caf\u00e9",
        "",
    ],
)
def test_decode_base64_sql_gives_the_decoded_bytes(text):
    expected = _decode_base64(text)
    if expected is MISSING:
        expected = None
    elif isinstance(expected, str):
        expected = expected.encode()
    assert _decoded(f'decode_base64({Q}) eq ""', text) == expected


def test_random_queries_and_base64_decode_to_the_same_bytes():
    decode = _url_decode_build([None, b"ur"])
    for text in _queries(200, seed=5):
        want = decode(text)
        want = want.encode("utf-8", "surrogatepass") if isinstance(want, str) else want
        assert _decoded(f'url_decode({Q}, "ur") eq ""', text) == want, text
    for text in _base64_bodies(200, seed=6):
        want = _decode_base64(text)
        want = None if want is MISSING else want.encode() if isinstance(want, str) else want
        assert _decoded(f'decode_base64({Q}) eq ""', text) == want, text
