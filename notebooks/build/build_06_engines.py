"""Write notebooks/06-replay-on-other-engines.ipynb from the cells below (sources only, no outputs).

The notebook is committed *with* outputs so nbval compares them, and
tests/test_notebooks_sync.py checks that its cells match this script. After
editing this script, rebuild and re-execute it from the repo root:

    python notebooks/build/build_06_engines.py
    jupyter nbconvert --to notebook --execute --inplace notebooks/06-replay-on-other-engines.ipynb

It needs the ``spark`` extra (pyspark) and Java 17, as ``make test`` installs them.
Cell ids are fixed (``engines-01``...), so a rebuild does not churn them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbbuild

PATH = Path(__file__).resolve().parent.parent / "06-replay-on-other-engines.ipynb"
PREFIX = "engines"

CELLS: list[tuple[str, str]] = [
    (
        "md",
        """\
# The same replay on DuckDB and on Spark

DuckDB on one machine is the default engine for replaying a zone's traffic. A team
that keeps its request logs in a Spark cluster can run the **same replay** there:
the zone's rules compile once to SQL, the SQL is translated to Spark's dialect with
sqlglot, and every verdict comes from the same Python `decide`, so both engines give
the same events, row for row. This notebook

1. writes generated requests as a **partitioned Parquet log** (by zone and hour);
2. replays it on **DuckDB** and on **Spark** (local mode, 2 cores; `--master` for a cluster);
3. answers one question on the events of each engine and checks the answers agree;
4. shows how one rule's SQL comes out in each dialect, and Spark's in full.

The command line does the same: `python -m workbench replay LOG --zone Z --engine spark`.""",
    ),
    (
        "code",
        """\
import tempfile
from pathlib import Path

from workbench.replay import count, log_zones, write_log
from workbench.traffic.generators import generate

work = Path(tempfile.mkdtemp(prefix="workbench-engines-"))
log = work / "requests"
# Requests 10 ms apart from 2026-01-01T00:00:00Z, the Workbench clock's start.
written = write_log(generate(2_000, seed=6), log, zone="shop.example", start_ms=1_767_225_600_000)
written, log_zones(log), count(log)""",
    ),
    (
        "md",
        """\
The log is a folder of Parquet files, one folder per zone and hour, as a warehouse
would keep it:""",
    ),
    (
        "code",
        """\
sorted(str(p.relative_to(log)) for p in log.rglob("*.parquet"))[:3]""",
    ),
    (
        "md",
        """\
## Replay on both engines

`replay_log` builds the zone (here a demo Enterprise zone: old WAF on, both managed
rulesets deployed, i.e. validation mode) and runs its checks on the chosen engine.
Events are written as Parquet in the event log's columns.""",
    ),
    (
        "code",
        """\
from workbench.replay.run import replay_log

on_duckdb = replay_log(log, "shop.example", engine="duckdb", out=work / "duckdb-events.parquet")
on_spark = replay_log(log, "shop.example", engine="spark", out=work / "spark-events.parquet", cores=2)
for run in (on_duckdb, on_spark):
    print(run.engine, run.requests, "requests,", run.events, "events,", dict(sorted(run.actions.items())))""",
    ),
    (
        "md",
        """\
## One question, asked of each engine's events

*What did each kind of traffic meet?* One SQL query over an `EventLog` opened from
each engine's Parquet file (the traffic labels travel with the log), then the same
check for a canned query of the events explorer: *which legitimate requests does the
new WAF stop?* (none, here).""",
    ),
    (
        "code",
        """\
from workbench.logs import EventLog, legit_blocked_by_new, top_rules

duck_log = EventLog.from_parquet(on_duckdb.out)
spark_log = EventLog.from_parquet(on_spark.out)
question = (
    "SELECT label, source, action, count(*) AS events, count(DISTINCT ray_id) AS requests "
    "FROM security_events GROUP BY ALL ORDER BY label, source, action"
)
duck_answer = duck_log.query(question)
spark_answer = spark_log.query(question)
print("same answer on both engines:", duck_answer.equals(spark_answer))
print("legitimate requests stopped, on each:",
      len(legit_blocked_by_new(duck_log)), len(legit_blocked_by_new(spark_log)))
duck_answer""",
    ),
    (
        "code",
        """\
top = top_rules(duck_log).head(5)
top_on_spark = top_rules(spark_log).head(5)
print("same top rules:", top.equals(top_on_spark))
top[["rule_id", "description", "events"]]""",
    ),
    (
        "md",
        """\
## One rule, several dialects

The DuckDB SQL is the neutral form; sqlglot writes it for Spark, Trino, ClickHouse,
BigQuery or PostgreSQL. A function with no counterpart in a dialect raises a clear
`SqlTranslationError` naming the function and the dialect. The table says, per dialect,
how long the rule's SQL is and which functions it calls (PostgreSQL runs the regular
expressions as its own AREs of the same meaning; the README lists what each dialect
cannot compile); under it, Spark's SQL in full, indented.
`rule.to_sql(dialect=...)` gives any of them as one line.""",
    ),
    (
        "code",
        """\
import re

import pandas as pd
import sqlglot

from workbench.rules_language import compile_expression
from workbench.rules_language.sql_value import SqlTranslationError

rule = compile_expression('lower(http.request.uri.path) contains "/wp-admin" and ip.src in {10.0.0.0/8}')
rows = []
for dialect in ("duckdb", "spark", "trino", "clickhouse", "bigquery", "postgres"):
    try:
        sql = rule.to_sql(dialect=dialect)
    except SqlTranslationError as exc:
        rows.append((dialect, "-", f"not translated: {exc}"))
    else:
        code = re.sub(r"'(?:[^'\\\\]|\\\\.)*'", "''", sql)  # not inside string literals
        called = sorted(set(re.findall(r"(\\w+)\\(", code)), key=str.lower)
        rows.append((dialect, len(sql), ", ".join(called)))
table = pd.DataFrame(rows, columns=["dialect", "characters", "functions it calls"])
with pd.option_context("display.max_colwidth", 200, "display.width", 200):
    display(table.set_index("dialect"))
print(sqlglot.transpile(rule.to_sql(dialect="spark"), read="spark", write="spark", pretty=True)[0])""",
    ),
    (
        "code",
        """\
import shutil

shutil.rmtree(work)""",
    ),
]


def main() -> int:
    return nbbuild.write(CELLS, PREFIX, PATH)


if __name__ == "__main__":
    sys.exit(main())
