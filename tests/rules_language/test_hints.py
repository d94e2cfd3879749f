"""Plain-words hints beneath the engine's messages, and undefined named lists."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.rules_language import ExpressionError, compile_expression
from workbench.rules_language.hints import hint_for, undefined_lists


def error_of(source: str) -> ExpressionError:
    with pytest.raises(ExpressionError) as info:
        compile_expression(source)
    return info.value


def hint(source: str) -> str | None:
    return hint_for(source, error_of(source))


# (expression, the engine's reason, what the hint must say)
MISTAKES = [
    # a misspelt operator: the engine reports it in several ways, depending on where it stops
    ('http.request.uri.path contain "/admin"', "expected ComparisonOp", "did you mean `contains`?"),
    ('http.host matchs "a"', "expected ComparisonOp", "did you mean `matches`?"),
    ('http.host equals "a"', "unknown identifier", "`equals` is not an operator: did you mean `eq`?"),
    ('http.host containss "a"', "invalid digit found in string while parsing with radix 16", "did you mean `contains`?"),
    ('http.host wildcards "a"', 'expected " or r', "did you mean `wildcard`?"),
    ('http.host neq "a"', "unknown identifier", "did you mean `ne`?"),
    ('http.host = "a"', "expected ComparisonOp", "did you mean `eq`?"),
    ('http.host <> "a"', "invalid digit found in string while parsing with radix 16", "did you mean `ne`?"),
    ('http.host EQ "a"', "expected ComparisonOp", "lowercase: `eq`"),
    ('http.host startswith "/a"', "expected ComparisonOp", "`starts_with` is a function"),
    ('http.host not contains "a"', "expected ComparisonOp", "`not` goes in front of the whole condition"),
    ('http.host eq "a" andd ssl', "unknown identifier", "did you mean `and`?"),
    ('http.host eq "a" AND ssl', "unrecognised input", "lowercase: `and`"),
    # a string compared with an Integer (or IP) field
    ('cf.waf.score lt "50"', "expected digit", "`cf.waf.score` is an Integer field: compare it with a number, without quotes: `50`"),
    ('cf.waf.score in {1 "2"}', "expected digit", "without quotes: `2`"),
    ('ip.src eq "192.0.2.1"', "expected IP address character", "`ip.src` is an IP address field: write the address without quotes: `192.0.2.1`"),
    # a value missing after the operator
    ("http.host eq", "unrecognised input", 'A value is missing after `eq`: give text in double quotes, for example `http.host eq "example.com"`'),
    ("cf.waf.score ge", "expected digit", "A value is missing after `ge`: `cf.waf.score` is an Integer field"),
    ("ip.src eq", "expected IP address character", "A value is missing after `eq`: give an IP address"),
    ("http.request.uri.path matches", "unrecognised input", "A value is missing after `matches`"),
    ("http.host", "expected ComparisonOp", "a condition needs an operator and a value after it"),
    ('http.host eq "a" and', "expected identifier character", "The expression ends after `and`"),
    # an unknown field
    ('http.hots eq "a"', "unknown identifier", "There is no field `http.hots`: did you mean `http.host`?"),
    ('ip.src.contry eq "US"', "unknown identifier", "did you mean `ip.src.country`?"),
    ('uri.path eq "/"', "unknown identifier", "did you mean `http.request.uri.path`?"),
    ('http.Host eq "a"', "unknown identifier", "case-sensitive: write `http.host`"),
    ('lowr(http.host) eq "a"', "unknown identifier", "There is no function `lowr`: did you mean `lower`?"),
    ("http.host eq example.com", "unknown identifier", 'Text values go in double quotes: `"example.com"`'),
    # unbalanced parentheses and quotes
    ('(http.host eq "a" or ssl', 'expected literal ")"', "A `(` is not closed: add `)` where the group ends (1 opened, 0 closed)"),
    ('http.host eq "a")', "unrecognised input", "There is a `)` with no `(` before it"),
    ('http.host eq "example.com', "could not find an ending quote", 'A string is not closed: add a closing `"`'),
    ('http.host eq "a\\"', "could not find an ending quote", '`\\"` is a quote inside the text'),
    ('http.request.method in {"GET" "POST"', "unrecognised input", "The set opened with `{` is not closed"),
    # in without braces, and other set mistakes
    ('ip.src.country in ("US", "FR")', 'expected literal "{"', 'the values go in braces, separated by spaces: `ip.src.country in {"US" "FR"}`'),
    ("ip.src in 192.0.2.0/24", 'expected literal "{"', "`ip.src in {192.0.2.0/24}`"),
    ("cf.waf.score in", 'expected literal "{"', "`in` needs a set of values in braces after it"),
    ('ip.src.country in {"US", "FR"}', "invalid digit found in string while parsing with radix 16", "separated by spaces, not commas"),
    ("http.request.method in {GET POST}", "invalid digit found in string while parsing with radix 16", 'goes in double quotes, in a set too: `"GET"`'),
    ("ip.src eq 192.0.2.7/24", "couldn't parse address in network: invalid IP address syntax", "A CIDR range goes in a set: `ip.src in {192.0.2.0/24}`"),
    ("ip.src eq 192.0.2", "couldn't parse address in network: invalid IP address syntax", "`192.0.2` is not an IP address"),
    ('any(http.host eq "x")', "expected value of type Array<Bool>, but got Bool", 'test it without `any()`'),
    ("any(http.request.headers.names)", "expected value of type Array<Bool>, but got Array<Bytes>", 'as in `any(http.request.headers.names[*] eq "x")`'),
    ('lower(http.host "x") eq "y"', 'expected literal ","', "separated by commas"),
    ('lower eq "x"', 'expected literal "("', "`lower` is a function"),
    ("any(cf.bot_management.detection_idz[*] eq 1)", "unrecognised input", "did you mean `cf.bot_management.detection_ids`?"),
    # Booleans, quotes, numbers
    ("ssl eq true", "unrecognised input", "`ssl` is a Boolean field: it is a whole condition on its own"),
    ("ssl and true", "unknown identifier", "There is no `true` value"),
    ("http.host eq 'a'", "invalid digit found in string while parsing with radix 16", "double quotes: `\"a\"`, not `'a'`"),
    ("cf.waf.score gt 50.5", "unrecognised input", "no decimal point"),
]  # fmt: skip


@pytest.mark.parametrize(("source", "reason", "expected"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_common_mistake_gets_a_plain_words_hint(source, reason, expected):
    err = error_of(source)
    assert err.reason == reason  # the engine's own words, which the hint must not replace
    text = hint_for(source, err)
    assert text is not None and expected in text, text


def test_the_engine_message_is_left_as_it_is():
    err = error_of('cf.waf.score lt "50"')
    before = (str(err), err.reason, err.line, err.column, err.span)
    assert hint_for('cf.waf.score lt "50"', err)
    assert (str(err), err.reason, err.line, err.column, err.span) == before
    assert str(err) == (
        'Filter parsing error (1:17):\ncf.waf.score lt "50"\n                ^^^^ expected digit\n'
    )


def test_positions_follow_the_engine_lines_columns_and_trimming():
    # Leading spaces are trimmed before parsing; columns count UTF-8 bytes; lines restart.
    assert "did you mean `http.host`?" in hint('   http.hots eq "a"')
    assert "did you mean `eq`?" in hint('http.host eq "é" and http.host equals "x"')
    assert "write the address without quotes: `1.2.3.4`" in hint(
        'http.host eq "a" or\n   ip.src eq "1.2.3.4"'
    )


def test_a_field_that_resembles_nothing_gets_the_naming_rule():
    assert "There is no field `qqqq` in the http scheme" in hint('qqqq eq "a"')


def test_the_magic_firewall_scheme_has_its_own_fields():
    err = ExpressionError.at("tcp.dstprt eq 22", 0, 10, "unknown identifier")
    assert hint_for("tcp.dstprt eq 22", err, scheme="magic_firewall") == (
        "There is no field `tcp.dstprt`: did you mean `tcp.dstport`?"
    )


def test_no_hint_when_there_is_nothing_to_add():
    err = ExpressionError("Filter parsing error (9:1):\n", 9, 1, "unknown identifier")
    assert hint_for("ssl", err) is None  # a line the expression does not have


def test_undefined_lists_names_the_lists_not_given():
    expr = "ip.src in $bad_ips or ip.src in $office or http.host in $hosts"
    assert undefined_lists(expr, {"office": ["192.0.2.0/24"]}) == ["bad_ips", "hosts"]
    assert undefined_lists(expr, ["office", "hosts", "bad_ips"]) == []
    assert undefined_lists(expr, None) == ["bad_ips", "hosts", "office"]
    assert undefined_lists(compile_expression("ssl"), None) == []


def test_an_undefined_list_matches_nothing_silently():
    # Why the panel warns: no error, just no match.
    expr = compile_expression("ip.src in $bad_ips")
    assert expr.matches({"ip.src": "192.0.2.1"}) is False
    assert expr.matches({"ip.src": "192.0.2.1"}, lists={"bad_ips": ["192.0.2.0/24"]}) is True


PIECES = st.sampled_from(
    ["http.host", "cf.waf.score", "ip.src", "ssl", "eq", "contain", "in", "and", "or", "not",
     "(", ")", "{", "}", '"a"', '"', "'", "50", "1.2.3.4", "$x", ",", " ", "\n", "é", "==", "[", "]"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=8).map("".join))
def test_hint_for_never_raises(source):
    try:
        compile_expression(source)
    except ExpressionError as err:
        text = hint_for(source, err)
        assert text is None or (isinstance(text, str) and text.strip())
