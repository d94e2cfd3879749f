"""The engines' keys query with shared decoded columns gives each request the plain query's key."""

from __future__ import annotations

import duckdb

from workbench.core.security import Check, StaticPlan, Verdict
from workbench.replay._checks import plain_checks
from workbench.replay._log_replay import CompiledPlan
from workbench.traffic.zone_plan import ZonePlan

CHECKS = [
    'url_decode(http.request.uri.query, "r") contains "<script"',
    'lower(url_decode(http.request.uri.query, "r")) matches r"union\\s+select"',
    'url_decode(concat(http.request.uri.query, "\\x0a", http.user_agent), "r") contains "../"',
    'url_decode(concat(http.request.uri.query, "\\x0a", http.user_agent), "r") matches "(?i)etc/passwd"',
    'http.user_agent eq "curl"',
]
ROWS = [
    ("q=%3Cscript%3E", "x"),
    ("q=%253Cscript%253E", "x"),  # decoded twice ("r": recursively)
    ("q=1%20UNION%20%20SELECT%20x", "curl"),
    ("q=%c0%ae%c0%ae/", "..%2f"),  # bytes that are not UTF-8, and a UA that decodes to ../
    ("f=..%2F..%2Fetc%2Fpasswd", "y"),
    ("q=caf%C3%A9", None),
    ("", ""),
]


def test_shared_keys_give_the_plain_keys_on_duckdb():
    plan = ZonePlan(
        StaticPlan([Check(f"c{i}", e) for i, e in enumerate(CHECKS)], lambda m: Verdict([]))
    )
    con = duckdb.connect()
    con.execute(
        'CREATE TABLE log (request_id BIGINT, raw VARCHAR, "http.request.uri.query" VARCHAR, '
        '"http.user_agent" VARCHAR)'
    )
    con.executemany(
        "INSERT INTO log VALUES (?, NULL, ?, ?)", [(i, q, ua) for i, (q, ua) in enumerate(ROWS)]
    )
    compiled = CompiledPlan(plan, "duckdb")
    keys, by_check = compiled.query, plain_checks(compiled.compiled, "duckdb")
    assert keys is not None and len(keys.columns) > 0
    plain = con.execute(
        f"SELECT request_id, {by_check.key()}, {by_check.fallback()} FROM log ORDER BY 1"
    ).fetchall()
    shared = con.execute(
        f"SELECT request_id, {keys.key()}, {keys.fallback()} FROM {keys.select('log')} ORDER BY 1"
    ).fetchall()
    assert shared == plain
    assert [k for _, k, _ in plain][:5] == ["10000", "10000", "01001", "00100", "00110"]
