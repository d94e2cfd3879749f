"""Importers: HTTP request log NDJSON and the combined log format, good lines and bad ones."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from workbench.traffic.importers import (
    LogLineError,
    read_combined_log,
    read_http_requests,
    write_lines,
)
from workbench.traffic.request import Request

# A Logpush http_requests line as the platform writes it (fields trimmed to a realistic set).
LOGPUSH = json.dumps(
    {
        "CacheCacheStatus": "dynamic",
        "ClientASN": 7922,
        "ClientCountry": "us",
        "ClientDeviceType": "desktop",
        "ClientIP": "203.0.113.25",
        "ClientIPClass": "noRecord",
        "ClientRequestBytes": 2456,
        "ClientRequestHost": "www.example.com",
        "ClientRequestMethod": "POST",
        "ClientRequestPath": "/search",
        "ClientRequestProtocol": "HTTP/2",
        "ClientRequestReferer": "https://www.example.com/",
        "ClientRequestScheme": "https",
        "ClientRequestURI": "/search?q=union+select",
        "ClientRequestUserAgent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/127.0",
        "ClientSSLProtocol": "TLSv1.3",
        "EdgeResponseStatus": 200,
        "EdgeStartTimestamp": "2025-11-03T10:15:30Z",
        "RayID": "7d0a2b6c1e3f4a59",
        "RequestHeaders": {"x-requested-with": "XMLHttpRequest"},
        "Cookies": {"session": "abc"},
    }
)


def test_a_logpush_line_becomes_a_request():
    [r] = read_http_requests([LOGPUSH], label="benign").requests
    f = r.fields()
    assert f["http.request.full_uri"] == "https://www.example.com/search?q=union+select"
    assert (f["http.request.method"], f["http.request.version"], f["cf.tls_version"]) == (
        "POST",
        "HTTP/2",
        "TLSv1.3",
    )
    assert (f["ip.src"], f["ip.src.country"], f["ip.src.asnum"]) == ("203.0.113.25", "US", 7922)
    assert (
        f["http.user_agent"].startswith("Mozilla/5.0")
        and f["http.referer"] == "https://www.example.com/"
    )
    assert f["http.request.headers"]["x-requested-with"] == ["XMLHttpRequest"]
    assert f["http.request.cookies"] == {"session": ["abc"]}
    assert r.timestamp == datetime(2025, 11, 3, 10, 15, 30, tzinfo=UTC) and r.label == "benign"


@pytest.mark.parametrize(
    ("stamp", "expected"),
    [
        (1762164930, datetime(2025, 11, 3, 10, 15, 30, tzinfo=UTC)),
        (1762164930000, datetime(2025, 11, 3, 10, 15, 30, tzinfo=UTC)),
        (1762164930000000000, datetime(2025, 11, 3, 10, 15, 30, tzinfo=UTC)),
        ("2025-11-03T11:15:30+01:00", datetime(2025, 11, 3, 10, 15, 30, tzinfo=UTC)),
    ],
)
def test_edge_timestamps_in_every_logpush_format(stamp, expected):
    line = json.dumps({"ClientRequestURI": "/", "EdgeStartTimestamp": stamp})
    assert read_http_requests([line]).requests[0].timestamp == expected


def test_path_and_query_fields_stand_in_for_the_uri_and_http_scheme_means_no_tls():
    line = json.dumps(
        {
            "ClientRequestPath": "/a",
            "ClientRequestQuery": "?b=1",
            "ClientRequestScheme": "http",
            "ClientRequestHost": "a.example",
        }
    )
    f = (
        read_http_requests([line])
        .requests[0]
        .fields(["http.request.full_uri", "ssl", "cf.tls_version"])
    )
    assert f == {
        "http.request.full_uri": "http://a.example/a?b=1",
        "ssl": False,
        "cf.tls_version": "",
    }


BAD_NDJSON = [
    ("{not json", "line 2: not JSON"),
    ("[1, 2]", "line 2: not a JSON object (a list)"),
    ('{"ClientIP": "1.2.3.4"}', "line 2: no ClientRequestURI (or ClientRequestPath)"),
    (
        '{"ClientRequestURI": "/", "ClientASN": "13335"}',
        "line 2: ClientASN must be an integer, got str",
    ),
    ('{"ClientRequestURI": ["/"]}', "line 2: ClientRequestURI must be text, got list"),
    (
        '{"ClientRequestURI": "/", "EdgeStartTimestamp": "yesterday"}',
        "line 2: EdgeStartTimestamp 'yesterday' is not an RFC 3339 time",
    ),
    (
        '{"ClientRequestURI": "/", "EdgeStartTimestamp": 1e300}',
        "line 2: EdgeStartTimestamp 1e+300 is out of range",
    ),
    (
        '{"ClientRequestURI": "/", "RequestHeaders": {"a": 1}}',
        "line 2: RequestHeaders must be an object of text values",
    ),
    ("[" * 100_000, "line 2: not JSON"),
]


@pytest.mark.parametrize(("line", "message"), BAD_NDJSON)
def test_a_bad_ndjson_line_names_its_number_and_problem(line, message):
    with pytest.raises(LogLineError) as caught:
        read_http_requests([LOGPUSH, line, LOGPUSH])
    assert str(caught.value).startswith(message)
    assert caught.value.line == 2


def test_bad_lines_can_be_counted_and_skipped():
    lines = [LOGPUSH, "", "{oops", LOGPUSH, "42", "   "]
    got = read_http_requests(lines, skip_bad=True)
    assert len(got) == 2 and got.skipped == 2
    assert [e.line for e in got.errors] == [3, 5]


def test_non_utf8_bytes_in_a_file_are_kept(tmp_path):
    path = tmp_path / "requests.ndjson"
    path.write_bytes(LOGPUSH.encode() + b"\n" + b'{"ClientRequestURI": "/caf\xe9"}\n')
    got = read_http_requests(path)
    assert got.requests[1].fields(["http.request.uri.path"]) == {
        "http.request.uri.path": b"/caf\xe9"
    }
    assert len(read_http_requests(str(path))) == 2


def test_lines_written_read_back_the_same():
    reqs = [
        Request(
            "GET",
            "https://a.example/x?y=1",
            headers={"Host": "a.example", "User-Agent": "u"},
            client_ip="192.0.2.1",
            country="FR",
            asn=5,
            timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        )
    ]
    back = read_http_requests(write_lines(reqs)).requests
    names = ["http.request.full_uri", "http.user_agent", "ip.src", "ip.src.country", "ip.src.asnum"]
    assert back[0].fields(names) == reqs[0].fields(names)
    assert back[0].timestamp == reqs[0].timestamp


NGINX = '203.0.113.9 - - [03/Nov/2025:10:15:30 +0000] "GET /wp-login.php?redirect_to=%2F HTTP/1.1" 404 153 "-" "Mozilla/5.0 (compatible; scan/1.0)"'
APACHE = '192.0.2.44 - frank [10/Oct/2025:13:55:36 -0700] "POST /cgi-bin/test.cgi HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"'
COMMON = '198.51.100.7 - - [10/Oct/2025:13:55:36 +0200] "GET /index.html HTTP/1.1" 200 -'
ESCAPED = r'198.51.100.8 - - [10/Oct/2025:13:55:36 +0000] "GET /a\"b\x00\xff HTTP/1.1" 400 0 "-" "say \"hi\""'


def test_combined_log_lines_become_requests():
    got = read_combined_log([NGINX, APACHE, COMMON, ESCAPED], host="www.example.com")
    nginx, apache, common, escaped = got.requests
    assert nginx.fields(["http.request.full_uri", "http.user_agent", "http.referer"]) == {
        "http.request.full_uri": "https://www.example.com/wp-login.php?redirect_to=%2F",
        "http.user_agent": "Mozilla/5.0 (compatible; scan/1.0)",
        "http.referer": "",
    }
    assert apache.method == "POST" and apache.http_version == "HTTP/1.0"
    assert apache.header("referer") == "http://www.example.com/start.html"
    assert apache.timestamp == datetime(2025, 10, 10, 20, 55, 36, tzinfo=UTC)
    assert common.header("user-agent") == "" and common.client_ip == "198.51.100.7"
    # Escapes undone: \" is a quote, \xHH the raw byte (kept, not UTF-8 here).
    assert escaped.fields(["http.request.uri.path"]) == {"http.request.uri.path": b'/a"b\x00\xff'}
    assert escaped.header("user-agent") == 'say "hi"'


BAD_COMBINED = [
    ("just some text", "line 1: not in the combined log format"),
    (
        r'192.0.2.1 - - [10/Oct/2025:13:55:36 +0000] "\x16\x03\x01\x00\xc4\x01" 400 157 "-" "-"',
        "line 1: request '\\x16\\x03\\x01\\x00\\\\xc4\\x01' is not METHOD TARGET PROTOCOL",
    ),
    (
        '192.0.2.1 - - [10/Oct/2025:13:55:36 +0000] "-" 408 0 "-" "-"',
        "line 1: request '-' is not METHOD",
    ),
    (
        '192.0.2.1 - - [yesterday] "GET / HTTP/1.1" 200 1 "-" "-"',
        "line 1: time 'yesterday' is not like",
    ),
]


@pytest.mark.parametrize(("line", "message"), BAD_COMBINED)
def test_a_bad_combined_line_names_its_number_and_problem(line, message):
    with pytest.raises(LogLineError) as caught:
        read_combined_log([line])
    assert str(caught.value).startswith(message.split(" is not")[0])
    assert caught.value.line == 1


def test_bad_combined_lines_skipped_on_request():
    got = read_combined_log([NGINX, "garbage", APACHE], skip_bad=True)
    assert (len(got), got.skipped, got.errors[0].line) == (2, 1, 2)
    # Without a host the request keeps its target; the fields still work.
    assert got.requests[0].fields(["http.host", "http.request.uri"]) == {
        "http.host": "",
        "http.request.uri": "/wp-login.php?redirect_to=%2F",
    }


def test_read_log_tells_the_two_formats_apart_by_the_first_line(tmp_path):
    from workbench.traffic import read_log

    ndjson = tmp_path / "http.ndjson"
    ndjson.write_text(
        '\n{"ClientIP": "203.0.113.7", "ClientRequestHost": "example.com",'
        ' "ClientRequestMethod": "GET", "ClientRequestURI": "/a"}\n'
    )
    combined = tmp_path / "access.log"
    combined.write_text(
        '192.0.2.1 - - [10/Oct/2025:13:55:36 -0700] "POST /login HTTP/1.1" 200 2 "-" "curl/8"\n'
    )
    [a] = read_log(ndjson, host="ignored.example", label="api").requests
    [b] = read_log(combined, host="shop.example", label="benign").requests
    assert (a.host, a.method, a.uri, a.label) == ("example.com", "GET", "/a", "api")
    assert (b.host, b.method, b.uri, b.label) == ("shop.example", "POST", "/login", "benign")
