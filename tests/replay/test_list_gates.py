"""Checks over header lists on the lean table: gates, exact joined-text tests, both paths."""

from __future__ import annotations

import duckdb
import pytest
from traffic_helpers import both_paths, log_plan

from workbench.replay._evaluate import Evaluator
from workbench.replay._header_columns import lean_sql
from workbench.replay._list_gates import gate
from workbench.replay._table import load_table, table_data
from workbench.rules_language import compile_expression
from workbench.traffic.request import Request

CHECKS = {
    "names_eq": 'any(http.request.headers.names[*] eq "X-Forwarded-Host")',
    "names_in_lower": 'any(lower(http.request.headers.names[*])[*] in {"x-scanner" "x-wipp"})',
    "no_accept": 'not any(lower(http.request.headers.names[*])[*] eq "accept")',
    "upper_eq": 'any(upper(http.request.headers.names[*])[*] eq "X-A")',
    "values_contains": 'any(http.request.headers.values[*] contains "${")',
    "values_matches": 'any(http.request.headers.values[*] matches r#"(?i)union\\s+select"#)',
    "anchored": 'any(http.request.headers.values[*] matches "^abc$")',
    "no_literal": 'any(lower(http.request.headers.values[*])[*] matches "^[a-z][0-9]+$")',
    "decoded": 'any(url_decode(http.request.headers.values[*], "r")[*] contains "<x>")',
    "map_key": 'any(lower(http.request.headers["x-requested-with"][*])[*] eq "xmlhttprequest")',
    "map_match": 'any(http.request.headers["content-type"][*] matches "json")',
    "count": "len(http.request.headers.names) gt 2",
    "and_chain": 'http.request.method eq "POST" and any(http.request.headers.values[*] eq "1")',
    "or_chain": 'http.request.uri.path eq "/x" or any(http.request.headers.names[*] eq "X-B")',
}

REQUESTS = [
    Request(url="/", headers={"Accept": "*/*", "X-Forwarded-Host": "evil"}),
    Request(url="/", headers={"X-Forwarded-Host-2": "a", "x-forwarded-host": "b"}),  # case
    Request(url="/", headers={"X-WIPP": "1"}),
    Request(url="/", headers={"X-Wipp-Not": "1", "Accept": "x"}),
    Request(url="/", headers={"X-A": "${jndi:x}", "accept": "y"}),
    Request(url="/", headers={"X-A": "$", "X-B": "{"}),  # "${" only across two values
    Request(url="/", headers={"X-A": "1 UNION  SELECT 2"}),
    Request(url="/", headers={"X-A": "union", "X-B": "select"}),  # only across values
    Request(url="/", headers={"X-A": "abc", "X-B": "xabc", "X-C": "Q123"}),
    Request(url="/", headers={"X-A": "zabc", "X-B": "abcz", "X-C": "q1x", "X-D": "1q1"}),
    Request(url="/", headers={"X-A": "%3Cx%3E"}),
    Request(url="/", headers={"X-Requested-With": "XMLHttpRequest"}),
    Request(url="/", headers={"X-Other": "xmlhttprequest"}),  # another header's value
    Request(url="/", headers=[("Content-Type", "text/plain"), ("content-type", "app/json")]),
    Request(url="/", headers={"X-Json": "json"}),
    Request(url="/"),
    Request(url="/", headers={"X-A": ""}),
    Request(method="POST", url="/", headers={"X-A": "1"}),
    Request(method="POST", url="/", headers={"X-A": "12"}),
    Request(url="/x"),
    Request(url="/", headers={"X-B": "1", "x-b": "2"}),
    Request(url="/", headers={"X-A": "caf\u00e9 \u00c9", "X-\u00c9": "1"}),
    # A separator inside a header: the row goes per request, with the same answers.
    Request(url="/", headers={"X-A": "a\x1fX-Forwarded-Host", "Accept": "1"}),
    Request(url="/", headers={"X-\x1dB": "1\x1d2", "X-Scanner": "1"}),
]


def test_checks_over_header_lists_agree_with_the_per_request_path():
    ev = Evaluator(log_plan(CHECKS))
    table, single = both_paths(ev, REQUESTS)
    assert table == single
    assert ev.stats["rows_left_out"] == 2  # the two rows holding a separator
    assert "names_eq" not in table[1] and "names_in_lower" in table[2]
    assert "names_in_lower" not in table[3] and "no_accept" in table[2]
    assert "values_contains" in table[4] and "values_contains" not in table[5]
    assert "values_matches" in table[6] and "values_matches" not in table[7]
    assert "anchored" in table[8] and "anchored" not in table[9]
    assert "no_literal" in table[8] and "no_literal" not in table[9]
    assert "decoded" in table[10]
    assert "map_key" in table[11] and "map_key" not in table[12]
    assert "map_match" in table[13] and "map_match" not in table[14]
    assert "and_chain" in table[17] and "and_chain" not in table[18]
    assert "or_chain" in table[19] and "or_chain" in table[20]
    assert "names_eq" in table[0] and "names_eq" not in table[22]
    assert "names_in_lower" in table[23]


def test_eq_in_and_contains_need_no_lambda_and_matches_runs_one_behind_its_gate():
    sql = dict(zip(CHECKS, Evaluator(log_plan(CHECKS)).sql, strict=True))
    for name in ("names_eq", "names_in_lower", "no_accept", "upper_eq", "values_contains"):
        assert "lambda" not in sql[name], name
    assert sql["values_matches"].startswith("(CASE WHEN (contains(")
    assert "lambda" in sql["values_matches"].partition(" THEN ")[2]
    # With no literal to ask, the pattern (anchors dropped) over the joined text gates it.
    test, _, exact = sql["no_literal"].partition(" THEN lambda")[0].partition(" THEN ")
    assert "regexp_matches(" in test and "lambda" not in test and "\\A" not in test
    assert "lambda" in exact
    # A map key reads every header's text: a gate only, the lambda decides.
    assert "lambda" in sql["map_key"].partition(" THEN ")[2]
    # and/or items after the first run only where the ones before left it open.
    assert sql["and_chain"].startswith("(CASE WHEN ") and " ELSE false END)" in sql["and_chain"]
    assert sql["or_chain"].startswith("(CASE WHEN ") and " THEN true ELSE " in sql["or_chain"]


@pytest.mark.parametrize(
    "expression",
    [
        'any(http.request.headers.values[*] ne "a")',
        'any(url_decode(http.request.headers.values[*])[*] eq "a")',
        'any(http.request.headers.values[*] eq "caf\u00e9")',
        'any(starts_with(http.request.headers.values[*], "a"))',
        'any(http.request.headers.values[*] matches "[a-z]+")',  # no literal to ask
    ],
)
def test_what_has_no_gate(expression):
    tree = compile_expression(expression).tree
    assert gate(tree.args[0], lambda sql: sql, lambda low, f: "x") is None


def test_the_lean_table_keeps_header_text_joined_and_lean_sql_splits_it():
    reqs = [
        Request(url="/a", headers=[("X-A", "1"), ("x-a", "2"), ("B", "3")]),
        Request(url="/b"),
        Request(url="/c", headers={"X-A": "\x1f"}),
    ]
    fields = ["http.request.headers", "http.request.headers.names", "http.request.uri.path"]
    data = table_data(reqs, fields, lean=True)
    assert data.bad == [2]
    con = duckdb.connect()
    load_table(con, "t", data)
    typed = lean_sql('"http.request.headers", "http.request.headers.names"')
    rows = con.sql(f"SELECT idx, {typed} FROM t ORDER BY idx").fetchall()
    assert rows == [
        (0, {"x-a": ["1", "2"], "b": ["3"]}, ["X-A", "x-a", "B"]),
        (1, {}, []),
        (2, {}, []),
    ]


def test_one_key_of_the_header_map_is_read_off_names_and_values_without_a_map():
    ev = Evaluator(log_plan(CHECKS))
    assert ev.sql and "http.request.headers" not in ev.query.fields
    assert "http.request.headers.values" in ev.query.fields
    # The whole map read another way: the lean table keeps it.
    whole = {"any_value": 'any(http.request.headers[*][*] eq "1")', **CHECKS}
    ev = Evaluator(log_plan(whole))
    assert ev.sql and "http.request.headers" in ev.query.fields
    table, single = both_paths(ev, REQUESTS)
    assert table == single and "any_value" in table[17]
