"""The facts corpora as tests: validity and error text, and match results on both paths.

Where the engine and the documentation disagree (rows with ``docs_valid``) the
documentation wins, as docs/decisions.md records.
"""

import json
from pathlib import Path

import pytest

from workbench.rules_language import ExpressionError, compile_expression

DATA = Path(__file__).parent / "data"
CORPUS = [json.loads(line) for line in (DATA / "rules-corpus-sample.jsonl").open(encoding="utf-8")]
EVAL = [json.loads(line) for line in (DATA / "rules-eval-sample.jsonl").open(encoding="utf-8")]


def _id(row):
    return row["note"][:60]


@pytest.mark.parametrize("row", CORPUS, ids=[_id(r) for r in CORPUS])
def test_corpus_validity_and_error_text(row):
    want_valid = row.get("docs_valid", row["valid"])
    try:
        compile_expression(row["expr"], row.get("scheme", "http"))
    except ExpressionError as err:
        assert not want_valid, f"refused a valid expression: {err}"
        if "error" in row and "docs_valid" not in row:
            assert str(err) == row["error"]
            line, column = (int(x) for x in row["pos"].split(":"))
            assert (err.line, err.column) == (line, column)
            assert err.reason == row["reason"]
        return
    assert want_valid, "accepted an invalid expression"


@pytest.mark.parametrize("row", EVAL, ids=[_id(r) for r in EVAL])
def test_eval_closures(row):
    expr = compile_expression(row["expr"])
    assert expr.matches(row["request"], row.get("lists")) is row["match"]


@pytest.fixture(scope="module")
def con():
    duckdb = pytest.importorskip("duckdb")
    return duckdb.connect()


@pytest.mark.parametrize("row", EVAL, ids=[_id(r) for r in EVAL])
def test_eval_sql_agrees(row, con):
    from workbench.rules_language.table import requests_table

    expr = compile_expression(row["expr"])
    requests_table(con, [row["request"]], name="one", fields=set(row["request"]) | set(expr.fields))
    (got,) = con.sql(f"select {expr.to_sql(row.get('lists'))} from one").fetchall()[0]
    assert got is row["match"]


@pytest.mark.parametrize("row", EVAL, ids=[_id(r) for r in EVAL])
def test_eval_sql_with_short_circuit_agrees(row, con):
    """``and``/``or`` as CASE chains (the whole-table path's form) give the same answer."""
    from workbench.rules_language.sql_compiler import to_sql
    from workbench.rules_language.table import requests_table

    expr = compile_expression(row["expr"])
    requests_table(con, [row["request"]], name="one", fields=set(row["request"]) | set(expr.fields))
    sql = to_sql(expr.tree, row.get("lists") or {}, short_circuit=True)
    (got,) = con.sql(f"select {sql} from one").fetchall()[0]
    assert got is row["match"]
