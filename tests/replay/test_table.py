"""The whole-table path's request table: the same columns, types and values as the fields.

``build_table`` takes shortcuts for speed (values joined with control characters and
split back by DuckDB, header maps built from one lowered string). These tests build a
reference table the slow, plain way (one ``Request.fields`` dict per request, every
compound value as JSON) and require the two to agree exactly, on generated traffic of
every kind and on requests made to break the shortcuts.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest

from workbench.replay._table import build_table
from workbench.rules_language import get_scheme
from workbench.rules_language.sql_fragments import duckdb_type, ident
from workbench.traffic.generators import LABELS, generate
from workbench.traffic.request import BODY_LIMIT, FIELD_NAMES, Request

ZONE = {"zone_name": "example.com", "zone_plan": "enterprise"}


def _holds_bytes(value: Any) -> bool:
    if isinstance(value, bytes):
        return True
    if isinstance(value, dict):
        return any(_holds_bytes(k) or _holds_bytes(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_bytes(v) for v in value)
    return False


def reference_table(
    con: Any,
    name: str,
    reqs: list[Request],
    fields: list[str],
    ray_ids: list[str],
    times: list[int],
) -> list[int]:
    """The table as the fields define it: a dict per request, compound values as JSON."""
    scheme = get_scheme("http")
    rows = [
        r.fields(fields, ray_id=ray_ids[i], timestamp_ms=times[i], **ZONE)
        for i, r in enumerate(reqs)
    ]
    bad = [i for i, row in enumerate(rows) if _holds_bytes(row)]
    left_out = set(bad)
    data: dict[str, Any] = {"idx": np.arange(len(reqs), dtype=np.int64)}
    selects = ["idx"]
    for c, f in enumerate(fields):
        t = scheme.field_type(f)
        assert t is not None
        values = [None if i in left_out else row[f] for i, row in enumerate(rows)]
        column = np.empty(len(values), dtype=object)
        if t.is_compound:
            column[:] = [None if v is None else json.dumps(v) for v in values]
            selects.append(f"c{c}::JSON::{duckdb_type(t)} AS {ident(f)}")
        else:
            column[:] = values
            selects.append(f"CAST(c{c} AS {duckdb_type(t)}) AS {ident(f)}")
        data[f"c{c}"] = column
    con.register("_ref", pd.DataFrame(data))
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT {', '.join(selects)} FROM _ref")
    con.unregister("_ref")
    return bad


def _ordered(value: Any) -> Any:
    """A fetched value with maps as lists of items, so key order counts too."""
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def assert_same_table(reqs: list[Request], fields: list[str]) -> tuple[Any, list[int]]:
    """Build both tables and require the same types, values and rows left out."""
    con = duckdb.connect()
    n = len(reqs)
    ray_ids = [f"{i:016x}" for i in range(n)]
    times = [1_700_000_000_000 + 7 * i for i in range(n)]
    bad = build_table(con, "new", reqs, fields, ray_ids=ray_ids, times_ms=times, **ZONE)
    assert bad == reference_table(con, "ref", reqs, fields, ray_ids, times)
    types = "SELECT column_name, column_type FROM (DESCRIBE {})"
    assert con.sql(types.format("new")).fetchall() == con.sql(types.format("ref")).fetchall()
    keep = f"WHERE idx NOT IN ({', '.join(map(str, bad))})" if bad else ""
    new = con.sql(f"SELECT * FROM new {keep} ORDER BY idx").fetchall()
    ref = con.sql(f"SELECT * FROM ref {keep} ORDER BY idx").fetchall()
    assert len(new) == n - len(bad)
    for a, b in zip(new, ref, strict=True):
        assert _ordered(a) == _ordered(b), (a[0], reqs[a[0]])
    return con, bad


def odd_requests() -> list[Request]:
    """Requests made to break shortcuts: bytes, separators, repeats, empties, huge values."""
    huge = "v" * (300 * 1024)
    return [
        # Not UTF-8, in each part a request has.
        Request(b"G\xffT", "/"),
        Request("GET", b"/caf\xe9?q=\xff"),
        Request("GET", "/", headers=[(b"X-\xfe", "v")]),
        Request("GET", "/", headers=[("X-A", b"v\xff")]),
        Request("POST", "/", body=b"\xff\xfe", headers={"Content-Type": "text/plain"}),
        Request("GET", "/", headers={"Cookie": b"a=\xff"}),
        Request("GET", "/\ud800"),  # a lone surrogate that stands for no byte
        # Valid UTF-8 beyond ASCII: names keep their non-ASCII letters as they are.
        Request("GET", "/café?ü=ö", headers=[("X-Ünï", "café"), ("X-É", "1"), ("x-É", "2")]),
        # The separators the table joins with, and NUL, inside names and values.
        Request("GET", "/a\x1fb?x=1\x1f2&y\x1d=3", headers=[("X-S", "a\x1fb")]),
        Request("GET", "/", headers=[("X-\x1dN", "v"), ("X-K", "a\x1eb\x1dc")]),
        Request("GET", "/", headers=[("X-\x00A", "1"), ("x-\x00a", "2"), ("B\x00", "")]),
        Request("GET", "/", headers={"Cookie": "%1d=1; a%1Fb=2; c=\x1f"}),
        Request("GET", "/?\x1d\x1e\x1f"),
        # Empty lists and empty texts.
        Request("GET", "", headers=[]),
        Request("GET", "/?", headers=[("", "")]),
        Request("GET", "/?&&=&", headers=[("X-Empty", ""), ("x-empty", "")]),
        Request("", "https://a.example", headers=None, client_ip="", country="", asn=""),
        # Repeated headers, in any case, between others.
        Request(
            "GET",
            "https://www.example.com/p.PHP?a=1&a=2&b",
            headers=[
                ("Cookie", "a=1"),
                ("Host", "h.example"),
                ("cookie", "b=2; a=3"),
                ("X-Forwarded-For", "1.1.1.1"),
                ("COOKIE", "c=4"),
                ("x-forwarded-for", "2.2.2.2"),
                ("Host", "second.example"),
            ],
            client_ip="2001:DB8::1",
        ),
        # Huge values: a header, a body past the inspection limit, a long URL.
        Request("GET", "/", headers=[("X-Huge", huge), ("X-Huge", huge)]),
        Request(
            "POST",
            "/up",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            body="a=" + "x" * (BODY_LIMIT + 10) + "&b=2",
        ),
        Request("GET", "/" + "p" * 100_000 + "?" + "q=1&" * 20_000),
        Request(
            "POST",
            "/m",
            headers={"Content-Type": "multipart/form-data; boundary=xx"},
            body='--xx\r\nContent-Disposition: form-data; name="f"; filename="a\x1f.txt"\r\n'
            "Content-Type: text/plain\r\n\r\nhi\x1d\r\n--xx--\r\n",
        ),
    ]


def test_generated_traffic_of_every_kind_gives_the_reference_table():
    raw = generate(len(LABELS) * 60, seed=5, mix=dict.fromkeys(LABELS, 1.0))
    assert {r.label for r in raw} == set(LABELS)
    reqs = [Request.from_raw(r) for r in raw]
    assert_same_table(reqs, list(FIELD_NAMES))


def test_odd_requests_give_the_reference_table():
    # Mixed into ordinary traffic, so each column holds both kinds of rows.
    reqs = [Request.from_raw(r) for r in generate(200, seed=6)]
    odd = odd_requests()
    for i, r in enumerate(odd):
        reqs.insert(7 * i, r)
    _, bad = assert_same_table(reqs, list(FIELD_NAMES))
    assert len(bad) == 7  # the first seven odd requests hold text that is not UTF-8


@pytest.mark.parametrize("index", range(len(odd_requests())))
def test_each_odd_request_alone_gives_the_reference_table(index):
    assert_same_table([odd_requests()[index]], list(FIELD_NAMES))


def test_rows_that_are_not_utf8_are_left_out_with_empty_values():
    reqs = [Request(url="/a", headers={"X-A": "1"}), Request(url="/b", headers={"X-B": b"\xff"})]
    fields = ["http.request.uri.path", "http.request.headers", "http.request.headers.names"]
    con = duckdb.connect()
    assert build_table(con, "t", reqs, fields) == [1]
    rows = con.sql("SELECT * FROM t ORDER BY idx").fetchall()
    assert rows == [(0, "/a", {"x-a": ["1"]}, ["X-A"]), (1, None, {}, [])]


def test_the_header_map_groups_repeats_whatever_their_case_in_first_seen_order():
    r = Request(headers=[("B", "1"), ("a", "2"), ("b", "3"), ("X-\x00", "4"), ("x-\x00", "5")])
    assert list(r.header_map.items()) == [("b", ["1", "3"]), ("a", ["2"]), ("x-\x00", ["4", "5"])]
    assert Request(headers=[("X-É", "1")]).header_map == {"x-É": ["1"]}  # ASCII letters only
