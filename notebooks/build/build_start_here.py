"""Write notebooks/00-start-here.ipynb from the cells below (sources only, no outputs).

The notebook is committed *with* outputs so nbval compares them, and
tests/test_notebooks_sync.py checks that its cells match this script. After
editing this script, rebuild and re-execute every notebook from the repo root:

    make notebooks

or this one only:

    python notebooks/build/build_start_here.py
    jupyter nbconvert --to notebook --execute --inplace notebooks/00-start-here.ipynb
    python -m pytest --nbval --nbval-current-env notebooks/00-start-here.ipynb

Cell ids are fixed (``start-01``...), so a rebuild does not churn them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbbuild

PATH = Path(__file__).resolve().parent.parent / "00-start-here.ipynb"
PREFIX = "start"

CELLS: list[tuple[str, str]] = [
    (
        "md",
        """\
# Start here

This workbench simulates parts of an edge-security and serverless platform in
process, so you can try things before you do them on a real account:

1. **filters and firewall rules** written in the Rules language, over an HTTP API
   shaped like the platform's v4 API;
2. **Durable Object storage** through `ctx.storage`, with SQL and point-in-time recovery;
3. **the migration of a zone's WAF managed rules** to the new ruleset engine.

Everything hangs off one `Workbench` object. It has a **virtual clock** that moves
only when you advance it, and a **seeded id generator**, so this notebook prints
the same output every time it runs. That is how it is tested: the notebook is
saved with its outputs and `pytest --nbval` re-runs it and compares every cell.""",
    ),
    ("md", "## A platform in one line"),
    (
        "code",
        """\
from workbench import Workbench

wb = Workbench(seed=0)
wb""",
    ),
    (
        "md",
        """\
Zones are domains on a plan (`free`, `pro`, `business`, `enterprise`). Ids are
32 lowercase hex characters, the shape the v4 API uses; with `seed=0` they are the
same on every run.""",
    ),
    (
        "code",
        """\
from workbench.core import iso

example = wb.create_zone("example.com", plan="pro")
wb.advance(minutes=5)
shop = wb.create_zone("shop.example", plan="business")

for zone in wb.zones:
    print(f"{zone.name:<14} {zone.plan:<9} {zone.id}  created {iso(zone.created_on)}")
print("now:", iso(wb.now()))""",
    ),
    (
        "md",
        """\
## Expressions in the Rules language

A filter is an expression over request fields. `compile_expression` parses and
type-checks it once; the result can say which fields it reads, match one request,
or turn into SQL that matches a whole table of requests at once.""",
    ),
    (
        "code",
        """\
from workbench.rules_language import ExpressionError, compile_expression

expr = compile_expression('http.request.uri.path contains "/admin" and not ssl')
print("fields:", expr.fields)
print("sql:   ", expr.to_sql())""",
    ),
    (
        "code",
        """\
print(expr.matches({"http.request.uri.path": "/admin/users", "ssl": False}))
print(expr.matches({"http.request.uri.path": "/admin/users", "ssl": True}))""",
    ),
    (
        "md",
        """\
A mistake is reported the way the platform reports it: line and column, the
source line, and a caret under the problem.""",
    ),
    (
        "code",
        """\
try:
    compile_expression("http.host eq a")
except ExpressionError as err:
    print(err)
    print("line", err.line, "column", err.column)""",
    ),
    (
        "md",
        """\
## One expression, two ways to run it

Here are five sample requests, one per row, with columns named like the fields.
The same expression runs per request in Python (`expr.matches`) and over the
whole table in DuckDB (`expr.to_sql()`); the two must agree.""",
    ),
    (
        "code",
        """\
import duckdb
import pandas as pd

from workbench.widgets.expression_checker import DEFAULT_SAMPLES

requests = pd.DataFrame(DEFAULT_SAMPLES)
requests.insert(0, "n", range(1, len(requests) + 1))
print(requests.drop(columns=["http.user_agent"]).to_string(index=False))""",
    ),
    (
        "code",
        """\
suspicious = compile_expression(
    '(http.request.uri.path contains "/admin" or http.request.uri.path eq "/wp-login.php")'
    ' and cf.waf.score lt 50'
)
in_python = [n for n, row in zip(requests["n"], DEFAULT_SAMPLES) if suspicious.matches(row)]

con = duckdb.connect()
con.register("requests", requests)
in_sql = [n for (n,) in con.sql(
    f"SELECT n FROM requests WHERE {suspicious.to_sql()} ORDER BY n"
).fetchall()]

print("python:", in_python)
print("duckdb:", in_sql)
assert in_python == in_sql""",
    ),
    (
        "md",
        """\
An expression can also refer to a named list with `$name`; the lists are
passed when matching. Here, which sample requests come from 192.0.2.0/24?""",
    ),
    (
        "code",
        """\
from_bad_ips = compile_expression("ip.src in $bad_ips")
lists = {"bad_ips": ["192.0.2.0/24"]}
print([n for n, row in zip(requests["n"], DEFAULT_SAMPLES) if from_bad_ips.matches(row, lists=lists)])""",
    ),
    (
        "md",
        """\
## Try it: the expression checker

Type an expression and press **Enter** (or **Check**); when you pause typing, the
panel checks by itself too. The status line says whether the expression is valid
and how many sample requests it matches, and the first column of the table marks
each one: ✔ for a match, – for a miss. A mistake shows the engine's message
exactly as the platform words it, with a hint in plain words beneath it. The
`bad_ips` list from above is defined here, so `ip.src in $bad_ips` works; a list
name the panel does not know gets a warning, because on the platform it silently
matches nothing.

This panel is yours: the cells after it drive a separate panel, `demo`, so after
**Run All** this one still shows its first expression. `checker.reset()` brings it
back to that state after you have used it.""",
    ),
    (
        "code",
        """\
from workbench.widgets import ExpressionChecker

checker = ExpressionChecker(expression='http.request.uri.path contains "/admin"', lists=lists)
checker""",
    ),
    (
        "md",
        """\
A panel can be driven from Python too, which is how this notebook checks one:
set the text, click, read what it shows. `as_text()` is the panel as plain text:
the status, then one line per sample request with its mark.""",
    ),
    (
        "code",
        """\
demo = ExpressionChecker(lists=lists)
demo.text.value = 'ip.src.country in {"CN" "FR"} or not ssl'
demo.button.click()
print(demo.as_text())""",
    ),
    (
        "md",
        """\
Three common mistakes: a quoted number for an Integer field, a misspelt operator,
and a condition cut short. Each time the engine's message comes first, unchanged,
then the hint.""",
    ),
    (
        "code",
        """\
for expression in [
    'cf.waf.score lt "50"',
    'http.request.uri.path contain "/admin"',
    'http.request.method eq "GET" and',
]:
    demo.text.value = expression
    demo.button.click()
    print(demo.message)
    print("hint:", demo.hint_text)
    print()""",
    ),
    (
        "md",
        """\
A list name with a typo is not an error, just a list that matches nothing; the
panel says so.""",
    ),
    (
        "code",
        """\
demo.text.value = "ip.src in $bad_ip"
demo.button.click()
print(demo.status.kind, "|", demo.message)
print("hint:", demo.hint_text)""",
    ),
]


if __name__ == "__main__":
    sys.exit(nbbuild.write(CELLS, PREFIX, PATH))
