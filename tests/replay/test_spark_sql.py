"""The Spark translation evaluates to DuckDB's booleans, run in Spark on a sample table."""

import json
from pathlib import Path

import duckdb

from workbench.rules_language import ExpressionError, compile_expression, get_scheme
from workbench.rules_language.sql_compiler import SqlTranslationError
from workbench.rules_language.table import requests_table

DATA = Path(__file__).parent.parent / "rules_language" / "data"
EXTRA = [
    {"http.request.uri.query": "a=%c0%ae%c0%ae", "http.request.uri.path": "/x/../y"},
    {"http.request.uri.query": "q=%3Cscript%3E&x=1+2", "http.user_agent": "sqlmap/1.7"},
    {"http.request.uri.path": "/caf\u00e9/\u00c9t\u00e9", "ip.src": "10.1.2.3"},
    {"http.request.headers": {"x-a": ["1", "2"]}, "http.request.body.raw": "aGVsbG8="},
]


def cases() -> tuple[list[str], list[dict]]:
    exprs, requests = [], list(EXTRA)
    for line in (DATA / "rules-eval-sample.jsonl").read_text().splitlines():
        case = json.loads(line)
        exprs.append(case["expr"])
        requests.append(case["request"])
    return exprs, requests


def test_spark_booleans_equal_duckdbs_on_the_eval_corpus(spark, tmp_path):
    exprs, requests = cases()
    scheme = get_scheme("http")
    fields = sorted({f for r in requests for f in r} | set(scheme.fields))
    con = duckdb.connect()
    rows = [{k: v for k, v in r.items() if not isinstance(v, bytes)} for r in requests]
    requests_table(con, rows, name="samples", fields=fields)
    con.execute("CREATE TABLE s AS SELECT row_number() OVER () AS rid, * FROM samples")
    con.execute(f"COPY s TO '{tmp_path / 's.parquet'}' (FORMAT PARQUET)")
    spark.read.parquet(str(tmp_path / "s.parquet")).createOrReplaceTempView("samples")
    duck_cols, spark_cols = [], []
    for i, expr in enumerate(exprs):
        try:
            compiled = compile_expression(expr)
            duck, sql = compiled.to_sql(), compiled.to_sql(dialect="spark")
        except (ExpressionError, SqlTranslationError):
            continue
        duck_cols.append(f"{duck} AS e{i}")
        spark_cols.append(f"{sql} AS e{i}")
    assert len(spark_cols) >= 0.9 * len(exprs)
    want = con.execute(f"SELECT {', '.join(duck_cols)} FROM s ORDER BY rid").fetchall()
    got = spark.sql(f"SELECT {', '.join(spark_cols)} FROM samples ORDER BY rid").collect()
    names = [c.rsplit(" AS ", 1)[1] for c in spark_cols]
    mismatches = [
        (exprs[int(n[1:])], r)
        for r, (w, g) in enumerate(zip(want, got, strict=True))
        for j, n in enumerate(names)
        if w[j] != g[j]
    ]
    assert mismatches == []


def test_spark_leaves_no_warehouse_folder_in_the_working_directory(spark, tmp_path):
    # Notebook 06 used to leave an empty spark-warehouse/ beside the notebooks.
    from workbench.replay._spark import SPARK_WAREHOUSE

    spark.range(3).createOrReplaceTempView("t")
    assert spark.sql("SELECT count(*) AS n FROM t").collect()[0]["n"] == 3
    assert spark.conf.get("spark.sql.warehouse.dir").rstrip("/").endswith(SPARK_WAREHOUSE.name)
    assert not (Path.cwd() / "spark-warehouse").exists()
    assert not (Path.cwd() / "metastore_db").exists()
