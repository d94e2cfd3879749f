r"""Unicode binary properties in ``\p{...}`` under ``(?u)`` (``Alphabetic``, ``Emoji``, ...).

Each case runs on both paths (per request and DuckDB SQL), asserts they agree, and
checks the regex crate's answer for characters in and out of the property.
"""

import pytest
from regex_paths import both

from workbench.rules_language import ExpressionError, compile_expression


@pytest.mark.parametrize(
    ("prop", "inside", "outside"),
    [
        ("Alphabetic", ["é", "a", "Ж", "漢"], ["1", "-", "😀"]),
        ("Emoji", ["😀", "❤"], ["x", "é"]),
        ("Extended_Pictographic", ["😀", "©"], ["x", "1"]),
        ("Uppercase", ["A", "É", "Ω"], ["a", "1", "é"]),
        ("Lowercase", ["a", "é", "ß"], ["A", "1"]),
        ("Math", ["+", "∑", "<"], ["a", "-"]),
        ("Dash", ["\u2010", "-", "—"], ["_", "a"]),
        ("Regional_Indicator", ["🇫"], ["F"]),
    ],
)
def test_binary_property_matches_its_characters_on_both_paths(prop, inside, outside):
    values = inside + outside
    expected = [True] * len(inside) + [False] * len(outside)
    assert both(rf"(?u)^\p{{{prop}}}$", values) == expected
    assert both(rf"(?u)^\P{{{prop}}}$", values) == [not e for e in expected]
    assert both(rf"(?u)^[\p{{{prop}}}]$", values) == expected
    assert both(rf"(?u)^[^\p{{{prop}}}]$", values) == [not e for e in expected]


def test_binary_properties_combine_with_other_class_members():
    assert both(r"(?u)^[\p{Uppercase}\d]+$", ["AB12", "Ab", "ÉΩ"]) == [True, False, True]
    assert both(r"(?u)^[\p{Alphabetic}--\p{Latin}]+$", ["αβ", "ab", "漢字"]) == [True, False, True]
    assert both(r"(?u)^[\p{Emoji}&&\p{ASCII}]+$", ["#1*", "😀", "a"]) == [True, False, False]


@pytest.mark.parametrize(
    "name",
    [
        "Alphabetic",
        "alphabetic",
        "ALPHA",
        "Is_Alphabetic",
        "isalpha",
        "is alphabetic",
        "Alpha-betic",
    ],
)
def test_loose_names_resolve_like_the_crate(name):
    assert both(rf"(?u)^\p{{{name}}}+$", ["été", "a1"]) == [True, False]


@pytest.mark.parametrize(
    ("name", "same_as"),
    [
        ("ExtPict", "Extended_Pictographic"),
        ("EPres", "Emoji_Presentation"),
        ("upper", "Uppercase"),
        ("WSpace", "White_Space"),
        ("XIDS", "XID_Start"),
        ("Default-Ignorable-Code-Point", "DI"),
    ],
)
def test_short_aliases_name_the_same_property(name, same_as):
    values = ["😀", "A", "a", " ", "\u00ad", "1", "é"]
    assert both(rf"(?u)^\p{{{name}}}$", values) == both(rf"(?u)^\p{{{same_as}}}$", values)


@pytest.mark.parametrize("name", ["Alphabetix", "Emojis", "ISO_Comment", "isc", "InCB"])
def test_unknown_names_are_still_refused_with_the_engines_message(name):
    with pytest.raises(ExpressionError) as err:
        compile_expression(rf'http.host matches r"(?u)\p{{{name}}}"')
    assert "Unicode property not found" in str(err.value)


def test_binary_properties_need_unicode_on():
    with pytest.raises(ExpressionError) as err:
        compile_expression(r'http.host matches r"\p{Alphabetic}"')
    assert "Unicode not allowed here" in str(err.value)


@pytest.mark.parametrize("name", ["LC", "Cased_Letter", "IsLC"])
def test_cased_letter_is_the_general_category_not_a_mapping(name):
    # 'lc' is also the Lowercase_Mapping alias; the crate reads it as Lu | Ll | Lt.
    assert both(rf"(?u)^\p{{{name}}}$", ["A", "a", "ǅ", "ª", "1"]) == [
        True,
        True,
        True,
        False,
        False,
    ]
