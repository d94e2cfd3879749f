"""Matching rules that a user of the platform relies on, on both paths."""

import pytest

from workbench.rules_language import compile_expression

CASES = [
    ('http.request.uri.path contains "/admin"', [True, False, False]),
    ('lower(http.host) eq "api.example.org"', [False, True, False]),
    ('http.host wildcard "*.EXAMPLE.com"', [True, False, False]),
    ('http.host strict wildcard "*.EXAMPLE.com"', [False, False, False]),
    ('http.request.uri.path matches "^/.{2}/"', [False, True, False]),
    ('http.request.uri.path matches "^/..$"', [False, False, False]),
    ("ip.src in {192.0.2.0/24 2001:db8::/32}", [True, True, False]),
    ("ip.src lt 1.2.3.4", [False, False, False]),
    ("ip.src gt 1.2.3.4", [True, True, False]),
    ("ip.src ne 192.0.2.10", [False, True, False]),
    ('http.request.headers["accept"][0] ne "x"', [True, False, False]),
    ('not http.request.headers["accept"][0] eq "x"', [True, True, True]),
    ('any(http.request.headers["x-api-key"][*] eq "k2")', [True, False, False]),
    ('all(http.request.headers.names[*] ne "Host")', [True, True, True]),
    ('any(lower(http.request.headers.names[*])[*] eq "accept")', [True, False, False]),
    ("len(http.request.uri.path) eq 9", [False, True, False]),
    ('substring(http.request.uri.path, 1, 3) eq "é"', [False, True, False]),
    ('lookup_json_string(http.request.body.raw, "user", "name") eq "ann"', [True, False, False]),
    ('lookup_json_integer(http.request.body.raw, "n") eq 3', [True, False, False]),
    ('url_decode(http.request.uri.query) contains "UNION SELECT"', [True, False, False]),
    ("cf.waf.score in {1..20 80}", [True, True, False]),
    ("cf.edge.server_port & 0x100", [True, True, False]),
    ('http.user_agent eq ""', [False, True, True]),
    ("ssl xor cf.client.bot", [True, True, False]),
    ('ip.src.country in {"US" "DE"} and not ssl', [False, True, False]),
    (
        'http.cookie contains "session=" and http.request.cookies["session"][0] matches "^[a-f0-9]{32}$"',
        [True, False, False],
    ),
    ('starts_with(http.referer, "https://é")', [True, False, False]),
    ('ends_with(http.request.uri.path, ".php")', [True, False, False]),
    ("cf.bot_management.detection_ids[1] eq 5", [True, False, False]),
    ('concat(http.host, ":", cf.edge.server_port) eq "www.example.com:443"', [True, False, False]),
    ('to_string(cf.waf.score) eq "80"', [False, True, False]),
    (
        'regex_replace(http.request.uri.path, "^/admin/(.*)$", "/x/${1}") eq "/x/login.php"',
        [True, False, False],
    ),
    ('encode_base64(http.request.method) eq "R0VU"', [False, True, False]),
    ("cidr(ip.src, 16, 32) eq 192.0.0.0", [True, False, False]),
    ('remove_bytes(http.host, ".") eq "wwwexamplecom"', [True, False, False]),
    ('split(http.request.uri.path, "/", 2)[1] eq "admin/login.php"', [True, False, False]),
    ('has_key(http.request.headers, "accept")', [True, False, False]),
    ('ip_in_range(ip.src, "192.0.2.0/24")', [True, False, False]),
    ('ip_in_range(ip.src, "2001:db8::..2001:db8::ff")', [False, True, False]),
    ('wildcard(http.host, "*.EXAMPLE.org")', [False, True, False]),
]


@pytest.mark.parametrize(("source", "expected"), CASES, ids=[c[0][:50] for c in CASES])
def test_both_paths(source, expected, samples, sample_table):
    expr = compile_expression(source)
    assert [expr.matches(s) for s in samples] == expected
    got = [row[0] for row in sample_table.sql(f"select {expr.to_sql()} from samples").fetchall()]
    assert got == expected


def test_fields_functions_operators_and_lists():
    expr = compile_expression(
        'lower(http.host) eq "a" and ip.src in $office or http.request.uri.path matches "x"'
    )
    assert expr.fields == ("http.host", "http.request.uri.path", "ip.src")
    assert expr.functions == ("lower",)
    assert expr.operators == frozenset({"eq", "in", "matches"})
    assert expr.lists == ("office",)


def test_named_lists_on_both_paths(samples, sample_table):
    expr = compile_expression("ip.src in $office")
    lists = {"office": ["192.0.2.0/28", "2001:db8::/48"]}
    assert [expr.matches(s, lists) for s in samples] == [True, True, False]
    assert [expr.matches(s) for s in samples] == [False, False, False]
    rows = sample_table.sql(f"select {expr.to_sql(lists)} from samples").fetchall()
    assert [r[0] for r in rows] == [True, True, False]


def test_bytes_values_and_ipaddress_objects():
    import ipaddress

    expr = compile_expression('http.host eq "abc" and ip.src eq 10.0.0.1')
    assert expr.matches({"http.host": b"abc", "ip.src": ipaddress.ip_address("10.0.0.1")})
    assert not expr.matches({"http.host": b"\xffabc", "ip.src": "10.0.0.1"})


def test_regex_runs_in_linear_time_on_100kb():
    # A backtracking engine needs exponential time here; RE2 answers at once.
    expr = compile_expression('http.request.uri.path matches "(a+)+$"')
    assert expr.matches({"http.request.uri.path": "a" * 100_000})
    evil = compile_expression('http.request.uri.path matches "^(a+)+b$"')
    assert not evil.matches({"http.request.uri.path": "a" * 100_000 + "!"})
    assert not compile_expression('http.request.uri.path matches "(a|aa)+c"').matches(
        {"http.request.uri.path": "a" * 100_000}
    )


def test_sql_over_a_plain_pandas_frame():
    # pandas turns dicts with the same keys into STRUCTs and gappy ints into floats.
    import duckdb
    import pandas as pd

    rows = [
        {
            "http.request.headers": {"accept": ["text/html"]},
            "cf.waf.score": 10.0,
            "ip.src": "10.0.0.1",
        },
        {
            "http.request.headers": {"accept": ["application/json"]},
            "cf.waf.score": None,
            "ip.src": None,
        },
    ]
    frame = pd.DataFrame(rows)  # noqa: F841 - read by DuckDB's replacement scan
    expr = compile_expression(
        'any(http.request.headers["accept"][*] contains "json") or (cf.waf.score & 2 and ip.src in {10.0.0.0/8})'
    )
    got = [r[0] for r in duckdb.sql(f"select {expr.to_sql()} from frame").fetchall()]
    assert (
        got
        == [expr.matches(r) for r in [dict(rows[0], **{"cf.waf.score": 10}), rows[1]]]
        == [True, True]
    )


def test_bit_slice_reads_packet_bits():
    expr = compile_expression("bit_slice(tcp, 104, 111) eq 18", scheme="magic_firewall")
    assert expr.matches({"tcp": bytes(13) + bytes([18]) + bytes(6)})
    assert not expr.matches({"tcp": bytes(20)})
    assert not expr.matches({"tcp": b"short"})  # bits past the end are missing
