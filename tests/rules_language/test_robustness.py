"""Hostile input: lone surrogates, broken templates, deep JSON, deep nesting, large values.

Each test pins one problem the fuzzing of issue 10 found, and the class behind it:
whatever the expression text or the request, the user sees a language error or an
answer, quickly, and SQL whose size follows the expression's.
"""

import time

import duckdb
import pytest

from workbench.rules_language import ExpressionError, compile_expression
from workbench.rules_language.sql_compiler import SqlTranslationError
from workbench.rules_language.table import requests_table

# -- 1. lone surrogates ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "line", "column"),
    [
        ('http.host eq "\ud800"', 1, 15),
        ("\udfff", 1, 1),
        ('ssl and\n  http.host eq "a\udc80b"', 2, 18),
        ("http.host\ud800 eq 1", 1, 10),
    ],
)
def test_lone_surrogate_in_expression_is_refused_with_expression_error(source, line, column):
    with pytest.raises(ExpressionError) as caught:
        compile_expression(source)
    err = caught.value
    assert (err.line, err.column) == (line, column)
    assert "lone surrogate" in err.reason and "cannot be encoded as UTF-8" in err.reason
    # The message can be printed, logged and sent as JSON: the surrogate shows as U+FFFD.
    assert "\ufffd" in str(err)
    str(err).encode("utf-8")


def test_too_long_expression_with_a_surrogate_still_gives_a_printable_error():
    with pytest.raises(ExpressionError) as caught:
        compile_expression("\ud800" * 5000)
    assert "too long" in caught.value.reason
    str(caught.value).encode("utf-8")


def test_huge_expression_is_refused_quickly_with_a_short_message():
    source = 'http.host eq "' + "a" * 50_000_000 + '"'
    start = time.perf_counter()
    with pytest.raises(ExpressionError) as caught:
        compile_expression(source)
    assert time.perf_counter() - start < 1.0
    assert caught.value.column == 4097
    assert len(str(caught.value)) < 10_000


@pytest.mark.parametrize(
    ("source", "value", "expected"),
    [
        ('http.host eq "\\xed\\xa0\\x80"', "\ud800", True),
        ('http.host contains "a"', "\ud800a", True),
        ('http.host matches "^\\xed\\xa0"', "\ud800", True),
        ('http.host wildcard "*"', "\ud800", True),
        ('lower(http.host) eq "\\xed\\xa0\\x80a"', "\ud800A", True),
        ("len(http.host) eq 3", "\ud800", True),
        ('regex_replace(http.host, "(a)", "${1}${1}") eq "\\xed\\xa0\\x80aa"', "\ud800a", True),
        ('any(http.request.headers.names[*] in {"\\xed\\xa0\\x80"})', None, True),
        ('lookup_json_string(http.request.body.raw, "a") eq "x"', '{"a": "\ud800"}', False),
        ("ip.src eq 1.2.3.4", "\ud800", False),
    ],
)
def test_request_values_with_lone_surrogates_match_as_their_bytes(source, value, expected):
    expr = compile_expression(source)
    field = expr.fields[0]
    request = {field: ["\ud800"] if value is None else value}
    assert expr.matches(request) is expected


def test_named_list_items_with_lone_surrogates_work_on_both_paths():
    expr = compile_expression("http.host in $hosts")
    lists = {"hosts": ["\ud800", "a.com"]}
    assert expr.matches({"http.host": "\ud800"}, lists) is True
    assert "a.com" in expr.to_sql(lists)


def test_table_path_refuses_lone_surrogates_with_a_clear_error():
    with pytest.raises(ValueError, match="lone surrogate"):
        requests_table(duckdb.connect(), [{"http.host": "a\ud800"}], name="t")
    with pytest.raises(ValueError, match="lone surrogate"):
        requests_table(duckdb.connect(), [{"http.request.headers": {"\ud800": ["a"]}}], name="t")


# -- 2. replacement templates ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("/x/${", "is not closed by }"),
        ("/x/${1", "is not closed by }"),
        ("${}", "not a group number"),
        ("${name}", "not a group number"),
        ("$${1}${x", "is not closed by }"),
    ],
)
@pytest.mark.parametrize("function", ["regex_replace", "wildcard_replace"])
def test_malformed_replacement_template_is_refused_at_compile_time(function, template, reason):
    pattern = "/(.*)" if function == "regex_replace" else "/*"
    source = f'{function}(http.request.uri.path, "{pattern}", "{template}") eq "a"'
    with pytest.raises(ExpressionError) as caught:
        compile_expression(source)
    assert reason in caught.value.reason
    # The caret is under the replacement, the third argument.
    assert caught.value.column == source.index(f'"{template}"') + 1


def test_replacement_templates_expand_as_documented_on_both_paths(samples, sample_table):
    # ${n} is group n (empty when there is none), $$ is $, any other $ stands for itself.
    cases = [
        (
            'regex_replace(http.request.uri.path, "^/(a)(d)", "${2}$$${1}${7}$x")',
            "d$a$xmin/login.php",
        ),
        ('wildcard_replace(http.host, "*.example.*", "${2}/${1}")', "com/www"),
        ('regex_replace(http.request.uri.path, "^/", "${0}${0}")', "//admin/login.php"),
    ]
    for call, want in cases:
        expr = compile_expression(f'{call} eq "{want}"')
        expected = [expr.matches(r) for r in samples]
        assert expected[0] is True, call
        got = [
            row[0] for row in sample_table.sql(f"select {expr.to_sql()} from samples").fetchall()
        ]
        assert got == expected, call


def test_replacement_of_a_large_value_takes_linear_time():
    expr = compile_expression(
        'regex_replace(http.request.body.raw, "^(.*)$", "${1}${1}$$${1}") eq "x"'
    )
    value = "a" * 1_000_000
    start = time.perf_counter()
    assert expr.matches({"http.request.body.raw": value}) is False
    assert time.perf_counter() - start < 1.0


def test_replacement_group_above_nine_has_no_sql_translation():
    groups = "(.)" * 10
    expr = compile_expression(f'regex_replace(http.host, "{groups}", "${{10}}") eq "j"')
    assert expr.matches({"http.host": "abcdefghij"}) is True
    with pytest.raises(SqlTranslationError, match="groups 0 to 9"):
        expr.to_sql()


# -- 3. deep JSON ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "[" * 100_000,
        "{" * 100_000,
        '{"a": ' * 50_000,
        "[" * 128 + '"x"' + "]" * 128,
    ],
)
@pytest.mark.parametrize(
    "source",
    [
        'lookup_json_string(http.request.body.raw, 0) eq "x"',
        "lookup_json_integer(http.request.body.raw, 0) eq 1",
    ],
)
def test_deeply_nested_json_body_finds_nothing_without_recursion_error(source, body):
    expr = compile_expression(source)
    start = time.perf_counter()
    assert expr.matches({"http.request.body.raw": body}) is False
    assert time.perf_counter() - start < 1.0


def test_json_nesting_limit_is_the_same_on_both_paths():
    # 127 levels are read; 128 are not (serde_json's limit). Brackets in strings do not count.
    bodies = {
        "deep127": "[" * 126 + '["x"]' + "]" * 126,
        "deep128": "[" * 127 + '["x"]' + "]" * 127,
        "in_string": '["x", "' + "[" * 300 + '"]',
        "unterminated": '["' + '\\"' * 300 + "[" * 200,
    }
    path = ", 0" * 127
    expr = compile_expression(f'lookup_json_string(http.request.body.raw{path}) eq "x"')
    first = compile_expression('lookup_json_string(http.request.body.raw, 0) eq "x"')
    requests = [{"http.request.body.raw": b} for b in bodies.values()]
    con = duckdb.connect()
    requests_table(con, requests, name="bodies", fields=["http.request.body.raw"])
    for e, want in ((expr, [True, False, False, False]), (first, [False, False, True, False])):
        assert [e.matches(r) for r in requests] == want
        got = [row[0] for row in con.sql(f"select {e.to_sql()} from bodies").fetchall()]
        assert got == want


# -- 4. SQL size -------------------------------------------------------------------------------

# Every construct whose SQL used its argument more than once, wrapped around itself.
NESTED = [
    ("lower(#)", "http.host", '"a"'),
    ("upper(#)", "http.host", '"a"'),
    ("substring(#, 1, -1)", "http.host", '"a"'),
    ("decode_base64(#)", "http.host", '"a"'),
    ('lookup_json_string(#, "a")', "http.host", '"a"'),
    ('to_string(lookup_json_integer(#, "a"))', "http.host", '"a"'),
    ("sha256(#)", "http.host", '"a"'),
    ('join(split(#, ",", 3), ",")', "http.host", '"a"'),
    ('remove_query_args(#, "a")', "http.host", '"a"'),
    ('regex_replace(#, "\\\\xff", "x")', "http.host", '"a"'),
    ('wildcard_replace(#, "*\\xff*", "${1}")', "http.host", '"a"'),
    ('concat(substring(#, 0, 1), "x")', "http.host", '"a"'),
    ('url_decode(#, "r")', "http.host", '"a"'),
    ("cidr(#, 24, 64)", "ip.src", "10.0.0.0"),
    ("cidr6(#, 64)", "ip.src", "10.0.0.0"),
]


def _nest(template, base, depth):
    text = base
    for _ in range(depth):
        text = template.replace("#", text)
    return text


@pytest.mark.parametrize(("template", "base", "literal"), NESTED, ids=[n[0] for n in NESTED])
def test_sql_size_grows_linearly_with_nesting(template, base, literal):
    sizes = []
    for depth in (10, 20, 40):
        source = f"{_nest(template, base, depth)} eq {literal}"
        sizes.append(len(compile_expression(source).to_sql()))
    # Linear growth adds the same amount per level: 20 more levels cost twice 10 more.
    assert sizes[2] - sizes[1] <= 2.2 * (sizes[1] - sizes[0]), sizes
    assert sizes[2] < 40_000, sizes


def test_twelve_nested_lower_give_a_few_kilobytes_of_sql():
    source = "lower(" * 12 + "http.host" + ")" * 12 + ' eq "a"'
    assert len(source) == 100
    assert len(compile_expression(source).to_sql()) < 5_000  # was 1.4 GB


NAMES = "http.request.headers.names[*]"


def _deep_array_logic(depth):
    """``((((a and b) or c) and d) or e ...)`` over arrays: each level holds the one below."""
    text = f'({NAMES} eq "a")'
    for i in range(depth):
        text = f'({text} and {NAMES} ne "{i}" or {NAMES} eq "b")'
    return text


# Constructs with a list of items (set members, chained array tests) or a nesting depth.
GROWING = {
    "int set": lambda k: (
        "len(lower(lower(http.host))) in {"
        + " ".join(f"{3 * i}..{3 * i + 1}" for i in range(k))
        + "}"
    ),
    "ip set of a function": lambda k: (
        "cidr6(ip.src, 64) in {" + " ".join(f"2001:db8:{i:x}::/64" for i in range(k)) + "}"
    ),
    "ip set of a field": lambda k: (
        "ip.src in {" + " ".join(f"2001:db8:{i:x}::1 2001:db9:{i:x}::/64" for i in range(k)) + "}"
    ),
    "array and-chain": lambda k: (
        "any((" + " and ".join(f'{NAMES} eq "{i}"' for i in range(k)) + "))"
    ),
    "nested array logic": lambda k: "any(" + _deep_array_logic(k) + ")",
}


@pytest.mark.parametrize("make", GROWING.values(), ids=GROWING.keys())
def test_sets_and_array_logic_grow_linearly(make):
    sizes = [len(compile_expression(make(k)).to_sql()) for k in (5, 10, 20)]
    assert sizes[2] - sizes[1] <= 2.2 * (sizes[1] - sizes[0]), sizes
    # Each further item costs its own text, never another copy of the value tested.
    assert (sizes[2] - sizes[1]) / 10 < 600, sizes


@pytest.mark.parametrize(("template", "base", "literal"), NESTED, ids=[n[0] for n in NESTED])
def test_nested_functions_agree_on_both_paths(template, base, literal):
    expr = compile_expression(f"{_nest(template, base, 4)} eq {literal}")
    requests = [
        {"http.host": "aB,c=1&a=2", "ip.src": "10.1.2.3"},
        {"http.host": "é\xff,x", "ip.src": "2001:db8::1"},
        {"http.host": '{"a": "YQ=="}', "ip.src": "::1"},
        {},
    ]
    con = duckdb.connect()
    requests_table(con, requests, name="r", fields=["http.host", "ip.src"])
    got = [row[0] for row in con.sql(f"select {expr.to_sql()} from r").fetchall()]
    assert got == [expr.matches(r) for r in requests]


# -- 5. linear time ------------------------------------------------------------------------------

MEGABYTE = [
    ('url_decode(http.request.body.raw, "ur") eq "x"', "%u0041%25" * 100_000),
    ("bit_slice(http.request.body.raw, 8, 15) eq 1", "a" * 1_000_000),
    ('lookup_json_string(http.request.body.raw, "a") eq "x"', '["' + '\\"' * 500_000),
    ('lookup_json_string(http.request.body.raw, "a") eq "x"', "[" * 500_000 + "]" * 500_000),
    ('http.request.body.raw wildcard "*a*b*a*b*a*b*a*b*c"', "ab" * 500_000),
    ('wildcard_replace(http.request.body.raw, "*a*b*", "${3}") eq "x"', "ab" * 500_000),
    ('regex_replace(http.request.body.raw, "(a|b)*c", "${1}") eq "x"', "ab" * 500_000),
    ('remove_query_args(http.request.body.raw, "a", "b") eq "x"', "a=1&" * 250_000),
    ('decode_base64(http.request.body.raw) eq "x"', "YWJj" * 250_000),
    ('join(split(http.request.body.raw, "&", 128), "") eq "x"', "a=1&" * 250_000),
    ("ip.src eq 1.2.3.4", "1" * 1_000_000),
]


@pytest.mark.parametrize(("source", "value"), MEGABYTE, ids=[s[:40] for s, _ in MEGABYTE])
def test_functions_over_a_megabyte_answer_within_a_second(source, value):
    expr = compile_expression(source)
    field = expr.fields[0]
    start = time.perf_counter()
    expr.matches({field: value})
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    "pattern", ["(a{1000}){600}", "((a{2}){3}){200}b", "(?u:.){1000}", "(a{10}){101}"]
)
def test_nested_counted_repetitions_compile_and_match(pattern):
    expr = compile_expression(f'http.host matches "{pattern}"')
    assert expr.matches({"http.host": "ab"}) is False
    assert "regexp_matches" in expr.to_sql()


def test_regex_replace_pattern_must_be_utf8_text():
    with pytest.raises(ExpressionError, match="not valid UTF-8"):
        compile_expression('regex_replace(http.host, "\\xff", "x") eq "a"')
    # A byte escape inside the regex still matches that byte.
    expr = compile_expression('regex_replace(http.host, "\\\\xff", "x") eq "x"')
    assert expr.matches({"http.host": b"\xff"}) is True


def test_deep_array_logic_agrees_on_both_paths():
    expr = compile_expression("any(" + _deep_array_logic(6) + ")")
    requests = [
        {"http.request.headers.names": names}
        for names in (["a"], ["b", "0"], ["a", "3", "x"], ["5"], [])
    ]
    con = duckdb.connect()
    requests_table(con, requests, name="r", fields=["http.request.headers.names"])
    got = [row[0] for row in con.sql(f"select {expr.to_sql()} from r").fetchall()]
    assert got == [expr.matches(r) for r in requests]
