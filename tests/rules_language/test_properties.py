"""Property tests: nothing but ExpressionError escapes, and both paths always agree."""

import duckdb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.rules_language import ExpressionError, compile_expression
from workbench.rules_language.table import requests_table

TOKENS = [
    "http.host",
    "ip.src",
    "cf.waf.score",
    "ssl",
    "http.request.headers",
    "[",
    "]",
    "[*]",
    "(",
    ")",
    "{",
    "}",
    '"',
    "\\",
    'r#"',
    "eq",
    "ne",
    "==",
    "!=",
    "<",
    ">=",
    "and",
    "or",
    "xor",
    "not",
    "!",
    "&&",
    "||",
    "^^",
    "in",
    "contains",
    "matches",
    "wildcard",
    "strict wildcard",
    "~",
    "&",
    "lower(",
    "len(",
    "any(",
    "concat(",
    ",",
    "$",
    "1",
    "0x1f",
    "017",
    "-5",
    "1.2.3.4",
    "::1",
    "/24",
    "..",
    ":",
    "61:62",
    " ",
    "\n",
    "\t",
    "*",
    "é",
    "\x00",
    "a",
    "_",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=25).map("".join) | st.text(max_size=80))
def test_arbitrary_text_only_raises_expression_error(source):
    try:
        expr = compile_expression(source)
    except ExpressionError as err:
        assert str(err).startswith("Filter parsing error (")
        assert err.line >= 1 and err.column >= 1
        return
    expr.matches({})
    expr.to_sql()


# -- generated expressions --------------------------------------------------------

TEXT = st.text(alphabet=st.sampled_from(list("aAbB/._-*é%\\\"' ") + ["\n", "ß"]), max_size=6)


def quote(value: str) -> str:
    out = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{out}"'


string_fields = st.sampled_from(["http.host", "http.request.uri.path"])
string_values = st.one_of(
    string_fields,
    string_fields.map(lambda f: f"lower({f})"),
    string_fields.map(lambda f: f"upper({f})"),
    st.just('http.request.headers["accept"][0]'),
)


@st.composite
def string_test(draw):
    lhs = draw(string_values)
    op = draw(
        st.sampled_from(
            ["eq", "ne", "lt", "ge", "contains", "matches", "wildcard", "strict wildcard", "in"]
        )
    )
    if op == "matches":
        pattern = draw(
            st.sampled_from(
                ["^a", "b$", "a.b", "(?i)ab", "[^/]+", "^/..", "é", "\\.", ".*", "a|b", "A{2}"]
            )
        )
        return f"{lhs} matches {quote(pattern)}"
    if op in ("wildcard", "strict wildcard"):
        pattern = draw(st.text(alphabet=st.sampled_from(list("aAbé/.")), max_size=4))
        stars = draw(st.sampled_from(["*", "", "*{}*", "{}*", "*{}"]))
        text = stars.replace("{}", pattern) if "{}" in stars else stars + pattern
        return f"{lhs} {op} {quote(text.replace('**', '*'))}"
    if op == "in":
        items = draw(st.lists(TEXT, max_size=3))
        return f"{lhs} in {{{' '.join(quote(i) for i in items)}}}"
    return f"{lhs} {op} {quote(draw(TEXT))}"


@st.composite
def int_test(draw):
    op = draw(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "in", "&"]))
    lhs = draw(
        st.sampled_from(["cf.waf.score", "len(http.host)", "len(http.request.headers.names)"])
    )
    if op == "in":
        lo = draw(st.integers(0, 50))
        return f"{lhs} in {{{lo} {lo + 3}..{lo + draw(st.integers(3, 20))}}}"
    return f"{lhs} {op} {draw(st.integers(-2, 60))}"


@st.composite
def ip_test(draw):
    op = draw(st.sampled_from(["eq", "ne", "lt", "gt", "in"]))
    if op == "in":
        return "ip.src in {10.0.0.0/8 192.0.2.0/24 2001:db8::/32 10.1.0.0..10.1.0.9}"
    return f"ip.src {op} {draw(st.sampled_from(['10.0.0.1', '192.0.2.255', '2001:db8::1', '::1']))}"


def array_test():
    return st.sampled_from(
        [
            'any(http.request.headers.names[*] eq "Accept")',
            'all(lower(http.request.headers.names[*])[*] ne "host")',
            'any(http.request.headers["accept"][*] contains "json")',
            "ssl",
            "not ssl",
        ]
    )


atoms = st.one_of(string_test(), int_test(), ip_test(), array_test())
expressions = st.recursive(
    atoms,
    lambda inner: st.one_of(
        inner.map(lambda e: f"not ({e})"),
        st.tuples(inner, st.sampled_from(["and", "or", "xor", "&&", "||"]), inner).map(
            lambda t: f"({t[0]}) {t[1]} ({t[2]})"
        ),
    ),
    max_leaves=4,
)

requests = st.fixed_dictionaries(
    {},
    optional={
        "http.host": TEXT,
        "http.request.uri.path": TEXT,
        "cf.waf.score": st.integers(-1, 60),
        "ip.src": st.sampled_from(
            ["10.0.0.1", "10.1.0.5", "192.0.2.9", "2001:db8::1", "::1", "8.8.8.8"]
        ),
        "ssl": st.booleans(),
        "http.request.headers": st.dictionaries(
            st.sampled_from(["accept", "host"]), st.lists(TEXT, max_size=2), max_size=2
        ),
        "http.request.headers.names": st.lists(
            st.sampled_from(["Accept", "Host", "host", "X"]), max_size=3
        ),
    },
)

FIELDS = [
    "http.host",
    "http.request.uri.path",
    "cf.waf.score",
    "ip.src",
    "ssl",
    "http.request.headers",
    "http.request.headers.names",
]
CON = duckdb.connect()


@settings(
    max_examples=int(__import__("os").environ.get("PROP_EXAMPLES", 300)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(expressions, st.lists(requests, min_size=1, max_size=6))
def test_generated_expressions_agree_on_both_paths(source, batch):
    expr = compile_expression(source)
    requests_table(CON, batch, name="batch", fields=FIELDS)
    got = [row[0] for row in CON.sql(f"select {expr.to_sql()} from batch").fetchall()]
    assert got == [expr.matches(r) for r in batch], source
