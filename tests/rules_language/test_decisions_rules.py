"""Rules-language choices recorded in docs/decisions.md, on both evaluation paths.

Each case evaluates per request (``Expression.matches``) and, where the choice
concerns the whole-table path too, over a DuckDB table (``Expression.to_sql``).
"""

from urllib.parse import quote

import duckdb
import pytest

from workbench.rules_language import ExpressionError, compile_expression
from workbench.rules_language.sql_value import SqlTranslationError
from workbench.rules_language.table import requests_table


def both_paths(source, rows):
    """``source`` evaluated on each of ``rows``: per request, and over a DuckDB table."""
    expr = compile_expression(source)
    one_by_one = [expr.matches(r) for r in rows]
    con = duckdb.connect()
    fields = sorted({k for r in rows for k in r} | set(expr.fields))
    requests_table(con, rows, name="t", fields=fields)
    whole = [r[0] for r in con.sql(f"select {expr.to_sql()} from t order by rowid").fetchall()]
    assert whole == one_by_one, source
    return one_by_one


def refusal(source):
    with pytest.raises(ExpressionError) as info:
        compile_expression(source)
    return info.value


# -- split() limits --------------------------------------------------------------------------
@pytest.mark.parametrize("limit", [1, 2, 128])
def test_split_takes_a_limit_from_1_to_128(limit):
    parts = ["a"] * 200
    rows = [{"http.request.uri.path": "/".join(parts)}]
    source = f'len(split(http.request.uri.path, "/", {limit})) eq {limit}'
    assert both_paths(source, rows) == [True]


@pytest.mark.parametrize("limit", [0, 129, 1000])
def test_split_refuses_a_limit_outside_1_to_128(limit):
    err = refusal(f'split(http.request.uri.path, "/", {limit})[0] eq "a"')
    assert err.reason == f"limit must be between 1 and 128, got {limit}"
    assert str(err).startswith("Filter parsing error (1:1):")


def test_split_refuses_an_empty_separator():
    err = refusal('split(http.request.uri.path, "", 2)[0] eq "a"')
    assert err.reason == "the separator of split() must not be empty"


# -- the empty expression ------------------------------------------------------------------
def test_the_empty_expression_parses_and_matches_nothing():
    rows = [
        {},
        {"http.host": "example.com", "ssl": True, "ip.src": "192.0.2.1"},
        {"http.request.uri.path": "/", "cf.waf.score": 1},
    ]
    for source in ("", "   ", "\n\t"):
        assert both_paths(source, rows) == [False, False, False]


# -- a single hex byte -------------------------------------------------------------------------
def test_a_single_hex_byte_is_refused_and_two_bytes_work():
    err = refusal("http.host eq 61")
    assert err.reason == "expected 1 characters, but found 0"  # the engine's words (its take(1))
    assert str(err).splitlines()[0] == "Filter parsing error (1:16):"
    assert both_paths("http.host eq 61:62", [{"http.host": "ab"}, {"http.host": "a"}]) == [
        True,
        False,
    ]


# -- regexes: \p{..} without (?u), counted repetitions above 1,000 -----------------------------
@pytest.mark.parametrize("pattern", [r"\p{L}", r"\pL", r"\P{Greek}", r"[\p{L}]"])
def test_a_unicode_class_without_u_flag_is_refused_with_the_crate_message(pattern):
    err = refusal(f'http.host matches "{pattern}"')
    assert err.reason == "regex parse error: error: Unicode not allowed here"
    assert "error: Unicode not allowed here" in str(err)


def test_repetitions_above_re2s_1000_are_unrolled_on_both_paths():
    rows = [{"http.host": "a" * n} for n in (1000, 1001, 1002)]
    assert both_paths('http.host matches "^a{1001}$"', rows) == [False, True, False]
    rows = [{"http.host": "ab" * n} for n in (1, 2, 1500, 1501)]
    assert both_paths('http.host matches "^(ab){2,1500}$"', rows) == [False, True, True, False]
    rows = [{"http.host": "x" * n} for n in (1199, 1200, 5000)]
    assert both_paths('http.host matches "^x{1200,}$"', rows) == [False, True, True]


# -- recursive url_decode ----------------------------------------------------------------------
def encoded(text, times):
    for _ in range(times):
        text = quote(text, safe="")
    return text


def test_recursive_url_decode_stops_after_16_passes():
    rows = [{"http.request.uri.query": encoded("<", n)} for n in (1, 15, 16, 17, 20)]
    fully = 'url_decode(http.request.uri.query, "r") eq "<"'
    assert both_paths(fully, rows) == [True, True, True, False, False]
    # Encoded 17 times: 16 passes leave one level, "%3C".
    one_left = 'url_decode(http.request.uri.query, "r") eq "%3C"'
    assert both_paths(one_left, rows) == [False, False, False, True, False]
    # Without "r", one pass only.
    once = 'url_decode(http.request.uri.query) eq "%3C"'
    assert both_paths(once, rows[:2]) == [False, False]
    assert both_paths(once, [{"http.request.uri.query": encoded("<", 2)}]) == [True]


# -- JWT functions ---------------------------------------------------------------------------
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"


@pytest.mark.parametrize("function", ["is_jwt_valid", "is_jwt_present"])
def test_jwt_functions_evaluate_to_false(function):
    rows = [
        {},
        {
            "http.request.headers": {"authorization": [f"Bearer {JWT}"]},
            "http.request.headers.names": ["Authorization"],
            "http.cookie": f"jwt={JWT}",
        },
    ]
    assert both_paths(f'{function}("cfg-id")', rows) == [False, False]
    assert both_paths(f'not {function}("cfg-id")', rows) == [True, True]


# -- Array<Bool> inside any()/all() ----------------------------------------------------------------
def headers(a, b):
    return {"http.request.headers": {"a": a, "b": b}}


def test_array_bools_combine_element_wise_up_to_the_shorter_array():
    # The engine wants the combination in its own parentheses inside any()/all().
    a_and_b = 'any((http.request.headers["a"][*] eq "x" and http.request.headers["b"][*] eq "y"))'
    rows = [
        headers(["x", "1", "x"], ["1", "y", "y"]),  # pairs (x,1) (1,y) (x,y): the third
        headers(["x", "1"], ["1", "y"]),  # each side has a match, never in one pair
        headers(["1", "1", "x"], ["y", "y"]),  # the third "x" has no partner
    ]
    assert both_paths(a_and_b, rows) == [True, False, False]
    # any() over each whole array, combined after, says True for all three.
    split_any = (
        'any(http.request.headers["a"][*] eq "x") and any(http.request.headers["b"][*] eq "y")'
    )
    assert both_paths(split_any, rows) == [True, True, True]

    a_or_b = 'all((http.request.headers["a"][*] eq "x" or http.request.headers["b"][*] eq "y"))'
    rows = [
        headers(["x", "1"], ["1", "y"]),
        headers(["x", "1"], ["1", "1"]),
        headers(["x"], ["1", "1", "1"]),  # one pair only
    ]
    assert both_paths(a_or_b, rows) == [True, False, True]

    a_xor_b = 'any((http.request.headers["a"][*] eq "x" xor http.request.headers["b"][*] eq "y"))'
    rows = [headers(["x", "x"], ["y", "1"]), headers(["x", "1"], ["y", "1"])]
    assert both_paths(a_xor_b, rows) == [True, False]


# -- SqlTranslationError -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "function"),
    [
        ("bit_slice(http.host, 0, 70) eq 0", "bit_slice("),
        (
            'regex_replace(http.host, "^(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)$", "${10}") eq "j"',
            "regex_replace(",
        ),
    ],
)
def test_constructs_without_a_duckdb_translation_raise_sql_translation_error(source, function):
    expr = compile_expression(source)
    with pytest.raises(SqlTranslationError) as info:
        expr.to_sql()
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(function)
    assert "no SQL translation" in str(info.value)
    # The per-request path still runs the expression.
    assert expr.matches({"http.host": "abcdefghij"}) is (function == "regex_replace(")
