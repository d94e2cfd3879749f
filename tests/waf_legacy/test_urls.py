"""URL patterns as expressions agree with the page rules' own matching."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.firewall.pagerules import PageRule
from workbench.rules_language import compile_expression
from workbench.rules_language.table import requests_table
from workbench.waf_legacy.urls import any_url_expression, url_pattern_expression


def _rule(pattern):
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return PageRule("x", pattern, [], 1, "active", now, now)


def _both(pattern, url):
    expr = compile_expression(url_pattern_expression(pattern))
    return expr.matches({"http.request.full_uri": url}), _rule(pattern).matches_url(url)


@pytest.mark.parametrize(
    ("pattern", "url", "expected"),
    [
        ("example.com/admin*", "https://example.com/admin/x", True),
        ("example.com/admin*", "http://EXAMPLE.com/Admin", True),
        ("example.com/admin*", "https://example.com/other?u=example.com/admin", False),
        ("example.com/admin", "https://example.com/admin/", False),
        ("https://example.com/*", "http://example.com/x", False),
        ("https://example.com/*", "https://example.com/x?y=1", True),
        ("*.example.com/*", "https://www.example.com/", True),
        ("*.example.com/*", "https://example.com/", False),
        ('example.com/a"b\\c*', 'https://example.com/a"b\\cd', True),
        ("example.com/a?b*", "https://example.com/a?bc", True),
        ("example.com/a?b*", "https://example.com/aXb", False),
        ("example.com/" + "*x" * 12, "https://example.com/" + "yx" * 12, True),
        ("example.com/" + "*x" * 12, "https://example.com/" + "yx" * 11, False),
        (
            "https://example.com/(a)[b]{c}.+$^|" + "*" * 3 + "z" + "*a" * 11,
            "https://example.com/(a)[b]{c}.+$^|qz" + "a" * 11,
            True,
        ),
        ("example.com/***", "https://example.com/", True),
    ],
)
def test_examples(pattern, url, expected):
    assert _both(pattern, url) == (expected, expected)
    # The whole-table path (DuckDB SQL) says the same.
    con = duckdb.connect()
    requests_table(con, [{"http.request.full_uri": url}], name="r")
    sql = compile_expression(url_pattern_expression(pattern)).to_sql()
    assert con.sql(f"SELECT {sql} FROM r").fetchall() == [(expected,)]


_PIECES = st.sampled_from(["*", "a", "b", ".", "/", "?", "=", "\\", '"', "(", "+", "A"])
_PATTERNS = st.lists(_PIECES, max_size=14).map("".join)
_URL_PIECES = st.sampled_from(["a", "b", ".", "/", "?", "=", "\\", '"', "(", "+", "A", "x"])


@settings(max_examples=300, deadline=None)
@given(
    scheme=st.sampled_from(["", "http://", "https://"]),
    pattern=_PATTERNS,
    url_scheme=st.sampled_from(["http://", "https://"]),
    url=st.lists(_URL_PIECES, max_size=12).map("".join),
)
def test_the_expression_agrees_with_matches_url(scheme, pattern, url_scheme, url):
    # Build URLs close to the pattern too, so matches are not all misses.
    host_pattern = "ex.com/" + pattern
    filled = url_scheme + "ex.com/" + pattern.replace("*", url[:3])
    for candidate in (url_scheme + "ex.com/" + url, filled):
        via_expression, via_page_rule = _both(scheme + host_pattern, candidate)
        assert via_expression == via_page_rule


def test_any_url_joins_patterns_and_needs_one():
    expr = compile_expression(any_url_expression(["a.example/x*", "https://b.example/*"]))
    assert expr.matches({"http.request.full_uri": "http://a.example/xy"})
    assert expr.matches({"http.request.full_uri": "https://b.example/"})
    assert not expr.matches({"http.request.full_uri": "http://b.example/"})
    with pytest.raises(ValueError):
        any_url_expression([])
