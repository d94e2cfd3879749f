r"""Regexes with Unicode on (``(?u)``): classes in brackets, \w \d \s and case folding.

Each case runs on both paths (per request and DuckDB SQL) and asserts they agree
and give the regex crate's Unicode answer.
"""

import duckdb
import pytest
from regex_paths import both

from workbench.rules_language import ExpressionError, compile_expression, get_scheme
from workbench.rules_language.table import requests_table


@pytest.mark.parametrize(
    ("pattern", "values", "expected"),
    [
        # Unicode classes inside brackets, plain and negated, with other members.
        (r"(?u)^[\p{Greek}]+$", ["αβγ", "abc", "αb", ""], [True, False, False, False]),
        (r"(?u)^[\p{L}\d_-]+$", ["naïve_1-x", "a b", "日本-2"], [True, False, True]),
        (r"(?u)^[^\p{Greek}]+$", ["abc", "aβc", "é"], [True, False, True]),
        (r"(?u)^[\pL]$", ["é", "e", "1", "ab"], [True, True, False, False]),
        (r"(?u)^[\P{L}]$", ["é", "1", "€"], [False, True, True]),
        (r"(?u)^[\p{Greek}&&\p{Lu}]+$", ["ΑΒΓ", "αβγ", "ABC"], [True, False, False]),
        (r"(?u)^[\p{L}--\p{Latin}]+$", ["αβ", "한글", "abc"], [True, True, False]),
        # A bracket class is a set of code points with Unicode on.
        (r"(?u)^[^a]$", ["é", "a", "b", "ab"], [True, False, True, False]),
        (r"(?u)^[é-ë]$", ["é", "ê", "e", "ì"], [True, True, False, False]),
        (r"(?u)^[\x{3b1}-\x{3c9}]+$", ["αβγ", "ΑΒΓ"], [True, False]),
    ],
)
def test_unicode_classes_inside_brackets(pattern, values, expected):
    assert both(pattern, values) == expected


@pytest.mark.parametrize(
    ("pattern", "values", "expected"),
    [
        # \w, \d, \s are Unicode classes under (?u) ...
        (r"(?u)^\w+$", ["naïve", "日本語", "a_1", "a-b", "Ⓐb"], [True, True, True, False, True]),
        (r"(?u)^\d+$", ["123", "١٢٣", "१२", "12a"], [True, True, True, False]),
        (r"(?u)^\s$", [" ", "\u00a0", "\u3000", "\u2028", "x"], [True, True, True, True, False]),
        (r"(?u)^\W$", ["é", "-", "€"], [False, True, True]),
        (r"(?u)^[\w]+$", ["naïve", "a b"], [True, False]),
        # ... and ASCII (byte-wise) without it.
        (r"^\w+$", ["naïve", "abc"], [False, True]),
        (r"^\d+$", ["١٢٣", "123"], [False, True]),
        (r"^\s$", ["\u00a0", " "], [False, True]),
    ],
)
def test_perl_classes_follow_unicode_only_under_u(pattern, values, expected):
    assert both(pattern, values) == expected


@pytest.mark.parametrize(
    ("pattern", "values", "expected"),
    [
        # Simple case folding: one code point to one, so "ß" is not "SS".
        (r"(?iu)^straße$", ["STRASSE", "STRAẞE", "straße", "Straße"], [False, True, True, True]),
        (r"(?iu)^ΣΑΣ$", ["σας", "σασ", "ΣΑΣ", "sas"], [True, True, True, False]),
        (r"(?iu)^k$", ["K", "k", "\u212a"], [True, True, True]),
        (r"(?iu)^s$", ["S", "\u017f", "ß"], [True, True, False]),
        # The dotless ı and the dotted İ fold to i only in Turkic tailoring, which the crate skips.
        (r"(?iu)^i$", ["I", "ı", "İ"], [True, False, False]),
        (r"(?iu)^ǆ$", ["Ǆ", "ǅ"], [True, True]),
        (r"(?iu)^[a-c]+$", ["ABC", "abc", "abd"], [True, True, False]),
        (r"(?iu)^[α-ω]+$", ["ΑΒΓ", "αβγ"], [True, True]),
        (r"(?iu)^\p{Lu}+$", ["abc", "ABC", "123"], [True, True, False]),
        (r"(?iu)^é$", ["É", "é", "e"], [True, True, False]),
        # Without (?u), (?i) folds ASCII letters only.
        (r"(?i)^é$", ["É", "é"], [False, True]),
        (r"(?i)^k$", ["\u212a", "K"], [False, True]),
        (r"(?i)^σας$", ["ΣΑΣ", "σας"], [False, True]),
    ],
)
def test_case_folding_is_unicode_simple_folding_under_u(pattern, values, expected):
    assert both(pattern, values) == expected


def test_a_unicode_class_inside_brackets_without_u_is_refused_with_the_crate_message():
    with pytest.raises(ExpressionError) as err:
        compile_expression(r'http.host matches "[\p{Greek}]"')
    assert str(err.value).rstrip().endswith("error: Unicode not allowed here")


def test_regex_replace_uses_unicode_classes_on_both_paths():
    requests = [{"http.request.uri.path": v} for v in ["/a €/c", "/naïve"]]
    source = r'regex_replace(http.request.uri.path, "(?u)[^\\w/]+", "_") eq "/a_/c"'
    expr = compile_expression(source)
    per_request = [expr.matches(r) for r in requests]
    con = duckdb.connect()
    requests_table(con, requests, name="r", fields=list(get_scheme("http").fields))
    rows = con.sql(f"select {expr.to_sql()} from r").fetchall()
    assert [row[0] for row in rows] == per_request == [True, False]


@pytest.mark.parametrize(
    ("pattern", "values", "expected"),
    [
        (r"(?u)^\p{White_Space}$", ["\u00a0", " ", "x"], [True, True, False]),
        (r"(?u)^\p{ASCII}+$", ["abc", "é"], [True, False]),
        (r"(?u)^\P{Assigned}$", ["\U000e0fff", "a"], [True, False]),
        (r"(?u)^[\p{Hex_Digit}]+$", ["fF09", "０ａ", "g"], [True, True, False]),
    ],
)
def test_binary_properties_built_from_tables(pattern, values, expected):
    assert both(pattern, values) == expected


def test_binary_properties_the_crate_accepts_are_built_from_the_generated_table():
    # Once refused ("not supported by the workbench"); see test_unicode_binary_properties.py.
    assert both(r"(?u)^\p{Alphabetic}+$", ["été", "a1"]) == [True, False]


def test_word_boundary_stays_ascii_under_u():
    # RE2 has no Unicode \b: both paths treat non-ASCII letters as non-word here.
    assert both(r"(?u)\bé", ["é", "a é"]) == [False, False]
    assert both(r"(?u)\bcaf", ["café", "xcafé", "é café"]) == [True, False, True]
