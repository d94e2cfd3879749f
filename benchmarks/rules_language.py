"""Rules-language speed: compile time, per-request functions and whole-table SQL.

For 24 typical firewall expressions this prints, each against a baseline run
in the same process (ratio = ours / hand-written):

* compile time (parse + type check + generated function);
* per-request speed of ``expr.matches`` over 100,000 requests, against a
  hand-written Python function doing the same test: on rows read from a
  DuckDB table (the old form) and on plain dicts built in a loop, IPs as text
  (``plain``); ``generic`` is the generated function without its inline
  shapes (_codegen_fast.py), every node its generic code, on the plain dicts;
* whole-table rows per second over 1,000,000 requests in DuckDB, against
  hand-written DuckDB SQL doing the same test;
* the IP cases again with every request from a new address (each one a
  cache miss), and the linear-time check: ``(a+)+$`` over 100 KB and 1 MB;
* every expression of the shipped managed catalogues (functions, ``[*]``
  walks, long regexes) over plain requests carrying attack-shaped text:
  microseconds per request for all of them, against the generic code alone.

Totals are the sum of our times over the sum of the hand-written times.
Run: ``.venv/bin/python benchmarks/rules_language.py`` (``--rows N`` for a
smaller table). Results are checked to agree before timing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import duckdb

from workbench.rules_language import compile_expression
from workbench.rules_language.codegen import generate_with_source

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
        "ip.src eq 198.51.100.7",
        lambda r: r["ip.src"] == "198.51.100.7",
        """"ip.src" = '198.51.100.7'""",
    ),
    (
        "ip.src in {10.0.0.0/8}",
        lambda r: r["ip.src"].startswith("10."),
        """"ip.src" LIKE '10.%'""",
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
    'http.request.uri.query matches "(?i)union.+select"': (
        "http.request.uri.query",
        r"(?i)union.+select",
    ),
    'http.request.full_uri wildcard "*.example.com/api/*"': (
        "http.request.full_uri",
        r"(?i).*\.example\.com/api/.*",
    ),
    'http.request.uri.path matches "^/api/v[0-9]+/users/[0-9]+$"': (
        "http.request.uri.path",
        r"^/api/v[0-9]+/users/[0-9]+$",
    ),
}


def _hand_python(source: str, fn):  # noqa: ANN001, ANN202
    import re

    if fn is not None:
        return fn
    field, regex = _HAND_RE[source]
    pattern = re.compile(regex, re.DOTALL)
    if "wildcard" in source:
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


ADDRESSES = 5_000  # distinct ip.src addresses among the plain-dict requests


def _time(fn, repeat: int = 3) -> float:  # noqa: ANN001
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def plain_requests(count: int, addresses: int, seed: int = 0) -> list[dict[str, object]]:
    """Requests as a user or a log importer builds them: one dict per request, IPs as text.

    Values follow the table's mix; ``ip.src`` is drawn from ``addresses`` distinct addresses.
    """
    rng = random.Random(seed)
    pool = _addresses(addresses, rng)
    paths = ["/", "/login", "/admin/panel", "/wp-login.php", "/static/app.js", "/index.php"]
    queries = ["", "q=shoes", "id=1 UNION ALL SELECT password FROM users", "page=7"]
    agents = ["Mozilla/5.0 (X11; Linux x86_64)", "curl/8.4.0", "", "python-requests/2.31"]
    out = []
    for _ in range(count):
        headers = {"accept": ["text/html"]}
        if rng.random() < 0.3:
            headers["x-forwarded-for"] = [f"10.0.0.{rng.randrange(9)}"]
        path = rng.choice(paths + [f"/api/v2/users/{rng.randrange(1000)}", "/api/v1/items"])
        out.append(
            {
                "http.host": rng.choice(["www.example.com", "api.example.com", "a.example.com"]),
                "http.request.method": rng.choice(["GET", "GET", "POST", "PUT", "DELETE"]),
                "http.request.uri.path": path,
                "http.request.uri.query": rng.choice(queries),
                "http.request.full_uri": "https://"
                + rng.choice(["www.example.com", "api.example.com", "cdn.example.org"])
                + rng.choice(["/api/x", "/home", "/api/v2/y"]),
                "http.user_agent": rng.choice(agents),
                "http.referer": rng.choice(["https://www.example.com/", "", "https://evil.test/"]),
                "ip.src": rng.choice(pool),
                "ip.src.country": rng.choice(["US", "DE", "CN", "RU", "BR", "KP", "FR"]),
                "ip.src.asnum": rng.choice([64500, 13335, 15169, 64501]),
                "cf.waf.score": rng.randrange(100),
                "cf.bot_management.score": rng.randrange(100),
                "cf.bot_management.verified_bot": rng.random() < 0.2,
                "ssl": rng.random() < 0.67,
                "cf.edge.server_port": rng.choice([80, 443, 8080, 8443, 2053]),
                "http.request.uri.path.extension": rng.choice(["", "php", "js", "env", "git"]),
                "http.request.headers": headers,
            }
        )
    return out


def _addresses(count: int, rng: random.Random) -> list[str]:
    """``count`` distinct addresses: the documentation ranges, then 10.0.0.0/8 at random."""
    pool = {f"{p}{i}" for p in ("192.0.2.", "198.51.100.", "203.0.113.") for i in range(256)}
    pool = set(rng.sample(sorted(pool), min(count // 2, len(pool))))
    while len(pool) < count:
        n = rng.randrange(1 << 24)
        pool.add(f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}")
    return sorted(pool)


def _ratio(fn, hand, requests) -> tuple[float, float]:  # noqa: ANN001
    """Seconds for ``fn`` over the requests, and that over the hand-written function's."""
    ours = _time(lambda: [fn(r) for r in requests])
    return ours, ours / _time(lambda: [hand(r) for r in requests])


def _summary(label: str, ratios: list[float], total: float | None = None) -> str:
    head = f"total {total:.2f}x, " if total is not None else ""
    return (
        f"{label}: {head}median {statistics.median(ratios):.2f}x, "
        f"worst {max(ratios):.2f}x ({CASES[ratios.index(max(ratios))][0][:40]})"
    )


def managed(requests: list[dict[str, object]]) -> None:
    """Every managed-catalogue expression on each request: generated functions vs generic code."""
    import json
    from pathlib import Path

    from workbench.rules_language import MANAGED

    folder = Path(__file__).resolve().parent.parent / "workbench" / "rulesets" / "catalog"
    sources = [
        rule["expression"]
        for name in ("cloudflare_managed.json", "owasp_core.json")
        for rule in json.loads((folder / name).read_text(encoding="utf-8"))["rules"]
        if rule["expression"].strip() != "true"
    ]
    exprs = [compile_expression(s, MANAGED) for s in sources]
    rng = random.Random(2)
    bodies = ["", "a=1&b=2", "x=<script>alert(1)</script>", "id=1 union select 1", "../../etc"]
    for r in requests:
        r["http.request.body.raw"] = rng.choice(bodies)
        r["http.cookie"] = rng.choice(["", "sid=abc", "a=' or 1=1 --"])
        query = r["http.request.uri.query"]
        r["http.request.uri"] = (
            f"{r['http.request.uri.path']}?{query}" if query else r["http.request.uri.path"]
        )
        r["cf.waf.crs.rules"] = rng.choice([[], [911100], [920350, 942100]])
    inline = [e.matches for e in exprs]
    generic = [generate_with_source(e.tree, inline=False)[0] for e in exprs]
    hits = sum(fn(r) for fn in inline for r in requests)
    assert hits == sum(fn(r) for fn in generic for r in requests)
    t_inline = _time(lambda: [fn(r) for r in requests for fn in inline])
    t_generic = _time(lambda: [fn(r) for r in requests for fn in generic])
    print(
        f"managed catalogues, {len(exprs)} expressions on each of {len(requests):,} requests "
        f"({hits:,} matches): {t_inline / len(requests) * 1e6:.0f} us per request, "
        f"{t_inline / t_generic:.2f}x the generic code alone"
    )


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--addresses", type=int, default=ADDRESSES)
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
    plain = plain_requests(args.requests, args.addresses)

    print(
        f"{len(CASES)} expressions; {len(rows):,} requests per-request (table rows, and plain "
        f"dicts with {len({r['ip.src'] for r in plain}):,} distinct ip.src); "
        f"{args.rows:,} rows in SQL. Ratios are ours / hand-written."
    )
    header = (
        f"{'expression':52} {'compile':>8} {'table x':>7} {'plain/s':>10} {'plain x':>7} "
        f"{'generic x':>9} {'SQL rows/s':>12} {'SQL x':>6}"
    )
    print(header)
    print("-" * len(header))
    table_ratios, plain_ratios, generic_ratios, sql_ratios = [], [], [], []
    plain_ours = plain_hand = generic_total = 0.0
    for source, hand_fn, hand_sql in CASES:
        compile_s = _time(lambda s=source: [compile_expression(s) for _ in range(200)]) / 200
        expr = compile_expression(source)
        hand = _hand_python(source, hand_fn)
        matches = expr.matches
        for requests in (rows, plain):
            ours = [matches(r) for r in requests]
            assert ours == [bool(hand(r)) for r in requests], f"disagreement: {source}"
        table_ratios.append(_ratio(matches, hand, rows)[1])
        t_plain, ratio = _ratio(matches, hand, plain)
        plain_ratios.append(ratio)
        plain_ours += t_plain
        plain_hand += t_plain / ratio
        generic = generate_with_source(expr.tree, inline=False)[0]
        assert [generic(r) for r in plain] == [bool(hand(r)) for r in plain], source
        t_generic, ratio = _ratio(generic, hand, plain)
        generic_ratios.append(ratio)
        generic_total += t_generic
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
        sql_ratios.append(s_ours / s_hand)
        print(
            f"{source[:52]:52} {compile_s * 1e6:6.0f}us {table_ratios[-1]:7.2f} "
            f"{len(plain) / t_plain:10,.0f} {plain_ratios[-1]:7.2f} {generic_ratios[-1]:9.2f} "
            f"{args.rows / s_ours:12,.0f} {sql_ratios[-1]:6.2f}"
        )
    print("-" * len(header))
    print(_summary("per-request, plain dicts", plain_ratios, plain_ours / plain_hand))
    print(_summary("per-request, table rows", table_ratios))
    print(_summary("generic code alone, plain dicts", generic_ratios, generic_total / plain_hand))
    print(_summary("whole-table SQL", sql_ratios))
    # Every request from a new address: each IP comparison misses its cache.
    unique = _addresses(len(plain), random.Random(1))
    fresh = [{**r, "ip.src": a} for r, a in zip(plain, unique, strict=True)]
    for source, hand_fn, _ in CASES:
        if source.startswith("ip.src ") or source.startswith("ip.src in"):
            matches = compile_expression(source).matches
            assert [matches(r) for r in fresh] == [bool(hand_fn(r)) for r in fresh]
            ratio = _ratio(matches, hand_fn, fresh)[1]
            print(f"{source:52} all {len(fresh):,} addresses distinct: {ratio:.2f}x hand")
    managed(plain_requests(min(args.requests, 5_000), args.addresses))
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
