"""SQL for other engines: every corpus expression translates, or says clearly that it cannot."""

import json
import sys
from pathlib import Path

import pytest
import sqlglot

from workbench.rules_language import ExpressionError, compile_expression
from workbench.rules_language.dialects import DIALECTS, to_dialect
from workbench.rules_language.sql_compiler import SqlTranslationError

DATA = Path(__file__).parent / "data"


def corpus() -> list[str]:
    out = []
    for name in ("rules-corpus-sample.jsonl", "rules-eval-sample.jsonl"):
        for line in (DATA / name).read_text().splitlines():
            expr = json.loads(line)["expr"]
            try:
                compile_expression(expr).to_sql()
            except (ExpressionError, SqlTranslationError):
                continue  # invalid, or no DuckDB SQL to start from
            out.append(expr)
    return out


CORPUS = corpus()


def test_duckdb_is_the_compilers_own_sql():
    expr = compile_expression('http.request.uri.path contains "/admin"')
    assert expr.to_sql(dialect="duckdb") == expr.to_sql()


@pytest.mark.parametrize("dialect", [d for d in DIALECTS if d != "duckdb"])
def test_every_corpus_expression_translates_or_names_the_dialect(dialect):
    translated = 0
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # the deepest expressions nest past Python's default
    try:
        for expr in CORPUS:
            try:
                sql = compile_expression(expr).to_sql(dialect=dialect)
            except SqlTranslationError as exc:
                assert f"not supported on {dialect}" in str(exc), (expr, str(exc))
                continue
            # The output is valid in the dialect: sqlglot reads it back as that dialect.
            sqlglot.parse_one(sql, read=dialect)
            translated += 1
    finally:
        sys.setrecursionlimit(old)
    share = translated / len(CORPUS)
    # Spark, Trino and ClickHouse have lambdas over arrays, PostgreSQL has UNNEST; BigQuery
    # has neither here.
    floor = {"spark": 0.95, "trino": 0.95, "clickhouse": 0.8, "bigquery": 0.65, "postgres": 0.9}
    assert share >= floor[dialect], f"{dialect}: {translated}/{len(CORPUS)}"


def test_unknown_dialect_is_named():
    with pytest.raises(ValueError, match="dialect must be one of duckdb, spark"):
        compile_expression("ssl").to_sql(dialect="oracle")


def test_unsupported_function_names_function_and_dialect():
    expr = compile_expression('lookup_json_string(http.request.body.raw, "a") eq "b"')
    with pytest.raises(SqlTranslationError, match=r"json_valid\(\) is not supported on spark"):
        expr.to_sql(dialect="spark")
    with pytest.raises(SqlTranslationError, match=r"json_valid\(\) is not supported on postgres"):
        expr.to_sql(dialect="postgres")


def test_postgres_round_trip_of_a_simple_rule():
    sql = compile_expression('http.host in {"a.example" "b.example"} and ssl').to_sql(
        dialect="postgres"
    )
    assert sqlglot.transpile(sql, read="postgres", write="postgres")[0] == sql


def test_spark_first_match_replace_keeps_the_rest():
    sql = to_dialect("regexp_replace(x, 'a(b)', '<\\1>')", "spark")
    assert sql == "REGEXP_REPLACE(x, '\\\\A((?s:.)*?)(?:a(b))((?s:.)*)\\\\z', '$1<$2>$3')"
