"""Shared sub-expressions, literal prefilters and the decoding SQL of the whole-table path."""

from __future__ import annotations

import duckdb
import pytest
from traffic_helpers import both_paths, log_plan, matched

from workbench.replay._evaluate import Context, Evaluator
from workbench.rules_language import compile_expression
from workbench.traffic.request import Request

DECODED = 'url_decode(concat(http.request.uri, "\\x0a", http.request.body.raw), "r")'
CHECKS = {
    "union": f'{DECODED} matches r#"(?i)union\\s+(?:all\\s+)?select"#',
    "script": f'lower({DECODED}) contains "<script"',
    "passwd": f'{DECODED} matches "etc/(passwd|shadow)"',
    "caps": f'{DECODED} matches "SELECT"',
    "unicode": 'url_decode(http.request.uri.query, "ur") contains "<b>"',
    "b64": 'decode_base64(http.request.uri.query) eq "hello"',
}
REQUESTS = [
    Request(url="/?q=1%20UNION%20ALL%20SELECT%201"),
    Request(url="/?q=union+select"),
    Request(url="/a", body=b"x=%253Cscript%253E"),
    Request(url="/?f=../../etc/shadow"),
    Request(url="/?f=..%2f..%2fETC%2fpasswd"),
    Request(url="/?q=select"),
    Request(url="/?q=SELECT"),
    Request(url="/?q=%u003cb%u003e"),
    Request(url="/?q=%25u003cb%25u003e"),
    Request(url="/?q=%uD800%u003cb>"),
    Request(url="/?aGVsbG8="),
    Request(url="/?aGVsbG8"),
    Request(url="/?q=%c0%ae%c0%ae"),
    Request(url="/caf\u00e9?q=%C3%A9+%u00e9"),
    Request(url="/"),
]


def test_checks_share_one_column_per_decoded_value_and_agree_with_per_request():
    ev = Evaluator(log_plan(CHECKS))
    sql = ev.sql
    decoded = [c for c in ev.query.columns if "url_decode" in c.sql]
    # Three distinct decodings: the two parts of the concatenation (four checks read their
    # join, see workbench.replay._decode_split) and the query with "ur".
    assert len(decoded) == 3
    assert sum(" || '\n' || " in c.sql and "url_decode" not in c.sql for c in ev.query.columns) == 1
    assert sum("regexp_matches" in s for s in sql if s) == 3
    table, single = both_paths(ev, REQUESTS)
    assert table == single
    assert table[0] == ["union", "caps"] and table[2] == ["script"] and table[7] == ["unicode"]
    assert (
        table[3] == ["passwd"] and table[4] == [] and table[10] == ["b64"] and table[11] == ["b64"]
    )


def test_regexes_over_shared_text_run_behind_a_literal_prefilter():
    ev = Evaluator(log_plan(CHECKS))
    union = ev.sql[list(CHECKS).index("union")]
    assert "contains(" in union and "'select'" in union and "THEN regexp_matches" in union


def test_a_plan_compiled_again_reuses_its_patterns_prefilters_and_gives_the_same_sql():
    from workbench.replay import _shared as shared

    shared._FILTERS.clear()
    first = Evaluator(log_plan(CHECKS))
    sql = first.sql
    remembered = dict(shared._FILTERS)
    assert any(f is not None for _, _, f in remembered.values())  # the regexes got prefilters
    again = Evaluator(log_plan(CHECKS))
    assert again.sql == sql and again.query.fields == first.query.fields
    assert all(shared._FILTERS[k] is v for k, v in remembered.items())  # reused, not redone


URL_DECODE_CASES = [
    ("a+b%20c", ""),
    ("%u0041%u00e9%u20ac", "u"),
    ("%U0041x", "u"),
    ("%u004", "u"),
    ("%25u0041", "ur"),
    ("%2525u0041", "ur"),
    ("%u0025u0041", "ur"),
    ("%uD800", "u"),
    ("100%", "r"),
    ("%2B%252B", "r"),
    ("%c3%a9%zz", "r"),
]


@pytest.mark.parametrize(("text", "options"), URL_DECODE_CASES)
def test_url_decode_sql_gives_the_per_request_result(text, options):
    expr = compile_expression(f'url_decode(http.request.uri.query, "{options}") eq "x"')
    value = compile_expression(f'len(url_decode(http.request.uri.query, "{options}")) eq 0')
    from workbench.rules_language.function_impls import _url_decode_build

    expected = _url_decode_build([None, options.encode()])(text)
    sql = expr.to_sql().replace("= 'x'", "IS NOT DISTINCT FROM 'x'")
    assert "url_decode" in sql and value.to_sql()
    con = duckdb.connect()
    got = con.execute(
        "SELECT " + _decoded_sql(options) + ' FROM (SELECT ? AS "http.request.uri.query")', [text]
    ).fetchone()[0]
    # The SQL gives the Latin-1 view of the decoded bytes (one character per byte).
    expected = (
        expected if isinstance(expected, bytes) else expected.encode("utf-8", "surrogatepass")
    )
    assert got.encode("latin-1") == expected


def _decoded_sql(options: str) -> str:
    from workbench.rules_language.ast import Call, walk
    from workbench.rules_language.sql_compiler import value_sql

    tree = compile_expression(f'url_decode(http.request.uri.query, "{options}") eq "x"').tree
    call = next(n for n in walk(tree) if isinstance(n, Call))
    return value_sql(call, {}).sql


def test_row_ranges_side_by_side_give_the_same_matrix(monkeypatch):
    import workbench.replay._evaluate as evaluate

    ev = Evaluator(log_plan(CHECKS))
    ctx = Context.plain(len(REQUESTS))
    whole = matched(ev, ev.whole_table(REQUESTS, ctx))
    ev.con.execute("SET threads = 2").fetchall()
    monkeypatch.setattr(evaluate, "SPLIT_FROM", 4)
    assert matched(ev, ev.whole_table(REQUESTS, ctx)) == whole


GROUPED = {
    "cmd": f'{DECODED} matches r#"(?i)(?:^|[;|&`\\s=/])(?:nc|id|ls|sh)\\b"#',
    "digits": f'{DECODED} matches "[0-9]{{3}}[a-f]{{2}}"',
    "mixed": f'{DECODED} matches "[a-z][0-9][a-z][0-9]"',
    "caps": f'{DECODED} matches "[A-Z][a-z]+[A-Z]"',
    "hex": f'{DECODED} matches "[A-F]{{4}}"',
}
GROUPED_REQUESTS = [
    Request(url="/?c=;id"),
    Request(url="/?c=idx"),
    Request(url="/?n=123ab"),
    Request(url="/?q=a1b2"),
    Request(url="/?q=a1bb"),
    Request(url="/CamelCase"),
    Request(url="/x", body="%41BCD"),
    Request(url="/", body="ls"),
    Request(url="/plain"),
]


def test_regexes_without_a_prefilter_run_behind_one_test_per_group(monkeypatch):
    import workbench.replay._shared as shared

    monkeypatch.setattr(shared, "UNION_GROUP", 3)
    ev = Evaluator(log_plan(GROUPED))
    sql = ev.sql  # compiles the checks, and with them the shared columns
    groups = [c for c in ev.query.columns if c.sql.startswith("regexp_matches(") and "|" in c.sql]
    assert len(groups) == 2  # three patterns, then two
    assert all(" IS NOT FALSE THEN " in s for s in sql)
    table, single = both_paths(ev, GROUPED_REQUESTS)
    assert table == single
    assert table[0] == ["cmd"] and table[1] == [] and table[2] == ["digits"]
    assert table[3] == ["mixed"] and table[4] == [] and table[5] == ["caps"]
    assert table[6] == ["hex"] and table[7] == ["cmd"] and table[8] == []


FIRSTS = {
    "digit_after": f'{DECODED} matches r"(?i)select\\d"',
    "letter_after": f'{DECODED} matches r"(?i)select[a-z]"',
    "digit_before": f'{DECODED} matches r"(?i)\\dselect"',
    "other": f'{DECODED} matches r"(?i)union\\d"',
}
FIRSTS_REQUESTS = [
    Request(url="/?q=select1"),
    Request(url="/?q=SELECTx"),
    Request(url="/?q=1SeLeCt"),
    Request(url="/?q=sel", body="union2"),
    Request(url="/?q=select"),
    Request(url="/"),
]


def test_a_literal_test_several_checks_run_on_every_row_is_one_shared_column():
    from workbench.replay._shared import FIRST_SHARED_FROM

    assert FIRST_SHARED_FROM <= 3
    ev = Evaluator(log_plan(FIRSTS))
    sql = ev.sql
    tests = [c for c in ev.query.columns if c.sql.startswith("contains(")]
    # 'select' is asked first by three checks: one column; 'union' by one: left in place.
    assert [c.sql.split(", ")[1] for c in tests] == ["'select')"]
    asked = [s for s in sql if s and f'"{tests[0].name}"' in s]
    assert len(asked) == 3 and not any("'select'" in s for s in sql if s)
    assert "contains(" in sql[list(FIRSTS).index("other")]
    table, single = both_paths(ev, FIRSTS_REQUESTS)
    assert table == single
    assert table[:4] == [["digit_after"], ["letter_after"], ["digit_before"], ["other"]]
    assert table[4:] == [[], []]


def test_a_check_without_sql_beside_checks_with_it_gives_the_per_request_results():
    groups = "(.)" * 10  # a replacement group above nine: no SQL translation
    checks = {
        "nosql": f'regex_replace(http.request.uri.path, "{groups}", "${{10}}") eq "j"',
        "admin": 'http.request.uri.path contains "/admin"',
    }
    ev = Evaluator(log_plan(checks))
    assert ev.sql[0] is None and ev.sql[1] is not None
    requests = [Request(url="/bcdefghij"), Request(url="/admin/x"), Request(url="/")] * 5
    table, single = both_paths(ev, requests)
    assert table == single
    assert table[:3] == [["nosql"], ["admin"], []]
