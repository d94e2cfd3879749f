"""Request fields computed from raw requests: values, types, odd and non-UTF-8 input."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import pytest

from workbench.replay import build_table
from workbench.rules_language import compile_expression, get_scheme
from workbench.rules_language.table import requests_table
from workbench.traffic.request import BODY_LIMIT, FIELD_NAMES, Request, field_column


def test_uri_parts_args_and_full_uri():
    r = Request("GET", "https://www.example.com/a/b/Index.HTML?x=1&y=a+b&x=%2F&flag#frag")
    f = r.fields()
    assert f["http.request.uri"] == "/a/b/Index.HTML?x=1&y=a+b&x=%2F&flag"
    assert f["http.request.uri.path"] == "/a/b/Index.HTML"
    assert f["http.request.uri.path.extension"] == "html"
    assert f["http.request.uri.query"] == "x=1&y=a+b&x=%2F&flag"
    # Undecoded, repeated names in order, a bare name has the empty value.
    assert f["http.request.uri.args"] == {"x": ["1", "%2F"], "y": ["a+b"], "flag": [""]}
    assert f["http.request.uri.args.names"] == ["x", "y", "x", "flag"]
    assert f["http.request.uri.args.values"] == ["1", "a+b", "%2F", ""]
    assert (
        f["http.request.full_uri"] == "https://www.example.com/a/b/Index.HTML?x=1&y=a+b&x=%2F&flag"
    )
    assert f["raw.http.request.uri"] == f["http.request.uri"]
    assert f["http.host"] == "www.example.com"


def test_a_request_target_takes_its_host_from_the_header_and_its_scheme_from_tls():
    r = Request("GET", "/p?q", headers={"Host": "shop.example.com"}, tls_version="")
    f = r.fields(
        ["http.host", "http.request.full_uri", "ssl", "cf.tls_version", "cf.edge.server_port"]
    )
    assert f == {
        "http.host": "shop.example.com",
        "http.request.full_uri": "http://shop.example.com/p?q",
        "ssl": False,
        "cf.tls_version": "",
        "cf.edge.server_port": 80,
    }
    secure = Request("GET", "https://a.example/", tls_version="TLSv1.2").fields(
        ["ssl", "cf.tls_version"]
    )
    assert secure == {"ssl": True, "cf.tls_version": "TLSv1.2"}
    assert Request(url="https://a.example").fields(["http.request.uri.path"]) == {
        "http.request.uri.path": "/"
    }
    assert Request(url="https://a.example?x=1").fields(["http.request.uri"]) == {
        "http.request.uri": "/?x=1"
    }


def test_headers_lower_case_keys_original_names_and_repeats():
    r = Request(
        "GET",
        "/",
        headers=[
            ("User-Agent", "UA/1"),
            ("X-Forwarded-For", "1.1.1.1"),
            ("x-forwarded-for", "2.2.2.2"),
            ("Referer", "https://ref/"),
            ("Accept-Language", "da, en-gb;q=0.8, en;q=0.9"),
        ],
    )
    f = r.fields()
    assert f["http.request.headers"]["x-forwarded-for"] == ["1.1.1.1", "2.2.2.2"]
    assert "X-Forwarded-For" not in f["http.request.headers"]
    assert f["http.request.headers.names"][:3] == [
        "User-Agent",
        "X-Forwarded-For",
        "x-forwarded-for",
    ]
    assert f["http.request.headers.values"][1:3] == ["1.1.1.1", "2.2.2.2"]
    assert f["http.user_agent"] == "UA/1" and f["http.referer"] == "https://ref/"
    assert f["http.x_forwarded_for"] == "1.1.1.1, 2.2.2.2"
    assert f["http.request.accepted_languages"] == ["da", "en", "en-gb"]
    # A header map key is lower case: a rule asking with capitals never matches, as documented.
    assert compile_expression('http.request.headers["referer"][0] eq "https://ref/"').matches(f)
    assert not compile_expression(
        'any(http.request.headers["Referer"][*] eq "https://ref/")'
    ).matches(f)


def test_cookies_names_are_decoded_values_are_not():
    r = Request(headers=[("Cookie", "sid=a%20b; pref%5Fx=1"), ("Cookie", "sid=2; junk")])
    f = r.fields(["http.cookie", "http.request.cookies"])
    assert f["http.cookie"] == "sid=a%20b; pref%5Fx=1; sid=2; junk"
    assert f["http.request.cookies"] == {"sid": ["a%20b", "2"], "pref_x": ["1"]}


def test_form_body_multipart_and_mime():
    form = Request(
        "POST",
        "/f",
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=UTF-8"},
        body="a=1&b=x+y&a=%27",
    )
    f = form.fields()
    assert f["http.request.body.form"] == {"a": ["1", "%27"], "b": ["x+y"]}
    assert f["http.request.body.form.names"] == ["a", "b", "a"]
    assert f["http.request.body.size"] == 15 and f["http.request.body.mime"] == "text/plain"
    assert f["http.request.body.multipart"] == {}
    body = (
        '--B\r\nContent-Disposition: form-data; name="doc"; filename="a.png"\r\n'
        'Content-Type: image/png\r\n\r\n\x89PNG\r\n--B\r\nContent-Disposition: form-data; name="t"\r\n\r\n'
        "hello\r\n--B--\r\n"
    )
    multi = Request(
        "POST", "/u", headers={"Content-Type": 'multipart/form-data; boundary="B"'}, body=body
    )
    g = multi.fields()
    assert g["http.request.body.multipart.names"] == [["doc"], ["t"]]
    assert g["http.request.body.multipart.filenames"] == [["a.png"], []]
    assert g["http.request.body.multipart.content_types"] == [["image/png"], []]
    assert g["http.request.body.multipart.content_dispositions"] == [["form-data"], ["form-data"]]
    assert g["http.request.body.multipart.values"] == ["\x89PNG", "hello"]
    assert g["http.request.body.multipart"] == {"doc": ["\x89PNG"], "t": ["hello"]}
    assert g["http.request.body.form"] == {}
    assert (
        Request(body='{"a": 1}').fields(["http.request.body.mime"])["http.request.body.mime"]
        == "application/json"
    )
    assert (
        Request(body=b"GIF89a...").fields(["http.request.body.mime"])["http.request.body.mime"]
        == "image/gif"
    )


def test_a_long_body_is_cut_where_the_edge_stops_reading():
    r = Request("POST", "/", body="x" * (BODY_LIMIT + 10))
    f = r.fields(["http.request.body.raw", "http.request.body.size", "http.request.body.truncated"])
    assert len(f["http.request.body.raw"]) == BODY_LIMIT
    assert (
        f["http.request.body.size"] == BODY_LIMIT + 10 and f["http.request.body.truncated"] is True
    )


def test_client_fields_geography_and_context():
    r = Request(client_ip="2001:DB8::1", country="de", asn=3320)
    f = r.fields(
        ray_id="0123456789abcdef",
        timestamp_ms=1_767_225_600_123,
        zone_name="example.com",
        zone_plan="enterprise",
    )
    assert f["ip.src"] == "2001:db8::1"
    assert (f["ip.src.country"], f["ip.src.asnum"], f["ip.src.continent"]) == ("DE", 3320, "EU")
    assert f["ip.src.is_in_european_union"] is True and f["ip.geoip.country"] == "DE"
    assert f["cf.ray_id"] == "0123456789abcdef"
    assert (f["http.request.timestamp.sec"], f["http.request.timestamp.msec"]) == (
        1_767_225_600,
        1_767_225_600_123,
    )
    assert (f["cf.zone.name"], f["cf.zone.plan"]) == ("example.com", "enterprise")
    assert f["cf.waf.score"] == 100
    assert r.fields(["cf.bot_management.score"]) == {"cf.bot_management.score": None}
    assert Request(client_ip="not-an-ip").fields(["ip.src"]) == {"ip.src": None}
    assert compile_expression("ip.src in {2001:db8::/32}").matches(f)


def test_non_utf8_and_odd_input_never_raises():
    odd = [
        Request(b"G\xffT", b"/caf\xe9?q=\xff", headers=[(b"X-\xfe", b"v\xff")], body=b"\xff\xfe"),
        Request("GET", "weird:/no-host?x", headers={"Host": "\udcff"}),
        Request(None, None, None, None, None, None, "not-a-number"),
        Request(
            "GET", "https://[::1/x", headers={"Content-Type": "multipart/form-data"}, body="--x"
        ),
        Request(
            "POST",
            "/",
            headers={"Content-Type": "multipart/form-data; boundary=zz"},
            body="garbage",
        ),
    ]
    for r in odd:
        f = r.fields()
        assert set(f) == set(FIELD_NAMES)
        for value in f.values():
            if isinstance(value, str):
                value.encode("utf-8")  # never a lone surrogate
    bad = odd[0].fields()
    assert bad["http.request.method"] == b"G\xffT"
    assert bad["http.request.uri.path"] == b"/caf\xe9"
    assert bad["http.request.body.raw"] == b"\xff\xfe" and bad["http.request.body.size"] == 2
    assert bad["http.request.headers"] == {b"x-\xfe": [b"v\xff"]}
    assert compile_expression('http.request.uri.path contains "\\xe9"').matches(bad)
    assert odd[2].fields(["ip.src.asnum"]) == {"ip.src.asnum": 0}


def test_unknown_field_names_are_refused():
    with pytest.raises(KeyError, match="nope"):
        Request().fields(["nope"])


def test_every_field_has_its_scheme_type(traffic):
    """All fields of generated requests fit the scheme's column types (the row-wise table checks them)."""
    reqs = [Request.from_raw(r) for r in traffic[:300]]
    rows = [r.fields(ray_id="ab" * 8, timestamp_ms=1) for r in reqs]
    con = duckdb.connect()
    # requests_table cannot type a column that is NULL in every row: leave those out.
    names = [n for n in FIELD_NAMES if any(row[n] is not None for row in rows)]
    requests_table(con, rows, name="r", fields=names)
    scheme = get_scheme("http")
    assert all(scheme.field_type(n) is not None for n in FIELD_NAMES)
    # The columnar builder gives the same table.
    build_table(con, "c", reqs, names, ray_ids=["ab" * 8] * len(reqs), times_ms=[1] * len(reqs))
    cols = ", ".join(f'"{n}"' for n in names)
    diff = con.sql(f"SELECT {cols} FROM r EXCEPT ALL SELECT {cols} FROM c").fetchall()
    assert diff == []


def test_columns_and_dicts_agree(traffic):
    reqs = [Request.from_raw(r) for r in traffic[:50]]
    names = ["http.request.headers", "cf.ray_id", "http.request.timestamp.sec", "cf.zone.name"]
    cols = {
        n: field_column(
            reqs, n, ray_ids=[str(i) for i in range(50)], times_ms=[5000] * 50, zone_name="z"
        )
        for n in names
    }
    for i, r in enumerate(reqs):
        assert r.fields(names, ray_id=str(i), timestamp_ms=5000, zone_name="z") == {
            n: cols[n][i] for n in names
        }


def test_from_raw_reads_any_object_with_the_attributes(traffic):
    raw = traffic[0]
    r = Request.from_raw(raw)
    assert (r.method, r.url, r.label, r.asn) == (raw.method, raw.url, raw.label, raw.asn)
    assert Request.from_raw(r) is r
    stamped = Request(timestamp=datetime(2026, 1, 1, tzinfo=UTC))
    assert Request.from_raw(stamped).timestamp == datetime(2026, 1, 1, tzinfo=UTC)


def test_from_raw_reads_properties_and_dynamic_attributes_as_well_as_plain_ones():
    class Plain:
        def __init__(self):
            self.url, self.headers, self.asn = "/a?b=1", {"Host": "x.test"}, "13335"

    class WithProperty(Plain):
        @property
        def country(self):
            return " fr "

    class Dynamic:
        def __getattr__(self, name):
            return {"url": "/dyn", "body": b"\xff"}.get(name, None) if name != "asn" else 7

    plain, prop, dyn = (Request.from_raw(o) for o in (Plain(), WithProperty(), Dynamic()))
    assert (plain.path, plain.host, plain.asn, plain.method) == ("/a", "x.test", 13335, "GET")
    assert (prop.country, prop.host) == ("FR", "x.test")
    assert (dyn.path, dyn.asn, dyn.fields(["http.request.body.raw"])) == (
        "/dyn",
        7,
        {"http.request.body.raw": b"\xff"},
    )
    # Headers as a dict with a value that is not text take the general path.
    odd = Request.from_raw(Request(headers={"X-N": 5, b"X-B": b"v"}))
    assert odd.headers == [("X-N", "5"), ("X-B", "v")]
