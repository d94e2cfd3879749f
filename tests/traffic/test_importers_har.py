"""HAR 1.2 files: every part of a request a browser saves, and bad entries named by line and field."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from workbench.traffic.importers_har import BOUNDARY, read_har
from workbench.traffic.log_reading import LogLineError


def entry(**request):
    base = {"method": "GET", "url": "https://shop.example/", "httpVersion": "HTTP/1.1"}
    return {"startedDateTime": "2026-03-02T09:00:00.123Z", "request": {**base, **request}}


def har(*entries):
    return json.dumps({"log": {"version": "1.2", "entries": list(entries)}}, indent=2)


def test_a_browser_entry_becomes_a_request():
    text = har(
        {
            **entry(
                method="POST",
                url="https://shop.example/login?next=%2Fcart#top",
                httpVersion="http/2.0",
                headers=[
                    {"name": ":method", "value": "POST"},
                    {"name": ":authority", "value": "shop.example"},
                    {"name": "user-agent", "value": "Mozilla/5.0"},
                    {"name": "cookie", "value": "sid=1; cart=3"},
                    {"name": "content-type", "value": "application/json"},
                ],
                cookies=[{"name": "sid", "value": "1"}, {"name": "cart", "value": "3"}],
                queryString=[{"name": "next", "value": "/cart"}],
                postData={"mimeType": "application/json", "text": '{"item": 1}'},
            ),
            "response": {
                "status": 403,
                "headers": [{"name": "CF-RAY", "value": "8f1c2a3b4d5e6f70-CDG"}],
            },
        }
    )
    got = read_har(text, label="session")
    [r] = got.requests
    f = r.fields(
        ["http.request.full_uri", "http.request.version", "http.cookie", "http.request.body.raw"]
    )
    assert f == {
        "http.request.full_uri": "https://shop.example/login?next=%2Fcart",
        "http.request.version": "HTTP/2",
        "http.cookie": "sid=1; cart=3",  # the header as sent, not doubled by the cookies list
        "http.request.body.raw": '{"item": 1}',
    }
    assert r.host == "shop.example" and not any(k.startswith(":") for k, _ in r.headers)
    assert r.timestamp == datetime(2026, 3, 2, 9, 0, 0, 123000, tzinfo=UTC)
    assert r.label == "session" and r.client_ip == ""
    seen = got.logged[0]
    assert (seen.ray_id, seen.recorded, seen.line) == ("8f1c2a3b4d5e6f70", None, 5)
    assert seen.parts == frozenset({"host", "headers", "cookies", "body"})


def test_post_params_make_a_form_or_multipart_body():
    form = entry(
        method="POST",
        postData={
            "mimeType": "application/x-www-form-urlencoded",
            "params": [{"name": "q", "value": "a b&c"}, {"name": "x"}],
        },
    )
    multi = entry(
        method="POST",
        postData={
            "mimeType": "multipart/form-data",
            "params": [
                {"name": "note", "value": "hi"},
                {"name": "f", "value": "<?php", "fileName": "a.php", "contentType": "text/x-php"},
            ],
        },
    )
    a, b = read_har(har(form, multi)).requests
    assert a.body == "q=a+b%26c&x=" and a.header("content-type").startswith("application/x-www")
    assert b.header("content-type") == f"multipart/form-data; boundary={BOUNDARY}"
    parts = b.fields(["http.request.body.multipart.names", "http.request.body.multipart.filenames"])
    assert parts["http.request.body.multipart.names"] == [["note"], ["f"]]
    assert parts["http.request.body.multipart.filenames"][1] == ["a.php"]


def test_missing_optional_fields_are_fine():
    minimal = {"request": {"method": "GET", "url": "https://a.example/x?y=1"}}
    got = read_har(har(minimal))
    r = got.requests[0]
    assert (r.http_version, r.timestamp, r.body, got.logged[0].ray_id) == ("HTTP/1.1", None, "", "")
    # A URL without its query takes the queryString list.
    listed = read_har(
        har(entry(url="https://a.example/s", queryString=[{"name": "q", "value": "a b"}]))
    )
    assert listed.requests[0].uri == "/s?q=a%20b"


def test_a_challenge_page_is_the_entry_s_recorded_decision():
    def answered(*headers):
        e = entry()
        e["response"] = {"status": 403, "headers": [{"name": n, "value": v} for n, v in headers]}
        return e

    got = read_har(
        har(
            answered(("cf-ray", "8f1c2a3b4d5e6f70-CDG"), ("cf-mitigated", "challenge")),
            answered(("CF-Mitigated", "Challenge")),  # header names and the value in any case
            answered(("cf-ray", "8f1c2a3b4d5e6f71-CDG")),  # a 403 alone may be the origin's
            entry(),
        )
    )
    recorded = [seen.recorded for seen in got.logged]
    assert [r.outcome if r else None for r in recorded] == [
        "challenge_page",
        "challenge_page",
        None,
        None,
    ]
    assert recorded[0].origin == "har" and recorded[0].rules == ()
    assert [seen.ray_id for seen in got.logged] == ["8f1c2a3b4d5e6f70", "", "8f1c2a3b4d5e6f71", ""]


def test_a_har_file_on_disk(tmp_path):
    path = tmp_path / "s.har"
    path.write_text("\ufeff" + har(entry()), encoding="utf-8")
    assert len(read_har(path)) == 1 and len(read_har(str(path))) == 1


BAD = [
    (entry(url=7), "log.entries[1].request.url", "must be a string, got a number"),
    ({"request": {"url": "/"}}, "log.entries[1].request.method", "is missing"),
    ({"response": {}}, "log.entries[1].request", "must be an object, got null"),
    (entry(headers={"a": "b"}), "log.entries[1].request.headers", "must be an array"),
    (entry(headers=[{"value": "b"}]), "log.entries[1].request.headers[0].name", "is missing"),
    (
        entry(postData={"params": "x"}),
        "log.entries[1].request.postData.params",
        "must be an array, got a string",
    ),
    (
        {**entry(), "startedDateTime": "yesterday"},
        "log.entries[1].startedDateTime",
        "'yesterday' is not an RFC 3339 time",
    ),
    ({**entry(), "response": {"headers": [7]}}, "log.entries[1].response.headers[0]", "object"),
]


@pytest.mark.parametrize(("bad", "field", "reason"), BAD)
def test_a_bad_entry_names_its_line_and_field_and_nothing_is_half_read(bad, field, reason):
    text = har(entry(), bad, entry())
    line = _entry_line(text, 1)
    with pytest.raises(LogLineError) as caught:
        read_har(text)
    assert (caught.value.line, caught.value.field) == (line, field)
    assert caught.value.reason.startswith(field) and reason in caught.value.reason
    got = read_har(text, skip_bad=True)
    assert len(got) == 2 and got.skipped == 1 and len(got.logged) == 2
    assert [m.line for m in got.logged] == [_entry_line(text, 0), _entry_line(text, 2)]


def _entry_line(text, k):
    """The line entry ``k`` of an indent=2 HAR starts on."""
    starts = [n for n, t in enumerate(text.splitlines(), 1) if t == "      {"]
    return starts[k]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"log": {"entries": [\n  {"request": }]}}', "line 2: the HAR file is not JSON"),
        ("[1, 2]", "line 1: not a HAR"),
        ('{"log": {"entries": {}}}', "line 1: log.entries must be an array, got an object"),
        ("", "line 1: the HAR file is not JSON"),
    ],
)
def test_a_file_that_is_no_har_cannot_be_read(text, message):
    with pytest.raises(LogLineError) as caught:
        read_har(text, skip_bad=True)
    assert str(caught.value).startswith(message)
