"""Rules-language speed: compile time, per-request closures and whole-table SQL.

For 22 typical firewall expressions this prints, each against a baseline run
in the same process:

* compile time (parse + type check + closures);
* per-request evaluations per second over 100,000 requests, against a
  hand-written Python function doing the same test (ratio = ours / hand);
* whole-table rows per second over 1,000,000 requests in DuckDB, against
  hand-written DuckDB SQL doing the same test (ratio = ours / hand);
* the linear-time check: ``(a+)+$`` over 100 KB and 1 MB inputs.

Run: ``.venv/bin/python benchmarks/rules_language.py`` (``--rows N`` for a
smaller table). Results of both paths are checked to agree before timing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import duckdb

from workbench.rules_language import compile_expression

CASES = [
    (
        'http.request.uri.path contains "/admin"',
        lambda r: "/admin" in r["http.request.uri.path"],
        """contains("http.request.uri.path", '/admin')""",
    ),
    (
        'http.host eq "www.example.com"',
        lambda r: r["http.host"] == "www.example.com",
        """"http.host" = 'www.example.com'""",
    ),
    (
        "ip.src in {192.0.2.0/24 198.51.100.0/24}",
        lambda r: r["ip.src"].startswith(("192.0.2.", "198.51.100.")),
        """("ip.src" LIKE '192.0.2.%' OR "ip.src" LIKE '198.51.100.%')""",
    ),
    (
        'ip.src.country in {"CN" "RU" "KP"}',
        lambda r: r["ip.src.country"] in ("CN", "RU", "KP"),
        """"ip.src.country" IN ('CN', 'RU', 'KP')""",
    ),
    ("cf.waf.score lt 20", lambda r: r["cf.waf.score"] < 20, '"cf.waf.score" < 20'),
    (
        'http.request.method eq "POST" and http.request.uri.path eq "/login"',
        lambda r: r["http.request.method"] == "POST" and r["http.request.uri.path"] == "/login",
        """"http.request.method" = 'POST' AND "http.request.uri.path" = '/login'""",
    ),
    (
        'lower(http.request.uri.path) contains "/wp-login.php"',
        lambda r: "/wp-login.php" in r["http.request.uri.path"].lower(),
        """contains(lower("http.request.uri.path"), '/wp-login.php')""",
    ),
    (
        'http.request.uri.query matches "(?i)union.+select"',
        None,
        """regexp_matches("http.request.uri.query", '(?i)union.+select')""",
    ),
    (
        'http.user_agent contains "curl" or http.user_agent eq ""',
        lambda r: "curl" in r["http.user_agent"] or r["http.user_agent"] == "",
        """contains("http.user_agent", 'curl') OR "http.user_agent" = ''""",
    ),
    (
        'http.request.full_uri wildcard "*.example.com/api/*"',
        None,
        """"http.request.full_uri" ILIKE '%.example.com/api/%'""",
    ),
    ("not ssl", lambda r: not r["ssl"], 'NOT "ssl"'),
    (
        "cf.edge.server_port in {80 443 8000..8999}",
        lambda r: r["cf.edge.server_port"] in (80, 443) or 8000 <= r["cf.edge.server_port"] <= 8999,
        """"cf.edge.server_port" IN (80, 443) OR "cf.edge.server_port" BETWEEN 8000 AND 8999""",
    ),
    (
        'http.request.uri.path.extension in {"env" "git" "bak" "sql"}',
        lambda r: r["http.request.uri.path.extension"] in ("env", "git", "bak", "sql"),
        """"http.request.uri.path.extension" IN ('env', 'git', 'bak', 'sql')""",
    ),
    (
        'starts_with(http.request.uri.path, "/api/")',
        lambda r: r["http.request.uri.path"].startswith("/api/"),
        """starts_with("http.request.uri.path", '/api/')""",
    ),
    (
        'ends_with(http.request.uri.path, ".php")',
        lambda r: r["http.request.uri.path"].endswith(".php"),
        """suffix("http.request.uri.path", '.php')""",
    ),
    ("ip.src.asnum eq 64500", lambda r: r["ip.src.asnum"] == 64500, '"ip.src.asnum" = 64500'),
    (
        'http.referer ne "" and not http.referer contains "example.com"',
        lambda r: r["http.referer"] != "" and "example.com" not in r["http.referer"],
        """"http.referer" <> '' AND NOT contains("http.referer", 'example.com')""",
    ),
    (
        "len(http.request.uri.query) gt 40",
        lambda r: len(r["http.request.uri.query"].encode()) > 40,
        'strlen("http.request.uri.query") > 40',
    ),
    (
        "cf.bot_management.score lt 30 and not cf.bot_management.verified_bot",
        lambda r: r["cf.bot_management.score"] < 30 and not r["cf.bot_management.verified_bot"],
        """"cf.bot_management.score" < 30 AND NOT "cf.bot_management.verified_bot\"""",
    ),
    (
        'http.request.method in {"PUT" "DELETE" "PATCH"} and ip.src.country ne "US"',
        lambda r: (
            r["http.request.method"] in ("PUT", "DELETE", "PATCH") and r["ip.src.country"] != "US"
        ),
        """"http.request.method" IN ('PUT', 'DELETE', 'PATCH') AND "ip.src.country" <> 'US'""",
    ),
    (
        'http.request.uri.path matches "^/api/v[0-9]+/users/[0-9]+$"',
        None,
        """regexp_matches("http.request.uri.path", '^/api/v[0-9]+/users/[0-9]+$')""",
    ),
    (
        'any(http.request.headers["x-forwarded-for"][*] contains "10.")',
        lambda r: any("10." in v for v in r["http.request.headers"].get("x-forwarded-for", ())),
        """list_bool_or(list_transform(coalesce("http.request.headers"['x-forwarded-for'], []),
           lambda v: contains(v, '10.')))""",
    ),
]

# Hand-written Python for the regex and wildcard cases, with Python's own re module.
_HAND_RE = {
    7: r"(?i)union.+select",
    9: r"(?i).*\.example\.com/api/.*",
    20: r"^/api/v[0-9]+/users/[0-9]+$",
}


def _hand_python(index: int):  # noqa: ANN202
    import re

    fn = CASES[index][1]
    if fn is not None:
        return fn
    pattern = re.compile(_HAND_RE[index], re.DOTALL)
    field = {7: "http.request.uri.query", 9: "http.request.full_uri", 20: "http.request.uri.path"}[
        index
    ]
    if index == 9:
        return lambda r: pattern.fullmatch(r[field]) is not None
    return lambda r: pattern.search(r[field]) is not None


TABLE_SQL = """
CREATE OR REPLACE TABLE requests AS
SELECT
  ['www.example.com', 'api.example.com', 'shop.example.org', 'a.example.com'][1 + (h % 4)] AS "http.host",
  ['GET', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH'][1 + (h >> 3) % 6] AS "http.request.method",
  ['/', '/login', '/admin/panel', '/api/v2/users/' || (h % 1000), '/wp-login.php', '/static/app.js',
   '/index.php', '/api/v1/items'][1 + (h >> 5) % 8] AS "http.request.uri.path",
  ['', 'q=shoes', 'id=1 UNION ALL SELECT password FROM users', 'page=' || (h % 50),
   'utm_source=newsletter&utm_medium=email&utm_campaign=winter'][1 + (h >> 8) % 5]
     AS "http.request.uri.query",
  'https://' || ['www.example.com', 'api.example.com', 'cdn.example.org'][1 + (h >> 11) % 3]
     || ['/api/x', '/home', '/api/v2/y'][1 + (h >> 13) % 3] AS "http.request.full_uri",
  ['Mozilla/5.0 (X11; Linux x86_64)', 'curl/8.4.0', '', 'python-requests/2.31'][1 + (h >> 15) % 4]
     AS "http.user_agent",
  ['https://www.example.com/', '', 'https://evil.test/'][1 + (h >> 17) % 3] AS "http.referer",
  CASE (h >> 19) % 4
    WHEN 0 THEN '192.0.2.' || (h % 256)
    WHEN 1 THEN '198.51.100.' || ((h >> 2) % 256)
    WHEN 2 THEN '203.0.113.' || ((h >> 4) % 256)
    ELSE '10.' || (h % 256) || '.' || ((h >> 8) % 256) || '.' || ((h >> 16) % 256) END AS "ip.src",
  ['US', 'DE', 'CN', 'RU', 'BR', 'KP', 'FR'][1 + (h >> 21) % 7] AS "ip.src.country",
  [64500, 13335, 15169, 64501][1 + (h >> 23) % 4]::BIGINT AS "ip.src.asnum",
  ((h >> 25) % 100)::BIGINT AS "cf.waf.score",
  ((h >> 27) % 100)::BIGINT AS "cf.bot_management.score",
  ((h >> 29) % 5 = 0) AS "cf.bot_management.verified_bot",
  ((h >> 31) % 3 <> 0) AS "ssl",
  [80, 443, 8080, 8443, 2053][1 + (h >> 33) % 5]::BIGINT AS "cf.edge.server_port",
  ['', 'php', 'js', 'env', 'git', 'html'][1 + (h >> 35) % 6] AS "http.request.uri.path.extension",
  CASE WHEN (h >> 37) % 3 = 0 THEN MAP(['accept', 'x-forwarded-for'], [['*/*'], ['10.0.0.' || (h % 9)]])
       ELSE MAP(['accept'], [['text/html']]) END AS "http.request.headers"
FROM (SELECT (hash(i) % 9223372036854775807)::BIGINT AS h FROM range({rows}) t(i))
"""


def _time(fn, repeat: int = 3) -> float:  # noqa: ANN001
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=100_000)
    args = parser.parse_args()

    con = duckdb.connect()
    con.execute(TABLE_SQL.format(rows=args.rows))
    frame = con.sql(f"select * from requests limit {args.requests}").df()
    columns = list(frame.columns)
    rows = []
    for values in frame.itertuples(index=False, name=None):
        row = dict(zip(columns, values, strict=True))
        row["http.request.headers"] = dict(row["http.request.headers"])
        rows.append(row)
    random.Random(0).shuffle(rows)

    print(
        f"{len(CASES)} expressions; {len(rows):,} requests per-request; {args.rows:,} rows in SQL"
    )
    header = (
        f"{'expression':62} {'compile':>9} {'req/s':>11} {'x hand':>7} {'rows/s':>12} {'x hand':>7}"
    )
    print(header)
    print("-" * len(header))
    req_ratios, sql_ratios = [], []
    for index, (source, _, hand_sql) in enumerate(CASES):
        compile_s = _time(lambda s=source: [compile_expression(s) for _ in range(200)]) / 200
        expr = compile_expression(source)
        hand = _hand_python(index)
        matches = expr.matches
        ours = [matches(r) for r in rows]
        assert ours == [bool(hand(r)) for r in rows], f"per-request disagreement: {source}"
        t_ours = _time(lambda m=matches: [m(r) for r in rows])
        t_hand = _time(lambda h=hand: [h(r) for r in rows])
        generated = expr.to_sql()
        count_ours = con.sql(f"select count(*) from requests where {generated}").fetchall()[0][0]
        count_hand = con.sql(f"select count(*) from requests where {hand_sql}").fetchall()[0][0]
        assert count_ours == count_hand, f"SQL disagreement: {source} {count_ours} {count_hand}"
        s_ours = _time(
            lambda g=generated: con.sql(f"select count(*) from requests where {g}").fetchall()
        )
        s_hand = _time(
            lambda g=hand_sql: con.sql(f"select count(*) from requests where {g}").fetchall()
        )
        req_ratios.append(t_ours / t_hand)
        sql_ratios.append(s_ours / s_hand)
        print(
            f"{source[:62]:62} {compile_s * 1e6:7.0f}us {len(rows) / t_ours:11,.0f} "
            f"{t_ours / t_hand:7.2f} {args.rows / s_ours:12,.0f} {s_ours / s_hand:7.2f}"
        )
    print("-" * len(header))
    print(
        f"median ratio per-request {statistics.median(req_ratios):.2f}x (max {max(req_ratios):.2f}x); "
        f"SQL {statistics.median(sql_ratios):.2f}x (max {max(sql_ratios):.2f}x)"
    )
    # Patterns that make a backtracking engine take exponential time stay linear here.
    for pattern in ("(a+)+$", "^(a+)+b", "(a|aa)+c"):
        expr = compile_expression(f'http.request.uri.path matches "{pattern}"')
        times = []
        for size in (100_000, 1_000_000):
            value = "a" * size + "!"
            times.append(_time(lambda v=value, e=expr: e.matches({"http.request.uri.path": v})))
        print(
            f"{pattern:10} over 100 KB: {times[0] * 1e3:7.2f} ms, over 1 MB: {times[1] * 1e3:7.2f} ms "
            f"(x{times[1] / max(times[0], 1e-9):.1f} for 10x the input)"
        )


if __name__ == "__main__":
    main()
